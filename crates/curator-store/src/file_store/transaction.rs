//! Changes under the writer lock (agent-qa-memory §5.4 writes, §6 lock; issue 2 items 5 and 7).
//!
//! Invariants: a `put` writes only text that passed the scanner, the codec's writer and the
//! codec's reader; it never creates a second copy of an id in another folder; each change is an
//! atomic file replacement followed by one journal line, both before the lock is released. If
//! the journal line cannot be written, the file change is rolled back so that no unjournaled
//! change survives. A transaction is not atomic across files: changes made before a failing
//! step stay (and are journaled, so `undo` can revert them).

use std::collections::HashSet;
use std::fs;
use std::path::Path;

use curator_core::codec::parse_observation;
use curator_core::{Observation, ObservationId, ScopeName, Tier};

use super::layout::{self, Location, Walk, inside_root, scope_dir};
use super::read::{LoadError, read_text};
use super::{FileStore, refused, stored};
use crate::atomic::{atomic_write, sync_dir};
use crate::journal::JournalEntry;
use crate::lock::iso_millis;
use crate::store::{Action, StoredObservation, Transaction, checked_file_text};
use crate::{Error, Result};

/// The file store's [`Transaction`]: lives only while `.curator.lock` is held.
#[derive(Debug)]
pub(crate) struct FileTransaction<'a> {
    store: &'a FileStore,
    run_id: Option<String>,
    /// The id index's rebuild count when the lock was taken: once it moves, the index was
    /// rebuilt under the lock and misses are trusted.
    rebuilds_at_start: u64,
    /// Ids found on no disk path under this lock: nobody else writes until it is released, so
    /// asking again (a fresh id is looked up, then checked before its file is written) costs
    /// no second probe.
    absent: HashSet<String>,
}

impl<'a> FileTransaction<'a> {
    pub(crate) fn new(store: &'a FileStore, run_id: Option<&str>) -> Self {
        let rebuilds_at_start = store.index().rebuilds();
        FileTransaction {
            store,
            run_id: run_id.map(str::to_owned),
            rebuilds_at_start,
            absent: HashSet::new(),
        }
    }

    /// Whether a miss for `id` in the id index can be trusted without checking the disk.
    fn trust_miss(&self, id: &ObservationId) -> bool {
        self.absent.contains(id.as_str()) || self.store.index().rebuilds() > self.rebuilds_at_start
    }

    pub(super) fn find(&mut self, id: &ObservationId) -> Result<Option<StoredObservation>> {
        let found = self.store.find(id, self.trust_miss(id))?;
        if found.is_none() {
            self.absent.insert(id.to_string());
        }
        Ok(found)
    }

    /// Refuses to write an id that already lives in another folder.
    fn check_no_other_copy(&mut self, id: &ObservationId, path: &Path) -> Result<()> {
        let trust = self.trust_miss(id);
        let mut paths: Vec<_> = {
            let mut index = self.store.index();
            index.locate(&self.store.root, id.as_str(), trust).into_iter().map(|l| l.path).collect()
        };
        paths.retain(|p| p != path);
        if paths.is_empty() {
            return Ok(());
        }
        paths.push(path.to_owned());
        Err(Error::DuplicateId { id: id.to_string(), paths })
    }

    fn journal(&self, change: Change<'_>, rollback: impl FnOnce() -> Result<()>) -> Result<()> {
        let parse = |text: Option<&String>| {
            text.and_then(|t| parse_observation(t, change.id.as_str()).ok()).map(|o| o.snapshot())
        };
        let entry = JournalEntry {
            time: iso_millis(jiff::Timestamp::now()),
            run_id: self.run_id.clone(),
            action: change.action,
            tier: change.tier.dir_name().to_owned(),
            scope: change.scope.as_str().to_owned(),
            id: change.id.to_string(),
            reasoning: change.reasoning.to_owned(),
            before: parse(change.before.as_ref()),
            after: parse(change.after.as_ref()),
            before_file: change.before,
            after_file: change.after,
        };
        if let Err(err) = self.store.journal.append(&entry) {
            if let Err(undo) = rollback() {
                tracing::error!(
                    "journal failed ({err}) and the change could not be undone: {undo}"
                );
            }
            return Err(err);
        }
        Ok(())
    }

    /// Atomically writes `change.after` to `<tier>/<scope>/<id>.md` and journals it.
    fn replace(&mut self, mut change: Change<'_>) -> Result<()> {
        let (tier, scope, id) = (change.tier, change.scope, change.id);
        let path = self.store.path_of(tier, scope, id);
        let text = change.after.clone().unwrap_or_default();
        let limit = self.store.options.max_file_size;
        if text.len() as u64 > limit {
            let kind = crate::ProblemKind::TooLarge { size: text.len() as u64, limit };
            return Err(Error::Refused { path, kind });
        }
        let dir = scope_dir(&self.store.root, tier, scope, true)?.ok_or_else(|| {
            Error::io(&path, std::io::Error::other("scope folder was not created"))
        })?;
        self.check_no_other_copy(id, &path)?;
        let before = self.before_text(&path)?;
        atomic_write(&path, text.as_bytes())?;
        let rollback = || match &before {
            Some(old) => atomic_write(&path, old.as_bytes()),
            None => fs::remove_file(&path)
                .map_err(|e| Error::io(&path, e))
                .and_then(|()| sync_dir(&dir)),
        };
        change.before.clone_from(&before);
        self.journal(change, rollback)?;
        let loc = Location { tier, scope: scope.clone(), stem: id.to_string(), path };
        self.store.index().insert(loc);
        self.absent.remove(id.as_str());
        Ok(())
    }

