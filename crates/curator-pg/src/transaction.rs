//! The PostgreSQL [`Transaction`]: one SQL transaction per `transact` call (issue 7 item 3).
//!
//! Invariants, matching the file store's (agent-qa-memory §5.4 writes, §7 scanner): `put`
//! stores only text that passed the scanner and the codec's writer and reader; an id lives in
//! one place (tier, scope) and a `put` elsewhere is `DuplicateId`; every change writes one
//! journal row in the same transaction. Every row read here is locked `FOR UPDATE` until the
//! transaction ends, so a read-modify-write is never lost to a concurrent writer.
//!
//! Once a statement fails, PostgreSQL refuses every further statement of the transaction; the
//! first failure is remembered, later calls return it at once, and the transaction is rolled
//! back (and retried when the failure was a deadlock or serialization failure) even if `body`
//! swallowed the error — a curator body that logs per-decision errors cannot commit half of a
//! failed transaction.
//!
//! Journal semantics match the file store's write-ahead journal (issue 13): every row carries
//! the transaction's id (`txn`, new for each attempt) and, in an undo, the transaction it
//! reverts; rows become visible to other readers only when the SQL transaction commits, which is
//! when the file store's commit marker would be written. A transaction with a run id first takes
//! that run's advisory lock (`sql::lock_run`), so deciding "already applied?" from the journal
//! and applying happen with no other transaction of the run in between.

use curator_core::codec::parse_observation;
use curator_core::{Observation, ObservationId, ScopeName, Tier};
use curator_store::{
    Action, Error, JournalEntry, JournalFilter, ProblemKind, Result, StoredObservation,
    Transaction, checked_file_text,
};

use curator_store::evidence::{EvidenceQuery, EvidenceView, RunEvidence};

use crate::row::{Derived, RawRow, path_of, refused};
use crate::sql::{self, Table};
use crate::store::{PgStore, driver_message, driver_unavailable, is_conflict};
use tokio_postgres::error::SqlState;

/// Largest observation text written, as the file store's default `max_file_size` (1 MiB).
const MAX_TEXT: usize = 1 << 20;

/// The first failure of a transaction, kept after the driver's error went to `body`.
#[derive(Debug, Clone, thiserror::Error)]
#[error("transaction rolled back: {message}")]
pub(crate) struct Aborted {
    /// A deadlock or serialization failure: the whole transaction may be tried again.
    pub(crate) retryable: bool,
    /// A lock wait outlasted the store's `lock_timeout`.
    pub(crate) lock_timeout: bool,
    /// The database could not be reached or went away ([`crate::store::is_unavailable`]).
    pub(crate) unavailable: bool,
    pub(crate) message: String,
}

impl Aborted {
    pub(crate) fn into_error(self) -> Error {
        Error::Database { what: "running a transaction".into(), source: Box::new(self) }
    }
}

/// Changes inside one SQL transaction.
pub(crate) struct PgTransaction<'a> {
    store: &'a PgStore,
    tx: deadpool_postgres::Transaction<'a>,
    run_id: Option<String>,
    /// This attempt's id in the journal.
    txn: String,
    /// The transaction this one undoes ([`Transaction::set_reverts`]).
    reverts: Option<String>,
    aborted: Option<Aborted>,
}

impl std::fmt::Debug for PgTransaction<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgTransaction")
            .field("run_id", &self.run_id)
            .field("aborted", &self.aborted)
            .finish_non_exhaustive()
    }
}

impl<'a> PgTransaction<'a> {
    pub(crate) fn new(
        store: &'a PgStore,
        tx: deadpool_postgres::Transaction<'a>,
        run_id: Option<&str>,
    ) -> Self {
        let txn = curator_store::new_transaction_id();
        PgTransaction {
            store,
            tx,
            run_id: run_id.map(str::to_owned),
            txn,
            reverts: None,
            aborted: None,
        }
    }

