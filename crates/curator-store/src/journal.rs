//! The journal: one JSON line per mutation in `<root>/.curator/journal.jsonl`. STUB.

use curator_core::ObservationSnapshot;

use crate::store::Action;

/// One journaled mutation.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct JournalEntry {
    /// ISO time of the change.
    pub time: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    pub action: Action,
    /// `products`, `suites` or `tests`.
    pub tier: String,
    pub scope: String,
    pub id: String,
    pub reasoning: String,
    pub before: Option<ObservationSnapshot>,
    pub after: Option<ObservationSnapshot>,
    /// The file's exact text before the change (what `undo` restores).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before_file: Option<String>,
    /// The file's exact text after the change (what `undo` expects to find).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_file: Option<String>,
}

/// Which journal entries to return.
#[derive(Debug, Clone, Default)]
pub struct JournalFilter {
    pub id: Option<String>,
    pub run_id: Option<String>,
}
