//! curator-harness: harness memory (shared/spec/harness-curator.md).
//!
//! A coding-agent harness keeps layered memory on disk — `raw.md` (every role's one-line log),
//! `MEMORY.md` (the mission's curated store), `summary.md` (what every role is shown),
//! `identity/<role>.md` (cross-mission) — plus an issue queue. This crate appends to those files
//! safely, triages the queue and runs the deterministic curator pass that distils them, with every
//! numeric bound enforced by code and checked after writing. Entry point: [`Harness`].

mod classify;
mod codebase;
mod compact;
mod context;
mod error;
mod fsio;
mod harness;
mod identity;
mod issues;
mod ledger;
mod lemma;
mod memory_md;
mod pass;
mod promote;
mod raw;
mod rewrite;
mod safety;
mod status;
mod summary;
mod truncate;

pub use classify::{Classified, classify};
pub use codebase::{ProjectIndex, feature_ids};
pub use compact::MEMORY_MAX_LINES;
pub use error::{Error, Result};
pub use harness::{Harness, HarnessOptions, TriageReport};
pub use identity::{IDENTITY_MAX_LINES, IdentityEntry, IdentityFile, IdentitySection};
pub use issues::{
    FeatureStatuses, Issue, IssueFile, NewIssue, Note, PendingIssue, Severity, Status,
    TriageCounts, auto_close, jaccard, read_pending, title_tokens, triage,
};
pub use lemma::{Lemma, cluster, main_clause, same_lemma};
pub use memory_md::{Item, MemoryDoc, Section};
pub use pass::{PassReport, PassStage, Trigger};
pub use raw::{
    Entry, EntryKind, RawLine, TRICK, format_line, iso_date, iso_seconds, parse_line, segment,
};
pub use rewrite::{MemoryRewriter, RewriteInput, RewriteOutput, known_fids, validate_rewrite};
pub use status::{IssueCounts, LayerStatus, StatusReport};
pub use summary::{SUMMARY_MAX_LINES, SUMMARY_MAX_TOKENS};
pub use truncate::RAW_KEEP_ENTRIES;

/// The clock type every operation takes "now" as (re-exported so callers need no jiff dependency).
pub use jiff::Timestamp;

/// The summary renderer, exposed for tests and tools that re-derive summary.md.
pub fn render_summary(doc: &MemoryDoc, date: &str) -> Result<String> {
    summary::render(doc, date)
}

/// The §1.1 preamble renderer for callers that already hold the texts.
pub fn render_context(role: &str, identity: &str, summary: &str) -> String {
    context::render(role, identity, summary)
}
