//! The full-text index: a rebuildable cache of the observation files (agent-qa-memory §3).
//!
//! Files are the truth; `<root>/.curator/index/` holds one tantivy index for the whole root,
//! filtered by scope at query time. Guarantees:
//!
//! * **Fresh.** [`MemoryIndex::search`] first refreshes the folders it reads (a `stat` per file;
//!   only new or changed files are parsed), so a query always answers from the files as they are,
//!   including files agent-qa rewrote in place. [`MemoryIndex::refresh`] does the whole root.
//!   A long-lived index ([`MemoryIndex::watching`], what [`crate::FileStore`] keeps) watches the
//!   folders with inotify and refreshes only those that changed (`watch.rs`).
//! * **Never the reason a query fails.** An index that cannot be opened, has another schema
//!   version or is corrupt is moved aside and rebuilt. If the index cannot be written (another
//!   process holds tantivy's writer lock for longer than [`WRITER_WAIT`], a read-only root, a
//!   broken index), the query is answered from an in-RAM index built from just the folders it
//!   needs — they are small — with identical results.
//! * **Concurrent processes.** tantivy allows one `IndexWriter` per index and guards it with a
//!   lock file (`flock`, released when a process dies). A process takes the writer only when a
//!   refresh found a change, for the time of one commit; readers never block on it and see the
//!   last commit. Two processes refreshing the same change both try; the second finds nothing
//!   left to do or falls back to RAM. Rebuilding moves the old folder aside with one `rename`,
//!   so no process ever opens a half-deleted index.
//!
//! Only files that parse and pass the scanner are served; the others are kept as problem
//! documents (counted in [`RefreshStats`], listed by [`MemoryIndex::problems`]) so they are not
//! re-parsed on every query and are never lost silently. No tantivy type crosses this API.

mod baseline;
mod cjk;
mod collect;
mod folders;
mod lexicon;
mod query;
pub mod relevance;
mod schema;
mod terms;
mod watch;
mod writer;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use curator_core::{Observation, ScopeName, SnapshotEntry, Tier};
use tantivy::collector::{Count, DocSetCollector};
use tantivy::directory::error::LockError;
use tantivy::query::{AllQuery, TermQuery};
use tantivy::schema::{IndexRecordOption, Value};
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument, TantivyError, Term};

pub use baseline::{BaselineDoc, bm25_baseline};
use schema::Fields;
pub use terms::phrase_hits_first;
use writer::Fnv;

pub use watch::on_network_fs;

/// How long a refresh waits for another process's writer before answering from RAM.
pub const WRITER_WAIT: Duration = Duration::from_millis(250);

/// Where the index lives under a memory root: one folder per schema version, so curators of
/// two versions sharing a root (a fleet upgraded one machine at a time) each keep their own
/// instead of rebuilding the whole index every time the other one queries (audit 9: 0.5 s per
/// alternation at 5,000 observations). An older version's folder (`index`, before versions
/// had folders) is left for it: deleting it once no older curator uses the root frees its
/// space.
pub fn index_dir(root: &Path) -> PathBuf {
    root.join(".curator").join(format!("index-v{}", schema::SCHEMA_VERSION))
}

/// Why the index could not do what was asked.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum IndexError {
    /// A file or folder of the memory root could not be read.
    #[error("I/O error on {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    /// Another writer (another process, or another request of this one) holds the index
    /// writer: the query is answered from the files in RAM meanwhile.
    #[error("index writer is busy (another writer is updating the index)")]
    WriterBusy,
    /// tantivy failed (corrupt or unreadable index files, among others).
    #[error("index error: {0}")]
    Tantivy(String),
}

impl IndexError {
    /// The index's folder cannot be written (a read-only root, another user's memory): the
    /// files can still be read and served, from RAM.
    pub fn is_unwritable(&self) -> bool {
        matches!(self, IndexError::Io { source, .. } if unwritable(source.kind()))
    }
}

/// An I/O error kind that says a folder cannot be written, not that its files are gone: no
/// permission, a read-only file system, or a file where `.curator/` should be (a stray file,
/// a bad checkout; `lint` reports it).
pub(crate) fn unwritable(kind: std::io::ErrorKind) -> bool {
    use std::io::ErrorKind::{NotADirectory, PermissionDenied, ReadOnlyFilesystem};
    matches!(kind, PermissionDenied | ReadOnlyFilesystem | NotADirectory)
}

