//! Changes under the writer lock, written ahead (agent-qa-memory §5.4 writes, §6 lock; issue 2
//! items 5 and 7, issue 13 item 1).
//!
//! Invariants: a `put` writes only text that passed the scanner, the codec's writer and the
//! codec's reader; it never creates a second copy of an id in another folder. Each change is
//! journaled *before* its file changes: its entry (the exact texts before and after, the
//! transaction id) is appended and fsynced, then the file is replaced atomically (temp, fsync,
//! rename, fsync of the folder) or unlinked (then the folder fsynced). When the body succeeds a
//! commit marker is appended and fsynced before the lock is released; only then do the changes
//! count. When the body fails, or a step after an entry was written fails (the file's state is
//! then uncertain, as PostgreSQL's is after a failed statement: every later change is refused),
//! the transaction is rolled back: every file it changed gets its text from before the
//! transaction back, newest change first, and a rollback marker closes it. A transaction is
//! thus atomic across files, like curator-pg's SQL transaction. If even the rollback cannot be
//! written the transaction stays open and the next writer resolves it (`recovery.rs`).

use std::collections::HashSet;
use std::fs;
use std::path::Path;

use curator_core::codec::parse_observation;
use curator_core::{Observation, ObservationId, ScopeName, Tier};

use super::layout::{self, Location, Walk, inside_root, scope_dir};
use super::read::{LoadError, load_unscanned, read_text};
use super::{FileStore, recovery, refused, stored};
use crate::atomic::{atomic_write, sync_dir};
use crate::evidence::{EvidenceQuery, EvidenceView, RunEvidence};
use crate::journal::{End, EndMarker, JournalEntry, JournalFilter};
use crate::lock::iso_millis;
use crate::store::{Action, Place, StoredObservation, Transaction, checked_file_text};
use crate::{Error, Result};

/// The file store's [`Transaction`]: lives only while `.curator.lock` is held.
#[derive(Debug)]
pub(crate) struct FileTransaction<'a> {
    store: &'a FileStore,
    run_id: Option<String>,
    /// This transaction's id in the journal.
    txn: String,
    /// The transaction this one undoes, stamped on every entry ([`Transaction::set_reverts`]).
    reverts: Option<String>,
    /// Entries written so far, oldest first: what a rollback reverts.
    written: Vec<JournalEntry>,
    /// Why the transaction can no longer commit: a step failed after its entry was journaled.
    aborted: Option<String>,
    /// The id index's rebuild count when the lock was taken: once it moves, the index was
    /// rebuilt under the lock and misses are trusted.
    rebuilds_at_start: u64,
    /// Ids found on no disk path under this lock: nobody else writes until it is released, so
    /// asking again (a fresh id is looked up, then checked before its file is written) costs
    /// no second probe.
    absent: HashSet<String>,
    /// The review queue's transaction, made on first use; it runs under this one's lock.
    queue: Option<Box<FileTransaction<'a>>>,
}

impl<'a> FileTransaction<'a> {
    pub(crate) fn new(store: &'a FileStore, run_id: Option<&str>) -> Self {
        let rebuilds_at_start = store.index().rebuilds();
        FileTransaction {
            store,
            run_id: run_id.map(str::to_owned),
            txn: crate::journal::new_transaction_id(),
            reverts: None,
            written: Vec::new(),
            aborted: None,
            rebuilds_at_start,
            absent: HashSet::new(),
            queue: None,
        }
    }

    /// Ends the transaction after its body returned `result`: commits when the body succeeded
    /// and nothing failed after an entry was written, else rolls back.
    pub(crate) fn finish(self, result: Result<()>) -> Result<()> {
        let failure = match (result, self.aborted.clone()) {
            (Ok(()), None) => {
                if self.written.is_empty() {
                    return Ok(());
                }
                crate::fault_point!("wal::before-commit");
                let marker = self.marker(End::Commit, None);
                let Err(failed) = self.store.journal.append_end(&marker) else {
                    crate::fault_point!("wal::after-commit");
                    return Ok(());
                };
                return self.decide_commit(failed);
            }
            (Err(e), _) => e,
            (Ok(()), Some(reason)) => Error::Aborted { reason },
        };
        if !self.written.is_empty() {
            let reason = format!("the transaction failed: {failure}");
            if let Err(e) =
                recovery::roll_back(self.store, &self.txn, &self.written, &reason, &mut Vec::new())
            {
                tracing::error!(
                    txn = %self.txn,
                    "rolling back a failed transaction failed ({e}); the next writer will"
                );
            }
        }
        Err(failure)
    }

