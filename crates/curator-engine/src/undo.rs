//! `history` and `undo` over the journal (ARCHITECTURE.md: the journal "backs `history`, `undo`").
//!
//! `undo RUN_ID` reverts the run's newest standing application (see [`crate::runs`]: curate,
//! undo, curate again and undo again each act on one generation), every file change it made,
//! newest first, but only when each file is still exactly what that application left: the check walks the run's entries backwards under the
//! writer lock, comparing the current text of each file (or its absence) with the entry's
//! `after_file`, then expecting its `before_file` for the next older entry of the same file.
//! The first mismatch refuses the whole undo and names the file; nothing is changed. Otherwise
//! each entry is reverted to its exact `before_file` text (byte for byte, no re-rendering) and
//! journaled with action `undo` under the run id `undo-<RUN_ID>`, marked as reverting that
//! application's transaction, so an undo can itself be undone. Journal-only entries (an
//! ablation's exoneration or a spared suspect) change no file and are skipped. Which
//! application to revert is read under the lock, so two undos of one run at once revert it
//! once. Entries of the review queue (`place: pending`: a proposal, an approval's removal from
//! the queue, a rejection) are reverted in the queue, so undoing an approval puts the proposal
//! back in the queue and takes it out of memory. The application's outcome evidence (issue
//! 18) is reverted with it: a recorded run stops counting, and undoing that undo records it again.

use std::collections::HashMap;

use curator_core::{ObservationId, ScopeName, Tier};
use curator_store::{Action, JournalEntry, JournalFilter, Place, Store, Transaction};
use serde::Serialize;

use crate::runs::{RunApplications, UNDO_PREFIX};

/// The journal of one observation, oldest first.
pub fn history(store: &dyn Store, id: &str) -> Result<Vec<JournalEntry>, curator_store::Error> {
    store.journal(&JournalFilter { id: Some(id.to_owned()), run_id: None })
}

/// One reverted change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RevertedChange {
    /// The action that was reverted.
    pub action: Action,
    /// `<tier>/<scope>/<id>.md`, relative to the memory root.
    pub file: String,
}

/// What `undo` did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UndoReport {
    pub run_id: String,
    /// The run id the reverting changes were journaled under.
    pub undo_run_id: String,
    /// Which application of the run was reverted (1 the first; see [`crate::runs`]).
    pub generation: u32,
    /// Reverted changes, newest first (the order they were reverted in).
    pub reverted: Vec<RevertedChange>,
    /// Runs whose outcome evidence the undo reverted (issue 18): the run's own, which stops
    /// counting, or — undoing an undo — the one that counts again. Left out when empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<String>,
    /// The run's newest application was already undone, so this undo changed nothing: a retry
    /// whose first answer was lost gets what it asked for, as a retried curate or review does.
    pub already_applied: bool,
}

/// Why an undo did nothing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum UndoError {
    /// The id cannot name a run (`../../x`): refused before the journal is read.
    #[error(
        "{run_id:?} is not a valid run id (letters, digits, '.', '_' and '-', at most 128 characters)"
    )]
    InvalidRunId { run_id: String },
    /// No change was ever journaled under this run id.
    #[error(
        "run {run_id} is not in the journal: nothing was recorded under this run id (check the run id a MemoryLog or `curator history ID` shows)"
    )]
    UnknownRun { run_id: String },
    #[error("run {run_id} changed no file: nothing to undo")]
    NothingToUndo { run_id: String },
    /// The import into PostgreSQL moved memory, it did not change it: undoing it would delete
    /// every imported observation from the database, and a later `export` their files.
    #[error(
        "run import is the import of a memory root into PostgreSQL, not a change to memory: undoing it would delete every imported observation from the database (and a later `export` their files), so it is not undone; to start over, import into a fresh database"
    )]
    Import,
    /// A file changed after the run; reverting would destroy that later change.
    #[error(
        "cannot undo run {run_id}: {file} was changed after the run ({reason}); nothing was reverted"
    )]
    Conflict { run_id: String, file: String, reason: String },
    /// A journal entry of the run does not name a valid file.
    #[error("cannot undo run {run_id}: journal entry for {id:?} is unusable: {reason}")]
    BadEntry { run_id: String, id: String, reason: String },
    #[error(transparent)]
    Store(#[from] curator_store::Error),
}

/// An entry's file, parsed.
struct Target {
    place: Place,
    tier: Tier,
    scope: ScopeName,
    id: ObservationId,
    /// The file relative to the root (`.curator/pending/…` in the review queue).
    file: String,
}

impl Target {
    fn read(&self, tx: &mut dyn Transaction) -> curator_store::Result<Option<String>> {
        match self.place {
            Place::Memory => tx.read_text(self.tier, &self.scope, &self.id),
            Place::Pending => tx.pending_read_text(self.tier, &self.scope, &self.id),
        }
    }

    fn restore(
        &self,
        tx: &mut dyn Transaction,
        text: Option<&str>,
        reasoning: &str,
    ) -> curator_store::Result<()> {
        match self.place {
            Place::Memory => {
                tx.restore(self.tier, &self.scope, &self.id, text, Action::Undo, reasoning)
            }
            Place::Pending => {
                tx.pending_restore(self.tier, &self.scope, &self.id, text, Action::Undo, reasoning)
            }
        }
    }
}

