//! What an ablation result means for memory (agent-qa-memory §8, as ARCHITECTURE.md decides,
//! fixing §11.4–§11.5).
//!
//! agent-qa applies the same first-failed-step penalty whatever the rerun without memory shows.
//! Here the rerun is evidence:
//! - rerun **passed**: the same test passes without memory, so memory caused the failure; every
//!   observation injected *anywhere* in the run is contradicted, each once (an observation that
//!   misled an early step is blamed too);
//! - rerun **failed**: the test fails without memory as well, so memory is exonerated; nothing is
//!   contradicted, and each injected observation gets a journal entry saying why it was spared.
//!
//! The breaker record of the rerun (`withMemory: false`) is the harness's call, not made here.

use curator_core::ObservationId;
use curator_core::trust::TrustDeltas;
use curator_store::{Action, Transaction};

use super::failure::contradict_ids;
use super::memory_log::MemoryLog;
use super::run_record::RunRecord;

/// Contradicts every observation injected anywhere in `record`, once each.
pub(crate) fn memory_caused(
    tx: &mut dyn Transaction,
    record: &RunRecord,
    deltas: &TrustDeltas,
    log: &mut MemoryLog,
) {
    let ids = record.all_injected();
    contradict_ids(
        tx,
        &ids,
        deltas,
        &|id| {
            format!(
                "Ablation rerun without memory passed: injected observation {id} caused the failure"
            )
        },
        log,
    );
}

/// Leaves every injected observation unchanged and journals the exoneration of each one that
/// still exists; returns how many were journaled.
pub(crate) fn exonerate(tx: &mut dyn Transaction, record: &RunRecord, log: &mut MemoryLog) -> u64 {
    let mut journaled = 0;
    for raw in record.all_injected() {
        let Ok(id) = ObservationId::parse(&raw) else {
            log.errors.push(format!("Exoneration error for {raw}: not an observation id"));
            continue;
        };
        let reasoning = format!(
            "Ablation rerun without memory failed too: injected observation {raw} was not the cause"
        );
        let outcome = tx.get(&id).and_then(|found| match found {
            Some(stored) => tx.note(&stored, Action::Exonerate, &reasoning).map(|()| true),
            None => Ok(false),
        });
        match outcome {
            Ok(true) => journaled += 1,
            Ok(false) => {
                log.errors.push(format!("Observation file not found for exoneration: {raw}"))
            }
            Err(e) => log.errors.push(format!("Exoneration error for {raw}: {e}")),
        }
    }
    journaled
}