    /// Takes the advisory lock of the transaction's run, if it has one.
    pub(crate) fn lock_run(&mut self) -> Result<()> {
        let Some(run_id) = self.run_id.clone() else { return Ok(()) };
        self.live()?;
        let r = self.store.block_on(sql::lock_run(&self.tx, &run_id));
        self.checked(format!("taking the lock of run {run_id}"), r)
    }

    /// The SQL transaction to commit or roll back, and the failure that forces a rollback.
    pub(crate) fn finish(self) -> (deadpool_postgres::Transaction<'a>, Option<Aborted>) {
        (self.tx, self.aborted)
    }

    /// Takes a transaction-scoped advisory lock on `key` (released at commit or rollback).
    pub(crate) fn advisory_lock(&mut self, key: &str) -> Result<()> {
        self.live()?;
        let r = self.store.block_on(async {
            let stmt = self.tx.prepare_cached("SELECT pg_advisory_xact_lock(hashtext($1))").await?;
            self.tx.execute(&stmt, &[&key]).await
        });
        self.checked(format!("taking advisory lock {key:?}"), r).map(drop)
    }

    /// Refuses to send anything once a statement failed.
    fn live(&self) -> Result<()> {
        match &self.aborted {
            Some(a) => Err(a.clone().into_error()),
            None => Ok(()),
        }
    }

    /// Remembers the first driver failure and turns it into the store's error.
    fn checked<T>(&mut self, what: String, r: Result<T, tokio_postgres::Error>) -> Result<T> {
        r.map_err(|e| {
            self.aborted = Some(Aborted {
                retryable: is_conflict(&e),
                lock_timeout: e.code() == Some(&SqlState::LOCK_NOT_AVAILABLE),
                unavailable: driver_unavailable(&e),
                message: format!("{what}: {}", driver_message(&e)),
            });
            PgStore::db_error(what, e)
        })
    }

    /// The rows of one scope that parse (and pass the scanner when `scanned`), sorted by id.
    fn scope_observations(
        &mut self,
        tier: Tier,
        scope: &ScopeName,
        scanned: bool,
    ) -> Result<Vec<StoredObservation>> {
        self.scope_rows(Table::Observations, tier, scope, scanned)
    }

    fn scope_rows(
        &mut self,
        table: Table,
        tier: Tier,
        scope: &ScopeName,
        scanned: bool,
    ) -> Result<Vec<StoredObservation>> {
        self.live()?;
        let (tier_name, scope_name) = (tier.dir_name(), scope.as_str());
        let r = self.store.block_on(sql::scope_rows(&self.tx, table, tier_name, scope_name, true));
        let rows = self.checked(format!("listing {tier}/{scope}"), r)?;
        let mut listed = Vec::with_capacity(rows.len());
        for row in rows {
            let loaded = if scanned { row.into_stored() } else { row.into_parsed() };
            match loaded {
                Ok(stored) => listed.push(stored),
                Err(problem) => tracing::warn!("not served: {problem}"),
            }
        }
        Ok(listed)
    }

    fn locked_row(&mut self, table: Table, id: &str) -> Result<Option<RawRow>> {
        self.live()?;
        let r = self.store.block_on(sql::by_id(&self.tx, table, id, true));
        self.checked(format!("reading {id}"), r)
    }

    fn journal(&mut self, table: Table, change: Change<'_>) -> Result<()> {
        let id = change.id;
        let snapshot = |text: Option<&String>| {
            text.and_then(|t| parse_observation(t, id).ok()).map(|o| o.snapshot())
        };
        let entry = JournalEntry {
            time: iso_now(),
            run_id: self.run_id.clone(),
            action: change.action,
            tier: change.tier.dir_name().to_owned(),
            scope: change.scope.as_str().to_owned(),
            id: id.to_owned(),
            reasoning: change.reasoning.to_owned(),
            before: snapshot(change.before.as_ref()),
            after: snapshot(change.after.as_ref()),
            before_file: change.before,
            after_file: change.after,
            txn: None,
            reverts: None,
            place: table.place(),
            evidence: None,
        };
        self.append(entry)
    }

