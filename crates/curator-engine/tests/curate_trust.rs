//! Issue 18 through the library on a real file store: outcome evidence recorded once per run,
//! selective blame, probation injections and their bounds, and every transition of the review
//! gate (propose, approve, reject, auto review), each undoable.

mod support;

use curator_core::Tier;
use curator_engine::curate::{
    BlamePolicy, CurateOptions, Decisions, EvidenceStatus, MemoryLog, ReviewMode, RunRecord, curate,
};
use curator_engine::probation::ProbationOptions;
use curator_engine::providers::{DecisionProvider, ExplicitProvider, RulesProvider};
use curator_engine::session::{fill_from_session, load_session_in};
use curator_engine::{QueryOptions, QueryOutcome, RunStep, query_in, review, undo};
use curator_store::evidence::EvidenceQuery;
use curator_store::{Action, FileStore, JournalFilter, ListFilter, Store};
use serde_json::{Value, json};
use support::*;

fn store() -> (tempfile::TempDir, FileStore) {
    let tmp = tempfile::tempdir().unwrap();
    FileStore::init(tmp.path()).unwrap();
    let store = FileStore::open(tmp.path(), Default::default()).unwrap();
    (tmp, store)
}

fn seed_word(store: &FileStore, seed_id: &str, word: &str, trust: f64) -> String {
    let id = id(seed_id);
    let o = observation(&id, &format!("The {word} panel behaves"), "Seen before.", trust);
    seed(store, Tier::Products, "acme", &o);
    id
}

fn curate_with(
    store: &dyn Store,
    record: Value,
    provider: &dyn DecisionProvider,
    options: &CurateOptions,
) -> MemoryLog {
    let mut record = RunRecord::from_value(&record).unwrap();
    fill_from_session(store, &mut record).unwrap();
    curate(store, &record, provider, options).unwrap()
}

fn rules(store: &dyn Store, record: Value) -> MemoryLog {
    curate_with(store, record, &RulesProvider::default(), &CurateOptions::default())
}

fn run_record(run_id: &str, status: &str, steps: Value) -> Value {
    json!({"run_id": run_id, "product": "acme", "test": {"id": "t_login", "name": "Login"},
           "status": status, "steps": steps})
}

fn trust(store: &dyn Store, id: &str) -> Option<f64> {
    get(store, id).map(|o| o.observation.trust)
}

fn journal_of(store: &dyn Store, id: &str) -> Vec<curator_store::JournalEntry> {
    store.journal(&JournalFilter { id: Some(id.to_owned()), run_id: None }).unwrap()
}

fn ablation_passed(run_id: &str, failed_step_injected: &[&str]) -> Value {
    let mut r = run_record(
        run_id,
        "failed",
        json!([{"name": "one", "status": "failed", "injected": failed_step_injected}]),
    );
    r["ablation"] = json!({"status": "passed"});
    r
}

#[test]
fn a_suspect_with_a_strong_passing_record_is_spared_and_the_newcomer_blamed() {
    let (_t, store) = store();
    let helpful = seed_word(&store, "helpful", "zorvex", 0.5);
    let newcomer = seed_word(&store, "newcomer", "quibbit", 0.5);
    for i in 0..6 {
        let steps = json!([{"name": "use zorvex", "status": "passed", "injected": [helpful]}]);
        rules(&store, run_record(&format!("r_pass{i}"), "passed", steps));
    }
    let before = trust(&store, &helpful).unwrap();
    assert_eq!(before, 0.8, "six confirmations");
    let log = rules(&store, ablation_passed("r_fail", &[&helpful, &newcomer]));
    assert_eq!(trust(&store, &helpful), Some(before), "spared: {log:?}");
    assert_eq!(trust(&store, &newcomer), Some(0.4));
    let spare = journal_of(&store, &helpful).pop().unwrap();
    assert_eq!(spare.action, Action::Spare);
    assert!(
        spare.reasoning.contains("0 of its 6 injections") && spare.reasoning.ends_with("spared")
    );
    let blame = journal_of(&store, &newcomer).pop().unwrap();
    assert_eq!(blame.action, Action::Deprecate);
    assert!(
        blame.reasoning.contains("no record before this run")
            && blame.reasoning.ends_with("blamed")
    );
}

