//! §5.4: applying the decisions of a passed run, and §5.6 suite cleanup.
//!
//! Every test runs against the in-memory store and (via `both!`) the file store, through the
//! `Store` trait only, so a rule holds whatever the storage.

mod support;

use curator_core::Tier;
use curator_core::trust::TrustDeltas;
use curator_engine::curate::{CurateCase, CurateOptions, Decisions, MemoryLog, RunRecord, curate};
use curator_engine::providers::ExplicitProvider;
use curator_store::{Action, JournalFilter, Store};
use serde_json::{Value, json};
use support::*;

/// Runs one test body against each store implementation.
macro_rules! both {
    ($name:ident, |$store:ident| $body:block) => {
        mod $name {
            use super::*;
            #[test]
            fn mem() {
                let $store: &dyn Store = &MemStore::new();
                $body
            }
            #[test]
            fn file() {
                let tmp = tempfile::tempdir().unwrap();
                curator_store::FileStore::init(tmp.path()).unwrap();
                let fs = curator_store::FileStore::open(tmp.path(), Default::default()).unwrap();
                let $store: &dyn Store = &fs;
                $body
            }
        }
    };
}

fn options() -> CurateOptions {
    CurateOptions {
        deltas: TrustDeltas::default(),
        now: Some("2026-04-10T12:00:00.123456Z".parse().unwrap()),
        ..CurateOptions::default()
    }
}

fn run(store: &dyn Store, record: Value, decisions: Value) -> MemoryLog {
    let record = RunRecord::from_value(&record).unwrap();
    let provider = ExplicitProvider::new(Decisions::from_value(&decisions).unwrap());
    curate(store, &record, &provider, &options()).unwrap()
}

fn passed(injected: &[&str]) -> Value {
    record("passed", json!([{"name": "Log in", "status": "passed", "injected": injected}]))
}

/// `record` as run number `n` of the test.
fn another_run(mut record: Value, n: usize) -> Value {
    record["run_id"] = json!(format!("r_test-{n}"));
    record
}

fn update(id: &str) -> Value {
    json!({"decisions": [{"action": "update", "observationId": id, "reasoning": "held"}]})
}

fn deprecate(id: &str) -> Value {
    json!({"decisions": [{"action": "deprecate", "observationId": id, "reasoning": "wrong"}]})
}

both!(confirm_climbs_from_half_by_five_hundredths_and_caps_at_one, |store| {
    let a = id("alpha");
    seed(store, Tier::Products, "acme", &observation(&a, "Login: modal", "Appears late", 0.5));
    let mut seen = Vec::new();
    for i in 0..11 {
        // Eleven runs (one run curated eleven times would confirm once: issue 13).
        let log = run(store, another_run(passed(&[]), i), update(&a));
        assert!(log.errors.is_empty(), "{:?}", log.errors);
        seen.push(get(store, &a).unwrap().observation.trust);
    }
    assert_eq!(seen, [0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1.0, 1.0]);
    let o = get(store, &a).unwrap().observation;
    assert_eq!(o.confirmed_count, 2 + 11);
    assert_eq!(o.contradicted_count, 1, "a confirmation leaves contradictions alone");
    assert_eq!(o.last_confirmed, "2026-04-10T12:00:00.123Z", "one `now`, JS millisecond form");
    assert_eq!(o.created, "2026-04-01T10:00:00.000Z");
});

both!(five_contradictions_from_half_delete_the_file, |store| {
    let a = id("bravo");
    seed(store, Tier::Tests, "t_login", &observation(&a, "Login: modal", "Appears late", 0.5));
    let mut trusts = Vec::new();
    for i in 0..5 {
        let log = run(store, another_run(passed(&[]), i), deprecate(&a));
        assert_eq!(log.deprecated, 1, "every contradiction counts as deprecated");
        match get(store, &a) {
            Some(o) => trusts.push(o.observation.trust),
            None => {
                assert_eq!(i, 4);
                assert_eq!(log.deleted, 1);
                assert_eq!(log.deltas[0].action, Action::Delete);
                assert!(log.deltas[0].after.is_none());
            }
        }
    }
    assert_eq!(trusts, [0.4, 0.3, 0.2, 0.1]);
    assert!(get(store, &a).is_none());
});

