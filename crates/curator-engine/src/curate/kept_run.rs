//! What the store keeps of each curated run record: its outcome, its steps with their status,
//! error and observation, and what was injected into each (issue 15 item 5).
//!
//! The journal says what the curator *did*; a reviewer judging a deprecation also needs what the
//! run *reported*: did it fail, at which step, with which error, after which observation. The
//! curator keeps that beside the memory ([`curator_store::Store::keep_run_record`]) before it
//! changes anything, so a run that changed nothing (a passed run with no decision, a retry) is
//! still on record. Keeping is idempotent: the last curate of a run id replaces what was kept.
//! Long texts are cut to [`MAX_TEXT`] bytes, so a harness that reports a 10 MB observation keeps
//! a page-sized one. Both stores keep them (curator-pg in its `run_records` table); a store
//! that keeps none is not an error.

use curator_store::Store;
use serde::{Deserialize, Serialize};

use super::run_record::RunRecord;

/// Longest text kept per step field, in bytes (cut at a character boundary).
pub(crate) const MAX_TEXT: usize = 4096;

/// One step as kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeptStep {
    pub name: String,
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observation: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
    /// Ids injected into the step (from the record or the run session).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub injected: Vec<String>,
}

/// A run record as kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeptRun {
    pub run_id: String,
    /// ISO time of the curate call that kept it.
    pub time: String,
    pub product: String,
    pub test: String,
    pub test_name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite: Option<String>,
    /// `passed`, `failed` or `cancelled`.
    pub status: String,
    /// The ablation rerun's status, when the record had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ablation: Option<String>,
    pub steps: Vec<KeptStep>,
}

fn cut(text: &Option<String>) -> Option<String> {
    let text = text.as_deref()?;
    if text.len() <= MAX_TEXT {
        return Some(text.to_owned());
    }
    let mut end = MAX_TEXT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Some(format!("{}… ({} more bytes not kept)", &text[..end], text.len() - end))
}

fn word(value: impl Serialize) -> String {
    serde_json::to_value(value).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
}

impl KeptRun {
    /// What is kept of `record`, curated as `run_id` at `time`.
    pub fn of(record: &RunRecord, run_id: &str, time: &str) -> KeptRun {
        KeptRun {
            run_id: run_id.to_owned(),
            time: time.to_owned(),
            product: record.product.to_string(),
            test: record.test.id.to_string(),
            test_name: record.test.name.clone(),
            suite: record.suite.as_ref().map(|s| s.id.to_string()),
            status: word(record.status),
            ablation: record.ablation.map(word),
            steps: record
                .steps
                .iter()
                .map(|s| KeptStep {
                    name: s.name.clone(),
                    status: s.status.clone(),
                    error: cut(&s.error),
                    observation: cut(&s.observation),
                    reasoning: cut(&s.reasoning),
                    injected: s.injected_ids().to_vec(),
                })
                .collect(),
        }
    }

    /// The first failed step and its 0-based index (the step §5.5 blames).
    pub fn first_failed(&self) -> Option<(usize, &KeptStep)> {
        self.steps.iter().enumerate().find(|(_, s)| s.status == "failed")
    }
}

/// Keeps `record` in `store`; a store without run records keeps nothing and that is fine.
pub(crate) fn keep(
    store: &dyn Store,
    record: &RunRecord,
    run_id: &str,
    time: &str,
) -> curator_store::Result<()> {
    let kept = serde_json::to_value(KeptRun::of(record, run_id, time))
        .map_err(|e| state_error(run_id, e))?;
    match store.keep_run_record(run_id, &kept) {
        Err(curator_store::Error::Unsupported { .. }) => Ok(()),
        other => other,
    }
}

fn state_error(run_id: &str, e: serde_json::Error) -> curator_store::Error {
    curator_store::Error::State {
        path: std::path::PathBuf::from(format!(".curator/records/{run_id}.json")),
        what: "run record",
        reason: e.to_string(),
    }
}

/// The run record kept for `run_id`: `Ok(None)` when none was kept, `Unsupported` from a store
/// that keeps none, a `State` error naming the file when it cannot be read.
pub fn load_kept_run(store: &dyn Store, run_id: &str) -> curator_store::Result<Option<KeptRun>> {
    let Some(value) = store.load_run_record(run_id)? else { return Ok(None) };
    serde_json::from_value(value).map(Some).map_err(|e| state_error(run_id, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_texts_are_cut_at_a_character_boundary() {
        let long = "é".repeat(MAX_TEXT);
        let kept = cut(&Some(long.clone())).unwrap();
        assert!(kept.len() < MAX_TEXT + 40 && kept.ends_with("more bytes not kept)"));
        assert!(kept.starts_with("éé"));
        assert_eq!(cut(&Some("short".into())).as_deref(), Some("short"));
        assert_eq!(cut(&None), None);
    }

    #[test]
    fn the_first_failed_step_is_found_with_its_index() {
        let record = RunRecord::from_value(&serde_json::json!({
            "product": "p", "test": {"id": "t", "name": "T"}, "status": "failed",
            "steps": [
                {"name": "open", "status": "passed"},
                {"name": "pay", "status": "failed", "error": "timeout", "observation": "spinner",
                 "injected": ["obs_a"]},
                {"name": "after", "status": "failed"}
            ]
        }))
        .unwrap();
        let kept = KeptRun::of(&record, "r1", "2026-01-01T00:00:00.000Z");
        let (i, step) = kept.first_failed().unwrap();
        assert_eq!((i, step.name.as_str(), step.error.as_deref()), (1, "pay", Some("timeout")));
        assert_eq!(step.injected, ["obs_a"]);
        assert_eq!((kept.status.as_str(), kept.ablation.as_deref()), ("failed", None));
        let back: KeptRun = serde_json::from_value(serde_json::to_value(&kept).unwrap()).unwrap();
        assert_eq!(back, kept);
    }
}
