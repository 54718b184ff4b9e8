//! Policy simulation (issue 18 "Must show"): in a world of helpful and misleading memory, how
//! many failed runs does a misleading observation cause before it is no longer injected, how
//! much helpful memory is lost on the way, and how much planted memory reaches a run — for
//! `curator.policy: agent-qa | evidence`, each with `curator.review: off | auto`.
//!
//! Everything but the agent is the real engine: a file store in a temporary root (atomic
//! writes, lock, journal, evidence log, review queue, tantivy index), `query_in` for every
//! step of every run (terms mode, minTrust 0.3, maxInjections 3, run sessions and probation
//! exactly as `curator query --run-id --step-index` does them), `fill_from_session` and `curate` with the
//! rules provider after every run, default deltas 0.05 / 0.10. The agent is simulated:
//!
//! - product `acme`, one 5-step test; 20 helpful and 10 misleading observations at trust 0.5,
//!   each about its own made-up control word; a step's text names 0–2 control words drawn
//!   uniformly from every word the world knows, so memory about them is what the query finds;
//! - an injected misleading observation (ordinary or on probation) misleads the agent with
//!   probability 0.7, failing that step (60 %) or the next one (40 %: memory that misleads an
//!   earlier step, §11.5); otherwise a step fails by itself with probability 0.04 (0.02 with
//!   helpful memory injected): three quarters persistent, one quarter a transient flake;
//! - the run stops at its first failed step; a failed run with any injection carries an
//!   ablation result: the rerun without memory fails for a persistent failure, and for a flake
//!   with the same 0.04 per step;
//! - proposals: at runs 20, 60, 100, 140, 180 the agent flags a helpful new fact with `MEMO:`,
//!   at runs 40, 80, 120, 160, 200 a planted one (an attacker's: it misleads like misleading
//!   memory), repeated in every run until one passes and the curator takes it;
//! - the ids the curator draws for new observations come from the seed too
//!   (`curator_core::with_seeded_ids`), so every figure repeats from one run to the next.
//!
//! Run with `cargo test -p curator-engine --test curate_policy_sim -- --ignored --nocapture`
//! for the BENCHMARKS.md table (every policy, the held-out seeds; `CURATOR_SIM_OUT=FILE` also
//! writes it). The test that runs by default compares the default policy with agent-qa's rules
//! on two held-out seeds.

mod support;

use std::collections::BTreeMap;

use curator_core::{ObservationId, Tier};
use curator_engine::curate::{BlamePolicy, CurateOptions, ReviewMode, RunRecord, curate};
use curator_engine::probation::ProbationOptions;
use curator_engine::providers::RulesProvider;
use curator_engine::session::fill_from_session;
use curator_engine::{QueryOptions, RunStep, query_in};
use curator_store::{FileStore, FileStoreOptions, ListFilter, Store};
use serde_json::json;
use support::*;

