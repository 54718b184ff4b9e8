//! From a search request to tantivy queries: the scope filter (§3.2) and the two modes (§3.3).
//!
//! The scope filter is pure filtering (constant score 0), so the only score tantivy computes is
//! the text part. Phrase mode asks tantivy only for *candidates* (the phrase in title or in
//! content, never across: two separate phrase queries); their agent-qa score is computed
//! exactly in `collect.rs`. Terms mode builds its own weighted query over the stemmed fields
//! (`terms.rs`).

use tantivy::Term;
use tantivy::query::{BooleanQuery, ConstScoreQuery, Occur, PhraseQuery, Query, TermQuery};
use tantivy::schema::{Field, IndexRecordOption};

use super::schema::{Fields, SUITE_BASE};
use super::{ScopeSelector, suite_key};

/// Documents in any of the selected scopes: all served documents of product and test folders;
/// in a suite folder the base observations, plus the suite observations whose (position,
/// snapshot) key equals the request's.
pub(crate) fn scope_filter(fields: &Fields, scopes: &[ScopeSelector]) -> Box<dyn Query> {
    let mut any = Vec::with_capacity(scopes.len());
    for sel in scopes {
        let scope = term_query(fields.scope_key, &sel.dir.key());
        let clause: Box<dyn Query> = if sel.dir.tier == curator_core::Tier::Suites {
            let mut keys = vec![(Occur::Should, term_query(fields.suite_key, SUITE_BASE))];
            if let Some(m) = &sel.suite {
                let key = suite_key(m.position, &m.snapshot);
                keys.push((Occur::Should, term_query(fields.suite_key, &key)));
            }
            Box::new(BooleanQuery::new(vec![
                (Occur::Must, scope),
                (Occur::Must, Box::new(BooleanQuery::new(keys))),
            ]))
        } else {
            scope
        };
        any.push((Occur::Should, clause));
    }
    Box::new(ConstScoreQuery::new(Box::new(BooleanQuery::new(any)), 0.0))
}

/// Candidates of phrase mode: the folded token sequence in the title or in the content.
pub(crate) fn phrase_candidates(fields: &Fields, tokens: &[String]) -> Box<dyn Query> {
    let in_field = |field: Field| -> Box<dyn Query> {
        if tokens.len() == 1 {
            Box::new(TermQuery::new(
                Term::from_field_text(field, &tokens[0]),
                IndexRecordOption::WithFreqs,
            ))
        } else {
            let terms = tokens.iter().map(|t| Term::from_field_text(field, t)).collect();
            Box::new(PhraseQuery::new(terms))
        }
    };
    Box::new(BooleanQuery::new(vec![
        (Occur::Should, in_field(fields.title)),
        (Occur::Should, in_field(fields.content)),
    ]))
}

/// `filter AND text`; the filter scores 0, so the score is the text query's.
pub(crate) fn within(filter: Box<dyn Query>, text: Box<dyn Query>) -> BooleanQuery {
    BooleanQuery::new(vec![(Occur::Must, filter), (Occur::Must, text)])
}

fn term_query(field: Field, text: &str) -> Box<dyn Query> {
    Box::new(TermQuery::new(Term::from_field_text(field, text), IndexRecordOption::Basic))
}
