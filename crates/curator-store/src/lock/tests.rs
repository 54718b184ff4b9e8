//! Lock protocol tests in one process; the multi-process ones are in `tests/lock.rs`.

use std::fs;
use std::os::unix::fs::MetadataExt as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::process::Liveness;
use super::*;

struct FakeProbe(Liveness);

impl ProcessProbe for FakeProbe {
    fn liveness(&self, _pid: u32) -> Liveness {
        self.0
    }
}

fn opts(ms: u64) -> LockOptions {
    LockOptions { timeout: Duration::from_millis(ms) }
}

fn foreign(pid: u32, age: Duration) -> String {
    let stamp = Timestamp::now() - jiff::SignedDuration::try_from(age).unwrap();
    LockHolder { pid, timestamp: iso_millis(stamp) }.content()
}

fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into())
        .collect();
    v.sort();
    v
}

#[test]
fn the_lock_file_holds_exactly_agent_qa_json() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".curator.lock");
    let guard = acquire_lock(&path, &opts(1000)).unwrap();
    let text = fs::read_to_string(&path).unwrap();
    let prefix = format!(r#"{{"pid":{},"timestamp":""#, std::process::id());
    assert!(text.starts_with(&prefix), "{text}");
    let stamp = text.strip_prefix(&prefix).unwrap().strip_suffix("\"}").unwrap();
    // `new Date().toISOString()`: 24 characters, millisecond precision, Z.
    assert_eq!(stamp.len(), 24, "{stamp}");
    assert_eq!(&stamp[19..20], ".");
    assert!(stamp.ends_with('Z'));
    stamp.parse::<Timestamp>().unwrap();
    assert_eq!(text, guard.holder().content());
    // The lock and its hidden second name (the curator mark), nothing else.
    let names = entries(dir.path());
    assert_eq!(names.len(), 2, "{names:?}");
    assert_eq!(names[1], ".curator.lock");
    assert!(names[0].starts_with("..curator.lock.tmp-"), "{names:?}");
    assert_eq!(fs::metadata(&path).unwrap().nlink(), 2);
    drop(guard);
    assert!(entries(dir.path()).is_empty(), "release deletes the file and its mark");
}

#[test]
fn content_escapes_like_json_stringify() {
    let h = LockHolder { pid: 4242, timestamp: "2026-04-10T12:00:00.000Z".into() };
    assert_eq!(h.content(), r#"{"pid":4242,"timestamp":"2026-04-10T12:00:00.000Z"}"#);
    assert_eq!(iso_millis("2026-04-10T12:00:00Z".parse().unwrap()), "2026-04-10T12:00:00.000Z");
}

#[test]
fn parent_folders_are_created() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".harness/memory/.curator.lock");
    let guard = acquire_lock(&path, &opts(1000)).unwrap();
    assert!(path.exists());
    guard.release().unwrap();
    assert!(!path.exists());
}

#[test]
fn holders_in_one_process_exclude_each_other() {
    let dir = tempfile::tempdir().unwrap();
    let path = Arc::new(dir.path().join(".curator.lock"));
    let inside = Arc::new(AtomicBool::new(false));
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let (path, inside) = (Arc::clone(&path), Arc::clone(&inside));
            std::thread::spawn(move || {
                for _ in 0..10 {
                    let guard = acquire_lock(&path, &opts(20_000)).unwrap();
                    assert!(!inside.swap(true, Ordering::SeqCst), "two holders at once");
                    std::thread::sleep(Duration::from_millis(1));
                    inside.store(false, Ordering::SeqCst);
                    drop(guard);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert!(entries(dir.path()).is_empty());
}

#[test]
fn a_live_foreign_holder_is_honoured_and_named_on_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".curator.lock");
    // What agent-qa in another process would have written; pid 1 is always alive.
    let content = foreign(1, Duration::ZERO);
    fs::write(&path, &content).unwrap();
    let err = acquire_lock(&path, &opts(300)).unwrap_err();
    let msg = err.to_string();
    assert!(
        matches!(err, Error::LockTimeout { holder: Some(LockHolder { pid: 1, .. }), .. }),
        "{msg}"
    );
    assert!(msg.starts_with("lock held by pid 1 since "), "{msg}");
    assert!(msg.contains(".curator.lock"), "{msg}");
    assert_eq!(fs::read_to_string(&path).unwrap(), content, "a foreign lock is never touched");
}

#[test]
fn eperm_is_alive_until_twice_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".curator.lock");
    let eperm = FakeProbe(Liveness::NotPermitted);
    fs::write(&path, foreign(4242, Duration::from_millis(100))).unwrap();
    let err = acquire_with(&path, &opts(300), &eperm).unwrap_err();
    assert!(matches!(err, Error::LockTimeout { .. }), "{err}");
    // Older than 2·T (600 ms): stale even though the pid cannot be signalled.
    fs::write(&path, foreign(4242, Duration::from_millis(700))).unwrap();
    let started = Instant::now();
    let guard = acquire_with(&path, &opts(300), &eperm).unwrap();
    assert!(started.elapsed() < Duration::from_millis(300));
    assert_eq!(guard.holder().pid, std::process::id());
}

