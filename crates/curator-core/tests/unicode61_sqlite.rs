//! Phrase mode's tokenizer against SQLite's FTS5 `unicode61` itself, through python3's
//! `sqlite3` module (agent-qa tokenizes with it, so what it calls a word is the fact to match).
//!
//! The per-code-point tables must be what SQLite says for every code point
//! (`scripts/unicode61_tables.py --check`), and random text mixing scripts, combining marks,
//! separators and case must give SQLite's terms in SQLite's order. `./scripts/test` installs
//! python3; without it these tests fail rather than pass unseen.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use curator_core::fts::token_texts;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn the_tables_are_what_sqlite_says_for_every_code_point() {
    let out = Command::new("python3")
        .current_dir(workspace())
        .args([
            "scripts/unicode61_tables.py",
            "--check",
            "crates/curator-core/src/unicode61/tables.rs",
        ])
        .output()
        .expect("python3 runs (./scripts/test installs it)");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Indexes each line of stdin (a JSON string) as one FTS5 row and prints its terms in order.
const SQLITE_TERMS: &str = r#"
import json, sqlite3, sys
db = sqlite3.connect(":memory:")
db.execute("create virtual table t using fts5(x, tokenize='unicode61')")
db.execute("create virtual table v using fts5vocab(t, 'instance')")
texts = [json.loads(line) for line in sys.stdin]
db.executemany("insert into t(rowid, x) values (?, ?)", list(enumerate(texts, 1)))
terms = {}
for term, doc, offset in db.execute("select term, doc, offset from v order by doc, offset"):
    terms.setdefault(doc, []).append(term)
for i in range(1, len(texts) + 1):
    print(json.dumps(terms.get(i, [])))
"#;

/// Characters that make words differ between tokenizers: ASCII of every kind, Latin with
/// diacritics, Greek with tonos and final sigma, Cyrillic ё й, the folds that are not
/// lowercasing (ſ µ İ ẞ), combining marks inside and outside FTS5's diacritic mask, CJK,
/// Devanagari with a vowel sign, Arabic digits, emoji, private use, zero-width characters.
const POOL: &[char] = &[
    'a', 'Z', 'q', '7', '_', '-', '.', ' ', '\'', '"', '/', '\t', 'é', 'É', 'ß', 'ñ', 'Ø', 'ǖ',
    'ά', 'Σ', 'ς', 'σ', 'Ω', 'ё', 'Ё', 'й', 'Ж', 'ſ', 'µ', 'İ', 'ı', 'ẞ', '\u{300}', '\u{301}',
    '\u{308}', '\u{327}', '\u{341}', '\u{36F}', '\u{20D7}', '字', '語', 'カ', '한', 'क', '\u{93F}',
    '\u{966}', '٣', '😀', '\u{E000}', '\u{200B}', '\u{FEFF}', '\u{A0}', 'ǅ', 'Ⅻ', '①', 'ﬁ',
];

#[test]
fn random_text_gives_sqlites_terms_in_order() {
    let mut rng = StdRng::seed_from_u64(61);
    let texts: Vec<String> = (0..4000)
        .map(|_| {
            let len = rng.random_range(1..14);
            (0..len).map(|_| POOL[rng.random_range(0..POOL.len())]).collect()
        })
        .collect();
    let mut child = Command::new("python3")
        .args(["-c", SQLITE_TERMS])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 runs (./scripts/test installs it)");
    {
        let mut stdin = child.stdin.take().unwrap();
        for text in &texts {
            writeln!(stdin, "{}", serde_json::to_string(text).unwrap()).unwrap();
        }
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let sqlite: Vec<Vec<String>> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(sqlite.len(), texts.len());
    let differ: Vec<String> = texts
        .iter()
        .zip(&sqlite)
        .filter(|(text, terms)| token_texts(text) != **terms)
        .map(|(text, terms)| format!("{text:?}: curator {:?}, SQLite {terms:?}", token_texts(text)))
        .collect();
    assert!(
        differ.is_empty(),
        "{} of {} differ:\n{}",
        differ.len(),
        texts.len(),
        differ.join("\n")
    );
}
