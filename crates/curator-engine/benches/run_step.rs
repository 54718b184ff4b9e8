//! What a step of a recorded run costs with the evidence policy's trial slot (`trial.rs`) and
//! without it, as the journal of recorded runs grows (issue 18).
//!
//! ```text
//! cargo bench -p curator-engine --bench run_step
//! ```
//!
//! A real file store in a temporary root: 1,000 product observations (half at the starting
//! trust 0.5, newcomers; half confirmed at 0.7), a journal holding
//! `N` recorded runs of outcome evidence (0, 1,000, 10,000), and a run whose steps 0–3 are
//! recorded. Measured: `query_in` of step 4 of that run (a retried step, so every call sees the
//! same slot), in process on a long-lived `FileStore`, as `curator serve` and the query socket
//! run it; each call also writes the step's session record, as production does. The two
//! configurations alternate call by call so the machine's drift falls on both alike.

use std::io::Write;
use std::time::{Duration, Instant};

use curator_engine::probation::ProbationOptions;
use curator_engine::{QueryOptions, RunStep, query_in};
use curator_store::evidence::{RunEvidence, StepEvidence};
use curator_store::{FileStore, FileStoreOptions, Store};

mod fixture;

use fixture::{OBSERVATIONS, id, percentile, seed, word};

const CALLS: usize = 300;

fn record_runs(store: &FileStore, from: usize, to: usize) {
    for chunk in (from..to).collect::<Vec<_>>().chunks(500) {
        store
            .transact(None, &mut |tx| {
                for &r in chunk {
                    let step = |k: usize| StepEvidence {
                        status: "passed".into(),
                        injected: vec![id((r * 7 + k) % OBSERVATIONS)],
                        probation: None,
                    };
                    let run = RunEvidence {
                        run_id: format!("r_hist{r}"),
                        time: "2026-11-27T00:00:00.000Z".into(),
                        test: "t_bench".into(),
                        status: "passed".into(),
                        ablation: None,
                        steps: (0..5).map(step).collect(),
                    };
                    tx.record_evidence(&run)?;
                }
                Ok(())
            })
            .unwrap();
    }
}

fn step(store: &FileStore, run: &str, step: u64, text: String, newcomers: bool) -> Duration {
    let mut q = QueryOptions::new("acme", "t_bench", text).unwrap();
    q.run = Some(RunStep { run_id: run.into(), step });
    q.probation =
        Some(ProbationOptions { below_min_trust: true, pending: true, rate: 0.0, newcomers });
    let start = Instant::now();
    let out = query_in(store, &q).unwrap();
    let took = start.elapsed();
    assert!(!out.observations.is_empty());
    took
}

fn main() {
    let tmp = tempfile::tempdir().unwrap();
    FileStore::init(tmp.path()).unwrap();
    seed(tmp.path(), |i| if i % 2 == 0 { "0.5" } else { "0.7" });
    let store = FileStore::open(tmp.path(), FileStoreOptions::default()).unwrap();
    // Steps 0-3 of the measured runs name two words each: a newcomer and a confirmed one.
    let text = |k: usize| format!("Use the {} and {} controls", word(2 * k), word(2 * k + 1));
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "| recorded runs in the journal | journal size | trial slot p50 / p99 | without p50 / p99 | p50 ratio |\n|---|---|---|---|---|"
    )
    .unwrap();
    let mut recorded = 0;
    for runs in [0usize, 1_000, 10_000] {
        record_runs(&store, recorded, runs);
        recorded = runs;
        for newcomers in [true, false] {
            let run = format!("r_probe{runs}{newcomers}");
            for k in 0..4 {
                step(&store, &run, k as u64, text(k), newcomers);
            }
        }
        let (mut with, mut without) = (Vec::new(), Vec::new());
        for _ in 0..CALLS {
            with.push(step(&store, &format!("r_probe{runs}true"), 4, text(4), true));
            without.push(step(&store, &format!("r_probe{runs}false"), 4, text(4), false));
        }
        let size = std::fs::metadata(tmp.path().join(".curator/journal.jsonl"))
            .map(|m| m.len())
            .unwrap_or(0);
        let (w50, w99) = (percentile(&mut with, 0.5), percentile(&mut with, 0.99));
        let (o50, o99) = (percentile(&mut without, 0.5), percentile(&mut without, 0.99));
        writeln!(
            out,
            "| {runs} | {:.1} MB | {:.2} / {:.2} ms | {:.2} / {:.2} ms | {:.1}× |",
            size as f64 / 1e6,
            w50.as_secs_f64() * 1e3,
            w99.as_secs_f64() * 1e3,
            o50.as_secs_f64() * 1e3,
            o99.as_secs_f64() * 1e3,
            w50.as_secs_f64() / o50.as_secs_f64()
        )
        .unwrap();
    }
}
