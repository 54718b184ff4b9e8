//! `import` / `export` between a memory directory and PostgreSQL (issue 7 item 5).
//!
//! Import moves a memory root's state, not only its files: the journal's committed
//! transactions first (history, `undo`, and the record of which runs were applied, so a harness
//! that retries a run curated before the move gets `already applied`; an evidence entry adds
//! its run's outcome evidence to the database's counters), then the observations, then the
//! review queue. A transaction whose id the database's journal already holds is not imported
//! again, so a second import adds nothing.
//!
//! Both are idempotent and byte-exact: import stores each served file's exact text (through
//! [`Transaction::restore`], so nothing is re-rendered), export writes each row's text back
//! with atomic writes, and a second run changes nothing. Import reads the directory with the
//! file store, so a file the file store would not serve (parse error, scanner, duplicate id…)
//! is not imported and is reported with its path and reason. An id already stored at another
//! tier or scope is a conflict, reported, never moved.
//!
//! Neither direction undoes the other side's newer state. Import leaves an observation whose
//! last change in the database was made there (not by an import, not by the root's own
//! history), so importing an old copy of the root never brings back what the fleet deleted nor
//! reverts what it confirmed; such files are reported. Export removes a file only when the
//! database deleted its observation and the file still holds the text deleted; any other file
//! the database does not hold is left and reported.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use curator_core::{ObservationId, ScopeName, Tier};
use curator_store::{
    Action, Error, FileStore, FileStoreOptions, JournalEntry, JournalFilter, ListFilter, Place,
    Problem, ProblemKind, Store, atomic_write,
};

use crate::error::{PgError, Result};
use crate::row::RawRow;
use crate::store::PgStore;

/// The run id import journals its writes under.
const IMPORT_RUN: &str = curator_store::IMPORT_RUN_ID;

/// Rows written per transaction during an import, and rows between two progress reports.
const BATCH: usize = 200;

/// How far a transfer got: `done` of `total` observations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    pub done: usize,
    pub total: usize,
}

/// What an import or export did.
#[derive(Debug, Clone, Default)]
pub struct TransferReport {
    /// Observations new on the receiving side.
    pub added: usize,
    /// Observations whose text differed and was replaced.
    pub updated: usize,
    /// Observations already identical.
    pub unchanged: usize,
    /// Journal entries imported (import only; transactions already in the database skipped).
    pub journal: usize,
    /// Proposals of the review queue imported (import only).
    pub pending: usize,
    /// Files removed because the database deleted their observation (export only).
    pub removed: usize,
    /// What was not transferred, and why (path relative to the memory root).
    pub problems: Vec<Problem>,
}

impl TransferReport {
    /// Observations transferred or already in place.
    pub fn total(&self) -> usize {
        self.added + self.updated + self.unchanged
    }
}

