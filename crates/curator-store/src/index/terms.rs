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

use std::cell::RefCell;
use std::collections::HashSet;
use std::collections::hash_map::Entry;

use rustc_hash::FxHashMap;

use tantivy::schema::{Field, IndexRecordOption};
use tantivy::tokenizer::TextAnalyzer;
use tantivy::{DocAddress, DocId, DocSet, Searcher, TERMINATED};

use super::collect::{Candidate, load, sort_hits};
use super::folders::{FolderCache, for_each_scoped_doc};
use super::schema::{Fields, terms_analyzer};
use super::{Hit, IndexError, SearchRequest};

/// How much more a title match counts than a content match.
const TITLE_BOOST: f64 = 2.0;
/// Share of the known weight a hit without any title match must cover.
const NO_TITLE_COVERAGE: f64 = 0.7;
/// Share of the known weight a hit matching one term only must carry.
const SINGLE_TERM_COVERAGE: f64 = 0.7;
/// Share of the step's distinct terms the pool must know for a single-term hit.
const SINGLE_TERM_KNOWN_SHARE: f64 = 0.25;
/// Matched weight of a multi-term hit, in units of the weight of a term unique in the pool.
const MIN_INFORMATIVE_TERMS: f64 = 0.8;
/// Shortest stem that also matches the pool terms it begins.
const PREFIX_MIN_CHARS: usize = 5;
/// Most pool terms one stem stands for (a guard against very generic prefixes).
const MAX_FORMS: usize = 16;
/// Most step terms considered (one bit each in a per-document mask); steps are a sentence.
const MAX_STEP_TERMS: usize = 32;

/// One known step term: its weight and its bit in the masks.
#[derive(Debug)]
struct StepTerm {
    weight: f64,
    /// Pool observations with one of `forms` in their title.
    title_df: u64,
    bit: u32,
}

/// What the step says, as far as the pool knows it.
#[derive(Debug)]
struct Step {
    /// The step's terms that occur in the pool.
    known: Vec<StepTerm>,
    /// Share of the step's distinct analyzed terms among `known`.
    known_share: f64,
}

/// Which step terms (bits) one pool document has in its title, and anywhere (title or content).
#[derive(Debug, Clone, Copy, Default)]
struct Masks {
    title: u32,
    any: u32,
}

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

