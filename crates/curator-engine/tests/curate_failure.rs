//! §5.5 failed runs and §8 ablation as ARCHITECTURE.md decides: which observations a failed run
//! contradicts, and that no provider is consulted. Selective blame by evidence (issue 18) has
//! its own tests in `curate_blame.rs`; here a failure's suspects have no record yet.

mod support;

use curator_core::Tier;
use curator_engine::curate::{
    BlamePolicy, CurateCase, CurateOptions, MemoryLog, RunRecord, curate,
};
use curator_engine::providers::{CuratorInput, DecisionProvider, ProviderAnswer, ProviderError};
use curator_store::{Action, JournalFilter, Store};
use serde_json::{Value, json};
use support::*;

/// A provider that fails the test if it is asked: failed runs never consult one.
#[derive(Debug)]
struct MustNotBeAsked;

impl DecisionProvider for MustNotBeAsked {
    fn name(&self) -> &'static str {
        "must-not-be-asked"
    }
    fn decide(&self, _: &CuratorInput<'_>) -> Result<ProviderAnswer, ProviderError> {
        panic!("a failed run asked the decision provider");
    }
}

fn run(store: &dyn Store, record: Value) -> MemoryLog {
    let record = RunRecord::from_value(&record).unwrap();
    curate(store, &record, &MustNotBeAsked, &CurateOptions::default()).unwrap()
}

struct Ids {
    early: String,
    failed: String,
    both: String,
    later: String,
}

/// Four observations at trust 0.5: `early` injected into passed step 1, `failed` into the first
/// failed step 2, `both` into steps 1 and 2 (twice into 2), `later` into failed step 3.
fn seeded(store: &dyn Store) -> Ids {
    let ids =
        Ids { early: id("papa"), failed: id("quebec"), both: id("romeo"), later: id("sierra") };
    for i in [&ids.early, &ids.failed, &ids.both, &ids.later] {
        seed(store, Tier::Products, "acme", &observation(i, "Fact", "Body", 0.5));
    }
    ids
}

fn steps(ids: &Ids) -> Value {
    json!([
        {"name": "one", "status": "passed", "injected": [ids.early, ids.both]},
        {"name": "two", "status": "failed", "injected": [ids.failed, ids.both, ids.both]},
        {"name": "three", "status": "failed", "injected": [ids.later]}
    ])
}

fn trust(store: &dyn Store, id: &str) -> f64 {
    get(store, id).unwrap().observation.trust
}

#[test]
fn a_failed_run_contradicts_only_the_first_failed_steps_injections_as_listed() {
    let store = MemStore::new();
    let ids = seeded(&store);
    let log = run(&store, record("failed", steps(&ids)));
    assert_eq!(log.case, CurateCase::Failed);
    assert!(log.errors.is_empty(), "{:?}", log.errors);
    // `both`, listed twice in the failed step, is contradicted once: one failure is one piece
    // of evidence (agent-qa's policy contradicts it twice, see below).
    assert_eq!((trust(&store, &ids.failed), trust(&store, &ids.both)), (0.4, 0.4));
    assert_eq!((trust(&store, &ids.early), trust(&store, &ids.later)), (0.5, 0.5));
    assert_eq!((log.deprecated, log.added, log.confirmed), (2, 0, 0));
    assert_eq!(
        log.deltas[0].reasoning,
        format!("Failure contradicted injected observation {}", ids.failed)
    );
    assert_eq!(get(&store, &ids.failed).unwrap().observation.contradicted_count, 2);
}

#[test]
fn a_cancelled_run_takes_the_same_path() {
    let store = MemStore::new();
    let ids = seeded(&store);
    let log = run(&store, record("cancelled", steps(&ids)));
    assert_eq!(log.case, CurateCase::Failed);
    assert_eq!(trust(&store, &ids.failed), 0.4);
}

#[test]
fn no_failed_step_or_no_injection_changes_nothing() {
    let store = MemStore::new();
    let ids = seeded(&store);
    let journal = store.journal(&JournalFilter::default()).unwrap().len();
    let log = run(
        &store,
        record("failed", json!([{"name": "one", "status": "passed", "injected": [ids.early]}])),
    );
    assert!(log.is_empty() && log.errors.is_empty());
    let mut second = record("failed", json!([{"name": "one", "status": "failed", "injected": []}]));
    second["run_id"] = json!("r_test2");
    let log = run(&store, second);
    assert!(log.is_empty() && !log.already_applied);
    // Each run's outcome evidence is journaled (issue 18); nothing else is.
    let after = store.journal(&JournalFilter::default()).unwrap();
    assert_eq!(after.iter().filter(|e| e.evidence.is_none()).count(), journal);
    assert_eq!(after.iter().filter(|e| e.action == Action::Evidence).count(), 2);
}

