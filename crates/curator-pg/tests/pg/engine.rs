//! The shared behaviour suite at the engine's level: the same query and the same curator run
//! give the same result on the file store and on PostgreSQL (issue 7 item 2, "must show").
//!
//! * **query**: every step of `eval/dev` and `eval/train` (311 steps over 177 observations,
//!   products, suites and tests) gives the same `<memory-context>` block, byte for byte,
//!   through `curator_engine::query_in` on both stores, in **phrase** mode and in **terms**
//!   mode (both stores judge terms with `index/relevance.rs`); phrase mode also on every title
//!   and content phrase of the dev memory in each step context.
//! * **curate**: the same sequence of runs (queries recorded per step, a passed run confirmed by
//!   the rules provider, a failed run deprecating the failed step's injections, explicit adds)
//!   gives the same MemoryLog counts and the same trust and counters on both stores.

use std::path::{Path, PathBuf};

use curator_core::Tier;
use curator_engine::curate::{CurateOptions, Decisions, MemoryLog, RunRecord, curate};
use curator_engine::eval::{EvalQuery, load_queries};
use curator_engine::providers::{DecisionProvider, ExplicitProvider, RulesProvider};
use curator_engine::{QueryOptions, RunStep, SuiteContext, query_in};
use curator_pg::import_dir;
use curator_store::index::QueryMode;
use curator_store::{FileStore, FileStoreOptions, ListFilter, Store};

use crate::util::pg_store;

fn eval_set(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../eval").join(name)
}

fn dev_set() -> PathBuf {
    eval_set("dev")
}

/// A temp copy of the dev set's memory (the file store writes its index under the root).
fn dev_copy() -> (tempfile::TempDir, FileStore) {
    set_copy(&dev_set())
}

/// A temp copy of an eval set's memory.
fn set_copy(set: &Path) -> (tempfile::TempDir, FileStore) {
    let dir = tempfile::tempdir().unwrap();
    copy(&set.join("memory"), dir.path());
    let store = FileStore::open(dir.path(), FileStoreOptions::default()).unwrap();
    (dir, store)
}

fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let target = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy(&path, &target);
        } else {
            std::fs::copy(&path, &target).unwrap();
        }
    }
}

fn options(q: &EvalQuery, mode: QueryMode) -> QueryOptions {
    let mut opts = QueryOptions::new(q.product.as_str(), q.test.as_str(), q.query.clone()).unwrap();
    opts.mode = mode;
    if let Some(suite) = &q.suite {
        opts.suite = Some(SuiteContext {
            id: suite.id.clone(),
            tests: Some(suite.tests.clone()),
            position: Some(suite.position),
        });
    }
    opts
}

/// Step texts phrase mode can match: agent-qa matches the whole sanitized step as one phrase,
/// so the dev set's full steps rarely match anything. Three-word runs of every
/// observation's title and first content line do, in and out of their scopes.
fn phrase_texts(store: &dyn Store) -> Vec<String> {
    let mut texts = Vec::new();
    for s in store.list(&ListFilter::default()).unwrap().observations {
        let o = s.observation;
        for source in [o.title.as_str(), o.content.lines().next().unwrap_or("")] {
            let words: Vec<&str> = source.split_whitespace().collect();
            for n in [3] {
                if let Some(w) = words.get(..n) {
                    texts.push(w.join(" "));
                }
            }
        }
    }
    texts.sort();
    texts.dedup();
    texts
}

/// Asserts that every query gives the same terms-mode block and ids on both stores; returns
/// how many blocks are not empty.
fn same_terms_blocks(files: &FileStore, pg: &dyn Store, queries: &[EvalQuery]) -> usize {
    let mut blocks = 0;
    for q in queries {
        let a = query_in(files, &options(q, QueryMode::Terms)).unwrap();
        let b = query_in(pg, &options(q, QueryMode::Terms)).unwrap();
        assert_eq!(a.formatted, b.formatted, "line {}: {:?}", q.line, q.query);
        let ids = |o: &curator_engine::QueryOutcome| -> Vec<String> {
            o.observations.iter().map(|o| o.id.clone()).collect()
        };
        assert_eq!(ids(&a), ids(&b), "line {}: {:?}", q.line, q.query);
        blocks += usize::from(b.formatted.is_some());
    }
    blocks
}