impl From<TantivyError> for IndexError {
    fn from(e: TantivyError) -> Self {
        IndexError::Tantivy(e.to_string())
    }
}

impl From<std::io::Error> for IndexError {
    fn from(e: std::io::Error) -> Self {
        IndexError::Tantivy(e.to_string())
    }
}

/// One scope folder: `<tier>/<scope>`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ScopeDir {
    pub tier: Tier,
    pub scope: ScopeName,
}

impl ScopeDir {
    pub fn new(tier: Tier, scope: ScopeName) -> Self {
        ScopeDir { tier, scope }
    }

    /// `tier/scope`, the folder's key in the index.
    pub fn key(&self) -> String {
        format!("{}/{}", self.tier.dir_name(), self.scope.as_str())
    }
}

/// A suite child's place: only suite observations with exactly this position and snapshot are
/// seen (§3.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SuiteMatch {
    pub position: u64,
    pub snapshot: Vec<SnapshotEntry>,
}

/// One folder a query reads. For a suite folder, `suite: None` means only base observations
/// (agent-qa without `currentSuiteTests`/`currentPosition`); other tiers ignore `suite`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScopeSelector {
    pub dir: ScopeDir,
    pub suite: Option<SuiteMatch>,
}

/// How step text is matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum QueryMode {
    /// Phrase mode's hits first, then analyzed terms (folded, stop words and step verbs
    /// dropped, stemmed), judged by what the step names of each observation, ranked by
    /// relevance × trust: curator's default (`index/terms.rs`).
    #[default]
    Terms,
    /// agent-qa exactly: the whole sanitized step as one phrase, FTS5 bm25 × trust.
    Phrase,
}

/// One search over some scope folders.
#[derive(Debug, Clone)]
pub struct SearchRequest {
    /// The folders to read, in discovery order (products, suite, tests: ties follow it).
    pub scopes: Vec<ScopeSelector>,
    /// The step text as the planner sees it; sanitized here (§3.3).
    pub text: String,
    pub mode: QueryMode,
    /// Observations below this trust are never returned.
    pub min_trust: f64,
    /// At most this many hits; 0 returns nothing.
    pub max_results: usize,
    /// Terms mode only: the share of the step's *known* IDF weight (words that occur in the
    /// observations this step may see) a hit must contain, in `[0, 1]`. A floor under the
    /// acceptance rules of `index/terms.rs`, which do most of the filtering. Exact phrase hits
    /// need neither this nor `keep_ratio`.
    pub min_relevance: f64,
    /// Terms mode only: a hit whose relevance × √trust is below this share of the best hit's
    /// is dropped (a clear best match is not diluted by weak ones); 0 keeps all.
    pub keep_ratio: f64,
}

/// The default share of the best hit's strength a further terms-mode hit needs (measured on
/// `eval/dev`, BENCHMARKS.md "Retrieval quality").
pub const DEFAULT_KEEP_RATIO: f64 = 0.65;

/// The default relevance floor of terms mode: a safety net below the acceptance rules (on
/// `eval/dev` any value up to 0.3 gives the same result).
pub const DEFAULT_MIN_RELEVANCE: f64 = 0.2;

/// One observation found by a search, best first.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    pub id: String,
    pub tier: Tier,
    pub scope: ScopeName,
    pub title: String,
    pub content: String,
    pub trust: f64,
    /// Relevance × trust, higher is better. In phrase mode this is `−(bm25 × trust)`, the
    /// negation of agent-qa's sort key; in terms mode an exact phrase hit scores that plus the
    /// best other hit's score, so it comes first ([`phrase_hits_first`]).
    pub score: f64,
    /// Terms mode: the share of the step's known IDF weight this hit contains (what
    /// `min_relevance` compares), 1 for an exact phrase hit; phrase mode: 1 (the whole phrase
    /// is in it).
    pub relevance: f64,
    /// `tier/scope/file.md`, relative to the root.
    pub path: PathBuf,
}

