//! Resolving what a dead writer left: an open transaction and its temp files (issue 13 item 1).
//!
//! The rule: **a transaction is committed exactly when its commit marker is in the journal.**
//! A committed transaction needs nothing: its commit marker is written only after every file it
//! changed is durable (temp fsynced, renamed, folder fsynced), so rolling it forward is already
//! done. A transaction without an end marker is **rolled back**, newest change first, deciding
//! each change by what its file holds now:
//!
//! | file now holds | meaning | done |
//! |---|---|---|
//! | the entry's `after_file` (absent for a delete) | the change reached the file | the `before_file` text is written back atomically (or the file removed when there was none) |
//! | the entry's `before_file` | the writer died before the rename or unlink | nothing |
//! | anything else | somebody outside curator's lock changed it since | left as found, and said so |
//!
//! Each change replaces or unlinks a file in one atomic step, so a file always holds one of the
//! first two (a rename is atomic; an entry is fsynced before its file is touched). Then every
//! temp file of the changed files is removed (a temp exists only between its change's entry and
//! its rename, so the folders of an open transaction's entries are the only places a dead writer
//! can have left one) and a rollback marker closes the transaction. Rolling back twice is
//! harmless — the second pass finds every file at its `before_file` — so a crash during recovery
//! is resolved by the next one. After it, every file equals the replay of the committed entries.
//!
//! Recovery runs under the writer lock: at the start of every [`crate::Store::transact`], and
//! from `curator lint` through [`crate::Store::recover`]. An entry's tier, scope and id are
//! checked like any other input before a path is built from them: a hand-edited journal never
//! makes recovery write outside the root.

use std::fs;
use std::path::{Path, PathBuf};

use curator_core::{ObservationId, ScopeName, Tier};

use super::FileStore;
use super::layout::{Location, scope_dir};
use super::read::{LoadError, read_text};
use crate::atomic::{atomic_write, parent_dir, sync_dir};
use crate::journal::{End, EndMarker, JournalEntry};
use crate::lock::iso_millis;
use crate::store::{Place, Recovered};
use crate::{Error, Result};

/// Rolls back every open transaction of the journal (see the module doc). Call only while
/// holding the writer lock.
pub(crate) fn recover(store: &FileStore) -> Result<Vec<Recovered>> {
    let mut report = Vec::new();
    for open in store.journal.open_transactions()?.iter().rev() {
        let reason = "its writer stopped before committing it (recovered by the next writer)";
        roll_back(store, &open.txn, &open.entries, reason, &mut report)?;
    }
    Ok(report)
}

/// Puts back what `entries` (the changes of transaction `txn`, oldest first) changed, removes
/// their temp files and appends a rollback marker.
pub(crate) fn roll_back(
    store: &FileStore,
    txn: &str,
    entries: &[JournalEntry],
    reason: &str,
    report: &mut Vec<Recovered>,
) -> Result<()> {
    let mut folders: Vec<(PathBuf, String)> = Vec::new();
    for entry in entries.iter().rev().filter(|e| e.changes_a_file()) {
        // A review-queue entry names a file of the queue's tree (issue 18).
        let store = match entry.place {
            Place::Pending => store.queue()?,
            Place::Memory => store,
        };
        let Some(path) = entry_path(store, entry)? else { continue };
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let dir = parent_dir(&path).to_owned();
        if !folders.iter().any(|(d, n)| *d == dir && *n == name) {
            folders.push((dir, name));
        }
        let current = match read_text(&path, store.options.max_file_size) {
            Ok(text) => Some(text),
            Err(LoadError::Missing) => None,
            Err(LoadError::Refused(kind)) => {
                report.push(Recovered::new(&path, format!("left as found ({kind})")));
                continue;
            }
        };
        if current == entry.after_file {
            restore(store, entry, &path)?;
            crate::fault_point!("recover::after-restore");
            let what = format!("change {:?} of transaction {txn} rolled back", entry.action);
            report.push(Recovered::new(&path, what));
        } else if current != entry.before_file {
            tracing::warn!(path = %path.display(), txn, "changed outside curator since a crash; left as found");
            let what = format!(
                "left as found: changed outside curator since transaction {txn} was interrupted"
            );
            report.push(Recovered::new(&path, what));
        }
    }
    for (dir, name) in &folders {
        for temp in remove_temps(dir, name)? {
            report.push(Recovered::new(&temp, "temp file of a dead writer removed".to_owned()));
        }
    }
    let marker = EndMarker {
        end: End::Rollback,
        txn: txn.to_owned(),
        time: iso_millis(curator_core::time::now()),
        run_id: entries.iter().find_map(|e| e.run_id.clone()),
        reason: Some(reason.to_owned()),
    };
    store.journal.append_end(&marker)?;
    tracing::warn!(txn, "transaction rolled back: {reason}");
    let run = marker.run_id.as_deref().map_or(String::new(), |r| format!(" of run {r}"));
    let what = format!("transaction {txn}{run} rolled back: {reason}");
    report.push(Recovered::new(store.journal.path(), what));
    Ok(())
}

/// The file an entry names, `None` when its scope folder does not exist (nothing to restore
/// into: the change never reached a file).
fn entry_path(store: &FileStore, entry: &JournalEntry) -> Result<Option<PathBuf>> {
    let bad = |reason: String| Error::Journal {
        path: store.journal.path().to_owned(),
        line: 0,
        reason: format!("entry of {:?} in an open transaction names no file: {reason}", entry.id),
    };
    let tier: Tier =
        entry.tier.parse().map_err(|e: curator_core::ScopeError| bad(e.to_string()))?;
    let scope = ScopeName::new(entry.scope.as_str()).map_err(|e| bad(e.to_string()))?;
    let id = ObservationId::parse(&entry.id).map_err(|e| bad(e.to_string()))?;
    let create = entry.before_file.is_some();
    Ok(scope_dir(&store.root, tier, &scope, create)?.map(|_| store.path_of(tier, &scope, &id)))
}

/// Writes an entry's `before_file` back (or removes the file when it had none).
fn restore(store: &FileStore, entry: &JournalEntry, path: &Path) -> Result<()> {
    let (tier, scope) = (entry.tier.parse().ok(), ScopeName::new(entry.scope.as_str()).ok());
    match &entry.before_file {
        Some(text) => {
            atomic_write(path, text.as_bytes())?;
            if let (Some(tier), Some(scope)) = (tier, scope) {
                let loc = Location { tier, scope, stem: entry.id.clone(), path: path.to_owned() };
                store.index().insert(loc);
            }
        }
        None => {
            match fs::remove_file(path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::io(path, e)),
            }
            sync_dir(parent_dir(path))?;
            store.index().remove(&entry.id, path);
        }
    }
    Ok(())
}

/// Removes the temp files of `name` in `dir` (`.<name>.tmp-<pid>-<random>`, see `atomic.rs`).
/// Under the writer lock nobody else is writing one, so every such file is a dead writer's.
fn remove_temps(dir: &Path, name: &str) -> Result<Vec<PathBuf>> {
    let prefix = format!(".{name}.tmp-");
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io(dir, e)),
    };
    let mut removed = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        if entry.file_name().to_string_lossy().starts_with(&prefix) {
            let path = entry.path();
            match fs::remove_file(&path) {
                Ok(()) => removed.push(path),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::io(&path, e)),
            }
        }
    }
    if !removed.is_empty() {
        sync_dir(dir)?;
    }
    Ok(removed)
}
