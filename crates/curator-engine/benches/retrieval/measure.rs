//! What the retrieval benchmark measures for one corpus size, and how (issue 3 "Must show").
//!
//! Invariant: curator and agent-qa answer the very same steps over the very same files, test by
//! test in one loop; agent-qa's table build is charged to the steps of the test it was built for
//! (it builds one per test, §3.1), and curator's per-step figure includes its freshness check
//! (`MemoryIndex::search` on a watching index drains inotify and refreshes changed folders
//! before searching, as a long-lived `FileStore` does), so neither side is timed doing less
//! than it does in production.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use curator_core::codec::{parse_observation, write_observation};
use curator_engine::QueryOptions;
use curator_engine::scopes::scope_selectors;
use curator_store::index::{
    DEFAULT_KEEP_RATIO, DEFAULT_MIN_RELEVANCE, MemoryIndex, QueryMode, ScopeDir, SearchRequest,
};

use crate::agentqa::{AgentQaIndex, list_observations, scope_dirs};
use crate::corpus::{Corpus, TestRun};
use crate::report::Samples;

/// agent-qa's effective `minTrust` and `maxInjections` (§2).
const MIN_TRUST: f64 = 0.3;
const MAX_INJECTIONS: usize = 3;

/// How much work one benchmark run does.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub(crate) sizes: Vec<usize>,
    /// Test runs per size, and steps per test run.
    pub(crate) runs: usize,
    pub(crate) steps: usize,
    /// Measured passes over all steps (after one warm-up pass).
    pub(crate) passes: usize,
    /// Fresh `curator query` processes spawned per size.
    pub(crate) process_runs: usize,
    /// In-process `curator_engine::query` calls per size.
    pub(crate) engine_calls: usize,
    /// One-file changes per refresh measurement.
    pub(crate) changes: usize,
    pub(crate) curator_bin: Option<PathBuf>,
    pub(crate) smoke: bool,
    pub(crate) seed: u64,
}

impl Plan {
    pub(crate) fn full() -> Self {
        Plan {
            sizes: vec![1_000, 10_000, 100_000],
            runs: 40,
            steps: 8,
            passes: 2,
            process_runs: 50,
            engine_calls: 100,
            changes: 5,
            curator_bin: None,
            smoke: false,
            seed: 42,
        }
    }

    /// `cargo test --benches`: a small corpus, enough to prove the engines agree.
    pub(crate) fn smoke() -> Self {
        Plan {
            sizes: vec![400],
            runs: 8,
            steps: 6,
            passes: 1,
            process_runs: 0,
            engine_calls: 3,
            changes: 1,
            smoke: true,
            ..Plan::full()
        }
    }
}

/// Everything measured at one size.
#[derive(Debug, Default)]
pub(crate) struct SizeResult {
    pub(crate) size: usize,
    pub(crate) runs: usize,
    pub(crate) passes: usize,
    pub(crate) served: usize,
    pub(crate) tests: usize,
    pub(crate) suites: usize,
    pub(crate) generate: Duration,
    /// Rows agent-qa's per-test tables held, summed (for the average scope size).
    pub(crate) aq_rows: usize,
    pub(crate) aq_builds: usize,
    pub(crate) full_build: Duration,
    pub(crate) refresh_idle_root: Samples,
    pub(crate) refresh_change_root: Samples,
    pub(crate) refresh_change_dirs: Samples,
    pub(crate) query_after_change: Samples,
    pub(crate) aq_build: Samples,
    pub(crate) aq_query: Samples,
    pub(crate) aq_step: Samples,
    pub(crate) aq_first: Samples,
    pub(crate) cur_terms: Samples,
    pub(crate) cur_phrase: Samples,
    pub(crate) cur_terms_now: Samples,
    pub(crate) cur_phrase_now: Samples,
    pub(crate) cur_fresh_check: Samples,
    pub(crate) engine_query: Samples,
    pub(crate) process: Samples,
    /// The same fresh processes while a `curator serve` runs for the root (query socket).
    pub(crate) process_served: Samples,
    /// Fresh processes on `size` observations all in one product folder, without and with a
    /// server: the case where `stat`ing the step's folders costs the most.
    pub(crate) one_folder: Samples,
    pub(crate) one_folder_served: Samples,
    pub(crate) process_note: Option<String>,
    pub(crate) floor_root_read: Duration,
    pub(crate) floor_root_parse: Duration,
    pub(crate) floor_scope: Samples,
    pub(crate) steps: usize,
    pub(crate) injected_terms: usize,
    pub(crate) injected_phrase: usize,
    pub(crate) injected_aq: usize,
    pub(crate) agree: usize,
    pub(crate) disagreements: Vec<String>,
}

