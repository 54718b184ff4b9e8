//! Policy simulation: over many synthetic runs where some observations mislead the agent and
//! some help, how long does a misleading observation stay injected, and how many helpful ones
//! are wrongly disarmed or deleted — with the §5.5 failed-run path alone and with ablation
//! (ARCHITECTURE.md "Ablation means something")? Default deltas (0.05 / 0.10), minTrust 0.3.
//!
//! The curator is the real one (`curate` with the rules provider on passed runs, §5.5 or the
//! ablation path on failed runs); the store is in memory because the subject is the policy, not
//! the disk; retrieval is simulated (a uniform draw of 0–2 observations with trust ≥ 0.3 per
//! step). The world model, per step:
//! - an injected misleading observation misleads the agent with probability 0.7; the failure
//!   shows in the same step (60 %) or in the next step (40 %: memory that misleads an earlier
//!   step, the case §11.5 describes);
//! - otherwise the step fails by itself with probability 0.04 (0.02 when a helpful observation
//!   was injected): three quarters are persistent app failures (a rerun fails too), one quarter
//!   transient flakes (a rerun fails again with the same 0.04 per step);
//! - the run stops at the first failed step. The ablation rerun injects nothing.
//!
//! Run with `cargo test -p curator-engine --test curate_policy_sim -- --nocapture`; set
//! `CURATOR_SIM_OUT=FILE` to also write the markdown table.

mod support;

use curator_core::{ObservationId, Tier};
use curator_engine::curate::{CurateOptions, RunRecord, curate};
use curator_engine::providers::RulesProvider;
use curator_store::{ListFilter, Store};
use serde_json::json;
use support::*;

const HELPFUL: usize = 20;
const MISLEADING: usize = 10;
const RUNS: usize = 1500;
const STEPS: usize = 5;
const SEEDS: u64 = 6;
const MIN_TRUST: f64 = 0.3;

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

fn word(i: usize) -> String {
    // Ids need lowercase words; encode the index in letters.
    let mut s = String::new();
    let mut n = i;
    for _ in 0..3 {
        s.push((b'a' + (n % 26) as u8) as char);
        n /= 26;
    }
    s
}

#[derive(Debug, Default, Clone)]
struct Outcome {
    /// Per misleading observation: runs until it was no longer injectable (trust < minTrust or
    /// deleted); `RUNS` when it never was.
    misleading_disarmed_after: Vec<usize>,
    misleading_deleted: usize,
    helpful_disarmed: usize,
    helpful_deleted: usize,
    helpful_trust_sum: f64,
    helpful_alive: usize,
    passed_runs: usize,
}

fn simulate(seed: u64, ablation: bool) -> Outcome {
    let store = MemStore::new();
    let mut rng = Rng(seed);
    let ids: Vec<String> =
        (0..HELPFUL + MISLEADING).map(|i| id(&format!("sim{}", word(i)))).collect();
    for (i, id) in ids.iter().enumerate() {
        let title = if i < HELPFUL { "Helpful fact" } else { "Misleading fact" };
        seed_obs(&store, id, title);
    }
    let misleading = |id: &str| ids[HELPFUL..].iter().any(|m| m == id);
    let mut disarmed_at: Vec<Option<usize>> = vec![None; MISLEADING];
    let mut out = Outcome::default();
    for run in 0..RUNS {
        let live: Vec<(String, f64)> = store
            .list(&ListFilter::default())
            .unwrap()
            .observations
            .into_iter()
            .map(|o| (o.observation.id.as_str().to_owned(), o.observation.trust))
            .collect();
        let injectable: Vec<&String> =
            live.iter().filter(|(_, t)| *t >= MIN_TRUST).map(|(id, _)| id).collect();
        for (k, m) in ids[HELPFUL..].iter().enumerate() {
            if disarmed_at[k].is_none() && !injectable.contains(&m) {
                disarmed_at[k] = Some(run);
            }
        }
        let mut steps = Vec::new();
        let mut failed = false;
        let mut persistent = false;
        let mut delayed_failure = false;
        for s in 0..STEPS {
            let mut injected: Vec<String> = Vec::new();
            if !injectable.is_empty() {
                for _ in 0..rng.below(3) {
                    let pick = injectable[rng.below(injectable.len())].clone();
                    if !injected.contains(&pick) {
                        injected.push(pick);
                    }
                }
            }
            let mut fails = std::mem::take(&mut delayed_failure);
            if !fails && injected.iter().any(|i| misleading(i)) && rng.chance(0.7) {
                if rng.chance(0.6) || s + 1 == STEPS {
                    fails = true;
                } else {
                    delayed_failure = true;
                }
            }
            if !fails && !delayed_failure {
                let helped = injected.iter().any(|i| !misleading(i));
                if rng.chance(if helped { 0.02 } else { 0.04 }) {
                    fails = true;
                    persistent = rng.chance(0.75);
                }
            }
            let status = if fails { "failed" } else { "passed" };
            steps
                .push(json!({"name": format!("step {s}"), "status": status, "injected": injected}));
            if fails {
                failed = true;
                break;
            }
        }
        let mut record = json!({"run_id": format!("r_sim{run}"), "product": "acme",
                                "test": {"id": "t_sim", "name": "Sim"},
                                "status": if failed { "failed" } else { "passed" }, "steps": steps});
        let any_injected = record["steps"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| !s["injected"].as_array().unwrap().is_empty());
        if failed && ablation && any_injected {
            let rerun_fails = persistent || (0..STEPS).any(|_| rng.chance(0.04));
            record["ablation"] = json!({"status": if rerun_fails { "failed" } else { "passed" }});
        }
        out.passed_runs += usize::from(!failed);
        let record = RunRecord::from_value(&record).unwrap();
        curate(&store, &record, &RulesProvider::default(), &CurateOptions::default()).unwrap();
    }
    let end: Vec<(String, f64)> = store
        .list(&ListFilter::default())
        .unwrap()
        .observations
        .into_iter()
        .map(|o| (o.observation.id.as_str().to_owned(), o.observation.trust))
        .collect();
    let trust_of = |id: &str| end.iter().find(|(i, _)| i == id).map(|(_, t)| *t);
    for h in &ids[..HELPFUL] {
        match trust_of(h) {
            None => {
                out.helpful_deleted += 1;
                out.helpful_disarmed += 1;
            }
            Some(t) => {
                out.helpful_alive += 1;
                out.helpful_trust_sum += t;
                if t < MIN_TRUST {
                    out.helpful_disarmed += 1;
                }
            }
        }
    }
    for (k, m) in ids[HELPFUL..].iter().enumerate() {
        out.misleading_deleted += usize::from(trust_of(m).is_none());
        out.misleading_disarmed_after.push(disarmed_at[k].unwrap_or(RUNS));
    }
    out
}

