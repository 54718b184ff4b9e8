//! `history` and `undo` over the journal (ARCHITECTURE.md: the journal "backs `history`, `undo`").
//!
//! `undo RUN_ID` reverts every file change one run made, newest first, but only when each file
//! is still exactly what that run left: the check walks the run's entries backwards under the
//! writer lock, comparing the current text of each file (or its absence) with the entry's
//! `after_file`, then expecting its `before_file` for the next older entry of the same file.
//! The first mismatch refuses the whole undo and names the file; nothing is changed. Otherwise
//! each entry is reverted to its exact `before_file` text (byte for byte, no re-rendering) and
//! journaled with action `undo` under the run id `undo-<RUN_ID>`, so an undo can itself be
//! undone. Journal-only entries (an ablation's exoneration) change no file and are skipped.

use std::collections::HashMap;

use curator_core::{ObservationId, ScopeName, Tier};
use curator_store::{Action, JournalEntry, JournalFilter, Store};
use serde::Serialize;

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
    /// Reverted changes, newest first (the order they were reverted in).
    pub reverted: Vec<RevertedChange>,
}

/// Why an undo did nothing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum UndoError {
    #[error("run {run_id} changed no file: nothing to undo")]
    NothingToUndo { run_id: String },
    #[error("run {run_id} was already undone (journal run {undo_run_id})")]
    AlreadyUndone { run_id: String, undo_run_id: String },
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
    tier: Tier,
    scope: ScopeName,
    id: ObservationId,
    file: String,
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
    let file = format!("{}/{}/{}.md", tier.dir_name(), scope, id);
    Ok(Target { tier, scope, id, file })
}

/// Whether an entry changed a file (as opposed to a journal-only note).
fn changes_a_file(e: &JournalEntry) -> bool {
    e.action != Action::Exonerate && (e.before_file.is_some() || e.after_file.is_some())
}

/// Reverts every file change of `run_id`, or refuses naming the first conflicting file.
pub fn undo(store: &dyn Store, run_id: &str) -> Result<UndoReport, UndoError> {
    let undo_run_id = format!("undo-{run_id}");
    if !store.journal(&JournalFilter { id: None, run_id: Some(undo_run_id.clone()) })?.is_empty() {
        return Err(UndoError::AlreadyUndone { run_id: run_id.to_owned(), undo_run_id });
    }
    let entries: Vec<JournalEntry> = store
        .journal(&JournalFilter { id: None, run_id: Some(run_id.to_owned()) })?
        .into_iter()
        .filter(changes_a_file)
        .collect();
    if entries.is_empty() {
        return Err(UndoError::NothingToUndo { run_id: run_id.to_owned() });
    }
    let targets = entries.iter().map(|e| target(run_id, e)).collect::<Result<Vec<_>, _>>()?;
    let mut refusal: Option<UndoError> = None;
    let mut reverted = Vec::new();
    store.transact(Some(&undo_run_id), &mut |tx| {
        // Check everything before touching anything.
        let mut expected: HashMap<&str, Option<String>> = HashMap::new();
        for (e, t) in entries.iter().zip(&targets).rev() {
            let current = match expected.get(t.file.as_str()) {
                Some(text) => text.clone(),
                None => tx.read_text(t.tier, &t.scope, &t.id)?,
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
        for (e, t) in entries.iter().zip(&targets).rev() {
            let reasoning = format!("undo of run {run_id}: reverts {:?} at {}", e.action, e.time);
            tx.restore(
                t.tier,
                &t.scope,
                &t.id,
                e.before_file.as_deref(),
                Action::Undo,
                &reasoning,
            )?;
            reverted.push(RevertedChange { action: e.action, file: t.file.clone() });
        }
        Ok(())
    })?;
    if let Some(refusal) = refusal {
        return Err(refusal);
    }
    Ok(UndoReport { run_id: run_id.to_owned(), undo_run_id, reverted })
}
