//! Migrations: applied once, idempotent, a newer database refused with a clear error.

use curator_core::Tier;
use curator_pg::testing::test_database;
use curator_pg::{PgError, PgOptions, PgStore, SCHEMA_VERSION};
use curator_store::Store;
use curator_store::index::QueryMode;

use crate::search::{request, sel};
use crate::util::scope;

/// The ids `text` finds in the `acme` product in `mode` (any trust).
fn search_acme(store: &PgStore, text: &str, mode: QueryMode) -> Vec<String> {
    let request = request(text, mode, vec![sel(Tier::Products, "acme", None)]);
    store.search(&request).unwrap().into_iter().map(|h| h.id).collect()
}

#[test]
fn migrations_apply_once_and_are_idempotent() {
    let db = test_database().unwrap();
    let unmigrated =
        PgStore::connect(db.url(), PgOptions { migrate: false, ..Default::default() }).unwrap();
    let status = unmigrated.migrations_status().unwrap();
    assert_eq!(status.database_version, 0);
    assert_eq!(status.binary_version, SCHEMA_VERSION);
    assert_eq!(status.pending().count(), SCHEMA_VERSION as usize);
    assert_eq!(unmigrated.migrate().unwrap(), (1..=SCHEMA_VERSION).collect::<Vec<_>>());
    assert!(unmigrated.migrate().unwrap().is_empty(), "second run applies nothing");

    // Opening again (migrate on) applies nothing and changes nothing.
    let store = PgStore::connect(db.url(), PgOptions::default()).unwrap();
    let status = store.migrations_status().unwrap();
    assert_eq!(status.database_version, SCHEMA_VERSION);
    assert_eq!(status.pending().count(), 0);
    assert!(status.migrations.iter().all(|m| m.applied_at.is_some() && m.checksum.is_some()));
}

#[test]
fn concurrent_openers_apply_each_migration_once() {
    let db = test_database().unwrap();
    let url = db.url().to_owned();
    let handles: Vec<_> = (0..6)
        .map(|_| {
            let url = url.clone();
            std::thread::spawn(move || PgStore::connect(&url, PgOptions::default()).map(drop))
        })
        .collect();
    for h in handles {
        h.join().unwrap().unwrap();
    }
    let store = PgStore::connect(&url, PgOptions::default()).unwrap();
    assert_eq!(store.migrations_status().unwrap().migrations.len(), SCHEMA_VERSION as usize);
}

#[test]
fn a_database_newer_than_the_binary_is_refused() {
    let db = test_database().unwrap();
    let store = PgStore::connect(db.url(), PgOptions::default()).unwrap();
    store.execute_for_tests(&format!(
        "INSERT INTO schema_version (version, name, checksum) VALUES ({}, 'from_the_future', 'x')",
        SCHEMA_VERSION + 1
    ));
    for migrate in [true, false] {
        let err =
            PgStore::connect(db.url(), PgOptions { migrate, ..Default::default() }).unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, PgError::SchemaTooNew { .. }), "{msg}");
        assert!(
            msg.contains(&format!("schema version {}", SCHEMA_VERSION + 1))
                && msg.contains("upgrade curator"),
            "{msg}"
        );
    }
}

#[test]
fn an_edited_migration_is_refused() {
    let db = test_database().unwrap();
    let store = PgStore::connect(db.url(), PgOptions::default()).unwrap();
    store.execute_for_tests("UPDATE schema_version SET checksum = 'edited' WHERE version = 1");
    let err = PgStore::connect(db.url(), PgOptions::default()).unwrap_err();
    assert!(matches!(err, PgError::ChecksumMismatch { version: 1, .. }), "{err}");
}

#[test]
fn a_bad_url_and_an_unreachable_server_are_errors_not_panics() {
    let err = PgStore::connect("postgres://u@h:notaport/db", PgOptions::default()).unwrap_err();
    assert!(matches!(err, PgError::Config(_)), "{err}");
    let options = PgOptions { timeout: std::time::Duration::from_secs(2), ..Default::default() };
    let err = PgStore::connect("postgres://nobody:secret@127.0.0.1:1/none", options).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, PgError::Connect { .. }), "{msg}");
    assert!(msg.contains("127.0.0.1:1/none") && !msg.contains("secret"), "{msg}");
}

