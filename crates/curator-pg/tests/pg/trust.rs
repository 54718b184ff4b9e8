//! Issue 18 on PostgreSQL: the review queue, outcome evidence and probation give the same
//! results as on the file store (the same engine calls on both), evidence is counted once per
//! run id even when two writers record at once, and the queue is a table nothing that serves
//! memory reads.

use curator_core::config::ReviewMode;
use curator_core::{ObservationId, Tier};
use curator_engine::curate::{CurateOptions, Decisions, RunRecord, curate};
use curator_engine::probation::ProbationOptions;
use curator_engine::providers::{ExplicitProvider, RulesProvider};
use curator_engine::session::{fill_from_session, load_session_in};
use curator_engine::{QueryOptions, RunStep, query_in, review, undo};
use curator_store::evidence::{EvidenceQuery, RunEvidence, StepEvidence};
use curator_store::{ListFilter, Store};
use serde_json::{Value, json};

use crate::util::{file_store, observation, pg_store, scope};

fn record(run_id: &str, status: &str, steps: Value) -> Value {
    json!({"run_id": run_id, "product": "acme", "test": {"id": "t_x", "name": "X"},
           "status": status, "steps": steps})
}

fn curate_run(store: &dyn Store, value: Value) -> curator_engine::curate::MemoryLog {
    let mut r = RunRecord::from_value(&value).unwrap();
    fill_from_session(store, &mut r).unwrap();
    curate(store, &r, &RulesProvider::default(), &CurateOptions::default()).unwrap()
}

fn queued(store: &dyn Store) -> Vec<String> {
    let listing = store.list_pending(&ListFilter::default()).unwrap();
    // Listed by id, and ids are random: sorted by title so both stores compare alike.
    let mut v: Vec<String> =
        listing.observations.iter().map(|o| o.observation.title.clone()).collect();
    v.sort();
    v
}

fn served(store: &dyn Store) -> Vec<String> {
    let listing = store.list(&ListFilter::default()).unwrap();
    let mut v: Vec<String> = listing
        .observations
        .iter()
        .map(|o| format!("{} {}", o.observation.title, o.observation.trust))
        .collect();
    v.sort();
    v
}

/// One scenario, as lines to compare between stores (ids are random, so titles stand in).
fn scenario(store: &dyn Store) -> Vec<String> {
    let mut out = Vec::new();
    let memo = |run: &str, fact: &str| {
        record(
            run,
            "passed",
            json!([{"name": "look", "status": "passed",
                                      "observation": format!("MEMO: {fact}")}]),
        )
    };
    let log = curate_run(store, memo("r_memo1", "The zorvex panel opens to the left"));
    out.push(format!(
        "memo1: proposed {} added {} evidence {:?}",
        log.proposed, log.added, log.evidence
    ));
    let keep = log.deltas[0].observation_id.clone();
    let log = curate_run(store, memo("r_memo2", "The quibbit panel needs two clicks"));
    let drop = log.deltas[0].observation_id.clone();
    out.push(format!("queued {:?} served {:?}", queued(store), served(store)));
    let approve = review::approve(store, &ObservationId::parse(&keep).unwrap(), "ok").unwrap();
    out.push(format!("approved: queued {:?} served {:?}", queued(store), served(store)));
    undo::undo(store, &approve.run_id).unwrap();
    out.push(format!("undone: queued {:?} served {:?}", queued(store), served(store)));
    // Auto review: three passed probation injections approve `keep`; a blamed one rejects `drop`.
    let always =
        ProbationOptions { below_min_trust: true, pending: true, rate: 1.0, newcomers: false };
    for i in 0..3 {
        let run = format!("r_probe{i}");
        let mut q = QueryOptions::new("acme", "t_x", "Use zorvex").unwrap();
        (q.run, q.probation) = (Some(RunStep { run_id: run.clone(), step: 0 }), Some(always));
        let hit = query_in(store, &q).unwrap();
        out.push(format!(
            "probe {i}: {:?}",
            hit.observations.iter().map(|o| (o.probation, o.pending)).collect::<Vec<_>>()
        ));
        let session = load_session_in(store, &run).unwrap().unwrap();
        out.push(format!("probation recorded: {}", session.probation_at(0) == Some(keep.as_str())));
        let log = curate_run(
            store,
            record(&run, "passed", json!([{"name": "Use zorvex", "status": "passed"}])),
        );
        out.push(format!("run {i}: approved {} evidence {:?}", log.approved, log.evidence));
    }
    let mut q = QueryOptions::new("acme", "t_x", "Use quibbit").unwrap();
    (q.run, q.probation) = (Some(RunStep { run_id: "r_bad".into(), step: 0 }), Some(always));
    query_in(store, &q).unwrap();
    let mut failed =
        record("r_bad", "failed", json!([{"name": "Use quibbit", "status": "failed"}]));
    failed["ablation"] = json!({"status": "passed"});
    let log = curate_run(store, failed.clone());
    out.push(format!("failed: rejected {}", log.rejected));
    let again = curate_run(store, failed.clone());
    out.push(format!("retried: applied {} evidence {:?}", again.already_applied, again.evidence));
    // Undo reverts the run's evidence with its rejection; curating it again counts it once more.
    let undone = undo::undo(store, "r_bad").unwrap();
    let query = EvidenceQuery { ids: vec![drop.clone()], tests: vec!["t_x".into()] };
    let view = store.evidence(&query).unwrap();
    out.push(format!(
        "undo r_bad: evidence {:?} failed {} runs {} queued {:?}",
        undone.evidence,
        view.of(&drop).failed,
        view.baseline("t_x").runs,
        queued(store)
    ));
    let log = curate_run(store, failed);
    out.push(format!("again: generation {:?} rejected {}", log.generation, log.rejected));
    out.push(format!("end: queued {:?} served {:?}", queued(store), served(store)));
    let ids = vec![keep, drop];
    let view =
        store.evidence(&EvidenceQuery { ids: ids.clone(), tests: vec!["t_x".into()] }).unwrap();
    for id in &ids {
        out.push(format!("evidence {:?}", view.of(id)));
    }
    out.push(format!("baseline {:?}", view.baseline("t_x")));
    // A proposal that says what a waiting one says is answered with it, not queued twice.
    let propose = |title: &str| {
        let o = observation("pending", title, "Seen by the agent twice.");
        review::propose(store, Tier::Products, &scope("acme"), o, "api", ReviewMode::Auto, None)
            .unwrap()
    };
    // The same add twice in one agent's list: the second finds the first in the transaction.
    let add = json!({"action": "add", "title": "Grolsh menu sticks", "content": "It sticks.",
                     "scope": "product", "reasoning": "seen"});
    let decisions = Decisions::from_value(&json!({"decisions": [add, add]})).unwrap();
    let twice = record("r_twice", "passed", json!([{"name": "a", "status": "passed"}]));
    let mut r = RunRecord::from_value(&twice).unwrap();
    fill_from_session(store, &mut r).unwrap();
    let provider = ExplicitProvider::proposal(decisions);
    let log = curate(store, &r, &provider, &CurateOptions::default()).unwrap();
    out.push(format!("same add twice: proposed {} queued {:?}", log.proposed, queued(store)));
    let first = propose("The wibble tab hides its badge");
    let again = propose("the WIBBLE tab hides its badge");
    out.push(format!(
        "proposed twice: same {} already {} {} queued {:?}",
        again.id == first.id && again.run_id == first.run_id,
        first.already_applied,
        again.already_applied,
        queued(store)
    ));
    out
}

