//! Unit tests of the file store's private rules; the end-to-end ones are in `tests/store/`.

use curator_core::codec::ParseError;

use super::*;

#[test]
fn filters_match_tier_and_scope_and_unknown_scopes_only_unfiltered() {
    let scope = ScopeName::new("p").unwrap();
    let any = ListFilter::default();
    let products = ListFilter { tier: Some(Tier::Products), scope: None };
    let p = ListFilter { tier: None, scope: Some(scope.clone()) };
    assert!(matches(&any, Tier::Tests, None));
    assert!(matches(&products, Tier::Products, Some(&scope)));
    assert!(!matches(&products, Tier::Tests, Some(&scope)));
    assert!(matches(&p, Tier::Tests, Some(&scope)));
    // A problem found at tier level (no scope) is not part of a scope's listing.
    assert!(!matches(&p, Tier::Tests, None));
}

#[test]
fn refusals_become_errors_naming_the_path() {
    let path = Path::new("/m/tests/t/obs_a.md");
    let parse = refused(path, ProblemKind::Parse(ParseError::BlankBody));
    assert!(matches!(parse, Error::Parse { .. }));
    assert_eq!(
        parse.to_string(),
        "/m/tests/t/obs_a.md: Observation markdown body is missing or blank"
    );
    let big = refused(path, ProblemKind::TooLarge { size: 2, limit: 1 });
    assert_eq!(big.to_string(), "/m/tests/t/obs_a.md: too large: 2 bytes (limit 1)");
}

#[test]
fn misses_are_trusted_only_after_a_walk_under_the_lock() {
    let tmp = tempfile::tempdir().unwrap();
    FileStore::init(tmp.path()).unwrap();
    let store = FileStore::open(tmp.path(), FileStoreOptions::default()).unwrap();
    let id = ObservationId::generate();
    let text = format!(
        "---\nid: {id}\ntitle: T\ntrust: 0.5\ncreated: 2026-04-10T12:00:00.000Z\n\
         last_confirmed: 2026-04-10T12:00:00.000Z\nconfirmed_count: 0\ncontradicted_count: 0\n\
         source_test: t_x\n---\nBody\n"
    );
    let write_behind_our_back = || {
        let dir = tmp.path().join("tests/t_a");
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join(format!("{id}.md")), &text).unwrap();
    };
    let mut tx = FileTransaction::new(&store, None);
    assert!(tx.find(&id).unwrap().is_none(), "first miss walks");
    write_behind_our_back();
    // Under the lock nobody else writes, so the second miss costs no walk.
    assert!(tx.find(&id).unwrap().is_none());
    // A new transaction (a new lock) starts untrusting again.
    let mut tx = FileTransaction::new(&store, None);
    assert!(tx.find(&id).unwrap().is_some());
}

#[test]
fn a_miss_probes_the_disk_until_the_index_is_rebuilt_under_the_lock() {
    let tmp = tempfile::tempdir().unwrap();
    FileStore::init(tmp.path()).unwrap();
    let store = FileStore::open(tmp.path(), FileStoreOptions::default()).unwrap();
    let scope = ScopeName::new("t_a").unwrap();
    // A listing built the index before the lock was taken.
    store.list(&ListFilter { tier: Some(Tier::Tests), scope: Some(scope) }).unwrap();
    let (absent, written) = (ObservationId::generate(), ObservationId::generate());
    let text = format!(
        "---\nid: {written}\ntitle: T\ntrust: 0.5\ncreated: 2026-04-10T12:00:00.000Z\n\
         last_confirmed: 2026-04-10T12:00:00.000Z\nconfirmed_count: 0\ncontradicted_count: 0\n\
         source_test: t_x\n---\nBody\n"
    );
    let mut tx = FileTransaction::new(&store, None);
    let rebuilds = store.index().rebuilds();
    assert!(tx.find(&absent).unwrap().is_none(), "a probe, not a walk");
    let dir = tmp.path().join("tests/t_b");
    fs::create_dir_all(&dir).unwrap();
    // Under the lock nobody else writes, so an id probed absent is not probed again.
    fs::write(dir.join(format!("{absent}.md")), text.replace(written.as_str(), absent.as_str()))
        .unwrap();
    assert!(tx.find(&absent).unwrap().is_none());
    assert_eq!(store.index().rebuilds(), rebuilds);
    // The index was not rebuilt under this lock, so a miss for another id is checked: found.
    fs::write(dir.join(format!("{written}.md")), &text).unwrap();
    assert!(tx.find(&written).unwrap().is_some());
    assert_eq!(store.index().rebuilds(), rebuilds + 1);
}