#[test]
fn a_dead_holder_is_replaced_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".curator.lock");
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    fs::write(&path, foreign(pid, Duration::ZERO)).unwrap();
    let started = Instant::now();
    let guard = acquire_lock(&path, &opts(10_000)).unwrap();
    assert!(started.elapsed() < Duration::from_secs(1), "{:?}", started.elapsed());
    assert_eq!(stale::holder_of(&fs::read(&path).unwrap()).unwrap().pid, std::process::id());
    drop(guard);
}

#[test]
fn an_unparsable_lock_is_stale_once_past_its_grace() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".curator.lock");
    fs::write(&path, b"").unwrap();
    // Young and empty: perhaps agent-qa between its create and its write.
    assert!(acquire_lock(&path, &opts(100)).is_err());
    let old = std::time::SystemTime::now() - Duration::from_secs(5);
    File::options().write(true).open(&path).unwrap().set_modified(old).unwrap();
    acquire_lock(&path, &opts(100)).unwrap();
}

#[test]
fn a_held_flock_protects_a_holder_whose_pid_looks_dead() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".curator.lock");
    fs::write(&path, foreign(4242, Duration::from_secs(3600))).unwrap();
    // A curator in another pid namespace: its pid means nothing here, but its flock is real.
    let other = File::open(&path).unwrap();
    other.lock().unwrap();
    let err = acquire_with(&path, &opts(200), &FakeProbe(Liveness::Dead)).unwrap_err();
    assert!(matches!(err, Error::LockTimeout { .. }), "{err}");
    drop(other);
    acquire_with(&path, &opts(200), &FakeProbe(Liveness::Dead)).unwrap();
}

/// agent-qa's file (one link, no flock) naming our own pid may be a holder in another pid
/// namespace (a container sharing the volume, pid 1 in both): held until 2·T, as agent-qa
/// holds it, never taken for an earlier process of ours.
#[test]
fn our_own_pid_in_an_agent_qa_file_is_waited_on_until_twice_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".curator.lock");
    fs::write(&path, foreign(std::process::id(), Duration::ZERO)).unwrap();
    let err = acquire_lock(&path, &opts(200)).unwrap_err();
    assert!(matches!(err, Error::LockTimeout { .. }), "{err}");
    fs::write(&path, foreign(std::process::id(), Duration::from_secs(1))).unwrap();
    acquire_lock(&path, &opts(200)).unwrap();
}

#[test]
fn a_dead_curator_holder_is_replaced_at_once_even_when_its_pid_lives() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".curator.lock");
    // What a curator that died leaves: the lock, its second name, no flock; its pid (1 here)
    // now belongs to a live process.
    fs::write(&path, foreign(1, Duration::ZERO)).unwrap();
    let mark = dir.path().join("..curator.lock.tmp-1-00000000deadbeef");
    fs::hard_link(&path, &mark).unwrap();
    let started = Instant::now();
    let guard = acquire_lock(&path, &opts(10_000)).unwrap();
    assert!(started.elapsed() < Duration::from_secs(1), "{:?}", started.elapsed());
    assert!(!mark.exists(), "the dead holder's mark is cleaned up");
    drop(guard);
    assert!(entries(dir.path()).is_empty());
}

#[test]
fn release_leaves_a_lock_that_is_no_longer_ours() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".curator.lock");
    let guard = acquire_lock(&path, &opts(1000)).unwrap();
    // Someone (agent-qa after 2·T) replaced our file with theirs.
    fs::remove_file(&path).unwrap();
    let theirs = foreign(1, Duration::ZERO);
    fs::write(&path, &theirs).unwrap();
    guard.release().unwrap();
    assert_eq!(fs::read_to_string(&path).unwrap(), theirs);
}

#[test]
fn an_unreadable_lock_path_is_reported_with_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    // A directory where the lock file should be: creating fails with EEXIST, reading with EISDIR.
    let path = dir.path().join(".curator.lock");
    fs::create_dir(&path).unwrap();
    let err = acquire_lock(&path, &opts(100)).unwrap_err();
    assert!(err.to_string().contains(".curator.lock"), "{err}");
}

