//! Symlinks out of the memory root are not memory of this root: `lint` reports them and the
//! store's readers skip them, so a query never injects them (memory that could be injected but
//! never blamed). A link that stays inside the root is followed, as agent-qa follows it.

use curator_core::Tier;
use curator_store::index::QueryMode;

use crate::util::*;

#[test]
fn links_out_of_the_root_are_never_injected_and_links_inside_are() {
    let root = Root::new();
    let outside = tempfile::tempdir().unwrap();
    root.put(
        "products",
        "p",
        &obs(0, "Order history", "The order history page lists orders.", 0.6),
    );
    // A file and a whole scope folder linked from outside.
    let planted = outside.path().join(format!("{}.md", id(1)));
    std::fs::write(&planted, file_text(&obs(1, "Order history secret", "order history", 0.9)))
        .unwrap();
    std::os::unix::fs::symlink(&planted, root.path().join(format!("products/p/{}.md", id(1))))
        .unwrap();
    let out_dir = outside.path().join("linked");
    std::fs::create_dir(&out_dir).unwrap();
    std::fs::write(
        out_dir.join(format!("{}.md", id(2))),
        file_text(&obs(2, "Order history elsewhere", "order history", 0.9)),
    )
    .unwrap();
    std::os::unix::fs::symlink(&out_dir, root.path().join("products/linked")).unwrap();
    // A link to a file elsewhere inside the root.
    let shared = root.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    let inside = shared.join(format!("{}.md", id(3)));
    std::fs::write(&inside, file_text(&obs(3, "Order history tab", "order history tab", 0.7)))
        .unwrap();
    std::os::unix::fs::symlink(&inside, root.path().join(format!("products/p/{}.md", id(3))))
        .unwrap();

    let index = root.index();
    for mode in [QueryMode::Phrase, QueryMode::Terms] {
        let scopes = vec![sel(Tier::Products, "p"), sel(Tier::Products, "linked")];
        let hits = index.search(&request(scopes, "order history", mode)).unwrap();
        let found = ids(&hits);
        assert!(found.contains(&id(0)), "{mode:?}: {found:?}");
        assert!(!found.contains(&id(1)) && !found.contains(&id(2)), "{mode:?}: {found:?}");
        assert!(found.contains(&id(3)), "{mode:?}: {found:?}");
    }
}