    /// The commit marker's append failed, so whether it reached the file is not known from
    /// the error. Decided now, by looking, as the next writer would decide it (a marker in the
    /// file commits the transaction, none rolls it back) but while this writer still holds the
    /// lock: a change whose commit failed is never served in between, and a change that stands
    /// is not reported as failed (a caller would retry it into being applied twice). If the
    /// journal cannot even be read, the next writer decides.
    fn decide_commit(self, failed: Error) -> Result<()> {
        let open = match self.store.journal.open_transactions() {
            Ok(open) => open.iter().any(|o| o.txn == self.txn),
            Err(e) => {
                tracing::error!(txn = %self.txn, "cannot read the journal after a failed commit ({e}); the next writer decides");
                return Err(failed);
            }
        };
        if !open {
            tracing::warn!(
                txn = %self.txn,
                "the commit marker is in the journal although its write reported: {failed}; \
                 the change stands, but may not survive a power loss"
            );
            return Ok(());
        }
        let reason = format!("its commit marker could not be written: {failed}");
        if let Err(e) =
            recovery::roll_back(self.store, &self.txn, &self.written, &reason, &mut Vec::new())
        {
            tracing::error!(txn = %self.txn, "rolling back after a failed commit failed ({e}); the next writer will");
        }
        Err(failed)
    }

    fn marker(&self, end: End, reason: Option<String>) -> EndMarker {
        EndMarker {
            end,
            txn: self.txn.clone(),
            time: iso_millis(curator_core::time::now()),
            run_id: self.run_id.clone(),
            reason,
        }
    }

    /// Refuses every change once a step failed after its entry was journaled.
    fn live(&self) -> Result<()> {
        match &self.aborted {
            Some(reason) => Err(Error::Aborted { reason: reason.clone() }),
            None => Ok(()),
        }
    }

    /// Runs a step that follows an entry: its failure leaves the file's state to the rollback.
    fn after_entry<T>(&mut self, step: Result<T>) -> Result<T> {
        step.inspect_err(|e| self.aborted = Some(e.to_string()))
    }