fn target(run_id: &str, e: &JournalEntry) -> Result<Target, UndoError> {
    let bad = |reason: String| UndoError::BadEntry {
        run_id: run_id.to_owned(),
        id: e.id.clone(),
        reason,
    };
    let tier: Tier =
        e.tier.parse().map_err(|err: curator_core::ScopeError| bad(err.to_string()))?;
    let scope = ScopeName::new(e.scope.as_str()).map_err(|err| bad(err.to_string()))?;
    let id = ObservationId::parse(&e.id).map_err(|err| bad(err.to_string()))?;
    let prefix = match e.place {
        Place::Memory => "",
        Place::Pending => ".curator/pending/",
    };
    let file = format!("{prefix}{}/{}/{}.md", tier.dir_name(), scope, id);
    Ok(Target { place: e.place, tier, scope, id, file })
}

/// Reverts every file change of the newest standing application of `run_id`, or refuses
/// naming the first conflicting file.
pub fn undo(store: &dyn Store, run_id: &str) -> Result<UndoReport, UndoError> {
    if !curator_store::is_valid_run_id(run_id) {
        return Err(UndoError::InvalidRunId { run_id: curator_core::excerpt(run_id) });
    }
    if run_id == curator_store::IMPORT_RUN_ID {
        return Err(UndoError::Import);
    }
    // A damaged line could be one of the run's changes: reverting the others would undo part
    // of the run and say it undid all of it.
    store.check_journal()?;
    let undo_run_id = format!("{UNDO_PREFIX}{run_id}");
    let mut refusal: Option<UndoError> = None;
    let mut reverted = Vec::new();
    let mut generation = 0;
    let mut already_undone = false;
    let mut evidence_runs = Vec::new();
    store.transact(Some(&undo_run_id), &mut |tx| {
        // A database store may run this again after a conflict: start from nothing.
        (refusal, reverted, generation, already_undone) = (None, Vec::new(), 0, false);
        evidence_runs.clear();
        let run = RunApplications::load(&mut |f| tx.journal(f), run_id)?;
        let Some(app) = run.standing() else {
            match run.applications.last() {
                // Already undone: the retry of an undo whose answer was lost.
                Some(last) => (already_undone, generation) = (true, last.generation),
                None => refusal = Some(UndoError::UnknownRun { run_id: run_id.to_owned() }),
            }
            return Ok(());
        };
        generation = app.generation;
        let entries: Vec<&JournalEntry> =
            app.entries.iter().filter(|e| e.changes_a_file()).collect();
        let evidence: Vec<&JournalEntry> =
            app.entries.iter().filter(|e| e.evidence.is_some()).collect();
        if entries.is_empty() && evidence.is_empty() {
            refusal = Some(UndoError::NothingToUndo { run_id: run_id.to_owned() });
            return Ok(());
        }
        let targets = match entries.iter().map(|e| target(run_id, e)).collect::<Result<Vec<_>, _>>()
        {
            Ok(targets) => targets,
            Err(e) => {
                refusal = Some(e);
                return Ok(());
            }
        };
        // Check everything before touching anything.
        let mut expected: HashMap<&str, Option<String>> = HashMap::new();
        for (e, t) in entries.iter().zip(&targets).rev() {
            let current = match expected.get(t.file.as_str()) {
                Some(text) => text.clone(),
                None => t.read(tx)?,
            };
            if current != e.after_file {
                let reason = match (&current, &e.after_file) {
                    (None, Some(_)) => "the file no longer exists".to_owned(),
                    (Some(_), None) => "the run deleted it and it exists again".to_owned(),
                    _ => "its text differs from what the run wrote".to_owned(),
                };
                refusal = Some(UndoError::Conflict {
                    run_id: run_id.to_owned(),
                    file: t.file.clone(),
                    reason,
                });
                return Ok(());
            }
            expected.insert(t.file.as_str(), e.before_file.clone());
        }
        tx.set_reverts(&app.txn)?;
        for (e, t) in entries.iter().zip(&targets).rev() {
            let reasoning = format!(
                "undo of run {run_id} (generation {}): reverts {:?} at {}",
                app.generation, e.action, e.time
            );
            t.restore(tx, e.before_file.as_deref(), &reasoning)?;
            reverted.push(RevertedChange { action: e.action, file: t.file.clone() });
        }
        // The run's outcome evidence goes with its application: each evidence entry is
        // reverted by its opposite, in the same transaction.
        for e in evidence.iter().rev() {
            let Some(run) = e.evidence.as_deref() else { continue };
            let changed = match e.action {
                Action::Evidence => tx.retract_evidence(run)?,
                Action::Retract => tx.record_evidence(run)?,
                _ => false,
            };
            if changed {
                evidence_runs.push(run.run_id.clone());
            }
        }
        Ok(())
    })?;
    if let Some(refusal) = refusal {
        return Err(refusal);
    }
    Ok(UndoReport {
        run_id: run_id.to_owned(),
        undo_run_id,
        generation,
        reverted,
        evidence: evidence_runs,
        already_applied: already_undone,
    })
}
