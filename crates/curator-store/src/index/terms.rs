//! Terms mode: which observations a plain step sentence is *about* (§3.3 `terms`;
//! ARCHITECTURE.md "Ranking").
//!
//! Invariant: a hit is injected only when the step names what the observation is about —
//! several informative words of the step occur in it, or one word that singles it out — and it
//! is nearly as strong as the best hit. Raw BM25 cannot say this: its scale depends on the
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

use std::collections::HashSet;
use std::ops::Bound;

use tantivy::collector::{Count, TopDocs};
use tantivy::query::{
    BooleanQuery, ConstScoreQuery, DisjunctionMaxQuery, Occur, Query, RangeQuery, TermSetQuery,
};
use tantivy::schema::Field;
use tantivy::{Searcher, Term};

use super::collect::{Candidate, load, sort_hits};
use super::query::scope_filter;
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
/// Candidates re-read and judged per query, best relevance first.
const CANDIDATES: usize = 64;

/// One known step term: the pool terms it stands for and its weight.
#[derive(Debug)]
struct StepTerm {
    forms: Vec<String>,
    weight: f64,
    /// Pool observations with one of `forms` in their title.
    title_df: u64,
}

/// BM25's IDF of a term found in `df` of `n` observations.
fn idf(n: u64, df: u64) -> f64 {
    let (n, df) = (n as f64, df as f64);
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

/// The observations this step could be given: scope folders, `trust >= min_trust`.
fn pool(fields: &Fields, req: &SearchRequest) -> Box<dyn Query> {
    let trust = RangeQuery::new(
        Bound::Included(Term::from_field_f64(fields.trust, req.min_trust)),
        Bound::Unbounded,
    );
    Box::new(BooleanQuery::new(vec![
        (Occur::Must, scope_filter(fields, &req.scopes)),
        (Occur::Must, Box::new(ConstScoreQuery::new(Box::new(trust), 0.0))),
    ]))
}

fn any_form(forms: &[String], fields: &[Field]) -> TermSetQuery {
    TermSetQuery::new(
        fields.iter().flat_map(|f| forms.iter().map(move |t| Term::from_field_text(*f, t))),
    )
}

fn count_in_pool(
    searcher: &Searcher,
    pool: &dyn Query,
    q: TermSetQuery,
) -> Result<u64, IndexError> {
    let both = BooleanQuery::new(vec![(Occur::Must, pool.box_clone()), (Occur::Must, Box::new(q))]);
    Ok(searcher.search(&both, &Count)? as u64)
}

/// Index terms of `fields` that begin with `stem` (the stem itself included when present).
fn forms_of(searcher: &Searcher, fields: &[Field], stem: &str) -> Result<Vec<String>, IndexError> {
    let mut forms = vec![stem.to_owned()];
    if stem.chars().count() < PREFIX_MIN_CHARS {
        return Ok(forms);
    }
    'fields: for field in fields {
        for segment in searcher.segment_readers() {
            let inverted = segment.inverted_index(*field)?;
            let mut stream = inverted.terms().range().ge(stem.as_bytes()).into_stream()?;
            while stream.advance() {
                let Ok(key) = std::str::from_utf8(stream.key()) else { continue };
                if !key.starts_with(stem) {
                    break;
                }
                if !forms.iter().any(|f| f == key) {
                    forms.push(key.to_owned());
                    if forms.len() >= MAX_FORMS {
                        break 'fields;
                    }
                }
            }
        }
    }
    Ok(forms)
}

/// What the step says, as far as the pool knows it.
#[derive(Debug)]
struct Step {
    /// The step's terms that occur in the pool.
    known: Vec<StepTerm>,
    /// Share of the step's distinct analyzed terms among `known`.
    known_share: f64,
}

/// Rules 2 and 3 of the module doc.
fn step_terms(
    searcher: &Searcher,
    fields: &Fields,
    pool: &dyn Query,
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
    let both = [fields.title_terms, fields.content_terms];
    let mut out: Vec<StepTerm> = Vec::new();
    for stem in stems {
        let forms = forms_of(searcher, &both, &stem)?;
        // A form already covered by an earlier term (e.g. "login" from "log in" and a literal
        // "login") would count the same evidence twice.
        if out.iter().any(|t| t.forms.iter().any(|f| forms.contains(f))) {
            continue;
        }
        let df = count_in_pool(searcher, pool, any_form(&forms, &both))?;
        if df == 0 {
            continue;
        }
        let title_df = count_in_pool(searcher, pool, any_form(&forms, &[fields.title_terms]))?;
        out.push(StepTerm { forms, weight: idf(pool_size, df), title_df });
    }
    let known_share = if step_len == 0 { 0.0 } else { out.len() as f64 / step_len as f64 };
    Ok(Step { known: out, known_share })
}

