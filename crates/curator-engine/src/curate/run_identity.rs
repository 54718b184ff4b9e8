//! Which run a record is when it names none (issue 13 item 2: "a record without `run_id` gets an
//! id derived from its canonical content, so the same record is the same run").
//!
//! The id hashes the record as validated, not as sent: key order, whitespace, unknown keys and
//! an absent versus empty `injected` list do not change it; every field the curator reads does.
//! A retried record is therefore the same run and is applied once, while two different runs of
//! one test never share an id (SHA-256, 128 bits kept).

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::run_record::RunRecord;

impl RunRecord {
    /// The run id curate journals this record under: its own `run_id`, else its content's.
    pub fn journal_run_id(&self) -> String {
        self.run_id.clone().unwrap_or_else(|| self.content_run_id())
    }

    /// `r_` + 32 hex digits of the SHA-256 of the record's canonical JSON.
    pub fn content_run_id(&self) -> String {
        content_run_id(&self.canonical())
    }

    /// Every field the curator reads, in a fixed order.
    fn canonical(&self) -> Value {
        let suite = self.suite.as_ref().map(|s| {
            let tests: Vec<Value> =
                s.tests.iter().map(|t| json!({"test": t.test, "id": t.id})).collect();
            json!({"id": s.id.as_str(), "tests": tests, "position": s.position})
        });
        let steps: Vec<Value> = self
            .steps
            .iter()
            .map(|s| {
                let mut step = json!({
                    "name": s.name,
                    "status": s.status,
                    "observation": s.observation,
                    "error": s.error,
                    "reasoning": s.reasoning,
                    "sub_actions": s.sub_actions,
                    "healing_attempts": s.healing_attempts,
                    "injected": s.injected_ids(),
                });
                // Only when present, so the ids of records without it stay what they were.
                if let Some(p) = &s.probation {
                    step["probation"] = json!(p);
                }
                step
            })
            .collect();
        json!({
            "product": self.product.as_str(),
            "test": {"id": self.test.id.as_str(), "name": self.test.name, "file": self.test.file},
            "suite": suite,
            "status": self.status,
            "steps": steps,
            "ablation": self.ablation,
        })
    }
}

/// `r_` + 32 hex digits of the SHA-256 of `value` as compact JSON: a run id for content that
/// names none (a run record; the MCP `propose_decisions` call hashes its decisions too).
pub fn content_run_id(value: &Value) -> String {
    let digest = Sha256::digest(value.to_string().as_bytes());
    let hex: String = digest.iter().take(16).map(|b| format!("{b:02x}")).collect();
    format!("r_{hex}")
}

#[cfg(test)]
mod tests {
    use super::*;

    const RECORD: &str = r#"{"product":"acme","test":{"id":"t_a","name":"A"},"status":"passed",
        "steps":[{"name":"s","status":"passed","injected":[]}]}"#;

    #[test]
    fn the_same_record_is_the_same_run_however_it_is_written() {
        let a = RunRecord::from_json(RECORD).unwrap();
        let reordered = r#"{ "status": "passed", "extra": 1, "steps": [{"status":"passed",
            "name":"s"}], "test": {"name":"A","id":"t_a"}, "product": "acme" }"#;
        let b = RunRecord::from_json_with(reordered, super::super::UnknownKeys::Ignore).unwrap();
        assert_eq!(a.content_run_id(), b.content_run_id());
        let id = a.content_run_id();
        assert!(id.starts_with("r_") && id.len() == 34, "{id}");
        assert!(curator_store::is_valid_run_id(&id));
    }

    #[test]
    fn any_field_the_curator_reads_makes_another_run() {
        let base = RunRecord::from_json(RECORD).unwrap().content_run_id();
        for changed in [
            RECORD.replace("\"passed\",\n", "\"failed\",\n"),
            RECORD.replace("\"acme\"", "\"acme2\""),
            RECORD.replace("\"injected\":[]", "\"injected\":[\"obs_x\"]"),
            RECORD.replace("\"name\":\"s\"", "\"name\":\"t\""),
        ] {
            assert_ne!(RunRecord::from_json(&changed).unwrap().content_run_id(), base, "{changed}");
        }
        // The probation id too: it decides whether a failure rejects a proposal.
        let shown = RECORD.replace("\"injected\":[]", "\"injected\":[\"obs_x\"]");
        let on_probation = shown.replace("\"injected\"", "\"probation\":\"obs_x\",\"injected\"");
        let id = |text: &str| RunRecord::from_json(text).unwrap().content_run_id();
        assert_ne!(id(&shown), id(&on_probation));
    }
}
