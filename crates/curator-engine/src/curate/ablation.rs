//! What an ablation result means for memory (agent-qa-memory §8, fixing §11.4–§11.5; issue 18
//! item 2).
//!
//! agent-qa applies the same first-failed-step penalty whatever the rerun without memory shows
//! (`curator.policy: agent-qa` keeps exactly that). With the evidence policy the rerun is
//! evidence:
//! - rerun **passed**: the same test passes without memory, so memory caused the failure; the
//!   suspects are the observations injected at or before the failure (an observation that
//!   misled an earlier step is a suspect too), and each is judged by its own record
//!   (`blame.rs`): blamed ones are contradicted, spared ones get a journal note saying why, and
//!   a blamed proposal on probation is rejected from the review queue;
//! - rerun **failed**: the test fails without memory as well, so memory is exonerated; nothing is
//!   contradicted, and each injected observation gets a journal entry saying why it was spared.
//!
//! The breaker record of the rerun (`withMemory: false`) is the harness's call, not made here.

use curator_core::ObservationId;
use curator_core::trust::TrustDeltas;
use curator_store::{Action, Transaction};

use super::apply::{cause, contradict};
use super::blame::{Closest, Model, Suspect, judge};
use super::evidence::RunBook;
use super::gate;
use super::memory_log::MemoryLog;
use super::run_record::RunRecord;

/// The suspects of a failure: every id injected at or before the failed step (every step when
/// the run failed without a failed step, which then counts as failing after the last one),
/// once each, with the 0-based step it first appeared in (the index journal reasons name
/// everywhere) and its injection closest to the
/// failure.
fn suspects(record: &RunRecord) -> Vec<(String, usize, Closest)> {
    let failure_at = record.first_failed_step().unwrap_or(record.steps.len());
    let mut out: Vec<(String, usize, Closest)> = Vec::new();
    for (i, step) in record.steps.iter().enumerate().take(failure_at + 1) {
        let here = if i == failure_at {
            Closest::FailedStep
        } else if i + 1 == failure_at {
            Closest::JustBefore
        } else {
            Closest::Earlier
        };
        for id in step.injected_ids() {
            match out.iter_mut().find(|(seen, _, _)| seen == id) {
                Some(found) => found.2 = found.2.max(here),
                None => out.push((id.clone(), i, here)),
            }
        }
    }
    out
}

/// Memory proven the cause: judges each suspect by its record and applies the verdicts.
/// `auto_review`: a blamed proposal is rejected from the queue (else left to a person).
pub(crate) fn blame_suspects(
    tx: &mut dyn Transaction,
    record: &RunRecord,
    book: &RunBook,
    deltas: &TrustDeltas,
    min_trust: f64,
    auto_review: bool,
    log: &mut MemoryLog,
) -> u64 {
    let mut spared = 0;
    let found = suspects(record);
    let model = Model::for_baseline(&book.prior_baseline());
    let list: Vec<Suspect> = found
        .iter()
        .map(|(id, _, closest)| Suspect {
            id: id.clone(),
            prior: book.prior(id),
            closest: *closest,
        })
        .collect();
    for ((raw, step, _), verdict) in found.iter().zip(judge(&model, &list)) {
        let reasoning = format!(
            "Ablation rerun without memory passed: {raw} was injected at step {step}, at or before the failure; {}",
            verdict.why
        );
        let Ok(id) = ObservationId::parse(raw) else {
            log.errors.push(format!("Observation file not found for deprecation: {raw}"));
            continue;
        };
        let outcome = (|| -> curator_store::Result<Option<String>> {
            if let Some(stored) = tx.get_parsed(&id)? {
                if !verdict.blamed {
                    tx.note(&stored, Action::Spare, &reasoning)?;
                    spared += 1;
                    return Ok(None);
                }
                let stored_trust = stored.observation.trust;
                contradict(tx, stored, deltas, &reasoning, log)?;
                if verdict.sink {
                    let again = format!("{reasoning} (contradicted again)");
                    sink(tx, &id, stored_trust, deltas, min_trust, &again, log)?;
                }
                return Ok(None);
            }
            match crate::review::queued(tx, &id)? {
                Some(queued) if verdict.blamed && auto_review => {
                    gate::reject(tx, &queued, &reasoning, log)?;
                    Ok(None)
                }
                Some(_) => Ok(None),
                None => Ok(Some(format!("Observation file not found for deprecation: {raw}"))),
            }
        })();
        match outcome {
            Ok(None) => {}
            Ok(Some(message)) => log.errors.push(message),
            Err(e) => log.skip(format!("Deprecation error for {raw}: {}", cause(&e)), &e),
        }
    }
    spared
}

/// Contradicts `id` again, one contradict delta at a time, until one confirmation would not make
/// it injectable again (`trust + confirm < min_trust`). Never to deletion (with minTrust 0
/// nothing is below it: deletion stays what failures on probation earn, one contradiction
/// each), and never without progress (a zero or rounded-away delta); `before` is its trust
/// before the first contradiction. Stopping just below minTrust, so that one probation pass
/// re-arms it as an unproven observation (`trial.rs`), lost fewer helpful observations but
/// left more misleading ones armed on the held-out seeds (BENCHMARKS.md, "One trial per run"),
/// and so did it with a pass re-arming only an observation its record clears (3 of 500 left
/// armed against 1; BENCHMARKS.md, 2026-12-07).
fn sink(
    tx: &mut dyn Transaction,
    id: &ObservationId,
    before: f64,
    deltas: &TrustDeltas,
    min_trust: f64,
    reasoning: &str,
    log: &mut MemoryLog,
) -> curator_store::Result<()> {
    let mut last = before;
    // The first contradiction may have deleted it (trust reached 0).
    while let Some(stored) = tx.get_parsed(id)? {
        let trust = stored.observation.trust;
        if trust + deltas.confirm < min_trust || trust <= deltas.contradict || trust >= last {
            break;
        }
        last = trust;
        contradict(tx, stored, deltas, reasoning, log)?;
    }
    Ok(())
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
        let outcome = tx.get_parsed(&id).and_then(|found| match found {
            Some(stored) => tx.note(&stored, Action::Exonerate, &reasoning).map(|()| true),
            // A queued proposal on probation: its record says the run cleared it.
            None => crate::review::queued(tx, &id).map(|q| q.is_some()),
        });
        match outcome {
            Ok(true) => journaled += 1,
            Ok(false) => {
                log.errors.push(format!("Observation file not found for exoneration: {raw}"))
            }
            Err(e) => log.skip(format!("Exoneration error for {raw}: {e}"), &e),
        }
    }
    journaled
}
