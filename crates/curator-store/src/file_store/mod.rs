//! The file store: observations as agent-qa files under a memory root (agent-qa-memory §1, §6;
//! issue 2 item 5).
//!
//! Files are the truth. The store reads them as agent-qa does (same folders, same listing rule,
//! same parser) but never skips silently: every `obs_*.md` it finds and will not serve is a
//! [`Problem`] in the listing — unreadable, larger than [`FileStoreOptions::max_file_size`],
//! not UTF-8, unparsable (the codec names the §1.4 rule), blocked by the scanner (§7), an id
//! present in two folders (neither copy is served: the store does not guess), or misplaced (in a
//! tier folder instead of a scope folder, or a symlink resolving outside the root).
//!
//! Every change goes through [`Store::transact`]: the root's `.curator.lock` is held, what a
//! dead writer left is resolved first (`recovery.rs`), and each write is journaled ahead,
//! atomic, and committed or rolled back before the lock is released (`transaction.rs`).
//!
//! What is true after a crash (SIGKILL or power loss) at any point of a write, before the next
//! writer runs:
//!
//! * every observation file is whole: its old text or its new one, never a mix (`atomic.rs`);
//! * every committed transaction's changes are on disk, and the journal holds each change of
//!   any transaction, begun or committed, with its exact texts before and after;
//! * at most one transaction is open (entries without an end marker), and every file it did
//!   not touch equals the replay of the committed entries;
//! * temp files exist only beside the files of that open transaction.
//!
//! And after the next writer took the lock (or `curator lint` ran): the open transaction is
//! rolled back and its temps removed, so every file equals the replay of the committed journal
//! and `history`/`undo` know every change a file shows.
//!
//! The review queue (issue 18) is a second tree of the same shape under
//! `<root>/.curator/pending/<tier>/<scope>/`, kept by an inner `FileStore` over that folder
//! that shares this root's lock and journal (its entries say `place: pending`). Nothing that
//! serves memory walks it, and agent-qa never lists `.curator/`, so a queued observation is
//! never injected as ordinary memory. Outcome evidence is journal entries
//! (`action: evidence | retract`), so it commits, rolls back and is undone with its run.

mod id_index;
mod layout;
mod read;
mod recovery;
mod state;
mod transaction;

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use curator_core::{ObservationId, ScopeName, Tier};

use crate::evidence::{EvidenceQuery, EvidenceView};
use crate::index::{Hit, IndexError, MemoryIndex, SearchRequest, search_files};
use crate::journal::{Journal, JournalEntry, JournalFilter};
use crate::lock::{LockOptions, SystemProbe, acquire_lock, dead_temps, left_by_dead_curator};
use crate::run_state::RunSession;
use crate::store::{
    ListFilter, Listing, ListingPage, Place, Problem, ProblemKind, Recovered, Store,
    StoredObservation, Transaction,
};
use crate::{Error, Result};
use id_index::IdIndex;
use layout::Location;
use read::{LoadError, Loaded};
use transaction::FileTransaction;

/// Settings of a [`FileStore`].
#[derive(Debug, Clone)]
pub struct FileStoreOptions {
    /// How long a writer waits for `.curator.lock` (config `curatorLockTimeout`).
    pub lock_timeout: Duration,
    /// Largest observation file served or written, in bytes (default 1 MiB).
    pub max_file_size: u64,
}

impl Default for FileStoreOptions {
    fn default() -> Self {
        FileStoreOptions {
            lock_timeout: LockOptions::DEFAULT_TIMEOUT,
            max_file_size: read::DEFAULT_MAX_FILE_SIZE,
        }
    }
}

/// Observations as agent-qa files under a root directory.
#[derive(Debug)]
pub struct FileStore {
    /// Canonical: every path the store touches is checked to stay under it.
    root: PathBuf,
    options: FileStoreOptions,
    journal: Journal,
    index: Mutex<IdIndex>,
    /// The full-text index, opened by the first search and kept (watching its folders) so
    /// later searches skip the per-file freshness check; dropped after a failure so the next
    /// search opens (or rebuilds) it again.
    search_index: Mutex<Option<Arc<MemoryIndex>>>,
    /// Which tree this store holds: the root's tier folders, or the review queue.
    place: Place,
    /// The review queue's store (`None` inside the queue's own store).
    pending: Option<Box<FileStore>>,
}