/// Memory that misled twice sinks until one passed probation step cannot bring it back, whatever
/// trust it had before: from 0.5 (0.4, then 0.2) and from 0.6, trust earned before any evidence
/// was kept (agent-qa wrote it, or a person did): 0.5, then 0.4 → 0.3 → 0.2, where "contradicted
/// twice" would have left it injectable at 0.3 (0.25 does not exist on this grid).
#[test]
fn memory_that_misled_twice_sinks_until_one_pass_cannot_bring_it_back() {
    for (seeded, after_one, deprecations) in [(0.5, 0.4, 2), (0.6, 0.5, 3)] {
        let (_t, store) = store();
        let bad = seed_word(&store, "misled", "zorvex", seeded);
        rules(&store, ablation_passed("r_one", &[&bad]));
        assert_eq!(trust(&store, &bad), Some(after_one));
        let log = rules(&store, ablation_passed("r_two", &[&bad]));
        assert_eq!(trust(&store, &bad), Some(0.2), "{log:?}");
        assert_eq!(log.deprecated, deprecations, "{log:?}");
        assert!(log.deltas[1].reasoning.ends_with("(contradicted again)"), "{:?}", log.deltas);
        assert!(log.deltas[0].reasoning.contains("blamed until no longer injected"));
    }
}

#[test]
fn sinking_follows_min_trust_and_never_deletes() {
    // minTrust 0.5: seeded at 0.6, the first failure leaves 0.5, the second sinks it to 0.4
    // (0.4 + 0.05 < 0.5), not to 0.2 as with minTrust 0.3.
    let (_t, one) = store();
    let bad = seed_word(&one, "misled", "zorvex", 0.6);
    let half = CurateOptions { min_trust: 0.5, ..CurateOptions::default() };
    let provider = RulesProvider::default();
    curate_with(&one, ablation_passed("r_one", &[&bad]), &provider, &half);
    assert_eq!(trust(&one, &bad), Some(0.5));
    let log = curate_with(&one, ablation_passed("r_two", &[&bad]), &provider, &half);
    assert_eq!(trust(&one, &bad), Some(0.4), "{log:?}");
    // minTrust 0: nothing is below it, and sinking stops short of deletion (0.1 left).
    let (_t2, two) = store();
    let bad = seed_word(&two, "misled", "zorvex", 0.5);
    let zero = CurateOptions { min_trust: 0.0, ..CurateOptions::default() };
    curate_with(&two, ablation_passed("r_one", &[&bad]), &provider, &zero);
    let log = curate_with(&two, ablation_passed("r_two", &[&bad]), &provider, &zero);
    assert_eq!(trust(&two, &bad), Some(0.1), "{log:?}");
    assert_eq!(log.deleted, 0, "{log:?}");
}

#[test]
fn evidence_counts_a_run_once_however_often_it_is_curated() {
    let (_t, store) = store();
    let a = seed_word(&store, "alpha", "zorvex", 0.5);
    let record = run_record(
        "r_once",
        "failed",
        json!([{"name": "a", "status": "passed", "injected": [a]},
               {"name": "b", "status": "failed", "injected": [a]}]),
    );
    let first = rules(&store, record.clone());
    assert_eq!(first.evidence, Some(EvidenceStatus::Recorded));
    // A retry finds the run's application standing (issue 13) and changes nothing: its
    // evidence is not recorded again.
    let again = rules(&store, record);
    assert!(again.already_applied && again.evidence.is_none(), "{again:?}");
    let journal = store.journal(&JournalFilter { id: None, run_id: Some("r_once".into()) });
    let recorded = journal.unwrap().iter().filter(|e| e.action == Action::Evidence).count();
    assert_eq!(recorded, 1);
    let query = EvidenceQuery { ids: vec![a.clone()], tests: vec!["t_login".into()] };
    let view = store.evidence(&query).unwrap();
    let e = view.of(&a);
    assert_eq!((e.runs, e.before_failure, e.just_before, e.failed), (1, 1, 1, 1), "{e:?}");
    assert_eq!(view.baseline("t_login").runs, 1);
}

