//! Word-set similarity of observations (agent-qa-memory §5.8).
//!
//! agent-qa ships this as dead code; curator uses it at runtime so the rules provider does not add
//! an observation that already exists in its scope (§11.14). The tokenizer reproduces the
//! JavaScript one exactly — lower-case, every character that is not a letter, a number or JS
//! whitespace becomes a space, split on whitespace runs, a set — so a similarity computed here
//! equals the one agent-qa computes for the same strings.

use std::collections::HashSet;
use std::sync::LazyLock;

use regex::Regex;

/// The threshold at or above which two texts count as the same observation.
pub const DUPLICATE_THRESHOLD: f64 = 0.85;

/// JavaScript's `\s` set (ECMAScript WhiteSpace + LineTerminator), which differs from Unicode
/// `White_Space`: it has U+FEFF and lacks U+0085.
const JS_SPACE: &str = r"\t\n\x0B\x0C\r \u{A0}\u{1680}\u{2000}-\u{200A}\u{2028}\u{2029}\u{202F}\u{205F}\u{3000}\u{FEFF}";

static NOT_WORD: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(&format!(r"[^\p{{L}}\p{{N}}{JS_SPACE}]")).expect("static regex"));
static SPACES: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(&format!("[{JS_SPACE}]+")).expect("static regex"));

/// The word set of `s` (§5.8 `tokenize`).
pub fn tokenize(s: &str) -> HashSet<String> {
    let lower = s.to_lowercase();
    let spaced = NOT_WORD.replace_all(&lower, " ");
    SPACES.split(&spaced).filter(|w| !w.is_empty()).map(str::to_owned).collect()
}

/// |A ∩ B| / |A ∪ B|, and 0 when either set is empty (§5.8 `jaccardSimilarity`).
pub fn jaccard(a: &HashSet<String>, b: &HashSet<String>) -> f64 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let common = a.intersection(b).count();
    let union = a.len() + b.len() - common;
    common as f64 / union as f64
}

/// How similar `query` is to an observation: the best of its similarity to the title, to the
/// content and to both together (§5.8 `findSimilarObservations`).
pub fn observation_similarity(query: &str, title: &str, content: &str) -> f64 {
    let q = tokenize(query);
    let both = format!("{title} {content}");
    [title, content, both.as_str()]
        .into_iter()
        .map(|text| jaccard(&q, &tokenize(text)))
        .fold(0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(words: &[&str]) -> HashSet<String> {
        words.iter().map(|w| (*w).to_owned()).collect()
    }

    #[test]
    fn tokenize_lowercases_strips_punctuation_and_dedupes() {
        assert_eq!(
            tokenize("Login-page: the MODAL, the modal!"),
            set(&["login", "page", "the", "modal"])
        );
        assert_eq!(tokenize("Ünïcode ✓ 42x"), set(&["ünïcode", "42x"]));
        assert_eq!(tokenize("a\u{FEFF}b"), set(&["a", "b"]), "U+FEFF is JS whitespace");
        assert!(tokenize(" ...  ").is_empty());
    }

    #[test]
    fn jaccard_is_intersection_over_union_and_zero_for_empty_sets() {
        assert_eq!(jaccard(&set(&["a", "b"]), &set(&["b", "c"])), 1.0 / 3.0);
        assert_eq!(jaccard(&set(&["a"]), &set(&["a"])), 1.0);
        assert_eq!(jaccard(&set(&[]), &set(&["a"])), 0.0);
    }

    #[test]
    fn observation_similarity_takes_the_best_of_title_content_and_both() {
        let title = "Checkout: coupon field";
        let content = "The coupon field sits below the cart total";
        assert_eq!(observation_similarity("checkout coupon field", title, content), 1.0);
        let q = "the coupon field sits below the cart total";
        assert_eq!(observation_similarity(q, title, content), 1.0);
        assert!(
            observation_similarity("shipping address form", title, content) < DUPLICATE_THRESHOLD
        );
    }
}