    /// The review queue's transaction (the lock is already held): the same transaction id and
    /// undo target, so its changes commit or roll back with this one's ([`Self::adopt`]).
    fn queue(&mut self) -> Result<&mut FileTransaction<'a>> {
        self.live()?;
        if self.queue.is_none() {
            let store = self.store.queue()?;
            let mut queue = FileTransaction::new(store, self.run_id.as_deref());
            queue.txn.clone_from(&self.txn);
            queue.reverts.clone_from(&self.reverts);
            self.queue = Some(Box::new(queue));
        }
        self.queue.as_deref_mut().ok_or(Error::Unsupported { operation: "the review queue" })
    }

    /// Takes over what a review-queue step journaled (and whether it failed after an entry):
    /// one transaction, one list of changes to commit or roll back.
    fn adopt<T>(&mut self, step: Result<T>) -> Result<T> {
        if let Some(queue) = self.queue.as_deref_mut() {
            self.written.append(&mut queue.written);
            if let Some(reason) = queue.aborted.take() {
                self.aborted.get_or_insert(reason);
            }
        }
        step
    }

    /// Whether a miss for `id` in the id index can be trusted without checking the disk.
    fn trust_miss(&self, id: &ObservationId) -> bool {
        self.absent.contains(id.as_str()) || self.store.index().rebuilds() > self.rebuilds_at_start
    }

    pub(super) fn find(&mut self, id: &ObservationId) -> Result<Option<StoredObservation>> {
        self.find_as(id, true)
    }

    fn find_as(&mut self, id: &ObservationId, scanned: bool) -> Result<Option<StoredObservation>> {
        let found = self.store.find(id, self.trust_miss(id), scanned)?;
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

    /// Appends the entry of `change` (fsynced) before its file is touched.
    fn write_ahead(&mut self, change: Change<'_>) -> Result<()> {
        let parse = |text: Option<&String>| {
            text.and_then(|t| parse_observation(t, change.id.as_str()).ok()).map(|o| o.snapshot())
        };
        let entry = JournalEntry {
            time: iso_millis(curator_core::time::now()),
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
            txn: Some(self.txn.clone()),
            reverts: self.reverts.clone(),
            place: self.store.place,
            evidence: None,
        };
        crate::fault_point!("wal::before-entry");
        // Even a failed append may have left the line (a failed fsync): from here on the
        // transaction can only commit if every step succeeds.
        let appended = self.store.journal.append(&entry);
        self.written.push(entry);
        self.after_entry(appended)?;
        crate::fault_point!("wal::after-entry");
        Ok(())
    }

    /// Journals an evidence change of this transaction (no file changes: it counts once the
    /// commit marker is written, and a rollback marker voids it).
    fn journal_evidence(&mut self, run: &RunEvidence, action: Action) -> Result<()> {
        let mut entry = JournalEntry::evidence_change(self.run_id.clone(), run, action);
        entry.txn = Some(self.txn.clone());
        entry.reverts.clone_from(&self.reverts);
        let appended = self.store.journal.append(&entry);
        self.written.push(entry);
        self.after_entry(appended)
    }

    /// Atomically writes `change.after` to `<tier>/<scope>/<id>.md`, journaled ahead.
    fn replace(&mut self, mut change: Change<'_>) -> Result<()> {
        self.live()?;
        let (tier, scope, id) = (change.tier, change.scope, change.id);
        let path = self.store.path_of(tier, scope, id);
        let text = change.after.clone().unwrap_or_default();
        let limit = self.store.options.max_file_size;
        if text.len() as u64 > limit {
            let kind = crate::ProblemKind::TooLarge { size: text.len() as u64, limit };
            return Err(Error::Refused { path, kind });
        }
        if self.store.place == Place::Pending {
            // The queue's folder is made on its first write (its parent is the root's).
            fs::create_dir_all(&self.store.root).map_err(|e| Error::io(&self.store.root, e))?;
        }
        scope_dir(&self.store.root, tier, scope, true)?.ok_or_else(|| {
            Error::io(&path, std::io::Error::other("scope folder was not created"))
        })?;
        self.check_no_other_copy(id, &path)?;
        change.before = self.before_text(&path)?;
        self.write_ahead(change)?;
        let written = atomic_write(&path, text.as_bytes());
        self.after_entry(written)?;
        let loc = Location { tier, scope: scope.clone(), stem: id.to_string(), path };
        self.store.index().insert(loc);
        self.absent.remove(id.as_str());
        Ok(())
    }

    /// Deletes `<tier>/<scope>/<id>.md`, journaled ahead; `false` when there was no such file.
    fn remove(&mut self, mut change: Change<'_>) -> Result<bool> {
        self.live()?;
        let Some(dir) = scope_dir(&self.store.root, change.tier, change.scope, false)? else {
            return Ok(false);
        };
        let path = self.store.path_of(change.tier, change.scope, change.id);
        let Some(before) = self.before_text(&path)? else { return Ok(false) };
        let id = change.id.to_string();
        change.before = Some(before);
        self.write_ahead(change)?;
        let removed = match fs::remove_file(&path) {
            Ok(()) => Ok(()),
            // Gone since we read it: nobody writes under our lock, so only a process that
            // ignores it (a person, agent-qa without the lock) could have; it is gone either way.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(Error::io(&path, e)),
        };
        self.after_entry(removed)?;
        crate::fault_point!("wal::after-unlink");
        let synced = sync_dir(&dir);
        self.after_entry(synced)?;
        self.store.index().remove(&id, &path);
        Ok(true)
    }

    /// The current text of a file about to be replaced or deleted, for the journal; `None`
    /// when there is no file. A file whose text cannot be journaled (too large, not UTF-8) is
    /// not replaced: a rollback could not give it back.
    fn before_text(&self, path: &Path) -> Result<Option<String>> {
        if let Err(kind) = inside_root(&self.store.root, path) {
            return Err(refused(path, kind));
        }
        match read_text(path, self.store.options.max_file_size) {
            Ok(text) => Ok(Some(text)),
            Err(LoadError::Missing) => Ok(None),
            Err(LoadError::Refused(kind)) => Err(refused(path, kind)),
        }
    }

    /// The observations of one scope that load (parse, and pass the scanner when `scanned`),
    /// sorted by file name.
    fn list_in_scope(
        &mut self,
        tier: Tier,
        scope: &ScopeName,
        scanned: bool,
    ) -> Result<Vec<StoredObservation>> {
        let root = &self.store.root;
        let Some(dir) = scope_dir(root, tier, scope, false)? else {
            return Ok(Vec::new());
        };
        let mut walk = Walk::default();
        layout::walk_scope(root, tier, scope.clone(), &dir, &mut walk);
        for found in &walk.problems {
            tracing::warn!("not served: {}", found.problem);
        }
        let mut listed = Vec::new();
        for loc in &walk.locations {
            let loaded = if scanned {
                self.store.load(loc)
            } else {
                load_unscanned(&loc.path, &loc.stem, self.store.options.max_file_size)
            };
            match loaded {
                Ok(loaded) => listed.push(stored(loc, loaded)),
                Err(LoadError::Missing) => {}
                Err(LoadError::Refused(kind)) => {
                    tracing::warn!(path = %loc.path.display(), "not served: {kind}");
                }
            }
        }
        Ok(listed)
    }
}