fn step_query(
    store: &dyn Store,
    run: &str,
    step: u64,
    text: &str,
    probation: Option<ProbationOptions>,
) -> QueryOutcome {
    let mut q = QueryOptions::new("acme", "t_login", text).unwrap();
    q.run = Some(RunStep { run_id: run.into(), step });
    q.probation = probation;
    query_in(store, &q).unwrap()
}

const ALWAYS: ProbationOptions =
    ProbationOptions { below_min_trust: true, pending: true, rate: 1.0, newcomers: false };

#[test]
fn probation_injects_at_most_one_low_observation_per_run_in_agent_qa_format_and_deterministically()
{
    let (_t, store) = store();
    let low = seed_word(&store, "lowone", "zorvex", 0.2);
    let low2 = seed_word(&store, "lowtwo", "quibbit", 0.25);
    let trusted = seed_word(&store, "trusted", "plonk", 0.6);
    assert!(step_query(&store, "r_none", 0, "Use zorvex", None).observations.is_empty());
    let mut picked = Vec::new();
    for step in 0..4 {
        let out = step_query(
            &store,
            "r_prob",
            step,
            "Use the zorvex panel and the plonk panel",
            Some(ALWAYS),
        );
        assert_eq!(out.observations[0].id, trusted, "ordinary memory first");
        let probation: Vec<_> = out.observations.iter().filter(|o| o.probation).collect();
        picked.extend(probation.iter().map(|o| (step, o.id.clone())));
        if let [p] = probation.as_slice() {
            let block = out.formatted.as_deref().unwrap();
            assert!(
                block.ends_with(&format!("(trust: {:.2})\n</memory-context>", p.trust)),
                "{block}"
            );
            assert!(!p.pending);
        }
    }
    assert_eq!(picked.len(), 1, "one probation injection per run: {picked:?}");
    assert_eq!(picked[0].0, 0, "rate 1: the first step that has a candidate");
    assert!([&low, &low2].contains(&&picked[0].1));
    let session = load_session_in(&store, "r_prob").unwrap().unwrap();
    assert_eq!(session.probation.len(), 1);
    assert_eq!(session.probation_at(0), Some(picked[0].1.as_str()));
    // A retried step of the same run draws the same candidate.
    let again =
        step_query(&store, "r_prob", 0, "Use the zorvex panel and the plonk panel", Some(ALWAYS));
    assert_eq!(
        again.observations.iter().find(|o| o.probation).map(|o| o.id.clone()),
        Some(picked[0].1.clone())
    );
    // Rate 0 and no candidates matching the step inject nothing on probation.
    let none = ProbationOptions { rate: 0.0, ..ALWAYS };
    assert!(step_query(&store, "r_zero", 0, "Use zorvex", Some(none)).observations.is_empty());
    assert!(
        step_query(&store, "r_other", 0, "Use plonk", Some(ALWAYS))
            .observations
            .iter()
            .all(|o| !o.probation)
    );
    // The agent-qa policy never injects memory below minTrust.
    let agent_qa = ProbationOptions { below_min_trust: false, ..ALWAYS };
    assert!(step_query(&store, "r_aq", 0, "Use zorvex", Some(agent_qa)).observations.is_empty());
}

/// The evidence policy's query options without probation draws: only the trial slot.
const TRIAL: ProbationOptions =
    ProbationOptions { below_min_trust: true, pending: true, rate: 0.0, newcomers: true };

fn ids(out: &QueryOutcome) -> Vec<String> {
    out.observations.iter().map(|o| o.id.clone()).collect()
}