fn seed_obs(store: &MemStore, id: &str, title: &str) {
    let o = observation(id, title, "Body", 0.5);
    ObservationId::parse(id).unwrap();
    support::seed(store, Tier::Products, "acme", &o);
}

#[derive(Debug)]
struct Summary {
    median_disarm: f64,
    mean_disarm: f64,
    never_disarmed: usize,
    misleading_deleted: usize,
    helpful_disarmed: usize,
    helpful_deleted: usize,
    helpful_mean_trust: f64,
    pass_rate: f64,
}

fn summarize(outcomes: &[Outcome]) -> Summary {
    let mut all: Vec<usize> =
        outcomes.iter().flat_map(|o| o.misleading_disarmed_after.clone()).collect();
    all.sort_unstable();
    let n = all.len();
    let median_disarm =
        if n % 2 == 1 { all[n / 2] as f64 } else { (all[n / 2 - 1] + all[n / 2]) as f64 / 2.0 };
    let alive: usize = outcomes.iter().map(|o| o.helpful_alive).sum();
    Summary {
        median_disarm,
        mean_disarm: all.iter().sum::<usize>() as f64 / n as f64,
        never_disarmed: all.iter().filter(|r| **r == RUNS).count(),
        misleading_deleted: outcomes.iter().map(|o| o.misleading_deleted).sum(),
        helpful_disarmed: outcomes.iter().map(|o| o.helpful_disarmed).sum(),
        helpful_deleted: outcomes.iter().map(|o| o.helpful_deleted).sum(),
        helpful_mean_trust: outcomes.iter().map(|o| o.helpful_trust_sum).sum::<f64>()
            / alive.max(1) as f64,
        pass_rate: outcomes.iter().map(|o| o.passed_runs).sum::<usize>() as f64
            / (RUNS * outcomes.len()) as f64,
    }
}

#[test]
fn policy_simulation_ablation_disarms_misleading_memory_sooner_at_a_cost_to_helpful_memory() {
    let without: Vec<Outcome> = (0..SEEDS).map(|s| simulate(1000 + s, false)).collect();
    let with: Vec<Outcome> = (0..SEEDS).map(|s| simulate(1000 + s, true)).collect();
    let (a, b) = (summarize(&without), summarize(&with));
    let total_m = MISLEADING * SEEDS as usize;
    let total_h = HELPFUL * SEEDS as usize;
    let row = |name: &str, s: &Summary| {
        format!(
            "| {name} | {:.0} | {:.1} | {}/{total_m} | {}/{total_m} | {}/{total_h} | {}/{total_h} | {:.2} | {:.1} % |\n",
            s.median_disarm,
            s.mean_disarm,
            s.never_disarmed,
            s.misleading_deleted,
            s.helpful_disarmed,
            s.helpful_deleted,
            s.helpful_mean_trust,
            s.pass_rate * 100.0
        )
    };
    let mut table = String::from(
        "| policy | misleading: median runs injectable | mean | never disarmed | deleted | helpful wrongly disarmed (trust < 0.3) | helpful deleted | helpful mean trust at end | runs passed |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    table.push_str(&row("first failed step only (§5.5)", &a));
    table.push_str(&row("ablation (pass ⇒ all injected, fail ⇒ none)", &b));
    eprintln!("\n{table}");
    if let Ok(path) = std::env::var("CURATOR_SIM_OUT") {
        std::fs::write(path, &table).unwrap();
    }
    assert!(
        b.mean_disarm < a.mean_disarm,
        "ablation blames memory that misled an earlier step too, so it must disarm sooner: {a:?} vs {b:?}"
    );
    assert_eq!(
        a.never_disarmed + b.never_disarmed,
        0,
        "every misleading observation is disarmed in time"
    );
    // The price of blaming everything injected into a run whose rerun passed: helpful memory
    // injected next to misleading memory is contradicted too. Recorded in BENCHMARKS.md; this
    // bound only catches a policy change that makes it far worse.
    assert!(b.helpful_disarmed <= total_h / 2, "{b:?}");
}