const HELPFUL: usize = 20;
const MISLEADING: usize = 10;
const RUNS: usize = 240;
const STEPS: usize = 5;
const MIN_TRUST: f64 = 0.3;
const HELPFUL_PROPOSALS: [usize; 5] = [20, 60, 100, 140, 180];
const PLANTED_PROPOSALS: [usize; 5] = [40, 80, 120, 160, 200];
/// Seeds the rules' constants were chosen on (`blame.rs`, `review.rs`, the probation rate,
/// `trial.rs`). 101-103 were meant to be held out, but were looked at while the constants
/// were still being chosen, so they count as tuning seeds; 5-12 were added for the trial
/// slot's bar, before they were ever run.
const TUNING_SEEDS: [u64; 15] = [1, 2, 3, 4, 101, 102, 103, 5, 6, 7, 8, 9, 10, 11, 12];
/// Seeds the figures are reported on, named before they were run: first with a single-cause
/// sink rule chosen on the tuning seeds (not kept: BENCHMARKS.md), then with the rule it would
/// have replaced, which is the default.
const HELD_OUT_SEEDS: [u64; 10] = [301, 302, 303, 304, 305, 306, 307, 308, 309, 310];
/// The held-out seeds of the rule before (`SINK_AT`), reported once with it and never tuned on
/// since; the table shows them too, and the default test runs two of them.
const EARLIER_HELD_OUT_SEEDS: [u64; 10] = [201, 202, 203, 204, 205, 206, 207, 208, 209, 210];
/// Named (and committed) before they were ever run, for the trial slot decided on trust
/// (`trial.rs`), chosen on the tuning seeds after 201-210 and 301-310 had been run once with
/// a first version of the slot that read the outcome record.
const TRIAL_HELD_OUT_SEEDS: [u64; 10] = [401, 402, 403, 404, 405, 406, 407, 408, 409, 410];
/// Named (and committed) before they were ever run, for the shallow sink (`ablation.rs`: just
/// below minTrust, since re-armed memory is on trial again), chosen on the tuning seeds after
/// every set above had been run once with the trial slot and the deep sink.
const SHALLOW_SINK_HELD_OUT_SEEDS: [u64; 10] = [501, 502, 503, 504, 505, 506, 507, 508, 509, 510];
/// Named (and committed) before they were ever run, for re-arming on the record (a passed step
/// re-arms memory below minTrust only when its outcome record no longer condemns it), chosen
/// on the tuning seeds after every set above had been run with the shallow sink.
const REARM_HELD_OUT_SEEDS: [u64; 10] = [601, 602, 603, 604, 605, 606, 607, 608, 609, 610];
/// Named (and committed) before they were ever run, for the deep sink re-armed only by the
/// record, chosen on the tuning seeds after the shallow sink with the same re-arming had been
/// run once on every set above (and not kept).
const DEEP_REARM_HELD_OUT_SEEDS: [u64; 10] = [701, 702, 703, 704, 705, 706, 707, 708, 709, 710];

/// splitmix64: a small deterministic generator, so the figures are reproducible.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn chance(&mut self, p: f64) -> bool {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn trace(seed: u64) -> bool {
    std::env::var("CURATOR_SIM_TRACE").is_ok_and(|v| v == seed.to_string())
}

/// A made-up control word for observation `i` (letters only, so it is one token).
fn word(i: usize) -> String {
    let consonants = b"bdfgklmnprstvz";
    let vowels = b"aeiou";
    let mut s = String::from("q");
    let mut n = i + 7;
    for _ in 0..3 {
        s.push(consonants[n % consonants.len()] as char);
        n /= consonants.len();
        s.push(vowels[n % vowels.len()] as char);
        n /= vowels.len();
    }
    s
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Helpful,
    Misleading,
    ProposedHelpful,
    Planted,
}

impl Kind {
    fn misleads(self) -> bool {
        matches!(self, Kind::Misleading | Kind::Planted)
    }
}

/// One fact of the world, and what happened to it.
#[derive(Debug, Clone)]
struct Fact {
    kind: Kind,
    word: String,
    /// Known once the curator wrote it (seeded ones from the start).
    id: Option<String>,
    /// Failed runs it caused (ground truth: it misled the failed step).
    caused: usize,
    /// `caused` when it first stopped being injectable as ordinary memory.
    disarmed_after: Option<usize>,
    /// Ordinary injections (not on probation) before any review decision.
    injected_unreviewed: usize,
    probation_injections: usize,
    /// It was below minTrust at some point, and later injectable again.
    went_low: bool,
    recovered: bool,
    /// A proposal that waited in the review queue at some point (never with review off).
    queued: bool,
    /// A proposal that entered memory after waiting in the queue.
    approved: bool,
    /// A proposal that left the queue without approval.
    rejected: bool,
    /// Where it stands after the last run (`None`: deleted, or never written).
    end: Option<State>,
}

#[derive(Debug, Clone, Default)]
struct Outcome {
    facts: Vec<Fact>,
    /// Helpful (seeded) observations not injectable at the start of each run.
    helpful_lost_by_run: Vec<usize>,
    passed_runs: usize,
}

impl Outcome {
    /// The most helpful (seeded) observations not injectable at once, and the first run where
    /// that many were.
    fn helpful_lost_max(&self) -> (usize, usize) {
        let mut most = (0, 0);
        for (run, lost) in self.helpful_lost_by_run.iter().enumerate() {
            if *lost > most.0 {
                most = (*lost, run);
            }
        }
        most
    }
}

