//! Terms mode: which observations a plain step sentence is *about* (§3.3 `terms`;
//! ARCHITECTURE.md "Ranking").
//!
//! Invariant: what phrase mode would inject for the step is always injected, first; after it, a
//! hit is injected only when the step names what the observation is about — several
//! informative words of the step occur in it, or one word that singles it out — and it is
//! nearly as strong as the best such hit. Raw BM25 cannot say this: its scale depends on the
//! corpus and the step length, and a lone common word ("cart", "ticket") scores like a match.
//! Every rule below was measured on `eval/dev` (odd/even query split, BENCHMARKS.md
//! "Retrieval quality"); the constants name the measured values.
//!
//! 1. **The pool.** Statistics come from the observations this step could be given: its scope
//!    folders with `trust >= min_trust`. Words common in *this* product's memory ("ticket" in a
//!    help desk) then weigh little, whatever the rest of the root holds.
//! 2. **Step terms.** The analyzed step (folded, stop words and step verbs dropped, stemmed),
//!    plus two repairs of the stemmer's blind spots: adjacent words whose join is a pool term
//!    ("log in" → `login`, "pop up" → `popup`), and a stem of at least [`PREFIX_MIN_CHARS`]
//!    letters also matches pool terms it begins ("assign" → `assigne`, from "Assignee").
//!    Then the lexicon (`lexicon.rs`): forms the stemmer leaves apart ("pay" / `payment`,
//!    "sent" / `send`) and UI synonyms ("sign in" / `login`, "basket" / `cart`) are more forms
//!    of the same step term, so they share its one weight and its one bit.
//! 3. **Out-of-vocabulary words are ignored.** A step term no pool observation contains cannot
//!    match anything this step may see; it counts neither for nor against a hit. Real steps
//!    always carry such words (test data, other features), and counting them made a step with
//!    one good match inject nothing. Weight of a known term: BM25's IDF over the pool.
//! 4. **Acceptance** (`coverage` = the hit's share of the known weight):
//!    * the step must name the observation's subject — a matched term in its *title* — unless
//!      the hit covers at least [`NO_TITLE_COVERAGE`] of the known weight;
//!    * two or more matched terms must together weigh at least [`MIN_INFORMATIVE_TERMS`] times
//!      a term found in one pool observation only (two product-wide words are not enough);
//!    * a single matched term must be in the title of this observation and of no other in the
//!      pool, carry at least [`SINGLE_TERM_COVERAGE`] of the known weight, and the pool must
//!      know at least [`SINGLE_TERM_KNOWN_SHARE`] of the step's terms: when most of a step is
//!      about things this memory never mentions, one shared word ("page") is a coincidence;
//!    * `coverage >= min_relevance` (the request's floor, a safety net below the rules above).
//! 5. **Ranking and cut.** Relevance = Σ IDF, a title match counting [`TITLE_BOOST`] times;
//!    hits are ordered by relevance × trust like agent-qa's bm25 × trust. A further hit is kept
//!    only if relevance × √trust reaches `keep_ratio` of the best: a weak match does not ride
//!    along with a strong one, while a strong match with low trust (that `min_trust` admitted)
//!    is not cut by trust alone — ordering already puts it lower.
//! 6. **Exact phrase first** ([`phrase_hits_first`]). The hits of phrase mode (agent-qa's
//!    query, unchanged: the whole sanitized step as one phrase in the title or the content)
//!    come first, in phrase mode's order, then the hits of rules 1–5 that are not among them,
//!    within `max_results`. An exact phrase is the strongest evidence there is, and the rules
//!    above cannot see it: the analyzer drops the stop words and step verbs a short step is
//!    made of ("Sign in", "Click Sign in"), punctuation splits a phrase into fragments that
//!    weigh little ("C#", "10%"), and a window of an observation's text often covers too
//!    little of the known weight or misses the title. Issue 14 measured it on 312 agent-qa-style steps:
//!    terms mode found none of the 24 steps whose phrase holds punctuation and fewer than half
//!    of those whose phrase is a window of the observation's text. So a user switching from
//!    agent-qa never loses a memory phrase mode gave them. A phrase hit's relevance is 1 (the
//!    whole step is in it) and its score is its phrase-mode score plus the best rule hit's, so
//!    scores still fall down the list.
//!
//! Cost: the pool is read once into a bit set per segment; each step term's postings *in the
//! step's folders* (scoped terms, `schema.rs`) are walked against it, which yields the document
//! frequencies and, per document, a bit mask of the terms in its title and in its content. So
//! a query costs what the step's folders hold, not what the root holds. Judging is arithmetic
//! on those masks; stored documents are read only for the few hits returned.

