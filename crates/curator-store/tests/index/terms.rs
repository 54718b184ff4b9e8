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

fn terms_at(root: &Root, text: &str, min_trust: f64) -> Vec<String> {
    let mut req = request(vec![sel(Tier::Products, "p")], text, QueryMode::Terms);
    req.min_trust = min_trust;
    req.max_results = 5;
    ids(&root.index().search(&req).unwrap())
}

#[test]
fn words_memory_lacks_do_not_suppress_a_match() {
    let root = Root::new();
    root.put(
        "products",
        "p",
        &obs(0, "Login button stays disabled until the form is valid", "Fill both fields.", 0.9),
    );
    // Below min_trust: its words ("opens", "modal") are not vocabulary this step can be given.
    root.put("products", "p", &obs(1, "The login modal opens after two seconds", "Slow.", 0.2));
    assert_eq!(terms_at(&root, "the login button opens a modal", 0.3), [id(0)]);
    // With both admitted, the better-matching low-trust one is ranked lower but not cut away.
    assert_eq!(terms_at(&root, "the login button opens a modal", 0.1), [id(0), id(1)]);
    assert!(terms_at(&root, "Open the billing page", 0.3).is_empty());
}

fn help_desk() -> Root {
    let root = Root::new();
    let facts = [
        ("Merging tickets is done from the More actions menu", "Open the ticket, choose Merge."),
        ("Ticket search matches the subject only", "The search box in the ticket list."),
        (
            "Assignee dropdown lists agents by first name",
            "The Assignee dropdown in the ticket sidebar.",
        ),
        ("New ticket form requires a priority", "The Submit button stays disabled."),
        ("SLA badge turns red under one hour", "Each ticket shows a countdown."),
    ];
    for (n, (title, content)) in facts.iter().enumerate() {
        root.put("products", "p", &obs(n, title, content, 0.7));
    }
    root
}

#[test]
fn memory_sharing_only_product_wide_words_is_not_injected() {
    let root = help_desk();
    // "ticket" is in every observation and "list" in two: together they are no evidence.
    assert!(terms_at(&root, "Export the ticket list as CSV", 0.3).is_empty());
    assert!(terms_at(&root, "Close the ticket", 0.3).is_empty());
    assert_eq!(terms_at(&root, "Open the More actions menu on the ticket", 0.3), [id(0)]);
}

#[test]
fn stems_match_longer_pool_words_and_split_words_match_joined_ones() {
    let root = help_desk();
    // "assign" is not "assigne" (the stem of "Assignee") but begins it.
    assert_eq!(terms_at(&root, "Assign the ticket to Priya", 0.3), [id(2)]);
    let root = Root::new();
    root.put("products", "p", &obs(0, "Login form remembers the email", "Prefilled.", 0.8));
    root.put("products", "p", &obs(1, "Search box needs Enter", "No button.", 0.8));
    assert_eq!(terms_at(&root, "Log in as the admin user", 0.3), [id(0)]);
}