/// Where an observation stands now (absent from the map: deleted or rejected).
#[derive(Debug, Clone, Copy, PartialEq)]
enum State {
    Served(f64),
    Pending,
}

fn states(store: &FileStore) -> BTreeMap<String, State> {
    let mut out = BTreeMap::new();
    for o in store.list(&ListFilter::default()).unwrap().observations {
        out.insert(o.observation.id.to_string(), State::Served(o.observation.trust));
    }
    for o in store.list_pending(&ListFilter::default()).unwrap().observations {
        out.insert(o.observation.id.to_string(), State::Pending);
    }
    out
}

fn injectable(s: Option<&State>) -> bool {
    matches!(s, Some(State::Served(t)) if *t >= MIN_TRUST)
}

/// One world: the ids the curator draws for new observations are seeded with the world's seed
/// too, so a run of the table gives the same figures every time.
fn simulate(seed: u64, policy: BlamePolicy, review: ReviewMode) -> Outcome {
    curator_core::with_seeded_ids(seed, || simulate_world(seed, policy, review))
}

fn simulate_world(seed: u64, policy: BlamePolicy, review: ReviewMode) -> Outcome {
    let dir = tempfile::tempdir_in(shm()).unwrap();
    FileStore::init(dir.path()).unwrap();
    let store = FileStore::open(dir.path(), FileStoreOptions::default()).unwrap();
    let mut rng = Rng(seed);
    let mut facts: Vec<Fact> = Vec::new();
    let fact = |kind, i: usize| Fact {
        kind,
        word: word(i),
        id: None,
        caused: 0,
        disarmed_after: None,
        injected_unreviewed: 0,
        probation_injections: 0,
        went_low: false,
        recovered: false,
        queued: false,
        approved: false,
        rejected: false,
        end: None,
    };
    for i in 0..HELPFUL + MISLEADING {
        let mut f = fact(if i < HELPFUL { Kind::Helpful } else { Kind::Misleading }, i);
        let id = id(&format!("sim{}", word(i)));
        let title = format!("The {} control works as described", f.word);
        seed_obs(&store, &id, &title);
        f.id = Some(id);
        facts.push(f);
    }
    let mut proposals: Vec<(usize, Kind)> = HELPFUL_PROPOSALS
        .iter()
        .map(|r| (*r, Kind::ProposedHelpful))
        .chain(PLANTED_PROPOSALS.iter().map(|r| (*r, Kind::Planted)))
        .collect();
    proposals.sort_by_key(|(run, _)| *run);
    let probation =
        ProbationOptions::from_config(policy, review, curator_core::config::DEFAULT_PROBATION_RATE);
    let options = CurateOptions { policy, review, ..CurateOptions::default() };
    let mut out = Outcome::default();
    let mut memo: Option<usize> = None; // index into facts of the fact being proposed
    for run in 0..RUNS {
        if memo.is_none()
            && let Some(&(at, kind)) = proposals.first()
            && run >= at
        {
            proposals.remove(0);
            facts.push(fact(kind, facts.len()));
            memo = Some(facts.len() - 1);
        }
        let now = states(&store);
        track(&mut facts, &now);
        let lost = facts
            .iter()
            .filter(|f| f.kind == Kind::Helpful)
            .filter(|f| !injectable(f.id.as_ref().and_then(|id| now.get(id))))
            .count();
        out.helpful_lost_by_run.push(lost);
        let run_id = format!("r_sim{seed}-{run}");
        let mut steps = Vec::new();
        let mut failed = false;
        let mut persistent = false;
        let mut delayed: Option<usize> = None; // the fact whose misleading shows in this step
        let mut culprit: Option<usize> = None;
        let mut any_injected = false;
        for s in 0..STEPS {
            let words: Vec<usize> = (0..rng.below(3)).map(|_| rng.below(facts.len())).collect();
            let text = if words.is_empty() {
                "Continue with the next screen".to_owned()
            } else {
                let w: Vec<&str> = words.iter().map(|i| facts[*i].word.as_str()).collect();
                format!("Use the {} controls", w.join(" and "))
            };
            let mut q = QueryOptions::new("acme", "t_sim", text).unwrap();
            q.min_trust = MIN_TRUST;
            q.run = Some(RunStep { run_id: run_id.clone(), step: s as u64 });
            q.probation = probation;
            let outcome = query_in(&store, &q).unwrap();
            let mut injected: Vec<usize> = Vec::new();
            for o in &outcome.observations {
                let Some(k) = facts.iter().position(|f| f.id.as_deref() == Some(o.id.as_str()))
                else {
                    continue;
                };
                injected.push(k);
                any_injected = true;
                if o.probation {
                    facts[k].probation_injections += 1;
                } else if !facts[k].approved
                    && matches!(facts[k].kind, Kind::Planted | Kind::ProposedHelpful)
                {
                    facts[k].injected_unreviewed += 1;
                }
            }
            if trace(seed) {
                let names: Vec<String> = outcome
                    .observations
                    .iter()
                    .filter_map(|o| {
                        let k =
                            facts.iter().position(|f| f.id.as_deref() == Some(o.id.as_str()))?;
                        Some(format!(
                            "{}{}{}@{:.2}",
                            match facts[k].kind {
                                Kind::Helpful => "H",
                                Kind::Misleading => "M",
                                Kind::ProposedHelpful => "P",
                                Kind::Planted => "X",
                            },
                            k,
                            if o.probation { "(prob)" } else { "" },
                            o.trust
                        ))
                    })
                    .collect();
                eprint!(" s{s}[{}]", names.join(","));
            }
            let mut fails = None;
            if let Some(k) = delayed.take() {
                fails = Some(k);
            }
            if fails.is_none() {
                let misleading = injected.iter().copied().filter(|k| facts[*k].kind.misleads());
                for k in misleading {
                    if rng.chance(0.7) {
                        if rng.chance(0.6) || s + 1 == STEPS {
                            fails = Some(k);
                        } else {
                            delayed = Some(k);
                        }
                        break;
                    }
                }
            }
            let mut own_failure = false;
            if fails.is_none() && delayed.is_none() {
                let helped = injected.iter().any(|k| !facts[*k].kind.misleads());
                if rng.chance(if helped { 0.02 } else { 0.04 }) {
                    own_failure = true;
                    persistent = rng.chance(0.75);
                }
            }
            let status = if fails.is_some() || own_failure { "failed" } else { "passed" };
            let mut step = json!({"name": format!("step {s}"), "status": status});
            if s == 0
                && let Some(m) = memo
            {
                step["observation"] =
                    json!(format!("MEMO: The {} control works as described", facts[m].word));
            }
            steps.push(step);
            if status == "failed" {
                failed = true;
                culprit = fails;
                break;
            }
        }
        if let Some(k) = culprit {
            facts[k].caused += 1;
        }
        let mut record = json!({"run_id": run_id, "product": "acme",
                                "test": {"id": "t_sim", "name": "Sim"},
                                "status": if failed { "failed" } else { "passed" },
                                "steps": steps});
        if failed && any_injected {
            let rerun_fails = persistent || (0..STEPS).any(|_| rng.chance(0.04));
            record["ablation"] = json!({"status": if rerun_fails { "failed" } else { "passed" }});
        }
        out.passed_runs += usize::from(!failed);
        if trace(seed) {
            let after = states(&store);
            let low: Vec<String> = facts
                .iter()
                .enumerate()
                .filter(|(_, f)| f.kind == Kind::Helpful)
                .filter(|(_, f)| !injectable(f.id.as_ref().and_then(|id| after.get(id))))
                .map(|(k, f)| format!("H{k}@{:?}", f.id.as_ref().and_then(|id| after.get(id))))
                .collect();
            eprint!(" low after: {low:?}");
            eprintln!(
                " => {} culprit {:?} ablation {:?} lost {}",
                if failed { "FAIL" } else { "pass" },
                culprit,
                record.get("ablation").map(|a| a["status"].clone()),
                lost
            );
        }
        let mut record = RunRecord::from_value(&record).unwrap();
        fill_from_session(&store, &mut record).unwrap();
        curate(&store, &record, &RulesProvider::default(), &options).unwrap();
        if let Some(m) = memo
            && !failed
        {
            facts[m].id = find_by_word(&store, &facts[m].word);
            memo = None;
        }
    }
    let now = states(&store);
    track(&mut facts, &now);
    for f in &mut facts {
        f.end = f.id.as_ref().and_then(|id| now.get(id)).copied();
    }
    out.facts = facts;
    out
}

