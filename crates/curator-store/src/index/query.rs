//! From a search request to tantivy queries: the scope filter (§3.2) and the two modes (§3.3).
//!
//! The scope filter is pure filtering (constant score 0): it gives the scoped rows whose
//! statistics both modes need. Text is matched through the scoped terms of the request's
//! folders (`schema.rs`). Phrase mode asks tantivy only for *candidates* (the phrase in title
//! or in content, never across: separate phrase queries); their agent-qa score is computed
//! exactly in `collect.rs`. Terms mode reads postings itself (`terms.rs`).

use tantivy::Term;
use tantivy::query::{BooleanQuery, ConstScoreQuery, Occur, PhraseQuery, Query, TermQuery};
use tantivy::schema::{Field, IndexRecordOption};

use super::schema::{Fields, SUITE_BASE, scoped_term};
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

/// Candidates of phrase mode: the folded token sequence in the title or in the content of a
/// document in one of the request's folders (the scoped terms hold only that folder's
/// documents, so no scope filter is needed; suite positions are checked when loading).
pub(crate) fn phrase_candidates(
    fields: &Fields,
    scopes: &[ScopeSelector],
    tokens: &[String],
) -> Box<dyn Query> {
    let mut any: Vec<(Occur, Box<dyn Query>)> = Vec::new();
    for sel in scopes {
        let key = sel.dir.key();
        for field in [fields.title_phrase, fields.content_phrase] {
            let mut terms: Vec<Term> = tokens
                .iter()
                .map(|t| Term::from_field_text(field, &scoped_term(&key, t)))
                .collect();
            let query: Box<dyn Query> = if terms.len() == 1 {
                Box::new(TermQuery::new(terms.remove(0), IndexRecordOption::WithFreqs))
            } else {
                Box::new(PhraseQuery::new(terms))
            };
            any.push((Occur::Should, query));
        }
    }
    Box::new(BooleanQuery::new(any))
}

fn term_query(field: Field, text: &str) -> Box<dyn Query> {
    Box::new(TermQuery::new(Term::from_field_text(field, text), IndexRecordOption::Basic))
}
