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
//! ([`INITIAL_TRUST`]) whose outcome record is no better than a newcomer's — its
//! `P(misleading)` under the blame model (`curate::blame`) is still at least the prior. A
//! confirmed observation (trust above the start, as agent-qa's files carry it) or one whose
//! passes outweigh its failures is proven and injected as agent-qa injects it. Memory below
//! minTrust or waiting for review only ever enters a run on probation, and probation shares
//! the same slot: **at most one step of a run carries an unproven observation, and it carries
//! one** — a newcomer among its ordinary injections, or a probation injection.
//!
//! The slot belongs to recorded runs only (`--run-id`, the HTTP and MCP `run`): a query without
//! a run has no run to share, and answers as agent-qa does. A retried step sees the same slot
//! (its own earlier record is not counted against it), so a retry gets the same answer.
//! `curator.policy: agent-qa` never holds a newcomer back.

use curator_core::trust::INITIAL_TRUST;
use curator_store::Store;
use curator_store::evidence::EvidenceQuery;
use curator_store::index::Hit;

use crate::curate::blame::{Model, PRIOR_MISLEADING};

/// The step's ordinary injections with at most one unproven observation per run, and whether
/// the run's slot is now taken (then no probation injection may join them).
pub(crate) struct Admitted {
    pub(crate) hits: Vec<Hit>,
    pub(crate) slot_taken: bool,
}

/// Picks up to `max` of `ranked` (best first) for `step` of `run_id`, skipping an unproven
/// observation when another step of the run already tried one, or when this step already took
/// one. `test` is the test's scope name, whose record is the blame model's baseline.
pub(crate) fn admit(
    store: &dyn Store,
    ranked: Vec<Hit>,
    run_id: &str,
    step: u64,
    test: Option<&str>,
    max: usize,
) -> curator_store::Result<Admitted> {
    let session = match store.load_session(run_id) {
        Ok(session) => session,
        Err(curator_store::Error::Unsupported { .. }) => None,
        Err(e) => return Err(e),
    };
    let mut earlier: Vec<(String, f64)> = Vec::new();
    let mut slot_taken = false;
    if let Some(session) = &session {
        for (&other, ids) in session.injected.iter().filter(|(s, _)| **s != step) {
            for id in ids {
                if session.probation_at(other) == Some(id.as_str()) {
                    slot_taken = true;
                } else if let Some(trust) = current_trust(store, id)? {
                    earlier.push((id.clone(), trust));
                }
            }
        }
    }
    let candidates: Vec<(String, f64)> = ranked.iter().map(|h| (h.id.clone(), h.trust)).collect();
    let mut all = earlier.clone();
    all.extend(candidates.iter().cloned());
    let unproven = unproven(store, test, &all)?;
    let (earlier_unproven, candidates_unproven) = unproven.split_at(earlier.len());
    slot_taken |= earlier_unproven.iter().any(|u| *u);
    let mut hits = Vec::new();
    for (hit, unproven) in ranked.into_iter().zip(candidates_unproven) {
        if hits.len() == max {
            break;
        }
        if *unproven {
            if slot_taken {
                continue;
            }
            slot_taken = true;
        }
        hits.push(hit);
    }
    Ok(Admitted { hits, slot_taken })
}

/// The trust `id` has now; `None` when it is gone (deleted since the step that injected it).
fn current_trust(store: &dyn Store, id: &str) -> curator_store::Result<Option<f64>> {
    let Ok(parsed) = curator_core::ObservationId::parse(id) else { return Ok(None) };
    match store.get(&parsed) {
        Ok(stored) => Ok(Some(stored.observation.trust)),
        Err(curator_store::Error::NotFound { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

/// For each `(id, trust)`: is it unproven? Only observations at or below the starting trust
/// need their record, so a root of confirmed memory reads no evidence at all.
fn unproven(
    store: &dyn Store,
    test: Option<&str>,
    observations: &[(String, f64)],
) -> curator_store::Result<Vec<bool>> {
    let at_start = |trust: f64| trust <= INITIAL_TRUST + 1e-9;
    let ids: Vec<String> =
        observations.iter().filter(|(_, t)| at_start(*t)).map(|(id, _)| id.clone()).collect();
    if ids.is_empty() {
        return Ok(vec![false; observations.len()]);
    }
    let tests = test.map(|t| vec![t.to_owned()]).unwrap_or_default();
    let view = match store.evidence(&EvidenceQuery { ids, tests }) {
        Ok(view) => view,
        // A store that keeps no outcome evidence knows only trust.
        Err(curator_store::Error::Unsupported { .. }) => Default::default(),
        Err(e) => return Err(e),
    };
    let model = Model::for_baseline(&test.map(|t| view.baseline(t)).unwrap_or_default());
    Ok(observations
        .iter()
        .map(|(id, trust)| {
            at_start(*trust) && model.p_misleading(&view.of(id)) >= PRIOR_MISLEADING - 1e-9
        })
        .collect())
}
