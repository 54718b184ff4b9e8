//! A run's applications in the journal: what makes curation exactly-once and undo repeatable
//! (issue 13 item 2; ARCHITECTURE.md "A run is applied once").
//!
//! Every store transaction has an id (`txn`) that its journal entries carry. One curate of run
//! `R` is one transaction under run id `R`: an **application** of `R` (a transaction that wrote
//! nothing leaves no trace, and is none). `undo R` is one transaction under run id `undo-R`
//! whose entries carry `reverts: <txn>`, naming the application it reverted. So:
//!
//! * an application **stands** unless an undo that reverted it stands (an undo can be undone
//!   too: `undo undo-R` brings `R`'s application back);
//! * `curate R` applies the run only when none of its applications stands — otherwise it
//!   changes nothing and says so — and the new application is generation *n + 1*;
//! * `undo R` reverts the newest standing application.
//!
//! The decision is taken from the journal as the transaction sees it, under the store's writer
//! lock (file store) or the run's advisory lock (curator-pg), so two processes submitting the
//! same run at once apply it once. Entries written before transactions had ids form one
//! application per run id ([`LEGACY_TXN`]), which the undos of that time reverted.

use curator_store::{JournalEntry, JournalFilter, LEGACY_TXN};

/// Run id prefix of an undo's transaction.
pub const UNDO_PREFIX: &str = "undo-";

/// One application of a run: one transaction's entries.
#[derive(Debug, Clone, PartialEq)]
pub struct Application {
    /// The transaction id ([`LEGACY_TXN`] for entries written before transactions had ids).
    pub txn: String,
    /// 1 for the run's first application, n + 1 for the one after n.
    pub generation: u32,
    /// Its journal entries, oldest first.
    pub entries: Vec<JournalEntry>,
    /// The transaction of the standing undo that reverted it, if any.
    pub undone_by: Option<String>,
}

/// Every application of one run id, oldest first.
#[derive(Debug, Clone, PartialEq)]
pub struct RunApplications {
    pub run_id: String,
    pub applications: Vec<Application>,
}

impl RunApplications {
    /// Reads the applications of `run_id` and of its undos through `read` (a store's or a
    /// transaction's journal).
    pub fn load(
        read: &mut dyn FnMut(&JournalFilter) -> curator_store::Result<Vec<JournalEntry>>,
        run_id: &str,
    ) -> curator_store::Result<Self> {
        let filter = JournalFilter { id: None, run_id: Some(run_id.to_owned()) };
        let entries = read(&filter)?;
        let mut applications: Vec<Application> = Vec::new();
        for entry in entries {
            let txn = entry.txn.clone().unwrap_or_else(|| LEGACY_TXN.to_owned());
            match applications.iter_mut().find(|a| a.txn == txn) {
                Some(app) => app.entries.push(entry),
                None => {
                    let generation = u32::try_from(applications.len() + 1).unwrap_or(u32::MAX);
                    applications.push(Application {
                        txn,
                        generation,
                        entries: vec![entry],
                        undone_by: None,
                    });
                }
            }
        }
        let mut run = RunApplications { run_id: run_id.to_owned(), applications };
        if !run.applications.is_empty()
            && run_id.len() + UNDO_PREFIX.len() <= curator_store::MAX_RUN_ID_LEN
        {
            let undos = Self::load(read, &format!("{UNDO_PREFIX}{run_id}"))?;
            for undo in undos.applications.iter().filter(|u| u.undone_by.is_none()) {
                let target = reverted_txn(undo);
                if let Some(app) = run.applications.iter_mut().find(|a| a.txn == target) {
                    app.undone_by = Some(undo.txn.clone());
                }
            }
        }
        Ok(run)
    }

    /// The newest application that stands (at most one does when every application went
    /// through [`crate::curate::curate`]).
    pub fn standing(&self) -> Option<&Application> {
        self.applications.iter().rev().find(|a| a.undone_by.is_none())
    }

    /// The generation a new application would have.
    pub fn next_generation(&self) -> u32 {
        u32::try_from(self.applications.len() + 1).unwrap_or(u32::MAX)
    }
}

/// The application an undo reverted: its `reverts`, or (an undo journaled before transactions
/// had ids) the run's legacy application.
fn reverted_txn(undo: &Application) -> String {
    undo.entries.iter().find_map(|e| e.reverts.clone()).unwrap_or_else(|| LEGACY_TXN.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use curator_store::Action;

    fn entry(run: &str, txn: Option<&str>, reverts: Option<&str>) -> JournalEntry {
        JournalEntry {
            time: "2026-04-10T12:00:00.000Z".into(),
            run_id: Some(run.into()),
            action: Action::Confirm,
            tier: "tests".into(),
            scope: "t_x".into(),
            id: "obs_x".into(),
            reasoning: String::new(),
            before: None,
            after: None,
            before_file: Some("a".into()),
            after_file: Some("b".into()),
            txn: txn.map(Into::into),
            reverts: reverts.map(Into::into),
            place: curator_store::Place::Memory,
            evidence: None,
        }
    }

    fn load(journal: &[JournalEntry], run: &str) -> RunApplications {
        RunApplications::load(
            &mut |f| Ok(journal.iter().filter(|e| f.matches(e)).cloned().collect()),
            run,
        )
        .unwrap()
    }

    #[test]
    fn applications_undos_and_undos_of_undos() {
        let mut journal = vec![entry("r1", Some("t1"), None), entry("r1", Some("t1"), None)];
        let run = load(&journal, "r1");
        assert_eq!(run.applications.len(), 1);
        assert_eq!(run.standing().map(|a| (a.txn.as_str(), a.generation)), Some(("t1", 1)));
        journal.push(entry("undo-r1", Some("u1"), Some("t1")));
        let run = load(&journal, "r1");
        assert!(run.standing().is_none());
        assert_eq!(run.next_generation(), 2);
        journal.push(entry("r1", Some("t2"), None));
        let run = load(&journal, "r1");
        assert_eq!(run.standing().map(|a| (a.txn.as_str(), a.generation)), Some(("t2", 2)));
        journal.push(entry("undo-r1", Some("u2"), Some("t2")));
        assert!(load(&journal, "r1").standing().is_none());
        // Undoing the second undo brings generation 2 back, not generation 1.
        journal.push(entry("undo-undo-r1", Some("v1"), Some("u2")));
        let run = load(&journal, "r1");
        assert_eq!(run.standing().map(|a| a.generation), Some(2));
        assert_eq!(run.applications[0].undone_by.as_deref(), Some("u1"));
    }

    #[test]
    fn old_entries_are_one_application_and_old_undos_revert_it() {
        let mut journal = vec![entry("r1", None, None), entry("r1", None, None)];
        let run = load(&journal, "r1");
        assert_eq!(run.applications.len(), 1);
        assert_eq!(run.applications[0].txn, LEGACY_TXN);
        journal.push(entry("undo-r1", None, None));
        assert!(load(&journal, "r1").standing().is_none());
        assert!(load(&journal, "r2").applications.is_empty());
    }
}