#[test]
fn a_run_tries_one_newcomer_at_a_time_and_a_retry_sees_the_same_slot() {
    let (_t, store) = store();
    let zorvex = seed_word(&store, "newzorvex", "zorvex", 0.5);
    let quibbit = seed_word(&store, "newquibbit", "quibbit", 0.5);
    let plonk = seed_word(&store, "newplonk", "plonk", 0.5);
    let trusted = seed_word(&store, "trusted", "glorp", 0.6);
    let three = "Use the zorvex panel, the quibbit panel and the glorp panel";
    let first = step_query(&store, "r_t", 0, three, Some(TRIAL));
    let newcomers: Vec<String> =
        ids(&first).into_iter().filter(|id| [&zorvex, &quibbit].contains(&id)).collect();
    assert_eq!(newcomers.len(), 1, "one newcomer per run: {:?}", ids(&first));
    assert!(ids(&first).contains(&trusted), "confirmed memory is injected as agent-qa does");
    assert!(first.observations.iter().all(|o| !o.probation), "a newcomer is ordinary memory");
    // Another step of the run: the slot is taken, so the newcomer waits for another run.
    assert!(
        step_query(&store, "r_t", 1, "Use the plonk panel", Some(TRIAL)).observations.is_empty()
    );
    // A retried step is answered as before: its own earlier record does not take the slot.
    assert_eq!(ids(&step_query(&store, "r_t", 0, three, Some(TRIAL))), ids(&first));
    // The next run tries the newcomer this one held back.
    assert_eq!(ids(&step_query(&store, "r_u", 0, "Use the plonk panel", Some(TRIAL))), [plonk]);
    // Without a run, and under agent-qa's policy, every match is injected, as agent-qa does.
    let mut q = QueryOptions::new("acme", "t_login", three).unwrap();
    q.probation = Some(TRIAL);
    assert_eq!(query_in(&store, &q).unwrap().observations.len(), 3);
    let agent_qa = ProbationOptions { newcomers: false, ..TRIAL };
    assert_eq!(step_query(&store, "r_aq", 0, three, Some(agent_qa)).observations.len(), 3);
}

#[test]
fn an_earlier_injection_no_longer_served_takes_no_slot_and_fails_no_query() {
    let (t, store) = store();
    let first = seed_word(&store, "newzorvex", "zorvex", 0.5);
    let second = seed_word(&store, "newquibbit", "quibbit", 0.5);
    let third = seed_word(&store, "newplonk", "plonk", 0.5);
    let path = |id: &str| t.path().join(format!("products/acme/{id}.md"));
    assert_eq!(
        ids(&step_query(&store, "r_d", 0, "Use zorvex", Some(TRIAL))),
        std::slice::from_ref(&first)
    );
    // Damaged by hand since: no longer served, so it holds no slot, and the query answers.
    std::fs::write(path(&first), "---\nnot: [closed\n---\n").unwrap();
    assert_eq!(
        ids(&step_query(&store, "r_d", 1, "Use quibbit", Some(TRIAL))),
        std::slice::from_ref(&second)
    );
    // Deleted since: the same.
    std::fs::remove_file(path(&second)).unwrap();
    assert_eq!(ids(&step_query(&store, "r_d", 2, "Use plonk", Some(TRIAL))), [third]);
}

#[test]
fn probation_and_newcomers_share_one_trial_per_run() {
    let (_t, store) = store();
    let fresh = seed_word(&store, "newzorvex", "zorvex", 0.5);
    let low = seed_word(&store, "lowquibbit", "quibbit", 0.2);
    let both = ProbationOptions { rate: 1.0, ..TRIAL };
    // A newcomer first: no probation injection joins it in that run.
    assert_eq!(ids(&step_query(&store, "r_a", 0, "Use zorvex", Some(both))), [fresh]);
    assert!(step_query(&store, "r_a", 1, "Use quibbit", Some(both)).observations.is_empty());
    // Probation first: the newcomer waits.
    let probe = step_query(&store, "r_b", 0, "Use quibbit", Some(both));
    assert_eq!((ids(&probe), probe.observations[0].probation), (vec![low], true));
    assert!(step_query(&store, "r_b", 1, "Use zorvex", Some(both)).observations.is_empty());
}

