//! agent-qa's full-text rules without SQLite (agent-qa-memory §3.1, §3.3).
//!
//! agent-qa searches an FTS5 table with the `unicode61` tokenizer and ranks with FTS5's built-in
//! `bm25()`. curator's index is tantivy, so the three facts that decide which observation is
//! injected and in what order live here as plain functions: the step sanitizer, the
//! `unicode61` tokenizer (with SQLite's own per-code-point tables, `crate::unicode61`) and the
//! FTS5 bm25 formula for a single phrase. Phrase mode computes its score only through these, so
//! it gives agent-qa's numbers, not tantivy's.

use std::sync::LazyLock;

use regex::Regex;

use crate::unicode61::{self, Class};

/// Runs of characters the sanitizer keeps: JS `\p{L}` and `\p{N}`.
static SANITIZE_KEEP: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[\p{L}\p{N}]+").expect("static regex"));

/// BM25 parameters of FTS5's built-in `bm25()` (§3.3).
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// The §3.3 sanitizer: every character outside `[\p{L}\p{N}\s]` becomes a space, whitespace
/// runs collapse to one space, the ends are trimmed. Case is kept (the tokenizer folds it).
///
/// Since every non-letter, non-number character ends up as a space either way, the result is
/// exactly the letter/number runs joined by single spaces; that form avoids depending on the
/// difference between JS `\s` and Rust's whitespace (U+0085, U+FEFF).
pub fn sanitize_step(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for run in SANITIZE_KEEP.find_iter(text) {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(run.as_str());
    }
    out
}

/// A token with its byte span in the original text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    /// The folded text (lowercase, simple diacritics removed).
    pub text: String,
    /// Byte offset where the token starts in the input.
    pub start: usize,
    /// Byte offset just past the token in the input.
    pub end: usize,
}

/// Tokenizes like FTS5 `unicode61` with its defaults (`remove_diacritics=1`): a token starts
/// at a token character and runs through token characters and combining diacritics, each
/// folded (lower case, a diacritic on an ASCII base removed, a lone diacritic dropped).
pub fn tokenize(text: &str) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut current: Option<Token> = None;
    for (at, c) in text.char_indices() {
        match (unicode61::class(c), current.as_mut()) {
            (Class::Token | Class::ContinueOnly, Some(token)) => {
                token.text.extend(unicode61::fold(c));
                token.end = at + c.len_utf8();
            }
            (Class::Token, None) => {
                let text = unicode61::fold(c).map(String::from).unwrap_or_default();
                current = Some(Token { text, start: at, end: at + c.len_utf8() });
            }
            (Class::ContinueOnly, None) => {}
            (Class::Separator, _) => tokens.extend(current.take()),
        }
    }
    tokens.extend(current);
    // No token character folds to nothing (the tables say so), but FTS5 indexes no empty term.
    tokens.retain(|t| !t.text.is_empty());
    tokens
}

/// The folded token texts only.
pub fn token_texts(text: &str) -> Vec<String> {
    tokenize(text).into_iter().map(|t| t.text).collect()
}

/// How often `phrase` (folded tokens) occurs contiguously in `tokens`. An empty phrase occurs
/// nowhere.
pub fn phrase_occurrences(tokens: &[String], phrase: &[String]) -> usize {
    if phrase.is_empty() || phrase.len() > tokens.len() {
        return 0;
    }
    tokens.windows(phrase.len()).filter(|w| *w == phrase).count()
}

/// Statistics of the FTS5 table a phrase is scored against (§3.3): `rows` = N, all rows of the
/// scoped index; `total_tokens` = tokens in title + content over those rows; `hits` = n, rows
/// containing the phrase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bm25Stats {
    pub rows: u64,
    pub total_tokens: u64,
    pub hits: u64,
}

impl Bm25Stats {
    /// FTS5's IDF for one phrase: `ln((N − n + 0.5) / (n + 0.5))`, clamped to `1e-6` when ≤ 0.
    pub fn idf(&self) -> f64 {
        let n_rows = self.rows as f64;
        let n_hit = self.hits as f64;
        let idf = ((n_rows - n_hit + 0.5) / (n_hit + 0.5)).ln();
        if idf <= 0.0 { 1e-6 } else { idf }
    }

    /// Average row length in tokens (`total_tokens / N`).
    pub fn avgdl(&self) -> f64 {
        self.total_tokens as f64 / self.rows as f64
    }

