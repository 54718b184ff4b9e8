//! Suite scoping (§3.2): suite observations only at their exact position of their exact suite.

use curator_core::Tier;
use curator_store::index::QueryMode;

use crate::util::*;

fn snapshot() -> Vec<curator_core::SnapshotEntry> {
    vec![entry("tests/a.yaml", "t_a"), entry("tests/b.yaml", "t_b"), entry("tests/c.yaml", "t_c")]
}

fn setup() -> Root {
    let root = Root::new();
    let mut at1 = obs(0, "Delivery options", "Appear after the postcode.", 0.7);
    at1.suite = Some((1, snapshot()));
    root.put("suites", "s", &at1);
    let mut at2 = obs(1, "Delivery options", "Appear after payment.", 0.7);
    at2.suite = Some((2, snapshot()));
    root.put("suites", "s", &at2);
    let mut other_suite = obs(2, "Delivery options", "Old suite layout.", 0.7);
    let mut old = snapshot();
    old[2] = entry("tests/c-old.yaml", "t_c");
    other_suite.suite = Some((1, old));
    root.put("suites", "s", &other_suite);
    root.put("suites", "s", &obs(3, "Delivery options", "Base: always seen in the suite.", 0.7));
    root
}

fn query(root: &Root, suite: curator_store::index::ScopeSelector) -> Vec<String> {
    let mut req =
        request(vec![sel(Tier::Products, "p"), suite], "delivery options", QueryMode::Phrase);
    req.max_results = 10;
    ids(&root.index().search(&req).unwrap())
}

#[test]
fn suite_observations_need_the_same_snapshot_and_position() {
    let root = setup();
    assert_eq!(query(&root, suite_sel("s", 1, snapshot())), [id(0), id(3)]);
    assert_eq!(query(&root, suite_sel("s", 2, snapshot())), [id(1), id(3)]);
    assert_eq!(query(&root, suite_sel("s", 0, snapshot())), [id(3)]);
}

#[test]
fn one_different_entry_or_order_means_no_match() {
    let root = setup();
    let mut changed = snapshot();
    changed[0].id = "t_z".into();
    assert_eq!(query(&root, suite_sel("s", 1, changed)), [id(3)]);
    let mut reordered = snapshot();
    reordered.swap(0, 1);
    assert_eq!(query(&root, suite_sel("s", 1, reordered)), [id(3)]);
    let shorter = snapshot()[..2].to_vec();
    assert_eq!(query(&root, suite_sel("s", 1, shorter)), [id(3)]);
    // The other suite layout matches its own snapshot only.
    let mut old = snapshot();
    old[2] = entry("tests/c-old.yaml", "t_c");
    assert_eq!(query(&root, suite_sel("s", 1, old)), [id(2), id(3)]);
}

#[test]
fn without_suite_tests_or_position_only_base_observations_are_seen() {
    let root = setup();
    assert_eq!(query(&root, sel(Tier::Suites, "s")), [id(3)]);
}

#[test]
fn suite_observations_outside_the_suite_folder_are_not_filtered() {
    let root = Root::new();
    let mut placed = obs(0, "Delivery options", "In a test folder.", 0.7);
    placed.suite = Some((5, snapshot()));
    root.put("tests", "t", &placed);
    let req = request(vec![sel(Tier::Tests, "t")], "delivery options", QueryMode::Phrase);
    assert_eq!(ids(&root.index().search(&req).unwrap()), [id(0)]);
}
