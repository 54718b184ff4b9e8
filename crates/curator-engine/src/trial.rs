//! One trial per run: memory whose worth is not yet known reaches a run one observation at a
//! time (issue 18, the evidence policy).
//!
//! Why: when a run fails and its ablation rerun passes, memory caused the failure, and the
//! curator must find out which of the run's injections did it (`curate::blame`). If the run
//! held two or three observations nobody has seen work, the failure says only "one of them":
//! a helpful newcomer that kept company with a misleading one has the record of a misleading
//! one, sinks with it, and can climb back only through probation. The policy simulation shows
//! that this, not a lack of probation, is what kept several helpful observations out of runs
//! at once (BENCHMARKS.md). Trying one unknown at a time is what a person debugging would do,
//! and it makes every failure speak about the one unknown it held: misleading memory is still
//! condemned by the failures it causes, and helpful memory is blamed only for failures that
//! had no better explanation.
//!
//! What is *unproven*: an observation at or below the trust a new one starts with
//! ([`INITIAL_TRUST`]): no run has confirmed it more than runs contradicted it (agent-qa's
//! arithmetic: +0.05 a pass, −0.10 a blame), so nothing yet speaks for it. Memory a run
//! confirmed, or that agent-qa's files carry above 0.5, is proven and injected as agent-qa
//! injects it. Memory below minTrust or waiting for review only ever enters a run on
//! probation, and probation shares the same slot: **at most one step of a run carries an
//! unproven observation, and it carries one** — a newcomer among its ordinary injections, or a
//! probation injection. Trust, not the outcome record, decides: it is what every store has at
//! hand for every hit, so the slot costs no read of the record (whose journal grows with every
//! run), and on the policy simulation's tuning seeds it kept helpful memory better than the
//! record's `P(misleading)` did (BENCHMARKS.md).
//!
//! The slot belongs to recorded runs only (`--run-id`, the HTTP and MCP `run`): a query without
//! a run has no run to share, and answers as agent-qa does. A retried step sees the same slot
//! (its own earlier record is not counted against it), so a retry gets the same answer.
//! `curator.policy: agent-qa` never holds a newcomer back.

use curator_core::trust::INITIAL_TRUST;
use curator_store::index::Hit;
use curator_store::{RunSession, Store};

/// The step's ordinary injections with at most one unproven observation per run, and whether
/// the run's slot is now taken (then no probation injection may join them).
pub(crate) struct Admitted {
    pub(crate) hits: Vec<Hit>,
    pub(crate) slot_taken: bool,
}

/// Picks up to `max` of `ranked` (best first) for `step` of the run whose `session` this is,
/// skipping an unproven observation when another step of the run already tried one, or when
/// this step already took one.
pub(crate) fn admit(
    store: &dyn Store,
    ranked: Vec<Hit>,
    session: Option<&RunSession>,
    step: u64,
    max: usize,
) -> curator_store::Result<Admitted> {
    let mut slot_taken = false;
    if let Some(session) = session {
        'steps: for (&other, ids) in session.injected.iter().filter(|(s, _)| **s != step) {
            for id in ids {
                if session.probation_at(other) == Some(id.as_str())
                    || current_trust(store, id)?.is_some_and(unproven)
                {
                    slot_taken = true;
                    break 'steps;
                }
            }
        }
    }
    let mut hits = Vec::new();
    for hit in ranked {
        if hits.len() == max {
            break;
        }
        if unproven(hit.trust) {
            if slot_taken {
                continue;
            }
            slot_taken = true;
        }
        hits.push(hit);
    }
    Ok(Admitted { hits, slot_taken })
}

/// The trust `id` has now; `None` when it is no longer served (deleted since the step that
/// injected it, now in two folders, unreadable or refused by the scanner): it takes no slot.
fn current_trust(store: &dyn Store, id: &str) -> curator_store::Result<Option<f64>> {
    use curator_store::Error;
    let Ok(parsed) = curator_core::ObservationId::parse(id) else { return Ok(None) };
    match store.get(&parsed) {
        Ok(stored) => Ok(Some(stored.observation.trust)),
        Err(
            Error::NotFound { .. }
            | Error::DuplicateId { .. }
            | Error::Unsafe { .. }
            | Error::Parse { .. }
            | Error::Refused { .. },
        ) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Nothing has confirmed it more than it was contradicted.
fn unproven(trust: f64) -> bool {
    trust <= INITIAL_TRUST + 1e-9
}