    /// Deletes `<tier>/<scope>/<id>.md` and journals it; `false` when there was no such file.
    fn remove(&mut self, mut change: Change<'_>) -> Result<bool> {
        let Some(dir) = scope_dir(&self.store.root, change.tier, change.scope, false)? else {
            return Ok(false);
        };
        let path = self.store.path_of(change.tier, change.scope, change.id);
        let before = self.before_text(&path)?;
        match fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
            Err(e) => return Err(Error::io(&path, e)),
        }
        sync_dir(&dir)?;
        let rollback = || match &before {
            Some(old) => atomic_write(&path, old.as_bytes()),
            None => Ok(()),
        };
        let id = change.id.to_string();
        change.before.clone_from(&before);
        self.journal(change, rollback)?;
        self.store.index().remove(&id, &path);
        Ok(true)
    }

    /// The current text of a file about to be replaced or deleted, for the journal. A file that
    /// is too large or not UTF-8 may still be replaced by id, but its text is not kept.
    fn before_text(&self, path: &Path) -> Result<Option<String>> {
        if let Err(kind) = inside_root(&self.store.root, path) {
            return Err(refused(path, kind));
        }
        match read_text(path, self.store.options.max_file_size) {
            Ok(text) => Ok(Some(text)),
            Err(LoadError::Missing) => Ok(None),
            Err(LoadError::Refused(kind)) => {
                tracing::warn!(path = %path.display(), "previous text not journaled: {kind}");
                Ok(None)
            }
        }
    }
}

/// What one change did, for its journal line.
struct Change<'a> {
    action: Action,
    tier: Tier,
    scope: &'a ScopeName,
    id: &'a ObservationId,
    reasoning: &'a str,
    before: Option<String>,
    after: Option<String>,
}

impl Transaction for FileTransaction<'_> {
    fn get(&mut self, id: &ObservationId) -> Result<Option<StoredObservation>> {
        self.find(id)
    }

    fn list_scope(&mut self, tier: Tier, scope: &ScopeName) -> Result<Vec<StoredObservation>> {
        let root = &self.store.root;
        let Some(dir) = scope_dir(root, tier, scope, false)? else {
            return Ok(Vec::new());
        };
        let mut walk = Walk::default();
        layout::walk_scope(root, tier, scope.clone(), &dir, &mut walk);
        for found in &walk.problems {
            tracing::warn!("not served: {}", found.problem);
        }
        let mut served = Vec::new();
        for loc in &walk.locations {
            match self.store.load(loc) {
                Ok(loaded) => served.push(stored(loc, loaded)),
                Err(LoadError::Missing) => {}
                Err(LoadError::Refused(kind)) => {
                    tracing::warn!(path = %loc.path.display(), "not served: {kind}");
                }
            }
        }
        Ok(served)
    }

    fn put(
        &mut self,
        tier: Tier,
        scope: &ScopeName,
        observation: &Observation,
        action: Action,
        reasoning: &str,
    ) -> Result<()> {
        let id = &observation.id;
        let path = self.store.path_of(tier, scope, id);
        let (text, _) = checked_file_text(observation, &path)?;
        self.replace(Change { action, tier, scope, id, reasoning, before: None, after: Some(text) })
    }

    fn delete(
        &mut self,
        tier: Tier,
        scope: &ScopeName,
        id: &ObservationId,
        action: Action,
        reasoning: &str,
    ) -> Result<()> {
        let change = Change { action, tier, scope, id, reasoning, before: None, after: None };
        if self.remove(change)? { Ok(()) } else { Err(Error::NotFound { id: id.to_string() }) }
    }

    fn note(&mut self, stored: &StoredObservation, action: Action, reasoning: &str) -> Result<()> {
        let entry = JournalEntry::note(self.run_id.clone(), stored, action, reasoning);
        self.store.journal.append(&entry)
    }

    fn read_text(
        &mut self,
        tier: Tier,
        scope: &ScopeName,
        id: &ObservationId,
    ) -> Result<Option<String>> {
        if scope_dir(&self.store.root, tier, scope, false)?.is_none() {
            return Ok(None);
        }
        let path = self.store.path_of(tier, scope, id);
        if let Err(kind) = inside_root(&self.store.root, &path) {
            return Err(refused(&path, kind));
        }
        match read_text(&path, self.store.options.max_file_size) {
            Ok(text) => Ok(Some(text)),
            Err(LoadError::Missing) => Ok(None),
            Err(LoadError::Refused(kind)) => Err(refused(&path, kind)),
        }
    }

    fn restore(
        &mut self,
        tier: Tier,
        scope: &ScopeName,
        id: &ObservationId,
        text: Option<&str>,
        action: Action,
        reasoning: &str,
    ) -> Result<()> {
        let after = text.map(str::to_owned);
        let change = Change { action, tier, scope, id, reasoning, before: None, after };
        if change.after.is_some() {
            self.replace(change)
        } else {
            // No file is already the state `undo` asked for: no mutation, so no journal line.
            self.remove(change).map(|_| ())
        }
    }
}
