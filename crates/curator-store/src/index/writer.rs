//! Manifest-driven refresh: bring the index in line with the files (§1.2, §3.2).
//!
//! The manifest is the index itself: every listed file has one document holding its path and a
//! stamp (size, mtime, ctime, inode), so a refresh lists a folder, compares stamps and parses only
//! files that are new or changed; deleted files lose their document. Files are the truth, so a
//! file rewritten in place within the mtime granularity is still seen: its ctime (and usually its
//! size) moves. All changes of one refresh go into one commit, whose payload carries the schema
//! version; a reader therefore sees the state before or after a refresh, never half of one.

use std::collections::HashMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use curator_core::{Observation, ScopeName, Tier};
use tantivy::collector::DocSetCollector;
use tantivy::query::TermQuery;
use tantivy::schema::IndexRecordOption;
use tantivy::{DocAddress, Index, IndexWriter, Searcher, TantivyDocument, Term};

use super::schema::{Fields, SUITE_BASE, scoped_value};
use super::{IndexError, RefreshStats, ScopeDir, suite_key};

/// Files larger than this are not parsed (a problem, not a crash); observations are small.
pub(crate) const MAX_FILE_BYTES: u64 = 1 << 20;
/// Memory the single indexing thread may use before it flushes a segment (tantivy's minimum is
/// 15 MB). Every segment costs each query term lookups, so a full build should leave few: at
/// this budget 100k observations are one or two segments (and two then merge). The arena grows
/// as needed, so a refresh of a few files uses a small part of it.
const WRITER_BUDGET: usize = 200_000_000;

/// One file admitted by the listing rule, with its stamp.
#[derive(Debug, Clone)]
pub(crate) struct Listed {
    pub(crate) name: String,
    pub(crate) stamp: u64,
}

/// Whether `path`, whose directory entry has type `kind`, is a symlink that resolves outside
/// `root` (canonical) or does not resolve. Such an entry is not memory of this root: `lint`
/// reports it and `show`, `list` and `curate` skip it, so the index skips it too — memory that
/// could be injected but never blamed would be the worst of both.
fn escapes_root(root: &Path, path: &Path, kind: fs::FileType) -> bool {
    kind.is_symlink() && !fs::canonicalize(path).is_ok_and(|target| target.starts_with(root))
}

/// The canonical form of `root`, which [`escapes_root`] compares against.
pub(crate) fn canonical_root(root: &Path) -> PathBuf {
    fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf())
}

/// §1.2: `obs_*.md` names (case-sensitive) in `dir`, sorted in UTF-16 order; a missing folder is
/// empty. Names that are not UTF-8 cannot be observation ids and are left out, and so are
/// symlinks out of `root` (canonical; [`escapes_root`]).
pub(crate) fn list_dir(root: &Path, dir: &Path) -> io::Result<Vec<Listed>> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) if e.kind() == io::ErrorKind::NotADirectory => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry?;
        let Ok(name) = entry.file_name().into_string() else { continue };
        if !(name.starts_with("obs_") && name.ends_with(".md")) {
            continue;
        }
        if entry.file_type().is_ok_and(|kind| escapes_root(root, &entry.path(), kind)) {
            continue;
        }
        // A file that vanished between readdir and stat is simply not listed.
        let Ok(meta) = fs::metadata(entry.path()) else { continue };
        out.push(Listed { name, stamp: stamp(&meta) });
    }
    out.sort_by(|a, b| utf16_cmp(&a.name, &b.name));
    Ok(out)
}

/// JavaScript's default sort order (UTF-16 code units), which differs from byte order above
/// the BMP.
pub(crate) fn utf16_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

/// The scope folders of every tier (directories only, §3.5), with names that are valid scope
/// names; the others are counted in `stats.skipped_dirs`.
pub(crate) fn list_scope_dirs(root: &Path, stats: &mut RefreshStats) -> io::Result<Vec<ScopeDir>> {
    let canonical = canonical_root(root);
    let mut out = Vec::new();
    for tier in Tier::ALL {
        let entries = match fs::read_dir(root.join(tier.dir_name())) {
            Ok(entries) => entries,
            // A tier that is missing, or a file where the folder should be, holds no memory
            // (agent-qa's listing finds nothing there either); `lint` names the file.
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) if e.kind() == io::ErrorKind::NotADirectory => continue,
            Err(e) => return Err(e),
        };
        let mut names = Vec::new();
        for entry in entries {
            let entry = entry?;
            if !fs::metadata(entry.path()).is_ok_and(|m| m.is_dir())
                || entry.file_type().is_ok_and(|kind| escapes_root(&canonical, &entry.path(), kind))
            {
                continue;
            }
            match entry.file_name().into_string().ok().and_then(|n| ScopeName::new(n).ok()) {
                Some(scope) => names.push(scope),
                None => stats.skipped_dirs += 1,
            }
        }
        names.sort_by(|a, b| utf16_cmp(a.as_str(), b.as_str()));
        out.extend(names.into_iter().map(|scope| ScopeDir { tier, scope }));
    }
    Ok(out)
}

