//! A watching index (`MemoryIndex::watching`) skips the per-file check of folders that did not
//! change, and still sees every change made before a query: adds, in-place rewrites that keep
//! size and mtime, deletes, renames, a folder or a whole tier folder replaced, and more events
//! than the kernel queues.

use std::time::Duration;

use curator_core::Tier;
use curator_store::index::{MemoryIndex, QueryMode};

use crate::util::*;

fn find(index: &MemoryIndex, text: &str) -> Vec<String> {
    let req = request(vec![sel(Tier::Products, "p")], text, QueryMode::Phrase);
    ids(&index.search(&req).unwrap())
}

fn watching(root: &Root) -> MemoryIndex {
    let index = root.index().watching();
    assert!(index.is_watching(), "inotify works on a local temp dir");
    index
}

#[test]
fn an_unchanged_folder_is_not_checked_again() {
    let root = Root::new();
    root.put("products", "p", &obs(0, "Modal", "Fades in.", 0.5));
    let index = watching(&root);
    let before = index.folder_checks();
    assert_eq!(find(&index, "modal"), [id(0)]);
    assert_eq!(index.folder_checks(), before + 1, "the first query checks the folder");
    for _ in 0..5 {
        assert_eq!(find(&index, "modal"), [id(0)]);
    }
    assert_eq!(index.folder_checks(), before + 1, "then the watch vouches for it");
    // A transaction's lock file and the index's own writes are not changes of the folder.
    std::fs::write(root.path().join(".curator.lock"), "x").unwrap();
    std::fs::remove_file(root.path().join(".curator.lock")).unwrap();
    assert_eq!(find(&index, "modal"), [id(0)]);
    assert_eq!(index.folder_checks(), before + 1);
}

#[test]
fn an_unwatched_index_checks_the_folder_on_every_query() {
    let root = Root::new();
    root.put("products", "p", &obs(0, "Modal", "Fades in.", 0.5));
    let index = root.index();
    let before = index.folder_checks();
    for _ in 0..3 {
        assert_eq!(find(&index, "modal"), [id(0)]);
    }
    assert_eq!(index.folder_checks(), before + 3);
}

#[test]
fn adds_deletes_and_renames_are_seen() {
    let root = Root::new();
    let a = root.put("products", "p", &obs(0, "Modal", "Fades in.", 0.5));
    let index = watching(&root);
    assert_eq!(find(&index, "modal"), [id(0)]);
    let b = root.put("products", "p", &obs(1, "Modal", "Fades in too.", 0.5));
    assert_eq!(find(&index, "modal"), [id(0), id(1)]);
    std::fs::remove_file(a).unwrap();
    assert_eq!(find(&index, "modal"), [id(1)]);
    // Moved out of the folder (agent-qa's atomic writes rename into it; moves out count too).
    std::fs::rename(&b, root.path().join("elsewhere.md")).unwrap();
    assert!(find(&index, "modal").is_empty());
    std::fs::rename(root.path().join("elsewhere.md"), &b).unwrap();
    assert_eq!(find(&index, "modal"), [id(1)]);
}

#[test]
fn a_rewrite_in_place_keeping_size_and_mtime_is_seen() {
    let root = Root::new();
    let path = root.put("products", "p", &obs(0, "Modal", "opens slowly", 0.5));
    let index = watching(&root);
    assert_eq!(find(&index, "opens slowly"), [id(0)]);
    let checks = index.folder_checks();
    let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
    let after = std::fs::read_to_string(&path).unwrap().replace("opens slowly", "closes quick");
    {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        f.write_all(after.as_bytes()).unwrap();
        f.set_modified(mtime).unwrap();
    }
    assert_eq!(find(&index, "closes quick"), [id(0)]);
    assert!(find(&index, "opens slowly").is_empty());
    assert_eq!(index.folder_checks(), checks + 1, "one event, one check");
}

#[test]
fn a_folder_deleted_and_recreated_is_watched_anew() {
    let root = Root::new();
    root.put("products", "p", &obs(0, "Modal", "Fades in.", 0.5));
    let index = watching(&root);
    assert_eq!(find(&index, "modal"), [id(0)]);
    std::fs::remove_dir_all(root.path().join("products/p")).unwrap();
    assert!(find(&index, "modal").is_empty());
    root.put("products", "p", &obs(1, "Modal", "Back.", 0.5));
    assert_eq!(find(&index, "modal"), [id(1)]);
    // The new folder is watched: a change in it is seen, an unchanged one is not re-checked.
    root.put("products", "p", &obs(2, "Modal", "More.", 0.5));
    assert_eq!(find(&index, "modal"), [id(1), id(2)]);
    let checks = index.folder_checks();
    assert_eq!(find(&index, "modal"), [id(1), id(2)]);
    assert_eq!(index.folder_checks(), checks);
}

