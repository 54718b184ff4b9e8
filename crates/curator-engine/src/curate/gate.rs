//! The review gate inside a curator run (issue 18 item 4): what a run decides about the
//! proposals it injected on probation, with `curator.review: auto`.
//!
//! A proposal the failure rules implicate is rejected (`ablation.rs` for a failure the rerun
//! blamed on memory; [`reject_failed_step`] for agent-qa's first-failed-step rule). One that
//! survived is approved once its record, this run included, shows
//! [`AUTO_APPROVE_PASSES`](crate::review::AUTO_APPROVE_PASSES) probation injections into passed
//! steps and a clean enough record. Every transition is a journal entry of the run (undone with
//! the run) and a MemoryLog delta.

use curator_core::ObservationId;
use curator_store::{Action, StoredObservation, Transaction};

use super::apply::delta;
use super::blame::Model;
use super::evidence::RunBook;
use super::memory_log::MemoryLog;
use super::run_record::RunRecord;
use crate::review::{AUTO_APPROVE_BELOW, AUTO_APPROVE_PASSES, approve_in, queued, reject_in};

/// Rejects `stored` from the queue and logs it.
pub(crate) fn reject(
    tx: &mut dyn Transaction,
    stored: &StoredObservation,
    reasoning: &str,
    log: &mut MemoryLog,
) -> curator_store::Result<()> {
    reject_in(tx, stored, reasoning)?;
    let o = &stored.observation;
    log.push(delta(Action::Reject, stored.tier, &stored.scope, o, None, reasoning), false);
    Ok(())
}

/// agent-qa's rule for the queue: a proposal injected on probation into the first failed step
/// of a run without a usable ablation result is rejected.
pub(crate) fn reject_failed_step(
    tx: &mut dyn Transaction,
    record: &RunRecord,
    log: &mut MemoryLog,
) {
    let Some(i) = record.first_failed_step() else { return };
    let Some(raw) = record.steps[i].probation.clone() else { return };
    let Ok(id) = ObservationId::parse(&raw) else { return };
    // Steps are named by their 0-based index everywhere, journal reasons included.
    let reasoning =
        format!("Proposal {raw} was injected on probation into step {i}, the first failed step");
    let result = queued(tx, &id).and_then(|q| match q {
        Some(stored) => reject(tx, &stored, &reasoning, log),
        None => Ok(()),
    });
    if let Err(e) = result {
        log.skip(format!("Review error for {raw}: {e}"), &e);
    }
}

/// Approves every proposal this run injected on probation whose record is now clean.
pub(crate) fn approve_clean(
    tx: &mut dyn Transaction,
    record: &RunRecord,
    book: &RunBook,
    log: &mut MemoryLog,
) {
    let model = Model::for_baseline(&book.prior_baseline());
    for raw in record.steps.iter().filter_map(|s| s.probation.as_deref()) {
        let Ok(id) = ObservationId::parse(raw) else { continue };
        let evidence = book.with_run(raw);
        let p = model.p_misleading(&evidence);
        if evidence.probation_passed < AUTO_APPROVE_PASSES || p >= AUTO_APPROVE_BELOW {
            continue;
        }
        let reasoning = format!(
            "Approved after {} probation injections into passed steps ({} of {} injections \
             followed by a failure; misleading at {:.0} %)",
            evidence.probation_passed,
            evidence.doomed(),
            evidence.injections(),
            p * 100.0
        );
        let result = queued(tx, &id).and_then(|q| match q {
            Some(stored) => approve_in(tx, &stored, &reasoning).map(|()| Some(stored)),
            None => Ok(None),
        });
        match result {
            Ok(Some(stored)) => {
                let o = &stored.observation;
                log.push(
                    delta(Action::Approve, stored.tier, &stored.scope, o, Some(o), &reasoning),
                    false,
                );
            }
            Ok(None) => {}
            Err(e) => log.skip(format!("Review error for {raw}: {e}"), &e),
        }
    }
}