/// A fingerprint of the metadata that changes whenever the file's bytes may have changed.
fn stamp(meta: &fs::Metadata) -> u64 {
    let mut h = Fnv::new();
    h.write_u64(meta.len());
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        for v in [meta.mtime(), meta.mtime_nsec(), meta.ctime(), meta.ctime_nsec()] {
            h.write_u64(v as u64);
        }
        h.write_u64(meta.ino());
        h.write_u64(meta.dev());
    }
    #[cfg(not(unix))]
    if let Ok(t) = meta.modified().and_then(|t| {
        t.duration_since(std::time::UNIX_EPOCH).map_err(|e| io::Error::other(e.to_string()))
    }) {
        h.write_u64(t.as_nanos() as u64);
    }
    h.finish()
}

/// FNV-1a, 64 bits: stable across processes and Rust versions, unlike `DefaultHasher`.
#[derive(Debug)]
pub(crate) struct Fnv(u64);

impl Fnv {
    pub(crate) fn new() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    pub(crate) fn with_seed(seed: u64) -> Self {
        let mut h = Self::new();
        h.write_u64(seed);
        h
    }
    pub(crate) fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
    pub(crate) fn write_u64(&mut self, v: u64) {
        self.write(&v.to_le_bytes());
    }
    pub(crate) fn finish(&self) -> u64 {
        self.0
    }
}

/// What reading one listed file gave.
enum Loaded {
    Served(Box<Observation>),
    Problem(String),
}

/// Reads, parses and screens one file the way every agent-qa reader does (§1.4: any failure
/// means "not served"); the reason is kept for `lint`.
fn load(path: &Path, stem: &str) -> Loaded {
    match fs::metadata(path) {
        Ok(m) if m.len() > MAX_FILE_BYTES => {
            return Loaded::Problem(format!(
                "too large: {} bytes (limit {MAX_FILE_BYTES})",
                m.len()
            ));
        }
        Ok(m) if !m.is_file() => return Loaded::Problem("not a regular file".to_owned()),
        Ok(_) => {}
        Err(e) => return Loaded::Problem(format!("unreadable: {e}")),
    }
    let bytes = match fs::read(path) {
        Ok(b) => b,
        Err(e) => return Loaded::Problem(format!("unreadable: {e}")),
    };
    // Node's readFile('utf-8') replaces invalid sequences; do the same so both see one text.
    let text = String::from_utf8_lossy(&bytes);
    match curator_core::codec::parse_observation(&text, stem) {
        Err(e) => Loaded::Problem(format!("parse error: {e}")),
        Ok(obs) => match super::screen(&obs) {
            Some(rule) => Loaded::Problem(format!("unsafe text: blocked by scanner rule {rule}")),
            None => Loaded::Served(Box::new(obs)),
        },
    }
}