use std::collections::hash_map::Entry;

use rustc_hash::FxHashMap;

use tantivy::schema::{Field, IndexRecordOption};
use tantivy::{DocAddress, DocId, DocSet, Searcher, TERMINATED};

use super::collect::{Candidate, load, sort_hits};
use super::folders::{FolderCache, for_each_scoped_doc};
use super::relevance::{self, MAX_FORMS, Masks, TermSource, expands_by_prefix};
use super::schema::Fields;
use super::{Hit, IndexError, SearchRequest};

/// The pool of one segment: membership and the masks of the documents that match a term.
struct SegmentPool {
    in_pool: Vec<u64>,
    /// Masks of the pool documents that match a step term, in first-match order.
    masks: FxHashMap<DocId, Masks>,
    touched: Vec<DocId>,
}

impl SegmentPool {
    fn contains(&self, doc: DocId) -> bool {
        let d = doc as usize;
        self.in_pool.get(d / 64).is_some_and(|w| w & (1 << (d % 64)) != 0)
    }
}

/// The observations this step could be given: scope folders, `trust >= min_trust`, read once
/// into one bit set per segment (every statistic below checks postings against it).
fn pool(
    searcher: &Searcher,
    folders: &FolderCache,
    fields: &Fields,
    req: &SearchRequest,
) -> Result<(Vec<SegmentPool>, u64), IndexError> {
    let mut size = 0u64;
    let mut pools = Vec::with_capacity(searcher.segment_readers().len());
    for segment in searcher.segment_readers() {
        let mut in_pool = vec![0u64; (segment.max_doc() as usize).div_ceil(64)];
        for_each_scoped_doc(searcher, folders, fields, &req.scopes, segment, |d| {
            if d.trust >= req.min_trust {
                in_pool[d.doc as usize / 64] |= 1 << (d.doc % 64);
                size += 1;
            }
        })?;
        pools.push(SegmentPool { in_pool, masks: FxHashMap::default(), touched: Vec::new() });
    }
    Ok((pools, size))
}

/// Terms of `field` in the request's folders that begin with `stem` (the stem itself first).
fn forms_of(
    searcher: &Searcher,
    folders: &FolderCache,
    field: Field,
    dirs: &[String],
    stem: &str,
) -> Result<Vec<String>, IndexError> {
    let mut forms = vec![stem.to_owned()];
    if !expands_by_prefix(stem) {
        return Ok(forms);
    }
    for segment in searcher.segment_readers() {
        for dir in dirs {
            for form in folders.terms(segment, field, dir)?.with_prefix(stem) {
                if !forms.iter().any(|f| f == form) {
                    forms.push(form.to_owned());
                    if forms.len() >= MAX_FORMS {
                        return Ok(forms);
                    }
                }
            }
        }
    }
    Ok(forms)
}

/// Sets `bit` in the title (`title`) or the any mask of every pool document holding one of
/// `forms` in `field`; returns how many pool documents got it.
#[allow(clippy::too_many_arguments)]
fn mark(
    searcher: &Searcher,
    folders: &FolderCache,
    pools: &mut [SegmentPool],
    field: Field,
    dirs: &[String],
    forms: &[String],
    bit: u32,
    title: bool,
) -> Result<u64, IndexError> {
    let mut marked = 0u64;
    for (segment, pool) in searcher.segment_readers().iter().zip(pools.iter_mut()) {
        let inverted = segment.inverted_index(field)?;
        for dir in dirs {
            let folder = folders.terms(segment, field, dir)?;
            for form in forms {
                let Some(info) = folder.get(form) else { continue };
                let mut postings =
                    inverted.read_postings_from_terminfo(info, IndexRecordOption::Basic)?;
                let mut doc = postings.doc();
                while doc != TERMINATED {
                    if pool.contains(doc) {
                        let m = match pool.masks.entry(doc) {
                            Entry::Occupied(e) => e.into_mut(),
                            Entry::Vacant(e) => {
                                pool.touched.push(doc);
                                e.insert(Masks::default())
                            }
                        };
                        let slot = if title { &mut m.title } else { &mut m.any };
                        if *slot & bit == 0 {
                            *slot |= bit;
                            marked += 1;
                        }
                    }
                    doc = postings.advance();
                }
            }
        }
    }
    Ok(marked)
}

/// The index's answers to [`TermSource`]: the step's folders' term dictionaries and postings.
struct IndexTerms<'a> {
    searcher: &'a Searcher,
    folders: &'a FolderCache,
    fields: &'a Fields,
    dirs: Vec<String>,
    pools: &'a mut [SegmentPool],
}