/// What one change does, for its journal entry.
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

    fn get_parsed(&mut self, id: &ObservationId) -> Result<Option<StoredObservation>> {
        self.find_as(id, false)
    }

    fn list_scope(&mut self, tier: Tier, scope: &ScopeName) -> Result<Vec<StoredObservation>> {
        self.list_in_scope(tier, scope, true)
    }

    fn list_scope_parsed(
        &mut self,
        tier: Tier,
        scope: &ScopeName,
    ) -> Result<Vec<StoredObservation>> {
        self.list_in_scope(tier, scope, false)
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
        self.live()?;
        let mut entry = JournalEntry::note(self.run_id.clone(), stored, action, reasoning);
        entry.txn = Some(self.txn.clone());
        entry.reverts.clone_from(&self.reverts);
        let appended = self.store.journal.append(&entry);
        self.written.push(entry);
        self.after_entry(appended)
    }

    fn journal(&mut self, filter: &JournalFilter) -> Result<Vec<JournalEntry>> {
        self.store.journal.read_including(filter, Some(&self.txn))
    }

    fn set_reverts(&mut self, txn: &str) -> Result<()> {
        self.reverts = Some(txn.to_owned());
        if let Some(queue) = self.queue.as_deref_mut() {
            queue.reverts = Some(txn.to_owned());
        }
        Ok(())
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

    fn pending_get(&mut self, id: &ObservationId) -> Result<Option<StoredObservation>> {
        self.queue()?.find(id)
    }

    /// Under the root's lock, which every writer of the queue holds.
    fn pending_list_scope(
        &mut self,
        tier: Tier,
        scope: &ScopeName,
    ) -> Result<Vec<StoredObservation>> {
        self.queue()?.list_in_scope(tier, scope, true)
    }

    fn pending_put(
        &mut self,
        tier: Tier,
        scope: &ScopeName,
        observation: &Observation,
        action: Action,
        reasoning: &str,
    ) -> Result<()> {
        // An id lives in one place: never queue a copy of a served observation.
        if let Some(served) = self.find(&observation.id)? {
            let queued = self.queue()?.store.path_of(tier, scope, &observation.id);
            let paths =
                vec![self.store.path_of(served.tier, &served.scope, &observation.id), queued];
            return Err(Error::DuplicateId { id: observation.id.to_string(), paths });
        }
        let put = self.queue()?.put(tier, scope, observation, action, reasoning);
        self.adopt(put)
    }

    fn pending_read_text(
        &mut self,
        tier: Tier,
        scope: &ScopeName,
        id: &ObservationId,
    ) -> Result<Option<String>> {
        self.queue()?.read_text(tier, scope, id)
    }

    fn pending_restore(
        &mut self,
        tier: Tier,
        scope: &ScopeName,
        id: &ObservationId,
        text: Option<&str>,
        action: Action,
        reasoning: &str,
    ) -> Result<()> {
        let restored = self.queue()?.restore(tier, scope, id, text, action, reasoning);
        self.adopt(restored)
    }

    fn record_evidence(&mut self, run: &RunEvidence) -> Result<bool> {
        self.live()?;
        if self.store.journal.evidence(Some(&self.txn))?.contains(&run.run_id) {
            return Ok(false);
        }
        self.journal_evidence(run, Action::Evidence).map(|()| true)
    }

    fn retract_evidence(&mut self, run: &RunEvidence) -> Result<bool> {
        self.live()?;
        if !self.store.journal.evidence(Some(&self.txn))?.contains(&run.run_id) {
            return Ok(false);
        }
        self.journal_evidence(run, Action::Retract).map(|()| true)
    }

    fn evidence(&mut self, query: &EvidenceQuery) -> Result<EvidenceView> {
        Ok(self.store.journal.evidence(Some(&self.txn))?.view(query))
    }
}
