//! An id served from two files is served from neither (README): not twice, as agent-qa injects
//! it, and not once, since the store refuses to change either copy.

use curator_core::Tier;
use curator_store::index::QueryMode;

use crate::util::*;

#[test]
fn an_id_in_two_folders_is_injected_from_neither() {
    let root = Root::new();
    let twin = obs(1, "Order history twin", "The order history page paginates.", 0.8);
    root.put(
        "products",
        "p",
        &obs(0, "Order history", "The order history page lists orders.", 0.6),
    );
    root.put("products", "p", &twin);
    root.put("tests", "t", &twin);
    let index = root.index();
    for mode in [QueryMode::Phrase, QueryMode::Terms] {
        let scopes = vec![sel(Tier::Products, "p"), sel(Tier::Tests, "t")];
        let found = ids(&index.search(&request(scopes, "order history", mode)).unwrap());
        assert_eq!(found, [id(0)], "{mode:?}");
    }
    // A copy in a folder outside the query's scopes counts too, once indexed.
    std::fs::remove_file(root.path().join(format!("tests/t/{}.md", id(1)))).unwrap();
    root.put("products", "other", &twin);
    let index = root.index();
    index.refresh().unwrap();
    let scopes = vec![sel(Tier::Products, "p")];
    let found = ids(&index.search(&request(scopes, "order history", QueryMode::Terms)).unwrap());
    assert_eq!(found, [id(0)]);
    // Once one copy is gone, the other is served again.
    std::fs::remove_file(root.path().join(format!("products/other/{}.md", id(1)))).unwrap();
    index.refresh().unwrap();
    let scopes = vec![sel(Tier::Products, "p")];
    let found = ids(&index.search(&request(scopes, "order history", QueryMode::Terms)).unwrap());
    assert!(found.contains(&id(1)), "{found:?}");
}
