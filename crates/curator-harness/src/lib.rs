//! curator-harness: harness memory (shared/spec/harness-curator.md).
//!
//! A coding-agent harness keeps layered memory on disk — `raw.md` (every role's one-line log),
//! `MEMORY.md` (the mission's curated store), `summary.md` (what every role is shown),
//! `identity/<role>.md` (cross-mission) — plus an issue queue. This crate appends to those files
//! safely, triages the queue and runs the deterministic curator pass that distils them, with every
//! numeric bound enforced by code and checked after writing. Whatever leaves raw.md, or a memory
//! file, is archived first with its disposition (`memory/archive/`), and `trace` finds where any
//! entry went. Entry point: [`Harness`].

mod archive;
mod bounds;
mod browse;
mod classify;
mod codebase;
mod compact;
mod context;
mod error;
mod fsio;
mod harness;
mod identity;
mod issue_action;
mod issues;
mod judge;
mod ledger;
mod lemma;
mod memory_md;
mod merge;
mod merged_head;
mod pass;
mod raw;
mod redo;
mod safety;
mod status;
mod summary;
mod trace;

pub use archive::{ArchiveRecord, DispositionCounts, RecordKind};
pub use bounds::{
    EVIDENCE_MAX, IDENTITY_MAX_BYTES, IDENTITY_MAX_LINES, ITEM_MAX_CHARS, MEMORY_MAX_BYTES,
    MEMORY_MAX_LINES, MISSIONS_MAX, RAW_KEEP_ENTRIES, SUMMARY_MAX_LINES, SUMMARY_MAX_TOKENS,
};
pub use browse::{ARCHIVE_PAGE_MAX, ArchivePage, RawTail};
pub use classify::{Classified, Rule, Verdict, classify, forgetter, is_progress, role_default};
pub use codebase::{ProjectIndex, feature_ids};
pub use error::{Error, Result};
pub use harness::{Harness, HarnessOptions, TriageReport};
pub use identity::{IdentityEntry, IdentityFile, IdentitySection};
pub use issue_action::{ISSUE_NOTE_MAX_CHARS, IssueChange, human_transition_allowed};
pub use issues::{
    FeatureStatuses, Issue, IssueFile, NewIssue, Note, PendingIssue, Severity, Status,
    TriageCounts, auto_close, jaccard, read_pending, title_tokens, triage,
};
pub use judge::{EntryJudge, JUDGE_MAX_ENTRIES, JudgeAnswer, JudgeInput, LlmJudge};
pub use lemma::{Lemma, cluster, main_clause, same_lemma};
pub use memory_md::{Item, MemoryDoc, Section};
pub use merge::Disposition;
pub use pass::{PassReport, PassStage, Trigger};
pub use raw::{
    Entry, EntryKind, EntryReader, MAX_ENTRY_TEXT, RawEntry, RawLine, TRICK, format_line, iso_date,
    iso_seconds, parse_line, parse_near_format, segment,
};
pub use status::{IssueCounts, LayerStatus, StatusReport};
pub use trace::{TRACE_MAX_HITS, TraceHit, TraceReport};

/// The clock type every operation takes "now" as (re-exported so callers need no jiff dependency).
pub use jiff::Timestamp;

/// The LLM settings type [`LlmJudge`] takes (curator-engine's, re-exported).
pub use curator_engine::providers::LlmConfig;

/// The summary renderer, exposed for tests and tools that re-derive summary.md.
pub fn render_summary(doc: &MemoryDoc, date: &str) -> Result<String> {
    summary::render(doc, date)
}

/// The §1.1 preamble renderer for callers that already hold the texts.
pub fn render_context(role: &str, identity: &str, summary: &str) -> String {
    context::render(role, identity, summary)
}