impl FileStore {
    /// Opens an existing memory root (see [`FileStore::init`] to create one).
    pub fn open(root: &Path, options: FileStoreOptions) -> Result<Self> {
        let root = fs::canonicalize(root).map_err(|e| Error::io(root, e))?;
        if !root.is_dir() {
            return Err(Error::NotADirectory { path: root });
        }
        let journal = Journal::for_root(&root);
        let pending = FileStore {
            root: pending_root(&root),
            options: options.clone(),
            journal: journal.clone(),
            index: Mutex::new(IdIndex::default()),
            search_index: Mutex::new(None),
            place: Place::Pending,
            pending: None,
        };
        Ok(FileStore {
            root,
            options,
            journal,
            index: Mutex::new(IdIndex::default()),
            search_index: Mutex::new(None),
            place: Place::Memory,
            pending: Some(Box::new(pending)),
        })
    }

    /// The review queue's store; the queue's own store has none.
    fn queue(&self) -> Result<&FileStore> {
        self.pending.as_deref().ok_or(Error::Unsupported { operation: "a queue inside the queue" })
    }

    /// Creates the root and its `products/ suites/ tests/` folders (agent-qa's
    /// `ensureMemoryDirs`: idempotent).
    pub fn init(root: &Path) -> Result<()> {
        for tier in Tier::ALL {
            let dir = root.join(tier.dir_name());
            fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        }
        Ok(())
    }

    /// `<root>/<tier>/<scope>`, refused when the tier or scope folder is a link that leaves
    /// the root or is not a folder; created (one level at a time, never through a link) when
    /// `create` is set, else `Ok(None)` when missing. For writers outside the store's own
    /// transactions (`export`) that must not write through a link out of the root.
    pub fn scope_folder(
        &self,
        tier: Tier,
        scope: &ScopeName,
        create: bool,
    ) -> Result<Option<PathBuf>> {
        layout::scope_dir(&self.root, tier, scope, create)
    }

    /// The canonical memory root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The options the store was opened with.
    pub fn options(&self) -> &FileStoreOptions {
        &self.options
    }

    /// `<root>/.curator.lock`, shared with agent-qa.
    pub fn lock_path(&self) -> PathBuf {
        self.root.join(".curator.lock")
    }

    /// `<root>/.curator/journal.jsonl`.
    pub fn journal_path(&self) -> &Path {
        self.journal.path()
    }

    /// `<root>/.curator/pending`: the review queue, laid out as `<tier>/<scope>/<id>.md`.
    pub fn pending_root(&self) -> PathBuf {
        match self.place {
            Place::Memory => pending_root(&self.root),
            Place::Pending => self.root.clone(),
        }
    }

    /// Where an observation of `tier`/`scope` with `id` lives (whether or not it exists).
    pub fn path_of(&self, tier: Tier, scope: &ScopeName, id: &ObservationId) -> PathBuf {
        self.root.join(tier.dir_name()).join(scope.as_str()).join(format!("{id}.md"))
    }

    fn index(&self) -> MutexGuard<'_, IdIndex> {
        // A panic while holding the index leaves at worst a stale cache, which is re-checked.
        self.index.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn load(&self, loc: &Location) -> Result<Loaded, LoadError> {
        read::load(&loc.path, &loc.stem, self.options.max_file_size)
    }

    /// One id, resolved through the index; `trust_miss` only under the lock (see `id_index`).
    /// `scanned`: refuse it when the scanner blocks it, as every reader that serves does.
    fn find(
        &self,
        id: &ObservationId,
        trust_miss: bool,
        scanned: bool,
    ) -> Result<Option<StoredObservation>> {
        for _ in 0..2 {
            let locations = self.index().locate(&self.root, id.as_str(), trust_miss);
            let loc = match locations.as_slice() {
                [] => return Ok(None),
                [loc] => loc,
                _ => {
                    return Err(Error::DuplicateId {
                        id: id.to_string(),
                        paths: locations.into_iter().map(|l| l.path).collect(),
                    });
                }
            };
            let loaded = if scanned {
                self.load(loc)
            } else {
                read::load_unscanned(&loc.path, &loc.stem, self.options.max_file_size)
            };
            match loaded {
                Ok(loaded) => return Ok(Some(stored(loc, loaded))),
                Err(LoadError::Missing) => self.index().remove(&loc.stem, &loc.path),
                Err(LoadError::Refused(kind)) => return Err(refused(&loc.path, kind)),
            }
        }
        Ok(None)
    }
}

