//! File store vs PostgreSQL, side by side in one run (issue 7 "must show"; BENCHMARKS.md
//! "PostgreSQL store").
//!
//! ```text
//! CURATOR_PG_BENCH_SIZES=10k,100k cargo bench -p curator-pg --bench pg_store
//! ```
//!
//! For each size: a deterministic memory root ([`corpus`]) is written, imported into a fresh
//! database of a throwaway PostgreSQL 15 cluster started by `curator_pg::testing` with
//! PostgreSQL's durability defaults (fsync on, as the file store fsyncs every write), or the
//! server of `CURATOR_TEST_PG_URL`. Then, interleaved step by step so both stores share the
//! machine's state fairly: per-step `curator_engine::query_in` latency (terms and phrase mode,
//! after one warm-up pass that brings the file store's index up to date), and curator runs per
//! second with 1 and 8 concurrent writers, each writer with its own store handle as separate
//! machines would have.
//!
//! Environment: `CURATOR_PG_BENCH_SIZES` (default `10k,100k`), `CURATOR_PG_BENCH_QUERIES` steps
//! per mode (default 300), `CURATOR_PG_BENCH_RUNS` runs per writer (default 50). Without
//! cargo's `--bench` flag (`cargo test --benches`) a 500-observation smoke pass runs instead,
//! so CI can check the bench works without paying for it.

// A benchmark reports on stdout.
#![allow(clippy::print_stdout)]

mod corpus;

use std::sync::Arc;
use std::time::{Duration, Instant};

use curator_engine::curate::{CurateOptions, Decisions, RunRecord, curate};
use curator_engine::providers::ExplicitProvider;
use curator_engine::{QueryOptions, query_in};
use curator_pg::testing::durable_test_database;
use curator_pg::{PgOptions, PgStore, import_dir};
use curator_store::index::QueryMode;
use curator_store::{FileStore, FileStoreOptions, Store};

use crate::corpus::{Corpus, Rng, TestScope};

struct Plan {
    sizes: Vec<usize>,
    queries: usize,
    runs: usize,
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| parse_size(&v)).unwrap_or(default)
}

fn parse_size(s: &str) -> Option<usize> {
    let s = s.trim().to_ascii_lowercase();
    let (num, mul) = match s.strip_suffix('k') {
        Some(n) => (n, 1_000),
        None => (s.as_str(), 1),
    };
    num.parse::<usize>().ok().map(|n| n * mul).filter(|&n| n > 0)
}

fn plan() -> Plan {
    if !std::env::args().any(|a| a == "--bench") {
        return Plan { sizes: vec![500], queries: 20, runs: 3 };
    }
    let sizes = std::env::var("CURATOR_PG_BENCH_SIZES").unwrap_or_else(|_| "10k,100k".into());
    Plan {
        sizes: sizes.split(',').filter_map(parse_size).collect(),
        queries: env_usize("CURATOR_PG_BENCH_QUERIES", 300),
        runs: env_usize("CURATOR_PG_BENCH_RUNS", 50),
    }
}

/// p50 and p99 in milliseconds.
fn percentiles(mut v: Vec<Duration>) -> (f64, f64) {
    v.sort();
    let at = |q: f64| {
        let i = ((v.len() as f64 * q).ceil() as usize).clamp(1, v.len()) - 1;
        v[i].as_secs_f64() * 1000.0
    };
    (at(0.50), at(0.99))
}

fn options(scope: &TestScope, text: &str, mode: QueryMode) -> QueryOptions {
    let mut o = QueryOptions::new(&scope.product, &scope.test, text).expect("valid scope names");
    o.mode = mode;
    o
}

/// Per-step latency of both stores on the same steps, interleaved; also the hits per step.
fn query_latency(
    corpus: &Corpus,
    stores: [&dyn Store; 2],
    mode: QueryMode,
    n: usize,
) -> [(f64, f64, f64); 2] {
    let mut rng = Rng::new(7);
    let steps: Vec<_> = (0..n).map(|_| corpus.step(&mut rng, mode == QueryMode::Phrase)).collect();
    let mut times = [Vec::new(), Vec::new()];
    let mut hits = [0usize; 2];
    for (scope, text) in &steps {
        for (i, store) in stores.iter().enumerate() {
            let start = Instant::now();
            let out = query_in(*store, &options(scope, text, mode)).expect("query");
            times[i].push(start.elapsed());
            hits[i] += out.observations.len();
        }
    }
    let mut per = |i: usize| {
        let (p50, p99) = percentiles(std::mem::take(&mut times[i]));
        (p50, p99, hits[i] as f64 / n as f64)
    };
    [per(0), per(1)]
}

