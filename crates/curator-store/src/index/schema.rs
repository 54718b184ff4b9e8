//! What one indexed file is: the tantivy schema, its version and its tokenizers (§3.1).
//!
//! Every file the listing rule (§1.2) admits becomes exactly one document keyed by its path
//! relative to the root: a *served* document (parsed, passed the scanner; it carries a
//! `scope_key` and can be found by a query) or a *problem* document (it carries only its path,
//! stamp and reason, so the next refresh does not parse it again and `lint` can list it).
//! Bumping [`SCHEMA_VERSION`] forces every existing index to be rebuilt on open; it must change
//! whenever a field, a tokenizer or the meaning of a stored value changes.
//!
//! The text is indexed **per folder**: every token is prefixed with its document's folder key
//! ([`scoped_term`]), so the postings of `products/acme␁login` hold only that folder's
//! documents. A query reads the postings of the step's own folders instead of walking the
//! whole root's postings against a scope filter — at 100k observations a product folder is
//! about 2 % of the index, and that walk was most of a terms-mode query (BENCHMARKS.md
//! "Retrieval").

use tantivy::Index;
use tantivy::schema::{
    FAST, Field, INDEXED, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing, TextOptions,
};
use tantivy::tokenizer::{
    Language, Stemmer, StopWordFilter, TextAnalyzer, Token, TokenStream, Tokenizer,
};

/// Version of the schema and analysis; stored as the commit payload of every commit.
pub(crate) const SCHEMA_VERSION: u32 = 6;

/// The commit payload that marks an index as written by this schema version.
pub(crate) fn payload() -> String {
    format!("curator-index/v{SCHEMA_VERSION}")
}

/// Separates the folder key from the token in an indexed term: a control character, which
/// neither a scope name nor a token can contain, so no two (folder, token) pairs share a term.
pub(crate) const SCOPE_SEP: char = '\u{1}';

/// The indexed form of `token` in the folder `dir_key` (`tier/scope`).
pub(crate) fn scoped_term(dir_key: &str, token: &str) -> String {
    format!("{dir_key}{SCOPE_SEP}{token}")
}

/// The value stored in a scoped text field: the folder key, [`SCOPE_SEP`], then the text. The
/// scoped tokenizers take the key off and prefix every token with it, in tantivy's indexing
/// thread (handing tantivy pre-tokenized text instead cost a JSON round trip per value).
pub(crate) fn scoped_value(dir_key: &str, text: &str) -> String {
    format!("{dir_key}{SCOPE_SEP}{text}")
}

/// agent-qa's `unicode61` tokens with positions, scoped: the phrase fields.
pub(crate) const SCOPED_UNICODE61: &str = "curator_scoped_unicode61";
/// [`terms_analyzer`] tokens, scoped: the terms fields.
pub(crate) const SCOPED_TERMS: &str = "curator_scoped_terms";

/// Registers curator's tokenizers; needed on every opened or created index.
pub(crate) fn register_tokenizers(index: &Index) {
    let tokenizers = index.tokenizers();
    tokenizers.register(SCOPED_UNICODE61, TextAnalyzer::from(Scoped(Inner::Unicode61)));
    tokenizers.register(SCOPED_TERMS, TextAnalyzer::from(Scoped(Inner::Terms(terms_analyzer()))));
}

/// What a [`Scoped`] tokenizer runs on the text after the folder key.
#[derive(Clone)]
enum Inner {
    Unicode61,
    Terms(TextAnalyzer),
}

/// Splits a [`scoped_value`] and prefixes each token of its text with the folder key.
#[derive(Clone)]
struct Scoped(Inner);