/// Where the review queue of the memory root `root` lives.
fn pending_root(root: &Path) -> PathBuf {
    root.join(".curator").join("pending")
}

fn stored(loc: &Location, loaded: Loaded) -> StoredObservation {
    StoredObservation { tier: loc.tier, scope: loc.scope.clone(), observation: loaded.observation }
}

/// The error for one file the caller asked for by id but that cannot be served.
fn refused(path: &Path, kind: ProblemKind) -> Error {
    match kind {
        ProblemKind::Parse(source) => Error::Parse { path: path.to_owned(), source },
        kind => Error::Refused { path: path.to_owned(), kind },
    }
}

/// For each location of a whole-root walk, another location with the same id, if any.
fn other_holders(locations: &[Location]) -> Vec<Option<PathBuf>> {
    let mut by_id: HashMap<&str, Vec<&Path>> = HashMap::new();
    for loc in locations {
        by_id.entry(loc.stem.as_str()).or_default().push(&loc.path);
    }
    locations
        .iter()
        .map(|loc| {
            by_id[loc.stem.as_str()].iter().find(|p| **p != loc.path).map(|p| p.to_path_buf())
        })
        .collect()
}

fn matches(filter: &ListFilter, tier: Tier, scope: Option<&ScopeName>) -> bool {
    filter.tier.is_none_or(|t| t == tier) && filter.scope.as_ref().is_none_or(|s| scope == Some(s))
}

impl Store for FileStore {
    /// Lists one scope folder by reading only that folder (other folders' ids come from the id
    /// index, see `id_index`), or walks the whole root for any wider filter.
    fn list(&self, filter: &ListFilter) -> Result<Listing> {
        let (walk, others) = match (filter.tier, &filter.scope) {
            (Some(tier), Some(scope)) => {
                let walk = layout::walk_one_scope(&self.root, tier, scope);
                let others = self.index().other_holders(&self.root, &walk.locations);
                (walk, others)
            }
            _ => {
                let walk = layout::walk(&self.root);
                self.index().rebuild_from(&walk.locations);
                let others = other_holders(&walk.locations);
                (walk, others)
            }
        };
        let mut listing = Listing::default();
        if filter.tier.is_none() && filter.scope.is_none() {
            for temp in dead_temps(&self.lock_path(), &SystemProbe) {
                let kind = ProblemKind::LeftoverTemp { pid: temp.pid };
                listing.problems.push(Problem { path: temp.path, kind });
            }
        }
        for found in walk.problems {
            if matches(filter, found.tier, found.scope.as_ref()) {
                listing.problems.push(found.problem);
            }
        }
        for (loc, other) in walk.locations.iter().zip(others) {
            if !matches(filter, loc.tier, Some(&loc.scope)) {
                continue;
            }
            if let Some(other) = other {
                listing.problems.push(Problem {
                    path: loc.path.clone(),
                    kind: ProblemKind::DuplicateId { id: loc.stem.clone(), other },
                });
                continue;
            }
            match self.load(loc) {
                Ok(loaded) => listing.observations.push(stored(loc, loaded)),
                Err(LoadError::Missing) => {} // deleted since the walk: no longer there to list
                Err(LoadError::Refused(kind)) => {
                    listing.problems.push(Problem { path: loc.path.clone(), kind });
                }
            }
        }
        Ok(listing)
    }

    fn get(&self, id: &ObservationId) -> Result<StoredObservation> {
        self.find(id, false, true)?.ok_or_else(|| Error::NotFound { id: id.to_string() })
    }

