//! A memory root in a temp folder that writes observation files as agent-qa does.

use std::path::{Path, PathBuf};

use curator_core::{ScopeName, SnapshotEntry, Tier};
use curator_store::index::{
    Hit, MemoryIndex, QueryMode, ScopeDir, ScopeSelector, SearchRequest, SuiteMatch,
};

/// Letters for building distinct canonical ids: `id(n)` sorts by `n` for n < 26.
const LETTERS: &[u8] = b"abcdefghijklmnopqrstuvwxyz";

/// A canonical observation id whose first word is `aa`, `bb`, … so file order is `n` order.
pub(crate) fn id(n: usize) -> String {
    let c = LETTERS[n % 26] as char;
    let d = LETTERS[n / 26 % 26] as char;
    format!("obs_{d}{c}-lamp-lake-moon-reef-sand-tide-wave-wind-yarn")
}

pub(crate) struct Root {
    pub(crate) dir: tempfile::TempDir,
}

/// One observation to write.
#[derive(Clone)]
pub(crate) struct Obs<'a> {
    pub(crate) id: String,
    pub(crate) title: &'a str,
    pub(crate) content: &'a str,
    pub(crate) trust: f64,
    pub(crate) suite: Option<(u64, Vec<SnapshotEntry>)>,
}

pub(crate) fn obs<'a>(n: usize, title: &'a str, content: &'a str, trust: f64) -> Obs<'a> {
    Obs { id: id(n), title, content, trust, suite: None }
}

pub(crate) fn entry(test: &str, id: &str) -> SnapshotEntry {
    SnapshotEntry { test: test.to_owned(), id: id.to_owned() }
}

/// The file agent-qa's writer produces for `o` (§1.6), titles double-quoted to stay plain YAML.
pub(crate) fn file_text(o: &Obs<'_>) -> String {
    let mut s = format!(
        "---\nid: {}\ntitle: {:?}\ntrust: {}\ncreated: 2026-04-10T12:00:00.000Z\n\
         last_confirmed: 2026-04-10T12:00:00.000Z\nconfirmed_count: 0\ncontradicted_count: 0\n\
         source_test: t_test\n",
        o.id, o.title, o.trust
    );
    if let Some((position, snapshot)) = &o.suite {
        s.push_str(&format!("position: {position}\nsuite_snapshot:\n"));
        for e in snapshot {
            s.push_str(&format!("  - test: {}\n    id: {}\n", e.test, e.id));
        }
    }
    s.push_str(&format!("---\n{}\n", o.content));
    s
}

impl Root {
    pub(crate) fn new() -> Self {
        Root { dir: tempfile::tempdir().expect("temp dir") }
    }

    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }

    pub(crate) fn put(&self, tier: &str, scope: &str, o: &Obs<'_>) -> PathBuf {
        self.write_raw(tier, scope, &format!("{}.md", o.id), &file_text(o))
    }

    pub(crate) fn write_raw(&self, tier: &str, scope: &str, name: &str, text: &str) -> PathBuf {
        let dir = self.path().join(tier).join(scope);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    pub(crate) fn index(&self) -> MemoryIndex {
        MemoryIndex::open(self.path()).expect("index opens")
    }
}

pub(crate) fn sel(tier: Tier, scope: &str) -> ScopeSelector {
    ScopeSelector { dir: ScopeDir::new(tier, ScopeName::new(scope).unwrap()), suite: None }
}

pub(crate) fn suite_sel(scope: &str, position: u64, snapshot: Vec<SnapshotEntry>) -> ScopeSelector {
    ScopeSelector {
        dir: ScopeDir::new(Tier::Suites, ScopeName::new(scope).unwrap()),
        suite: Some(SuiteMatch { position, snapshot }),
    }
}

/// A request with agent-qa's defaults (minTrust 0.3, 3 injections).
pub(crate) fn request(scopes: Vec<ScopeSelector>, text: &str, mode: QueryMode) -> SearchRequest {
    SearchRequest {
        scopes,
        text: text.to_owned(),
        mode,
        min_trust: 0.3,
        max_results: 3,
        min_relevance: curator_store::index::DEFAULT_MIN_RELEVANCE,
        keep_ratio: curator_store::index::DEFAULT_KEEP_RATIO,
    }
}

pub(crate) fn ids(hits: &[Hit]) -> Vec<String> {
    hits.iter().map(|h| h.id.clone()).collect()
}