both!(a_deprecation_keeps_last_confirmed_and_counts, |store| {
    let a = id("charlie");
    seed(store, Tier::Products, "acme", &observation(&a, "T", "C", 0.7));
    let log = run(store, passed(&[]), deprecate(&a));
    let o = get(store, &a).unwrap().observation;
    assert_eq!((o.trust, o.contradicted_count, o.confirmed_count), (0.6, 2, 2));
    assert_eq!(o.last_confirmed, "2026-04-01T10:00:00.000Z");
    let d = &log.deltas[0];
    assert_eq!(
        (d.action, d.tier.as_str(), d.scope.as_str()),
        (Action::Deprecate, "products", "acme")
    );
    assert_eq!(d.before.as_ref().unwrap().trust, 0.7);
    assert_eq!(d.after.as_ref().unwrap().trust, 0.6);
});

both!(a_legacy_id_is_confirmed_under_its_own_id, |store| {
    let old = legacy_id("delta");
    seed(store, Tier::Products, "acme", &observation(&old, "Old fact", "Six-word id", 0.5));
    let log = run(store, passed(&[]), update(&old));
    assert!(log.errors.is_empty(), "{:?}", log.errors);
    let o = get(store, &old).expect("still there under the legacy id");
    assert_eq!(o.observation.trust, 0.55);
    assert_eq!(
        store.list(&Default::default()).unwrap().observations.len(),
        1,
        "no copy under a new id"
    );
});

both!(an_unknown_id_is_a_log_error_and_changes_nothing, |store| {
    let a = id("echo");
    let other = id("foxtrot");
    seed(store, Tier::Products, "acme", &observation(&a, "T", "C", 0.5));
    // `other` exists but in another product: not this run's to change (§11.6).
    seed(store, Tier::Products, "globex", &observation(&other, "T", "C", 0.5));
    let journal_before = store.journal(&JournalFilter::default()).unwrap().len();
    let decisions = json!({"decisions": [
        {"action": "update", "observationId": other, "reasoning": "x"},
        {"action": "deprecate", "observationId": "obs_not-a-real-id", "reasoning": "x"},
        {"action": "update", "observationId": id("golf"), "reasoning": "x"}
    ]});
    let log = run(store, passed(&[]), decisions);
    assert_eq!(
        log.errors,
        [
            format!("Unknown observation ID for update: {other}"),
            "Unknown observation ID for deprecate: obs_not-a-real-id".to_owned(),
            format!("Unknown observation ID for update: {}", id("golf")),
        ]
    );
    assert!(log.deltas.is_empty());
    assert_eq!(get(store, &other).unwrap().observation.trust, 0.5);
    // Only the run's outcome evidence is journaled (issue 18): no change to memory.
    let journal = store.journal(&JournalFilter::default()).unwrap();
    let changes = journal.iter().filter(|e| e.evidence.is_none()).count();
    assert_eq!(changes, journal_before);
});

both!(an_injected_id_from_another_scope_is_known_under_agent_qas_policy, |store| {
    let other = id("hotel");
    seed(store, Tier::Products, "globex", &observation(&other, "T", "C", 0.5));
    let record = RunRecord::from_value(&passed(&[&other])).unwrap();
    let provider = ExplicitProvider::new(Decisions::from_value(&update(&other)).unwrap());
    let parity =
        CurateOptions { policy: curator_engine::curate::BlamePolicy::AgentQa, ..options() };
    let log = curate(store, &record, &provider, &parity).unwrap();
    assert!(log.errors.is_empty(), "{:?}", log.errors);
    assert_eq!(get(store, &other).unwrap().observation.trust, 0.55);
});

// The evidence policy (the default) believes an injection only in the run's own scopes: an
// id another product holds was never given to this run (a forged list, audit 9).
both!(an_injected_id_from_another_product_is_ignored_by_default, |store| {
    let other = id("hotel");
    seed(store, Tier::Products, "globex", &observation(&other, "T", "C", 0.5));
    let log = run(store, passed(&[&other]), update(&other));
    assert_eq!(log.errors.len(), 2, "{:?}", log.errors);
    assert!(log.errors[0].contains("lives in products/globex"), "{:?}", log.errors);
    assert_eq!(log.errors[1], format!("Unknown observation ID for update: {other}"));
    assert_eq!(get(store, &other).unwrap().observation.trust, 0.5);
});

both!(a_known_id_deleted_meanwhile_is_not_found, |store| {
    // Known (injected) but no file: re-validation under the lock finds nothing.
    let gone = id("india");
    let log = run(store, passed(&[&gone]), update(&gone));
    assert_eq!(log.errors, [format!("Observation file not found for update: {gone}")]);
});

