//! Exactly-once curation and repeatable undo (issue 13 item 2), on the in-memory store and the
//! file store: a run is applied once, a record without a run id is named by its content, undo
//! then curate applies the run again as its next generation, and a second undo reverts that.

mod support;

use std::sync::Barrier;

use curator_core::Tier;
use curator_engine::curate::{CurateOptions, Decisions, MemoryLog, RunRecord, curate};
use curator_engine::providers::ExplicitProvider;
use curator_engine::undo::undo;
use curator_store::evidence::EvidenceQuery;
use curator_store::{JournalFilter, Store};
use serde_json::{Value, json};
use support::*;

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

fn run(store: &dyn Store, record: &Value, decisions: &Value) -> MemoryLog {
    let record = RunRecord::from_value(record).unwrap();
    let provider = ExplicitProvider::new(Decisions::from_value(decisions).unwrap());
    curate(store, &record, &provider, &CurateOptions::default()).unwrap()
}

fn confirm(id: &str) -> Value {
    json!({"decisions": [{"action": "update", "observationId": id, "reasoning": "held"}]})
}

fn trust(store: &dyn Store, id: &str) -> f64 {
    get(store, id).unwrap().observation.trust
}

fn seeded(store: &dyn Store) -> String {
    let a = id("alpha");
    seed(store, Tier::Products, "acme", &observation(&a, "Login: modal", "Appears late", 0.5));
    a
}

fn passed() -> Value {
    record("passed", json!([{"name": "Log in", "status": "passed", "injected": []}]))
}

both!(a_run_curated_twice_is_applied_once, |store| {
    let a = seeded(store);
    let first = run(store, &passed(), &confirm(&a));
    assert_eq!((first.confirmed, first.already_applied, first.generation), (1, false, Some(1)));
    let journal = store.journal(&JournalFilter::default()).unwrap();
    let second = run(store, &passed(), &confirm(&a));
    assert_eq!((second.confirmed, second.already_applied, second.generation), (0, true, Some(1)));
    assert!(second.deltas.is_empty() && second.errors.is_empty());
    assert!(second.summary().contains("already applied"), "{}", second.summary());
    assert_eq!(trust(store, &a), 0.55);
    assert_eq!(store.journal(&JournalFilter::default()).unwrap(), journal, "nothing journaled");
});

both!(a_record_without_run_id_is_named_by_its_content, |store| {
    let a = seeded(store);
    let mut anonymous = passed();
    anonymous.as_object_mut().unwrap().remove("run_id");
    let first = run(store, &anonymous, &confirm(&a));
    let expected = RunRecord::from_value(&anonymous).unwrap().content_run_id();
    assert_eq!(first.run_id, expected);
    let again = run(store, &anonymous, &confirm(&a));
    assert!(again.already_applied);
    assert_eq!(again.run_id, expected);
    assert_eq!(trust(store, &a), 0.55);
    // Another record (another step) is another run.
    anonymous["steps"][0]["name"] = json!("Log in again");
    assert!(!run(store, &anonymous, &confirm(&a)).already_applied);
    assert_eq!(trust(store, &a), 0.6);
});

both!(undo_then_curate_then_undo_acts_on_each_generation, |store| {
    let a = seeded(store);
    let text = |s: &dyn Store| get(s, &a).map(|o| o.observation);
    let original = text(store);
    run(store, &passed(), &confirm(&a));
    let applied = text(store);
    let u1 = undo(store, "r_test").unwrap();
    assert_eq!((u1.generation, u1.reverted.len()), (1, 1));
    assert_eq!(text(store), original);
    let again = run(store, &passed(), &confirm(&a));
    assert_eq!((again.already_applied, again.generation, again.confirmed), (false, Some(2), 1));
    assert_eq!(text(store).map(|o| o.trust), applied.as_ref().map(|o| o.trust));
    let u2 = undo(store, "r_test").unwrap();
    assert_eq!(u2.generation, 2);
    assert_eq!(text(store), original);
    let retried = undo(store, "r_test").unwrap();
    assert!(retried.already_applied && retried.reverted.is_empty(), "{retried:?}");
    assert_eq!((retried.generation, text(store)), (2, original.clone()), "a retry changes nothing");
    // Undoing the last undo brings generation 2 back; the run then counts as applied.
    let redo = undo(store, "undo-r_test").unwrap();
    assert_eq!(redo.reverted.len(), 1);
    assert_eq!(trust(store, &a), 0.55);
    assert!(run(store, &passed(), &confirm(&a)).already_applied);
    assert_eq!(trust(store, &a), 0.55);
    assert_eq!(undo(store, "r_test").unwrap().generation, 2);
    assert_eq!(text(store), original);
});

