//! Loading, phrase-mode scoring and ordering of hits (§3.3; ARCHITECTURE.md "Ranking").
//!
//! Phrase mode is agent-qa's query recomputed exactly: `N` and `avgdl` over the scoped rows
//! (what agent-qa's per-test FTS5 table holds), `n` and `f` from the candidates' own tokens,
//! the FTS5 bm25 formula, then `rank × trust` ascending with ties in discovery order (products,
//! suite, tests folder; file names in UTF-16 order). Terms mode (`terms.rs`) shares [`load`]
//! and [`sort_hits`], and puts [`phrase`]'s hits first. In both modes `trust >= min_trust`
//! filters before the top-N cut, as agent-qa's `WHERE … ORDER BY … LIMIT` does, and a suite
//! observation is served only when its position and snapshot equal the request's entry by
//! entry.

use std::cmp::Ordering;

use curator_core::fts::{Bm25Stats, phrase_occurrences, token_texts};
use curator_core::{ScopeName, SnapshotEntry, Tier};
use tantivy::collector::DocSetCollector;
use tantivy::schema::Value;
use tantivy::{DocAddress, Searcher, TantivyDocument};

use super::folders::{FolderCache, for_each_scoped_doc};
use super::query::phrase_candidates;
use super::schema::Fields;
use super::writer::utf16_cmp;
use super::{Hit, IndexError, SearchRequest};

/// A stored document with the facts ordering needs.
pub(crate) struct Candidate {
    pub(crate) hit: Hit,
    /// Index of the selector that admitted it (discovery order of folders).
    selector: usize,
    file_name: String,
}

impl Candidate {
    fn discovery_cmp(&self, other: &Self) -> Ordering {
        self.selector
            .cmp(&other.selector)
            .then_with(|| utf16_cmp(&self.file_name, &other.file_name))
    }
}

pub(crate) fn load(
    searcher: &Searcher,
    fields: &Fields,
    req: &SearchRequest,
    addr: DocAddress,
) -> Result<Option<Candidate>, IndexError> {
    let doc: TantivyDocument = searcher.doc(addr)?;
    let text = |f| doc.get_first(f).and_then(|v| v.as_str()).unwrap_or_default().to_owned();
    let path = text(fields.path);
    let mut parts = path.splitn(3, '/');
    let (Some(tier), Some(scope), Some(file_name)) = (parts.next(), parts.next(), parts.next())
    else {
        return Ok(None);
    };
    let (Ok(tier), Ok(scope)) = (tier.parse::<Tier>(), ScopeName::new(scope)) else {
        return Ok(None);
    };
    let Some(selector) = req.scopes.iter().position(|s| s.dir.tier == tier && s.dir.scope == scope)
    else {
        return Ok(None);
    };
    let position = doc.get_first(fields.position).and_then(|v| v.as_u64());
    // The index filtered suite observations by a key of (position, snapshot); compare the data
    // itself too, entry by entry, so only an exact match is ever injected (§3.2, §11.11).
    if tier == Tier::Suites
        && let Some(position) = position
    {
        let snapshot: Vec<SnapshotEntry> =
            serde_json::from_str(&text(fields.snapshot)).unwrap_or_default();
        let wanted = req.scopes[selector].suite.as_ref();
        if !wanted.is_some_and(|m| m.position == position && m.snapshot == snapshot) {
            return Ok(None);
        }
    }
    let hit = Hit {
        id: text(fields.id),
        tier,
        scope,
        title: text(fields.title),
        content: text(fields.content),
        trust: doc.get_first(fields.trust).and_then(|v| v.as_f64()).unwrap_or(0.0),
        score: 0.0,
        relevance: 1.0,
        path: path.clone().into(),
    };
    Ok(Some(Candidate { hit, selector, file_name: file_name.to_owned() }))
}

/// Phrase mode (agent-qa exactly).
pub(crate) fn phrase(
    searcher: &Searcher,
    folders: &FolderCache,
    fields: &Fields,
    req: &SearchRequest,
    phrase: &[String],
) -> Result<Vec<Hit>, IndexError> {
    let query = phrase_candidates(fields, &req.scopes, phrase);
    let mut found: Vec<(Candidate, u64, u64)> = Vec::new();
    let mut addrs: Vec<DocAddress> =
        searcher.search(&query, &DocSetCollector)?.into_iter().collect();
    if addrs.is_empty() {
        // Most steps hold no exact phrase; terms mode asks on every step (`terms.rs`), so the
        // scoped statistics are only gathered when there is something to score.
        return Ok(Vec::new());
    }
    addrs.sort();
    for addr in addrs {
        let Some(c) = load(searcher, fields, req, addr)? else { continue };
        let title = token_texts(&c.hit.title);
        let content = token_texts(&c.hit.content);
        let freq = phrase_occurrences(&title, phrase) + phrase_occurrences(&content, phrase);
        if freq > 0 {
            let len = (title.len() + content.len()) as u64;
            found.push((c, freq as u64, len));
        }
    }
    let (rows, total_tokens) = scoped_rows(searcher, folders, fields, req)?;
    let stats = Bm25Stats { rows, total_tokens, hits: found.len() as u64 };
    let mut hits: Vec<Candidate> = found
        .into_iter()
        .filter(|(c, _, _)| c.hit.trust >= req.min_trust)
        .map(|(mut c, freq, len)| {
            // Reported as "higher is better": the negation of agent-qa's sort key rank × trust.
            c.hit.score = -(stats.rank(freq, len) * c.hit.trust);
            c
        })
        .collect();
    sort_hits(&mut hits);
    Ok(hits.into_iter().take(req.max_results).map(|c| c.hit).collect())
}

/// FTS5's `N` and `Σ D` over the rows agent-qa's per-test table would hold.
fn scoped_rows(
    searcher: &Searcher,
    folders: &FolderCache,
    fields: &Fields,
    req: &SearchRequest,
) -> Result<(u64, u64), IndexError> {
    let (mut rows, mut tokens) = (0u64, 0u64);
    for segment in searcher.segment_readers() {
        for_each_scoped_doc(searcher, folders, fields, &req.scopes, segment, |d| {
            rows += 1;
            tokens += d.len;
        })?;
    }
    Ok((rows, tokens))
}

/// Best score first; ties in discovery order (products, suite, tests; file names in UTF-16 order).
pub(crate) fn sort_hits(hits: &mut [Candidate]) {
    hits.sort_by(|a, b| b.hit.score.total_cmp(&a.hit.score).then_with(|| a.discovery_cmp(b)));
}