/// What a refresh did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RefreshStats {
    /// Files seen for the first time (served or problem).
    pub added: usize,
    /// Files whose stamp changed and were parsed again.
    pub updated: usize,
    /// Files (or whole folders' files) gone from disk.
    pub removed: usize,
    /// Files left alone because their stamp did not change.
    pub unchanged: usize,
    /// Files parsed in this refresh that are not served (parse error, scanner, too large…).
    pub problems: usize,
    /// Scope folders skipped because their name is not a valid scope name.
    pub skipped_dirs: usize,
    /// Whether a commit was made.
    pub committed: bool,
    /// Whether the index was (re)built from nothing on open.
    pub rebuilt: bool,
}

/// A listed file the index does not serve, and why (for `lint`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexProblem {
    /// `tier/scope/file.md`, relative to the root.
    pub path: PathBuf,
    pub reason: String,
}

/// The index of one memory root.
pub struct MemoryIndex {
    root: PathBuf,
    index: Index,
    reader: IndexReader,
    fields: Fields,
    /// `false` for the in-RAM fallback, which is never persisted.
    on_disk: bool,
    rebuilt: bool,
    /// Set by [`MemoryIndex::watching`]: which folders changed since they were refreshed.
    watch: Option<Mutex<watch::FolderWatch>>,
    /// Folders brought in line with the disk by this handle (see [`MemoryIndex::folder_checks`]).
    folder_checks: AtomicU64,
    /// The terms and documents of the folders queried so far, per segment (`folders.rs`).
    folders: folders::FolderCache,
}

impl std::fmt::Debug for MemoryIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryIndex")
            .field("root", &self.root)
            .field("on_disk", &self.on_disk)
            .finish()
    }
}

impl MemoryIndex {
    /// Opens the index of `root`, rebuilding it (and refreshing the whole root) when it is
    /// missing, of another schema version or unreadable.
    pub fn open(root: &Path) -> Result<Self, IndexError> {
        let dir = index_dir(root);
        // tantivy panics on some corrupt files instead of returning an error; either way the
        // index is only a cache, so it is rebuilt.
        let current = guarded(|| match open_current(&dir) {
            Some(index) => Self::from_index(root, index, true, false).map(Some),
            None => Ok(None),
        });
        if let Ok(Some(me)) = current {
            return Ok(me);
        }
        let index = recreate(&dir)?;
        let mut me = Self::from_index(root, index, true, true)?;
        me.refresh()?;
        me.rebuilt = true;
        Ok(me)
    }

    /// An index in RAM of just `dirs`, read from the files now.
    pub fn in_ram(root: &Path, dirs: &[ScopeDir]) -> Result<Self, IndexError> {
        let (schema, _) = schema::build_schema();
        let index = Index::create_in_ram(schema);
        let me = Self::from_index(root, index, false, true)?;
        me.refresh_dirs(dirs)?;
        Ok(me)
    }

    fn from_index(
        root: &Path,
        index: Index,
        on_disk: bool,
        rebuilt: bool,
    ) -> Result<Self, IndexError> {
        schema::register_tokenizers(&index);
        let fields = schema::fields_of(&index.schema())
            .ok_or_else(|| IndexError::Tantivy("index schema lacks curator's fields".into()))?;
        let reader = index.reader_builder().reload_policy(ReloadPolicy::Manual).try_into()?;
        Ok(MemoryIndex {
            root: root.to_owned(),
            index,
            reader,
            fields,
            on_disk,
            rebuilt,
            watch: None,
            folder_checks: AtomicU64::new(0),
            folders: folders::FolderCache::default(),
        })
    }

    /// Makes [`MemoryIndex::search`] refresh only the folders that changed since this index last
    /// refreshed them, instead of `stat`ing every file of the step's folders on every query.
    /// Worth it for an index that answers many queries (a server, a harness process); a
    /// one-shot query gains nothing. Where changes cannot be watched (not Linux, a network
    /// file system, the kernel's watch limit) every query keeps checking the files.
    pub fn watching(mut self) -> Self {
        self.watch = Some(Mutex::new(watch::FolderWatch::new(&self.root)));
        self
    }

    /// How many times this handle compared a folder with the disk (listing it and `stat`ing its
    /// files): what [`MemoryIndex::watching`] saves, for tests and diagnostics.
    pub fn folder_checks(&self) -> u64 {
        self.folder_checks.load(Ordering::Relaxed)
    }