    /// Reads the names of the folders the filter covers (one `readdir` per folder), then only
    /// the files of the page. Problems found by the walk itself (a misplaced file, an escaping
    /// symlink) belong to no page; `lint` reports them.
    fn list_page(&self, filter: &ListFilter, offset: usize, limit: usize) -> Result<ListingPage> {
        let (walk, mut others) = match (filter.tier, &filter.scope) {
            (Some(tier), scope) => {
                let walk = match scope {
                    Some(scope) => layout::walk_one_scope(&self.root, tier, scope),
                    None => layout::walk_one_tier(&self.root, tier),
                };
                let others = self.index().other_holders(&self.root, &walk.locations);
                (walk, others)
            }
            (None, _) => {
                let walk = layout::walk(&self.root);
                self.index().rebuild_from(&walk.locations);
                let others = other_holders(&walk.locations);
                (walk, others)
            }
        };
        let mut files: Vec<(Location, Option<PathBuf>)> = walk
            .locations
            .into_iter()
            .zip(others.drain(..))
            .filter(|(loc, _)| matches(filter, loc.tier, Some(&loc.scope)))
            .collect();
        files.sort_by(|(a, _), (b, _)| {
            (a.tier, a.scope.as_str(), a.stem.as_str()).cmp(&(
                b.tier,
                b.scope.as_str(),
                b.stem.as_str(),
            ))
        });
        let mut page = ListingPage { total: files.len(), ..ListingPage::default() };
        for (loc, _) in &files {
            match page.scopes.last_mut() {
                Some((tier, scope, n)) if *tier == loc.tier && *scope == loc.scope => *n += 1,
                _ => page.scopes.push((loc.tier, loc.scope.clone(), 1)),
            }
        }
        for (loc, other) in files.into_iter().skip(offset).take(limit) {
            if let Some(other) = other {
                let kind = ProblemKind::DuplicateId { id: loc.stem.clone(), other };
                page.problems.push(Problem { path: loc.path.clone(), kind });
                continue;
            }
            match self.load(&loc) {
                Ok(loaded) => page.observations.push(stored(&loc, loaded)),
                Err(LoadError::Missing) => {} // deleted since the walk
                Err(LoadError::Refused(kind)) => {
                    page.problems.push(Problem { path: loc.path.clone(), kind });
                }
            }
        }
        Ok(page)
    }

    fn transact(
        &self,
        run_id: Option<&str>,
        body: &mut dyn FnMut(&mut dyn Transaction) -> Result<()>,
    ) -> Result<()> {
        let guard =
            acquire_lock(&self.lock_path(), &LockOptions { timeout: self.options.lock_timeout })?;
        let result = recovery::recover(self).and_then(|recovered| {
            for r in &recovered {
                tracing::warn!("recovered: {r}");
            }
            let mut tx = FileTransaction::new(self, run_id);
            let result = body(&mut tx);
            let finished = tx.finish(result);
            if finished.is_ok()
                && let Err(e) = self.journal.refresh_checkpoint()
            {
                // Derived data: the journal is read whole until a later writer succeeds.
                tracing::warn!("journal checkpoint not refreshed: {e}");
            }
            finished
        });
        // The transaction's outcome is decided before the release: a committed change stands
        // whether or not its lock file could be removed (the next writer removes a lock whose
        // holder is gone), so a failed release is a warning, never a failure a caller would
        // retry into applying the change twice.
        if let Err(release) = guard.release() {
            tracing::warn!("releasing the lock after the transaction: {release}");
        }
        result
    }

    fn journal(&self, filter: &JournalFilter) -> Result<Vec<JournalEntry>> {
        self.journal.read(filter)
    }

    fn check_journal(&self) -> Result<()> {
        self.journal.check()
    }

