//! One observation row: what is derived from an observation file on write, and how a row is
//! turned back into a served observation on read (agent-qa-memory §1.4, §1.5, §7).
//!
//! Invariant: `file_text` is the truth. Every other column is computed from it when the row is
//! written, and reading parses `file_text` again with the same codec and scanner as the file
//! store, so a row is served exactly when the same text in a file would be. A row is never
//! "fixed up" on read: a row that no longer passes (a newer scanner rule) is a [`Problem`].

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use curator_core::codec::parse_observation;
use curator_core::fts::token_texts;
use curator_core::scanner::scan_observation;
use curator_core::{Observation, ObservationId, ScopeName, Tier};
use curator_store::index::relevance::analyze_unique;
use curator_store::{Error, Problem, ProblemKind, StoredObservation};

/// The largest tsvector position; PostgreSQL clamps larger ones to it.
const MAX_POSITION: usize = 16_383;
/// The longest word a tsvector lexeme may be, in bytes.
const MAX_LEXEME_BYTES: usize = 2_047;

/// A row as read, before parsing.
#[derive(Debug, Clone)]
pub(crate) struct RawRow {
    pub(crate) id: String,
    pub(crate) tier: String,
    pub(crate) scope: String,
    pub(crate) file_text: String,
    pub(crate) version: i64,
}

impl RawRow {
    pub(crate) fn from_row(row: &tokio_postgres::Row) -> Self {
        RawRow {
            id: row.get(0),
            tier: row.get(1),
            scope: row.get(2),
            file_text: row.get(3),
            version: row.get(4),
        }
    }

    /// `tier/scope/id.md`: where the row's file lives in an exported memory directory; used
    /// wherever the file store would name a path.
    pub(crate) fn path(&self) -> PathBuf {
        PathBuf::from(&self.tier).join(&self.scope).join(format!("{}.md", self.id))
    }

    /// Parses and scans the row; a refusal is a problem naming the row's path and the rule.
    pub(crate) fn into_stored(self) -> Result<StoredObservation, Problem> {
        let stored = self.into_parsed()?;
        let o = &stored.observation;
        if let Some(rule) = scan_observation(&o.title, &o.content).rule() {
            let path = path_of(stored.tier, &stored.scope, &o.id);
            return Err(Problem { path, kind: ProblemKind::Unsafe { rule: rule.to_owned() } });
        }
        Ok(stored)
    }

    /// [`RawRow::into_stored`] without the scanner: a row written under an older scanner that
    /// this one blocks still parses, for the curator's own reads (`Transaction::get_parsed`).
    pub(crate) fn into_parsed(self) -> Result<StoredObservation, Problem> {
        let path = self.path();
        let problem = |kind| Problem { path: path.clone(), kind };
        let tier: Tier =
            self.tier.parse().map_err(|e| problem(ProblemKind::Misplaced(format!("{e}"))))?;
        let scope = ScopeName::new(&self.scope)
            .map_err(|e| problem(ProblemKind::Misplaced(format!("{e}"))))?;
        let observation = parse_observation(&self.file_text, &self.id)
            .map_err(|e| problem(ProblemKind::Parse(e)))?;
        Ok(StoredObservation { tier, scope, observation })
    }
}

/// The store error for one row asked for by id that cannot be served (as the file store's).
pub(crate) fn refused(problem: Problem) -> Error {
    match problem.kind {
        ProblemKind::Parse(source) => Error::Parse { path: problem.path, source },
        kind => Error::Refused { path: problem.path, kind },
    }
}

/// `tier/scope/id.md` for a place and id.
pub(crate) fn path_of(tier: Tier, scope: &ScopeName, id: &ObservationId) -> PathBuf {
    PathBuf::from(tier.dir_name()).join(scope.as_str()).join(format!("{id}.md"))
}

/// Every column written for one observation.
#[derive(Debug, Clone)]
pub(crate) struct Derived {
    pub(crate) id: String,
    pub(crate) tier: &'static str,
    pub(crate) scope: String,
    pub(crate) title: String,
    pub(crate) content: String,
    pub(crate) trust: f64,
    pub(crate) created: String,
    pub(crate) last_confirmed: String,
    pub(crate) confirmed_count: i64,
    pub(crate) contradicted_count: i64,
    pub(crate) source_test: String,
    pub(crate) position: Option<i64>,
    pub(crate) suite_snapshot: Option<serde_json::Value>,
    pub(crate) file_text: String,
    pub(crate) phrase_tsv: String,
    pub(crate) token_len: i64,
    pub(crate) title_terms: Vec<String>,
    pub(crate) any_terms: Vec<String>,
}

impl Derived {
    /// The columns of `observation`, stored as `file_text` at `tier`/`scope`.
    pub(crate) fn new(
        tier: Tier,
        scope: &ScopeName,
        observation: &Observation,
        file_text: String,
    ) -> Self {
        let (phrase_tsv, token_len) = phrase_vector(&observation.title, &observation.content);
        let (title_terms, any_terms) = term_arrays(&observation.title, &observation.content);
        let count = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        Derived {
            id: observation.id.to_string(),
            tier: tier.dir_name(),
            scope: scope.as_str().to_owned(),
            title: observation.title.clone(),
            content: observation.content.clone(),
            trust: observation.trust,
            created: observation.created.clone(),
            last_confirmed: observation.last_confirmed.clone(),
            confirmed_count: count(observation.confirmed_count),
            contradicted_count: count(observation.contradicted_count),
            source_test: observation.source_test.clone(),
            position: observation.suite.as_ref().map(|s| count(s.position)),
            suite_snapshot: observation
                .suite
                .as_ref()
                .map(|s| serde_json::to_value(&s.suite_snapshot).unwrap_or_default()),
            file_text,
            phrase_tsv,
            token_len,
            title_terms,
            any_terms,
        }
    }
}

