//! One curator pass over a big generated raw.md (issue 16 item 6: "a 50 MB raw.md in ≤ 20 s and
//! ≤ 100 MiB peak").
//!
//! Plain bench binary (no criterion): a pass over 50 MB takes seconds, so one run under
//! `/usr/bin/time -v` gives wall time, CPU time and peak RSS together, and the same command runs
//! against an older tree for the before/after figures of BENCHMARKS.md. The input is generated
//! deterministically (fixed seed, fixed clock), so every tree sees the same bytes:
//!
//! ```text
//! cargo bench -p curator-harness --bench pass -- --generate target/harness-bench --mb 50
//! /usr/bin/time -v target/release/deps/pass-<hash> --run target/harness-bench
//! ```
//!
//! `--generate` writes `DIR/shop/.harness/memory/raw.md` (and a small project beside it) and
//! exits; `--run` runs one pass on it and prints the `CURATED …` line and the wall time. A pass
//! truncates raw.md, so `--run` copies a pristine `raw.md.orig` back first. Only the API every
//! version of the crate has is used (`Harness::open`, `curate`), so this file builds unchanged
//! against the tree before issue 16.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use curator_harness::{Harness, HarnessOptions, Timestamp, Trigger};

/// A small deterministic generator (xorshift64*): the bench needs the same bytes on every tree
/// and every machine, not statistical quality.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    /// Skewed pick: small indices are much more likely (popular lessons recur across features).
    fn skewed(&mut self, n: usize) -> usize {
        let a = self.below(n);
        let b = self.below(n);
        let c = self.below(n);
        a.min(b).min(c)
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const COMPONENTS: &[&str] = &[
    "checkout",
    "cart",
    "login",
    "signup",
    "search",
    "invoice",
    "refund",
    "webhook",
    "profile",
    "admin",
    "inventory",
    "catalog",
    "payment",
    "shipping",
    "coupon",
    "review",
    "upload",
    "export",
];
const TOOLS: &[&str] = &[
    "psql",
    "pnpm",
    "node --test",
    "jq -e",
    "curl -sf",
    "git stash",
    "docker compose",
    "sqlite3",
    "playwright",
    "vitest",
    "tsc --noEmit",
    "drizzle-kit",
    "redis-cli",
    "make -j1",
];
const OBJECTS: &[&str] = &[
    "the seed script",
    "the migration",
    "the fixture loader",
    "the env file",
    "the lockfile",
    "the webhook secret",
    "the session cookie",
    "the test database",
    "the cache",
    "the queue",
    "the feature flag",
    "the build output",
    "the snapshot",
    "the worker pool",
];
const EVENTS: &[&str] = &[
    "the schema changes",
    "the seed finishes",
    "the server restarts",
    "a retry",
    "the deploy",
    "the e2e suite",
    "the first request",
    "the cache warms",
    "the lock is released",
];
const WORDS: &[&str] = &[
    "amber", "basalt", "cobalt", "delta", "ember", "fjord", "granite", "harbor", "indigo",
    "jasper", "kelp", "lumen", "marble", "nectar", "onyx", "pewter", "quartz", "russet", "sable",
    "tundra", "umber", "vellum", "willow", "xenon", "yarrow", "zephyr",
];
const ROLES: &[&str] =
    &["architect", "documenter", "plan-reviewer", "ui-qa", "product", "crosscheck"];

fn fid(rng: &mut Rng) -> String {
    format!("F-{:03}", 1 + rng.below(400))
}

fn trick(rng: &mut Rng) -> String {
    let n = rng.skewed(600);
    let (tool, obj, ev) =
        (TOOLS[n % TOOLS.len()], OBJECTS[(n / 3) % OBJECTS.len()], EVENTS[(n / 7) % EVENTS.len()]);
    format!("{tool} needs {obj} refreshed after {ev} (variant {})", n / 50)
}

fn lesson(rng: &mut Rng) -> String {
    let n = rng.skewed(3000);
    let verb =
        ["never touch", "always reload", "do not cache", "must reset", "avoid mocking"][n % 5];
    format!(
        "{verb} {} before {} in the {} flow, case {}",
        OBJECTS[(n / 5) % OBJECTS.len()],
        EVENTS[(n / 11) % EVENTS.len()],
        COMPONENTS[(n / 13) % COMPONENTS.len()],
        n / 200
    )
}

fn prose(rng: &mut Rng) -> String {
    let c = rng.pick(COMPONENTS);
    format!(
        "the {c} handler reads {}_{}_KEY at import time and the {} {} module caches it",
        rng.pick(WORDS).to_uppercase(),
        rng.pick(WORDS).to_uppercase(),
        rng.pick(WORDS),
        rng.pick(WORDS)
    )
}

/// One raw.md entry (one or more lines, newline-terminated).
fn entry(rng: &mut Rng, ts: &str, out: &mut Vec<u8>) {
    let f = fid(rng);
    let roll = rng.below(100);
    let line = match roll {
        0..=29 => {
            let what = match rng.below(4) {
                0 => format!("Implemented endpoint {}", rng.below(5000)),
                1 => format!("started {f} {}", rng.pick(COMPONENTS)),
                2 => "done".to_string(),
                _ => format!("working on the {} page", rng.pick(COMPONENTS)),
            };
            format!("[{ts}] worker {f} -: {what}")
        }
        30..=41 => format!("[{ts}] worker {f} TRICK: {}", trick(rng)),
        42..=51 => format!("[{ts}] worker {f} -: {}", lesson(rng)),
        52..=61 => format!("[{ts}] validator {f} -: {f} verified via curl + DB row inspection"),
        62..=65 => format!(
            "[{ts}] validator {f} -: the {} test fails when {} runs twice",
            rng.pick(COMPONENTS),
            rng.pick(TOOLS)
        ),
        66..=73 => format!("[{ts}] {} {f} -: {}", rng.pick(&["worker", "debugger"]), prose(rng)),
        74..=77 => format!(
            "[{ts}] debugger {f} -: Root cause of the flaky {} test: {}",
            rng.pick(COMPONENTS),
            prose(rng)
        ),
        78..=80 => format!(
            "[{ts}] planner - -: DECISION: keep {} behind a flag because {} is not ready",
            rng.pick(COMPONENTS),
            rng.pick(COMPONENTS)
        ),
        81..=82 => format!(
            "[{ts}] orchestrator {f} -: escalated after {} worker attempts: {} times out",
            2 + rng.below(5),
            rng.pick(COMPONENTS)
        ),
        83..=85 => {
            let when = &ts[..16].replace('T', " ");
            format!("- [{when}] worker {f} note: {}", prose(rng))
        }
        86..=87 => format!(
            "[{ts}] worker {f} -: src/{}/handler.ts:{} must close the pool in afterAll",
            rng.pick(COMPONENTS),
            1 + rng.below(300)
        ),
        88..=89 => format!(
            "## monitor {ts}\n- workers: {} running\n- queue: {} todo\n- cost: ${}.{:02}",
            1 + rng.below(4),
            rng.below(30),
            rng.below(40),
            rng.below(100)
        ),
        90..=91 => {
            // Latin-1 text pasted into a log: not UTF-8, must survive byte for byte.
            out.extend_from_slice(format!("[{ts}] {} {f} -: caf", rng.pick(ROLES)).as_bytes());
            out.extend_from_slice(b"\xe9 cr\xe8me config needs the \xff marker kept\n");
            return;
        }
        _ => format!("[{ts}] {} - -: {}", rng.pick(ROLES), lesson(rng)),
    };
    out.extend_from_slice(line.as_bytes());
    out.push(b'\n');
}

fn generate(dir: &Path, mb: usize) -> std::io::Result<()> {
    let project = dir.join("shop");
    for f in COMPONENTS {
        let path = project.join("src").join(f).join("handler.ts");
        std::fs::create_dir_all(path.parent().unwrap())?;
        std::fs::write(path, "export {}\n")?;
    }
    let memory = project.join(".harness/memory");
    std::fs::create_dir_all(&memory)?;
    // A finished mission: every feature passed (the DONE trigger).
    let features: Vec<String> =
        (1..=400).map(|n| format!(r#"{{"id":"F-{n:03}","status":"passed"}}"#)).collect();
    std::fs::write(project.join(".harness/features.json"), format!("[{}]\n", features.join(",")))?;
    std::fs::create_dir_all(dir.join("identity"))?;
    let target = mb << 20;
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut buf = Vec::with_capacity(target + 4096);
    let start: Timestamp = "2026-04-01T00:00:00Z".parse().unwrap();
    let mut n: i64 = 0;
    while buf.len() < target {
        let ts = start.checked_add(jiff::SignedDuration::from_secs(n * 3)).unwrap();
        entry(&mut rng, &ts.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(), &mut buf);
        n += 1;
    }
    std::fs::File::create(memory.join("raw.md.orig"))?.write_all(&buf)?;
    eprintln!("generated {} entries, {} bytes in {}", n, buf.len(), memory.display());
    Ok(())
}

fn run(dir: &Path) {
    let state = dir.join("shop/.harness");
    let memory = state.join("memory");
    // A fresh state every run: the pristine raw.md, no earlier pass's files.
    for f in std::fs::read_dir(&memory).unwrap().flatten() {
        let name = f.file_name();
        if name != "raw.md.orig" {
            let p = f.path();
            if p.is_dir() {
                std::fs::remove_dir_all(&p).unwrap();
            } else {
                std::fs::remove_file(&p).unwrap();
            }
        }
    }
    let _ = std::fs::remove_dir_all(dir.join("identity"));
    std::fs::create_dir_all(dir.join("identity")).unwrap();
    std::fs::copy(memory.join("raw.md.orig"), memory.join("raw.md")).unwrap();
    let options = HarnessOptions { mission: Some("shop@bench".into()), ..Default::default() };
    let harness = Harness::open(&state, dir.join("identity"), options);
    let now: Timestamp = "2026-05-01T00:00:00Z".parse().unwrap();
    let started = Instant::now();
    let report = harness.curate(Trigger::Done, now).expect("the pass succeeds");
    let wall = started.elapsed();
    eprintln!("{}", report.line());
    eprintln!("pass wall time: {:.2} s", wall.as_secs_f64());
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut dir = PathBuf::from("target/harness-bench");
    let mut mb = 50;
    let (mut gen_only, mut run_only) = (false, false);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--generate" => {
                gen_only = true;
                dir = PathBuf::from(it.next().expect("--generate DIR"));
            }
            "--run" => {
                run_only = true;
                dir = PathBuf::from(it.next().expect("--run DIR"));
            }
            "--mb" => mb = it.next().and_then(|v| v.parse().ok()).expect("--mb N"),
            // `cargo bench` passes `--bench`; anything else is ignored the same way.
            _ => {}
        }
    }
    if !run_only {
        let orig = dir.join("shop/.harness/memory/raw.md.orig");
        if gen_only || !orig.exists() {
            generate(&dir, mb).expect("generating the input");
        }
        if gen_only {
            return;
        }
    }
    run(&dir);
}