#[test]
fn a_missing_file_is_a_log_error_and_a_contradiction_at_the_floor_deletes() {
    let store = MemStore::new();
    let low = id("tango");
    seed(&store, Tier::Tests, "t_login", &observation(&low, "Fact", "Body", 0.1));
    let gone = id("uniform");
    let log = run(
        &store,
        record("failed", json!([{"name": "one", "status": "failed", "injected": [gone, low]}])),
    );
    assert_eq!(log.errors, [format!("Observation file not found for deprecation: {gone}")]);
    assert!(get(&store, &low).is_none());
    assert_eq!((log.deprecated, log.deleted), (1, 1));
}

#[test]
fn ablation_passed_blames_every_unknown_suspect_at_or_before_the_failure_once() {
    let store = MemStore::new();
    let ids = seeded(&store);
    let mut r = record("failed", steps(&ids));
    r["ablation"] = json!({"status": "passed"});
    let log = run(&store, r);
    assert_eq!(log.case, CurateCase::AblationPassed);
    for i in [&ids.early, &ids.failed, &ids.both] {
        assert_eq!(trust(&store, i), 0.4, "{i}");
    }
    assert_eq!(trust(&store, &ids.later), 0.5, "injected after the failure: not a suspect");
    assert_eq!(log.deprecated, 3);
    assert!(log.summary().starts_with(
        "  Memory: ablation confirmed memory caused failure -- penalizing observations\n"
    ));
    assert!(
        log.deltas.iter().all(|d| d.reasoning.contains("Ablation rerun without memory passed")
            && d.reasoning.contains("no record before this run"))
    );
    // Steps are named by their 0-based index, as everywhere.
    let reason =
        |id: &str| log.deltas.iter().find(|d| d.observation_id == id).unwrap().reasoning.clone();
    assert!(reason(&ids.early).contains("injected at step 0,"), "{}", reason(&ids.early));
    assert!(reason(&ids.failed).contains("injected at step 1,"), "{}", reason(&ids.failed));
}

#[test]
fn agent_qa_policy_applies_the_first_failed_step_rule_whatever_the_rerun_showed() {
    for ablation in ["passed", "failed"] {
        let store = MemStore::new();
        let ids = seeded(&store);
        let mut r = record("failed", steps(&ids));
        r["ablation"] = json!({"status": ablation});
        let record = RunRecord::from_value(&r).unwrap();
        let options = CurateOptions { policy: BlamePolicy::AgentQa, ..CurateOptions::default() };
        let log = curate(&store, &record, &MustNotBeAsked, &options).unwrap();
        assert_eq!(
            (trust(&store, &ids.failed), trust(&store, &ids.both)),
            (0.4, 0.3),
            "{ablation}: `both` is listed twice"
        );
        assert_eq!(
            (trust(&store, &ids.early), trust(&store, &ids.later)),
            (0.5, 0.5),
            "{ablation}"
        );
        assert!(log.deltas.iter().all(|d| d.reasoning.starts_with("Failure contradicted")));
    }
}

#[test]
fn ablation_failed_exonerates_memory_and_journals_why() {
    let store = MemStore::new();
    let ids = seeded(&store);
    let mut r = record("failed", steps(&ids));
    r["ablation"] = json!({"status": "failed"});
    let log = run(&store, r);
    assert_eq!(log.case, CurateCase::AblationFailed);
    assert!(log.deltas.is_empty() && log.errors.is_empty());
    for i in [&ids.early, &ids.failed, &ids.both, &ids.later] {
        assert_eq!(trust(&store, i), 0.5);
    }
    let mut notes =
        store.journal(&JournalFilter { id: None, run_id: Some("r_test".into()) }).unwrap();
    assert_eq!(notes.remove(0).action, Action::Evidence, "the run's evidence comes first");
    assert_eq!(notes.len(), 4);
    assert!(notes.iter().all(|e| e.action == Action::Exonerate
        && e.before == e.after
        && e.reasoning.contains("not the cause")));
    assert!(
        log.summary().starts_with("  Memory: ablation retry also failed -- memory not the cause\n")
    );
}

#[test]
fn ablation_disabled_in_config_falls_back_to_the_failed_run_path() {
    let store = MemStore::new();
    let ids = seeded(&store);
    let mut r = record("failed", steps(&ids));
    r["ablation"] = json!({"status": "passed"});
    let record = RunRecord::from_value(&r).unwrap();
    let options = CurateOptions { ablation_enabled: false, ..CurateOptions::default() };
    let log = curate(&store, &record, &MustNotBeAsked, &options).unwrap();
    assert_eq!(log.case, CurateCase::Failed);
    assert_eq!((trust(&store, &ids.failed), trust(&store, &ids.early)), (0.4, 0.5));
}
