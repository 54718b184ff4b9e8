//! agent-qa's `.curator.lock` protocol (agent-qa-memory §6), with the fixes of §11.17.
//!
//! Invariant: at most one writer — curator or agent-qa — holds a lock path at a time, and a lock
//! file is only ever deleted by its holder or by a waiter that has proof the holder is gone
//! (the rules are in `stale.rs`).
//!
//! Compatibility with agent-qa: the file is created exclusively, holds exactly
//! `{"pid":N,"timestamp":"<ISO ms Z>"}` (no spaces, no newline) and is deleted on release, so
//! agent-qa waits for us and we wait for it. What curator adds is invisible to agent-qa:
//!
//! * The file is written and flocked under a temp name first and then hard-linked into place
//!   (`link` fails with EEXIST just as `O_EXCL` does), so a curator lock file is never seen empty
//!   and its flock is taken from the moment it exists until after it is deleted. A waiter uses
//!   the flock as proof of a live curator holder, and holds the stale file's flock while deleting
//!   it so that two waiters never both "steal" and one deletes the other's fresh lock.
//! * The temp name is kept while the lock is held, so a curator lock file has two links and
//!   agent-qa's has one. That is the mark the content cannot carry (agent-qa would not accept
//!   another JSON field): two links and a free flock prove a curator holder died, on any
//!   platform and whatever process now has its pid. The mark assumes flocks are seen by every
//!   machine sharing the root (true for local file systems and for NFS on Linux ≥ 2.6.12).
//! * On a file system without hard links it falls back to `O_EXCL` create + flock + write, and
//!   waiters fall back to agent-qa's rules for that file.
//! * Waiting backs off from ~10 ms to ~200 ms with random jitter instead of agent-qa's fixed
//!   200 ms, and the timeout error names the holder.
//! * Release deletes the file only if the path still names the very file we created (stricter
//!   than agent-qa's "same pid", which cannot tell two holders of one process apart).
//!
//! A crashed holder leaves its hidden `.<lock>.tmp-<pid>-<rand>` name behind; the waiter that
//! removes the stale lock removes it too. A process killed while *waiting* can leave its
//! unlinked temp (one link, never the lock); the next process that takes the lock removes every
//! such temp whose writer is dead, or that is older than [`ABANDONED_TEMP_AGE`] (a live
//! waiter's temp exists for microseconds), and `curator lint` reports them until then.

mod process;
mod stale;

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use jiff::Timestamp;

use crate::atomic::{create_temp, parent_dir};
use crate::{Error, Result};
pub(crate) use process::{Liveness, ProcessProbe, SystemProbe};
use stale::{Observed, Verdict, judge};

/// How long to wait for the lock (config `curatorLockTimeout`, agent-qa-memory §2; also T in the
/// 2·T staleness rule).
#[derive(Debug, Clone)]
pub struct LockOptions {
    pub timeout: Duration,
}

impl LockOptions {
    /// agent-qa's default `curatorLockTimeout`: 120 000 ms.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
}

impl Default for LockOptions {
    fn default() -> Self {
        LockOptions { timeout: Self::DEFAULT_TIMEOUT }
    }
}

/// Who holds a lock, as written in the lock file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockHolder {
    pub pid: u32,
    pub timestamp: String,
}

impl LockHolder {
    /// This process, now; the timestamp as JavaScript's `toISOString()` writes it.
    pub fn current() -> Self {
        LockHolder { pid: std::process::id(), timestamp: iso_millis(curator_core::time::now()) }
    }

    /// The exact file content agent-qa writes: `JSON.stringify({pid, timestamp})`.
    pub fn content(&self) -> String {
        let timestamp = serde_json::Value::String(self.timestamp.clone());
        format!(r#"{{"pid":{},"timestamp":{timestamp}}}"#, self.pid)
    }
}

/// `YYYY-MM-DDTHH:MM:SS.sssZ`, always three fraction digits, UTC.
pub(crate) fn iso_millis(t: Timestamp) -> String {
    format!("{t:.3}")
}

/// Held lock; released (file deleted when it is still ours, flock dropped) on drop.
#[derive(Debug)]
pub struct LockGuard {
    path: PathBuf,
    holder: LockHolder,
    /// Open on our lock file and flocked; `None` once released.
    file: Option<File>,
    identity: (u64, u64),
    /// The second name of our lock file (the two-link mark); `None` on the fallback path.
    mark: Option<PathBuf>,
}

impl LockGuard {
    /// The lock file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What we wrote into the lock file.
    pub fn holder(&self) -> &LockHolder {
        &self.holder
    }

    /// Releases now, reporting a failure to delete the file (drop only logs it).
    pub fn release(mut self) -> Result<()> {
        self.release_inner()
    }