#[test]
fn terms_mode_gives_the_same_memory_context_on_the_train_set() {
    let (_dir, files) = set_copy(&eval_set("train"));
    let (_db, pg) = pg_store();
    import_dir(&pg, files.root(), &mut |_| {}).unwrap();
    let queries = load_queries(&eval_set("train").join("queries.jsonl")).unwrap();
    let blocks = same_terms_blocks(&files, &pg, &queries);
    assert!(blocks >= 100, "the train steps inject memory to compare ({blocks})");
}

#[test]
fn both_modes_give_the_same_memory_context_on_both_stores() {
    let (_dir, files) = dev_copy();
    let (_db, pg) = pg_store();
    import_dir(&pg, files.root(), &mut |_| {}).unwrap();
    let queries = load_queries(&dev_set().join("queries.jsonl")).unwrap();
    let ids = |o: &curator_engine::QueryOutcome| -> Vec<String> {
        o.observations.iter().map(|o| o.id.clone()).collect()
    };
    // Every dev step as written, then title and content phrases in each distinct step context.
    let mut steps: Vec<(EvalQuery, String)> =
        queries.iter().map(|q| (q.clone(), q.query.clone())).collect();
    let mut contexts: Vec<&EvalQuery> = Vec::new();
    for q in &queries {
        let key = |x: &EvalQuery| (x.product.clone(), x.test.clone(), format!("{:?}", x.suite));
        if !contexts.iter().any(|c| key(c) == key(q)) {
            contexts.push(q);
        }
    }
    for text in phrase_texts(&files) {
        for c in &contexts {
            steps.push(((*c).clone(), text.clone()));
        }
    }
    let (mut injected, mut blocks) = (0, 0);
    for (q, text) in &steps {
        let mut q = q.clone();
        q.query = text.clone();
        let a = query_in(&files, &options(&q, QueryMode::Phrase)).unwrap();
        let b = query_in(&pg, &options(&q, QueryMode::Phrase)).unwrap();
        assert_eq!(a.formatted, b.formatted, "line {} with {text:?}", q.line);
        assert_eq!(ids(&a), ids(&b), "line {} with {text:?}", q.line);
        injected += a.observations.len();
        blocks += usize::from(a.formatted.is_some());
    }
    assert!(blocks >= 50, "phrase mode injected something for {blocks} steps only");
    let terms_blocks = same_terms_blocks(&files, &pg, &queries);
    eprintln!(
        "phrase: {n} steps, identical blocks on both stores ({blocks} non-empty, {injected} \
         injections); terms: {m} dev steps, identical blocks ({terms_blocks} non-empty)",
        n = steps.len(),
        m = queries.len()
    );
}

fn run(store: &dyn Store, text: &str, provider: &dyn DecisionProvider) -> MemoryLog {
    let record = RunRecord::from_json(text).unwrap();
    let options = CurateOptions {
        now: Some("2026-04-12T08:00:00Z".parse().unwrap()),
        ..CurateOptions::default()
    };
    curate(store, &record, provider, &options).unwrap()
}

/// Trust and counters of every observation, by id (ids of added observations differ between
/// the two stores, so those are keyed by title).
fn state(store: &dyn Store) -> Vec<String> {
    let mut out: Vec<String> = store
        .list(&ListFilter::default())
        .unwrap()
        .observations
        .into_iter()
        .map(|s| {
            let o = s.observation;
            let key = if o.created.starts_with("2026-04-12") { o.title } else { o.id.to_string() };
            format!("{key} trust={} +{} -{}", o.trust, o.confirmed_count, o.contradicted_count)
        })
        .collect();
    out.sort();
    out
}

