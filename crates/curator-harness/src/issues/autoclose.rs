//! Stale auto-close, the curator's own step after triage (harness-curator §3.5).
//!
//! An issue closes only on evidence: it has a code pointer, its feature (linked F-FIX, else
//! found-during) is `passed`, and no finding triaged since the last auto-close carries the same
//! pointer (this pass's batch, and the batches of triages run on their own or by a pass killed
//! before its auto-close: the harness keeps their pointers until an auto-close has seen them, so
//! a retried pass, or a triage followed by a curate, never closes an issue that just came back). Open
//! and acknowledged issues qualify; `fixing` issues qualify when their linked feature passed. An
//! issue without a pointer is never closed here.

use std::collections::BTreeMap;

use serde_json::Value;

use super::store::{IssueFile, Note, Status};

/// Feature id → status, read from features.json.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FeatureStatuses {
    /// Every feature found, with its status as written.
    pub statuses: BTreeMap<String, String>,
}

impl FeatureStatuses {
    /// Reads features.json tolerantly: a top-level array of features, or an object holding one
    /// under `features`; each feature needs `id` and may carry `status`. Anything else is empty.
    pub fn parse(text: &str) -> FeatureStatuses {
        let Ok(value) = serde_json::from_str::<Value>(text) else {
            return FeatureStatuses::default();
        };
        let list = match &value {
            Value::Array(items) => items.as_slice(),
            Value::Object(obj) => match obj.get("features") {
                Some(Value::Array(items)) => items.as_slice(),
                _ => &[],
            },
            _ => &[],
        };
        let statuses = list
            .iter()
            .filter_map(|f| {
                let id = f.get("id")?.as_str()?.to_string();
                let status = f.get("status").and_then(Value::as_str).unwrap_or("").to_string();
                Some((id, status))
            })
            .collect();
        FeatureStatuses { statuses }
    }

    /// Whether `id` is `passed`.
    pub fn is_passed(&self, id: &str) -> bool {
        self.statuses.get(id).is_some_and(|s| s == "passed")
    }

    /// Whether features.json lists `id` at all.
    pub fn contains(&self, id: &str) -> bool {
        self.statuses.contains_key(id)
    }

    /// Whether any features were read (an absent file cannot make anything stale).
    pub fn is_known(&self) -> bool {
        !self.statuses.is_empty()
    }
}

/// Closes stale issues; returns how many. `refound` holds the code pointers of the findings
/// triaged since the last auto-close; `round` is `TRIGGER=<t> <date>`.
pub fn auto_close(
    file: &mut IssueFile,
    features: &FeatureStatuses,
    refound: &[String],
    round: &str,
    now: &str,
) -> usize {
    let mut closed = 0;
    for issue in &mut file.issues {
        let eligible = match issue.status {
            Status::Open | Status::Acknowledged => true,
            Status::Fixing => issue.linked_feature_id.is_some(),
            Status::Closed | Status::Wontfix => false,
        };
        let Some(pointer) = issue.pointer() else { continue };
        let Some(feature) = issue.its_feature() else { continue };
        if !eligible || !features.is_passed(feature) {
            continue;
        }
        if refound.iter().any(|p| p == pointer) {
            continue;
        }
        issue.status = Status::Closed;
        issue.notes.push(Note {
            ts: now.to_string(),
            by: "curator".to_string(),
            text: format!("Code path verified green during {round}"),
            extra: Default::default(),
        });
        closed += 1;
    }
    closed
}
