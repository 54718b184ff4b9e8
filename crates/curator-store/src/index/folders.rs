//! What one folder holds in one segment — its documents and its terms — read once and kept for
//! the life of the index handle.
//!
//! A terms-mode query looks up every step word (and every pool word it begins) in each of its
//! folders, and walks the folders' documents to build its pool: dozens of term-dictionary seeks
//! and a scope query per step, which were most of a query once postings were scoped
//! (BENCHMARKS.md "Retrieval"). A folder's terms are a contiguous range of the dictionary
//! (`tier/scope␁…`, `schema.rs`), so one scan reads them all with their postings addresses;
//! later lookups are binary searches in memory.
//!
//! Invariant: an entry is keyed by the segment it was read from, and a segment's documents,
//! terms and postings never change, so an entry is never stale — deletions change a segment's
//! alive bit set, which callers check on every document. Entries of segments the searcher no
//! longer has are dropped, and the whole cache is dropped when it holds more than
//! [`MAX_CACHED_ITEMS`].

use std::sync::{Arc, Mutex, PoisonError};

use rustc_hash::FxHashMap;
use tantivy::index::SegmentId;
use tantivy::postings::TermInfo;
use tantivy::query::{EnableScoring, Query, TermQuery};
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::{DocId, Searcher, SegmentReader, Term};

use curator_core::Tier;

use super::query::scope_filter;
use super::schema::{Fields, SCOPE_SEP, scoped_term};
use super::{IndexError, ScopeSelector};

/// Most terms and documents kept in all folders together (about 100 bytes each).
const MAX_CACHED_ITEMS: usize = 2_000_000;

/// One folder's terms of one field in one segment, sorted by their bytes.
#[derive(Debug, Default)]
pub(crate) struct FolderTerms {
    terms: Vec<(Box<str>, TermInfo)>,
}

impl FolderTerms {
    /// The term `form` (without the folder prefix), if the folder has it.
    pub(crate) fn get(&self, form: &str) -> Option<&TermInfo> {
        self.terms
            .binary_search_by(|(t, _)| t.as_bytes().cmp(form.as_bytes()))
            .ok()
            .map(|i| &self.terms[i].1)
    }

    /// The folder's terms that begin with `prefix`, in byte order.
    pub(crate) fn with_prefix<'a>(&'a self, prefix: &'a str) -> impl Iterator<Item = &'a str> {
        let start = self.terms.partition_point(|(t, _)| t.as_bytes() < prefix.as_bytes());
        self.terms[start..].iter().map(|(t, _)| &**t).take_while(move |t| t.starts_with(prefix))
    }
}

/// One served document of a folder: its id in the segment, its trust and its length in
/// `unicode61` tokens (FTS5's `D`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct FolderDoc {
    pub(crate) doc: DocId,
    pub(crate) trust: f64,
    pub(crate) len: u64,
}

/// What is cached of one segment.
#[derive(Debug, Default)]
struct SegmentEntry {
    /// By field, then folder key.
    terms: FxHashMap<Field, FxHashMap<String, Arc<FolderTerms>>>,
    /// By folder key: served documents (deleted ones included; callers check).
    docs: FxHashMap<String, Arc<Vec<FolderDoc>>>,
}

/// Folder terms and documents per segment.
#[derive(Debug, Default)]
pub(crate) struct FolderCache {
    inner: Mutex<Cached>,
}

#[derive(Debug, Default)]
struct Cached {
    by_segment: FxHashMap<SegmentId, SegmentEntry>,
    items: usize,
}

impl Cached {
    /// Makes room for `n` more items (all or nothing: the cache is only an accelerator).
    fn reserve(&mut self, n: usize) {
        if self.items + n > MAX_CACHED_ITEMS {
            self.by_segment.clear();
            self.items = 0;
        }
        self.items += n;
    }
}

impl FolderCache {
    /// Drops the entries of segments `searcher` does not have (merged away).
    pub(crate) fn retain(&self, searcher: &Searcher) {
        let mut cached = self.lock();
        let readers = searcher.segment_readers();
        if readers.len() >= cached.by_segment.len()
            && cached.by_segment.keys().all(|id| readers.iter().any(|r| r.segment_id() == *id))
        {
            return;
        }
        cached.by_segment.retain(|id, _| readers.iter().any(|r| r.segment_id() == *id));
        cached.items = cached
            .by_segment
            .values()
            .map(|e| {
                e.terms.values().flat_map(|m| m.values()).map(|t| t.terms.len()).sum::<usize>()
                    + e.docs.values().map(|d| d.len()).sum::<usize>()
            })
            .sum();
    }

