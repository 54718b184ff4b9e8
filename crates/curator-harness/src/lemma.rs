//! "Same lemma" matching (harness-curator §4.3).
//!
//! A deterministic stand-in for the original's semantic judgement: two statements are the same
//! lemma when their main clauses reduce to equal token sets, or share a code token with content
//! Jaccard ≥ 0.5, or have content Jaccard ≥ 0.7. The same test matches a new sighting against
//! MEMORY.md and identity entries, so nothing is promoted twice and a re-run changes nothing.

use std::collections::BTreeSet;

use rustc_hash::FxHashMap;

const STOP_WORDS: &[&str] = &[
    "a", "an", "the", "to", "of", "in", "on", "for", "and", "or", "is", "are", "be", "do", "not",
    "use", "with", "by", "it", "this", "that",
];

/// The reduced form of one statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lemma {
    /// Content tokens (stemmed words plus code tokens verbatim).
    pub tokens: BTreeSet<String>,
    /// The subset that are code tokens.
    pub code: BTreeSet<String>,
}

fn is_code_token(t: &str) -> bool {
    t.contains(['/', '.', '_', '-', '*'])
}

fn stem(t: &str) -> String {
    if t.len() > 4 && t.chars().all(|c| c.is_ascii_alphabetic()) {
        for suffix in ["ing", "ed", "es", "s"] {
            if let Some(stripped) = t.strip_suffix(suffix) {
                return stripped.to_string();
            }
        }
    }
    t.to_string()
}

/// The main clause: up to the first `;`, ` — `, ` -- ` or `. ` (§4.3 step 1).
pub fn main_clause(text: &str) -> &str {
    // One scan instead of four substring searches: this runs for every raw entry of a pass.
    let b = text.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        let next = |n: usize| b.get(i + n).copied();
        let cut = match c {
            b';' => true,
            b'.' => next(1) == Some(b' '),
            b' ' => {
                text[i + 1..].starts_with("— ")
                    || (next(1) == Some(b'-') && next(2) == Some(b'-') && next(3) == Some(b' '))
            }
            _ => false,
        };
        if cut {
            return &text[..i];
        }
    }
    text
}

fn split_tokens(s: &str) -> impl Iterator<Item = &str> {
    s.split(|c: char| {
        !(c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '_' | '.' | '/' | '*' | '-'))
    })
    // Sentence punctuation glued to a word is not part of a code token.
    .map(|t| t.trim_end_matches('.'))
    .filter(|t| !t.is_empty() && t.chars().any(|c| c.is_ascii_alphanumeric()))
}

impl Lemma {
    /// Reduces `text` (§4.3 steps 1–2).
    pub fn new(text: &str) -> Lemma {
        let clause = main_clause(text).to_lowercase();
        let clause = clause.split_whitespace().collect::<Vec<_>>().join(" ");
        let mut tokens = BTreeSet::new();
        let mut code = BTreeSet::new();
        // Backtick-wrapped words are code tokens whatever their shape.
        for (i, part) in clause.split('`').enumerate() {
            let quoted = i % 2 == 1;
            for t in split_tokens(part) {
                if quoted || is_code_token(t) {
                    code.insert(t.to_string());
                    tokens.insert(t.to_string());
                } else if !STOP_WORDS.contains(&t) {
                    tokens.insert(stem(t));
                }
            }
        }
        Lemma { tokens, code }
    }

    /// Content-token Jaccard.
    pub fn jaccard(&self, other: &Lemma) -> f64 {
        if self.tokens.is_empty() || other.tokens.is_empty() {
            return 0.0;
        }
        let inter = self.tokens.intersection(&other.tokens).count();
        inter as f64 / (self.tokens.len() + other.tokens.len() - inter) as f64
    }

    /// The §4.3 step 3 test.
    pub fn same_as(&self, other: &Lemma) -> bool {
        if self.tokens.is_empty() && other.tokens.is_empty() {
            return false;
        }
        if self.tokens == other.tokens {
            return true;
        }
        let j = self.jaccard(other);
        let shares_code = self.code.intersection(&other.code).next().is_some();
        (shares_code && j >= 0.5) || j >= 0.7
    }
}