#[test]
fn a_confirmed_observation_leaves_the_slot_and_a_contradicted_one_takes_it_again() {
    let (_t, store) = store();
    let known = seed_word(&store, "knownzorvex", "zorvex", 0.5);
    let fresh = seed_word(&store, "newquibbit", "quibbit", 0.5);
    let both = "Use the zorvex and quibbit panels";
    assert_eq!(step_query(&store, "r_0", 0, both, Some(TRIAL)).observations.len(), 1);
    step_query(&store, "r_p", 0, "Use zorvex", Some(TRIAL));
    rules(&store, run_record("r_p", "passed", json!([{"name": "Use zorvex", "status": "passed"}])));
    assert_eq!(trust(&store, &known), Some(0.55));
    // Confirmed once: proven, so the newcomer beside it is tried too.
    let mut got = ids(&step_query(&store, "r_n", 0, both, Some(TRIAL)));
    got.sort();
    let mut want = vec![known.clone(), fresh.clone()];
    want.sort();
    assert_eq!(got, want);
    // Blamed once (0.55 -> 0.45): contradicted more than confirmed, unproven again.
    step_query(&store, "r_f", 0, "Use zorvex", Some(TRIAL));
    let mut failed =
        run_record("r_f", "failed", json!([{"name": "Use zorvex", "status": "failed"}]));
    failed["ablation"] = json!({"status": "passed"});
    rules(&store, failed);
    assert_eq!(trust(&store, &known), Some(0.45));
    assert_eq!(step_query(&store, "r_m", 0, both, Some(TRIAL)).observations.len(), 1);
}

#[test]
fn a_passed_probation_confirms_and_is_recorded_as_evidence() {
    let (_t, store) = store();
    let low = seed_word(&store, "lowone", "zorvex", 0.2);
    let out = step_query(&store, "r_back", 0, "Use zorvex", Some(ALWAYS));
    assert!(out.observations[0].probation);
    let log = rules(
        &store,
        run_record("r_back", "passed", json!([{"name": "Use zorvex", "status": "passed"}])),
    );
    assert_eq!((log.confirmed, trust(&store, &low)), (1, Some(0.25)), "{log:?}");
    let e =
        store.evidence(&EvidenceQuery { ids: vec![low.clone()], tests: vec![] }).unwrap().of(&low);
    assert_eq!((e.probation_passed, e.passed), (1, 1));
}

fn memo_run(run_id: &str, fact: &str) -> Value {
    run_record(
        run_id,
        "passed",
        json!([{"name": "look", "status": "passed", "observation": format!("MEMO: {fact}")}]),
    )
}

fn queued_ids(store: &dyn Store) -> Vec<String> {
    store
        .list_pending(&ListFilter::default())
        .unwrap()
        .observations
        .into_iter()
        .map(|o| o.observation.id.to_string())
        .collect()
}

#[test]
fn proposals_wait_in_the_queue_and_every_transition_is_journaled_and_undoable() {
    let (_t, store) = store();
    let log = rules(&store, memo_run("r_memo", "The zorvex panel opens to the left"));
    assert_eq!((log.proposed, log.added), (1, 0), "{log:?}");
    let proposal = log.deltas[0].observation_id.clone();
    assert_eq!(log.deltas[0].action, Action::Propose);
    assert!(get(&store, &proposal).is_none(), "not served");
    assert_eq!(queued_ids(&store), std::slice::from_ref(&proposal));
    let queued = curator_core::ObservationId::parse(&proposal).unwrap();
    // Approve, undo, reject, undo: the file moves and comes back each time.
    let approved = review::approve(&store, &queued, "checked by hand").unwrap();
    assert!(get(&store, &proposal).is_some() && queued_ids(&store).is_empty());
    undo::undo(&store, &approved.run_id).unwrap();
    assert!(get(&store, &proposal).is_none());
    assert_eq!(queued_ids(&store), std::slice::from_ref(&proposal));
    let rejected = review::reject(&store, &queued, "wrong").unwrap();
    assert!(get(&store, &proposal).is_none() && queued_ids(&store).is_empty());
    undo::undo(&store, &rejected.run_id).unwrap();
    assert_eq!(queued_ids(&store), std::slice::from_ref(&proposal));
    assert!(matches!(
        review::reject(&store, &curator_core::ObservationId::parse(&id("nosuch")).unwrap(), "x"),
        Err(review::ReviewError::NotPending { .. })
    ));
    let actions: Vec<Action> = journal_of(&store, &proposal).iter().map(|e| e.action).collect();
    assert_eq!(
        actions,
        [
            Action::Propose,
            Action::Approve,
            Action::Approve,
            Action::Undo,
            Action::Undo,
            Action::Reject,
            Action::Undo
        ]
    );
    // Undoing the curator run that proposed it takes it out of the queue.
    undo::undo(&store, "r_memo").unwrap();
    assert!(queued_ids(&store).is_empty());
}

