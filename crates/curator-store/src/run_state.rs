//! Run sessions and circuit-breaker state: what a store keeps besides observations
//! (agent-qa-memory §3.4, §9; issue 7 item 4).
//!
//! The query that injects memory and the curate call that blames or confirms it are separate
//! processes, maybe on separate machines, so the store that holds the observations also holds
//! these: the file store as JSON files under `<root>/.curator/`, curator-pg as rows. Breaker
//! windows are opaque JSON here, because their rules belong to curator-engine, above this crate.
//! Run ids and breaker keys become file names in the file store, so both are checked here as
//! well as in the engine: a store never builds a path from an unchecked name.

use std::collections::BTreeMap;

use curator_core::ScopeName;
use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// Longest accepted run id, in bytes.
pub const MAX_RUN_ID_LEN: usize = 128;

/// The recorded injections of one run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunSession {
    pub run_id: String,
    /// Step index (0-based, as agent-qa's `stepIndex`) → injected ids, best first. Only steps
    /// that injected at least one observation have an entry.
    #[serde(default)]
    pub injected: BTreeMap<u64, Vec<String>>,
    /// Step index → the observation injected there on probation (one of that step's ids; at
    /// most one step of a run has one, issue 18). Absent from the file when empty.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub probation: BTreeMap<u64, String>,
    /// Keys this version does not know, kept on rewrite.
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

impl RunSession {
    /// The ids injected into `step`, or nothing.
    pub fn injected_at(&self, step: u64) -> &[String] {
        self.injected.get(&step).map_or(&[], Vec::as_slice)
    }

    /// The observation injected on probation into `step`, if any.
    pub fn probation_at(&self, step: u64) -> Option<&str> {
        self.probation.get(&step).map(String::as_str)
    }

    /// Replaces `step`'s entry (the last attempt counts): `ids` with `probation` among them,
    /// or nothing when `ids` is empty. Returns whether anything changed.
    pub fn set_step(&mut self, step: u64, ids: &[String], probation: Option<&str>) -> bool {
        let before = (self.injected.get(&step).cloned(), self.probation.get(&step).cloned());
        if ids.is_empty() {
            self.injected.remove(&step);
            self.probation.remove(&step);
        } else {
            self.injected.insert(step, ids.to_vec());
            match probation {
                Some(p) => self.probation.insert(step, p.to_owned()),
                None => self.probation.remove(&step),
            };
        }
        before != (self.injected.get(&step).cloned(), self.probation.get(&step).cloned())
    }
}

/// Whether `run_id` is a safe file name: ASCII letters, digits, `.`, `_`, `-`; not starting
/// with `.` (no `..`, no hidden files); 1 to [`MAX_RUN_ID_LEN`] bytes.
pub fn is_valid_run_id(run_id: &str) -> bool {
    !run_id.is_empty()
        && run_id.len() <= MAX_RUN_ID_LEN
        && !run_id.starts_with('.')
        && run_id.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// The run id `import` journals its writes under (the PostgreSQL store): no harness run may
/// take it, or its record would read as already applied.
pub const IMPORT_RUN_ID: &str = "import";

/// The largest step index a run session takes: JavaScript's largest safe integer, the most a
/// JSON client (agent-qa among them) can send exactly. Both stores key a step by it, and
/// PostgreSQL's `bigint` could not hold every `u64`.
pub const MAX_STEP_INDEX: u64 = (1 << 53) - 1;

/// Refuses a step index above [`MAX_STEP_INDEX`].
pub fn check_step_index(step: u64) -> Result<()> {
    if step <= MAX_STEP_INDEX {
        return Ok(());
    }
    Err(Error::InvalidKey {
        kind: "step index",
        key: step.to_string(),
        rule: format!("a step index is 0 to {MAX_STEP_INDEX} (2^53 - 1)"),
    })
}

/// Refuses a run id that [`is_valid_run_id`] rejects.
pub(crate) fn check_run_id(run_id: &str) -> Result<()> {
    if is_valid_run_id(run_id) {
        return Ok(());
    }
    Err(Error::InvalidKey {
        kind: "run id",
        key: run_id.to_owned(),
        rule: format!(
            "1-{MAX_RUN_ID_LEN} characters from A-Z a-z 0-9 . _ -, not starting with '.'"
        ),
    })
}

/// Refuses a breaker key that is not a scope name or starts with `.`.
pub(crate) fn check_breaker_key(key: &str) -> Result<()> {
    let rule = match ScopeName::new(key) {
        Err(e) => e.to_string(),
        Ok(_) if key.starts_with('.') => "must not start with '.'".to_owned(),
        Ok(_) => return Ok(()),
    };
    Err(Error::InvalidKey { kind: "breaker key", key: key.to_owned(), rule })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_ids_must_be_plain_file_names() {
        for good in ["r_lack-auto-quit", "run-2026.04.10_1", "A"] {
            check_run_id(good).unwrap();
        }
        for bad in ["", ".", "..", "../x", "a/b", "a\\b", ".hidden", "a b", "é", "a\0"] {
            assert!(check_run_id(bad).is_err(), "{bad:?} accepted");
        }
        assert!(!is_valid_run_id(&"r".repeat(MAX_RUN_ID_LEN + 1)));
    }

    #[test]
    fn breaker_keys_must_be_scope_names() {
        check_breaker_key("suite-checkout").unwrap();
        for bad in ["", "..", "a/b", ".hidden"] {
            let err = check_breaker_key(bad).unwrap_err();
            assert!(err.to_string().contains("breaker key"), "{err}");
        }
    }
}
