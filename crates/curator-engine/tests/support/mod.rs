//! Shared helpers of the curator tests: an in-memory [`Store`] (the policy simulation's store,
//! where the subject is the trust policy, not the disk) and builders for run records and
//! observations. Store-agnostic helpers seed and read through the `Store` trait only, so the
//! same assertions hold for the file store.

#![allow(dead_code, unreachable_pub, unused_imports)]

pub mod mem_store;

use curator_core::{Observation, ObservationId, ScopeName, SuitePlacement, Tier};
use curator_store::{Action, Store, StoredObservation};
use serde_json::{Value, json};

pub use mem_store::MemStore;

/// A canonical id made from `seed` (distinct seeds give distinct ids).
pub fn id(seed: &str) -> String {
    let letters: String = seed.chars().filter(|c| c.is_ascii_lowercase()).collect();
    let base = if letters.len() >= 2 { letters } else { format!("x{letters}x") };
    let words: Vec<String> = (0..10)
        .map(|i| format!("{base}{}", ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"][i]))
        .collect();
    format!("obs_{}", words.join("-"))
}

/// A legacy 6-word id.
pub fn legacy_id(seed: &str) -> String {
    let words: Vec<String> =
        (0..6).map(|i| format!("{seed}{}", ["a", "b", "c", "d", "e", "f"][i])).collect();
    format!("obs_{}", words.join("-"))
}

/// An observation with `trust`, as agent-qa would have written it.
pub fn observation(id: &str, title: &str, content: &str, trust: f64) -> Observation {
    Observation {
        id: ObservationId::parse(id).expect("valid id"),
        title: title.to_owned(),
        content: content.to_owned(),
        trust,
        created: "2026-04-01T10:00:00.000Z".to_owned(),
        last_confirmed: "2026-04-01T10:00:00.000Z".to_owned(),
        confirmed_count: 2,
        contradicted_count: 1,
        source_test: "t_seed".to_owned(),
        suite: None,
        extra: Default::default(),
    }
}

/// A suite observation for `position` with `snapshot` (list of `(test, id)`).
pub fn suite_observation(
    id: &str,
    title: &str,
    position: u64,
    snapshot: &[(&str, &str)],
) -> Observation {
    let mut o = observation(id, title, "Suite fact body", 0.5);
    o.suite = Some(SuitePlacement {
        position,
        suite_snapshot: snapshot
            .iter()
            .map(|(t, i)| curator_core::SnapshotEntry { test: (*t).into(), id: (*i).into() })
            .collect(),
    });
    o
}

/// Writes `obs` into `<tier>/<scope>` through the store (journaled under no run).
pub fn seed(store: &dyn Store, tier: Tier, scope: &str, obs: &Observation) {
    let scope = ScopeName::new(scope).unwrap();
    store
        .transact(None, &mut |tx| tx.put(tier, &scope, obs, Action::Add, "seed"))
        .unwrap_or_else(|e| panic!("seed {}: {e}", obs.id));
}

/// The observation `id` now, `None` when it is gone.
pub fn get(store: &dyn Store, id: &str) -> Option<StoredObservation> {
    match store.get(&ObservationId::parse(id).unwrap()) {
        Ok(o) => Some(o),
        Err(curator_store::Error::NotFound { .. }) => None,
        Err(e) => panic!("get {id}: {e}"),
    }
}

/// A run record of product `acme`, test `t_login`, with `steps` and `status`.
pub fn record(status: &str, steps: Value) -> Value {
    json!({"run_id": "r_test", "product": "acme", "test": {"id": "t_login", "name": "Login"},
           "status": status, "steps": steps})
}

/// The standard two-test suite snapshot.
pub const SUITE: [(&str, &str); 2] = [("tests/a.yaml", "t_login"), ("tests/b.yaml", "t_buy")];

/// `record` plus the standard suite at `position`.
pub fn suite_record(status: &str, steps: Value, position: u64) -> Value {
    let mut v = record(status, steps);
    v["suite"] = json!({"id": "s_checkout", "position": position,
                        "tests": SUITE.iter().map(|(t, i)| json!({"test": t, "id": i})).collect::<Vec<_>>()});
    v
}
