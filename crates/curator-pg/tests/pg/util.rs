use curator_core::codec::parse_observation;
use curator_core::{Observation, ObservationId, ScopeName};
use curator_pg::testing::{TestDatabase, test_database};
use curator_pg::{PgOptions, PgStore};
use curator_store::{FileStore, FileStoreOptions};

/// A fresh database and a store opened (and migrated) on it.
pub(crate) fn pg_store() -> (TestDatabase, PgStore) {
    let db = test_database().expect("test database");
    let store = PgStore::connect(db.url(), PgOptions::default()).expect("connect");
    (db, store)
}

/// A fresh memory root and a file store on it.
pub(crate) fn file_store() -> (tempfile::TempDir, FileStore) {
    let dir = tempfile::tempdir().unwrap();
    FileStore::init(dir.path()).unwrap();
    let store = FileStore::open(dir.path(), FileStoreOptions::default()).unwrap();
    (dir, store)
}

pub(crate) fn scope(name: &str) -> ScopeName {
    ScopeName::new(name).unwrap()
}

/// A canonical id made of `word` repeated (stable across runs, so transcripts compare).
pub(crate) fn id(word: &str) -> ObservationId {
    ObservationId::parse(&format!("obs_{}", [word; 10].join("-"))).unwrap()
}

/// The text of a base observation as agent-qa writes it, plus `extra` frontmatter lines.
pub(crate) fn text(
    id: &ObservationId,
    title: &str,
    body: &str,
    trust: &str,
    extra: &str,
) -> String {
    format!(
        "---\nid: {id}\ntitle: {title}\ntrust: {trust}\ncreated: 2026-04-10T12:00:00.000Z\n\
         last_confirmed: 2026-04-10T12:00:00.000Z\nconfirmed_count: 0\n\
         contradicted_count: 0\nsource_test: t_x\n{extra}---\n{body}\n"
    )
}

pub(crate) fn observation(word: &str, title: &str, body: &str) -> Observation {
    let id = id(word);
    parse_observation(&text(&id, title, body, "0.5", ""), id.as_str()).unwrap()
}

/// A suite observation at `position` of a two-test suite.
pub(crate) fn suite_observation(word: &str, title: &str, body: &str, position: u64) -> Observation {
    let id = id(word);
    let extra = format!(
        "position: {position}\nsuite_snapshot:\n  - test: tests/a.yaml\n    id: t_a\n  - test: tests/b.yaml\n    id: t_b\n"
    );
    parse_observation(&text(&id, title, body, "0.6", &extra), id.as_str()).unwrap()
}
