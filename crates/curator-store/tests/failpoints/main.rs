//! A write stopped at each of its steps, deterministically (issue 13, "Must show": before and
//! after the journal entry, temp write, rename, unlink, before and after the commit; and a
//! crash of the recovery itself). Run with
//! `cargo test -p curator-store --features failpoints --test failpoints`.
//!
//! A crash is a panic raised by the `fail` crate at a named point: it unwinds out of
//! `transact` without running any of the store's error paths (the store cleans up explicitly,
//! never in `Drop`), so the files and the journal are left exactly as a SIGKILL at that point
//! leaves them. (The lock file is released by unwinding, where a SIGKILL leaves it to the next
//! writer's stale-lock rule; `curator-store/tests/store/processes.rs` covers that.) Each case
//! then checks the state a crash may leave, lets the next writer (or `lint`'s
//! [`Store::recover`]) resolve it, and checks that every file equals the replay of the
//! committed journal, that no temp file remains and that the outcome is the one the point
//! implies: rolled back before the commit marker, standing after it.

use std::collections::BTreeMap;
use std::fs;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::time::Duration;

use curator_core::codec::parse_observation;
use curator_core::{Observation, ObservationId, ScopeName, Tier};
use curator_store::{Action, FileStore, FileStoreOptions, JournalFilter, Store};
use fail::FailScenario;

fn open(root: &Path) -> FileStore {
    let options = FileStoreOptions { lock_timeout: Duration::from_secs(10), ..Default::default() };
    FileStore::open(root, options).unwrap()
}

fn scope(name: &str) -> ScopeName {
    ScopeName::new(name).unwrap()
}

fn observation(title: &str, confirmed: u64) -> Observation {
    let id = ObservationId::generate();
    let text = format!(
        "---\nid: {id}\ntitle: {title}\ntrust: 0.5\ncreated: 2026-04-10T12:00:00.000Z\n\
         last_confirmed: 2026-04-10T12:00:00.000Z\nconfirmed_count: {confirmed}\n\
         contradicted_count: 0\nsource_test: t_x\n---\n{title} body\n"
    );
    parse_observation(&text, id.as_str()).unwrap()
}

/// Every `obs_*.md` under the root, with its exact text.
fn files(root: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    for tier in Tier::ALL {
        let Ok(scopes) = fs::read_dir(root.join(tier.dir_name())) else { continue };
        for scope in scopes.flatten() {
            for file in fs::read_dir(scope.path()).unwrap().flatten() {
                let name = file.file_name().to_string_lossy().into_owned();
                if name.starts_with("obs_") && name.ends_with(".md") {
                    out.insert(file.path(), fs::read_to_string(file.path()).unwrap());
                }
            }
        }
    }
    out
}

/// Every temp file (`.…tmp-…`) under the root's scope folders and in the root.
fn temps(root: &Path) -> Vec<PathBuf> {
    let mut dirs = vec![root.to_owned()];
    for tier in Tier::ALL {
        let Ok(scopes) = fs::read_dir(root.join(tier.dir_name())) else { continue };
        dirs.extend(scopes.flatten().map(|s| s.path()));
    }
    let mut out = Vec::new();
    for dir in dirs {
        for file in fs::read_dir(&dir).unwrap().flatten() {
            if file.file_name().to_string_lossy().contains(".tmp-") {
                out.push(file.path());
            }
        }
    }
    out
}

/// The files the committed journal describes, checking on the way that each entry's
/// `before_file` is what the replay held for that file (no change is missing from the journal).
fn replay(store: &FileStore) -> BTreeMap<PathBuf, String> {
    let mut state: BTreeMap<PathBuf, String> = BTreeMap::new();
    for e in store.journal(&JournalFilter::default()).unwrap() {
        if !e.changes_a_file() {
            continue;
        }
        let path = store.root().join(&e.tier).join(&e.scope).join(format!("{}.md", e.id));
        assert_eq!(state.get(&path), e.before_file.as_ref(), "entry {e:?} does not follow on");
        match e.after_file {
            Some(text) => state.insert(path, text),
            None => state.remove(&path),
        };
    }
    state
}