/// BM25's IDF of a term found in `df` of `n` observations.
fn idf(n: u64, df: u64) -> f64 {
    let (n, df) = (n as f64, df as f64);
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
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
    if stem.chars().count() < PREFIX_MIN_CHARS {
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

/// Rules 2 and 3 of the module doc; marks every pool document with the step terms it holds.
fn step_terms(
    searcher: &Searcher,
    folders: &FolderCache,
    fields: &Fields,
    req: &SearchRequest,
    pools: &mut [SegmentPool],
    pool_size: u64,
    sanitized: &str,
) -> Result<Step, IndexError> {
    let mut stems = analyze_unique(sanitized);
    let step_len = stems.len();
    // "log in" → "login": joined neighbours, kept below only if the pool knows them.
    let raw = curator_core::fts::token_texts(sanitized);
    for pair in raw.windows(2) {
        if let [joined] = analyze_unique(&format!("{}{}", pair[0], pair[1])).as_slice()
            && !stems.contains(joined)
        {
            stems.push(joined.clone());
        }
    }
    let dirs: Vec<String> = req.scopes.iter().map(|s| s.dir.key()).collect();
    let mut known: Vec<StepTerm> = Vec::new();
    let mut seen_forms: HashSet<String> = HashSet::new();
    for stem in stems {
        if known.len() >= MAX_STEP_TERMS {
            break;
        }
        // Every title term is also an any term, so the any field alone holds every form.
        let forms = forms_of(searcher, folders, fields.any_terms, &dirs, &stem)?;
        // A form already covered by an earlier term (e.g. "login" from "log in" and a literal
        // "login") would count the same evidence twice.
        if forms.iter().any(|f| seen_forms.contains(f)) {
            continue;
        }
        let bit = 1u32 << known.len();
        let df = mark(searcher, folders, pools, fields.any_terms, &dirs, &forms, bit, false)?;
        if df == 0 {
            continue;
        }
        let title_df =
            mark(searcher, folders, pools, fields.title_terms, &dirs, &forms, bit, true)?;
        seen_forms.extend(forms.iter().cloned());
        known.push(StepTerm { weight: idf(pool_size, df), title_df, bit });
    }
    let known_share = if step_len == 0 { 0.0 } else { known.len() as f64 / step_len as f64 };
    Ok(Step { known, known_share })
}

/// How one candidate matches the step.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Judgement {
    /// Σ weight × title boost.
    relevance: f64,
    /// Share of the known weight matched.
    coverage: f64,
}

/// Rule 4 of the module doc: `None` when the candidate is not about the step.
fn judge(step: &Step, pool_size: u64, min_coverage: f64, masks: Masks) -> Option<Judgement> {
    let known: f64 = step.known.iter().map(|t| t.weight).sum();
    let matched: Vec<(&StepTerm, bool)> = step
        .known
        .iter()
        .filter(|t| masks.any & t.bit != 0)
        .map(|t| (t, masks.title & t.bit != 0))
        .collect();
    if matched.is_empty() || known <= 0.0 {
        return None;
    }
    let covered: f64 = matched.iter().map(|(t, _)| t.weight).sum();
    let coverage = covered / known;
    let any_title = matched.iter().any(|(_, in_title)| *in_title);
    let accepted = coverage >= min_coverage
        && (any_title || coverage >= NO_TITLE_COVERAGE)
        && match matched.as_slice() {
            [(t, in_title)] => {
                *in_title
                    && t.title_df == 1
                    && coverage >= SINGLE_TERM_COVERAGE
                    && step.known_share >= SINGLE_TERM_KNOWN_SHARE
            }
            _ => covered / idf(pool_size, 1) >= MIN_INFORMATIVE_TERMS,
        };
    let relevance = matched
        .iter()
        .map(|(t, in_title)| t.weight * if *in_title { TITLE_BOOST } else { 1.0 })
        .sum();
    accepted.then_some(Judgement { relevance, coverage })
}

/// An accepted pool document before it is read.
struct Accepted {
    addr: DocAddress,
    judgement: Judgement,
    trust: f64,
}

impl Accepted {
    fn score(&self) -> f64 {
        self.judgement.relevance * self.trust
    }

    /// What the relative cut compares: relevance × √trust (module doc, rule 5).
    fn strength(&self) -> f64 {
        self.judgement.relevance * self.trust.max(0.0).sqrt()
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
    let step = step_terms(searcher, folders, fields, req, &mut pools, pool_size, sanitized)?;
    if step.known.is_empty() {
        return Ok(Vec::new());
    }
    let mut accepted = Vec::new();
    for (ord, (segment, pool)) in searcher.segment_readers().iter().zip(&pools).enumerate() {
        let trust = segment.fast_fields().f64("trust")?;
        for &doc in &pool.touched {
            let Some(judgement) = judge(&step, pool_size, req.min_relevance, pool.masks[&doc])
            else {
                continue;
            };
            let trust = trust.first(doc).unwrap_or(0.0);
            accepted.push(Accepted { addr: DocAddress::new(ord as u32, doc), judgement, trust });
        }
    }
    let best = accepted.iter().map(Accepted::strength).fold(0.0, f64::max);
    accepted.retain(|a| a.strength() >= best * req.keep_ratio);
    accepted.sort_by(|a, b| b.score().total_cmp(&a.score()));
    // Read the best until `max_results` are in hand and the next one scores strictly lower, so
    // ties are ordered by discovery order like phrase mode.
    let mut hits: Vec<Candidate> = Vec::new();
    for a in &accepted {
        if hits.len() >= req.max_results && hits.last().is_some_and(|h| a.score() < h.hit.score) {
            break;
        }
        let Some(mut c) = load(searcher, fields, req, a.addr)? else { continue };
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

/// The distinct analyzed terms of `text`, in first-occurrence order.
fn analyze_unique(text: &str) -> Vec<String> {
    thread_local! {
        // Building the analyzer (its stop word sets) cost a third of a terms query when it was
        // built per call (retrieval bench profile); a step analyzes up to a dozen texts.
        static ANALYZER: RefCell<TextAnalyzer> = RefCell::new(terms_analyzer());
    }
    ANALYZER.with_borrow_mut(|analyzer| {
        let mut out: Vec<String> = Vec::new();
        let mut stream = analyzer.token_stream(text);
        while let Some(tok) = stream.next() {
            if !out.contains(&tok.text) {
                out.push(tok.text.clone());
            }
        }
        out
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A step term standing for `forms`, found in `df` of `n` pool observations (`title_df` in
    /// titles).
    fn term(forms: &[&str], n: u64, df: u64, title_df: u64) -> (Vec<String>, StepTerm) {
        let forms = forms.iter().map(|f| (*f).to_owned()).collect();
        (forms, StepTerm { weight: idf(n, df), title_df, bit: 0 })
    }

    fn set(words: &[&str]) -> HashSet<String> {
        words.iter().map(|w| (*w).to_owned()).collect()
    }

    /// A step of `known` terms (bits in order) out of `step_len` distinct terms, and their forms.
    struct Case {
        step: Step,
        forms: Vec<Vec<String>>,
        n: u64,
    }

    fn case(known: Vec<(Vec<String>, StepTerm)>, step_len: usize, n: u64) -> Case {
        let mut forms = Vec::new();
        let mut terms = Vec::new();
        for (i, (f, mut t)) in known.into_iter().enumerate() {
            t.bit = 1 << i;
            forms.push(f);
            terms.push(t);
        }
        let known_share = terms.len() as f64 / step_len as f64;
        Case { step: Step { known: terms, known_share }, forms, n }
    }

    impl Case {
        /// Judges a document whose title and content hold these analyzed terms.
        fn judge(&self, min: f64, title: &[&str], content: &[&str]) -> Option<Judgement> {
            let (title, content) = (set(title), set(content));
            let mut m = Masks::default();
            for (t, forms) in self.step.known.iter().zip(&self.forms) {
                if forms.iter().any(|f| title.contains(f)) {
                    m.title |= t.bit;
                }
                if forms.iter().any(|f| title.contains(f) || content.contains(f)) {
                    m.any |= t.bit;
                }
            }
            judge(&self.step, self.n, min, m)
        }
    }

    #[test]
    fn two_informative_terms_in_the_title_are_accepted_and_boosted() {
        let c = case(vec![term(&["login"], 20, 1, 1), term(&["button"], 20, 4, 3)], 2, 20);
        let j = c.judge(0.2, &["login", "button"], &[]).unwrap();
        assert!((j.coverage - 1.0).abs() < 1e-12);
        let plain: f64 = c.step.known.iter().map(|t| t.weight).sum();
        assert!((j.relevance - plain * TITLE_BOOST).abs() < 1e-12);
        let content_only = c.judge(0.2, &["login"], &["button"]).unwrap();
        assert!(content_only.relevance < j.relevance);
    }

    #[test]
    fn two_product_wide_words_are_not_enough() {
        // "ticket" and "list" are in most of a help desk's memory: together they weigh less than
        // one word found in a single observation.
        let c = case(vec![term(&["ticket"], 10, 8, 5), term(&["list"], 10, 5, 2)], 4, 10);
        assert!(c.judge(0.0, &["list"], &["ticket"]).is_none());
    }

    #[test]
    fn a_hit_without_a_title_match_must_cover_most_of_the_step() {
        let with_export = case(
            vec![
                term(&["filter"], 10, 2, 0),
                term(&["transact"], 10, 2, 1),
                term(&["export"], 10, 1, 1),
            ],
            3,
            10,
        );
        assert!(with_export.judge(0.0, &[], &["filter", "transact"]).is_none());
        // Without "export" in the step, the same two words are all it says: accepted.
        let c = case(vec![term(&["filter"], 10, 2, 0), term(&["transact"], 10, 2, 1)], 2, 10);
        assert!(c.judge(0.0, &[], &["filter", "transact"]).is_some());
    }

    #[test]
    fn a_single_word_must_single_out_the_observation_by_its_title() {
        let unique = case(vec![term(&["rememb"], 15, 1, 1)], 3, 15);
        assert!(unique.judge(0.0, &["rememb"], &[]).is_some());
        assert!(unique.judge(0.0, &[], &["rememb"]).is_none(), "content only");
        let shared = case(vec![term(&["order"], 15, 4, 2)], 2, 15);
        assert!(shared.judge(0.0, &["order"], &[]).is_none(), "in two titles");
    }

    #[test]
    fn one_known_word_of_a_long_unrelated_step_is_a_coincidence() {
        // "Drag the avatar onto the upload zone, crop it and confirm the page": only "page" is
        // known, one of eight terms.
        let long = case(vec![term(&["page"], 4, 2, 1)], 8, 4);
        assert!(long.judge(0.0, &["page"], &["page"]).is_none());
        let short = case(vec![term(&["page"], 4, 2, 1)], 2, 4);
        assert!(short.judge(0.0, &["page"], &["page"]).is_some());
    }

    #[test]
    fn the_min_relevance_floor_still_applies() {
        let c = case(
            vec![
                term(&["login"], 20, 1, 1),
                term(&["button"], 20, 1, 1),
                term(&["modal"], 20, 1, 1),
                term(&["fade"], 20, 1, 1),
            ],
            4,
            20,
        );
        assert!(c.judge(0.5, &["login", "button"], &[]).is_some());
        assert!(c.judge(0.6, &["login", "button"], &[]).is_none());
    }

    #[test]
    fn prefix_forms_count_as_the_stem() {
        let c =
            case(vec![term(&["assign", "assigne"], 10, 1, 1), term(&["ticket"], 10, 8, 5)], 3, 10);
        let j = c.judge(0.0, &["assigne", "dropdown"], &["ticket"]).unwrap();
        assert!(j.coverage > 0.8);
    }

    #[test]
    fn idf_falls_with_document_frequency() {
        assert!(idf(10, 1) > idf(10, 5) && idf(10, 5) > idf(10, 10));
        assert!(idf(1, 1) > 0.0, "a one-observation pool still weighs its words");
    }
}
