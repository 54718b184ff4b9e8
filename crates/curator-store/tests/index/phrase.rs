//! Phrase mode reproduces agent-qa's FTS5 query (§3.3).

use curator_core::Tier;
use curator_core::fts::Bm25Stats;
use curator_store::index::QueryMode;

use crate::util::*;

fn phrase_ids(root: &Root, text: &str) -> Vec<String> {
    let req = request(vec![sel(Tier::Products, "p")], text, QueryMode::Phrase);
    ids(&root.index().search(&req).unwrap())
}

#[test]
fn worked_example_gives_agent_qa_order_and_numbers() {
    let root = Root::new();
    let rows = [
        ("Login button is blue and large", 0.9),
        ("Login error shows red text", 0.4),
        ("Login form has autocomplete", 0.7),
    ];
    let titles: Vec<String> = rows.iter().map(|(c, _)| format!("Observation: {c}")).collect();
    for (n, ((content, trust), title)) in rows.iter().zip(&titles).enumerate() {
        root.put("products", "p", &obs(n, title, content, *trust));
    }
    let req = request(vec![sel(Tier::Products, "p")], "Login", QueryMode::Phrase);
    let hits = root.index().search(&req).unwrap();
    assert_eq!(ids(&hits), [id(0), id(2), id(1)], "order 0.9, 0.7, 0.4");
    // score = −(rank × trust); agent-qa's keys: −1.1773e-6, −1.0144e-6, −5.5e-7.
    let keys: Vec<f64> = hits.iter().map(|h| -h.score).collect();
    for (got, want) in keys.iter().zip([-1.1773e-6, -1.0144e-6, -5.5e-7]) {
        assert!(((got - want) / want).abs() < 1e-4, "{keys:?}");
    }
    // And bit for bit what the FTS5 formula gives with N = n = 3, avgdl = 11.
    let stats = Bm25Stats { rows: 3, total_tokens: 33, hits: 3 };
    assert_eq!(keys[0], stats.rank(2, 13) * 0.9);
    assert_eq!(keys[1], stats.rank(2, 9) * 0.7);
    assert_eq!(keys[2], stats.rank(2, 11) * 0.4);
}

#[test]
fn n_and_avgdl_count_every_scoped_row_even_below_min_trust_and_nothing_outside() {
    let root = Root::new();
    root.put("products", "p", &obs(0, "Danger Zone", "lives here", 0.9));
    root.put("products", "p", &obs(1, "Unrelated", "text with several more tokens in it", 0.1));
    root.put("tests", "t", &obs(2, "Another", "row", 0.5));
    // Outside the scopes: must not change N or avgdl.
    root.put("products", "other", &obs(3, "Danger Zone", "x", 0.9));
    let req = request(
        vec![sel(Tier::Products, "p"), sel(Tier::Tests, "t")],
        "danger zone",
        QueryMode::Phrase,
    );
    let hits = root.index().search(&req).unwrap();
    assert_eq!(ids(&hits), [id(0)]);
    // N = 3, n = 1, tokens = 4 + 8 + 2 = 14, D = 4, f = 1.
    let stats = Bm25Stats { rows: 3, total_tokens: 14, hits: 1 };
    assert!(stats.idf() > 1e-6);
    assert_eq!(-hits[0].score, stats.rank(1, 4) * 0.9);
}

#[test]
fn the_whole_step_is_one_phrase_within_one_column() {
    let root = Root::new();
    root.put(
        "products",
        "p",
        &obs(
            0,
            "Recovery Center: retry queue lives under Danger Zone",
            "Open it from settings.",
            0.9,
        ),
    );
    root.put("products", "p", &obs(1, "Settings end in Danger", "Zone two is below.", 0.9));
    assert_eq!(phrase_ids(&root, "Danger Zone"), [id(0)], "not across title and content");
    assert_eq!(phrase_ids(&root, "  center, RETRY queue! "), [id(0)]);
    assert!(phrase_ids(&root, "Zone Danger").is_empty());
    assert!(phrase_ids(&root, "danger zone retry").is_empty());
    assert!(phrase_ids(&root, "Click the Danger Zone button").is_empty());
    assert_eq!(phrase_ids(&root, "zone two"), [id(1)]);
}

#[test]
fn folding_and_separators_follow_unicode61() {
    let root = Root::new();
    root.put("products", "p", &obs(0, "Café résumé", "Menu item.", 0.5));
    root.put("products", "p", &obs(1, "Field x_y", "Name uses an underscore.", 0.5));
    root.put("products", "p", &obs(2, "Spinner", "Wait 2s before typing.", 0.5));
    assert_eq!(phrase_ids(&root, "cafe"), [id(0)]);
    assert_eq!(phrase_ids(&root, "RESUME"), [id(0)]);
    assert_eq!(phrase_ids(&root, "Café résumé"), [id(0)]);
    assert_eq!(phrase_ids(&root, "x y"), [id(1)]);
    assert_eq!(phrase_ids(&root, "x_y"), [id(1)]);
    assert_eq!(phrase_ids(&root, "2s"), [id(2)]);
    assert!(phrase_ids(&root, "2").is_empty());
    assert!(phrase_ids(&root, "?!…").is_empty(), "a step that sanitizes to nothing");
}

#[test]
fn min_trust_max_injections_and_ties_in_discovery_order() {
    let root = Root::new();
    // Same text and trust everywhere: equal scores, so order = products, suite, tests; names.
    root.put("tests", "t", &obs(0, "Modal", "Same text", 0.5));
    root.put("products", "p", &obs(2, "Modal", "Same text", 0.5));
    root.put("products", "p", &obs(1, "Modal", "Same text", 0.5));
    root.put("products", "p", &obs(3, "Modal", "Same text", 0.29));
    let scopes = vec![sel(Tier::Products, "p"), sel(Tier::Tests, "t")];
    let mut req = request(scopes, "modal", QueryMode::Phrase);
    req.max_results = 10;
    let index = root.index();
    assert_eq!(ids(&index.search(&req).unwrap()), [id(1), id(2), id(0)], "0.29 < minTrust");
    req.min_trust = 0.0;
    // 0.29 × the same relevance ranks below the 0.5 ties.
    assert_eq!(ids(&index.search(&req).unwrap()), [id(1), id(2), id(0), id(3)]);
    req.max_results = 2;
    assert_eq!(ids(&index.search(&req).unwrap()), [id(1), id(2)]);
    req.max_results = 0;
    assert!(index.search(&req).unwrap().is_empty(), "maxInjections 0 injects nothing");
}

/// agent-qa finds an id in two folders twice; curator serves it from neither (README,
/// "nothing is dropped silently"; `duplicates.rs`).
#[test]
fn the_same_id_in_two_folders_is_served_from_neither() {
    let root = Root::new();
    root.put("products", "p", &obs(0, "Modal", "Fades in.", 0.5));
    root.put("tests", "t", &obs(0, "Modal", "Fades in.", 0.5));
    let req =
        request(vec![sel(Tier::Products, "p"), sel(Tier::Tests, "t")], "modal", QueryMode::Phrase);
    assert!(root.index().search(&req).unwrap().is_empty());
}