/// Updates each fact's disarm, recovery and review marks from where its observation stands.
fn track(facts: &mut [Fact], now: &BTreeMap<String, State>) {
    for f in facts.iter_mut() {
        let Some(id) = &f.id else { continue };
        let state = now.get(id);
        let armed = injectable(state);
        if f.kind.misleads()
            && !armed
            && f.disarmed_after.is_none()
            && state != Some(&State::Pending)
        {
            f.disarmed_after = Some(f.caused);
        }
        if f.kind.misleads() && armed {
            f.disarmed_after = None; // injectable again: the count goes on
        }
        if matches!(state, Some(State::Served(t)) if *t < MIN_TRUST) {
            f.went_low = true;
        }
        if f.went_low && armed {
            f.recovered = true;
        }
        if matches!(f.kind, Kind::Planted | Kind::ProposedHelpful) {
            match state {
                Some(State::Pending) => f.queued = true,
                Some(State::Served(_)) if f.queued => f.approved = true,
                None if f.queued && !f.approved => f.rejected = true,
                _ => {}
            }
        }
    }
}

fn find_by_word(store: &FileStore, word: &str) -> Option<String> {
    let all = store.list(&ListFilter::default()).unwrap().observations;
    let pending = store.list_pending(&ListFilter::default()).unwrap().observations;
    all.into_iter()
        .chain(pending)
        .find(|o| o.observation.title.contains(word))
        .map(|o| o.observation.id.to_string())
}

