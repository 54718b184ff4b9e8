//! The issue queue (harness-curator §3): pending records, the issues.json store, the deterministic
//! triage merge and the curator's stale auto-close.
//!
//! Everything here but the file readers is pure so the exact algorithm of §3.3 can be tested
//! without a disk; the I/O and locking live in `Harness`.

mod autoclose;
mod pending;
mod store;
mod triage;

pub use autoclose::{FeatureStatuses, auto_close};
pub(crate) use pending::skipped_lines;
pub use pending::{NewIssue, PendingIssue, read_pending};
pub use store::{Issue, IssueFile, Note, Severity, Status};
pub use triage::{TriageCounts, jaccard, title_tokens, triage};