/// Where one size's corpus lives: a temporary folder, or a kept one.
#[derive(Debug)]
enum Workdir {
    Temp(tempfile::TempDir),
    Kept(PathBuf),
}

impl Workdir {
    fn path(&self) -> &Path {
        match self {
            Workdir::Temp(t) => t.path(),
            Workdir::Kept(p) => p,
        }
    }
}

fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let start = Instant::now();
    let out = f();
    (out, start.elapsed())
}

fn request(run: &TestRun, text: &str, mode: QueryMode) -> SearchRequest {
    SearchRequest {
        scopes: scope_selectors(&run.product, &run.test, run.suite.as_ref()),
        text: text.to_owned(),
        mode,
        min_trust: MIN_TRUST,
        max_results: MAX_INJECTIONS,
        min_relevance: DEFAULT_MIN_RELEVANCE,
        keep_ratio: DEFAULT_KEEP_RATIO,
    }
}

fn dirs_of(run: &TestRun) -> Vec<ScopeDir> {
    scope_selectors(&run.product, &run.test, run.suite.as_ref())
        .into_iter()
        .map(|s| s.dir)
        .collect()
}

fn read_parse(path: &Path) -> bool {
    let Ok(bytes) = std::fs::read(path) else { return false };
    let text = String::from_utf8_lossy(&bytes);
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
    parse_observation(&text, stem).is_ok()
}