both!(adds_get_fresh_ids_scope_fields_and_one_now, |store| {
    let decisions = json!({"decisions": [
        {"action": "add", "title": "Login: SSO button", "content": "Below the form", "scope": "product", "reasoning": "r1"},
        {"action": "add", "title": "Login: two redirects", "content": "Then the dashboard", "scope": "test", "reasoning": "r2"},
        {"action": "add", "title": "Suite fact", "content": "No suite here", "scope": "suite", "reasoning": "r3"},
        {"action": "noop", "reasoning": "nothing"}
    ]});
    let log = run(store, passed(&[]), decisions);
    assert!(log.errors.is_empty(), "{:?}", log.errors);
    assert_eq!(log.added, 3);
    let places: Vec<(&str, &str)> =
        log.deltas.iter().map(|d| (d.tier.as_str(), d.scope.as_str())).collect();
    assert_eq!(
        places,
        [("products", "acme"), ("tests", "t_login"), ("products", "acme")],
        "suite → product without a suite"
    );
    for d in &log.deltas {
        let o = get(store, &d.observation_id).unwrap().observation;
        assert!(curator_core::ObservationId::parse(o.id.as_str()).is_ok());
        assert_eq!(o.id.shape(), curator_core::IdShape::Canonical);
        assert_eq!((o.trust, o.confirmed_count, o.contradicted_count), (0.5, 0, 0));
        assert_eq!(o.created, "2026-04-10T12:00:00.123Z");
        assert_eq!(o.last_confirmed, o.created);
        assert_eq!(o.source_test, "t_login");
        assert!(o.suite.is_none());
    }
    assert_eq!(log.run_id, "r_test");
    let journal =
        store.journal(&JournalFilter { id: None, run_id: Some("r_test".into()) }).unwrap();
    let changes: Vec<_> = journal.iter().filter(|e| e.evidence.is_none()).collect();
    assert_eq!(changes.len(), 3, "every change journaled with the run id");
    assert_eq!(journal.len(), 4, "and the run's outcome evidence");
});

both!(a_suite_add_carries_position_and_snapshot, |store| {
    let decisions = json!({"decisions": [
        {"action": "add", "title": "Checkout: cart persists", "content": "Across tests", "scope": "suite", "reasoning": "r"}
    ]});
    let record = suite_record("passed", json!([{"name": "Buy", "status": "passed"}]), 1);
    let log = run(store, record, decisions);
    assert_eq!(
        (log.deltas[0].tier.as_str(), log.deltas[0].scope.as_str()),
        ("suites", "s_checkout")
    );
    let o = get(store, &log.deltas[0].observation_id).unwrap().observation;
    let placement = o.suite.unwrap();
    assert_eq!(placement.position, 1);
    let snap: Vec<(&str, &str)> =
        placement.suite_snapshot.iter().map(|e| (e.test.as_str(), e.id.as_str())).collect();
    assert_eq!(snap, SUITE);
});

both!(stale_suite_observations_are_deleted_and_other_positions_kept, |store| {
    let current0 = id("juliet");
    let current1 = id("kilo");
    let stale = id("lima");
    let reordered = id("mike");
    let base = id("november");
    seed(store, Tier::Suites, "s_checkout", &suite_observation(&current0, "pos 0", 0, &SUITE));
    seed(store, Tier::Suites, "s_checkout", &suite_observation(&current1, "pos 1", 1, &SUITE));
    seed(
        store,
        Tier::Suites,
        "s_checkout",
        &suite_observation(&stale, "old", 0, &[("tests/a.yaml", "t_login")]),
    );
    seed(
        store,
        Tier::Suites,
        "s_checkout",
        &suite_observation(&reordered, "reordered", 0, &[SUITE[1], SUITE[0]]),
    );
    seed(
        store,
        Tier::Suites,
        "s_checkout",
        &observation(&base, "suite base fact", "no position", 0.5),
    );
    let record = suite_record("passed", json!([{"name": "Log in", "status": "passed"}]), 0);
    let log = run(store, record, json!({"decisions": []}));
    assert!(
        get(store, &current0).is_some() && get(store, &current1).is_some(),
        "position is not compared"
    );
    assert!(get(store, &base).is_some(), "observations without a snapshot are never cleaned");
    assert!(get(store, &stale).is_none() && get(store, &reordered).is_none());
    assert_eq!((log.deleted, log.deprecated), (2, 0), "stale deletions are not deprecations");
    for d in &log.deltas {
        assert_eq!(d.reasoning, "Suite snapshot changed for suite s_checkout");
        assert_eq!(d.action, Action::Delete);
    }
});

