//! The plain BM25 baseline of an eval report, run over the very observations a step may see.
//!
//! Invariant: the baseline's collection for a query is what curator's own modes search — the
//! step's scope folders in discovery order (product, suite, test; file names in listing
//! order), suite observations only at their exact position and snapshot, observations the
//! scanner blocks left out, `trust >= min_trust` — so the only difference between the baseline
//! and a mode is the ranking ([`curator_store::index::bm25_baseline`]).

use curator_core::Tier;
use curator_core::scanner::scan_observation;
use curator_store::index::{BaselineDoc, bm25_baseline};
use curator_store::{ListFilter, Store, StoredObservation};

use super::EvalQuery;
use crate::scopes::{SuiteContext, scope_selectors};

/// The ids plain BM25 would inject for `q` at a cap of `limit`, best first.
pub fn baseline_ids(
    store: &dyn Store,
    q: &EvalQuery,
    min_trust: f64,
    limit: usize,
) -> curator_store::Result<Vec<String>> {
    let suite = q.suite.as_ref().map(|s| SuiteContext {
        id: s.id.clone(),
        tests: Some(s.tests.clone()),
        position: Some(s.position),
    });
    let mut pool: Vec<StoredObservation> = Vec::new();
    for sel in scope_selectors(&q.product, &q.test, suite.as_ref()) {
        let filter = ListFilter { tier: Some(sel.dir.tier), scope: Some(sel.dir.scope.clone()) };
        for stored in store.list(&filter)?.observations {
            let obs = &stored.observation;
            let placed = match (&obs.suite, sel.dir.tier) {
                (Some(p), Tier::Suites) => sel
                    .suite
                    .as_ref()
                    .is_some_and(|m| m.position == p.position && m.snapshot == p.suite_snapshot),
                _ => true,
            };
            let safe = scan_observation(&obs.title, &obs.content).rule().is_none();
            if placed && safe && obs.trust >= min_trust {
                pool.push(stored);
            }
        }
    }
    let docs: Vec<BaselineDoc<'_>> = pool
        .iter()
        .map(|s| BaselineDoc { title: &s.observation.title, content: &s.observation.content })
        .collect();
    Ok(bm25_baseline(&docs, &q.query, limit)
        .into_iter()
        .map(|i| pool[i].observation.id.as_str().to_owned())
        .collect())
}
