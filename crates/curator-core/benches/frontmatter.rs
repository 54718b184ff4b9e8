//! Parse time of the largest frontmatters a memory root may hold (issue 13 item 4): every file
//! under the 1 MiB size cap must parse in under 50 ms, so one hostile file cannot stall `lint`,
//! a query or the server.
//!
//! `cargo bench -p curator-core --bench frontmatter` prints, per case, the file size, the
//! median CPU time of the parsing thread (what the budget is about: on a machine shared with
//! other builds, wall-clock time mostly measures the run queue) and the median and fastest
//! wall-clock time, and exits 1 when a median CPU time is over the budget.
//! The cases are the quadratic one the issue found (40,000 and 80,000 keys) and the shapes
//! whose cost grows with size in some part of the parser: one huge scalar, a huge flow
//! collection on one line and over many lines, deep nesting repeated, a huge body, and a text
//! whose lone surrogate escapes make the loader parse it again.
#![allow(clippy::print_stdout)]

use std::hint::black_box;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use curator_core::codec::parse_observation;

const ID: &str = "obs_alpha-beta-gamma-delta-epsilon-zeta";
const CAP: usize = 1 << 20;
const BUDGET: Duration = Duration::from_millis(50);
/// Runs per case; `FRONTMATTER_RUNS` overrides it (a slow baseline needs fewer).
const RUNS: usize = 15;

/// A valid observation whose frontmatter ends with `extra` (itself ending in a newline).
fn file(extra: &str, body: &str) -> String {
    format!(
        "---\nid: {ID}\ntitle: Login needs two clicks\ntrust: 0.5\n\
         created: 2026-04-10T12:00:00.000Z\nlast_confirmed: 2026-04-10T12:00:00.000Z\n\
         confirmed_count: 0\ncontradicted_count: 0\nsource_test: t_x\n{extra}---\n{body}\n"
    )
}

fn keys(n: usize, value: &str) -> String {
    (0..n).map(|i| format!("k{i:05}: {value}\n")).collect()
}

/// One item of a flow sequence nested `depth` deep: `[[[a]]], `.
fn nested(depth: usize) -> String {
    format!("{}a{}, ", "[".repeat(depth), "]".repeat(depth))
}

/// A suite snapshot of `n` tests.
fn snapshot(n: usize) -> String {
    let entries: String = (0..n)
        .map(|i| format!("  - test: tests/web/{i:04}-checkout.yaml\n    id: t_lake-mint-harbor-kelp-river-moss-glade-cedar-iris-c{i:04}\n"))
        .collect();
    format!("position: 0\nsuite_snapshot:\n{entries}")
}

fn cases() -> Vec<(&'static str, String)> {
    let fill = |unit: &str| unit.repeat((CAP - 400) / unit.len());
    // The largest frontmatters within the node budget (20,000), next to the over-budget ones.
    let at_budget = 19_900;
    vec![
        ("9,950 keys (at the node budget)", file(&keys(at_budget / 2, "some value"), "body")),
        (
            "19,900 flow items (at the budget)",
            file(&format!("x: [{}a]\n", "a, ".repeat(at_budget - 1)), "body"),
        ),
        ("snapshot of 3,980 tests (at the budget)", file(&snapshot(at_budget / 5), "body")),
        ("40,000 keys", file(&keys(40_000, "some value"), "body")),
        ("80,000 keys", file(&keys(80_000, "1"), "body")),
        ("one 1 MiB plain scalar", file(&format!("x: {}\n", fill("word ")), "body")),
        ("flow sequence on one line", file(&format!("x: [{}a]\n", fill("a, ")), "body")),
        ("flow sequence over many lines", file(&format!("x: [\n{}  a]\n", fill("  a,\n")), "body")),
        ("nesting 60 deep, repeated", file(&format!("x: [{}a]\n", fill(&nested(60))), "body")),
        ("1 MiB body", file("", &fill("Body text line.\n"))),
        ("lone surrogate escapes", file(&format!("x: \"{}\"\n", fill("\\ud800 word ")), "body")),
    ]
}

/// CPU time this thread has run so far (`CLOCK_THREAD_CPUTIME_ID`).
fn thread_cpu_time() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// Wall-clock and CPU time of each run, each sorted.
fn measure(text: &str) -> (Vec<Duration>, Vec<Duration>) {
    let runs = std::env::var("FRONTMATTER_RUNS").ok().and_then(|r| r.parse().ok()).unwrap_or(RUNS);
    let (mut wall, mut cpu): (Vec<Duration>, Vec<Duration>) = (0..runs.max(1))
        .map(|_| {
            let (started, cpu_started) = (Instant::now(), thread_cpu_time());
            let _ = black_box(parse_observation(black_box(text), ID));
            (started.elapsed(), thread_cpu_time() - cpu_started)
        })
        .unzip();
    wall.sort();
    cpu.sort();
    (wall, cpu)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() -> ExitCode {
    // `cargo bench -p curator-core --bench frontmatter -- keys` runs the cases naming "keys".
    let filters: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    let mut over = 0;
    println!(
        "{:<32} {:>8} {:>10} {:>10} {:>10}  verdict (budget: median CPU time {} ms)",
        "case",
        "bytes",
        "cpu med",
        "wall med",
        "wall min",
        BUDGET.as_millis()
    );
    for (name, text) in cases() {
        if !filters.is_empty() && !filters.iter().any(|f| name.contains(f.as_str())) {
            continue;
        }
        assert!(text.len() <= CAP, "{name} is {} bytes, over the cap", text.len());
        let outcome = parse_observation(&text, ID);
        let (wall, cpu) = measure(&text);
        let median = cpu[cpu.len() / 2];
        let verdict = match (&outcome, median <= BUDGET) {
            (_, false) => {
                over += 1;
                "OVER BUDGET".to_owned()
            }
            (Ok(_), true) => "ok: parsed".to_owned(),
            (Err(e), true) => {
                format!("ok: refused ({})", e.to_string().chars().take(60).collect::<String>())
            }
        };
        println!(
            "{name:<32} {:>8} {:>8.2}ms {:>8.2}ms {:>8.2}ms  {verdict}",
            text.len(),
            ms(median),
            ms(wall[wall.len() / 2]),
            ms(wall[0]),
        );
    }
    if over > 0 { ExitCode::FAILURE } else { ExitCode::SUCCESS }
}