/// Rewrites one observation with another trust, as a curator decision would.
fn change_one(path: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
    let mut obs = parse_observation(&text, stem).map_err(|e| format!("{}: {e}", path.display()))?;
    obs.trust = if obs.trust >= 0.5 { obs.trust - 0.05 } else { obs.trust + 0.05 };
    let text = write_observation(&obs).map_err(|e| e.to_string())?;
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

fn ierr(e: impl std::fmt::Display) -> String {
    format!("curator index: {e}")
}

/// Generates the corpus of `size` observations and measures everything on it.
pub(crate) fn run_size(plan: &Plan, size: usize) -> Result<SizeResult, String> {
    // `CURATOR_BENCH_DIR` keeps the corpus (and the index) for profiling by hand afterwards.
    let tmp = match std::env::var_os("CURATOR_BENCH_DIR") {
        Some(dir) => Workdir::Kept(PathBuf::from(dir).join(size.to_string())),
        None => Workdir::Temp(tempfile::tempdir().map_err(|e| e.to_string())?),
    };
    let root = tmp.path().join("memory");
    if root.exists() {
        return Err(format!("{} already exists; remove it first", root.display()));
    }
    let (corpus, generate) = timed(|| Corpus::generate(&root, size, plan.seed));
    let corpus = corpus.map_err(|e| format!("generating the corpus: {e}"))?;
    let runs = corpus.test_runs(plan.runs, plan.steps, plan.seed);
    let mut r = SizeResult {
        size,
        runs: runs.len(),
        passes: plan.passes,
        tests: corpus.tests.len(),
        suites: corpus.suites.len(),
        generate,
        ..SizeResult::default()
    };
    eprintln!("  generated in {generate:?}; building curator's index…");

    // The floor: what merely reading (and parsing) the files costs.
    r.floor_root_read =
        timed(|| corpus.files.iter().filter(|f| std::fs::read(root.join(f)).is_ok()).count()).1;
    r.floor_root_parse =
        timed(|| corpus.files.iter().filter(|f| read_parse(&root.join(f))).count()).1;

    let (index, full_build) = timed(|| MemoryIndex::open(&root));
    // What a long-lived store keeps (`FileStore`): the freshness check is an inotify drain.
    let index = index.map_err(ierr)?.watching();
    if !index.is_watching() {
        return Err("folder watching is unavailable here (inotify)".into());
    }
    r.full_build = full_build;
    r.served = index.served_count().map_err(ierr)?;
    eprintln!("  index built in {full_build:?}; querying…");

    // Warm-up: the index's pages and the files' metadata are in memory, as in a running harness.
    for run in &runs {
        for step in &run.steps {
            for mode in [QueryMode::Terms, QueryMode::Phrase] {
                index.search(&request(run, step, mode)).map_err(ierr)?;
            }
        }
    }
    for pass in 0..plan.passes {
        for run in &runs {
            measure_run(&mut r, &root, &index, run, pass == 0)?;
        }
    }

    for i in 0..plan.engine_calls {
        let run = &runs[i % runs.len()];
        let step = &run.steps[(i / runs.len()) % run.steps.len()];
        let mut opts = QueryOptions::new(run.product.as_str(), run.test.as_str(), step.as_str())
            .map_err(|e| e.to_string())?;
        opts.suite = run.suite.clone();
        let (out, d) = timed(|| curator_engine::query(&root, &opts));
        out.map_err(|e| e.to_string())?;
        r.engine_query.push(d);
    }

    match &plan.curator_bin {
        Some(bin) if plan.process_runs > 0 => {
            fresh_processes(&mut r, plan, bin, tmp.path(), &runs)?
        }
        Some(_) => {}
        None => {
            r.process_note =
                Some("no `curator` binary (run `cargo build --release --bin curator`)".into())
        }
    }

    refreshes(&mut r, plan, &root, &index, &runs)?;
    Ok(r)
}

/// One test run: agent-qa builds its table and answers the steps; curator answers the same
/// steps from its warm index, in both modes.
fn measure_run(
    r: &mut SizeResult,
    root: &Path,
    index: &MemoryIndex,
    run: &TestRun,
    record: bool,
) -> Result<(), String> {
    let floor = timed(|| {
        for (dir, _) in scope_dirs(root, run) {
            for name in list_observations(&dir) {
                read_parse(&dir.join(name));
            }
        }
    });
    r.floor_scope.push(floor.1);

    let (aq, build) = timed(|| AgentQaIndex::build(root, run));
    let aq = aq.map_err(|e| format!("agent-qa build: {e}"))?;
    r.aq_build.push(build);
    r.aq_rows += aq.rows;
    r.aq_builds += 1;
    let share = build / run.steps.len() as u32;
    let mut aq_answers = Vec::with_capacity(run.steps.len());
    for (i, step) in run.steps.iter().enumerate() {
        let (ids, q) = timed(|| aq.query(step, MIN_TRUST, MAX_INJECTIONS));
        r.aq_query.push(q);
        r.aq_step.push(q + share);
        if i == 0 {
            r.aq_first.push(build + q);
        }
        aq_answers.push(ids);
    }
    drop(aq);

    r.cur_fresh_check.push(timed(|| index.refresh_dirs(&dirs_of(run))).1);
    for (step, aq_ids) in run.steps.iter().zip(&aq_answers) {
        let terms_req = request(run, step, QueryMode::Terms);
        let phrase_req = request(run, step, QueryMode::Phrase);
        let (terms, d) = timed(|| index.search(&terms_req));
        r.cur_terms.push(d);
        let (phrase, d) = timed(|| index.search(&phrase_req));
        r.cur_phrase.push(d);
        let (now, d) = timed(|| index.search_now(&terms_req));
        now.map_err(ierr)?;
        r.cur_terms_now.push(d);
        let (now, d) = timed(|| index.search_now(&phrase_req));
        now.map_err(ierr)?;
        r.cur_phrase_now.push(d);
        let (terms, phrase) = (terms.map_err(ierr)?, phrase.map_err(ierr)?);
        if !record {
            continue;
        }
        r.steps += 1;
        r.injected_terms += usize::from(!terms.is_empty());
        r.injected_phrase += usize::from(!phrase.is_empty());
        r.injected_aq += usize::from(!aq_ids.is_empty());
        let ours: Vec<(String, f64)> = phrase.iter().map(|h| (h.id.clone(), h.trust)).collect();
        if ours == *aq_ids {
            r.agree += 1;
        } else if r.disagreements.len() < 5 {
            r.disagreements.push(format!("{step:?}: curator {ours:?}, agent-qa {aq_ids:?}"));
        }
    }
    Ok(())
}

/// `curator query` as a fresh process per step, against the index the runs above warmed.
fn fresh_processes(
    r: &mut SizeResult,
    plan: &Plan,
    bin: &Path,
    tmp: &Path,
    runs: &[TestRun],
) -> Result<(), String> {
    let root = tmp.join("memory");
    let mut commands = Vec::with_capacity(runs.len());
    for (i, run) in runs.iter().enumerate() {
        let mut args: Vec<String> = vec![
            "--root".into(),
            root.display().to_string(),
            "query".into(),
            "--product".into(),
            run.product.as_str().into(),
            "--test".into(),
            run.test.as_str().into(),
        ];
        if let Some(s) = &run.suite {
            let file = tmp.join(format!("suite-tests-{i}.json"));
            let json = serde_json::to_string(s.tests.as_deref().unwrap_or_default())
                .map_err(|e| e.to_string())?;
            std::fs::write(&file, json).map_err(|e| e.to_string())?;
            args.extend(["--suite".into(), s.id.as_str().into()]);
            args.extend(["--suite-tests".into(), file.display().to_string()]);
            if let Some(p) = s.position {
                args.extend(["--position".into(), p.to_string()]);
            }
        }
        commands.push(args);
    }
    let spawn = |args: &[String], step: &str| -> Result<Duration, String> {
        let start = Instant::now();
        let out = Command::new(bin)
            .current_dir(tmp)
            .args(args)
            .arg("--")
            .arg(step)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output()
            .map_err(|e| format!("spawning {}: {e}", bin.display()))?;
        let d = start.elapsed();
        if !out.status.success() {
            return Err(format!(
                "{} {args:?} failed: {}",
                bin.display(),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        Ok(d)
    };
    spawn(&commands[0], &runs[0].steps[0])?;
    for i in 0..plan.process_runs {
        let k = i % runs.len();
        let step = &runs[k].steps[(i / runs.len()) % runs[k].steps.len()];
        r.process.push(spawn(&commands[k], step)?);
    }
    let server = Served::start(bin, tmp, &root)?;
    spawn(&commands[0], &runs[0].steps[0])?;
    for i in 0..plan.process_runs {
        let k = i % runs.len();
        let step = &runs[k].steps[(i / runs.len()) % runs[k].steps.len()];
        r.process_served.push(spawn(&commands[k], step)?);
    }
    drop(server);
    one_folder(r, plan, bin, tmp)
}

/// A `curator serve` child answering fresh queries of one root; killed on drop.
struct Served(std::process::Child);

impl Served {
    fn start(bin: &Path, dir: &Path, root: &Path) -> Result<Served, String> {
        let child = Command::new(bin)
            .current_dir(dir)
            .arg("--root")
            .arg(root)
            .args(["serve", "--listen", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("spawning curator serve: {e}"))?;
        let served = Served(child);
        let socket = root.join(".curator").join("query.sock");
        let start = Instant::now();
        while !socket.exists() {
            if start.elapsed() > Duration::from_secs(60) {
                return Err("curator serve did not open its query socket".into());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(served)
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The issue-14 case: `size` observations in one product folder, fresh `curator query`
/// processes without and with a server.
fn one_folder(r: &mut SizeResult, plan: &Plan, bin: &Path, tmp: &Path) -> Result<(), String> {
    let root = tmp.join("one-folder");
    let folder = root.join("products").join("big");
    std::fs::create_dir_all(&folder).map_err(|e| e.to_string())?;
    const WORDS: &[&str] = &[
        "login", "button", "modal", "cart", "checkout", "export", "invoice", "dialog", "spinner",
        "toast", "banner", "search", "filter", "table", "upload", "avatar", "profile", "settings",
        "password", "email", "payment", "card", "shipping", "order", "report", "chart", "menu",
    ];
    let mut rng = crate::corpus::Rng::new(plan.seed);
    for i in 0..r.size {
        let id = format!("obs_{i:06}-lamp-lake-moon-reef-sand-tide-wave-wind-yarn");
        let title: Vec<&str> = (0..5).map(|_| *rng.pick(WORDS)).collect();
        let body: Vec<&str> = (0..14).map(|_| *rng.pick(WORDS)).collect();
        let text = format!(
            "---\nid: {id}\ntitle: {}\ntrust: 0.8\ncreated: 2026-04-10T12:00:00.000Z\n\
             last_confirmed: 2026-04-10T12:00:00.000Z\nconfirmed_count: 0\n\
             contradicted_count: 0\nsource_test: t_a\n---\n{}.\n",
            title.join(" "),
            body.join(" ")
        );
        std::fs::write(folder.join(format!("{id}.md")), text).map_err(|e| e.to_string())?;
    }
    let query = |step: &str| -> Result<Duration, String> {
        let start = Instant::now();
        let out = Command::new(bin)
            .current_dir(tmp)
            .arg("--root")
            .arg(&root)
            .args(["query", "--product", "big", "--test", "t_a", "--", step])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map_err(|e| e.to_string())?;
        let d = start.elapsed();
        if !out.success() {
            return Err(format!("curator query on the one-folder root failed: {out}"));
        }
        Ok(d)
    };
    let steps =
        ["Click the export button", "Open the payment card modal", "Search the order table"];
    query(steps[0])?; // builds the index
    for i in 0..plan.process_runs {
        r.one_folder.push(query(steps[i % steps.len()])?);
    }
    let server = Served::start(bin, tmp, &root)?;
    query(steps[0])?;
    for i in 0..plan.process_runs {
        r.one_folder_served.push(query(steps[i % steps.len()])?);
    }
    drop(server);
    Ok(())
}

/// Index maintenance: whole-root refresh with and without a change, the step's folders after a
/// change, and the first query after a change.
fn refreshes(
    r: &mut SizeResult,
    plan: &Plan,
    root: &Path,
    index: &MemoryIndex,
    runs: &[TestRun],
) -> Result<(), String> {
    for k in 0..plan.changes {
        let run = &runs[k % runs.len()];
        let product_dir = root.join("products").join(run.product.as_str());
        let names = list_observations(&product_dir);
        if names.is_empty() {
            continue;
        }
        let pick = |j: usize| product_dir.join(&names[(k * 3 + j) % names.len()]);
        r.refresh_idle_root.push(timed(|| index.refresh()).1);

        change_one(&pick(0))?;
        let (stats, d) = timed(|| index.refresh());
        let stats = stats.map_err(ierr)?;
        if stats.updated != 1 {
            return Err(format!("refresh after one change updated {} files", stats.updated));
        }
        r.refresh_change_root.push(d);

        change_one(&pick(1))?;
        let (stats, d) = timed(|| index.refresh_dirs(&dirs_of(run)));
        if stats.map_err(ierr)?.updated != 1 {
            return Err("refresh of the step's folders missed the change".into());
        }
        r.refresh_change_dirs.push(d);

        change_one(&pick(2))?;
        let req = request(run, &run.steps[0], QueryMode::Terms);
        let (hits, d) = timed(|| index.search(&req));
        hits.map_err(ierr)?;
        r.query_after_change.push(d);
    }
    Ok(())
}