/// Σ over step terms of its weight, boosted when in the title (max of the two, not the sum).
fn relevance_query(fields: &Fields, terms: &[StepTerm]) -> BooleanQuery {
    let clauses = terms
        .iter()
        .map(|t| {
            let title = ConstScoreQuery::new(
                Box::new(any_form(&t.forms, &[fields.title_terms])),
                (t.weight * TITLE_BOOST) as f32,
            );
            let content = ConstScoreQuery::new(
                Box::new(any_form(&t.forms, &[fields.content_terms])),
                t.weight as f32,
            );
            let best: Box<dyn Query> =
                Box::new(DisjunctionMaxQuery::new(vec![Box::new(title), Box::new(content)]));
            (Occur::Should, best)
        })
        .collect();
    BooleanQuery::new(clauses)
}

/// How one candidate matches the step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Judgement {
    /// Σ weight × title boost.
    pub(crate) relevance: f64,
    /// Share of the known weight matched.
    pub(crate) coverage: f64,
}

/// Rule 4 of the module doc: `None` when the candidate is not about the step.
fn judge(
    step: &Step,
    pool_size: u64,
    min_coverage: f64,
    title: &HashSet<String>,
    content: &HashSet<String>,
) -> Option<Judgement> {
    let known: f64 = step.known.iter().map(|t| t.weight).sum();
    let mut matched = Vec::new();
    for t in &step.known {
        let in_title = t.forms.iter().any(|f| title.contains(f));
        if in_title || t.forms.iter().any(|f| content.contains(f)) {
            matched.push((t, in_title));
        }
    }
    let covered: f64 = matched.iter().map(|(t, _)| t.weight).sum();
    if matched.is_empty() || known <= 0.0 {
        return None;
    }
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

/// Terms mode: the hits the step is about, best first (module doc).
pub(crate) fn terms(
    searcher: &Searcher,
    fields: &Fields,
    req: &SearchRequest,
    sanitized: &str,
) -> Result<Vec<Hit>, IndexError> {
    let pool = pool(fields, req);
    let pool_size = searcher.search(&*pool, &Count)? as u64;
    if pool_size == 0 {
        return Ok(Vec::new());
    }
    let step = step_terms(searcher, fields, &*pool, pool_size, sanitized)?;
    if step.known.is_empty() {
        return Ok(Vec::new());
    }
    let query = BooleanQuery::new(vec![
        (Occur::Must, pool),
        (Occur::Must, Box::new(relevance_query(fields, &step.known))),
    ]);
    let top = searcher.search(&query, &TopDocs::with_limit(CANDIDATES).order_by_score())?;
    let mut judged: Vec<(Candidate, f64)> = Vec::new();
    for (_, addr) in top {
        let Some(mut c) = load(searcher, fields, req, addr)? else { continue };
        if c.hit.trust < req.min_trust {
            continue;
        }
        let title = analyze_set(&c.hit.title);
        let content = analyze_set(&c.hit.content);
        let Some(j) = judge(&step, pool_size, req.min_relevance, &title, &content) else {
            continue;
        };
        c.hit.score = j.relevance * c.hit.trust;
        c.hit.relevance = j.coverage;
        let strength = j.relevance * c.hit.trust.max(0.0).sqrt();
        judged.push((c, strength));
    }
    let best = judged.iter().map(|(_, strength)| *strength).fold(0.0, f64::max);
    let mut hits: Vec<Candidate> = judged
        .into_iter()
        .filter(|(_, strength)| *strength >= best * req.keep_ratio)
        .map(|(c, _)| c)
        .collect();
    sort_hits(&mut hits);
    Ok(hits.into_iter().take(req.max_results).map(|c| c.hit).collect())
}

/// The distinct analyzed terms of `text`, in first-occurrence order.
pub(crate) fn analyze_unique(text: &str) -> Vec<String> {
    let mut analyzer = terms_analyzer();
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    let mut stream = analyzer.token_stream(text);
    while let Some(tok) = stream.next() {
        if seen.insert(tok.text.clone()) {
            out.push(tok.text.clone());
        }
    }
    out
}

fn analyze_set(text: &str) -> HashSet<String> {
    analyze_unique(text).into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A step term of one form, found in `df` of `n` pool observations (`title_df` in titles).
    fn term(form: &str, n: u64, df: u64, title_df: u64) -> StepTerm {
        StepTerm { forms: vec![form.into()], weight: idf(n, df), title_df }
    }

    fn set(words: &[&str]) -> HashSet<String> {
        words.iter().map(|w| (*w).to_owned()).collect()
    }

    fn step(known: Vec<StepTerm>, step_len: usize) -> Step {
        let known_share = known.len() as f64 / step_len as f64;
        Step { known, known_share }
    }

    #[test]
    fn two_informative_terms_in_the_title_are_accepted_and_boosted() {
        let s = step(vec![term("login", 20, 1, 1), term("button", 20, 4, 3)], 2);
        let j = judge(&s, 20, 0.2, &set(&["login", "button"]), &set(&[])).unwrap();
        assert!((j.coverage - 1.0).abs() < 1e-12);
        let plain: f64 = s.known.iter().map(|t| t.weight).sum();
        assert!((j.relevance - plain * TITLE_BOOST).abs() < 1e-12);
    }

    #[test]
    fn two_product_wide_words_are_not_enough() {
        // "ticket" and "list" are in most of a help desk's memory: together they weigh less than
        // one word found in a single observation.
        let s = step(vec![term("ticket", 10, 8, 5), term("list", 10, 5, 2)], 4);
        assert!(judge(&s, 10, 0.0, &set(&["list"]), &set(&["ticket"])).is_none());
    }

    #[test]
    fn a_hit_without_a_title_match_must_cover_most_of_the_step() {
        let s = step(
            vec![term("filter", 10, 2, 0), term("transact", 10, 2, 1), term("export", 10, 1, 1)],
            3,
        );
        let content = set(&["filter", "transact"]);
        let share =
            (s.known[0].weight + s.known[1].weight) / s.known.iter().map(|t| t.weight).sum::<f64>();
        assert!(share < NO_TITLE_COVERAGE);
        assert!(judge(&s, 10, 0.0, &set(&[]), &content).is_none());
        // Without "export" in the step, the same two words are all it says: accepted.
        let s = step(vec![term("filter", 10, 2, 0), term("transact", 10, 2, 1)], 2);
        assert!(judge(&s, 10, 0.0, &set(&[]), &content).is_some());
    }

    #[test]
    fn a_single_word_must_single_out_the_observation_by_its_title() {
        let unique = step(vec![term("rememb", 15, 1, 1)], 3);
        assert!(judge(&unique, 15, 0.0, &set(&["rememb"]), &set(&[])).is_some());
        assert!(judge(&unique, 15, 0.0, &set(&[]), &set(&["rememb"])).is_none(), "content only");
        let shared = step(vec![term("order", 15, 4, 2)], 2);
        assert!(judge(&shared, 15, 0.0, &set(&["order"]), &set(&[])).is_none(), "two titles");
    }

    #[test]
    fn one_known_word_of_a_long_unrelated_step_is_a_coincidence() {
        // "Drag the avatar onto the upload zone, crop it and confirm the page": only "page" is
        // known, one of eight terms.
        let s = step(vec![term("page", 4, 2, 1)], 8);
        assert!(judge(&s, 4, 0.0, &set(&["page"]), &set(&["page"])).is_none());
        let s = step(vec![term("page", 4, 2, 1)], 2);
        assert!(judge(&s, 4, 0.0, &set(&["page"]), &set(&["page"])).is_some());
    }

    #[test]
    fn the_min_relevance_floor_still_applies() {
        let s = step(
            vec![
                term("login", 20, 1, 1),
                term("button", 20, 1, 1),
                term("modal", 20, 1, 1),
                term("fade", 20, 1, 1),
            ],
            4,
        );
        let title = set(&["login", "button"]);
        assert!(judge(&s, 20, 0.5, &title, &set(&[])).is_some());
        assert!(judge(&s, 20, 0.6, &title, &set(&[])).is_none());
    }

    #[test]
    fn prefix_forms_count_as_the_stem() {
        let s = step(
            vec![
                StepTerm {
                    forms: vec!["assign".into(), "assigne".into()],
                    weight: idf(10, 1),
                    title_df: 1,
                },
                term("ticket", 10, 8, 5),
            ],
            3,
        );
        let j = judge(&s, 10, 0.0, &set(&["assigne", "dropdown"]), &set(&["ticket"])).unwrap();
        assert!(j.coverage > 0.8);
    }
}