/// Whether two statements are the same lemma.
pub fn same_lemma(a: &str, b: &str) -> bool {
    Lemma::new(a).same_as(&Lemma::new(b))
}

/// Finds a same-lemma partner among many lemmas without comparing against each: an inverted
/// index from token to lemma ids, with shared-token counts giving the exact Jaccard. A pass
/// matches every raw entry against the live items this way, so its cost follows the entries'
/// tokens, not the number of items times the number of entries. Counting uses a dense array
/// indexed by id (ids are small and grow by one per item), reset after each query.
#[derive(Debug, Default)]
pub(crate) struct LemmaIndex {
    postings: FxHashMap<String, Vec<u32>>,
    lemmas: FxHashMap<u32, Lemma>,
    /// Token count per id (dense), so most candidates are ruled out without a lookup.
    sizes: Vec<u32>,
    counts: std::cell::RefCell<(Vec<u32>, Vec<u32>)>,
}

impl LemmaIndex {
    /// Adds `lemma` under `id` (ids are expected to grow with insertion order).
    pub(crate) fn insert(&mut self, id: u32, lemma: Lemma) {
        for t in &lemma.tokens {
            self.postings.entry(t.clone()).or_default().push(id);
        }
        let slot = id as usize;
        if slot >= self.sizes.len() {
            self.sizes.resize(slot + 1, 0);
        }
        self.sizes[slot] = u32::try_from(lemma.tokens.len()).unwrap_or(u32::MAX);
        self.lemmas.insert(id, lemma);
    }

    /// Removes `id`.
    pub(crate) fn remove(&mut self, id: u32) {
        let Some(lemma) = self.lemmas.remove(&id) else { return };
        for t in &lemma.tokens {
            if let Some(ids) = self.postings.get_mut(t) {
                ids.retain(|&i| i != id);
                if ids.is_empty() {
                    self.postings.remove(t);
                }
            }
        }
    }

    /// The lemma stored under `id`.
    #[cfg(test)]
    pub(crate) fn get(&self, id: u32) -> Option<&Lemma> {
        self.lemmas.get(&id)
    }

    /// The smallest id whose lemma is the same as `lemma` (§4.3 step 3) and passes `keep`.
    pub(crate) fn find(&self, lemma: &Lemma, keep: impl Fn(u32) -> bool) -> Option<u32> {
        if lemma.tokens.is_empty() {
            return None;
        }
        let mut guard = self.counts.borrow_mut();
        let (counts, touched) = &mut *guard;
        for t in &lemma.tokens {
            for &id in self.postings.get(t).map_or(&[][..], Vec::as_slice) {
                let slot = id as usize;
                if slot >= counts.len() {
                    counts.resize(slot + 1, 0);
                }
                if counts[slot] == 0 {
                    touched.push(id);
                }
                counts[slot] += 1;
            }
        }
        let mut best: Option<u32> = None;
        for &id in touched.iter() {
            let n = std::mem::take(&mut counts[id as usize]) as usize;
            if best.is_some_and(|b| b <= id) {
                continue;
            }
            let union = lemma.tokens.len() + self.sizes[id as usize] as usize - n;
            let j = n as f64 / union as f64;
            // Below 0.5 nothing matches; the lookups below run for the few that might.
            if j < 0.5 {
                continue;
            }
            let same = n == union
                || j >= 0.7
                || lemma.code.intersection(&self.lemmas[&id].code).next().is_some();
            if same && keep(id) {
                best = Some(id);
            }
        }
        touched.clear();
        best
    }
}