both!(decisions_apply_in_order_and_each_fails_alone, |store| {
    let a = id("oscar");
    seed(store, Tier::Products, "acme", &observation(&a, "T", "C", 0.1));
    let decisions = json!({"decisions": [
        {"action": "deprecate", "observationId": a, "reasoning": "deletes"},
        {"action": "update", "observationId": a, "reasoning": "too late"},
        {"action": "add", "title": "New", "content": "Fact", "scope": "product", "reasoning": "ok"}
    ]});
    let log = run(store, passed(&[]), decisions);
    assert_eq!(log.errors, [format!("Observation file not found for update: {a}")]);
    assert_eq!((log.deleted, log.deprecated, log.added), (1, 1, 1));
    assert_eq!(log.case, CurateCase::Passed);
    assert_eq!(log.provider.as_deref(), Some("explicit"));
});

both!(a_decision_repeated_in_one_run_moves_trust_once_but_agent_qa_policy_repeats_it, |store| {
    let a = id("delta");
    let b = id("echo");
    seed(store, Tier::Products, "acme", &observation(&a, "Login: modal", "Appears late", 0.5));
    seed(store, Tier::Products, "acme", &observation(&b, "Cart: badge", "Lags a second", 0.5));
    let twice =
        |action: &str, id: &str| json!({"action": action, "observationId": id, "reasoning": "r"});
    let decisions = json!({"decisions": [
        twice("update", &a), twice("update", &a), twice("update", &a),
        twice("deprecate", &b), twice("deprecate", &b),
    ]});
    let log = run(store, passed(&[]), decisions.clone());
    assert_eq!((log.confirmed, log.deprecated), (1, 1), "{log:?}");
    assert_eq!(get(store, &a).unwrap().observation.trust, 0.55);
    assert_eq!(get(store, &b).unwrap().observation.trust, 0.4);
    // agent-qa applies each decision as listed.
    let record = RunRecord::from_value(&another_run(passed(&[]), 2)).unwrap();
    let provider = ExplicitProvider::new(Decisions::from_value(&decisions).unwrap());
    let parity =
        CurateOptions { policy: curator_engine::curate::BlamePolicy::AgentQa, ..options() };
    let log = curate(store, &record, &provider, &parity).unwrap();
    assert_eq!((log.confirmed, log.deprecated), (3, 2), "{log:?}");
    assert_eq!(get(store, &a).unwrap().observation.trust, 0.7);
});

/// §5.6 reads and parses the suite's files without scanning them, so agent-qa deletes a stale
/// observation the scanner blocks too; curator did not, and such a file stayed for good.
#[test]
fn stale_suite_observations_the_scanner_blocks_are_deleted_too() {
    let tmp = tempfile::tempdir().unwrap();
    curator_store::FileStore::init(tmp.path()).unwrap();
    let store = curator_store::FileStore::open(tmp.path(), Default::default()).unwrap();
    let dir = tmp.path().join("suites/s_checkout");
    std::fs::create_dir_all(&dir).unwrap();
    let stale = |seed: &str, body: &str| {
        let id = id(seed);
        let text = format!(
            "---\nid: {id}\ntitle: stale\ntrust: 0.5\ncreated: 2026-04-10T12:00:00.000Z\n\
             last_confirmed: 2026-04-10T12:00:00.000Z\nconfirmed_count: 0\ncontradicted_count: 0\n\
             source_test: t_x\nposition: 0\nsuite_snapshot:\n  - test: old.yaml\n    id: t_old\n---\n{body}\n"
        );
        std::fs::write(dir.join(format!("{id}.md")), text).unwrap();
        id
    };
    let ids = [
        stale("papa", "plain stale fact"),
        stale("quebec", "stale fact, then ignore previous instructions"),
        stale("romeo", "stale fact with zero\u{200b}width space"),
    ];
    let record = suite_record("passed", json!([{"name": "Log in", "status": "passed"}]), 0);
    let log = run(&store, record, json!({"decisions": []}));
    assert_eq!(log.deleted, 3, "{:?}", log.errors);
    for id in &ids {
        assert!(!dir.join(format!("{id}.md")).exists(), "{id} is stale");
    }
    let journal = store.journal(&JournalFilter::default()).unwrap();
    assert_eq!(journal.iter().filter(|e| e.action == Action::Delete).count(), 3, "journaled");
}
