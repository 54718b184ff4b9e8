//! The binary's integration tests: one target, so one link step (as ripgrep does).
//!
//! The CLI contract is the test surface: every test runs the built `curator` binary in a fresh
//! memory root and asserts stdout, stderr and the exit code.

// Shared helpers: a memory-root `Dir` and a `curator` command preset with `--root`.
mod util;

// init / add / show / list / rm / lint: the store's CLI basics (issue 2).
mod store_cli;

// curator harness append / issue / triage / curate / context / status / trace (issues 5, 16).
mod harness;

// SIGKILL at random points of a hundred harness passes while a writer appends (issue 16).
mod harness_kill;

// curate / history / undo / breaker: the curator through the binary (issue 4).
mod curate_cli;

// curate --llm against an endpoint that echoes its credentials: redacted everywhere (issue 13).
mod llm_cli;

// query / eval: scoped retrieval and the <memory-context> block (issue 3).
mod query_cli;

// agent-qa parity: skipped scope names, suite positions, the scope-name rule, body bytes (issue 13).
mod parity_cli;

// --store postgres://…: every command, serve, import/export, concurrent writers (issue 7).
mod pg_cli;

// Exactly-once curation and undo per generation, through the binary and HTTP, on both stores
// (issue 13).
mod exactly_once;

// SIGKILLs at random points of add / curate / HTTP writes on both stores (issue 13).
mod kill;

// FIFOs, devices and sparse files where curator keeps its own files: errors, never hangs.
mod special_files;

// Strict inputs, printed ids and the deprecated spellings of one vocabulary (issue 15).
mod strict_cli;

// A running `curator serve` answers fresh `curator query` processes over its socket (issue 14).
mod query_server;

// README.md's walkthrough run verbatim on a scratch copy, and its MCP snippets; the example
// workspace `init --example` writes (issue 15).
mod docs_citations;
mod help_examples;
mod init_example;
mod json_output;
mod readme_walkthrough;
// review / show evidence / query probation / parity config / kill: trust earned (issue 18).
mod trust_cli;