impl TermSource for IndexTerms<'_> {
    type Error = IndexError;

    fn forms(&mut self, stem: &str) -> Result<Vec<String>, IndexError> {
        // Every title term is also an any term, so the any field alone holds every form.
        forms_of(self.searcher, self.folders, self.fields.any_terms, &self.dirs, stem)
    }

    fn mark(&mut self, forms: &[String], bit: u32) -> Result<(u64, u64), IndexError> {
        let (s, f, d) = (self.searcher, self.folders, &self.dirs);
        let df = mark(s, f, self.pools, self.fields.any_terms, d, forms, bit, false)?;
        if df == 0 {
            return Ok((0, 0));
        }
        let title_df = mark(s, f, self.pools, self.fields.title_terms, d, forms, bit, true)?;
        Ok((df, title_df))
    }
}

/// Terms mode: phrase mode's hits, then the hits the step is about, best first (module doc).
pub(crate) fn terms(
    searcher: &Searcher,
    folders: &FolderCache,
    fields: &Fields,
    req: &SearchRequest,
    sanitized: &str,
) -> Result<Vec<Hit>, IndexError> {
    let phrase = curator_core::fts::token_texts(sanitized);
    let exact = if phrase.is_empty() {
        Vec::new()
    } else {
        super::collect::phrase(searcher, folders, fields, req, &phrase)?
    };
    let ranked = ranked(searcher, folders, fields, req, sanitized)?;
    Ok(phrase_hits_first(exact, ranked, req.max_results))
}

/// Rule 6 of the module doc, for every store's terms mode: `exact` (phrase mode's hits for the
/// step, in its order) first, then the hits of `ranked` (best first) not among them, at most
/// `max_results` in all. Phrase hits get relevance 1 and their phrase-mode score (≥ 0) plus
/// the best ranked hit's, so the list stays ordered by score.
pub fn phrase_hits_first(exact: Vec<Hit>, ranked: Vec<Hit>, max_results: usize) -> Vec<Hit> {
    let above = ranked.first().map_or(0.0, |h| h.score.max(0.0));
    let mut hits: Vec<Hit> = exact
        .into_iter()
        .take(max_results)
        .map(|mut h| {
            h.score = h.score.max(0.0) + above;
            h.relevance = 1.0;
            h
        })
        .collect();
    for hit in ranked {
        if hits.len() >= max_results {
            break;
        }
        if !hits.iter().any(|h| h.path == hit.path) {
            hits.push(hit);
        }
    }
    hits
}

/// Rules 1–5 of the module doc: the hits the step is about, best first.
fn ranked(
    searcher: &Searcher,
    folders: &FolderCache,
    fields: &Fields,
    req: &SearchRequest,
    sanitized: &str,
) -> Result<Vec<Hit>, IndexError> {
    let (mut pools, pool_size) = pool(searcher, folders, fields, req)?;
    if pool_size == 0 {
        return Ok(Vec::new());
    }
    let dirs: Vec<String> = req.scopes.iter().map(|s| s.dir.key()).collect();
    let mut source = IndexTerms { searcher, folders, fields, dirs, pools: &mut pools };
    let step = relevance::step_terms(&mut source, pool_size, &relevance::step_words(sanitized))?;
    if step.is_empty() {
        return Ok(Vec::new());
    }
    let mut candidates = Vec::new();
    for (ord, (segment, pool)) in searcher.segment_readers().iter().zip(&pools).enumerate() {
        let trust = segment.fast_fields().f64("trust")?;
        for &doc in &pool.touched {
            let addr = DocAddress::new(ord as u32, doc);
            candidates.push((addr, pool.masks[&doc], trust.first(doc).unwrap_or(0.0)));
        }
    }
    let accepted = relevance::accept(&step, req.min_relevance, req.keep_ratio, candidates);
    // Read the best until `max_results` are in hand and the next one scores strictly lower, so
    // ties are ordered by discovery order like phrase mode.
    let mut hits: Vec<Candidate> = Vec::new();
    for a in &accepted {
        if hits.len() >= req.max_results && hits.last().is_some_and(|h| a.score() < h.hit.score) {
            break;
        }
        let Some(mut c) = load(searcher, fields, req, a.key)? else { continue };
        if c.hit.trust < req.min_trust {
            continue;
        }
        c.hit.score = a.score();
        c.hit.relevance = a.judgement.coverage;
        hits.push(c);
    }
    sort_hits(&mut hits);
    Ok(hits.into_iter().take(req.max_results).map(|c| c.hit).collect())
}
