//! Special files where curator keeps its own: a FIFO, a device or a huge sparse file at the
//! journal, the lock, a run session, a breaker window, the index or the config (audit 9).
//!
//! `open(2)` of a FIFO blocks until a writer comes, and `/dev/zero` never ends: each command
//! here once hung (holding the root's lock) or filled memory. Now each fails at once, naming
//! the file, or rebuilds what is only a cache; every command runs under a timeout, so a
//! regression fails the test instead of hanging it.

use std::path::Path;
use std::time::Duration;

use crate::util::{Dir, TestCommand};

/// Long enough for a debug binary on a busy machine, short against "for ever".
const HANG: Duration = Duration::from_secs(60);

fn mkfifo(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let _ = std::fs::remove_file(path);
    let made = std::process::Command::new("mkfifo").arg(path).status().unwrap();
    assert!(made.success(), "mkfifo {}", path.display());
}

fn timed(mut cmd: TestCommand) -> TestCommand {
    cmd.cmd.timeout(HANG);
    cmd
}

/// Runs `cmd`, expecting a failure (not a kill by the timeout) whose stderr names `needle`.
fn fails_naming(cmd: TestCommand, needle: &str) -> String {
    let out = timed(cmd).output();
    // `lint` names its problems on stdout, every other command its error on stderr.
    let said = String::from_utf8_lossy(&[out.stdout, out.stderr].concat()).into_owned();
    assert!(out.status.code().is_some_and(|c| c != 0), "{:?}: {said}", out.status);
    assert!(said.contains(needle), "{said}");
    said
}

const ADD: [&str; 9] =
    ["add", "--tier", "product", "--scope", "shop", "--title", "Login", "--source-test", "t_x"];

#[test]
fn a_fifo_journal_fails_every_writer_at_once_and_frees_the_lock() {
    let dir = Dir::new("fifo-journal");
    mkfifo(&dir.root().join(".curator/journal.jsonl"));
    fails_naming(dir.curator(&[&ADD[..], &["body"]].concat()), "not a regular file");
    fails_naming(dir.curator(&["lint"]), "not a regular file");
    let id = "obs_blaze-salmon-cinder-ginger-owl-sand-marble-cider-ocean-brick";
    fails_naming(dir.curator(&["history", id]), "not a regular file");
    // Nothing holds the root's lock after the failures: with the journal back, a write works.
    std::fs::remove_file(dir.root().join(".curator/journal.jsonl")).unwrap();
    timed(dir.curator(&[&ADD[..], &["body"]].concat())).stdout();
}

#[test]
fn a_journal_with_no_line_ends_is_named_not_read_into_memory() {
    let dir = Dir::new("sparse-journal");
    let path = dir.root().join(".curator/journal.jsonl");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    // 8 GiB of NULs, taking no disk: read whole, it aborted the process.
    std::fs::File::create(&path).unwrap().set_len(8 << 30).unwrap();
    fails_naming(dir.curator(&["lint"]), "journal.jsonl");
    fails_naming(dir.curator(&[&ADD[..], &["body"]].concat()), "journal.jsonl");
}

#[test]
fn a_fifo_lock_file_is_an_error_not_a_hang() {
    let dir = Dir::new("fifo-lock");
    mkfifo(&dir.root().join(".curator.lock"));
    fails_naming(dir.curator(&[&ADD[..], &["body"]].concat()), "not a regular file");
}

#[test]
fn run_sessions_and_breaker_windows_that_are_not_files_are_refused() {
    let dir = Dir::new("fifo-state");
    mkfifo(&dir.root().join(".curator/runs/r1.json"));
    let step = ["query", "--product", "shop", "--test", "t_x", "--run-id", "r1", "--step-index"];
    fails_naming(dir.curator(&[&step[..], &["0", "Sign in"]].concat()), "not a regular file");
    std::fs::create_dir_all(dir.root().join(".curator/breaker")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", dir.root().join(".curator/breaker/k1.json")).unwrap();
    fails_naming(dir.curator(&["breaker", "status", "k1"]), "not a regular file");
}

#[test]
fn an_index_file_that_is_a_fifo_is_rebuilt() {
    let dir = Dir::new("fifo-index");
    let body = "The Sign in button stays disabled";
    timed(dir.curator(&[&ADD[..], &[body]].concat())).stdout();
    let query = ["query", "--product", "shop", "--test", "t_x", "Sign in"];
    assert!(timed(dir.curator(&query)).stdout().contains(body));
    mkfifo(&curator_store::index::index_dir(&dir.root()).join("meta.json"));
    assert!(timed(dir.curator(&query)).stdout().contains(body));
}

#[test]
fn a_config_that_never_ends_is_refused() {
    let dir = Dir::new("zero-config");
    let config = dir.path().join("agent-qa.config.yaml");
    std::os::unix::fs::symlink("/dev/zero", &config).unwrap();
    let mut cmd = dir.curator(&["lint"]);
    cmd.cmd.arg("--config").arg(&config);
    fails_naming(cmd, "not a config file");
}

#[test]
fn harness_reads_of_a_fifo_raw_md_end() {
    let dir = Dir::new("fifo-raw");
    let state = dir.path().join(".harness");
    mkfifo(&state.join("memory/raw.md"));
    for args in [&["status"][..], &["trace", "hello"][..]] {
        let mut cmd = dir.curator(&["harness"]);
        cmd.cmd.arg("--state-dir").arg(&state).arg("--identity").arg(dir.path().join("id"));
        cmd.cmd.args(args);
        let out = timed(cmd).output();
        assert!(out.status.code().is_some(), "{args:?} was killed by the timeout");
    }
}

/// A proposal the queue holds but that cannot be read is named as such by a review, not as
/// "not waiting for review" (audit 9).
#[test]
fn reviewing_an_unreadable_proposal_says_why() {
    let dir = Dir::new("fifo-proposal");
    mkfifo(&dir.root().join(format!(".curator/pending/products/shop/{}.md", crate::util::ID_A)));
    let said = fails_naming(dir.curator(&["review", "approve", crate::util::ID_A]), "unreadable");
    assert!(!said.contains("not waiting"), "{said}");
}
