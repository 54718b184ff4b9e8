//! What one `curate` costs as the file store's history grows: every curated run leaves its
//! outcome evidence and its changes in `.curator/journal.jsonl`, and the curator reads that
//! history for the retry check and for the evidence the blame weighs.
//!
//! ```text
//! cargo bench -p curator-engine --bench curate_history
//! ```
//!
//! A real file store in a temporary root: 1,000 product observations, a history of `N`
//! curated runs (0, 1,000, 10,000, 30,000 unless `CURATOR_BENCH_RUNS` lists others), each of them a real `curate` of a passed 5-step run
//! that confirms the observations injected into it (so the journal holds file texts as well as
//! evidence, as in production). Measured at each size, in process: `curate` of a new passed run
//! (the rules provider confirms its ten injections) and of a new failed run whose ablation
//! rerun passed (the evidence policy's blame), alternating call by call.

use std::io::Write;
use std::time::{Duration, Instant};

use curator_engine::curate::{CurateOptions, RunRecord, curate};
use curator_engine::providers::RulesProvider;
use curator_store::{FileStore, FileStoreOptions};
use serde_json::json;

mod fixture;

use fixture::{OBSERVATIONS, id, percentile, seed};

const CALLS: usize = 40;

/// A 5-step run of `t_bench` injecting two observations per step; `failed` fails its last
/// step and carries an ablation rerun that passed.
fn record(run: &str, n: usize, failed: bool) -> RunRecord {
    let steps: Vec<_> = (0..5)
        .map(|k| {
            let status = if failed && k == 4 { "failed" } else { "passed" };
            let a = (n * 5 + k) % OBSERVATIONS;
            json!({"name": format!("step {k}"), "status": status,
                   "injected": [id(a), id((a + 500) % OBSERVATIONS)]})
        })
        .collect();
    let mut value = json!({"run_id": run, "product": "acme",
                           "test": {"id": "t_bench", "name": "Bench"},
                           "status": if failed { "failed" } else { "passed" }, "steps": steps});
    if failed {
        value["ablation"] = json!({"status": "passed"});
    }
    RunRecord::from_value(&value).unwrap()
}

fn curate_one(store: &FileStore, run: &str, n: usize, failed: bool) -> Duration {
    let record = record(run, n, failed);
    let start = Instant::now();
    let log = curate(store, &record, &RulesProvider::default(), &CurateOptions::default()).unwrap();
    let took = start.elapsed();
    assert!(!log.already_applied);
    took
}

fn main() {
    let tmp = tempfile::tempdir().unwrap();
    FileStore::init(tmp.path()).unwrap();
    seed(tmp.path(), |_| "0.7");
    let store = FileStore::open(tmp.path(), FileStoreOptions::default()).unwrap();
    let sizes: Vec<usize> = std::env::var("CURATOR_BENCH_RUNS")
        .map(|s| s.split(',').map(|n| n.trim().parse().unwrap()).collect())
        .unwrap_or_else(|_| vec![0, 1_000, 10_000, 30_000]);
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "| curated runs in the history | journal size | passed run p50 / p99 | failed run, ablation passed, p50 / p99 | building the history |\n|---|---|---|---|---|"
    )
    .unwrap();
    let mut curated = 0;
    let mut probe = 0;
    for runs in sizes {
        let started = Instant::now();
        for n in curated..runs {
            curate_one(&store, &format!("r_hist{n}"), n, false);
        }
        let building = started.elapsed();
        curated = runs;
        let (mut passed, mut failed) = (Vec::new(), Vec::new());
        for _ in 0..CALLS {
            probe += 1;
            passed.push(curate_one(&store, &format!("r_probe{probe}"), probe * 7, false));
            probe += 1;
            failed.push(curate_one(&store, &format!("r_probe{probe}"), probe * 7, true));
        }
        let size = std::fs::metadata(tmp.path().join(".curator/journal.jsonl"))
            .map(|m| m.len())
            .unwrap_or(0);
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        writeln!(
            out,
            "| {runs} | {:.1} MB | {:.2} / {:.2} ms | {:.2} / {:.2} ms | {:.1} s |",
            size as f64 / 1e6,
            ms(percentile(&mut passed, 0.5)),
            ms(percentile(&mut passed, 0.99)),
            ms(percentile(&mut failed, 0.5)),
            ms(percentile(&mut failed, 0.99)),
            building.as_secs_f64()
        )
        .unwrap();
        out.flush().unwrap();
    }
}