#[test]
fn a_tier_folder_swapped_for_another_is_seen() {
    // A watch follows the inode: after `products` is moved away, the old folder's watch would
    // keep vouching for a path that now holds other files.
    let root = Root::new();
    root.put("products", "p", &obs(0, "Modal", "Old.", 0.5));
    let index = watching(&root);
    assert_eq!(find(&index, "modal"), [id(0)]);
    let staged = Root::new();
    staged.put("products", "p", &obs(1, "Modal", "New.", 0.5));
    std::fs::rename(root.path().join("products"), root.path().join("products.old")).unwrap();
    std::fs::rename(staged.path().join("products"), root.path().join("products")).unwrap();
    assert_eq!(find(&index, "modal"), [id(1)]);
    // Edits in the folder moved away are not this root's any more.
    root.write_raw(
        "products.old",
        "p",
        &format!("{}.md", id(2)),
        &file_text(&obs(2, "Modal", "", 0.5)),
    );
    assert_eq!(find(&index, "modal"), [id(1)]);
}

#[test]
fn more_events_than_the_kernel_queues_are_not_lost() {
    let root = Root::new();
    root.put("products", "p", &obs(0, "Modal", "Fades in.", 0.5));
    root.put("products", "noisy", &obs(5, "Noise", "Ignored.", 0.5));
    let index = watching(&root);
    assert_eq!(find(&index, "modal"), [id(0)]);
    let noisy = request(vec![sel(Tier::Products, "noisy")], "noise", QueryMode::Phrase);
    assert_eq!(ids(&index.search(&noisy).unwrap()), [id(5)]);
    let queued: usize = std::fs::read_to_string("/proc/sys/fs/inotify/max_queued_events")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(16_384);
    if queued > 100_000 {
        eprintln!("max_queued_events is {queued}: overflow not provoked here");
        return;
    }
    // Each noise file is a create and a close in the other folder: the queue is full before the
    // change that counts, whose own event the kernel drops (only the overflow is reported).
    let folder = root.path().join("products/noisy");
    for n in 0..queued {
        std::fs::write(folder.join(format!("noise-{n}.tmp")), "").unwrap();
    }
    let path = root.path().join("products/p").join(format!("{}.md", id(0)));
    std::fs::write(&path, file_text(&obs(0, "Modal", "Changed while the queue was full.", 0.5)))
        .unwrap();
    let req = request(vec![sel(Tier::Products, "p")], "queue was full", QueryMode::Phrase);
    assert_eq!(ids(&index.search(&req).unwrap()), [id(0)]);
}

#[test]
fn concurrent_queries_and_writes_end_in_agreement() {
    // Threads query through one watching index while files are rewritten; whatever the
    // interleaving, a query after the last write sees the last write.
    let root = Root::new();
    let path = root.put("products", "p", &obs(0, "Modal", "version 0", 0.5));
    let index = std::sync::Arc::new(watching(&root));
    let readers: Vec<_> = (0..3)
        .map(|_| {
            let index = std::sync::Arc::clone(&index);
            std::thread::spawn(move || {
                for _ in 0..200 {
                    find(&index, "modal");
                }
            })
        })
        .collect();
    for v in 1..=40 {
        let text = file_text(&obs(0, "Modal", &format!("version {v}"), 0.5));
        std::fs::write(&path, text).unwrap();
        std::thread::sleep(Duration::from_millis(1));
    }
    for r in readers {
        r.join().unwrap();
    }
    assert_eq!(find(&index, "version 40"), [id(0)]);
    assert!(find(&index, "version 39").is_empty());
}

#[test]
fn both_modes_follow_edits_and_deletes_in_a_long_lived_index() {
    // The index keeps what it read of each folder per segment; an edit deletes the old document
    // in its segment and adds one elsewhere, and neither mode may serve the old one.
    let root = Root::new();
    let path = root.put("products", "p", &obs(0, "Export button", "Downloads a CSV file.", 0.9));
    root.put("products", "p", &obs(1, "Login modal", "Fades in slowly.", 0.9));
    let index = watching(&root);
    let terms = |text: &str| {
        let req = request(vec![sel(Tier::Products, "p")], text, QueryMode::Terms);
        ids(&index.search(&req).unwrap())
    };
    assert_eq!(terms("Click the export button"), [id(0)]);
    assert_eq!(find(&index, "downloads a csv"), [id(0)]);
    std::fs::write(&path, file_text(&obs(0, "Import dialog", "Uploads a CSV file.", 0.9))).unwrap();
    assert!(terms("Click the export button").is_empty());
    assert_eq!(terms("Open the import dialog"), [id(0)]);
    assert!(find(&index, "downloads a csv").is_empty());
    assert_eq!(find(&index, "uploads a csv"), [id(0)]);
    std::fs::remove_file(&path).unwrap();
    // (The login modal may answer it: "dialog" and "modal" are synonyms to terms mode.)
    assert!(!terms("Open the import dialog").contains(&id(0)));
    assert!(find(&index, "uploads a csv").is_empty());
    assert_eq!(terms("Wait for the login modal"), [id(1)]);
}