#[test]
fn migration_5_rebuilds_phrase_vectors_with_sqlites_unicode61_folds() {
    use curator_store::Action;

    use crate::util::observation;

    let db = test_database().unwrap();
    let store = PgStore::connect(db.url(), PgOptions::default()).unwrap();
    let greek = observation("greek", "Σελίδα σύνδεσης", "Η φόρμα φορτώνει αργά.");
    let ascii = observation("ascii", "Login page", "The form loads slowly.");
    for o in [&greek, &ascii] {
        store
            .transact(None, &mut |tx| {
                tx.put(Tier::Products, &scope("acme"), o, Action::Add, "seed")
            })
            .unwrap();
    }
    let find = |store: &PgStore, text: &str| search_acme(store, text, QueryMode::Phrase);
    assert_eq!(find(&store, "Σελίδα"), [greek.id.to_string()]);
    // A database written before version 5 holds vectors of the old folding (accents stripped
    // from Greek): the Greek row is not found by its own title, until the migration runs.
    store.execute_for_tests(&format!(
        "UPDATE observations SET phrase_tsv = 'σελιδα:1 συνδεσης:2'::tsvector WHERE id = '{}';
         DELETE FROM schema_version WHERE version = 5",
        greek.id
    ));
    assert!(find(&store, "Σελίδα").is_empty());
    let reopened = PgStore::connect(db.url(), PgOptions::default()).unwrap();
    assert_eq!(reopened.migrations_status().unwrap().database_version, SCHEMA_VERSION);
    assert_eq!(find(&reopened, "Σελίδα σύνδεσης"), [greek.id.to_string()]);
    assert!(find(&reopened, "σελιδα").is_empty(), "SQLite keeps Greek accents");
    assert_eq!(find(&reopened, "login page"), [ascii.id.to_string()]);
}

#[test]
fn migration_6_fills_the_term_arrays_of_rows_already_stored() {
    use curator_store::Action;

    use crate::util::observation;

    let db = test_database().unwrap();
    let store = PgStore::connect(db.url(), PgOptions::default()).unwrap();
    let login = observation("login", "Login form loads slowly", "Wait for the spinner to go.");
    let cart = observation("cart", "Cart badge lags", "The count updates after a second.");
    let coupon = observation("coupon", "Coupon field hides", "Open Have a code? first.");
    for o in [&login, &cart, &coupon] {
        store
            .transact(None, &mut |tx| {
                tx.put(Tier::Products, &scope("acme"), o, Action::Add, "seed")
            })
            .unwrap();
    }
    let find = |store: &PgStore, text: &str| search_acme(store, text, QueryMode::Terms);
    let before = find(&store, "Open the login form");
    assert_eq!(before, [login.id.to_string()]);
    // A version 5 database: rows without term arrays, PostgreSQL's English vector instead.
    let v5_columns = "DROP COLUMN terms_tsv, DROP COLUMN title_terms, DROP COLUMN any_terms,
         ADD COLUMN search_tsv tsvector GENERATED ALWAYS AS (
             setweight(to_tsvector('english'::regconfig, title), 'A')
             || setweight(to_tsvector('english'::regconfig, content), 'B')) STORED";
    store.execute_for_tests(&format!(
        "ALTER TABLE observations {v5_columns};
         ALTER TABLE pending_observations {v5_columns};
         DELETE FROM schema_version WHERE version = 6"
    ));
    let reopened = PgStore::connect(db.url(), PgOptions::default()).unwrap();
    assert_eq!(reopened.migrations_status().unwrap().database_version, SCHEMA_VERSION);
    assert_eq!(find(&reopened, "Open the login form"), before, "the rows were analyzed again");
    assert_eq!(find(&reopened, "Apply a coupon"), [coupon.id.to_string()]);
}

#[test]
fn migration_7_splits_the_unspaced_text_of_rows_already_stored() {
    use curator_store::Action;

    use crate::util::observation;

    let db = test_database().unwrap();
    let store = PgStore::connect(db.url(), PgOptions::default()).unwrap();
    let login = observation("login", "登录按钮保持禁用", "输入手机号后按钮才可点击。");
    let ascii = observation("ascii", "Login form loads slowly", "Wait for the spinner to go.");
    for o in [&login, &ascii] {
        store
            .transact(None, &mut |tx| {
                tx.put(Tier::Products, &scope("acme"), o, Action::Add, "seed")
            })
            .unwrap();
    }
    let find = |store: &PgStore, text: &str| search_acme(store, text, QueryMode::Terms);
    assert_eq!(find(&store, "点击登录按钮"), [login.id.to_string()]);
    // A version 6 database: the clause was one term.
    store.execute_for_tests(&format!(
        "UPDATE observations SET title_terms = '{{登录按钮保持禁用}}',
             any_terms = '{{登录按钮保持禁用,输入手机号后按钮才可点击}}' WHERE id = '{}';
         DELETE FROM schema_version WHERE version = 7",
        login.id
    ));
    assert!(find(&store, "点击登录按钮").is_empty());
    let reopened = PgStore::connect(db.url(), PgOptions::default()).unwrap();
    assert_eq!(reopened.migrations_status().unwrap().database_version, SCHEMA_VERSION);
    assert_eq!(find(&reopened, "点击登录按钮"), [login.id.to_string()]);
    assert_eq!(find(&reopened, "Open the login form"), [ascii.id.to_string()]);
}