impl Tokenizer for Scoped {
    type TokenStream<'a> = TokenList;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Self::TokenStream<'a> {
        // The key never holds the separator (a control character), so the first one ends it;
        // any later one belongs to the text.
        let (key, rest) = text.split_once(SCOPE_SEP).unwrap_or(("", text));
        let mut tokens = Vec::new();
        let mut push = |position: usize, token: &str| {
            tokens.push(Token {
                offset_from: 0,
                offset_to: 0,
                position,
                text: scoped_term(key, token),
                position_length: 1,
            });
        };
        match &mut self.0 {
            Inner::Unicode61 => {
                for (position, t) in curator_core::fts::tokenize(rest).into_iter().enumerate() {
                    push(position, &t.text);
                }
            }
            Inner::Terms(analyzer) => {
                analyzer.token_stream(rest).process(&mut |t| push(t.position, &t.text));
            }
        }
        TokenList { tokens, next: 0 }
    }
}

/// The `suite_key` of a served document in a suite folder without `position` (§3.2: always seen).
pub(crate) const SUITE_BASE: &str = "base";

/// Handles to every field of the schema.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fields {
    /// `tier/scope/file.md`, the document key (exact term, fast, stored).
    pub(crate) path: Field,
    /// `tier/scope` of every document, served or problem: what a refresh of one folder reads.
    pub(crate) dir: Field,
    /// `tier/scope` of served documents only: what a query filters on.
    pub(crate) scope_key: Field,
    /// Suite folder documents: [`SUITE_BASE`] or the key of their (position, snapshot).
    pub(crate) suite_key: Field,
    /// The file's metadata fingerprint (size, mtime, ctime, inode).
    pub(crate) stamp: Field,
    pub(crate) id: Field,
    /// The title and content as written (stored only).
    pub(crate) title: Field,
    pub(crate) content: Field,
    /// agent-qa's `unicode61` tokens (case and simple diacritics folded) with positions,
    /// scoped: phrase mode.
    pub(crate) title_phrase: Field,
    pub(crate) content_phrase: Field,
    /// [`terms_analyzer`] tokens, scoped, documents only: terms mode. `any_terms` holds the
    /// title's and the content's, so prefixes are expanded and document frequencies counted
    /// in one field.
    pub(crate) title_terms: Field,
    pub(crate) any_terms: Field,
    pub(crate) trust: Field,
    /// `unicode61` tokens in title + content: FTS5's row length `D`.
    pub(crate) len: Field,
    pub(crate) position: Field,
    /// The suite snapshot as JSON (`[{"test","id"}]`), stored for exact matching.
    pub(crate) snapshot: Field,
    /// Why a problem document is not served.
    pub(crate) problem: Field,
}

/// Builds the schema and the handles to its fields.
pub(crate) fn build_schema() -> (Schema, Fields) {
    let mut b = Schema::builder();
    let text = |tokenizer: &str, record: IndexRecordOption| {
        TextOptions::default().set_indexing_options(
            TextFieldIndexing::default().set_tokenizer(tokenizer).set_index_option(record),
        )
    };
    let fields = Fields {
        path: b.add_text_field("path", STRING | STORED | FAST),
        dir: b.add_text_field("dir", STRING),
        scope_key: b.add_text_field("scope_key", STRING),
        suite_key: b.add_text_field("suite_key", STRING),
        stamp: b.add_u64_field("stamp", FAST),
        id: b.add_text_field("id", STRING | STORED),
        title: b.add_text_field("title", STORED),
        content: b.add_text_field("content", STORED),
        title_phrase: b.add_text_field(
            "title_phrase",
            text(SCOPED_UNICODE61, IndexRecordOption::WithFreqsAndPositions),
        ),
        content_phrase: b.add_text_field(
            "content_phrase",
            text(SCOPED_UNICODE61, IndexRecordOption::WithFreqsAndPositions),
        ),
        title_terms: b.add_text_field("title_terms", text(SCOPED_TERMS, IndexRecordOption::Basic)),
        any_terms: b.add_text_field("any_terms", text(SCOPED_TERMS, IndexRecordOption::Basic)),
        trust: b.add_f64_field("trust", STORED | FAST),
        len: b.add_u64_field("len", FAST | STORED),
        position: b.add_u64_field("position", STORED | INDEXED),
        snapshot: b.add_text_field("snapshot", STORED),
        problem: b.add_text_field("problem", STORED),
    };
    (b.build(), fields)
}