    /// FTS5 `bm25()` of one row with default weights: negative, smaller is better.
    /// `freq` = phrase occurrences in title plus content, `row_tokens` = D.
    ///
    /// The expression keeps FTS5's evaluation order so results agree to the last bit.
    pub fn rank(&self, freq: u64, row_tokens: u64) -> f64 {
        let f = freq as f64;
        let d = row_tokens as f64;
        let score = self.idf() * ((f * (K1 + 1.0)) / (f + K1 * (1.0 - B + B * d / self.avgdl())));
        -score
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<String> {
        token_texts(s)
    }

    #[test]
    fn sanitizer_turns_everything_but_letters_and_numbers_into_single_spaces() {
        assert_eq!(sanitize_step("  Click the \"Login\" button!  "), "Click the Login button");
        assert_eq!(sanitize_step("x_y"), "x y");
        assert_eq!(sanitize_step("wait 2s\u{a0}\u{feff}then\u{85}go"), "wait 2s then go");
        assert_eq!(sanitize_step("emoji 🎉 and e\u{301}"), "emoji and e");
        assert_eq!(sanitize_step("—!?"), "");
        assert_eq!(sanitize_step("Café résumé"), "Café résumé");
    }

    #[test]
    fn tokenizer_folds_case_and_simple_diacritics() {
        assert_eq!(toks("Café résumé"), ["cafe", "resume"]);
        assert_eq!(toks("CAFE\u{301} x_y 2s"), ["cafe", "x", "y", "2s"]);
        assert_eq!(toks("Recovery Center: retry queue"), ["recovery", "center", "retry", "queue"]);
        assert_eq!(toks("İstanbul ÜBER"), ["istanbul", "uber"]);
        // Private use characters are token characters; punctuation and symbols separate.
        assert_eq!(toks("a\u{e000}b c-d €5"), ["a\u{e000}b", "c", "d", "5"]);
        // A combining mark cannot start a token.
        assert_eq!(toks("\u{301}abc"), ["abc"]);
    }

    #[test]
    fn phrases_match_contiguous_tokens_only() {
        let title = toks("Recovery Center: retry queue lives under Danger Zone");
        let p = |s: &str| toks(&sanitize_step(s));
        assert_eq!(phrase_occurrences(&title, &p("Danger Zone")), 1);
        assert_eq!(phrase_occurrences(&title, &p("Center retry queue")), 1);
        assert_eq!(phrase_occurrences(&title, &p("Zone Danger")), 0);
        assert_eq!(phrase_occurrences(&title, &p("danger zone retry")), 0);
        assert_eq!(phrase_occurrences(&toks("Café résumé"), &p("cafe")), 1);
        assert_eq!(phrase_occurrences(&toks("Café résumé"), &p("resume")), 1);
        assert_eq!(phrase_occurrences(&toks("use x_y here"), &p("x y")), 1);
        assert_eq!(phrase_occurrences(&toks("wait 2s"), &p("2s")), 1);
        assert_eq!(phrase_occurrences(&toks("wait 2s"), &p("2")), 0);
        assert_eq!(phrase_occurrences(&toks("a a a"), &p("a a")), 2);
        assert_eq!(phrase_occurrences(&toks("a"), &[]), 0);
    }

    #[test]
    fn bm25_reproduces_the_worked_example_of_section_3_3() {
        let rows = [
            ("Observation: Login button is blue and large", "Login button is blue and large", 0.9),
            ("Observation: Login error shows red text", "Login error shows red text", 0.4),
            ("Observation: Login form has autocomplete", "Login form has autocomplete", 0.7),
        ];
        let lens: Vec<u64> =
            rows.iter().map(|(t, c, _)| (toks(t).len() + toks(c).len()) as u64).collect();
        assert_eq!(lens, [13, 11, 9]);
        let stats = Bm25Stats { rows: 3, total_tokens: lens.iter().sum(), hits: 3 };
        assert_eq!(stats.idf(), 1e-6);
        assert_eq!(stats.avgdl(), 11.0);
        let phrase = toks("Login");
        let ranks: Vec<f64> = rows
            .iter()
            .zip(&lens)
            .map(|((t, c, _), d)| {
                let f =
                    phrase_occurrences(&toks(t), &phrase) + phrase_occurrences(&toks(c), &phrase);
                assert_eq!(f, 2);
                stats.rank(f as u64, *d)
            })
            .collect();
        let close = |a: f64, b: f64| ((a - b) / b).abs() < 1e-4;
        assert!(close(ranks[0], -1.3081e-6) && close(ranks[1], -1.375e-6), "{ranks:?}");
        assert!(close(ranks[2], -1.4491e-6), "{ranks:?}");
        let keys: Vec<f64> = ranks.iter().zip(&rows).map(|(r, (_, _, t))| r * t).collect();
        assert!(close(keys[0], -1.1773e-6) && close(keys[1], -5.5e-7), "{keys:?}");
        assert!(close(keys[2], -1.0144e-6), "{keys:?}");
        // Exact values of the formula (f = 2, k1 = 1.2, b = 0.75, avgdl = 11).
        assert_eq!(ranks[1], -1e-6 * (2.0 * 2.2) / (2.0 + 1.2 * (1.0 - 0.75 + 0.75 * 11.0 / 11.0)));
    }

    #[test]
    fn idf_is_positive_for_rare_phrases() {
        let stats = Bm25Stats { rows: 10, total_tokens: 100, hits: 1 };
        assert!((stats.idf() - (9.5f64 / 1.5).ln()).abs() < 1e-15);
    }
}