/// The same runs on one store: two steps queried with `--run`, a passed run confirmed by the
/// rules provider, a failed run that blames its failed step, then explicit adds.
fn script(store: &dyn Store, queries: &[EvalQuery]) -> Vec<(u64, u64, u64, u64)> {
    let counts = |l: MemoryLog| (l.added, l.confirmed, l.deprecated, l.deleted);
    let mut logs = Vec::new();
    let q0 = &queries[0];
    // Two steps that phrase mode matches: the start of two product observations' titles.
    let filter = ListFilter { tier: Some(Tier::Products), scope: Some(q0.product.clone()) };
    let listing = store.list(&filter).unwrap().observations;
    let step_texts: Vec<String> = listing
        .iter()
        .take(2)
        .map(|s| s.observation.title.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .collect();
    for (run_id, status) in [("r_pass", "passed"), ("r_fail", "failed")] {
        for (step, text) in step_texts.iter().enumerate() {
            let mut q = q0.clone();
            q.query = text.clone();
            let mut opts = options(&q, QueryMode::Phrase);
            opts.min_trust = 0.0;
            opts.run = Some(RunStep { run_id: run_id.into(), step: step as u64 });
            query_in(store, &opts).unwrap();
        }
        let steps = serde_json::json!([
            {"name": step_texts[0], "status": "passed"},
            {"name": step_texts[1], "status": status, "error": (status == "failed").then_some("boom")},
        ]);
        let record = serde_json::json!({"run_id": run_id, "product": q0.product.as_str(),
            "test": {"id": q0.test.as_str(), "name": "dev"}, "status": status, "steps": steps});
        let mut record: RunRecord = RunRecord::from_json(&record.to_string()).unwrap();
        let session = store.load_session(run_id).unwrap().expect("the steps injected memory");
        let by_step = session.injected.into_iter().map(|(s, ids)| (s as usize, ids)).collect();
        record.fill_injected(&by_step);
        let options = CurateOptions {
            now: Some("2026-04-12T08:00:00Z".parse().unwrap()),
            ..CurateOptions::default()
        };
        logs.push(counts(curate(store, &record, &RulesProvider::default(), &options).unwrap()));
    }
    let record = serde_json::json!({"run_id": "r_add", "product": q0.product.as_str(),
        "test": {"id": q0.test.as_str(), "name": "dev"}, "status": "passed",
        "steps": [{"name": "x", "status": "passed"}]});
    let decisions = Decisions::from_json(
        r#"{"decisions": [
            {"action": "add", "title": "Cookie banner covers the footer", "content": "Dismiss it first.", "scope": "product", "reasoning": "seen"},
            {"action": "add", "title": "Login takes two seconds", "content": "Wait for the spinner.", "scope": "test", "reasoning": "seen"}]}"#,
    )
    .unwrap();
    logs.push(counts(run(store, &record.to_string(), &ExplicitProvider::new(decisions))));
    logs
}

#[test]
fn the_same_runs_give_the_same_memory_logs_and_trust_on_both_stores() {
    let (_dir, files) = dev_copy();
    let (_db, pg) = pg_store();
    import_dir(&pg, files.root(), &mut |_| {}).unwrap();
    assert_eq!(state(&files), state(&pg), "same data before");
    let queries = load_queries(&dev_set().join("queries.jsonl")).unwrap();
    let on_files = script(&files, &queries);
    let on_pg = script(&pg, &queries);
    assert_eq!(on_files, on_pg, "(added, confirmed, deprecated, deleted) per run");
    assert_eq!(on_files[2], (2, 0, 0, 0));
    assert!(
        on_files[0].1 > 0 && on_files[1].2 > 0,
        "the script confirms and deprecates: {on_files:?}"
    );
    assert_eq!(state(&files), state(&pg), "same trust and counters after");
    // What each run reported is kept on both stores alike (the UI's run page reads it).
    for run_id in ["r_pass", "r_fail", "r_add"] {
        let kept = curator_engine::curate::load_kept_run(&pg, run_id).unwrap();
        let kept = kept.unwrap_or_else(|| panic!("{run_id} kept on PostgreSQL"));
        assert_eq!(
            Some(&kept),
            curator_engine::curate::load_kept_run(&files, run_id).unwrap().as_ref()
        );
    }
    let failed = curator_engine::curate::load_kept_run(&pg, "r_fail").unwrap().unwrap();
    assert_eq!(
        (failed.status.as_str(), failed.steps[1].error.as_deref()),
        ("failed", Some("boom"))
    );
    assert!(!failed.steps[0].injected.is_empty(), "with what was injected into each step");
}