/// Finds the handles in an opened index's schema; `None` if a field is missing (an index from
/// another schema, to be rebuilt).
pub(crate) fn fields_of(schema: &Schema) -> Option<Fields> {
    let f = |name: &str| schema.get_field(name).ok();
    Some(Fields {
        path: f("path")?,
        dir: f("dir")?,
        scope_key: f("scope_key")?,
        suite_key: f("suite_key")?,
        stamp: f("stamp")?,
        id: f("id")?,
        title: f("title")?,
        content: f("content")?,
        title_phrase: f("title_phrase")?,
        content_phrase: f("content_phrase")?,
        title_terms: f("title_terms")?,
        any_terms: f("any_terms")?,
        trust: f("trust")?,
        len: f("len")?,
        position: f("position")?,
        snapshot: f("snapshot")?,
        problem: f("problem")?,
    })
}

/// The analyzer of the `terms` mode, for the observations and the query text. Schema v6 split
/// unspaced scripts into bigrams ([`super::cjk`]).
pub(crate) fn terms_analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(TermsWords)
        .filter(StopWordFilter::remove(STOP_WORDS.iter().map(|w| (*w).to_owned())))
        .filter(Stemmer::new(Language::English))
        .filter(StopWordFilter::remove(STEP_FILLER_STEMS.iter().map(|w| (*w).to_owned())))
        .build()
}

/// English function words plus the filler of step sentences: they match everything, so they
/// would only lift unrelated memory over the relevance floor. Folded forms (no apostrophes:
/// the tokenizer splits "don't" into "don" and "t"). Schema v2 added the spatial prepositions
/// ("on", "up", "down", "over", …): "on" alone was the shared word of most irrelevant matches
/// on `eval/dev` ("click the heart icon *on* the product card").
const STOP_WORDS: &[&str] = &[
    "a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any",
    "are", "as", "at", "be", "been", "before", "being", "below", "between", "both", "but", "by",
    "can", "could", "d", "did", "do", "does", "doing", "don", "down", "during", "each", "few",
    "for", "from", "further", "had", "has", "have", "having", "he", "her", "here", "hers", "him",
    "his", "how", "i", "if", "in", "into", "is", "it", "its", "itself", "just", "ll", "m", "me",
    "more", "most", "my", "no", "nor", "not", "now", "of", "off", "on", "once", "only", "or",
    "other", "our", "ours", "out", "over", "own", "re", "s", "same", "she", "should", "so", "some",
    "such", "t", "than", "that", "the", "their", "theirs", "them", "then", "there", "these",
    "they", "this", "those", "through", "to", "too", "under", "until", "up", "ve", "very", "was",
    "we", "were", "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with",
    "would", "you", "your", "yours",
];

/// Stems of step filler: the verbs of almost every UI step ("click", "verify", "wait"), which
/// name no fact about the application; removed after stemming so every inflection goes
/// ("clicked", "displays"). Schema v2 keeps the UI nouns "button", "page" and "screen": they
/// name *what* a step acts on ("the login button"), a pair like "login button" is the best
/// evidence an observation is about that control, and where they are common in a product's
/// memory the scoped IDF of terms mode already makes them weigh little (measured on
/// `eval/dev`: recall@3 0.898 → 0.908 at the same irrelevant-injection rate).
const STEP_FILLER_STEMS: &[&str] = &[
    "click", "tap", "press", "verifi", "check", "ensur", "make", "sure", "go", "navig", "wait",
    "see", "look", "view", "display", "show", "visibl", "appear", "new", "one", "everi",
];

/// The tokens of one text, handed out one by one (the tokenizer makes the whole list first).
#[derive(Debug)]
pub(crate) struct TokenList {
    tokens: Vec<Token>,
    next: usize,
}

