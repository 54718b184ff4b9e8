//! Search: both modes give the file store index's hits on the same data (phrase mode its
//! scores too); both honour scopes, suite placement, min_trust and max_results; terms mode
//! puts phrase mode's hits first.

use std::collections::HashSet;

use curator_core::{SnapshotEntry, Tier};
use curator_pg::{PgStore, import_dir};
use curator_store::index::{
    DEFAULT_KEEP_RATIO, DEFAULT_MIN_RELEVANCE, Hit, QueryMode, ScopeDir, ScopeSelector,
    SearchRequest, SuiteMatch, search_files,
};
use curator_store::{Action, ListFilter, Store};

use crate::transfer::example_root;
use crate::util::{observation, pg_store, scope, suite_observation};

const SUITE: &str = "s_bolt-reef-flame-ginger-walnut-forest-jade-fossil-lagoon-daisy";
const TEST: &str = "t_lake-mint-harbor-kelp-river-moss-glade-cedar-iris-camel";

/// The snapshot the example's suite observations were written with.
fn example_snapshot(pg: &PgStore) -> Vec<SnapshotEntry> {
    let filter = ListFilter { tier: Some(Tier::Suites), scope: None };
    let listing = pg.list(&filter).unwrap();
    listing.observations.iter().find_map(|o| o.observation.suite.clone()).unwrap().suite_snapshot
}

pub(crate) fn request(text: &str, mode: QueryMode, scopes: Vec<ScopeSelector>) -> SearchRequest {
    SearchRequest {
        scopes,
        text: text.to_owned(),
        mode,
        min_trust: 0.0,
        max_results: 5,
        min_relevance: DEFAULT_MIN_RELEVANCE,
        keep_ratio: DEFAULT_KEEP_RATIO,
    }
}

pub(crate) fn sel(tier: Tier, name: &str, suite: Option<SuiteMatch>) -> ScopeSelector {
    ScopeSelector { dir: ScopeDir::new(tier, scope(name)), suite }
}

fn example_scopes(snapshot: &[SnapshotEntry], position: u64) -> Vec<ScopeSelector> {
    vec![
        sel(Tier::Products, "acme-shop", None),
        sel(Tier::Suites, SUITE, Some(SuiteMatch { position, snapshot: snapshot.to_vec() })),
        sel(Tier::Tests, TEST, None),
    ]
}

fn summary(hits: &[Hit]) -> Vec<(String, String)> {
    hits.iter().map(|h| (h.id.clone(), format!("{:.12}", h.score))).collect()
}

#[test]
fn phrase_mode_matches_the_file_store_index_hit_for_hit() {
    let (_db, pg) = pg_store();
    import_dir(&pg, &example_root(), &mut |_| {}).unwrap();
    let snapshot = example_snapshot(&pg);
    let mut compared = 0;
    for position in 0..3 {
        for text in [
            "Click Add to cart",
            "open the mini-cart drawer",
            "the order number",
            "Enter a valid postcode!",
            "login page",
            "cart",
            "seconds",
            "nothing like this anywhere",
        ] {
            let req = request(text, QueryMode::Phrase, example_scopes(&snapshot, position));
            let from_files = search_files(&example_root(), &req).unwrap();
            let from_pg = pg.search(&req).unwrap();
            assert_eq!(summary(&from_pg), summary(&from_files), "{text:?} at position {position}");
            compared += from_pg.len();
            for h in &from_pg {
                let expected = format!("{}/{}/{}.md", h.tier, h.scope, h.id);
                assert_eq!(h.path.to_str(), Some(expected.as_str()));
            }
        }
    }
    assert!(compared >= 10, "the queries found something to compare ({compared})");
}

