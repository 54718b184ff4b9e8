//! Issue 16 "must show": SIGKILL at random moments of at least 100 `curator harness curate`
//! processes over a 5 MB raw.md while another writer keeps appending; afterwards every line ever
//! appended is in raw.md or the archive exactly once, no line is torn, every archived line has its
//! record, and the archive's counts match its records.
//!
//! The writer appends the way every harness writer does (the raw.md lock, then one `write`), from
//! a thread of this process; the passes are separate processes killed with SIGKILL at a random
//! delay drawn from the duration of the last pass that ran to its end (every tenth runs to its end
//! on purpose, so the delays follow the work as raw.md shrinks and refills; a pass that ends
//! before its kill moment is timed as it really took). The seed is printed,
//! and `CURATOR_KILL_SEED` replays it.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::util::Dir;

/// xorshift64*: a small deterministic generator for delays and line shapes.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

const KILLS: usize = 100;
const INITIAL_BYTES: usize = 5 << 20;

/// One raw.md line, unique by `tag`; a mix that makes a pass promote, merge, absorb and drop.
fn line(tag: &str, n: u64) -> String {
    let fid = format!("F-{:03}", n % 50);
    let (m, s) = (n / 60 % 60, n % 60);
    let ts = format!("2026-04-2{}T{:02}:{m:02}:{s:02}Z", n / 86_400 % 5, n / 3600 % 24);
    match n % 6 {
        0 => format!("[{ts}] worker {fid} TRICK: jq -e exits non-zero on null ({tag})"),
        1 => format!("[{ts}] worker {fid} -: Implemented endpoint {tag}"),
        2 => format!("[{ts}] validator {fid} -: the checkout test fails on a cold cache ({tag})"),
        3 => format!("[{ts}] debugger {fid} -: the webhook reads the secret at import time, {tag}"),
        4 => {
            format!("[{ts}] planner - -: ship search behind a flag {tag} because the index is slow")
        }
        _ => format!("- [2026-04-2{} 10:08] worker {fid} note: near-format {tag}", n % 5),
    }
}

fn state(dir: &Dir) -> PathBuf {
    dir.path().join("shop").join(".harness")
}

fn curate(dir: &Dir) -> Command {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("curator"));
    cmd.current_dir(dir.path())
        .env_remove("CURATOR_ROOT")
        .env_remove("CURATOR_IDENTITY")
        .arg("harness")
        .arg("--state-dir")
        .arg(state(dir))
        .arg("--identity")
        .arg(dir.path().join("identity"))
        .arg("--mission")
        .arg("shop@kill")
        .args(["curate", "--trigger", "done"])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    cmd
}

/// Appends `lines` as one write under the raw.md lock, as `Harness::append` does for one line.
fn append(state: &Path, lines: &[String]) {
    let memory = state.join("memory");
    let _guard = curator_store::acquire_lock(
        &memory.join(".raw.lock"),
        &curator_store::LockOptions { timeout: Duration::from_secs(30) },
    )
    .expect("the raw.md lock (a killed pass's lock is stale at once)");
    let mut f =
        std::fs::OpenOptions::new().create(true).append(true).open(memory.join("raw.md")).unwrap();
    let mut buf = lines.join("\n");
    buf.push('\n');
    f.write_all(buf.as_bytes()).unwrap();
}

fn archive_files(state: &Path, prefix: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(state.join("memory/archive"))
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    files.retain(|p| p.file_name().unwrap().to_string_lossy().starts_with(prefix));
    files.sort();
    files
}

/// Waits for `child` until `deadline`: its exit status if it ended by then, else `None` (still
/// running). Polls every millisecond, so the kill moment is exact to about a millisecond.
fn wait_until(
    child: &mut std::process::Child,
    deadline: Instant,
) -> Option<std::process::ExitStatus> {
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        let now = Instant::now();
        if now >= deadline {
            return None;
        }
        std::thread::sleep((deadline - now).min(Duration::from_millis(1)));
    }
}

