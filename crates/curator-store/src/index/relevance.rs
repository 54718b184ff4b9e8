//! What terms mode decides once a store has found the step's words (rules 2–5 of the
//! `terms.rs` module doc), for every store.
//!
//! The file store's index and PostgreSQL find words differently (tantivy postings of the
//! step's folders; arrays of analyzed terms and a GIN index), but both answer the same two
//! questions through [`TermSource`] — which indexed terms a step word stands for, and which pool
//! observations hold them — and everything after that is this module's arithmetic. So the same
//! memory injects the same hits on both stores: a fleet on PostgreSQL gets the retrieval the
//! evaluation sets measured, not a second ranking with its own precision.

use std::cell::RefCell;
use std::collections::HashSet;

use tantivy::tokenizer::TextAnalyzer;

use super::lexicon;
use super::schema::terms_analyzer;

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
/// Most indexed terms one stem stands for (a guard against very generic prefixes).
pub const MAX_FORMS: usize = 16;
/// Most forms the lexicon's alternatives add to one step term's own.
const MAX_ALTERNATIVE_FORMS: usize = 8;
/// Most step terms considered (one bit each in a per-document mask); steps are a sentence.
const MAX_STEP_TERMS: usize = 32;

/// Where a store finds the step's words (rules 1–3): called once per candidate step term, in
/// the step's order.
pub trait TermSource {
    type Error;

    /// The indexed terms `stem` stands for in the request's folders (every observation of
    /// them, whatever its trust): `stem` itself first, then, when [`expands_by_prefix`] says
    /// so, the folders' terms that begin with it, folder by folder in the request's order and
    /// sorted within a folder, at most [`MAX_FORMS`] in all.
    fn forms(&mut self, stem: &str) -> Result<Vec<String>, Self::Error>;

    /// Sets `bit` in the masks of every pool observation that holds one of `forms` (title:
    /// in its title; any: in its title or content). Returns how many pool observations hold
    /// one anywhere (`df`) and in their title (`title_df`).
    fn mark(&mut self, forms: &[String], bit: u32) -> Result<(u64, u64), Self::Error>;
}

/// Whether a stem also stands for the indexed terms it begins ("assign" → `assigne`).
pub fn expands_by_prefix(stem: &str) -> bool {
    stem.chars().count() >= PREFIX_MIN_CHARS
}

/// BM25's IDF of a term found in `df` of `n` observations.
fn idf(n: u64, df: u64) -> f64 {
    let (n, df) = (n as f64, df as f64);
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

/// One known step term: its weight and its bit in the masks.
#[derive(Debug)]
pub struct StepTerm {
    weight: f64,
    /// Pool observations with one of its forms in their title.
    title_df: u64,
    bit: u32,
}

/// What the step says, as far as the pool knows it.
#[derive(Debug)]
pub struct Step {
    /// The step's terms that occur in the pool.
    known: Vec<StepTerm>,
    /// Share of the step's distinct analyzed terms among `known`.
    known_share: f64,
    /// Observations in the pool.
    pool_size: u64,
}

impl Step {
    /// Whether no step term occurs in the pool (nothing can be accepted).
    pub fn is_empty(&self) -> bool {
        self.known.is_empty()
    }
}

/// Which step terms (bits) one pool observation has in its title, and anywhere.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Masks {
    pub title: u32,
    pub any: u32,
}

/// How one candidate matches the step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Judgement {
    /// Σ weight × title boost.
    pub relevance: f64,
    /// Share of the known weight matched.
    pub coverage: f64,
}

/// An accepted candidate: the store's handle on it, how it matched, its trust.
#[derive(Debug, Clone)]
pub struct Accepted<K> {
    pub key: K,
    pub judgement: Judgement,
    pub trust: f64,
}

impl<K> Accepted<K> {
    /// Relevance × trust, like agent-qa's bm25 × trust: the hit's score.
    pub fn score(&self) -> f64 {
        self.judgement.relevance * self.trust
    }

    /// What the relative cut compares: relevance × √trust (rule 5).
    fn strength(&self) -> f64 {
        self.judgement.relevance * self.trust.max(0.0).sqrt()
    }
}

