//! Retrieval benchmark (issue 3 "Must show"; agent-qa-memory §3): curator's index and per-step
//! query against agent-qa's engine rebuilt on SQLite FTS5, side by side on the same corpora.
//!
//! ```text
//! cargo build --release --bin curator          # for the fresh-process rows
//! CURATOR_BENCH_SIZES=1k,10k,100k cargo bench -p curator-engine --bench retrieval
//! ```
//!
//! Sizes come from `CURATOR_BENCH_SIZES` (default `1k,10k,100k`); `CURATOR_BENCH_OUT=FILE` also
//! writes the markdown there; `CURATOR_BENCH_DIR=DIR` keeps each corpus in `DIR/<size>/memory`
//! for profiling; `CURATOR_BIN` overrides the `curator` binary (default: the one next to this
//! bench's `deps/` folder). Without cargo's `--bench` flag (`cargo test --benches`) it runs
//! a small smoke pass that fails if curator's phrase mode and agent-qa disagree on any step.
//!
//! Invariant: every engine answers the same step queries over the same files in one process
//! run, interleaved test by test, so page cache and CPU state are shared fairly; agent-qa's
//! per-test build is measured, not estimated, and is charged to that test's steps.

mod agentqa;
mod corpus;
mod measure;
mod report;
mod summary;

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::measure::{Plan, SizeResult};

fn parse_size(s: &str) -> Option<usize> {
    let s = s.trim().to_ascii_lowercase();
    let (num, mul) = match s.strip_suffix('k') {
        Some(n) => (n, 1_000),
        None => (s.as_str(), 1),
    };
    num.parse::<usize>().ok().map(|n| n * mul).filter(|&n| n > 0)
}

fn plan_from_env() -> Result<Plan, String> {
    let bench = std::env::args().any(|a| a == "--bench");
    if !bench {
        return Ok(Plan::smoke());
    }
    let sizes_text = std::env::var("CURATOR_BENCH_SIZES").unwrap_or_else(|_| "1k,10k,100k".into());
    let sizes = sizes_text
        .split(',')
        .map(|s| parse_size(s).ok_or_else(|| format!("CURATOR_BENCH_SIZES: bad size {s:?}")))
        .collect::<Result<Vec<_>, _>>()?;
    let curator_bin = match std::env::var_os("CURATOR_BIN") {
        Some(p) => Some(PathBuf::from(p)),
        None => std::env::current_exe()
            .ok()
            .and_then(|exe| Some(exe.parent()?.parent()?.join("curator")))
            .filter(|p| p.is_file()),
    };
    Ok(Plan { sizes, curator_bin, ..Plan::full() })
}

fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|s| s.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!("{cores} cores, {cpu}")
}

fn run() -> Result<(), String> {
    let plan = plan_from_env()?;
    let sqlite = agentqa::check_fts5()?;
    let mut out = String::new();
    let mut results: Vec<SizeResult> = Vec::new();
    for &size in &plan.sizes {
        eprintln!("retrieval bench: {size} observations…");
        let result = measure::run_size(&plan, size)?;
        if plan.smoke {
            result.check_agreement()?;
            eprintln!("smoke: {size} observations, phrase mode agrees with agent-qa on every step");
            continue;
        }
        out.push_str(&result.markdown());
        out.push('\n');
        results.push(result);
    }
    if plan.smoke {
        return Ok(());
    }
    let mut doc = format!(
        "Machine: {}. SQLite {sqlite} (rusqlite bundled, FTS5). Release build.\n\n",
        machine()
    );
    doc.push_str(&summary::legend(plan.process_runs));
    doc.push_str(&out);
    doc.push_str(&summary::targets(&results));
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(doc.as_bytes()).map_err(|e| e.to_string())?;
    if let Some(path) = std::env::var_os("CURATOR_BENCH_OUT") {
        let path = PathBuf::from(path);
        std::fs::write(&path, &doc).map_err(|e| format!("writing {}: {e}", path.display()))?;
    }
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("retrieval bench failed: {e}");
            ExitCode::FAILURE
        }
    }
}