#[test]
fn review_evidence_and_probation_match_the_file_store() {
    let (_dir, files) = file_store();
    let (_db, pg) = pg_store();
    let on_files = scenario(&files);
    let on_pg = scenario(&pg);
    assert_eq!(on_pg, on_files);
    assert!(
        on_files.iter().any(|l| l == "run 2: approved 1 evidence Some(Recorded)"),
        "{on_files:#?}"
    );
    assert!(on_files.iter().any(|l| l == "failed: rejected 1"), "{on_files:#?}");
    assert!(on_files.iter().any(|l| l == "retried: applied true evidence None"), "{on_files:#?}");
    assert!(on_files.iter().any(|l| l.starts_with("same add twice: proposed 1 ")), "{on_files:#?}");
    assert!(
        on_files.iter().any(|l| l.starts_with("proposed twice: same true already false true")),
        "{on_files:#?}"
    );
}

/// The evidence policy's trial slot: newcomers one per run, probation sharing the slot, a
/// passing record proving memory at the starting trust. Lines to compare between stores.
fn trial_scenario(store: &dyn Store) -> Vec<String> {
    use curator_core::Tier;
    use curator_store::Action;
    let newcomers =
        [("zorvex", "Zorvex panel opens left"), ("quibbit", "Quibbit panel needs two clicks")];
    store
        .transact(None, &mut |tx| {
            for (word, title) in newcomers {
                tx.put(
                    Tier::Products,
                    &scope("acme"),
                    &observation(word, title, "Seen."),
                    Action::Add,
                    "seed",
                )?;
            }
            Ok(())
        })
        .unwrap();
    let trial =
        ProbationOptions { below_min_trust: true, pending: true, rate: 0.0, newcomers: true };
    let mut out = Vec::new();
    let step = |run: &str, step: u64, text: &str| {
        let mut q = QueryOptions::new("acme", "t_x", text).unwrap();
        (q.run, q.probation) = (Some(RunStep { run_id: run.into(), step }), Some(trial));
        let got = query_in(store, &q).unwrap();
        got.observations.iter().map(|o| o.title.clone()).collect::<Vec<_>>()
    };
    out.push(format!("r1 step 0: {:?}", step("r_t1", 0, "Use the zorvex and quibbit panels")));
    out.push(format!("r1 step 1: {:?}", step("r_t1", 1, "Use the quibbit panel")));
    out.push(format!("r2 step 0: {:?}", step("r_t2", 0, "Use the quibbit panel")));
    curate_run(store, record("r_t2", "passed", json!([{"name": "quibbit", "status": "passed"}])));
    out.push(format!("r3 step 0: {:?}", step("r_t3", 0, "Use the zorvex and quibbit panels")));
    out.push(format!("served {:?}", served(store)));
    out
}