/// One curator run: confirm two observations the test's steps see, add one to its folder.
fn one_run(store: &dyn Store, scope: &TestScope, rng: &mut Rng, run_id: &str) {
    let record = serde_json::json!({"run_id": run_id, "product": scope.product,
        "test": {"id": scope.test, "name": "bench"}, "status": "passed",
        "steps": [{"name": "step", "status": "passed"}]});
    let record = RunRecord::from_json(&record.to_string()).expect("run record");
    let (a, b) = (rng.pick(&scope.visible).clone(), rng.pick(&scope.visible).clone());
    let decisions = serde_json::json!({"decisions": [
        {"action": "update", "observationId": a, "reasoning": "seen"},
        {"action": "update", "observationId": b, "reasoning": "seen"},
        {"action": "add", "title": format!("Run {run_id} learned a fact"),
         "content": "Wait for the toast.", "scope": "test", "reasoning": "new"}]});
    let decisions = Decisions::from_json(&decisions.to_string()).expect("decisions");
    curate(store, &record, &ExplicitProvider::new(decisions), &CurateOptions::default())
        .expect("curate");
}

/// Curator runs per second with `writers` threads, each opening its own store.
fn throughput(
    corpus: &Arc<Corpus>,
    writers: usize,
    runs: usize,
    tag: &str,
    open: Arc<dyn Fn() -> Box<dyn Store> + Send + Sync>,
) -> f64 {
    let start = Instant::now();
    let threads: Vec<_> = (0..writers)
        .map(|w| {
            let (corpus, open, tag) = (corpus.clone(), open.clone(), tag.to_owned());
            std::thread::spawn(move || {
                let store = open();
                let mut rng = Rng::new(1000 + w as u64);
                let usable: Vec<&TestScope> =
                    corpus.tests.iter().filter(|t| !t.visible.is_empty()).collect();
                for i in 0..runs {
                    let scope = *rng.pick(&usable);
                    one_run(store.as_ref(), scope, &mut rng, &format!("r_{tag}_{w}_{i}"));
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("writer");
    }
    (writers * runs) as f64 / start.elapsed().as_secs_f64()
}

fn main() {
    let plan = plan();
    println!("| observations | measure | file store | PostgreSQL |\n|---|---|---|---|");
    for &size in &plan.sizes {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path();
        FileStore::init(root).expect("init");
        let corpus = Arc::new(Corpus::generate(root, size, 42).expect("corpus"));
        let files = FileStore::open(root, FileStoreOptions::default()).expect("file store");
        let db =
            durable_test_database().expect("PostgreSQL (postgresql-15 or CURATOR_TEST_PG_URL)");
        let pg = PgStore::connect(db.url(), PgOptions::default()).expect("connect");
        let t = Instant::now();
        import_dir(&pg, root, &mut |_| {}).expect("import");
        let import = t.elapsed().as_secs_f64();
        // Warm-up: every folder a step reads gets indexed once; pg's caches fill.
        let t = Instant::now();
        query_latency(&corpus, [&files, &pg], QueryMode::Terms, plan.queries);
        let warm = t.elapsed().as_secs_f64();
        eprintln!("{size}: import {import:.1} s, warm-up pass {warm:.1} s");
        for mode in [QueryMode::Terms, QueryMode::Phrase] {
            let [f, p] = query_latency(&corpus, [&files, &pg], mode, plan.queries);
            let name = if mode == QueryMode::Terms { "terms" } else { "phrase" };
            println!(
                "| {size} | query p50 / p99, {name} (hits/step) | {:.2} / {:.2} ms ({:.1}) | {:.2} / {:.2} ms ({:.1}) |",
                f.0, f.1, f.2, p.0, p.1, p.2
            );
        }
        let root_path = root.to_path_buf();
        let url = db.url().to_owned();
        for writers in [1, 8] {
            let r = root_path.clone();
            let open_files: Arc<dyn Fn() -> Box<dyn Store> + Send + Sync> = Arc::new(move || {
                Box::new(FileStore::open(&r, FileStoreOptions::default()).expect("open"))
            });
            let u = url.clone();
            let open_pg: Arc<dyn Fn() -> Box<dyn Store> + Send + Sync> = Arc::new(move || {
                Box::new(PgStore::connect(&u, PgOptions::default()).expect("connect"))
            });
            let f = throughput(&corpus, writers, plan.runs, &format!("f{writers}"), open_files);
            let p = throughput(&corpus, writers, plan.runs, &format!("p{writers}"), open_pg);
            println!(
                "| {size} | curator runs/s, {writers} writer(s) × {} runs | {f:.1} | {p:.1} |",
                plan.runs
            );
        }
        drop(pg);
        drop(db);
    }
}