    fn release_inner(&mut self) -> Result<()> {
        let Some(file) = self.file.take() else { return Ok(()) };
        // Delete before unlocking: a waiter that gets the flock next must find the path gone
        // or replaced, never our file with a free flock.
        let result = match fs::symlink_metadata(&self.path) {
            Ok(meta) if identity(&meta) == self.identity => match fs::remove_file(&self.path) {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(Error::io(&self.path, e)),
            },
            Ok(_) => {
                tracing::warn!(path = %self.path.display(), "lock file was replaced by another holder; left in place");
                Ok(())
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                tracing::warn!(path = %self.path.display(), "lock file was deleted while we held it");
                Ok(())
            }
            Err(e) => Err(Error::io(&self.path, e)),
        };
        if let Some(mark) = self.mark.take() {
            let _ = fs::remove_file(mark);
        }
        drop(file);
        result
    }
}

impl Drop for LockGuard {
    fn drop(&mut self) {
        if let Err(err) = self.release_inner() {
            tracing::warn!("releasing lock: {err}");
        }
    }
}

/// Acquires the lock file at `path` (any path: the memory root's `.curator.lock`, a harness
/// state folder's lock...), creating its folder if needed, waiting up to `options.timeout`.
pub fn acquire_lock(path: &Path, options: &LockOptions) -> Result<LockGuard> {
    acquire_with(path, options, &SystemProbe)
}

/// Takes the lock at `path` only if nobody holds it now, without waiting: a held lock is
/// [`Error::LockTimeout`] at once, naming the holder. `stale_after` is still T of the 2·T age
/// rule: not waiting is no reason to judge a holder's age by a zero timeout, which would steal
/// every agent-qa-style lock at once.
pub fn acquire_lock_now(path: &Path, stale_after: Duration) -> Result<LockGuard> {
    acquire_until(path, Duration::ZERO, stale_after, &SystemProbe)
}

/// What one look at an existing lock file concluded.
enum Seen {
    /// The file vanished or was replaced while we looked: try again at once.
    Gone,
    /// We deleted a stale file: try again at once.
    Stolen,
    Held(Option<LockHolder>),
}

pub(crate) fn acquire_with(
    path: &Path,
    options: &LockOptions,
    probe: &dyn ProcessProbe,
) -> Result<LockGuard> {
    acquire_until(path, options.timeout, options.timeout, probe)
}

/// Waits up to `wait` for the lock; `stale_after` is T of the 2·T staleness rule.
fn acquire_until(
    path: &Path,
    wait: Duration,
    stale_after: Duration,
    probe: &dyn ProcessProbe,
) -> Result<LockGuard> {
    let dir = parent_dir(path);
    fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let started = Instant::now();
    let deadline = started + wait;
    let mut delay = Duration::from_millis(10);
    let mut last_holder = None;
    // Whether the lock was ever found taken: only then can a waiter have died here leaving its
    // temp, so only then is the folder listed for such temps. Listing it on every take cost a
    // run's step record a scan of `.curator/runs/` (one file per run ever recorded): half of a
    // serve's time at 7,000 runs.
    let mut contended = false;
    // Looks in a row that found the file gone or stolen: those retry at once, a few times,
    // then wait like any other miss, so a path that keeps vanishing under us cannot spin.
    let mut quick_retries = 0;
    loop {
        if let Some(guard) = try_create(path)? {
            // Our own second name is never a leftover, whatever the probe says of our pid.
            let ours =
                |p: &Path| fs::symlink_metadata(p).is_ok_and(|m| identity(&m) == guard.identity);
            let swept = if contended { dead_temps(path, probe) } else { Vec::new() };
            for temp in swept.into_iter().filter(|t| !ours(&t.path)) {
                match fs::remove_file(&temp.path) {
                    Ok(()) => {
                        tracing::info!(path = %temp.path.display(), "removed a dead waiter's lock temp")
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => {
                        tracing::warn!(path = %temp.path.display(), "cannot remove a dead waiter's lock temp: {e}")
                    }
                }
            }
            return Ok(guard);
        }
        contended = true;
        let problem = match inspect(path, stale_after, probe) {
            Ok(Seen::Gone | Seen::Stolen) if quick_retries < QUICK_RETRIES => {
                quick_retries += 1;
                continue;
            }
            Ok(Seen::Gone | Seen::Stolen) => None,
            Ok(Seen::Held(holder)) => {
                last_holder = holder.or(last_holder);
                None
            }
            // Something that is not a file (a FIFO, a folder) is never a holder's lock and
            // never goes away by itself: waiting it out would only delay the error.
            Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::InvalidInput => {
                return Err(Error::Lock { path: path.to_owned(), reason: source.to_string() });
            }
            // agent-qa aborts here (§11.17); an unreadable lock file is worth waiting out.
            Err(err) => Some(err.to_string()),
        };
        let now = Instant::now();
        if now >= deadline {
            let waited = now - started;
            return Err(match (last_holder, problem) {
                (None, Some(reason)) => Error::Lock {
                    path: path.to_owned(),
                    reason: format!("{reason}; waited {:.3}s", waited.as_secs_f64()),
                },
                (holder, _) => Error::LockTimeout { path: path.to_owned(), holder, waited },
            });
        }
        quick_retries = 0;
        let jittered = rand::random_range(delay / 2..=delay);
        std::thread::sleep(jittered.min(deadline - now));
        delay = (delay * 3 / 2).min(Duration::from_millis(200));
    }
}

/// One attempt to create the lock file; `None` when it already exists.
fn try_create(path: &Path) -> Result<Option<LockGuard>> {
    let holder = LockHolder::current();
    let content = holder.content();
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let (temp_path, mut temp) = create_temp(parent_dir(path), &name)?;
    let prepared = temp.write_all(content.as_bytes()).and_then(|()| temp.lock());
    let linked = match prepared {
        Ok(()) => fs::hard_link(&temp_path, path),
        Err(e) => Err(e),
    };
    match linked {
        // The temp name stays: it is the two-link mark of a curator holder.
        Ok(()) => finish(path, holder, temp, Some(temp_path), &content).map(Some),
        Err(e) => {
            let _ = fs::remove_file(&temp_path);
            match e.kind() {
                // NotFound: our temp was removed under us (a sweep that took us for dead): the
                // lock was not taken, so try again.
                std::io::ErrorKind::AlreadyExists | std::io::ErrorKind::NotFound => Ok(None),
                _ if no_hard_links(&e) => create_exclusive(path),
                _ => Err(Error::io(path, e)),
            }
        }
    }
}

fn no_hard_links(err: &std::io::Error) -> bool {
    use std::io::ErrorKind::{PermissionDenied, Unsupported};
    matches!(err.kind(), Unsupported | PermissionDenied)
}

/// The fallback for file systems without hard links: agent-qa's `wx` create, flocked before the
/// content is written (waiters give an empty file [`stale::UNPARSABLE_GRACE`]).
fn create_exclusive(path: &Path) -> Result<Option<LockGuard>> {
    let holder = LockHolder::current();
    let content = holder.content();
    let mut file = match OpenOptions::new().read(true).write(true).create_new(true).open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Ok(None),
        Err(e) => return Err(Error::io(path, e)),
    };
    file.lock()
        .and_then(|()| file.write_all(content.as_bytes()))
        .map_err(|e| Error::io(path, e))?;
    finish(path, holder, file, None, &content).map(Some)
}

/// Reads the lock back through its path (§6: verify that the file there is ours).
fn finish(
    path: &Path,
    holder: LockHolder,
    file: File,
    mark: Option<PathBuf>,
    content: &str,
) -> Result<LockGuard> {
    let ours = identity(&file.metadata().map_err(|e| Error::io(path, e))?);
    let guard = LockGuard { path: path.to_owned(), holder, file: Some(file), identity: ours, mark };
    let on_disk = crate::read_regular(path, 4096).map_err(|e| Error::io(path, e))?;
    let meta = fs::symlink_metadata(path).map_err(|e| Error::io(path, e))?;
    if on_disk != content.as_bytes() || identity(&meta) != ours {
        return Err(Error::Lock {
            path: path.to_owned(),
            reason: "the lock file changed right after we created it".into(),
        });
    }
    Ok(guard)
}

/// How many looks in a row that found the lock gone or stolen retry without waiting.
const QUICK_RETRIES: u32 = 3;

/// Looks at an existing lock file and deletes it if it is stale.
fn inspect(path: &Path, timeout: Duration, probe: &dyn ProcessProbe) -> Result<Seen> {
    // A symbolic link is no holder's lock (curator links a regular file into place, agent-qa
    // creates one with `wx`), and it never goes away by itself: the create keeps failing on
    // it while a look through it finds another file, or none.
    if fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        let reason = "a symbolic link, not a lock file (remove it)";
        return Err(Error::io(path, std::io::Error::new(std::io::ErrorKind::InvalidInput, reason)));
    }
    // Not a plain open: a FIFO put where the lock goes would block every writer for ever.
    let mut file = match crate::open_regular(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Seen::Gone),
        Err(e) => return Err(Error::io(path, e)),
    };
    let flock_free = match file.try_lock() {
        Ok(()) => true,
        Err(std::fs::TryLockError::WouldBlock) => false,
        Err(std::fs::TryLockError::Error(e)) => return Err(Error::io(path, e)),
    };
    let meta = file.metadata().map_err(|e| Error::io(path, e))?;
    if flock_free && !names_same_file(path, &meta) {
        // The holder released (or a waiter stole) between our open and our flock.
        return Ok(Seen::Gone);
    }
    let mut content = Vec::new();
    // A lock file is ~60 bytes; refuse to slurp something huge placed there by mistake.
    (&mut file).take(4096).read_to_end(&mut content).map_err(|e| Error::io(path, e))?;
    // A time ahead of our clock (a skewed writer, an NFS server) is a young file, not an
    // unknown age: the grace for a half-written agent-qa file must not be skipped.
    let age = meta.modified().ok().map(|m| m.elapsed().unwrap_or(Duration::ZERO));
    let seen = Observed { content: &content, age, flock_free, curator_mark: meta.nlink() >= 2 };
    match judge(&seen, curator_core::time::now(), timeout, probe) {
        Verdict::Held => Ok(Seen::Held(stale::holder_of(&content))),
        Verdict::Stale(reason) => {
            tracing::info!(path = %path.display(), reason, "removing stale lock");
            // We hold this file's flock, so no other curator waiter can be deleting it too;
            // the identity check keeps us from deleting a successor's fresh file.
            if names_same_file(path, &meta) {
                match fs::remove_file(path) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(Error::io(path, e)),
                }
                remove_marks(path, &meta);
            }
            Ok(Seen::Stolen)
        }
    }
}