#[test]
fn sigkill_at_random_points_of_a_hundred_passes_loses_nothing() {
    let seed: u64 =
        std::env::var("CURATOR_KILL_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
            let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
            now.map_or(0x9E37_79B9, |d| d.as_nanos() as u64)
        });
    eprintln!("CURATOR_KILL_SEED={seed}");
    let mut rng = Rng(seed | 1);
    let dir = Dir::new("harness-kill");
    let state = state(&dir);
    std::fs::create_dir_all(state.join("memory")).unwrap();
    std::fs::create_dir_all(dir.path().join("identity")).unwrap();

    // 5 MB of unique lines.
    let mut written: Vec<String> = Vec::new();
    let mut size = 0;
    let mut n = 0u64;
    while size < INITIAL_BYTES {
        let l = line(&format!("i{n}"), n);
        size += l.len() + 1;
        written.push(l);
        n += 1;
    }
    append(&state, &written);

    // The concurrent writer: a few lines every few milliseconds until told to stop.
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (state, stop) = (state.clone(), stop.clone());
        let mut rng = Rng(seed.rotate_left(17) | 1);
        std::thread::spawn(move || {
            let mut mine = Vec::new();
            let mut k = 0u64;
            while !stop.load(Ordering::SeqCst) {
                let batch: Vec<String> = (0..1 + rng.below(8))
                    .map(|_| {
                        k += 1;
                        line(&format!("c{k}"), k * 7)
                    })
                    .collect();
                append(&state, &batch);
                mine.extend(batch);
                std::thread::sleep(Duration::from_millis(2 + rng.below(15)));
            }
            mine
        })
    };

    let started = Instant::now();
    let mut estimate = Duration::from_secs(6);
    let (mut kills, mut completed, mut runs) = (0usize, 0usize, 0usize);
    while kills < KILLS {
        runs += 1;
        assert!(runs < 10 * KILLS, "too few kills landed inside a pass");
        let mut child = curate(&dir).spawn().unwrap();
        let t0 = Instant::now();
        if runs % 10 == 0 {
            let status = child.wait().unwrap();
            assert!(status.success() || status.code() == Some(4), "run {runs}: {status}");
            estimate = t0.elapsed().max(Duration::from_millis(20));
            completed += 1;
            continue;
        }
        let delay = estimate.mul_f64((rng.below(1200) as f64) / 1000.0);
        // Wait for the kill moment or the pass's end, whichever comes first: a pass that ends
        // before its kill moment is timed as it really took (not as the delay), so the next
        // delays follow the real work and no time is spent sleeping after a pass has ended.
        match wait_until(&mut child, t0 + delay) {
            Some(status) => {
                assert!(status.success() || status.code() == Some(4), "run {runs}: {status}");
                completed += 1;
                estimate = t0.elapsed().max(Duration::from_millis(20));
            }
            None => {
                child.kill().unwrap(); // SIGKILL
                child.wait().unwrap();
                kills += 1;
            }
        }
    }
    stop.store(true, Ordering::SeqCst);
    written.extend(writer.join().unwrap());
    // A last pass nobody kills: it completes or rolls back whatever the last kill interrupted.
    let out = curate(&dir).stderr(Stdio::piped()).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    eprintln!(
        "{kills} passes killed, {completed} completed, {} lines written, {:.1}s",
        written.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(!state.join("memory/.pass.json").exists() && !state.join(".triage.json").exists());

    // Every line once, in raw.md or the archive; nothing else there (no torn line).
    let mut seen: HashMap<&str, usize> = written.iter().map(|l| (l.as_str(), 0)).collect();
    let raw = std::fs::read(state.join("memory/raw.md")).unwrap();
    let archives: Vec<(String, Vec<u8>)> = archive_files(&state, "raw-")
        .into_iter()
        .map(|p| {
            (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap())
        })
        .collect();
    for bytes in std::iter::once(&raw).chain(archives.iter().map(|(_, b)| b)) {
        assert!(bytes.is_empty() || bytes.ends_with(b"\n"), "a torn last line");
        for l in std::str::from_utf8(bytes).unwrap().lines() {
            let count = seen.get_mut(l).unwrap_or_else(|| panic!("a line nobody wrote: {l:?}"));
            *count += 1;
        }
    }
    let lost: Vec<&&str> = seen.iter().filter(|(_, c)| **c == 0).map(|(l, _)| l).collect();
    let twice: Vec<&&str> = seen.iter().filter(|(_, c)| **c > 1).map(|(l, _)| l).collect();
    assert!(lost.is_empty(), "{} lines lost, e.g. {:?}", lost.len(), lost.first());
    assert!(twice.is_empty(), "{} lines kept twice, e.g. {:?}", twice.len(), twice.first());

    // Every archived line has exactly one record pointing at its bytes; counts.json agrees.
    let mut records: BTreeMap<String, u64> = BTreeMap::new();
    let mut entry_records = 0usize;
    for p in archive_files(&state, "dispositions-") {
        for l in std::fs::read_to_string(&p).unwrap().lines() {
            let r: serde_json::Value = serde_json::from_str(l).expect("no torn record");
            *records
                .entry(format!(
                    "{}/{}",
                    r["kind"].as_str().unwrap(),
                    r["disposition"].as_str().unwrap()
                ))
                .or_default() += 1;
            if r["kind"] == "entry" {
                entry_records += 1;
                let (file, offset, len) = (
                    r["archive"].as_str().unwrap(),
                    r["offset"].as_u64().unwrap() as usize,
                    r["len"].as_u64().unwrap() as usize,
                );
                let bytes = &archives.iter().find(|(n, _)| n == file).unwrap().1;
                let text = std::str::from_utf8(&bytes[offset..offset + len]).unwrap();
                assert!(
                    seen.contains_key(text.trim_end_matches('\n')),
                    "record points at {text:?}"
                );
            }
        }
    }
    let archived_lines: usize =
        archives.iter().map(|(_, b)| b.iter().filter(|&&c| c == b'\n').count()).sum();
    assert_eq!(entry_records, archived_lines);
    let counts: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(state.join("memory/archive/counts.json")).unwrap(),
    )
    .unwrap();
    for (key, n) in &records {
        let (kind, d) = key.split_once('/').unwrap();
        let field = if kind == "entry" { "entries" } else { "items" };
        assert_eq!(counts[field][d].as_u64(), Some(*n), "counts.json {key}");
    }
    assert!(written.len() * 80 > INITIAL_BYTES);
}