/// The first stage of [`terms_analyzer`] and of the BM25 baseline: the tokens of
/// [`curator_core::fts::tokenize`] (so the index and the exact phrase scorer can never disagree
/// on what a token is), with every CJK run split into bigrams ([`super::cjk::split`]).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct TermsWords;

impl Tokenizer for TermsWords {
    type TokenStream<'a> = TokenList;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Self::TokenStream<'a> {
        let mut tokens = Vec::new();
        let mut push = |t: &curator_core::fts::Token, text: String| {
            let position = tokens.len();
            tokens.push(Token {
                offset_from: t.start,
                offset_to: t.end,
                position,
                text,
                position_length: 1,
            });
        };
        for mut t in curator_core::fts::tokenize(text) {
            // Most tokens hold no CJK character: they pass through without a copy.
            if t.text.chars().any(super::cjk::is_cjk) {
                for word in super::cjk::split(&t.text) {
                    push(&t, word);
                }
            } else {
                let text = std::mem::take(&mut t.text);
                push(&t, text);
            }
        }
        TokenList { tokens, next: 0 }
    }
}

impl TokenStream for TokenList {
    fn advance(&mut self) -> bool {
        self.next += 1;
        self.next <= self.tokens.len()
    }

    fn token(&self) -> &Token {
        &self.tokens[self.next - 1]
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.tokens[self.next - 1]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn analyze(mut analyzer: TextAnalyzer, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        analyzer.token_stream(text).process(&mut |t| out.push(t.text.clone()));
        out
    }

    #[test]
    fn first_stage_gives_the_core_tokens_with_positions() {
        let mut stream = TermsWords.token_stream("Café  résumé x_y");
        let mut got = Vec::new();
        while stream.advance() {
            got.push((stream.token().text.clone(), stream.token().position));
        }
        assert_eq!(
            got,
            [("cafe".into(), 0), ("resume".into(), 1), ("x".into(), 2), ("y".into(), 3)]
        );
    }

    #[test]
    fn terms_analyzer_drops_stop_words_and_stems() {
        assert_eq!(
            analyze(terms_analyzer(), "Clicked on the login button and waited for the modals"),
            ["login", "button", "modal"]
        );
        assert_eq!(analyze(terms_analyzer(), "Clicking Über-Menüs"), ["uber", "menus"]);
        assert_eq!(
            analyze(terms_analyzer(), "Tap 登录按钮 on iPhone手机"),
            ["登录", "录按", "按钮", "iphon", "手机"]
        );
    }

    #[test]
    fn scoped_tokenizers_prefix_every_token_with_the_folder_key() {
        let tokens = |inner: Inner, text: &str| {
            let mut got = Vec::new();
            let mut stream = Scoped(inner).token_stream(text);
            while stream.advance() {
                got.push((stream.token().text.clone(), stream.token().position));
            }
            got
        };
        let key = "products/a b";
        let value = scoped_value(key, "Café\u{1}menu opens");
        assert_eq!(
            tokens(Inner::Unicode61, &value),
            [
                (scoped_term(key, "cafe"), 0),
                (scoped_term(key, "menu"), 1),
                (scoped_term(key, "opens"), 2)
            ],
            "the first separator ends the key; a later one is text"
        );
        let terms: Vec<String> =
            tokens(Inner::Terms(terms_analyzer()), &scoped_value(key, "Clicked the login buttons"))
                .into_iter()
                .map(|(t, _)| t)
                .collect();
        assert_eq!(terms, [scoped_term(key, "login"), scoped_term(key, "button")]);
    }

    #[test]
    fn schema_fields_are_found_again_by_name() {
        let (schema, fields) = build_schema();
        let found = fields_of(&schema).expect("all fields");
        assert_eq!(found.path, fields.path);
        assert_eq!(found.problem, fields.problem);
    }
}