fn seed_obs(store: &FileStore, id: &str, title: &str) {
    let o = observation(id, title, "Seen in earlier runs.", 0.5);
    ObservationId::parse(id).unwrap();
    support::seed(store, Tier::Products, "acme", &o);
}

/// A RAM-backed folder when there is one: the subject is the policy, and the store's files
/// and fsyncs are real either way.
fn shm() -> std::path::PathBuf {
    let shm = std::path::PathBuf::from("/dev/shm");
    if shm.is_dir() { shm } else { std::env::temp_dir() }
}

#[derive(Debug, Default)]
struct Summary {
    misleading: usize,
    median_caused: f64,
    never_disarmed: usize,
    misleading_deleted: usize,
    helpful: usize,
    helpful_lost_end: usize,
    helpful_lost_max: usize,
    /// The most helpful observations of all seeds together not injectable at the same run.
    helpful_lost_max_pooled: usize,
    helpful_recovered: usize,
    planted: usize,
    planted_injected: usize,
    planted_probation: usize,
    planted_approved: usize,
    planted_caused: usize,
    proposals: usize,
    proposals_approved: usize,
    pass_rate: f64,
}

fn median(mut xs: Vec<usize>) -> f64 {
    xs.sort_unstable();
    let n = xs.len();
    match n {
        0 => 0.0,
        _ if n % 2 == 1 => xs[n / 2] as f64,
        _ => (xs[n / 2 - 1] + xs[n / 2]) as f64 / 2.0,
    }
}

fn summarize(outcomes: &[Outcome]) -> Summary {
    let mut caused: Vec<usize> = Vec::new();
    let mut s = Summary::default();
    for o in outcomes {
        for f in &o.facts {
            let end_armed = injectable(f.end.as_ref());
            match f.kind {
                Kind::Misleading => {
                    s.misleading += 1;
                    caused.push(f.disarmed_after.unwrap_or(f.caused));
                    s.never_disarmed += usize::from(f.disarmed_after.is_none());
                    s.misleading_deleted += usize::from(f.end.is_none());
                }
                Kind::Helpful => {
                    s.helpful += 1;
                    s.helpful_lost_end += usize::from(!end_armed);
                    s.helpful_recovered += usize::from(f.recovered);
                }
                Kind::Planted => {
                    s.planted += 1;
                    s.planted_injected += f.injected_unreviewed;
                    s.planted_probation += f.probation_injections;
                    s.planted_approved += usize::from(f.approved);
                    s.planted_caused += f.caused;
                }
                Kind::ProposedHelpful => {
                    s.proposals += 1;
                    s.proposals_approved += usize::from(f.approved);
                }
            }
        }
        s.helpful_lost_max = s.helpful_lost_max.max(o.helpful_lost_max().0);
        s.pass_rate += o.passed_runs as f64 / RUNS as f64 / outcomes.len() as f64;
    }
    s.median_caused = median(caused);
    s.helpful_lost_max_pooled = (0..RUNS)
        .map(|run| outcomes.iter().map(|o| o.helpful_lost_by_run[run]).sum::<usize>())
        .max()
        .unwrap_or(0);
    s
}