/// Copies every observation the file store serves from `root` into `store`.
pub fn import_dir(
    store: &PgStore,
    root: &Path,
    progress: &mut dyn FnMut(Progress),
) -> Result<TransferReport> {
    let files = FileStore::open(root, FileStoreOptions::default())?;
    let history = files.journal(&JournalFilter::default())?;
    let journal = store.import_journal(&history)?;
    let mut report = TransferReport { journal, ..TransferReport::default() };
    // Transactions of the root's own history: what the database did besides them (and besides
    // importing) is a change made there, which a file of the root never overwrites.
    let root_txns: HashSet<&str> = history.iter().filter_map(|e| e.txn.as_deref()).collect();
    let listing = files.list(&ListFilter::default())?;
    for mut problem in listing.problems {
        problem.path = relative(files.root(), &problem.path);
        report.problems.push(problem);
    }
    let total = listing.observations.len();
    let mut items = Vec::with_capacity(total);
    for stored in listing.observations {
        let path = files.path_of(stored.tier, &stored.scope, &stored.observation.id);
        let text = curator_store::read_regular_to_string(&path, curator_store::MAX_STATE_FILE)
            .map_err(|e| PgError::io(&path, e))?;
        items.push((stored.tier, stored.scope, stored.observation.id, text));
    }
    let reasoning = format!("imported from {}", files.root().display());
    let mut done = 0;
    for batch in items.chunks(BATCH) {
        let mut outcome = Vec::new();
        store.transact(Some(IMPORT_RUN), &mut |tx| {
            outcome.clear();
            for (tier, scope, id, text) in batch {
                let current = tx.read_text(*tier, scope, id)?;
                if current.as_deref() == Some(text.as_str()) {
                    outcome.push(Outcome::Unchanged);
                    continue;
                }
                if let Some(change) = changed_in_database(tx, id, &root_txns)? {
                    outcome.push(Outcome::Kept(change));
                    continue;
                }
                let action = if current.is_some() { Action::Edit } else { Action::Add };
                match tx.restore(*tier, scope, id, Some(text), action, &reasoning) {
                    Ok(()) if current.is_some() => outcome.push(Outcome::Updated),
                    Ok(()) => outcome.push(Outcome::Added),
                    Err(Error::DuplicateId { paths, .. }) => {
                        let other = paths.first().cloned().unwrap_or_default();
                        outcome.push(Outcome::Conflict(other));
                    }
                    // Refused before any statement ran, so the batch goes on.
                    Err(Error::Refused { kind, .. }) => outcome.push(Outcome::Refused(kind)),
                    Err(e) => return Err(e),
                }
            }
            Ok(())
        })?;
        for ((tier, scope, id, _), o) in batch.iter().zip(outcome) {
            match o {
                Outcome::Added => report.added += 1,
                Outcome::Updated => report.updated += 1,
                Outcome::Unchanged => report.unchanged += 1,
                Outcome::Conflict(other) => report.problems.push(Problem {
                    path: file_path(*tier, scope, id),
                    kind: ProblemKind::DuplicateId { id: id.to_string(), other },
                }),
                Outcome::Refused(kind) => {
                    report.problems.push(Problem { path: file_path(*tier, scope, id), kind });
                }
                Outcome::Kept(change) => report.problems.push(Problem {
                    path: file_path(*tier, scope, id),
                    kind: ProblemKind::NotStored(change),
                }),
            }
        }
        done += batch.len();
        progress(Progress { done, total });
    }
    import_pending(store, &files, &reasoning, &mut report)?;
    Ok(report)
}