fn assert_consistent(store: &FileStore) {
    let root = store.root();
    assert_eq!(files(root), replay(store), "files differ from the committed journal");
    assert_eq!(temps(root), Vec::<PathBuf>::new(), "temp files remain");
    let raw = fs::read_to_string(store.journal_path()).unwrap();
    let last = raw.lines().last().unwrap();
    assert!(last.starts_with(r#"{"end":"#), "the journal ends in an open transaction: {last}");
}

/// A root with A and B in one committed transaction.
struct Setup {
    dir: tempfile::TempDir,
    a: Observation,
    b: Observation,
    c: Observation,
}

fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    FileStore::init(dir.path()).unwrap();
    let (a, b, c) = (observation("Alpha", 0), observation("Beta", 0), observation("Gamma", 0));
    open(dir.path())
        .transact(Some("r_setup"), &mut |tx| {
            tx.put(Tier::Tests, &scope("t_a"), &a, Action::Add, "setup")?;
            tx.put(Tier::Products, &scope("acme"), &b, Action::Add, "setup")
        })
        .unwrap();
    Setup { dir, a, b, c }
}

/// Confirms A, deletes B and adds C (in a new folder): three kinds of change in one
/// transaction, so each point is hit more than once.
fn the_write(store: &FileStore, s: &Setup) -> curator_store::Result<()> {
    store.transact(Some("r_write"), &mut |tx| {
        let mut a = s.a.clone();
        a.confirmed_count += 1;
        tx.put(Tier::Tests, &scope("t_a"), &a, Action::Confirm, "confirmed")?;
        tx.delete(Tier::Products, &scope("acme"), &s.b.id, Action::Delete, "deleted")?;
        tx.put(Tier::Suites, &scope("s_new"), &s.c, Action::Add, "added")
    })
}

/// The texts before and after `the_write`, from a run without faults.
fn expected(s: &Setup) -> (BTreeMap<PathBuf, String>, BTreeMap<PathBuf, String>) {
    let before = files(s.dir.path());
    let copy = tempfile::tempdir().unwrap();
    for (path, text) in &before {
        let to = copy.path().join(path.strip_prefix(s.dir.path()).unwrap());
        fs::create_dir_all(to.parent().unwrap()).unwrap();
        fs::write(to, text).unwrap();
    }
    let store = open(copy.path());
    the_write(&store, s).unwrap();
    let after = files(copy.path())
        .into_iter()
        .map(|(p, t)| (s.dir.path().join(p.strip_prefix(copy.path()).unwrap()), t))
        .collect();
    (before, after)
}

/// Runs `f`, expecting the panic a fault point raises.
fn crash(f: impl FnOnce() -> curator_store::Result<()>) {
    let outcome = std::panic::catch_unwind(AssertUnwindSafe(f));
    assert!(outcome.is_err(), "the fault point was not reached");
}

/// Every point of a write and how many times `the_write` passes it.
const POINTS: &[(&str, usize, bool)] = &[
    // (point, hits in the_write, the change stands after recovery)
    ("wal::before-entry", 3, false),
    ("wal::after-entry", 3, false),
    ("atomic::after-temp", 2, false),
    ("atomic::after-rename", 2, false),
    ("wal::after-unlink", 1, false),
    ("wal::before-commit", 1, false),
    ("wal::after-commit", 1, true),
];

/// How the crash is resolved.
#[derive(Clone, Copy, Debug)]
enum Resolver {
    NextWriter,
    Lint,
}

fn stop_at_every_point(resolver: Resolver) {
    let scenario = FailScenario::setup();
    for &(point, hits, stands) in POINTS {
        for hit in 0..hits {
            let s = setup();
            let (before, after) = expected(&s);
            let store = open(s.dir.path());
            fail::cfg(point, &format!("{hit}*off->1*panic->off")).unwrap();
            crash(|| the_write(&store, &s));
            fail::remove(point);
            drop(store);
            let case = format!("{point} (hit {}) resolved by {resolver:?}", hit + 1);

            // What the crash left: whole files, each the text before or after the write.
            for (path, text) in files(s.dir.path()) {
                let known = [before.get(&path), after.get(&path)].contains(&Some(&text));
                assert!(known, "{case}: {} is neither before nor after", path.display());
            }
            let store = open(s.dir.path());
            match resolver {
                Resolver::NextWriter => store
                    .transact(None, &mut |tx| {
                        let d = observation("Delta", 0);
                        tx.put(Tier::Tests, &scope("t_next"), &d, Action::Add, "next writer")
                    })
                    .unwrap(),
                Resolver::Lint => {
                    let recovered = store.recover().unwrap();
                    // Nothing was begun when the very first entry was never written.
                    let nothing_begun = point == "wal::before-entry" && hit == 0;
                    let expect_work = !(stands || nothing_begun);
                    assert_eq!(!recovered.is_empty(), expect_work, "{case}: {recovered:?}");
                }
            }
            assert_consistent(&store);
            let now: BTreeMap<_, _> = files(s.dir.path())
                .into_iter()
                .filter(|(p, _)| !p.to_string_lossy().contains("t_next"))
                .collect();
            let want = if stands { &after } else { &before };
            assert_eq!(&now, want, "{case}: wrong outcome");
            let history = store
                .journal(&JournalFilter { run_id: Some("r_write".into()), ..Default::default() })
                .unwrap();
            assert_eq!(history.len(), if stands { 3 } else { 0 }, "{case}: {history:?}");
        }
    }
    scenario.teardown();
}

#[test]
fn a_crash_at_any_step_is_rolled_back_or_stands_after_the_next_writer() {
    stop_at_every_point(Resolver::NextWriter);
}

#[test]
fn a_crash_at_any_step_is_resolved_by_lint_recovery() {
    stop_at_every_point(Resolver::Lint);
}

#[test]
fn a_crash_during_recovery_is_resolved_by_the_next_recovery() {
    let scenario = FailScenario::setup();
    for hit in 0..3 {
        let s = setup();
        let (before, _) = expected(&s);
        let store = open(s.dir.path());
        fail::cfg("wal::before-commit", "panic").unwrap();
        crash(|| the_write(&store, &s));
        fail::remove("wal::before-commit");
        // The recovery itself dies after its `hit`-th restored file.
        fail::cfg("recover::after-restore", &format!("{hit}*off->1*panic->off")).unwrap();
        crash(|| store.recover().map(drop));
        fail::remove("recover::after-restore");
        let store = open(s.dir.path());
        let report = store.recover().unwrap();
        assert!(!report.is_empty(), "hit {hit}: the second recovery found nothing to do");
        assert_consistent(&store);
        assert_eq!(files(s.dir.path()), before, "hit {hit}");
    }
    scenario.teardown();
}

#[test]
fn temps_of_a_crashed_write_are_reported_then_removed_by_the_next_writer() {
    let scenario = FailScenario::setup();
    let s = setup();
    let store = open(s.dir.path());
    fail::cfg("atomic::after-temp", "panic").unwrap();
    crash(|| the_write(&store, &s));
    fail::remove("atomic::after-temp");
    let left = temps(s.dir.path());
    assert_eq!(left.len(), 1, "{left:?}");
    // This process wrote it and is alive: not a dead writer's yet, so a listing does not
    // report it; a temp named after a dead pid is, once older than a write takes (a young one
    // may be a live writer's in another pid namespace).
    let dead = left[0].with_file_name(format!(".{}.md.tmp-4000000000-00112233aabbccdd", s.a.id));
    fs::rename(&left[0], &dead).unwrap();
    let killed_at = std::time::SystemTime::now() - Duration::from_secs(60);
    fs::File::options().write(true).open(&dead).unwrap().set_modified(killed_at).unwrap();
    let listing = store.list(&curator_store::ListFilter::default()).unwrap();
    let reported: Vec<_> = listing.problems.iter().map(|p| p.path.clone()).collect();
    assert_eq!(reported, std::slice::from_ref(&dead), "{:?}", listing.problems);
    assert!(listing.problems[0].to_string().contains("pid 4000000000"), "{}", listing.problems[0]);
    store.transact(None, &mut |_| Ok(())).unwrap();
    assert!(!dead.exists());
    assert_consistent(&store);
    scenario.teardown();
}

#[test]
fn a_failed_body_rolls_back_every_change_it_made() {
    // Fault points are global: every test holds the scenario lock, even one that sets none.
    let scenario = FailScenario::setup();
    let s = setup();
    let (before, _) = expected(&s);
    let store = open(s.dir.path());
    let err = store
        .transact(Some("r_fail"), &mut |tx| {
            let mut a = s.a.clone();
            a.confirmed_count += 5;
            tx.put(Tier::Tests, &scope("t_a"), &a, Action::Confirm, "confirmed")?;
            tx.delete(Tier::Products, &scope("acme"), &s.b.id, Action::Delete, "deleted")?;
            Err(curator_store::Error::NotFound { id: "obs_nope".into() })
        })
        .unwrap_err();
    assert!(matches!(err, curator_store::Error::NotFound { .. }), "{err}");
    assert_eq!(files(s.dir.path()), before);
    assert_consistent(&store);
    let raw = fs::read_to_string(store.journal_path()).unwrap();
    assert!(raw.lines().last().unwrap().contains(r#""end":"rollback""#), "{raw}");
    scenario.teardown();
}

/// The commit marker cannot be written (a full disk): the writer rolls its transaction back at
/// once, under its lock, so no reader ever sees the uncommitted change, and the retry applies
/// it once (audit 8: the change was served until an unrelated writer recovered it).
#[test]
fn a_commit_marker_that_cannot_be_written_is_rolled_back_by_its_own_writer() {
    let scenario = FailScenario::setup();
    let s = setup();
    let (before, after) = expected(&s);
    let store = open(s.dir.path());
    fail::cfg("journal::end-write", "1*return").unwrap();
    let err = the_write(&store, &s).unwrap_err();
    fail::remove("journal::end-write");
    assert!(err.to_string().contains("injected write failure"), "{err}");
    assert_eq!(files(s.dir.path()), before, "nothing of the transaction is served");
    assert_consistent(&store);
    the_write(&store, &s).unwrap();
    assert_eq!(files(s.dir.path()), after);
    assert_consistent(&store);
    scenario.teardown();
}

/// The marker reached the file but its fsync failed: the transaction is committed (a marker in
/// the file commits it, whoever looks), so the writer reports success rather than a failure
/// its caller would retry into a second application.
#[test]
fn a_commit_marker_written_whose_fsync_failed_stands() {
    let scenario = FailScenario::setup();
    let s = setup();
    let (_, after) = expected(&s);
    let store = open(s.dir.path());
    fail::cfg("journal::end-sync", "return").unwrap();
    let outcome = the_write(&store, &s);
    fail::remove("journal::end-sync");
    outcome.unwrap();
    assert_eq!(files(s.dir.path()), after);
    assert_consistent(&store);
    scenario.teardown();
}