    fn journal_heads(&self, visit: &mut dyn FnMut(&crate::JournalHead<'_>)) -> Result<()> {
        self.journal.heads(visit)
    }

    fn journal_page(
        &self,
        filter: &JournalFilter,
        offset: usize,
        limit: usize,
    ) -> Result<crate::JournalPage> {
        self.journal.page(filter, offset, limit)
    }

    /// Takes the lock only when the journal ends in an open transaction, a dead writer left a
    /// temp of the lock file, or a dead curator left the lock itself (taking the lock removes
    /// those), so a `lint` of a healthy root writes nothing.
    fn recover(&self) -> Result<Vec<Recovered>> {
        let lock_temps = dead_temps(&self.lock_path(), &SystemProbe);
        let dead_holder = left_by_dead_curator(&self.lock_path());
        if self.journal.open_transactions()?.is_empty() && lock_temps.is_empty() && !dead_holder {
            return Ok(Vec::new());
        }
        let guard =
            acquire_lock(&self.lock_path(), &LockOptions { timeout: self.options.lock_timeout })?;
        let recovered = recovery::recover(self);
        let released = guard.release();
        let mut recovered = recovered?;
        released?;
        for temp in lock_temps.into_iter().filter(|t| !t.path.exists()) {
            recovered.push(Recovered::new(&temp.path, "lock temp of a dead writer removed".into()));
        }
        if dead_holder {
            let why = "lock left by a curator that died removed".to_owned();
            recovered.push(Recovered::new(&self.lock_path(), why));
        }
        Ok(recovered)
    }

    /// Searches the on-disk index, refreshed first for the request's folders. An index that
    /// cannot be used at all (a read-only root, a broken index that cannot be recreated) is not
    /// the reason a query fails: the same search runs over an in-RAM index of those folders.
    fn search(&self, req: &SearchRequest) -> Result<Vec<Hit>> {
        // The first searches of a store open (or rebuild) the index one at a time: two threads
        // rebuilding at once would each move the other's new index folder aside mid-search.
        let mut slot = self.search_index.lock().unwrap_or_else(PoisonError::into_inner);
        let index = match slot.as_ref() {
            Some(index) => Arc::clone(index),
            None => match MemoryIndex::open(&self.root) {
                Ok(index) => {
                    let index = Arc::new(index.watching());
                    *slot = Some(Arc::clone(&index));
                    index
                }
                // A root that is gone or unreadable is an error; one that only cannot be
                // written (read-only, another user's) is served from RAM below.
                Err(IndexError::Io { path, source })
                    if !crate::index::unwritable(source.kind()) =>
                {
                    return Err(Error::io(path, source));
                }
                Err(e) => {
                    drop(slot);
                    tracing::warn!(error = %e, "index unavailable; answering from the files in RAM");
                    return Ok(search_files(&self.root, req)?);
                }
            },
        };
        drop(slot);
        match index.search(req) {
            Ok(hits) => Ok(hits),
            Err(e) if e.is_unwritable() => {
                tracing::warn!(error = %e, "index cannot be written; answering from the files in RAM");
                Ok(search_files(&self.root, req)?)
            }
            Err(e) => {
                self.search_index.lock().unwrap_or_else(PoisonError::into_inner).take();
                Err(e.into())
            }
        }
    }

    fn record_injection(&self, run_id: &str, step: u64, ids: &[String]) -> Result<()> {
        state::record_step(&self.root, run_id, step, ids, None)
    }

    fn record_step(
        &self,
        run_id: &str,
        step: u64,
        ids: &[String],
        probation: Option<&str>,
    ) -> Result<()> {
        state::record_step(&self.root, run_id, step, ids, probation)
    }

    fn load_session(&self, run_id: &str) -> Result<Option<RunSession>> {
        state::load_session(&self.root, run_id)
    }

    fn update_step(
        &self,
        run_id: &str,
        step: u64,
        decide: &mut dyn FnMut(Option<&RunSession>) -> Result<crate::StepRecord>,
    ) -> Result<()> {
        state::update_step(&self.root, run_id, step, decide)
    }

    fn keep_run_record(&self, run_id: &str, record: &serde_json::Value) -> Result<()> {
        state::keep_run_record(&self.root, run_id, record)
    }

    fn load_run_record(&self, run_id: &str) -> Result<Option<serde_json::Value>> {
        state::load_run_record(&self.root, run_id)
    }

    fn load_breaker(&self, key: &str) -> Result<Option<serde_json::Value>> {
        state::load_breaker(&self.root, key)
    }

    fn update_breaker(
        &self,
        key: &str,
        change: &mut dyn FnMut(Option<serde_json::Value>) -> serde_json::Value,
    ) -> Result<serde_json::Value> {
        state::update_breaker(&self.root, key, change)
    }

    fn list_pending(&self, filter: &ListFilter) -> Result<Listing> {
        self.queue()?.list(filter)
    }

    fn get_pending(&self, id: &ObservationId) -> Result<Option<StoredObservation>> {
        self.queue()?.find(id, false, true)
    }

    /// Searches the queue's folders in RAM: the queue is small, and a persistent index of it
    /// would be one more thing to keep fresh.
    fn search_pending(&self, req: &SearchRequest) -> Result<Vec<Hit>> {
        let root = self.queue()?.root();
        if !root.is_dir() {
            return Ok(Vec::new());
        }
        Ok(search_files(root, req)?)
    }

    fn evidence(&self, query: &EvidenceQuery) -> Result<EvidenceView> {
        Ok(self.journal.evidence(None)?.view(query))
    }
}

#[cfg(test)]
mod tests;