/// The documents of one folder currently in the index: path → (stamp, address).
fn indexed_in_dir(
    searcher: &Searcher,
    fields: &Fields,
    dir_key: &str,
) -> tantivy::Result<HashMap<String, u64>> {
    let query =
        TermQuery::new(Term::from_field_text(fields.dir, dir_key), IndexRecordOption::Basic);
    let docs = searcher.search(&query, &DocSetCollector)?;
    let mut out = HashMap::with_capacity(docs.len());
    let mut by_segment: HashMap<u32, Vec<DocAddress>> = HashMap::new();
    for addr in docs {
        by_segment.entry(addr.segment_ord).or_default().push(addr);
    }
    for (ord, addrs) in by_segment {
        let ff = searcher.segment_reader(ord).fast_fields();
        let paths = ff.str("path")?.ok_or_else(|| missing("path"))?;
        let stamps = ff.u64("stamp")?;
        // Resolve the path ordinals in sorted order in one pass: looking each one up alone
        // decompresses its dictionary block again per document, which made a refresh of the
        // whole root cost far more than the stats it exists for (measured by the retrieval
        // bench: most of a no-change refresh was zstd block decoding).
        let mut by_ord: Vec<(u64, u64)> = addrs
            .iter()
            .filter_map(|addr| {
                let term_ord = paths.term_ords(addr.doc_id).next()?;
                Some((term_ord, stamps.first(addr.doc_id).unwrap_or(0)))
            })
            .collect();
        by_ord.sort_unstable();
        let ords: Vec<u64> = by_ord.iter().map(|(o, _)| *o).collect();
        let mut stamps_in_order = by_ord.iter().map(|(_, s)| *s);
        let mut bad_utf8 = false;
        let complete = paths.dictionary().sorted_ords_to_term_cb(&ords, |bytes| {
            let stamp = stamps_in_order.next().unwrap_or(0);
            match std::str::from_utf8(bytes) {
                Ok(path) => {
                    out.insert(path.to_owned(), stamp);
                }
                Err(_) => bad_utf8 = true,
            }
        })?;
        if !complete || bad_utf8 {
            return Err(tantivy::TantivyError::InvalidArgument(
                "index path dictionary is damaged (missing or non-UTF-8 term)".into(),
            ));
        }
    }
    Ok(out)
}

fn missing(field: &str) -> tantivy::TantivyError {
    tantivy::TantivyError::SchemaError(format!("fast field {field} missing"))
}

/// Every `dir` value that has a term in the index (some may only have deleted documents).
pub(crate) fn indexed_dirs(searcher: &Searcher, fields: &Fields) -> tantivy::Result<Vec<String>> {
    let mut out = std::collections::BTreeSet::new();
    for reader in searcher.segment_readers() {
        let inverted = reader.inverted_index(fields.dir)?;
        let mut stream = inverted.terms().stream()?;
        while stream.advance() {
            out.insert(String::from_utf8_lossy(stream.key()).into_owned());
        }
    }
    Ok(out.into_iter().collect())
}

/// One refresh batch: the writer is taken only when the first change is found, and everything
/// is committed once in [`Refresh::finish`].
pub(crate) struct Refresh<'a> {
    index: &'a Index,
    fields: Fields,
    root: &'a Path,
    /// `root`, canonical, for [`escapes_root`].
    canonical: PathBuf,
    writer: Option<IndexWriter>,
    pub(crate) stats: RefreshStats,
}

impl std::fmt::Debug for Refresh<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Refresh").field("root", &self.root).field("stats", &self.stats).finish()
    }
}

impl<'a> Refresh<'a> {
    pub(crate) fn new(index: &'a Index, fields: Fields, root: &'a Path) -> Self {
        let canonical = canonical_root(root);
        Refresh { index, fields, root, canonical, writer: None, stats: RefreshStats::default() }
    }

    fn writer(&mut self) -> Result<&mut IndexWriter, IndexError> {
        if self.writer.is_none() {
            self.writer = Some(super::acquire_writer(self.index, WRITER_BUDGET)?);
        }
        Ok(self.writer.as_mut().expect("set above"))
    }

    /// Brings one scope folder in line with the disk.
    pub(crate) fn refresh_dir(
        &mut self,
        searcher: &Searcher,
        dir: &ScopeDir,
    ) -> Result<(), IndexError> {
        let dir_key = dir.key();
        let tier_dir = self.root.join(dir.tier.dir_name());
        let folder = tier_dir.join(dir.scope.as_str());
        // A tier or scope folder linked out of the root holds no memory of this root.
        let linked_out = [&tier_dir, &folder].into_iter().any(|p| {
            fs::symlink_metadata(p).is_ok_and(|m| escapes_root(&self.canonical, p, m.file_type()))
        });
        let listed = if linked_out {
            Vec::new()
        } else {
            list_dir(&self.canonical, &folder)
                .map_err(|source| IndexError::Io { path: folder.clone(), source })?
        };
        let mut indexed = indexed_in_dir(searcher, &self.fields, &dir_key)?;
        for file in listed {
            let path = format!("{dir_key}/{}", file.name);
            match indexed.remove(&path) {
                Some(old) if old == file.stamp => {
                    self.stats.unchanged += 1;
                    continue;
                }
                Some(_) => self.stats.updated += 1,
                None => self.stats.added += 1,
            }
            // Deleted even when new to this reader: another process may have committed the
            // same file since, and a path must never have two documents.
            let term = Term::from_field_text(self.fields.path, &path);
            self.writer()?.delete_term(term);
            let stem = file.name.strip_suffix(".md").unwrap_or(&file.name);
            let doc = match load(&folder.join(&file.name), stem) {
                Loaded::Served(obs) => self.served_doc(dir, &path, file.stamp, &obs),
                Loaded::Problem(reason) => {
                    self.stats.problems += 1;
                    self.problem_doc(&dir_key, &path, file.stamp, &reason)
                }
            };
            self.writer()?.add_document(doc)?;
        }
        for gone in indexed.into_keys() {
            self.stats.removed += 1;
            let term = Term::from_field_text(self.fields.path, &gone);
            self.writer()?.delete_term(term);
        }
        Ok(())
    }

