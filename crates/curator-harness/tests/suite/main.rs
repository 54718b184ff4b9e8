//! Integration tests of curator-harness against the rules of shared/spec/harness-curator.md.
//! One target (one link step); one module per spec area.

mod common;

/// §5, §6, §7 bounds: summary under a 500-line MEMORY.md, MEMORY.md 200 lines, identity compaction.
mod bounds;
/// Issue 16: a pass or triage killed at each stage, then recovered by the next.
mod crash;
/// §3 pending records, triage, ids, aliases, auto-close.
mod issues;
/// The optional LLM judge against a mock OpenAI-compatible server on 127.0.0.1.
mod judge;
/// A replayed mission: dozens of raw entries, a dozen pending issues, two passes.
mod mission;
/// §8.2 pass order, output line, idempotency, context and status, LLM rewrite validation.
mod pass;
/// §4.2–§4.4 lemma clustering, threshold, codebase-specific detection, cross-pass carry.
mod promotion;
/// §2.1/§2.2 raw.md grammar and segmentation, §2.3 truncation (with concurrent appends).
mod raw;
/// Issue 15 item 5: raw.md tail, archive pages, a person's issue actions.
mod review;
/// Issue 16's rules and errors, one test each.
mod rules;
/// Issue 16's scenario: 540 mixed entries, 3 passes, every entry accounted for.
mod scenario;