/// Copies the review queue: each proposal's exact text into the database's queue, unless it
/// is there already or its id is served memory there (a conflict, reported).
fn import_pending(
    store: &PgStore,
    files: &FileStore,
    reasoning: &str,
    report: &mut TransferReport,
) -> Result<()> {
    let listing = files.list_pending(&ListFilter::default())?;
    // A queued proposal that cannot be read is not transferred, and says so (exit 3), as an
    // observation that cannot be read does: a user who trusts a clean import and retires the
    // folder would lose it.
    for problem in listing.problems {
        let path = relative(files.root(), &problem.path);
        report.problems.push(Problem { path, kind: problem.kind });
    }
    for stored in listing.observations {
        let (tier, scope, id) = (stored.tier, stored.scope, stored.observation.id);
        let path = files.pending_root().join(file_path(tier, &scope, &id));
        let text = curator_store::read_regular_to_string(&path, curator_store::MAX_STATE_FILE)
            .map_err(|e| PgError::io(&path, e))?;
        let mut added = false;
        let r = store.transact(Some(IMPORT_RUN), &mut |tx| {
            added = false;
            if tx.pending_read_text(tier, &scope, &id)?.as_deref() == Some(text.as_str()) {
                return Ok(());
            }
            if tx.get(&id)?.is_some() {
                return Err(Error::DuplicateId { id: id.to_string(), paths: vec![path.clone()] });
            }
            tx.pending_restore(tier, &scope, &id, Some(&text), Action::Propose, reasoning)?;
            added = true;
            Ok(())
        });
        match r {
            Ok(()) => report.pending += usize::from(added),
            Err(Error::DuplicateId { .. }) => report.problems.push(Problem {
                path: relative(files.root(), &path),
                kind: ProblemKind::DuplicateId {
                    id: id.to_string(),
                    other: file_path(tier, &scope, &id),
                },
            }),
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

impl PgStore {
    /// Appends the committed transactions of a file store's journal that this database's
    /// journal does not hold yet (by transaction id; an entry from before transaction ids by
    /// its time, run, action, id and reasoning), each in one SQL transaction; evidence entries
    /// add or retract their run's outcome evidence as they did in the file store. Returns how
    /// many entries were appended.
    pub fn import_journal(&self, entries: &[JournalEntry]) -> Result<usize> {
        let mut imported = 0;
        for group in entries.chunk_by(|a, b| a.txn.is_some() && a.txn == b.txn) {
            let mut client = self.client()?;
            let r = self.block_on(async {
                let tx = client.transaction().await?;
                if crate::sql::journal_holds(&tx, &group[0]).await? {
                    return Ok(0);
                }
                for entry in group {
                    crate::sql::append_journal(&tx, entry).await?;
                    match (entry.action, entry.evidence.as_deref()) {
                        (Action::Evidence, Some(run)) => {
                            crate::evidence::record(&tx, run).await?;
                        }
                        (Action::Retract, Some(run)) => {
                            crate::evidence::retract(&tx, run).await?;
                        }
                        _ => {}
                    }
                }
                tx.commit().await?;
                Ok::<usize, tokio_postgres::Error>(group.len())
            });
            imported += r.map_err(|e| Self::db_error("importing the journal", e))?;
        }
        Ok(imported)
    }
}

enum Outcome {
    Added,
    Updated,
    Unchanged,
    Conflict(PathBuf),
    /// The database changed the observation since it was imported: why the file is not copied.
    Kept(String),
    /// The database cannot hold the file (too large, a NUL character).
    Refused(ProblemKind),
}

/// Why the database's state of `id` must not be replaced by the root's file: its last change
/// (in served memory) was made in the database — not by an import, not a transaction of the
/// root's own history. A deletion there is not undone and an update there is not reverted by
/// importing an older copy of the root again.
fn changed_in_database(
    tx: &mut dyn curator_store::Transaction,
    id: &ObservationId,
    root_txns: &HashSet<&str>,
) -> curator_store::Result<Option<String>> {
    let filter = JournalFilter { id: Some(id.to_string()), run_id: None };
    let last = tx.journal(&filter)?.into_iter().rev().find(|e| e.place == Place::Memory);
    let Some(last) = last else { return Ok(None) };
    let imported = last.run_id.as_deref() == Some(IMPORT_RUN);
    let from_root = last.txn.as_deref().is_some_and(|t| root_txns.contains(t));
    if imported || from_root || !last.changes_a_file() {
        return Ok(None);
    }
    let what = if last.after_file.is_none() { "deleted" } else { "changed" };
    let action = last.action.as_str();
    let run = last.run_id.as_deref().map(|r| format!(" of run {r}")).unwrap_or_default();
    Ok(Some(format!(
        "{what} in the database since it was imported (a {action}{run} at {}); the file would {}",
        last.time,
        if last.after_file.is_none() { "bring it back" } else { "revert it" }
    )))
}

/// Writes every row of `store` to `<root>/<tier>/<scope>/<id>.md`, exactly as stored.
pub fn export_dir(
    store: &PgStore,
    root: &Path,
    progress: &mut dyn FnMut(Progress),
) -> Result<TransferReport> {
    FileStore::init(root)?;
    let files = FileStore::open(root, FileStoreOptions::default())?;
    let rows = store.raw_rows()?;
    let total = rows.len();
    let held: HashSet<PathBuf> = rows.iter().map(RawRow::path).collect();
    let mut report = TransferReport::default();
    for (done, row) in rows.into_iter().enumerate() {
        let rel = row.path();
        // Rows were checked when written; check again, since the path is built from them.
        let placed = row.tier.parse::<Tier>().ok().zip(ScopeName::new(&row.scope).ok());
        let id_ok = ObservationId::parse(&row.id).is_ok();
        let Some((tier, scope)) = placed.filter(|_| id_ok) else {
            let reason = "tier, scope or id cannot name a file under the root".to_owned();
            report.problems.push(Problem { path: rel, kind: ProblemKind::Misplaced(reason) });
            continue;
        };
        // A tier or scope folder that is a link out of the root is refused, as `add` and
        // `curate` refuse it: the export must never write a file outside the root.
        let dir = match files.scope_folder(tier, &scope, true) {
            Ok(Some(dir)) => dir,
            Ok(None) => root.join(rel.parent().unwrap_or(Path::new(""))),
            Err(e @ curator_store::Error::Scope { .. }) => {
                let kind = ProblemKind::Misplaced(e.to_string());
                report.problems.push(Problem { path: rel, kind });
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        let path = dir.join(rel.file_name().unwrap_or_default());
        match curator_store::read_regular(&path, curator_store::MAX_STATE_FILE) {
            Ok(bytes) if bytes == row.file_text.as_bytes() => report.unchanged += 1,
            Ok(_) => {
                atomic_write(&path, row.file_text.as_bytes())?;
                report.updated += 1;
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                atomic_write(&path, row.file_text.as_bytes())?;
                report.added += 1;
            }
            Err(e) => return Err(PgError::io(&path, e)),
        }
        if (done + 1) % BATCH == 0 || done + 1 == total {
            progress(Progress { done: done + 1, total });
        }
    }
    carry_deletions(store, root, &held, &mut report)?;
    Ok(report)
}

/// The root's observations the database does not hold: a file the database deleted, and that
/// still holds the text it deleted, is removed (the deletion is carried, as a later write
/// would be); any other is left in place and reported, so nothing of the root is lost.
fn carry_deletions(
    store: &PgStore,
    root: &Path,
    held: &HashSet<PathBuf>,
    report: &mut TransferReport,
) -> Result<()> {
    let files = FileStore::open(root, FileStoreOptions::default())?;
    let listing = files.list(&ListFilter::default())?;
    // A file of the root that does not parse, or shares its id with another, is not held
    // either: named with the reason `lint` gives, and left in place.
    for problem in listing.problems {
        let rel = relative(root, &problem.path);
        if !held.contains(&rel) {
            report.problems.push(Problem { path: rel, kind: problem.kind });
        }
    }
    for stored in listing.observations {
        let rel = file_path(stored.tier, &stored.scope, &stored.observation.id);
        if held.contains(&rel) {
            continue;
        }
        let path = root.join(&rel);
        let text = curator_store::read_regular_to_string(&path, curator_store::MAX_STATE_FILE)
            .map_err(|e| PgError::io(&path, e))?;
        let filter = JournalFilter { id: Some(stored.observation.id.to_string()), run_id: None };
        let last = store.journal(&filter)?.into_iter().rev().find(|e| e.place == Place::Memory);
        let deleted = last.as_ref().filter(|e| e.after_file.is_none() && e.changes_a_file());
        if deleted.is_some_and(|e| e.before_file.as_deref() == Some(text.as_str())) {
            std::fs::remove_file(&path).map_err(|e| PgError::io(&path, e))?;
            let dir = path.parent().unwrap_or(root);
            std::fs::File::open(dir).and_then(|d| d.sync_all()).map_err(|e| PgError::io(dir, e))?;
            report.removed += 1;
        } else {
            let why = match deleted {
                Some(_) => "deleted in the database, but the file changed since: left in place",
                None => "not in the database: left in place",
            };
            report.problems.push(Problem { path: rel, kind: ProblemKind::NotStored(why.into()) });
        }
    }
    Ok(())
}

fn file_path(tier: Tier, scope: &ScopeName, id: &ObservationId) -> PathBuf {
    crate::row::path_of(tier, scope, id)
}

fn relative(root: &Path, path: &Path) -> PathBuf {
    path.strip_prefix(root).map_or_else(|_| path.to_owned(), Path::to_owned)
}