    /// Whether folder changes are watched (see [`MemoryIndex::watching`]).
    pub fn is_watching(&self) -> bool {
        self.folder_watch().is_some_and(|w| w.is_active())
    }

    fn folder_watch(&self) -> Option<MutexGuard<'_, watch::FolderWatch>> {
        // A panic while holding the watch leaves at worst folders marked stale.
        self.watch.as_ref().map(|w| w.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Whether this index was built from nothing when it was opened.
    pub fn was_rebuilt(&self) -> bool {
        self.rebuilt
    }

    /// Brings the whole index in line with the files under the root, in one commit.
    pub fn refresh(&self) -> Result<RefreshStats, IndexError> {
        self.reader.reload()?;
        let searcher = self.reader.searcher();
        let mut refresh = writer::Refresh::new(&self.index, self.fields, &self.root);
        let dirs = writer::list_scope_dirs(&self.root, &mut refresh.stats)
            .map_err(|source| IndexError::Io { path: self.root.clone(), source })?;
        let on_disk: std::collections::HashSet<String> = dirs.iter().map(ScopeDir::key).collect();
        for key in writer::indexed_dirs(&searcher, &self.fields)? {
            if !on_disk.contains(&key) {
                refresh.remove_dir(&searcher, &key)?;
            }
        }
        for dir in &dirs {
            refresh.refresh_dir(&searcher, dir)?;
        }
        self.finish(refresh)
    }

    /// Brings only `dirs` in line with the files (what a query reads).
    pub fn refresh_dirs(&self, dirs: &[ScopeDir]) -> Result<RefreshStats, IndexError> {
        self.reader.reload()?;
        let searcher = self.reader.searcher();
        let mut refresh = writer::Refresh::new(&self.index, self.fields, &self.root);
        for dir in dirs {
            refresh.refresh_dir(&searcher, dir)?;
        }
        self.folder_checks.fetch_add(dirs.len() as u64, Ordering::Relaxed);
        self.finish(refresh)
    }

    fn finish(&self, refresh: writer::Refresh<'_>) -> Result<RefreshStats, IndexError> {
        let mut stats = refresh.finish()?;
        if stats.committed {
            self.reader.reload()?;
        }
        stats.rebuilt = self.rebuilt;
        Ok(stats)
    }

    /// Refreshes the request's folders (with [`MemoryIndex::watching`], only those that
    /// changed), then searches them. If this index cannot be refreshed or read, the answer comes
    /// from an in-RAM index of the same folders instead.
    pub fn search(&self, req: &SearchRequest) -> Result<Vec<Hit>, IndexError> {
        let dirs: Vec<ScopeDir> = req.scopes.iter().map(|s| s.dir.clone()).collect();
        let stale = self.folder_watch().map(|mut w| w.stale(&self.root, &dirs));
        let fresh = guarded(|| {
            match &stale {
                Some(stale) if stale.is_empty() => {}
                Some(stale) => {
                    let stale_dirs: Vec<ScopeDir> = stale.iter().map(|s| s.dir.clone()).collect();
                    self.refresh_dirs(&stale_dirs)?;
                    if let Some(mut w) = self.folder_watch() {
                        w.mark_fresh(stale);
                    }
                }
                None => {
                    self.refresh_dirs(&dirs)?;
                }
            }
            self.search_now(req)
        });
        match fresh {
            Ok(hits) => Ok(hits),
            Err(IndexError::Io { path, source }) => Err(IndexError::Io { path, source }),
            Err(e) => {
                tracing::warn!(error = %e, "index unavailable; answering from the files in RAM");
                MemoryIndex::in_ram(&self.root, &dirs)?.search_now(req)
            }
        }
    }

    /// Searches the index as it is, without refreshing.
    pub fn search_now(&self, req: &SearchRequest) -> Result<Vec<Hit>, IndexError> {
        if req.max_results == 0 || req.scopes.is_empty() {
            return Ok(Vec::new());
        }
        let sanitized = curator_core::fts::sanitize_step(&req.text);
        if sanitized.is_empty() {
            return Ok(Vec::new());
        }
        let searcher = self.reader.searcher();
        self.folders.retain(&searcher);
        let mut hits = match req.mode {
            QueryMode::Phrase => {
                let phrase = curator_core::fts::token_texts(&sanitized);
                if phrase.is_empty() {
                    return Ok(Vec::new());
                }
                collect::phrase(&searcher, &self.folders, &self.fields, req, &phrase)?
            }
            QueryMode::Terms => {
                terms::terms(&searcher, &self.folders, &self.fields, req, &sanitized)?
            }
        };
        self.drop_duplicate_ids(&searcher, &mut hits)?;
        Ok(hits)
    }

    /// An id served from two files is served from neither (README, "nothing is dropped
    /// silently"): the store refuses to change either copy, so injecting one would be memory that
    /// can never be blamed, and agent-qa's double injection is worse. Every indexed folder counts,
    /// so a copy in another product is seen once that folder was indexed; copies within the
    /// query's own folders, which a query always refreshes, are always seen.
    fn drop_duplicate_ids(
        &self,
        searcher: &tantivy::Searcher,
        hits: &mut Vec<Hit>,
    ) -> Result<(), IndexError> {
        let mut keep = Vec::with_capacity(hits.len());
        for hit in hits.iter() {
            let term = Term::from_field_text(self.fields.id, &hit.id);
            let query = TermQuery::new(term, IndexRecordOption::Basic);
            let copies = searcher.search(&query, &Count)?;
            if copies <= 1 {
                keep.push(true);
                continue;
            }
            // The other copy may be a folder not refreshed since a person moved the file out
            // of it (only queried folders are brought in line): only copies still on disk
            // count, so a moved observation is served from its new folder at once.
            let mut on_disk = 0;
            for addr in searcher.search(&query, &DocSetCollector)? {
                let doc: TantivyDocument = searcher.doc(addr)?;
                let path = doc.get_first(self.fields.path).and_then(|v| v.as_str()).unwrap_or("");
                if self.root.join(path).is_file() {
                    on_disk += 1;
                }
            }
            keep.push(on_disk <= 1);
        }
        let mut flags = keep.into_iter();
        hits.retain(|_| flags.next().unwrap_or(true));
        Ok(())
    }

    /// Every listed file that is not served, and why, in path order.
    pub fn problems(&self) -> Result<Vec<IndexProblem>, IndexError> {
        let searcher = self.reader.searcher();
        let mut out = Vec::new();
        for addr in searcher.search(&AllQuery, &DocSetCollector)? {
            let doc: TantivyDocument = searcher.doc(addr)?;
            if let Some(reason) = doc.get_first(self.fields.problem).and_then(|v| v.as_str()) {
                let path = doc.get_first(self.fields.path).and_then(|v| v.as_str()).unwrap_or("");
                out.push(IndexProblem { path: path.into(), reason: reason.to_owned() });
            }
        }
        out.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(out)
    }

    /// Served documents in the index (after the last refresh).
    pub fn served_count(&self) -> Result<usize, IndexError> {
        let searcher = self.reader.searcher();
        let total = searcher.num_docs() as usize;
        Ok(total - self.problems()?.len())
    }
}

/// Searches `root` without touching `<root>/.curator/`: an in-RAM index of the request's folders.
pub fn search_files(root: &Path, req: &SearchRequest) -> Result<Vec<Hit>, IndexError> {
    let dirs: Vec<ScopeDir> = req.scopes.iter().map(|s| s.dir.clone()).collect();
    MemoryIndex::in_ram(root, &dirs)?.search_now(req)
}

/// Runs `f`, turning a panic inside tantivy (it panics on some corrupt data) into an error.
fn guarded<T>(f: impl FnOnce() -> Result<T, IndexError>) -> Result<T, IndexError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|panic| {
        let msg = panic
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        Err(IndexError::Tantivy(format!("index panicked: {msg}")))
    })
}