/// The words of a step that terms mode looks up (rule 2): its distinct analyzed terms, then
/// the joins of adjacent words ("log in" → `login`), which count only if the pool knows them;
/// each with its alternatives from the lexicon ("pay" → `payment`, `signin` → `login`).
#[derive(Debug, Clone)]
pub struct StepWords {
    stems: Vec<String>,
    /// How many of `stems` are the step's own analyzed terms (the rest are joins).
    analyzed: usize,
    /// Every stem, then every alternative of a stem not already among them: what a store that
    /// fetches all the step's words at once must fetch.
    lookups: Vec<String>,
}

impl StepWords {
    /// Every word to look up: the step's stems in the order [`step_terms`] asks for them, then
    /// their lexicon alternatives.
    pub fn lookups(&self) -> &[String] {
        &self.lookups
    }

    /// Whether the step has no word to look up.
    pub fn is_empty(&self) -> bool {
        self.stems.is_empty()
    }
}

/// The words of `sanitized` (the step as §3.3 sanitizes it).
pub fn step_words(sanitized: &str) -> StepWords {
    let mut stems = analyze_unique(sanitized);
    let analyzed = stems.len();
    let raw = curator_core::fts::token_texts(sanitized);
    for pair in raw.windows(2) {
        if let [joined] = analyze_unique(&format!("{}{}", pair[0], pair[1])).as_slice()
            && !stems.contains(joined)
        {
            stems.push(joined.clone());
        }
    }
    let mut lookups = stems.clone();
    for alt in stems.iter().flat_map(|s| lexicon::alternatives(s)) {
        if !lookups.contains(alt) {
            lookups.push(alt.clone());
        }
    }
    StepWords { stems, analyzed, lookups }
}

/// Rules 2 and 3: the step's known terms, each with the forms `source` finds and the pool
/// observations it marks; `pool_size` is the number of pool observations.
pub fn step_terms<S: TermSource>(
    source: &mut S,
    pool_size: u64,
    words: &StepWords,
) -> Result<Step, S::Error> {
    let mut known: Vec<StepTerm> = Vec::new();
    let mut seen_forms: HashSet<String> = HashSet::new();
    for stem in &words.stems {
        if known.len() >= MAX_STEP_TERMS {
            break;
        }
        let mut forms = source.forms(stem)?;
        // The lexicon's alternatives are more forms of the same word, found the same way.
        for alt in lexicon::alternatives(stem) {
            for form in source.forms(alt)? {
                if forms.len() < MAX_FORMS + MAX_ALTERNATIVE_FORMS && !forms.contains(&form) {
                    forms.push(form);
                }
            }
        }
        // A form already covered by an earlier term (e.g. "login" from "log in" and a literal
        // "login") would count the same evidence twice.
        if forms.iter().any(|f| seen_forms.contains(f)) {
            continue;
        }
        let bit = 1u32 << known.len();
        let (df, title_df) = source.mark(&forms, bit)?;
        if df == 0 {
            continue;
        }
        seen_forms.extend(forms);
        known.push(StepTerm { weight: idf(pool_size, df), title_df, bit });
    }
    let known_share =
        if words.analyzed == 0 { 0.0 } else { known.len() as f64 / words.analyzed as f64 };
    Ok(Step { known, known_share, pool_size })
}

/// Rule 4: `None` when the candidate is not about the step.
pub fn judge(step: &Step, min_coverage: f64, masks: Masks) -> Option<Judgement> {
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
            _ => covered / idf(step.pool_size, 1) >= MIN_INFORMATIVE_TERMS,
        };
    let relevance = matched
        .iter()
        .map(|(t, in_title)| t.weight * if *in_title { TITLE_BOOST } else { 1.0 })
        .sum();
    accepted.then_some(Judgement { relevance, coverage })
}

/// Rules 4 and 5 over a store's candidates (`key`, masks, trust), in the store's discovery
/// order: the accepted ones whose strength reaches `keep_ratio` of the best, best score first
/// (a stable sort, so ties keep discovery order).
pub fn accept<K>(
    step: &Step,
    min_relevance: f64,
    keep_ratio: f64,
    candidates: impl IntoIterator<Item = (K, Masks, f64)>,
) -> Vec<Accepted<K>> {
    let mut accepted: Vec<Accepted<K>> = candidates
        .into_iter()
        .filter_map(|(key, masks, trust)| {
            judge(step, min_relevance, masks).map(|judgement| Accepted { key, judgement, trust })
        })
        .collect();
    let best = accepted.iter().map(Accepted::strength).fold(0.0, f64::max);
    accepted.retain(|a| a.strength() >= best * keep_ratio);
    accepted.sort_by(|a, b| b.score().total_cmp(&a.score()));
    accepted
}

