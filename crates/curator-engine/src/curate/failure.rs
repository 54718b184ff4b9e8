//! The failed-run path, `deprecateOnFailure` (agent-qa-memory §5.5).
//!
//! A failed or cancelled run without an ablation result blames only what was injected into the
//! *first* failed step: that step is where memory could have misled the agent, and earlier steps
//! passed with their memory. No observation is added, no LLM is called, no suite cleanup runs.
//! Ids come from the injection record, so there is no known-id check. An id listed twice in the
//! step (agent-qa lists one twice when it injected it from two folders; curator never does, but
//! a record written by agent-qa may) is contradicted once: one failure is one piece of evidence.
//! `curator.policy: agent-qa` contradicts it twice, as agent-qa's "for each id" does.

use curator_core::ObservationId;
use curator_core::config::BlamePolicy;
use curator_core::trust::TrustDeltas;
use curator_store::Transaction;

use super::apply::{cause, contradict};
use super::memory_log::MemoryLog;
use super::run_record::RunRecord;

/// The ids §5.5 contradicts: the first failed step's injections, in order ("for each id"),
/// each once unless `policy` is agent-qa's.
pub(crate) fn first_failed_step_ids(record: &RunRecord, policy: BlamePolicy) -> Vec<String> {
    let Some(step) = record.steps.iter().find(|s| s.is_failed()) else {
        return Vec::new();
    };
    let mut ids = step.injected_ids().to_vec();
    if policy != BlamePolicy::AgentQa {
        let mut seen = std::collections::HashSet::new();
        ids.retain(|id| seen.insert(id.clone()));
    }
    ids
}

/// Contradicts each id once with `reasoning(id)`; per-id failures become log errors with
/// agent-qa's wording and leave that observation unchanged.
pub(crate) fn contradict_ids(
    tx: &mut dyn Transaction,
    ids: &[String],
    deltas: &TrustDeltas,
    reasoning: &dyn Fn(&str) -> String,
    log: &mut MemoryLog,
) {
    for raw in ids {
        let Ok(id) = ObservationId::parse(raw) else {
            // agent-qa looks for its file and finds none.
            log.errors.push(format!("Observation file not found for deprecation: {raw}"));
            continue;
        };
        // Parsed, not scanned, as agent-qa reads it: memory the scanner blocks is still
        // contradicted down to its deletion; only a rewrite is scanned.
        let stored = match tx.get_parsed(&id) {
            Ok(Some(stored)) => stored,
            // A proposal injected on probation: the review gate decides about it.
            Ok(None) if matches!(crate::review::queued(tx, &id), Ok(Some(_))) => continue,
            Ok(None) => {
                log.errors.push(format!("Observation file not found for deprecation: {raw}"));
                continue;
            }
            Err(e) => {
                // agent-qa's wording exactly (§5.5); the cause goes to the diagnostics.
                tracing::warn!(id = %raw, error = %e, "observation to deprecate could not be read");
                log.skip(format!("Failed to parse observation for deprecation: {raw}"), &e);
                continue;
            }
        };
        if let Err(e) = contradict(tx, stored, deltas, &reasoning(raw), log) {
            log.skip(format!("Deprecation error for {raw}: {}", cause(&e)), &e);
        }
    }
}

/// agent-qa's reasoning line for a §5.5 contradiction.
pub(crate) fn failure_reasoning(id: &str) -> String {
    format!("Failure contradicted injected observation {id}")
}
