//! Plain BM25, the baseline every eval report prints beside curator's own modes (issue 14).
//!
//! Invariant: this is the textbook ranking a search engineer would try first, with nothing of
//! curator's in it, so the distance between it and terms mode measures what curator's scorer
//! adds. One field (title and body joined), `unicode61` tokens (agent-qa's folding) with every
//! Chinese, Japanese or Korean run split into overlapping bigrams as Lucene's `CJKAnalyzer`
//! does (the first stage of terms mode, `schema::TermsWords`: without it a whole clause is one
//! token and the baseline could not find CJK memory at all, which would flatter terms mode),
//! Lucene's default English stop set, the Snowball English stemmer, BM25 with Robertson's `k1 = 1.2`,
//! `b = 0.75` and Lucene's non-negative IDF, statistics over the documents given (the
//! observations the step may see). No synonyms, no irregular forms, no step-verb list, no
//! floor, no cut and no trust factor: every document sharing a word with the step is ranked,
//! and the caller's cap decides how many are injected.

use std::collections::HashMap;

use tantivy::tokenizer::{Language, Stemmer, StopWordFilter, TextAnalyzer};

use super::schema::TermsWords;

/// BM25's term-frequency saturation and length normalization (Robertson's defaults).
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// Lucene's `EnglishAnalyzer.ENGLISH_STOP_WORDS_SET`.
const LUCENE_ENGLISH_STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it",
    "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these",
    "they", "this", "to", "was", "will", "with",
];

/// One document of the baseline's collection.
#[derive(Debug, Clone, Copy)]
pub struct BaselineDoc<'a> {
    pub title: &'a str,
    pub content: &'a str,
}

fn analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(TermsWords)
        .filter(StopWordFilter::remove(LUCENE_ENGLISH_STOP_WORDS.iter().map(|w| (*w).to_owned())))
        .filter(Stemmer::new(Language::English))
        .build()
}

fn analyze(analyzer: &mut TextAnalyzer, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    analyzer.token_stream(text).process(&mut |t| out.push(t.text.clone()));
    out
}

/// The indexes of `docs` that share a term with `query`, best BM25 score first (ties keep the
/// order of `docs`), at most `limit` of them.
pub fn bm25_baseline(docs: &[BaselineDoc<'_>], query: &str, limit: usize) -> Vec<usize> {
    let mut analyzer = analyzer();
    let mut terms = analyze(&mut analyzer, query);
    terms.sort();
    terms.dedup();
    if terms.is_empty() || docs.is_empty() || limit == 0 {
        return Vec::new();
    }
    // Term frequencies of the query's terms per document, and every document's length.
    let mut lengths = Vec::with_capacity(docs.len());
    let mut tfs: Vec<HashMap<usize, f64>> = Vec::with_capacity(docs.len());
    for doc in docs {
        let tokens = analyze(&mut analyzer, &format!("{}\n{}", doc.title, doc.content));
        lengths.push(tokens.len() as f64);
        let mut tf = HashMap::new();
        for token in &tokens {
            if let Ok(i) = terms.binary_search(token) {
                *tf.entry(i).or_insert(0.0) += 1.0;
            }
        }
        tfs.push(tf);
    }
    let n = docs.len() as f64;
    let avgdl = (lengths.iter().sum::<f64>() / n).max(1.0);
    let idf: Vec<f64> = (0..terms.len())
        .map(|i| {
            let df = tfs.iter().filter(|tf| tf.contains_key(&i)).count() as f64;
            (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
        })
        .collect();
    let mut scored: Vec<(usize, f64)> = tfs
        .iter()
        .zip(&lengths)
        .enumerate()
        .filter(|(_, (tf, _))| !tf.is_empty())
        .map(|(d, (tf, &len))| {
            let norm = K1 * (1.0 - B + B * len / avgdl);
            let score = tf.iter().map(|(&i, &f)| idf[i] * f * (K1 + 1.0) / (f + norm)).sum();
            (d, score)
        })
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    scored.into_iter().take(limit).map(|(d, _)| d).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc<'a>(title: &'a str, content: &'a str) -> BaselineDoc<'a> {
        BaselineDoc { title, content }
    }

    #[test]
    fn stems_ranks_by_bm25_and_ignores_documents_without_a_shared_term() {
        let docs = [
            doc("Invoices export as CSV", "The export button sits in the toolbar."),
            doc("Payment fails with an expired card", "Use a card that expires later."),
            doc("Cards are listed newest first", "Nothing else."),
        ];
        // "cards" and "card" share a stem; doc 1 has it twice and "payment" too.
        assert_eq!(bm25_baseline(&docs, "Pay with the saved cards", 5), [1, 2]);
        assert_eq!(bm25_baseline(&docs, "Exporting invoices", 5), [0]);
        assert!(bm25_baseline(&docs, "the of and", 5).is_empty(), "stop words only");
        assert_eq!(bm25_baseline(&docs, "card", 1), [1], "the limit cuts");
    }

    #[test]
    fn unspaced_text_is_matched_by_its_bigrams_as_lucenes_cjk_analyzer_does() {
        let docs = [
            doc("登录按钮保持禁用", "勾选协议后才可点击。"),
            doc("购物车为空", "新账号没有商品。"),
        ];
        // One unicode61 token each ("点击登录按钮", "登录按钮保持禁用"): without bigrams they
        // share nothing.
        assert_eq!(bm25_baseline(&docs, "点击登录按钮", 5), [0]);
        assert_eq!(bm25_baseline(&docs, "打开购物车", 5), [1]);
    }

    #[test]
    fn it_has_no_floor_a_lone_common_word_is_enough() {
        let docs = [doc("Login page", "x"), doc("Checkout page", "y")];
        assert_eq!(bm25_baseline(&docs, "Open the settings page", 3), [0, 1], "ties keep order");
    }
}