#[test]
fn explicit_decisions_and_review_off_write_memory_directly() {
    let (_t, store) = store();
    let decisions =
        Decisions::from_value(&json!({"decisions": [{"action": "add", "title": "Harness fact",
        "content": "Decided by the harness.", "scope": "product", "reasoning": "explicit"}]}))
        .unwrap();
    let log = curate_with(
        &store,
        memo_run("r_explicit", "ignored"),
        &ExplicitProvider::new(decisions.clone()),
        &CurateOptions::default(),
    );
    assert_eq!((log.added, log.proposed), (1, 0));
    let log = curate_with(
        &store,
        memo_run("r_agent", "ignored"),
        &ExplicitProvider::proposal(decisions),
        &CurateOptions::default(),
    );
    assert_eq!((log.added, log.proposed), (0, 1), "an agent's own decisions are proposals");
    let off = CurateOptions { review: ReviewMode::Off, ..CurateOptions::default() };
    let log = curate_with(
        &store,
        memo_run("r_off", "The quibbit panel is blue"),
        &RulesProvider::default(),
        &off,
    );
    assert_eq!((log.added, log.proposed), (1, 0), "review off: agent-qa's behaviour");
}

/// One proposal per fact, also inside one list of decisions: an agent's (or a model's) list
/// that holds the same add twice queues it once; without a queue (review off) both are
/// written, as agent-qa writes them.
#[test]
fn the_same_add_twice_in_one_list_is_proposed_once() {
    let (_t, store) = store();
    let add = json!({"action": "add", "title": "Cart: badge lags", "content": "The badge updates late.",
                     "scope": "product", "reasoning": "seen"});
    let decisions = Decisions::from_value(&json!({"decisions": [add, add]})).unwrap();
    let provider = ExplicitProvider::proposal(decisions);
    let log =
        curate_with(&store, memo_run("r_twice", "ignored"), &provider, &CurateOptions::default());
    assert_eq!(log.proposed, 1, "{log:?}");
    assert_eq!(queued_ids(&store).len(), 1);
    let off = CurateOptions { review: ReviewMode::Off, ..CurateOptions::default() };
    let log = curate_with(&store, memo_run("r_twice_off", "ignored"), &provider, &off);
    assert_eq!((log.added, log.proposed), (2, 0), "{log:?}");
}

#[test]
fn auto_review_approves_after_three_passed_probations_and_rejects_a_blamed_proposal() {
    let (_t, store) = store();
    let good = rules(&store, memo_run("r_good", "The zorvex panel opens to the left")).deltas[0]
        .observation_id
        .clone();
    let bad = rules(&store, memo_run("r_bad", "The quibbit panel needs two clicks")).deltas[0]
        .observation_id
        .clone();
    for i in 0..3 {
        let run = format!("r_probe{i}");
        let out = step_query(&store, &run, 0, "Use zorvex", Some(ALWAYS));
        assert!(
            out.observations.iter().any(|o| o.id == good && o.probation && o.pending),
            "{out:?}"
        );
        let log = rules(
            &store,
            run_record(&run, "passed", json!([{"name": "Use zorvex", "status": "passed"}])),
        );
        assert_eq!(log.approved, u64::from(i == 2), "approved at the third pass: {log:?}");
    }
    assert!(get(&store, &good).is_some(), "approved into memory");
    let out = step_query(&store, "r_probe_bad", 0, "Use quibbit", Some(ALWAYS));
    assert!(out.observations.iter().any(|o| o.id == bad && o.probation));
    let mut failed =
        run_record("r_probe_bad", "failed", json!([{"name": "Use quibbit", "status": "failed"}]));
    failed["ablation"] = json!({"status": "passed"});
    let log = rules(&store, failed);
    assert_eq!(log.rejected, 1, "{log:?}");
    assert!(queued_ids(&store).is_empty() && get(&store, &bad).is_none());
    // Manual review: proposals are never injected on probation, nor approved by the curator.
    let manual = CurateOptions { review: ReviewMode::Manual, ..CurateOptions::default() };
    let waiting = curate_with(
        &store,
        memo_run("r_manual", "The plonk panel is slow"),
        &RulesProvider::default(),
        &manual,
    );
    assert_eq!(waiting.proposed, 1);
    let options = ProbationOptions::from_config(BlamePolicy::Evidence, ReviewMode::Manual, 1.0);
    let out = step_query(&store, "r_manual_probe", 0, "Use plonk", options);
    assert!(out.observations.is_empty(), "{out:?}");
}