fn name(policy: BlamePolicy, review: ReviewMode) -> String {
    let p = match policy {
        BlamePolicy::AgentQa => "agent-qa",
        BlamePolicy::Evidence => "evidence",
    };
    let r = match review {
        ReviewMode::Off => "off",
        ReviewMode::Auto => "auto",
        ReviewMode::Manual => "manual",
    };
    format!("`policy: {p}`, `review: {r}`")
}

fn row(label: &str, s: &Summary, review: bool) -> String {
    let approved = |n: usize, of: usize| {
        if review { format!("{n}/{of}") } else { "– (no review)".to_owned() }
    };
    format!(
        "| {label} | {:.1} | {}/{} | {}/{} | {}/{} | {} | {}/{} | {}/{} | {} ({} on probation) | {} | {} | {:.1} % |\n",
        s.median_caused,
        s.never_disarmed,
        s.misleading,
        s.misleading_deleted,
        s.misleading,
        s.helpful_lost_end,
        s.helpful,
        s.helpful_lost_max,
        s.helpful_lost_max_pooled,
        s.helpful,
        s.helpful_recovered,
        s.helpful,
        s.planted_injected,
        s.planted_probation,
        approved(s.planted_approved, s.planted),
        approved(s.proposals_approved, s.proposals),
        s.pass_rate * 100.0
    )
}

const HEADER: &str = "| policy | misleading: median failed runs caused before no longer injected | never disarmed | misleading deleted | helpful not injectable at the end | most helpful not injectable at once (of 20, any seed) | most not injectable at once, every seed's at the same run | helpful recovered by probation | planted injections before review | planted approved | helpful proposals approved | runs passed |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n";