#[test]
fn terms_mode_ranks_title_above_body_and_honours_every_filter() {
    let (_db, pg) = pg_store();
    let put = |tier, scope_name: &str, o: &curator_core::Observation| {
        pg.transact(None, &mut |tx| tx.put(tier, &scope(scope_name), o, Action::Add, "seed"))
            .unwrap();
    };
    let in_title = observation("apple", "Invoice download button", "Appears on the orders page.");
    let in_body =
        observation("birch", "Orders page layout", "An invoice download button sits here.");
    let mut low = observation("cedar", "Invoice download button again", "Also invoice download.");
    low.trust = 0.1;
    let elsewhere = observation("delta", "Invoice download button", "In another product.");
    let at_one = suite_observation("ember", "Invoice download in suite", "Position one only.", 1);
    let at_two = suite_observation("fable", "Invoice download in suite", "Position two only.", 2);
    let base = observation("grape", "Invoice download for the whole suite", "Base.");
    put(Tier::Products, "shop", &in_title);
    put(Tier::Products, "shop", &in_body);
    put(Tier::Products, "shop", &low);
    put(Tier::Products, "other", &elsewhere);
    put(Tier::Suites, "s_one", &at_one);
    put(Tier::Suites, "s_one", &at_two);
    put(Tier::Suites, "s_one", &base);
    // Other memory of both folders, so the step's words single out the rows above (a word
    // that every row holds names none of them: `index/terms.rs` rule 4).
    for (tier, folder, words) in [
        (Tier::Products, "shop", ["honey", "Search box suggestions"]),
        (Tier::Products, "shop", ["ivory", "Cart badge count"]),
        (Tier::Products, "shop", ["jelly", "Footer links"]),
        (Tier::Suites, "s_one", ["kiwis", "Checkout totals"]),
        (Tier::Suites, "s_one", ["lemon", "Shipping form"]),
        (Tier::Suites, "s_one", ["mango", "Coupon field"]),
    ] {
        put(tier, folder, &observation(words[0], words[1], "Unrelated."));
    }
    let snapshot = at_one.suite.clone().unwrap().suite_snapshot;
    let suite_at = |position| Some(SuiteMatch { position, snapshot: snapshot.clone() });
    let ids = |req: &SearchRequest| -> Vec<String> {
        pg.search(req).unwrap().into_iter().map(|h| h.id).collect()
    };

    let mut req = request(
        "Click the invoice download button",
        QueryMode::Terms,
        vec![sel(Tier::Products, "shop", None)],
    );
    req.keep_ratio = 0.0;
    let hits = pg.search(&req).unwrap();
    assert_eq!(hits[0].id, in_title.id.as_str(), "title outranks body");
    assert!(hits.iter().all(|h| h.scope.as_str() == "shop"));
    assert!(hits.iter().all(|h| h.relevance >= DEFAULT_MIN_RELEVANCE && h.relevance <= 1.0));
    assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
    req.min_trust = 0.3;
    assert!(!ids(&req).contains(&low.id.to_string()), "min_trust filters");
    req.max_results = 1;
    assert_eq!(ids(&req).len(), 1);
    req.max_results = 0;
    assert!(ids(&req).is_empty());

    // Unrelated text injects nothing: below the relevance floor or no match at all.
    let req =
        request("The weather in Lisbon", QueryMode::Terms, vec![sel(Tier::Products, "shop", None)]);
    assert!(ids(&req).is_empty());

    // Suite placement: base rows always, positioned rows only at their exact place.
    let mut req = request(
        "invoice download",
        QueryMode::Terms,
        vec![sel(Tier::Suites, "s_one", suite_at(1))],
    );
    req.keep_ratio = 0.0;
    let found = ids(&req);
    assert!(
        found.contains(&at_one.id.to_string()) && found.contains(&base.id.to_string()),
        "{found:?}"
    );
    assert!(!found.contains(&at_two.id.to_string()));
    req.scopes = vec![sel(Tier::Suites, "s_one", None)];
    assert_eq!(ids(&req), vec![base.id.to_string()]);
    let mut other_snapshot = snapshot.clone();
    other_snapshot[0].id = "t_changed".into();
    req.scopes = vec![sel(
        Tier::Suites,
        "s_one",
        Some(SuiteMatch { position: 1, snapshot: other_snapshot }),
    )];
    assert_eq!(ids(&req), vec![base.id.to_string()], "a changed suite hides positioned memory");

    // Phrase mode on the same rows honours the same rules.
    let mut req = request(
        "invoice download",
        QueryMode::Phrase,
        vec![sel(Tier::Suites, "s_one", suite_at(2))],
    );
    let found = ids(&req);
    assert!(found.contains(&at_two.id.to_string()) && !found.contains(&at_one.id.to_string()));
    req.text = "download invoice".into();
    assert!(ids(&req).is_empty(), "a phrase is in order");
}

#[test]
fn terms_mode_weighs_words_by_the_rows_the_step_may_see() {
    let (_db, pg) = pg_store();
    let put = |scope_name: &str, o: &curator_core::Observation| {
        pg.transact(None, &mut |tx| {
            tx.put(Tier::Products, &scope(scope_name), o, Action::Add, "s")
        })
        .unwrap();
    };
    let here = observation("apple", "Invoice download button", "On the orders page.");
    put("shop", &here);
    put("shop", &observation("birch", "Orders page layout", "Unrelated text."));
    // Another product is full of the step's common words and holds its one rare word.
    let words = ["cedar", "delta", "ember", "fable", "grape", "honey", "ivory", "jelly"];
    for word in words {
        put("other", &observation(word, "Invoice download button", "Elsewhere."));
    }
    put("other", &observation("kiwis", "Click the export link", "Elsewhere."));
    let req = request(
        "Click the invoice download button",
        QueryMode::Terms,
        vec![sel(Tier::Products, "shop", None)],
    );
    // Over the whole table "click" would carry most of the weight and sink the match below the
    // floor; over the shop's rows it is a word nothing visible has, so it is ignored.
    let hits = pg.search(&req).unwrap();
    assert_eq!(hits.iter().map(|h| h.id.as_str()).collect::<Vec<_>>(), [here.id.as_str()]);
    assert!((hits[0].relevance - 1.0).abs() < 1e-9, "{}", hits[0].relevance);
}