    /// Removes every document of a folder that no longer exists.
    pub(crate) fn remove_dir(
        &mut self,
        searcher: &Searcher,
        dir_key: &str,
    ) -> Result<(), IndexError> {
        let n = indexed_in_dir(searcher, &self.fields, dir_key)?.len();
        if n > 0 {
            self.stats.removed += n;
            let term = Term::from_field_text(self.fields.dir, dir_key);
            self.writer()?.delete_term(term);
        }
        Ok(())
    }

    fn served_doc(
        &self,
        dir: &ScopeDir,
        path: &str,
        stamp: u64,
        obs: &Observation,
    ) -> TantivyDocument {
        let f = &self.fields;
        let mut doc = TantivyDocument::default();
        doc.add_text(f.path, path);
        doc.add_text(f.dir, dir.key());
        doc.add_text(f.scope_key, dir.key());
        doc.add_u64(f.stamp, stamp);
        doc.add_text(f.id, obs.id.as_str());
        let key = dir.key();
        doc.add_text(f.title, &obs.title);
        doc.add_text(f.content, &obs.content);
        let len = curator_core::fts::tokenize(&obs.title).len()
            + curator_core::fts::tokenize(&obs.content).len();
        doc.add_u64(f.len, len as u64);
        doc.add_text(f.title_phrase, scoped_value(&key, &obs.title));
        doc.add_text(f.content_phrase, scoped_value(&key, &obs.content));
        doc.add_text(f.title_terms, scoped_value(&key, &obs.title));
        // Title and content in one value: the tokenizer never joins words across the newline.
        let both = format!("{}\n{}", obs.title, obs.content);
        doc.add_text(f.any_terms, scoped_value(&key, &both));
        doc.add_f64(f.trust, obs.trust);
        if dir.tier == Tier::Suites {
            let key = match &obs.suite {
                Some(s) => suite_key(s.position, &s.suite_snapshot),
                None => SUITE_BASE.to_owned(),
            };
            doc.add_text(f.suite_key, key);
        }
        if let Some(s) = &obs.suite {
            doc.add_u64(f.position, s.position);
            let json = serde_json::to_string(&s.suite_snapshot).unwrap_or_default();
            doc.add_text(f.snapshot, json);
        }
        doc
    }

    fn problem_doc(&self, dir_key: &str, path: &str, stamp: u64, reason: &str) -> TantivyDocument {
        let f = &self.fields;
        let mut doc = TantivyDocument::default();
        doc.add_text(f.path, path);
        doc.add_text(f.dir, dir_key);
        doc.add_u64(f.stamp, stamp);
        doc.add_text(f.problem, reason);
        doc
    }

    /// Commits the batch (if anything changed) with the schema version as payload.
    pub(crate) fn finish(mut self) -> Result<RefreshStats, IndexError> {
        if let Some(mut writer) = self.writer.take() {
            let mut prepared = writer.prepare_commit()?;
            prepared.set_payload(&super::schema::payload());
            prepared.commit()?;
            self.stats.committed = true;
            // The commit may have started merges of small segments; dropping the writer would
            // abandon them, and every refresh after an edit would leave one more tiny segment
            // that each query then visits (seen as 17 segments for 100k files in the bench).
            // Merges pair segments of similar size, so after an edit they are small; a large one
            // is rare (amortized like a binary counter), the price of few segments per query.
            writer.wait_merging_threads()?;
        }
        Ok(self.stats)
    }
}