/// One simulation per seed, on as many threads as seeds (each has its own root).
fn in_parallel(seeds: &[u64], policy: BlamePolicy, review: ReviewMode) -> Vec<Outcome> {
    std::thread::scope(|scope| {
        let handles: Vec<_> =
            seeds.iter().map(|s| scope.spawn(move || simulate(*s, policy, review))).collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

fn run_all(seeds: &[u64], policy: BlamePolicy, review: ReviewMode) -> Summary {
    summarize(&in_parallel(seeds, policy, review))
}

/// The default (`evidence`, `auto`) against agent-qa's rules on the same worlds (two
/// held-out seeds: the full table is `policy_table`). Holds what the default achieves on the
/// held-out seeds — misleading memory disarmed sooner than under agent-qa's rules, none left
/// armed, nearly all of it deleted, at most 1 in 20 helpful observations lost at the end, and
/// no planted memory injected as ordinary memory before review, a median of at most 2 failed
/// runs per misleading observation (3.0 here before the trial slot), and at most 2 helpful
/// observations lost at once (4 here before it) — and not the issue's "at most 1 in 20 at
/// any time".
#[test]
fn the_default_policy_disarms_misleading_memory_sooner_than_agent_qa_and_plants_nothing() {
    let seeds = &EARLIER_HELD_OUT_SEEDS[..2];
    let ours = run_all(seeds, BlamePolicy::Evidence, ReviewMode::Auto);
    let theirs = run_all(seeds, BlamePolicy::AgentQa, ReviewMode::Off);
    eprintln!(
        "\n{HEADER}{}{}",
        row(&name(BlamePolicy::Evidence, ReviewMode::Auto), &ours, true),
        row(&name(BlamePolicy::AgentQa, ReviewMode::Off), &theirs, false)
    );
    assert!(ours.median_caused < theirs.median_caused, "{ours:?}\n{theirs:?}");
    assert!(ours.median_caused <= 2.0, "{ours:?}");
    assert!(ours.helpful_lost_max <= 2, "one trial per run keeps helpful memory: {ours:?}");
    assert_eq!(ours.never_disarmed, 0, "{ours:?}");
    assert!(ours.misleading_deleted * 10 >= ours.misleading * 9, "{ours:?}");
    assert_eq!(theirs.misleading_deleted, 0, "agent-qa never reaches 0 once below minTrust");
    // Not "no worse than agent-qa's rules": before the sink rule the default ended with 1 of
    // 40 helpful observations below minTrust on these seeds where agent-qa's rules end with
    // none (0 of 40 with it). What holds is the bound.
    assert!(ours.helpful_lost_end * 20 <= ours.helpful, "at most 1 in 20 lost: {ours:?}");
    // What went below minTrust came back through probation (nothing may have gone).
    assert!(ours.helpful_lost_max == 0 || ours.helpful_recovered > 0, "{ours:?}");
    assert_eq!(ours.planted_injected, 0, "no planted memory before review: {ours:?}");
    assert!(theirs.planted_injected > 0, "without review, planted memory is injected: {theirs:?}");
}

/// `CURATOR_SIM_SEEDS=1,3` narrows `tuning` to some of the tuning seeds (never held-out ones).
fn tuning_seeds() -> Vec<u64> {
    let Ok(list) = std::env::var("CURATOR_SIM_SEEDS") else { return TUNING_SEEDS.to_vec() };
    let seeds: Vec<u64> = list.split(',').map(|s| s.trim().parse().unwrap()).collect();
    assert!(seeds.iter().all(|s| TUNING_SEEDS.contains(s)), "only tuning seeds: {seeds:?}");
    seeds
}

#[test]
#[ignore = "print-only: the default policy and agent-qa's rules on the seeds the constants were chosen on"]
fn tuning() {
    let outcomes = in_parallel(&tuning_seeds(), BlamePolicy::Evidence, ReviewMode::Auto);
    for o in &outcomes {
        let caused: Vec<(usize, Option<usize>)> = o
            .facts
            .iter()
            .filter(|f| f.kind == Kind::Misleading)
            .map(|f| (f.caused, f.disarmed_after))
            .collect();
        eprintln!(
            "misleading (caused, caused when disarmed): {caused:?}; helpful lost max {} at run {}",
            o.helpful_lost_max().0,
            o.helpful_lost_max().1
        );
    }
    let s = summarize(&outcomes);
    let theirs = run_all(&tuning_seeds(), BlamePolicy::AgentQa, ReviewMode::Off);
    eprintln!(
        "\n{HEADER}{}{}",
        row(&name(BlamePolicy::Evidence, ReviewMode::Auto), &s, true),
        row(&name(BlamePolicy::AgentQa, ReviewMode::Off), &theirs, false)
    );
}

#[test]
#[ignore = "print-only: the BENCHMARKS.md tables (every policy, the six sets of ten held-out seeds)"]
fn policy_table() {
    let mut table = String::new();
    for (label, seeds) in [
        ("701-710", DEEP_REARM_HELD_OUT_SEEDS),
        ("601-610", REARM_HELD_OUT_SEEDS),
        ("501-510", SHALLOW_SINK_HELD_OUT_SEEDS),
        ("401-410", TRIAL_HELD_OUT_SEEDS),
        ("301-310", HELD_OUT_SEEDS),
        ("201-210", EARLIER_HELD_OUT_SEEDS),
    ] {
        table.push_str(&format!("\nheld-out seeds {label}\n\n{HEADER}"));
        for policy in [BlamePolicy::AgentQa, BlamePolicy::Evidence] {
            for review in [ReviewMode::Off, ReviewMode::Auto] {
                let s = run_all(&seeds, policy, review);
                table.push_str(&row(&name(policy, review), &s, review != ReviewMode::Off));
            }
        }
    }
    eprintln!("\n{table}");
    if let Ok(path) = std::env::var("CURATOR_SIM_OUT") {
        std::fs::write(path, &table).unwrap();
    }
}