#[test]
fn one_trial_per_run_matches_the_file_store() {
    let (_dir, files) = file_store();
    let (_db, pg) = pg_store();
    let on_files = trial_scenario(&files);
    assert_eq!(trial_scenario(&pg), on_files);
    // One of the two newcomers in the first run, none in its next step, the other one in the
    // next run; once confirmed, it no longer takes the slot and both are injected.
    assert_eq!(on_files[0].matches("panel").count(), 1, "{on_files:#?}");
    assert_eq!(on_files[1], "r1 step 1: []", "{on_files:#?}");
    assert_eq!(on_files[2], "r2 step 0: [\"Quibbit panel needs two clicks\"]", "{on_files:#?}");
    assert_eq!(on_files[3].matches("panel").count(), 2, "{on_files:#?}");
}

#[test]
fn two_writers_recording_evidence_at_once_count_every_run_once() {
    let (_db, pg) = pg_store();
    let run = |id: &str| RunEvidence {
        run_id: id.into(),
        time: "2026-04-10T12:00:00.000Z".into(),
        test: "t_x".into(),
        status: "passed".into(),
        ablation: None,
        steps: vec![StepEvidence {
            status: "passed".into(),
            injected: vec!["obs_shared".into()],
            probation: None,
        }],
    };
    std::thread::scope(|scope| {
        for w in 0..4 {
            let pg = &pg;
            let run = &run;
            scope.spawn(move || {
                for i in 0..10 {
                    // Every writer records its own runs and one run every writer shares.
                    for id in [format!("r_w{w}_{i}"), format!("r_shared_{i}")] {
                        pg.transact(Some(&id), &mut |tx| tx.record_evidence(&run(&id)).map(drop))
                            .unwrap();
                    }
                }
            });
        }
    });
    let view = pg
        .evidence(&EvidenceQuery { ids: vec!["obs_shared".into()], tests: vec!["t_x".into()] })
        .unwrap();
    assert_eq!(view.of("obs_shared").passed, 4 * 10 + 10);
    assert_eq!(view.baseline("t_x").runs, 50);
}

/// Eight steps of one run queried at once: every step's record is kept, and one newcomer
/// takes the run's one trial however the steps interleave (on both stores).
fn concurrent_steps(store: &(dyn Store + Sync)) {
    use curator_core::Tier;
    use curator_store::Action;
    let words = ["zorvex", "quibbit", "plonk", "glorp", "snarf", "blick", "trobe", "vrill"];
    let proven = ["ambit", "cobalt", "dune", "ember", "fjord", "gusto", "hazel", "istle"];
    store
        .transact(None, &mut |tx| {
            for (w, p) in words.iter().zip(proven) {
                let new = observation(w, &format!("The {w} panel behaves"), "Seen.");
                tx.put(Tier::Products, &scope("acme"), &new, Action::Add, "seed")?;
                let mut old = observation(p, &format!("The {p} panel behaves"), "Seen.");
                old.trust = 0.6;
                tx.put(Tier::Products, &scope("acme"), &old, Action::Add, "seed")?;
            }
            Ok(())
        })
        .unwrap();
    let trial =
        ProbationOptions { below_min_trust: true, pending: true, rate: 0.0, newcomers: true };
    let at_once = |run: &str, words: &[&str]| -> usize {
        std::thread::scope(|s| {
            let handles: Vec<_> = words
                .iter()
                .enumerate()
                .map(|(k, w)| {
                    let text = format!("Use the {w} panel");
                    s.spawn(move || {
                        let mut q = QueryOptions::new("acme", "t_x", text).unwrap();
                        q.run = Some(RunStep { run_id: run.into(), step: k as u64 });
                        q.probation = Some(trial);
                        query_in(store, &q).unwrap().observations.len()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).sum()
        })
    };
    for round in 0..3 {
        let run = format!("r_proven{round}");
        assert_eq!(at_once(&run, &proven), proven.len());
        let session = load_session_in(store, &run).unwrap().unwrap();
        assert_eq!(session.injected.len(), proven.len(), "a step's record was lost: {session:?}");
        let run = format!("r_new{round}");
        assert_eq!(at_once(&run, &words), 1, "one unproven observation per run");
        let session = load_session_in(store, &run).unwrap().unwrap();
        assert_eq!(session.injected.values().map(Vec::len).sum::<usize>(), 1, "{session:?}");
    }
}

#[test]
fn steps_of_one_run_queried_at_once_lose_no_record_and_share_one_trial_on_both_stores() {
    let (_dir, files) = file_store();
    concurrent_steps(&files);
    let (_db, pg) = pg_store();
    concurrent_steps(&pg);
}
