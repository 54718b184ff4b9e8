//! Terms mode: ordinary step sentences find relevant memory; unrelated memory stays out.

use curator_core::Tier;
use curator_store::index::QueryMode;

use crate::util::*;

fn setup() -> Root {
    let root = Root::new();
    root.put(
        "products",
        "p",
        &obs(
            0,
            "Login modal fades in",
            "After clicking Login the modal needs about 1 s to appear.",
            0.6,
        ),
    );
    root.put(
        "products",
        "p",
        &obs(1, "Checkout shows tax", "The tax line appears only after the postcode.", 0.9),
    );
    root.put("products", "p", &obs(2, "Café menu", "The résumé page lists the menu.", 0.5));
    root.put(
        "products",
        "p",
        &obs(3, "Search results page", "Results page loads 20 rows per page.", 0.9),
    );
    root
}

fn terms(root: &Root, text: &str) -> Vec<String> {
    let req = request(vec![sel(Tier::Products, "p")], text, QueryMode::Terms);
    ids(&root.index().search(&req).unwrap())
}

#[test]
fn a_step_sentence_finds_memory_phrase_mode_misses() {
    let root = setup();
    let step = "Click the login button and wait for the modal";
    assert_eq!(terms(&root, step), [id(0)]);
    let req = request(vec![sel(Tier::Products, "p")], step, QueryMode::Phrase);
    assert!(root.index().search(&req).unwrap().is_empty());
}

#[test]
fn case_diacritics_and_inflections_fold() {
    let root = setup();
    assert_eq!(terms(&root, "Open the CAFE Menus"), [id(2)]);
    assert_eq!(terms(&root, "logins"), [id(0)]);
}

#[test]
fn stop_words_alone_and_unrelated_steps_inject_nothing() {
    let root = setup();
    assert!(terms(&root, "the and of it then").is_empty());
    assert!(terms(&root, "Upload a profile picture").is_empty());
    // One weak shared word in a long unrelated step is under the relevance floor.
    assert!(
        terms(&root, "Drag the avatar onto the upload zone, crop it and confirm the page")
            .is_empty()
    );
}

#[test]
fn trust_multiplies_relevance_and_min_trust_filters() {
    let root = setup();
    let mut req = request(vec![sel(Tier::Products, "p")], "login modal", QueryMode::Terms);
    req.min_trust = 0.7;
    assert!(root.index().search(&req).unwrap().is_empty(), "0.6 < 0.7");
    req.min_trust = 0.3;
    let hits = root.index().search(&req).unwrap();
    assert_eq!(ids(&hits), [id(0)]);
    assert!(hits[0].score > 0.0);
}
