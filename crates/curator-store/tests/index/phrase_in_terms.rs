//! What phrase mode injects, terms mode injects too, first (issue 14; `index/terms.rs` rule 6):
//! steps whose phrase holds punctuation or symbols, or is a window of an observation's text,
//! which terms mode's own rules miss; no duplicates; the cap holds; and, whatever the memory
//! and the step, phrase mode's top hit is terms mode's top hit.

use curator_core::Tier;
use curator_store::index::{Hit, QueryMode, phrase_hits_first};
use proptest::prelude::*;

use crate::util::*;

fn search(root: &Root, text: &str, mode: QueryMode) -> Vec<Hit> {
    root.index().search(&request(vec![sel(Tier::Products, "p")], text, mode)).unwrap()
}

fn memory() -> Root {
    let root = Root::new();
    let notes = [
        ("Login page", "Click Sign in: the login page opens after a redirect.", 0.6),
        ("Discount field", "Enter a 10% code like SAVE-10; it applies only at checkout.", 0.7),
        ("C# snippets", "Open the C# snippets page: code blocks render plain.", 0.5),
        ("Cart badge", "The cart badge counts items, not lines.", 0.9),
        ("Search page", "The search page lists the cart items too.", 0.8),
    ];
    for (n, (title, content, trust)) in notes.into_iter().enumerate() {
        root.put("products", "p", &obs(n, title, content, trust));
    }
    root
}

#[test]
fn steps_made_of_stop_words_and_symbols_get_phrase_modes_hits() {
    let root = memory();
    for (step, expected) in [
        ("Sign in", id(0)),
        ("Click Sign in", id(0)),
        ("Enter a 10% code", id(1)),
        ("Open the C# snippets", id(2)),
    ] {
        let phrase = search(&root, step, QueryMode::Phrase);
        assert_eq!(ids(&phrase), std::slice::from_ref(&expected), "phrase mode finds {step:?}");
        let terms = search(&root, step, QueryMode::Terms);
        assert_eq!(terms.first().map(|h| &h.id), Some(&expected), "{step:?}: {:?}", ids(&terms));
        assert_eq!(terms[0].relevance, 1.0, "the whole step is in it");
    }
}

#[test]
fn phrase_hits_come_first_then_terms_hits_without_duplicates_within_the_cap() {
    let root = memory();
    // "cart items" is a phrase of the search page (4) only; terms mode's own rules rank the
    // cart badge (3), whose title names the cart, and may find the search page too.
    let step = "cart items";
    let phrase = ids(&search(&root, step, QueryMode::Phrase));
    assert_eq!(phrase, [id(4)]);
    let terms = search(&root, step, QueryMode::Terms);
    let found = ids(&terms);
    assert_eq!(found[0], id(4), "{found:?}");
    assert!(found.contains(&id(3)), "terms mode's own hit follows: {found:?}");
    let mut unique = found.clone();
    unique.dedup();
    assert_eq!(unique.len(), found.len(), "no duplicates: {found:?}");
    assert!(terms.windows(2).all(|w| w[0].score >= w[1].score), "scores fall down the list");
    let mut req = request(vec![sel(Tier::Products, "p")], step, QueryMode::Terms);
    req.max_results = 1;
    assert_eq!(ids(&root.index().search(&req).unwrap()), [id(4)], "the cap holds");
}

#[test]
fn phrase_hits_honour_min_trust_and_a_zero_cap() {
    let root = memory();
    let mut req = request(vec![sel(Tier::Products, "p")], "Sign in", QueryMode::Terms);
    req.min_trust = 0.7;
    assert!(!ids(&root.index().search(&req).unwrap()).contains(&id(0)), "trust 0.6 < 0.7");
    req.min_trust = 0.3;
    req.max_results = 0;
    assert!(root.index().search(&req).unwrap().is_empty());
}

