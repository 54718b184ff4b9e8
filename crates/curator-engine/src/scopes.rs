//! Which folders one step's query reads (agent-qa-memory §3.2, §1.8).
//!
//! A test step sees `products/<product>`, then — in a suite — `suites/<suite>`, then
//! `tests/<test>`; that order is the discovery order ties are broken by. In the suite folder,
//! base observations are always seen and suite observations only when the step runs at exactly
//! their position of exactly their suite (snapshot equal entry by entry, compared as data, not as
//! JSON text: §11.11). Names are [`ScopeName`]s, so `..`, separators and the empty string are
//! refused before any path is built; a query skips such a folder, as agent-qa does, and says
//! why ([`crate::QueryOptions::lenient`]).

use curator_core::{ScopeError, ScopeName, SnapshotEntry, Tier};
use curator_store::index::{ScopeDir, ScopeSelector, SuiteMatch};

/// The suite a step runs in, when it runs as a suite child.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SuiteContext {
    /// The suite id (or name): `suites/<id>`.
    pub id: ScopeName,
    /// The suite's child tests now, in order (agent-qa's `currentSuiteTests`). Without it only
    /// the suite's base observations are seen.
    pub tests: Option<Vec<SnapshotEntry>>,
    /// The running child's 0-based position (agent-qa's `currentPosition`). Without it only the
    /// suite's base observations are seen.
    pub position: Option<u64>,
}

impl SuiteContext {
    /// A suite context from unchecked strings; the id must be a valid scope name.
    pub fn new(
        id: &str,
        tests: Option<Vec<SnapshotEntry>>,
        position: Option<u64>,
    ) -> Result<Self, ScopeError> {
        Ok(SuiteContext { id: ScopeName::new(id)?, tests, position })
    }
}

/// The folders a step of `test` in `product` (optionally inside `suite`) reads, in order.
pub fn scope_selectors(
    product: &ScopeName,
    test: &ScopeName,
    suite: Option<&SuiteContext>,
) -> Vec<ScopeSelector> {
    step_selectors(Some(product), Some(test), suite)
}

/// The folders a step reads, in order, leaving out a product or test whose name was skipped
/// (agent-qa skips a folder whose name fails its path check and reads the others, §3.2).
pub fn step_selectors(
    product: Option<&ScopeName>,
    test: Option<&ScopeName>,
    suite: Option<&SuiteContext>,
) -> Vec<ScopeSelector> {
    let mut out = Vec::new();
    if let Some(product) = product {
        out.push(ScopeSelector {
            dir: ScopeDir::new(Tier::Products, product.clone()),
            suite: None,
        });
    }
    if let Some(s) = suite {
        let matching = match (&s.tests, s.position) {
            (Some(tests), Some(position)) => Some(SuiteMatch { position, snapshot: tests.clone() }),
            _ => None,
        };
        out.push(ScopeSelector { dir: ScopeDir::new(Tier::Suites, s.id.clone()), suite: matching });
    }
    if let Some(test) = test {
        out.push(ScopeSelector { dir: ScopeDir::new(Tier::Tests, test.clone()), suite: None });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(s: &str) -> ScopeName {
        ScopeName::new(s).unwrap()
    }

    #[test]
    fn a_direct_test_reads_its_product_then_its_test_folder() {
        let sel = scope_selectors(&name("shop"), &name("t_a"), None);
        let keys: Vec<String> = sel.iter().map(|s| s.dir.key()).collect();
        assert_eq!(keys, ["products/shop", "tests/t_a"]);
    }

    #[test]
    fn a_suite_child_reads_the_suite_folder_between_product_and_test() {
        let tests = vec![SnapshotEntry { test: "a.yaml".into(), id: "t_a".into() }];
        let ctx = SuiteContext::new("s_x", Some(tests.clone()), Some(0)).unwrap();
        let sel = scope_selectors(&name("shop"), &name("t_a"), Some(&ctx));
        let keys: Vec<String> = sel.iter().map(|s| s.dir.key()).collect();
        assert_eq!(keys, ["products/shop", "suites/s_x", "tests/t_a"]);
        assert_eq!(sel[1].suite, Some(SuiteMatch { position: 0, snapshot: tests.clone() }));
        // Without tests or without a position only base observations of the suite are seen.
        let partial = SuiteContext::new("s_x", Some(tests), None).unwrap();
        assert_eq!(scope_selectors(&name("shop"), &name("t_a"), Some(&partial))[1].suite, None);
    }

    #[test]
    fn traversal_in_any_name_is_refused() {
        for bad in ["..", "../products/other", "a/b", "a\\b", "", "a\0b"] {
            assert!(SuiteContext::new(bad, None, None).is_err(), "{bad:?} accepted");
            assert!(ScopeName::new(bad).is_err(), "{bad:?} accepted");
        }
    }
}