both!(a_run_that_changed_no_memory_is_one_application_of_its_evidence, |store| {
    // Nothing injected into the failed step: no observation changes, but the run's outcome
    // evidence (the test's baseline) is recorded, once per application (issue 18).
    let failed_nothing_injected =
        record("failed", json!([{"name": "Log in", "status": "failed", "injected": []}]));
    let baseline = |store: &dyn Store| {
        let query = EvidenceQuery { ids: vec![], tests: vec!["t_login".into()] };
        store.evidence(&query).unwrap().baseline("t_login").runs_failed
    };
    let log = run(store, &failed_nothing_injected, &json!({"decisions": []}));
    assert_eq!((log.already_applied, log.generation, log.is_empty()), (false, Some(1), true));
    assert_eq!(baseline(store), 1);
    let retry = run(store, &failed_nothing_injected, &json!({"decisions": []}));
    assert!(retry.already_applied, "a retried run is counted once");
    assert_eq!(baseline(store), 1);
    let undone = undo(store, "r_test").unwrap();
    assert_eq!(
        (undone.reverted.len(), undone.evidence.as_slice()),
        (0, ["r_test".to_owned()].as_slice())
    );
    assert_eq!(baseline(store), 0, "undo retracts the run's evidence");
    let again = run(store, &failed_nothing_injected, &json!({"decisions": []}));
    assert_eq!((again.already_applied, again.generation), (false, Some(2)));
    assert_eq!(baseline(store), 1);
    undo(store, "r_test").unwrap();
    assert_eq!(baseline(store), 0);
    // Undoing that undo brings generation 2, and its evidence, back.
    assert_eq!(undo(store, "undo-r_test").unwrap().evidence, ["r_test"]);
    assert_eq!(baseline(store), 1);
    assert!(run(store, &failed_nothing_injected, &json!({"decisions": []})).already_applied);
    assert_eq!(baseline(store), 1);
});

#[test]
fn threads_submitting_one_run_at_once_apply_it_once() {
    let tmp = tempfile::tempdir().unwrap();
    curator_store::FileStore::init(tmp.path()).unwrap();
    let store = curator_store::FileStore::open(tmp.path(), Default::default()).unwrap();
    let a = seeded(&store);
    let barrier = Barrier::new(8);
    let logs: Vec<MemoryLog> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|_| {
                s.spawn(|| {
                    barrier.wait();
                    run(&store, &passed(), &confirm(&a))
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(logs.iter().filter(|l| !l.already_applied).count(), 1, "{logs:?}");
    assert_eq!(trust(&store, &a), 0.55);
    assert_eq!(get(&store, &a).unwrap().observation.confirmed_count, 3);
}

/// A long history, summarized by the file store's journal checkpoint: retries, undo and the
/// outcome evidence answer exactly as they do from the whole journal.
#[test]
fn a_long_history_read_through_the_journal_checkpoint_answers_as_the_whole_journal() {
    let tmp = tempfile::tempdir().unwrap();
    curator_store::FileStore::init(tmp.path()).unwrap();
    let open = || curator_store::FileStore::open(tmp.path(), Default::default()).unwrap();
    let store = open();
    // A large body makes every confirm journal a large text, so a few runs pass the size at
    // which the checkpoint is written.
    let a = id("alpha");
    let body = "Appears late. ".repeat(20_000);
    seed(&store, Tier::Products, "acme", &observation(&a, "Login: modal", &body, 0.1));
    let checkpoint = tmp.path().join(".curator/journal.checkpoint.json");
    let mut n = 0;
    while !checkpoint.exists() || n < 8 {
        n += 1;
        let mut r =
            record("passed", json!([{"name": "Log in", "status": "passed", "injected": [a]}]));
        r["run_id"] = json!(format!("r_{n}"));
        assert_eq!(run(&store, &r, &confirm(&a)).confirmed, 1);
        assert!(n < 40, "no checkpoint after {n} runs");
    }
    let answers = |store: &dyn Store| {
        let mut out = Vec::new();
        for k in 1..=n {
            let mut r =
                record("passed", json!([{"name": "Log in", "status": "passed", "injected": [a]}]));
            r["run_id"] = json!(format!("r_{k}"));
            let filter = JournalFilter { id: None, run_id: Some(format!("r_{k}")) };
            out.push(format!("{k}: {}", store.journal(&filter).unwrap().len()));
        }
        let query = EvidenceQuery { ids: vec![a.clone()], tests: vec!["t_login".into()] };
        out.push(format!("{:?}", store.evidence(&query).unwrap()));
        out
    };
    let through_checkpoint = answers(&store);
    // A retry of an early run (before the checkpoint's end) is answered as applied.
    let mut first =
        record("passed", json!([{"name": "Log in", "status": "passed", "injected": [a]}]));
    first["run_id"] = json!("r_1");
    let before = trust(&store, &a);
    assert!(run(&store, &first, &confirm(&a)).already_applied);
    // Undo of an early run finds its entries through the checkpoint and reverts them.
    undo(&store, &format!("r_{n}")).unwrap();
    assert!(trust(&store, &a) < before);
    let after_undo = answers(&store);
    std::fs::remove_file(&checkpoint).unwrap();
    assert_eq!(answers(&open()), after_undo, "the whole journal says the same");
    assert_ne!(through_checkpoint, after_undo, "the undo retracted run {n}'s evidence");
}