    fn append(&mut self, mut entry: JournalEntry) -> Result<()> {
        entry.txn = Some(self.txn.clone());
        entry.reverts.clone_from(&self.reverts);
        let entry = &entry;
        self.live()?;
        let r = self.store.block_on(sql::append_journal(&self.tx, entry));
        self.checked(format!("journaling {}", entry.id), r)
    }

    /// Stores `text` (already parsed as `observation`) at `tier`/`scope` of `table` and
    /// journals it.
    #[allow(clippy::too_many_arguments)]
    fn write(
        &mut self,
        table: Table,
        tier: Tier,
        scope: &ScopeName,
        observation: &Observation,
        text: String,
        action: Action,
        reasoning: &str,
    ) -> Result<()> {
        let id = observation.id.as_str();
        let path = path_of(tier, scope, &observation.id);
        if text.len() > MAX_TEXT {
            let kind = ProblemKind::TooLarge { size: text.len() as u64, limit: MAX_TEXT as u64 };
            return Err(Error::Refused { path, kind });
        }
        // Checked before any statement: PostgreSQL refuses the character, and a failed
        // statement would abort the whole transaction (a run's other changes with it).
        if let Some(at) = text.find('\0') {
            let kind = ProblemKind::NotStored(format!(
                "PostgreSQL cannot store the NUL character (U+0000) at byte {at} of the file"
            ));
            return Err(Error::Refused { path, kind });
        }
        // The same character written as a YAML escape (`"\0"`) is no NUL byte in the file,
        // but one in the field the database stores on its own.
        let snapshot = observation.suite.as_ref().map(|s| s.suite_snapshot.iter());
        let tests = snapshot.into_iter().flatten().flat_map(|e| [e.test.as_str(), e.id.as_str()]);
        let fields = [
            ("title", observation.title.as_str()),
            ("content", observation.content.as_str()),
            ("created", observation.created.as_str()),
            ("last_confirmed", observation.last_confirmed.as_str()),
            ("source_test", observation.source_test.as_str()),
        ];
        let with_nul = fields.into_iter().chain(tests.map(|t| ("suite_tests", t)));
        if let Some((field, _)) = with_nul.into_iter().find(|(_, v)| v.contains('\0')) {
            let kind = ProblemKind::NotStored(format!(
                "PostgreSQL cannot store the NUL character (U+0000) its {field} holds"
            ));
            return Err(Error::Refused { path, kind });
        }
        let existing = self.locked_row(table, id)?;
        let before = match existing {
            Some(row) if row.tier != tier.dir_name() || row.scope != scope.as_str() => {
                return Err(Error::DuplicateId {
                    id: id.to_owned(),
                    paths: vec![row.path(), path],
                });
            }
            Some(row) => Some(row.file_text),
            None => None,
        };
        let derived = Derived::new(tier, scope, observation, text.clone());
        let r = self.store.block_on(sql::upsert(&self.tx, table, &derived));
        if !self.checked(format!("writing {id}"), r)? {
            // Inserted elsewhere by a concurrent transaction since our read.
            return Err(Error::DuplicateId { id: id.to_owned(), paths: vec![path] });
        }
        let after = Some(text);
        self.journal(table, Change { action, tier, scope, id, reasoning, before, after })
    }

    /// Deletes the row at `tier`/`scope` of `table` and journals it; `false` when there was
    /// none.
    fn remove(
        &mut self,
        table: Table,
        tier: Tier,
        scope: &ScopeName,
        id: &ObservationId,
        action: Action,
        reasoning: &str,
    ) -> Result<bool> {
        let before = match self.locked_row(table, id.as_str())? {
            Some(row) if row.tier == tier.dir_name() && row.scope == scope.as_str() => {
                row.file_text
            }
            _ => return Ok(false),
        };
        let r = self.store.block_on(sql::delete(
            &self.tx,
            table,
            tier.dir_name(),
            scope.as_str(),
            id.as_str(),
        ));
        self.checked(format!("deleting {id}"), r)?;
        let change = Change {
            action,
            tier,
            scope,
            id: id.as_str(),
            reasoning,
            before: Some(before),
            after: None,
        };
        self.journal(table, change)?;
        Ok(true)
    }