/// Union-find clustering over pairwise matches (§4.3 step 4). Clusters come out ordered by their
/// first member, members in input order, so the result is reproducible.
pub fn cluster(lemmas: &[Lemma]) -> Vec<Vec<usize>> {
    let mut parent: Vec<usize> = (0..lemmas.len()).collect();
    fn find(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    for i in 0..lemmas.len() {
        for j in i + 1..lemmas.len() {
            if lemmas[i].same_as(&lemmas[j]) {
                let (a, b) = (find(&mut parent, i), find(&mut parent, j));
                if a != b {
                    parent[a.max(b)] = a.min(b);
                }
            }
        }
    }
    let mut clusters: Vec<Vec<usize>> = Vec::new();
    let mut root_slot: Vec<Option<usize>> = vec![None; lemmas.len()];
    for i in 0..lemmas.len() {
        let r = find(&mut parent, i);
        match root_slot[r] {
            Some(slot) => clusters[slot].push(i),
            None => {
                root_slot[r] = Some(clusters.len());
                clusters.push(vec![i]);
            }
        }
    }
    clusters
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_main_clause_ends_at_the_first_separator() {
        assert_eq!(main_clause("a b; c"), "a b");
        assert_eq!(main_clause("a b — c; d"), "a b");
        assert_eq!(main_clause("a -- b"), "a");
        assert_eq!(main_clause("v1.2 works. Then"), "v1.2 works");
        assert_eq!(main_clause("a - b —c"), "a - b —c");
        assert_eq!(main_clause("é — x"), "é");
    }

    #[test]
    fn reduces_to_main_clause_tokens() {
        let l = Lemma::new("Always run `psql -f` before seeding; otherwise rows are missing");
        assert!(l.code.contains("psql") && l.code.contains("-f"), "{l:?}");
        assert!(l.tokens.contains("alway") && l.tokens.contains("seed"), "{l:?}");
        assert!(!l.tokens.contains("otherwise"));
        assert!(Lemma::new("uses the caches.").tokens.contains("cach"));
    }

    #[test]
    fn three_ways_to_match() {
        // (a) equal token sets after stop words and stemming
        assert!(same_lemma("Mock the clock in tests", "mocking clock tests"));
        // (b) shared code token + Jaccard >= 0.5
        assert!(same_lemma(
            "psql -f drizzle/*.sql applies migrations in filename order",
            "drizzle/*.sql migrations run in filename order via psql"
        ));
        // (c) Jaccard >= 0.7 without a code token (7 of 8 tokens shared)
        assert!(same_lemma(
            "restart the dev server after changing env vars",
            "restart dev server after changing env vars again"
        ));
        // Jaccard 0.5 without a shared code token is not enough.
        assert!(!same_lemma("restart the dev server", "restart the dev database"));
        assert!(!same_lemma("sqlite creates missing files", "node --test needs no deps"));
        assert!(!same_lemma("", ""));
    }

    #[test]
    fn the_index_finds_what_pairwise_matching_finds() {
        let texts = [
            "psql -f drizzle/*.sql applies migrations in filename order",
            "restart the dev server after changing env vars",
            "mock the clock in tests",
            "drizzle/*.sql migrations run in filename order via psql",
            "restart dev server after changing env vars again",
            "restart the dev database",
        ];
        let mut index = LemmaIndex::default();
        for (i, t) in texts.iter().enumerate().take(3) {
            index.insert(i as u32, Lemma::new(t));
        }
        for t in &texts[3..] {
            let lemma = Lemma::new(t);
            let pairwise = (0..3u32).find(|&i| index.get(i).unwrap().same_as(&lemma));
            assert_eq!(index.find(&lemma, |_| true), pairwise, "{t}");
        }
        assert_eq!(index.find(&Lemma::new(texts[3]), |id| id != 0), None);
        index.remove(0);
        assert_eq!(index.find(&Lemma::new(texts[3]), |_| true), None);
    }

    #[test]
    fn clustering_is_transitive_and_ordered() {
        let lemmas: Vec<_> = ["a b c d", "x y z", "a b c d e", "a b c d e f"]
            .iter()
            .map(|t| Lemma::new(t))
            .collect();
        assert_eq!(cluster(&lemmas), vec![vec![0, 2, 3], vec![1]]);
    }
}
