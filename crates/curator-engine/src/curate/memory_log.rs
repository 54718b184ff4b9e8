//! The MemoryLog: what one curator run changed (agent-qa-memory §5.7, plus `run_id`).
//!
//! The JSON shape is agent-qa's (camelCase `observationId`, `curatorDuration`, `tokenUsage`) so a
//! dashboard that stores agent-qa's log stores ours unchanged; curator adds `run_id` (the journal
//! key `undo` takes), `case` (which of the passed / failed / ablation paths ran), `provider`,
//! `already_applied` (the run had been applied before: nothing changed) and `generation` (which
//! application of the run this is; issue 13),
//! `evidence` (whether the run's outcome evidence was recorded now or already, issue 18) and,
//! only when non-zero, the review gate's `proposed` / `approved` / `rejected` counters.
//! Counting follows agent-qa: a contradiction that deletes counts as `deprecated` *and* `deleted`,
//! a stale suite observation only as `deleted`.

use curator_core::ObservationSnapshot;
use curator_store::Action;
use serde::{Deserialize, Serialize};

use super::evidence::EvidenceStatus;

/// Which curator path a run took.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CurateCase {
    /// A passed run: decisions applied (§5.4), then suite cleanup (§5.6).
    Passed,
    /// A failed or cancelled run without ablation: the first failed step's injections are
    /// contradicted (§5.5).
    Failed,
    /// The rerun without memory passed: memory caused the failure. The evidence policy blames
    /// the observations injected at or before it that their records implicate; the agent-qa
    /// policy takes the §5.5 path (§8).
    AblationPassed,
    /// The rerun without memory failed too: memory is exonerated, nothing is contradicted.
    AblationFailed,
}

/// One change (§5.7 delta).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryDelta {
    /// `add`, `confirm`, `deprecate` or `delete`.
    pub action: Action,
    /// `products`, `suites` or `tests`.
    pub tier: String,
    pub scope: String,
    #[serde(rename = "observationId")]
    pub observation_id: String,
    pub reasoning: String,
    pub before: Option<ObservationSnapshot>,
    pub after: Option<ObservationSnapshot>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Tokens an LLM provider spent (§5.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenUsage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub total_tokens: u64,
}

/// The log of one curator run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryLog {
    pub run_id: String,
    pub case: CurateCase,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    pub added: u64,
    pub confirmed: u64,
    pub deprecated: u64,
    pub deleted: u64,
    /// Proposals written to the review queue.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub proposed: u64,
    /// Proposals approved into memory.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub approved: u64,
    /// Proposals rejected from the queue.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rejected: u64,
    pub deltas: Vec<MemoryDelta>,
    pub errors: Vec<String>,
    #[serde(rename = "curatorDuration")]
    pub curator_duration: u64,
    #[serde(rename = "tokenUsage", default, skip_serializing_if = "Option::is_none")]
    pub token_usage: Option<TokenUsage>,
    /// The run had already been applied (an application of it stands in the journal), so this
    /// call changed nothing: a retried `curate` is harmless.
    #[serde(default)]
    pub already_applied: bool,
    /// Which application of the run the journal holds for this log: 1 the first time, n + 1
    /// when curated again after `undo`. Absent when the run journaled nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<u32>,
    /// Exonerations journaled (journal-only entries, no delta).
    #[serde(skip)]
    pub(crate) exonerated: u64,
    /// Whether this run's outcome evidence was recorded now, already, or not at all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<EvidenceStatus>,
    /// Why the run must not be applied now: the store could not read or write what one of its
    /// changes needed (an I/O error, an unreadable file, a lock, the database). The run's
    /// transaction is rolled back and the run stays unapplied, so a retry applies it whole; a
    /// change the content refuses (an unknown id, a file that does not parse) is one line of
    /// `errors` instead, and the rest of the run stands, as in agent-qa.
    #[serde(skip)]
    pub(crate) stop: Option<String>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl MemoryLog {
    /// An empty log for `run_id`.
    pub fn new(run_id: impl Into<String>, case: CurateCase) -> Self {
        MemoryLog {
            run_id: run_id.into(),
            case,
            provider: None,
            added: 0,
            confirmed: 0,
            deprecated: 0,
            deleted: 0,
            proposed: 0,
            approved: 0,
            rejected: 0,
            deltas: Vec::new(),
            errors: Vec::new(),
            curator_duration: 0,
            token_usage: None,
            already_applied: false,
            generation: None,
            exonerated: 0,
            evidence: None,
            stop: None,
        }
    }

    /// A change that could not be made: `message` (agent-qa's wording) joins `errors` when the
    /// content is at fault; when the store could not look, the run stops (see [`Self::stop`]).
    pub(crate) fn skip(&mut self, message: String, cause: &curator_store::Error) {
        if cause.is_environmental() {
            self.stop.get_or_insert_with(|| format!("{message}: {cause}"));
        } else {
            self.errors.push(message);
        }
    }

    /// Records a delta and bumps the counters the way agent-qa does.
    pub(crate) fn push(&mut self, delta: MemoryDelta, counts_as_deprecation: bool) {
        match delta.action {
            Action::Add => self.added += 1,
            Action::Confirm => self.confirmed += 1,
            Action::Deprecate => self.deprecated += 1,
            Action::Delete => {
                self.deleted += 1;
                if counts_as_deprecation {
                    self.deprecated += 1;
                }
            }
            Action::Propose => self.proposed += 1,
            Action::Approve => self.approved += 1,
            Action::Reject => self.rejected += 1,
            Action::Edit
            | Action::Undo
            | Action::Exonerate
            | Action::Spare
            | Action::Evidence
            | Action::Retract => {}
        }
        self.deltas.push(delta);
    }

    /// Whether the run changed nothing.
    pub fn is_empty(&self) -> bool {
        self.deltas.is_empty()
    }

    /// Whether this call changed memory or journaled anything (so `undo` has something to
    /// revert or the journal a new generation).
    pub fn changed_anything(&self) -> bool {
        !self.already_applied && self.generation.is_some()
    }

    /// agent-qa's console lines: the case line for ablation runs, then
    /// `  Memory: <parts> (<t>)`, then one `  Memory: warning -- <err>` per error. A run that
    /// was already applied says so instead, in one line.
    pub fn summary(&self) -> String {
        let mut out = String::new();
        if self.already_applied {
            let generation = self.generation.map_or(String::new(), |g| format!(", generation {g}"));
            out.push_str(&format!(
                "  Memory: run {} already applied{generation}; nothing changed ({})\n",
                self.run_id,
                duration_text(self.curator_duration)
            ));
            return out;
        }
        match self.case {
            CurateCase::AblationPassed => {
                out.push_str("  Memory: ablation confirmed memory caused failure -- penalizing observations\n");
            }
            CurateCase::AblationFailed => {
                out.push_str("  Memory: ablation retry also failed -- memory not the cause\n");
            }
            CurateCase::Passed | CurateCase::Failed => {}
        }
        let mut parts = Vec::new();
        // agent-qa's three parts, then the review gate's (never non-zero in agent-qa).
        for (n, word) in [
            (self.added, "added"),
            (self.confirmed, "confirmed"),
            (self.deprecated, "deprecated"),
            (self.proposed, "proposed for review"),
            (self.approved, "approved"),
            (self.rejected, "rejected"),
        ] {
            if n > 0 {
                parts.push(format!("{n} {word}"));
            }
        }
        let parts = if parts.is_empty() { "no changes".to_owned() } else { parts.join(", ") };
        out.push_str(&format!("  Memory: {parts} ({})\n", duration_text(self.curator_duration)));
        for e in &self.errors {
            out.push_str(&format!("  Memory: warning -- {e}\n"));
        }
        out
    }
}