#[test]
fn the_merge_keeps_phrase_order_and_drops_duplicates() {
    let hit = |n: usize, score: f64| Hit {
        id: id(n),
        tier: Tier::Products,
        scope: curator_core::ScopeName::new("p").unwrap(),
        title: String::new(),
        content: String::new(),
        trust: 0.5,
        score,
        relevance: 0.4,
        path: format!("products/p/{}.md", id(n)).into(),
    };
    let merged = phrase_hits_first(
        vec![hit(1, 0.2), hit(2, 0.1)],
        vec![hit(2, 3.0), hit(3, 2.0), hit(4, 1.0)],
        3,
    );
    assert_eq!(ids(&merged), [id(1), id(2), id(3)]);
    assert_eq!(merged.iter().map(|h| h.score).collect::<Vec<_>>(), [3.2, 3.1, 2.0]);
    assert_eq!(merged.iter().map(|h| h.relevance).collect::<Vec<_>>(), [1.0, 1.0, 0.4]);
    assert_eq!(ids(&phrase_hits_first(vec![], vec![hit(3, 2.0)], 3)), [id(3)]);
    assert!(phrase_hits_first(vec![hit(1, 0.2)], vec![hit(3, 2.0)], 0).is_empty());
}

/// Words of UI notes, with the punctuation and symbols that split tokens or that the terms
/// analyzer drops.
const WORDS: &[&str] = &[
    "Sign",
    "in",
    "log",
    "Login",
    "cart",
    "Add",
    "to",
    "the",
    "a",
    "and",
    "pay",
    "Payment",
    "card",
    "e-mail",
    "C#",
    "10%",
    "$5",
    "→",
    "pop-up",
    "modal",
    "button",
    "(beta)",
    "Save",
    "saved",
    "don't",
    "Größe",
    "x_y",
    "v2.1",
    "3-D",
    "Click",
    "\"quoted\"",
    "page",
    "opens",
];

fn words(max: usize) -> impl Strategy<Value = Vec<&'static str>> {
    prop::collection::vec(prop::sample::select(WORDS), 1..max)
}

/// Title words, content words and trust of each observation.
type Memory = Vec<(Vec<&'static str>, Vec<&'static str>, f64)>;

/// A memory and a step: half the time a window of one observation's text, else words of its own.
fn case() -> impl Strategy<Value = (Memory, String)> {
    let memory = prop::collection::vec((words(6), words(12), 0.0f64..1.0), 1..7);
    (memory, any::<prop::sample::Index>(), any::<prop::sample::Index>(), 1usize..5, words(5))
        .prop_map(|(memory, which, start, len, own)| {
            let step = if start.index(2) == 0 {
                let (title, content, _) = &memory[which.index(memory.len())];
                let text = if which.index(2) == 0 { title } else { content };
                let from = start.index(text.len());
                text[from..(from + len).min(text.len())].join(" ")
            } else {
                own.join(" ")
            };
            (memory, step)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn phrase_modes_top_hit_is_terms_modes_top_hit((memory, step) in case()) {
        let root = Root::new();
        let texts: Vec<(String, String, f64)> = memory
            .iter()
            .map(|(t, c, trust)| (t.join(" "), c.join(" "), (trust * 100.0).round() / 100.0))
            .collect();
        for (n, (title, content, trust)) in texts.iter().enumerate() {
            root.put("products", "p", &obs(n, title, content, *trust));
        }
        let phrase = search(&root, &step, QueryMode::Phrase);
        let terms = search(&root, &step, QueryMode::Terms);
        if let Some(top) = phrase.first() {
            prop_assert!(
                terms.iter().any(|h| h.id == top.id),
                "step {:?}: phrase top {} not in terms {:?}", step, top.id, ids(&terms)
            );
            prop_assert_eq!(&terms[0].id, &top.id, "step {:?}: an exact phrase comes first", step);
        }
        let all = ids(&terms);
        let unique: std::collections::HashSet<&String> = all.iter().collect();
        prop_assert_eq!(unique.len(), all.len(), "no duplicates");
        prop_assert!(terms.len() <= 3);
    }
}