/// The `tsvector` literal of agent-qa's `unicode61` tokens (curator's tokenizer, not
/// PostgreSQL's parser, which splits words differently) and the row length in tokens.
///
/// Title tokens take positions 1…t, content tokens start at t + 2: a phrase query (`<->`,
/// distance exactly 1) then never matches across the two fields, as in FTS5's per-column
/// phrase matching. Positions past 16,383 are clamped by PostgreSQL; phrase mode only uses
/// the vector to find candidates and counts occurrences exactly from the text, so clamping can
/// at worst miss a phrase that starts after token 16,383 of a very long body. A token longer
/// than a lexeme may be is left out; the phrase query then looks up the step's other words.
pub(crate) fn phrase_vector(title: &str, content: &str) -> (String, i64) {
    let title = token_texts(title);
    let content = token_texts(content);
    let mut positions: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    let starts = title.len() + 2;
    let all = title.iter().enumerate().map(|(i, t)| (i + 1, t));
    let all = all.chain(content.iter().enumerate().map(|(i, t)| (starts + i, t)));
    for (pos, tok) in all.filter(|(_, t)| fits_lexeme(t)) {
        let list = positions.entry(tok.as_str()).or_default();
        if list.len() < 256 && list.last().is_none_or(|&p| p < MAX_POSITION) {
            list.push(pos.min(MAX_POSITION));
        }
    }
    let mut out = String::new();
    for (tok, list) in positions {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&quote_lexeme(tok));
        out.push(':');
        for (i, p) in list.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let _ = write!(out, "{p}");
        }
    }
    (out, i64::try_from(title.len() + content.len()).unwrap_or(i64::MAX))
}

/// Terms mode's analyzed terms of the title, and of the title and content together: what the
/// file store's index holds in its `title_terms` and `any_terms` fields (`index/schema.rs`),
/// distinct, in first-occurrence order. A term longer than a lexeme may be (2,047 bytes) is
/// left out: no step names such a word, and `array_to_tsvector` would refuse the row.
pub(crate) fn term_arrays(title: &str, content: &str) -> (Vec<String>, Vec<String>) {
    let fit = |terms: Vec<String>| -> Vec<String> {
        terms.into_iter().filter(|t| fits_lexeme(t)).collect()
    };
    let title_terms = fit(analyze_unique(title));
    let any_terms = fit(analyze_unique(&format!("{title}\n{content}")));
    (title_terms, any_terms)
}

/// `text` with each NUL character (which PostgreSQL's `text` and `jsonb` refuse) shown as
/// U+2400 ␀: for what is kept to be read (a run's report, a journal's reasoning), never for an
/// observation's text, which is refused instead.
pub(crate) fn shown_nul(text: &str) -> std::borrow::Cow<'_, str> {
    if text.contains('\0') {
        std::borrow::Cow::Owned(text.replace('\0', "\u{2400}"))
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// [`shown_nul`] for every string and key of a JSON value.
pub(crate) fn json_shown_nul(value: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::String(s) => Value::String(shown_nul(s).into_owned()),
        Value::Array(items) => Value::Array(items.iter().map(json_shown_nul).collect()),
        Value::Object(map) => Value::Object(
            map.iter().map(|(k, v)| (shown_nul(k).into_owned(), json_shown_nul(v))).collect(),
        ),
        other => other.clone(),
    }
}

/// Whether `tok` can be a `tsvector` lexeme (PostgreSQL refuses words over 2,047 bytes).
pub(crate) fn fits_lexeme(tok: &str) -> bool {
    tok.len() <= MAX_LEXEME_BYTES
}

/// A lexeme quoted for `tsvector`/`tsquery` input: single quotes, `'` and `\` escaped.
pub(crate) fn quote_lexeme(tok: &str) -> String {
    let mut out = String::with_capacity(tok.len() + 2);
    out.push('\'');
    for c in tok.chars() {
        if c == '\'' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('\'');
    out
}

/// The `tsquery` literal of a phrase of folded tokens: `'a' <-> 'b' <-> 'c'` (what
/// `phraseto_tsquery` builds, from curator's tokens instead of PostgreSQL's parser).
pub(crate) fn phrase_query(tokens: &[String]) -> String {
    tokens.iter().map(|t| quote_lexeme(t)).collect::<Vec<_>>().join(" <-> ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_phrase_vector_keeps_fields_apart_and_counts_tokens() {
        let (tsv, len) = phrase_vector("Login page", "The LOGIN button, é!");
        assert_eq!(len, 6);
        assert_eq!(tsv, "'button':6 'e':7 'login':1,5 'page':2 'the':4");
    }

    #[test]
    fn lexemes_are_quoted_and_phrases_joined() {
        assert_eq!(quote_lexeme("it's"), r"'it\'s'");
        assert_eq!(quote_lexeme(r"a\b"), r"'a\\b'");
        assert_eq!(phrase_query(&["click".into(), "save".into()]), "'click' <-> 'save'");
    }

    #[test]
    fn positions_are_clamped_and_capped() {
        let body = "w ".repeat(20_000);
        let (tsv, len) = phrase_vector("t", &body);
        assert_eq!(len, 20_001);
        assert_eq!(tsv.matches(',').count(), 255, "at most 256 positions per lexeme");
        assert!(tsv.starts_with("'t':1 'w':3,4,"));
    }
}