/// `round(ms/1000)s` from one second on, else `<ms>ms` (agent-qa's console format).
fn duration_text(ms: u64) -> String {
    if ms >= 1000 {
        // JS Math.round: halves go up.
        format!("{}s", (ms + 500) / 1000)
    } else {
        format!("{ms}ms")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn delta(action: Action) -> MemoryDelta {
        MemoryDelta {
            action,
            tier: "products".into(),
            scope: "acme".into(),
            observation_id: "obs_x".into(),
            reasoning: String::new(),
            before: None,
            after: None,
            error: None,
        }
    }

    #[test]
    fn counters_follow_agent_qa() {
        let mut log = MemoryLog::new("r_x", CurateCase::Passed);
        log.push(delta(Action::Add), false);
        log.push(delta(Action::Delete), true);
        log.push(delta(Action::Delete), false);
        assert_eq!((log.added, log.deprecated, log.deleted), (1, 1, 2));
    }

    #[test]
    fn summary_prints_parts_duration_and_warnings() {
        let mut log = MemoryLog::new("r_x", CurateCase::Passed);
        log.curator_duration = 12;
        assert_eq!(log.summary(), "  Memory: no changes (12ms)\n");
        log.push(delta(Action::Add), false);
        log.push(delta(Action::Confirm), false);
        log.push(delta(Action::Confirm), false);
        log.push(delta(Action::Delete), false);
        log.curator_duration = 1500;
        log.errors.push("Unknown observation ID for update: obs_q".into());
        assert_eq!(
            log.summary(),
            "  Memory: 1 added, 2 confirmed (2s)\n  Memory: warning -- Unknown observation ID for update: obs_q\n",
            "deleted is not printed, as in agent-qa"
        );
        log.case = CurateCase::AblationFailed;
        assert!(
            log.summary()
                .starts_with("  Memory: ablation retry also failed -- memory not the cause\n")
        );
        let mut again = MemoryLog::new("r_x", CurateCase::Passed);
        again.already_applied = true;
        again.generation = Some(2);
        assert_eq!(
            again.summary(),
            "  Memory: run r_x already applied, generation 2; nothing changed (0ms)\n"
        );
        assert!(!again.changed_anything());
    }

    #[test]
    fn json_uses_agent_qa_names_plus_run_id() {
        let mut log = MemoryLog::new("r_x", CurateCase::AblationPassed);
        log.push(delta(Action::Deprecate), false);
        log.token_usage =
            Some(TokenUsage { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 });
        let v = serde_json::to_value(&log).unwrap();
        assert_eq!(v["run_id"], "r_x");
        assert_eq!(v["case"], "ablation_passed");
        assert_eq!(v["deltas"][0]["observationId"], "obs_x");
        assert_eq!(v["deltas"][0]["action"], "deprecate");
        assert_eq!(v["tokenUsage"]["totalTokens"], 3);
        assert!(v.get("curatorDuration").is_some());
        assert_eq!(v["already_applied"], false);
        assert!(v.get("generation").is_none() && v.get("exonerated").is_none());
        assert!(v["deltas"][0].get("error").is_none());
    }
}