#[test]
fn a_proposal_in_the_first_failed_step_of_a_run_without_ablation_is_rejected_naming_that_step() {
    let (_t, store) = store();
    let bad = rules(&store, memo_run("r_bad", "The quibbit panel needs two clicks")).deltas[0]
        .observation_id
        .clone();
    step_query(&store, "r_fail", 0, "Open the page", Some(ALWAYS));
    let out = step_query(&store, "r_fail", 1, "Use quibbit", Some(ALWAYS));
    assert!(out.observations.iter().any(|o| o.id == bad && o.probation), "{out:?}");
    let log = rules(
        &store,
        run_record(
            "r_fail",
            "failed",
            json!([{"name": "Open the page", "status": "passed"},
                   {"name": "Use quibbit", "status": "failed"}]),
        ),
    );
    assert_eq!(log.rejected, 1, "{log:?}");
    let reject = journal_of(&store, &bad).into_iter().last().unwrap();
    // Steps are 0-based everywhere, journal reasons included.
    assert!(
        reject.reasoning.contains("into step 1, the first failed step"),
        "{}",
        reject.reasoning
    );
}

#[test]
fn a_fact_already_waiting_for_review_is_not_proposed_again() {
    let (_t, store) = store();
    let first = rules(&store, memo_run("r_one", "The zorvex panel opens to the left"));
    assert_eq!(first.proposed, 1, "{first:?}");
    let again = rules(&store, memo_run("r_two", "The zorvex panel opens to the left."));
    assert_eq!((again.proposed, again.added), (0, 0), "{again:?}");
    assert!(again.errors.is_empty(), "{again:?}");
    assert_eq!(queued_ids(&store), [first.deltas[0].observation_id.clone()]);
    // Another fact is still proposed.
    let other = rules(&store, memo_run("r_three", "The quibbit panel needs two clicks"));
    assert_eq!(other.proposed, 1, "{other:?}");
}