/// The distinct analyzed terms of `text` (terms mode's analyzer: folded, stop words and step
/// verbs dropped, stemmed), in first-occurrence order. What a store indexes for terms mode.
pub fn analyze_unique(text: &str) -> Vec<String> {
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
        Case { step: Step { known: terms, known_share, pool_size: n }, forms }
    }

    impl Case {
        /// The masks of a document whose title and content hold these analyzed terms.
        fn masks(&self, title: &[&str], content: &[&str]) -> Masks {
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
            m
        }

        fn judge(&self, min: f64, title: &[&str], content: &[&str]) -> Option<Judgement> {
            judge(&self.step, min, self.masks(title, content))
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

    #[test]
    fn the_cut_keeps_hits_near_the_best_and_orders_by_score_then_discovery() {
        let c = case(vec![term(&["login"], 20, 3, 3), term(&["modal"], 20, 3, 3)], 2, 20);
        let both = c.masks(&["login", "modal"], &[]);
        let one = c.masks(&[], &["login", "modal"]);
        let got = accept(&c.step, 0.0, 0.65, [("a", one, 1.0), ("b", both, 0.5), ("c", both, 0.5)]);
        let keys: Vec<&str> = got.iter().map(|a| a.key).collect();
        // b and c: twice the relevance at half the trust, so equal scores to a's; strength
        // (relevance × √trust) keeps all three, and the stable sort keeps discovery order.
        assert_eq!(keys, ["a", "b", "c"]);
        let got = accept(&c.step, 0.0, 0.65, [("weak", one, 0.3), ("strong", both, 1.0)]);
        let keys: Vec<&str> = got.iter().map(|a| a.key).collect();
        assert_eq!(keys, ["strong"], "a weak match does not ride along with a strong one");
    }

    /// A store of documents given as (title terms, content terms), every one in the pool.
    struct Docs {
        docs: Vec<(Vec<&'static str>, Vec<&'static str>)>,
        masks: Vec<Masks>,
    }

    impl TermSource for Docs {
        type Error = std::convert::Infallible;

        fn forms(&mut self, stem: &str) -> Result<Vec<String>, Self::Error> {
            let mut forms = vec![stem.to_owned()];
            if expands_by_prefix(stem) {
                let mut all: Vec<&str> =
                    self.docs.iter().flat_map(|(t, c)| t.iter().chain(c)).copied().collect();
                all.sort_unstable();
                all.dedup();
                forms.extend(
                    all.into_iter().filter(|t| t.starts_with(stem) && *t != stem).map(String::from),
                );
            }
            Ok(forms)
        }

        fn mark(&mut self, forms: &[String], bit: u32) -> Result<(u64, u64), Self::Error> {
            let (mut df, mut title_df) = (0, 0);
            for ((title, content), m) in self.docs.iter().zip(&mut self.masks) {
                let has = |terms: &[&str]| terms.iter().any(|t| forms.iter().any(|f| f == t));
                if has(title) {
                    m.title |= bit;
                    title_df += 1;
                }
                if has(title) || has(content) {
                    m.any |= bit;
                    df += 1;
                }
            }
            Ok((df, title_df))
        }
    }

    #[test]
    fn step_terms_join_neighbours_expand_prefixes_and_count_evidence_once() {
        let mut docs = Docs {
            docs: vec![(vec!["login", "assigne"], vec!["field"]), (vec!["report"], vec!["login"])],
            masks: vec![Masks::default(); 2],
        };
        let words = step_words("Log in and assign the login");
        let step = step_terms(&mut docs, 2, &words).unwrap();
        // "assign" (through "assigne") and "login" (the joined "log in" and the literal word,
        // once) are known; "log" is not, and takes no bit.
        let bits: Vec<u32> = step.known.iter().map(|t| t.bit).collect();
        assert_eq!(bits, [0b1, 0b10], "{step:?}");
        assert!((step.known_share - 2.0 / 3.0).abs() < 1e-12, "log, assign, login");
        assert_eq!(docs.masks[0], Masks { title: 0b11, any: 0b11 });
        assert_eq!(docs.masks[1], Masks { title: 0, any: 0b10 });
    }
}