    /// Puts `text` back at `tier`/`scope` of `table` byte for byte, or removes the row.
    #[allow(clippy::too_many_arguments)]
    fn restore_in(
        &mut self,
        table: Table,
        tier: Tier,
        scope: &ScopeName,
        id: &ObservationId,
        text: Option<&str>,
        action: Action,
        reasoning: &str,
    ) -> Result<()> {
        match text {
            // Restored byte for byte, not scanned or re-rendered (as the file store does); it
            // must still parse, because every other column is derived from it.
            Some(text) => {
                let path = path_of(tier, scope, id);
                let observation = parse_observation(text, id.as_str())
                    .map_err(|source| Error::Parse { path, source })?;
                self.write(table, tier, scope, &observation, text.to_owned(), action, reasoning)
            }
            // No row is already the state asked for: no change, so no journal row.
            None => self.remove(table, tier, scope, id, action, reasoning).map(drop),
        }
    }

    fn read_text_in(
        &mut self,
        table: Table,
        tier: Tier,
        scope: &ScopeName,
        id: &ObservationId,
    ) -> Result<Option<String>> {
        Ok(self
            .locked_row(table, id.as_str())?
            .filter(|row| row.tier == tier.dir_name() && row.scope == scope.as_str())
            .map(|row| row.file_text))
    }
}

/// What one change did, for its journal row.
struct Change<'a> {
    action: Action,
    tier: Tier,
    scope: &'a ScopeName,
    id: &'a str,
    reasoning: &'a str,
    before: Option<String>,
    after: Option<String>,
}