/// Eight runs that learned one fact, curated at the same moment (a fleet of CI machines on one
/// root), propose it once: each reads the scope's queue under the lock of its own write.
#[test]
fn one_memo_of_eight_runs_curated_at_once_is_proposed_once() {
    let (_t, store) = store();
    let logs: Vec<MemoryLog> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|k| {
                let store = &store;
                s.spawn(move || {
                    rules(store, memo_run(&format!("r_fleet{k}"), "The zorvex panel opens left"))
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(logs.iter().map(|l| l.proposed).sum::<u64>(), 1, "{logs:?}");
    assert!(logs.iter().all(|l| l.errors.is_empty()), "{logs:?}");
    assert_eq!(queued_ids(&store).len(), 1);
}

/// Eight writers proposing one fact at once (a client's retries racing its first request, a
/// fleet of agents that learned the same thing) queue it once, and every answer names it: the
/// queue is read in the transaction that would write to it.
#[test]
fn one_fact_proposed_by_eight_writers_at_once_is_queued_once() {
    let (_t, store) = store();
    let scope = curator_core::ScopeName::new("acme").unwrap();
    let outcomes: Vec<review::ReviewOutcome> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|k| {
                let (store, scope) = (&store, &scope);
                s.spawn(move || {
                    let fact = if k % 2 == 0 {
                        "The zorvex panel opens left"
                    } else {
                        "the ZORVEX panel opens left."
                    };
                    let o = observation(&id(&format!("p{k}")), fact, "Seen twice.", 0.5);
                    let mode = curator_core::config::ReviewMode::Auto;
                    review::propose(store, Tier::Products, scope, o, "agent", mode, None).unwrap()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let queued = queued_ids(&store);
    assert_eq!(queued.len(), 1, "{outcomes:?}");
    assert!(outcomes.iter().all(|o| o.id == queued[0]), "{outcomes:?}");
    assert_eq!(outcomes.iter().filter(|o| !o.already_applied).count(), 1, "{outcomes:?}");
    let proposals = store
        .journal(&JournalFilter::default())
        .unwrap()
        .into_iter()
        .filter(|e| e.action == Action::Propose)
        .count();
    assert_eq!(proposals, 1, "journaled once");
}

#[test]
fn steps_of_one_run_queried_at_once_lose_no_record_and_share_one_trial() {
    let (_t, store) = store();
    let words = ["zorvex", "quibbit", "plonk", "glorp", "snarf", "blick", "trobe", "vrill"];
    let proven = ["ambit", "cobalt", "dune", "ember", "fjord", "gusto", "hazel", "istle"];
    for (w, p) in words.iter().zip(proven) {
        seed_word(&store, &format!("new{w}"), w, 0.5);
        seed_word(&store, &format!("old{p}"), p, 0.6);
    }
    let at_once = |run: &str, words: &[&str]| -> Vec<QueryOutcome> {
        std::thread::scope(|s| {
            let handles: Vec<_> = words
                .iter()
                .enumerate()
                .map(|(k, w)| {
                    let (store, text) = (&store, format!("Use the {w} panel"));
                    s.spawn(move || step_query(store, run, k as u64, &text, Some(TRIAL)))
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        })
    };
    for round in 0..5 {
        // Proven memory: every step injects its own, and every step's record is kept.
        let run = format!("r_proven{round}");
        let outs = at_once(&run, &proven);
        assert!(outs.iter().all(|o| o.observations.len() == 1), "{outs:?}");
        let session = store.load_session(&run).unwrap().unwrap();
        assert_eq!(session.injected.len(), words.len(), "a step's record was lost: {session:?}");
        // Newcomers: one of the eight steps takes the run's one trial, however they interleave.
        let run = format!("r_new{round}");
        let shown: usize = at_once(&run, &words).iter().map(|o| o.observations.len()).sum();
        assert_eq!(shown, 1, "one unproven observation per run");
        let session = store.load_session(&run).unwrap().unwrap();
        assert_eq!(session.injected.values().map(Vec::len).sum::<usize>(), 1, "{session:?}");
    }
}

#[test]
fn a_retried_approve_is_answered_after_a_run_confirmed_the_approved_observation() {
    let (_t, store) = store();
    let log = rules(&store, memo_run("r_memo", "The zorvex panel opens to the left"));
    let proposal = log.deltas[0].observation_id.clone();
    let queued = curator_core::ObservationId::parse(&proposal).unwrap();
    let approved = review::approve(&store, &queued, "checked by hand").unwrap();
    assert!(!approved.already_applied);
    // A passed run confirms it: its newest journal entry is now the run's confirm.
    let passed = run_record(
        "r_after",
        "passed",
        json!([{"name": "Use zorvex", "status": "passed", "injected": [proposal]}]),
    );
    assert_eq!(rules(&store, passed).confirmed, 1);
    let again = review::approve(&store, &queued, "checked by hand").unwrap();
    assert!(again.already_applied && again.run_id == approved.run_id, "{again:?}");
    // The other decision is still refused: the approval stands.
    assert!(matches!(
        review::reject(&store, &queued, "x"),
        Err(review::ReviewError::NotPending { .. })
    ));
}