/// Whether the lock file at `path` was left by a curator holder that died: two links (the
/// curator mark) and nobody's flock on it, whatever process now has its pid. `lint` takes the
/// lock to clear it, as the next writer would, so agent-qa (which sees only the pid) is not
/// kept waiting for 2·T by a holder that is gone.
pub(crate) fn left_by_dead_curator(path: &Path) -> bool {
    let Ok(file) = crate::open_regular(path) else { return false };
    file.metadata().is_ok_and(|m| m.nlink() >= 2) && file.try_lock().is_ok()
}

/// A temp file of the lock that no live process will link into place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DeadTemp {
    pub(crate) path: PathBuf,
    pub(crate) pid: u32,
}

/// How old a lock temp with a single link must be before it counts as abandoned whatever its
/// pid says (the pid may have been reused): a waiter keeps its temp for microseconds.
pub(crate) const ABANDONED_TEMP_AGE: Duration = Duration::from_secs(600);

/// Temps of the lock at `path` whose writer is gone: a process that died while waiting (one
/// link), or a holder that died (the second name of a stale lock file, removed with it by the
/// next holder). A single-link temp older than [`ABANDONED_TEMP_AGE`] counts whatever its pid
/// says (the pid may have been reused).
pub(crate) fn dead_temps(path: &Path, probe: &dyn ProcessProbe) -> Vec<DeadTemp> {
    let Some(name) = path.file_name() else { return Vec::new() };
    let prefix = format!(".{}.tmp-", name.to_string_lossy());
    let Ok(entries) = fs::read_dir(parent_dir(path)) else { return Vec::new() };
    let mut dead = Vec::new();
    for entry in entries.flatten() {
        let file_name = entry.file_name().to_string_lossy().into_owned();
        if !file_name.starts_with(&prefix) {
            continue;
        }
        let Some(pid) = crate::atomic::temp_writer(&file_name) else { continue };
        let Ok(meta) = entry.path().symlink_metadata() else { continue };
        let age = meta.modified().ok().and_then(|m| m.elapsed().ok());
        let older = |limit| age.is_some_and(|age| age > limit);
        // A second link: a holder's mark, which a live holder's flock protects (the lock it
        // names is stale, or is ours); one link: a waiter's temp, given the time to be linked
        // that a waiter in another pid namespace (its pid dead here) needs.
        let writer_gone = probe.liveness(pid) == Liveness::Dead
            && (meta.nlink() >= 2 || older(crate::atomic::DEAD_WRITER_TEMP_AGE));
        if writer_gone || (meta.nlink() == 1 && older(ABANDONED_TEMP_AGE)) {
            dead.push(DeadTemp { path: entry.path(), pid });
        }
    }
    dead
}

/// Removes the hidden second names a dead curator holder left for the lock file `meta`.
fn remove_marks(path: &Path, meta: &fs::Metadata) {
    let Some(name) = path.file_name() else { return };
    let prefix = format!(".{}.tmp-", name.to_string_lossy());
    let Ok(entries) = fs::read_dir(parent_dir(path)) else { return };
    for entry in entries.flatten() {
        let same = entry.path().symlink_metadata().is_ok_and(|m| identity(&m) == identity(meta));
        if same && entry.file_name().to_string_lossy().starts_with(&prefix) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

fn identity(meta: &fs::Metadata) -> (u64, u64) {
    (meta.dev(), meta.ino())
}

fn names_same_file(path: &Path, meta: &fs::Metadata) -> bool {
    fs::symlink_metadata(path).is_ok_and(|m| identity(&m) == identity(meta))
}

#[cfg(test)]
mod tests;