/// Issue 14: terms mode injects what phrase mode injects, first, then its own hits without
/// duplicates (`index/terms.rs` rule 6) — in PostgreSQL as in the file store's index, so the
/// same data injects the same exact-phrase memory.
#[test]
fn terms_mode_injects_phrase_modes_hits_first_as_the_file_store_does() {
    let (_db, pg) = pg_store();
    import_dir(&pg, &example_root(), &mut |_| {}).unwrap();
    let snapshot = example_snapshot(&pg);
    let ids = |hits: &[Hit]| hits.iter().map(|h| h.id.clone()).collect::<Vec<_>>();
    let mut exact = 0;
    for text in [
        "Sign in",
        "Click Add to cart",
        "Orders tab",
        "the order number",
        "login page",
        "cart",
        "Upload a profile picture",
    ] {
        let scopes = example_scopes(&snapshot, 1);
        let phrase = ids(&pg.search(&request(text, QueryMode::Phrase, scopes.clone())).unwrap());
        let terms = pg.search(&request(text, QueryMode::Terms, scopes.clone())).unwrap();
        let from_files =
            ids(&search_files(&example_root(), &request(text, QueryMode::Terms, scopes)).unwrap());
        let found = ids(&terms);
        assert!(found.starts_with(&phrase), "{text:?}: terms {found:?}, phrase {phrase:?}");
        assert_eq!(found, from_files, "{text:?}: both stores judge with the same rules");
        let unique: HashSet<&String> = found.iter().collect();
        assert_eq!(unique.len(), found.len(), "{text:?}: no duplicates in {found:?}");
        assert!(found.len() <= 5, "the cap holds");
        assert!(terms.windows(2).all(|w| w[0].score >= w[1].score), "{text:?}: scores fall");
        assert!(terms[..phrase.len()].iter().all(|h| h.relevance == 1.0));
        exact += phrase.len();
    }
    assert!(exact >= 5, "the steps hold exact phrases to compare ({exact})");

    // A step of stop words only has no analyzed term, so the rules alone find nothing; its
    // exact phrase is still injected.
    let put = |o: &curator_core::Observation| {
        pg.transact(None, &mut |tx| tx.put(Tier::Products, &scope("help"), o, Action::Add, "s"))
            .unwrap();
    };
    let phrase_only = observation("apple", "Help link", "Where is it? It hides in the footer.");
    let ranked = observation("birch", "Footer footer", "The footer footer holds the links.");
    put(&phrase_only);
    put(&ranked);
    let scopes = vec![sel(Tier::Products, "help", None)];
    let req = request("Where is it", QueryMode::Terms, scopes.clone());
    assert_eq!(ids(&pg.search(&req).unwrap()), [phrase_only.id.to_string()]);
    // The phrase comes first; "footer", the one word the other row shares with the step, is
    // in both rows and weighs too little beside "hides" to inject it (rule 4).
    let req = request("It hides in the footer", QueryMode::Terms, scopes);
    assert_eq!(ids(&pg.search(&req).unwrap()), [phrase_only.id.to_string()]);
}

/// PostgreSQL refuses a lexeme over 2,047 bytes; such a word (a pasted token, a base64 blob)
/// must neither refuse the row nor break a query that names it.
#[test]
fn a_word_too_long_for_a_lexeme_is_stored_and_found_by_its_phrase() {
    let (_db, pg) = pg_store();
    let blob = "q".repeat(3000);
    let o =
        observation("apple", "Session token in the export", &format!("Copy {blob} then paste."));
    pg.transact(None, &mut |tx| tx.put(Tier::Products, &scope("shop"), &o, Action::Add, "s"))
        .unwrap();
    let scopes = vec![sel(Tier::Products, "shop", None)];
    let ids = |text: String, mode| -> Vec<String> {
        pg.search(&request(&text, mode, scopes.clone()))
            .unwrap()
            .into_iter()
            .map(|h| h.id)
            .collect()
    };
    let id = vec![o.id.to_string()];
    assert_eq!(
        ids(format!("Copy {blob} then"), QueryMode::Phrase),
        id,
        "looked up by its other words"
    );
    assert_eq!(ids(blob.clone(), QueryMode::Phrase), id, "a phrase of the long word alone");
    assert!(ids(format!("{blob} Copy"), QueryMode::Phrase).is_empty(), "still in order");
    assert_eq!(ids(format!("Copy the session token {blob}"), QueryMode::Terms), id);
}