/// Opens `dir` if it holds an index of the current schema version.
fn open_current(dir: &Path) -> Option<Index> {
    // tantivy reads these with a plain open, which a FIFO put there would block for ever:
    // anything but a regular file (or a missing .managed.json) is a broken index, rebuilt.
    let regular = |name: &str, required: bool| match std::fs::symlink_metadata(dir.join(name)) {
        Ok(meta) => meta.is_file(),
        Err(e) => !required && e.kind() == std::io::ErrorKind::NotFound,
    };
    if !regular("meta.json", true) || !regular(".managed.json", false) {
        return None;
    }
    let index = Index::open_in_dir(dir).ok()?;
    let metas = index.load_metas().ok()?;
    (metas.payload.as_deref() == Some(schema::payload().as_str())
        && schema::fields_of(&index.schema()).is_some())
    .then_some(index)
}

/// Moves whatever is at `dir` aside (one rename, so no reader sees a half-deleted index),
/// deletes it, and creates an empty index stamped with the schema version.
fn recreate(dir: &Path) -> Result<Index, IndexError> {
    if dir.exists() {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let aside = dir.with_file_name(format!("index.old-{}-{nanos}", std::process::id()));
        std::fs::rename(dir, &aside)
            .map_err(|source| IndexError::Io { path: dir.into(), source })?;
        // Best effort: a leftover folder is harmless and removed by the next rebuild's owner.
        let _ = std::fs::remove_dir_all(&aside);
    }
    std::fs::create_dir_all(dir).map_err(|source| IndexError::Io { path: dir.into(), source })?;
    let (schema, _) = schema::build_schema();
    let index = match Index::create_in_dir(dir, schema) {
        Ok(index) => index,
        // Another process created it between our rename and create: use theirs.
        Err(TantivyError::IndexAlreadyExists) => {
            return open_current(dir)
                .ok_or_else(|| IndexError::Tantivy("index recreated concurrently".into()));
        }
        Err(e) => return Err(e.into()),
    };
    schema::register_tokenizers(&index);
    let mut writer = acquire_writer(&index, 15_000_000)?;
    let mut prepared = writer.prepare_commit()?;
    prepared.set_payload(&schema::payload());
    prepared.commit()?;
    Ok(index)
}