/// `YYYY-MM-DDTHH:MM:SS.sssZ`, the journal's time format.
fn iso_now() -> String {
    curator_core::time::now().strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

impl Transaction for PgTransaction<'_> {
    fn get(&mut self, id: &ObservationId) -> Result<Option<StoredObservation>> {
        match self.locked_row(Table::Observations, id.as_str())? {
            None => Ok(None),
            Some(row) => row.into_stored().map(Some).map_err(refused),
        }
    }

    fn get_parsed(&mut self, id: &ObservationId) -> Result<Option<StoredObservation>> {
        match self.locked_row(Table::Observations, id.as_str())? {
            None => Ok(None),
            Some(row) => row.into_parsed().map(Some).map_err(refused),
        }
    }

    fn list_scope(&mut self, tier: Tier, scope: &ScopeName) -> Result<Vec<StoredObservation>> {
        self.scope_observations(tier, scope, true)
    }

    fn list_scope_parsed(
        &mut self,
        tier: Tier,
        scope: &ScopeName,
    ) -> Result<Vec<StoredObservation>> {
        self.scope_observations(tier, scope, false)
    }

    fn put(
        &mut self,
        tier: Tier,
        scope: &ScopeName,
        observation: &Observation,
        action: Action,
        reasoning: &str,
    ) -> Result<()> {
        let path = path_of(tier, scope, &observation.id);
        let (text, reread) = checked_file_text(observation, &path)?;
        self.write(Table::Observations, tier, scope, &reread, text, action, reasoning)
    }

    fn delete(
        &mut self,
        tier: Tier,
        scope: &ScopeName,
        id: &ObservationId,
        action: Action,
        reasoning: &str,
    ) -> Result<()> {
        if self.remove(Table::Observations, tier, scope, id, action, reasoning)? {
            Ok(())
        } else {
            Err(Error::NotFound { id: id.to_string() })
        }
    }

    fn lock_suite(&mut self, suite: &ScopeName) -> Result<()> {
        self.advisory_lock(&format!("curator-suite:{suite}"))
    }

    fn note(&mut self, stored: &StoredObservation, action: Action, reasoning: &str) -> Result<()> {
        let entry = JournalEntry::note(self.run_id.clone(), stored, action, reasoning);
        self.append(entry)
    }

    fn journal(&mut self, filter: &JournalFilter) -> Result<Vec<JournalEntry>> {
        self.live()?;
        let r = self.store.block_on(sql::read_journal(&self.tx, filter));
        let read = self.checked("reading the journal".to_owned(), r)?;
        read.map_err(|(seq, reason)| Error::Journal {
            path: format!("{}#journal", self.store.target()).into(),
            line: usize::try_from(seq).unwrap_or(usize::MAX),
            reason,
        })
    }

    fn set_reverts(&mut self, txn: &str) -> Result<()> {
        self.reverts = Some(txn.to_owned());
        Ok(())
    }

    fn read_text(
        &mut self,
        tier: Tier,
        scope: &ScopeName,
        id: &ObservationId,
    ) -> Result<Option<String>> {
        self.read_text_in(Table::Observations, tier, scope, id)
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
        self.restore_in(Table::Observations, tier, scope, id, text, action, reasoning)
    }

    fn pending_get(&mut self, id: &ObservationId) -> Result<Option<StoredObservation>> {
        match self.locked_row(Table::Pending, id.as_str())? {
            None => Ok(None),
            Some(row) => row.into_stored().map(Some).map_err(refused),
        }
    }

    /// Row locks do not stop a new row: a transaction-scoped advisory lock on the scope's queue
    /// serializes the writers that read it before they queue.
    fn pending_list_scope(
        &mut self,
        tier: Tier,
        scope: &ScopeName,
    ) -> Result<Vec<StoredObservation>> {
        self.advisory_lock(&format!("curator-pending:{}/{scope}", tier.dir_name()))?;
        self.scope_rows(Table::Pending, tier, scope, true)
    }

    fn pending_put(
        &mut self,
        tier: Tier,
        scope: &ScopeName,
        observation: &Observation,
        action: Action,
        reasoning: &str,
    ) -> Result<()> {
        let path = path_of(tier, scope, &observation.id);
        // An id lives in one place: never queue a copy of a served observation.
        if let Some(served) = self.locked_row(Table::Observations, observation.id.as_str())? {
            return Err(Error::DuplicateId {
                id: observation.id.to_string(),
                paths: vec![served.path(), path],
            });
        }
        let (text, reread) = checked_file_text(observation, &path)?;
        self.write(Table::Pending, tier, scope, &reread, text, action, reasoning)
    }

    fn pending_read_text(
        &mut self,
        tier: Tier,
        scope: &ScopeName,
        id: &ObservationId,
    ) -> Result<Option<String>> {
        self.read_text_in(Table::Pending, tier, scope, id)
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
        self.restore_in(Table::Pending, tier, scope, id, text, action, reasoning)
    }

    fn record_evidence(&mut self, run: &RunEvidence) -> Result<bool> {
        self.live()?;
        let r = self.store.block_on(crate::evidence::record(&self.tx, run));
        if !self.checked(format!("recording the evidence of run {}", run.run_id), r)? {
            return Ok(false);
        }
        // Journaled so that the run's application holds it and `undo` reverts it.
        self.append(JournalEntry::evidence_change(self.run_id.clone(), run, Action::Evidence))?;
        Ok(true)
    }

    fn retract_evidence(&mut self, run: &RunEvidence) -> Result<bool> {
        self.live()?;
        let r = self.store.block_on(crate::evidence::retract(&self.tx, run));
        if !self.checked(format!("retracting the evidence of run {}", run.run_id), r)? {
            return Ok(false);
        }
        self.append(JournalEntry::evidence_change(self.run_id.clone(), run, Action::Retract))?;
        Ok(true)
    }

    fn evidence(&mut self, query: &EvidenceQuery) -> Result<EvidenceView> {
        self.live()?;
        let r = self.store.block_on(crate::evidence::read(&self.tx, query));
        self.checked("reading outcome evidence".to_owned(), r)
    }
}