#[test]
fn the_next_holder_removes_temps_of_dead_waiters_only() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".curator.lock");
    // A waiter killed between creating its temp and linking it (dead pid), and one that is
    // still at it (this process: alive).
    let dead = dir.path().join("..curator.lock.tmp-4000000000-00112233aabbccdd");
    let live =
        dir.path().join(format!("..curator.lock.tmp-{}-0011223344556677", std::process::id()));
    fs::write(&dead, foreign(4_000_000_000, Duration::ZERO)).unwrap();
    fs::write(&live, foreign(std::process::id(), Duration::ZERO)).unwrap();
    // Young, its pid dead here: perhaps a waiter in another pid namespace, linking it now.
    assert!(dead_temps(&path, &SystemProbe).is_empty());
    let old = std::time::SystemTime::now() - crate::atomic::DEAD_WRITER_TEMP_AGE * 2;
    File::options().write(true).open(&dead).unwrap().set_modified(old).unwrap();
    let reported = dead_temps(&path, &SystemProbe);
    assert_eq!(reported, [DeadTemp { path: dead.clone(), pid: 4_000_000_000 }]);
    // A take that never found the lock held does not look: a waiter can only have died here
    // while someone held it (and `lint` sweeps the root's lock folder).
    let guard = acquire_lock(&path, &opts(1000)).unwrap();
    assert!(dead.exists(), "an uncontended take lists no folder");
    guard.release().unwrap();
    // A take that found it held (here by a dead agent-qa holder) sweeps the temps.
    fs::write(&path, foreign(4_000_000_001, Duration::ZERO)).unwrap();
    let guard = acquire_lock(&path, &opts(1000)).unwrap();
    assert!(!dead.exists(), "a dead waiter's temp is removed by the next holder that waited");
    assert!(live.exists(), "a live waiter's temp is left alone");
    guard.release().unwrap();
    // A holder that died leaves its lock file and its second name: both are leftovers, and
    // the next holder (stealing the stale lock) removes both; its own second name it keeps,
    // whatever the probe says of its pid.
    fs::remove_file(&live).unwrap();
    let mut held = acquire_with(&path, &opts(1000), &FakeProbe(Liveness::Dead)).unwrap();
    assert_eq!(entries(dir.path()).len(), 2); // the lock and its second name
    assert_eq!(dead_temps(&path, &FakeProbe(Liveness::Dead)).len(), 1);
    // It dies holding it: the flock goes with the process, the names stay.
    drop(held.file.take());
    std::mem::forget(held);
    let next = acquire_with(&path, &opts(1000), &FakeProbe(Liveness::Dead)).unwrap();
    let names = entries(dir.path());
    assert_eq!(names.len(), 2, "only the new lock and its second name remain: {names:?}");
    next.release().unwrap();
    assert!(entries(dir.path()).is_empty());
}

#[test]
fn taking_a_lock_without_waiting_still_judges_age_by_the_lock_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".curator.lock");
    // agent-qa's file (one link, no flock), written a second ago by a live process: held,
    // although the caller does not wait at all.
    let mut holder = std::process::Command::new("sleep").arg("30").spawn().unwrap();
    fs::write(&path, foreign(holder.id(), Duration::from_secs(1))).unwrap();
    let err = acquire_lock_now(&path, Duration::from_secs(120)).unwrap_err();
    assert!(
        matches!(&err, Error::LockTimeout { holder: Some(h), .. } if h.pid == holder.id()),
        "{err}"
    );
    assert!(path.exists(), "a live holder's lock is left alone");
    // Older than 2·T: stale by agent-qa's rule, whoever holds the pid.
    fs::write(&path, foreign(holder.id(), Duration::from_secs(241))).unwrap();
    drop(acquire_lock_now(&path, Duration::from_secs(120)).unwrap());
    holder.kill().unwrap();
    holder.wait().unwrap();
}

#[test]
fn a_symlink_at_the_lock_path_is_an_error_at_once_and_its_target_is_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".curator.lock");
    // Dangling, and pointing at a dead holder's lock: the create fails on the link itself while
    // a look through it finds no file, or another one. Both once spun for ever at full CPU.
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let target = dir.path().join("elsewhere.lock");
    let held = foreign(dead, Duration::ZERO);
    fs::write(&target, &held).unwrap();
    for pointee in [dir.path().join("missing"), target.clone()] {
        std::os::unix::fs::symlink(&pointee, &path).unwrap();
        let started = Instant::now();
        let err = acquire_lock(&path, &opts(10_000)).unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(1), "{:?}", started.elapsed());
        assert!(matches!(err, Error::Lock { .. }), "{err:?}");
        assert!(err.to_string().contains("symbolic link"), "{err}");
        assert!(fs::symlink_metadata(&path).unwrap().file_type().is_symlink(), "left in place");
        fs::remove_file(&path).unwrap();
    }
    assert_eq!(fs::read_to_string(&target).unwrap(), held);
}