/// Takes tantivy's writer, waiting up to [`WRITER_WAIT`] for another process to release it.
pub(crate) fn acquire_writer(index: &Index, budget: usize) -> Result<IndexWriter, IndexError> {
    let start = Instant::now();
    let mut pause = Duration::from_millis(2);
    loop {
        match index.writer_with_num_threads(1, budget) {
            Ok(w) => {
                w.set_merge_policy(Box::new(merge_policy()));
                return Ok(w);
            }
            Err(TantivyError::LockFailure(LockError::LockBusy, _)) => {
                if start.elapsed() >= WRITER_WAIT {
                    return Err(IndexError::WriterBusy);
                }
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// Few segments, because every query pays per segment (term lookups, prefix scans): two
/// segments of similar size merge as soon as they exist, and segments under 100 documents
/// (one refresh after an edit adds one) count as one size, so they merge into each other
/// instead of waiting for eight of them (tantivy's default). A full build's segments merge
/// into one; later merges are small and amortized, like a binary counter.
fn merge_policy() -> tantivy::indexer::LogMergePolicy {
    let mut policy = tantivy::indexer::LogMergePolicy::default();
    policy.set_min_num_segments(2);
    policy.set_min_layer_size(100);
    policy
}

/// The index key of a suite child's place: position and snapshot, length-prefixed so distinct
/// data never share an encoding, hashed to 128 bits to keep the term short.
pub(crate) fn suite_key(position: u64, snapshot: &[SnapshotEntry]) -> String {
    let mut halves = [Fnv::with_seed(1), Fnv::with_seed(2)];
    for h in &mut halves {
        h.write_u64(position);
        h.write_u64(snapshot.len() as u64);
        for e in snapshot {
            h.write_u64(e.test.len() as u64);
            h.write(e.test.as_bytes());
            h.write_u64(e.id.len() as u64);
            h.write(e.id.as_bytes());
        }
    }
    format!("p{:016x}{:016x}", halves[0].finish(), halves[1].finish())
}

/// The security scan every reader applies before serving (§3.2 step 2, §7): the rule that
/// blocks this observation, if any.
fn screen(obs: &Observation) -> Option<String> {
    curator_core::scanner::scan_observation(&obs.title, &obs.content).rule().map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    const OBS: &str = "---\nid: obs_aa-lamp-lake-moon-reef-sand-tide-wave-wind-yarn\ntitle: Modal\ntrust: 0.5\n\
        created: 2026-04-10T12:00:00.000Z\nlast_confirmed: 2026-04-10T12:00:00.000Z\n\
        confirmed_count: 0\ncontradicted_count: 0\nsource_test: t_x\n---\nFades in.\n";

    #[test]
    fn a_busy_writer_makes_the_query_answer_from_the_files_in_ram() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let index = MemoryIndex::open(root).unwrap();
        // Another process (here: another handle) holds tantivy's writer lock.
        let other = Index::open_in_dir(index_dir(root)).unwrap();
        let held = acquire_writer(&other, 15_000_000).unwrap();
        let folder = root.join("products/p");
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("obs_aa-lamp-lake-moon-reef-sand-tide-wave-wind-yarn.md"), OBS)
            .unwrap();
        let scope = ScopeName::new("p").unwrap();
        let req = SearchRequest {
            scopes: vec![ScopeSelector { dir: ScopeDir::new(Tier::Products, scope), suite: None }],
            text: "modal".into(),
            mode: QueryMode::Phrase,
            min_trust: 0.3,
            max_results: 3,
            min_relevance: DEFAULT_MIN_RELEVANCE,
            keep_ratio: DEFAULT_KEEP_RATIO,
        };
        assert!(matches!(index.refresh(), Err(IndexError::WriterBusy)));
        let hits = index.search(&req).unwrap();
        assert_eq!(hits.len(), 1, "the new file is seen although the index could not take it");
        assert_eq!(hits[0].title, "Modal");
        // The on-disk index was not changed; once the writer is free the next query indexes it.
        drop(held);
        assert_eq!(index.refresh_dirs(&[req.scopes[0].dir.clone()]).unwrap().added, 1);
    }

    /// An empty root with its index and an empty folder `products/p`.
    fn product_folder() -> (tempfile::TempDir, MemoryIndex, PathBuf, ScopeDir) {
        let dir = tempfile::tempdir().unwrap();
        let index = MemoryIndex::open(dir.path()).unwrap();
        let folder = dir.path().join("products/p");
        std::fs::create_dir_all(&folder).unwrap();
        let scope = ScopeDir::new(Tier::Products, ScopeName::new("p").unwrap());
        (dir, index, folder, scope)
    }

    #[test]
    fn two_refreshes_of_one_new_file_leave_one_document() {
        // Process B read the index before process A committed the new file; B then adds it
        // too. The path is deleted before every add, so B's commit replaces A's document.
        let (dir, index, folder, scope) = product_folder();
        let root = dir.path();
        std::fs::write(folder.join("obs_aa-lamp-lake-moon-reef-sand-tide-wave-wind-yarn.md"), OBS)
            .unwrap();
        let stale_view = index.reader.searcher();
        assert_eq!(index.refresh_dirs(std::slice::from_ref(&scope)).unwrap().added, 1);
        let mut late = writer::Refresh::new(&index.index, index.fields, root);
        late.refresh_dir(&stale_view, &scope).unwrap();
        assert!(late.finish().unwrap().committed);
        index.reader.reload().unwrap();
        assert_eq!(index.reader.searcher().num_docs(), 1);
    }

    #[test]
    fn many_small_refreshes_do_not_pile_up_segments() {
        let (_dir, index, folder, scope) = product_folder();
        for n in 0..30 {
            let name = format!("obs_{n:02}-lamp-lake-moon-reef-sand-tide-wave-wind-yarn");
            std::fs::write(
                folder.join(format!("{name}.md")),
                OBS.replace("obs_aa", &format!("obs_{n:02}")),
            )
            .unwrap();
            assert!(index.refresh_dirs(std::slice::from_ref(&scope)).unwrap().committed);
        }
        index.reader.reload().unwrap();
        let searcher = index.reader.searcher();
        assert_eq!(searcher.num_docs(), 30);
        assert!(
            searcher.segment_readers().len() <= 8,
            "{} segments",
            searcher.segment_readers().len()
        );
    }

    #[test]
    fn suite_keys_differ_for_different_data_only() {
        let e = |t: &str, i: &str| SnapshotEntry { test: t.into(), id: i.into() };
        let a = suite_key(1, &[e("a", "b")]);
        assert_eq!(a, suite_key(1, &[e("a", "b")]));
        assert_ne!(a, suite_key(2, &[e("a", "b")]));
        assert_ne!(a, suite_key(1, &[e("ab", "")]));
        assert_ne!(a, suite_key(1, &[e("a", "b"), e("a", "b")]));
    }
}