    /// The terms of folder `dir` in `field` of `segment`, read on first use.
    pub(crate) fn terms(
        &self,
        segment: &SegmentReader,
        field: Field,
        dir: &str,
    ) -> Result<Arc<FolderTerms>, IndexError> {
        let id = segment.segment_id();
        if let Some(found) = self
            .lock()
            .by_segment
            .get(&id)
            .and_then(|e| e.terms.get(&field))
            .and_then(|m| m.get(dir))
        {
            return Ok(Arc::clone(found));
        }
        // Read without the lock: two threads may both read a folder; the last insert wins.
        let read = Arc::new(read_terms(segment, field, dir)?);
        let mut cached = self.lock();
        cached.reserve(read.terms.len());
        let entry = cached.by_segment.entry(id).or_default();
        entry.terms.entry(field).or_default().insert(dir.to_owned(), Arc::clone(&read));
        Ok(read)
    }

    /// The served documents of folder `dir` in `segment` with their trust, read on first use.
    pub(crate) fn docs(
        &self,
        searcher: &Searcher,
        fields: &Fields,
        segment: &SegmentReader,
        dir: &str,
    ) -> Result<Arc<Vec<FolderDoc>>, IndexError> {
        let id = segment.segment_id();
        if let Some(found) = self.lock().by_segment.get(&id).and_then(|e| e.docs.get(dir)) {
            return Ok(Arc::clone(found));
        }
        let read = Arc::new(read_docs(searcher, fields, segment, dir)?);
        let mut cached = self.lock();
        cached.reserve(read.len());
        cached.by_segment.entry(id).or_default().docs.insert(dir.to_owned(), Arc::clone(&read));
        Ok(read)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Cached> {
        // A panic while holding it leaves at worst a partly filled cache, which is still right.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Calls `visit(doc)` for every live served document of `scopes` in `segment`, once each: the
/// rows agent-qa's per-test table would hold. Product and test folders come from the cache;
/// suite folders need their position filter, so they go through the scope query (they are
/// small) with trust and length read from the columns.
pub(crate) fn for_each_scoped_doc(
    searcher: &Searcher,
    folders: &FolderCache,
    fields: &Fields,
    scopes: &[ScopeSelector],
    segment: &SegmentReader,
    mut visit: impl FnMut(FolderDoc),
) -> Result<(), IndexError> {
    let mut seen: Vec<String> = Vec::new();
    let mut suites: Vec<ScopeSelector> = Vec::new();
    for sel in scopes {
        let key = sel.dir.key();
        if seen.contains(&key) {
            continue;
        }
        if sel.dir.tier == Tier::Suites {
            suites.push(sel.clone());
        } else {
            for d in folders.docs(searcher, fields, segment, &key)?.iter() {
                if !segment.is_deleted(d.doc) {
                    visit(*d);
                }
            }
        }
        seen.push(key);
    }
    if !suites.is_empty() {
        let weight = scope_filter(fields, &suites)
            .weight(EnableScoring::disabled_from_searcher(searcher))?;
        let trust = segment.fast_fields().f64("trust")?;
        let len = segment.fast_fields().u64("len")?;
        weight.for_each_no_score(segment, &mut |docs| {
            for &doc in docs {
                if !segment.is_deleted(doc) {
                    visit(FolderDoc {
                        doc,
                        trust: trust.first(doc).unwrap_or(0.0),
                        len: len.first(doc).unwrap_or(0),
                    });
                }
            }
        })?;
    }
    Ok(())
}

/// One scan of the dictionary range `dir␁ … dir␂`.
fn read_terms(segment: &SegmentReader, field: Field, dir: &str) -> Result<FolderTerms, IndexError> {
    let inverted = segment.inverted_index(field)?;
    let start = scoped_term(dir, "");
    let end = format!("{dir}{}", char::from(SCOPE_SEP as u8 + 1));
    let mut stream =
        inverted.terms().range().ge(start.as_bytes()).lt(end.as_bytes()).into_stream()?;
    let mut terms = Vec::new();
    while stream.advance() {
        let Some(rest) = stream.key().strip_prefix(start.as_bytes()) else { continue };
        // Terms are written from `String`s, so they are UTF-8; anything else is damage.
        let Ok(rest) = std::str::from_utf8(rest) else { continue };
        terms.push((Box::from(rest), stream.value().clone()));
    }
    Ok(FolderTerms { terms })
}

/// The documents whose `scope_key` is `dir` (served documents only), with trust and length.
fn read_docs(
    searcher: &Searcher,
    fields: &Fields,
    segment: &SegmentReader,
    dir: &str,
) -> Result<Vec<FolderDoc>, IndexError> {
    let query =
        TermQuery::new(Term::from_field_text(fields.scope_key, dir), IndexRecordOption::Basic);
    let weight = query.weight(EnableScoring::disabled_from_searcher(searcher))?;
    let trust = segment.fast_fields().f64("trust")?;
    let len = segment.fast_fields().u64("len")?;
    let mut docs = Vec::new();
    weight.for_each_no_score(segment, &mut |batch| {
        docs.extend(batch.iter().map(|&doc| FolderDoc {
            doc,
            trust: trust.first(doc).unwrap_or(0.0),
            len: len.first(doc).unwrap_or(0),
        }));
    })?;
    Ok(docs)
}
