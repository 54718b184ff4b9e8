//! import → export of `examples/agent-qa-memory/` is byte-identical, and both are idempotent.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use curator_pg::{Progress, export_dir, import_dir};
use curator_store::{ProblemKind, Store};

use crate::util::pg_store;

pub(crate) fn example_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/agent-qa-memory")
}

/// Every file under `root` (relative path → bytes), `.curator/` excluded.
fn files(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.file_name().is_some_and(|n| n == ".curator") {
                continue;
            }
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                out.insert(
                    path.strip_prefix(root).unwrap().to_owned(),
                    std::fs::read(&path).unwrap(),
                );
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

fn copy_tree(from: &Path, to: &Path) {
    for (rel, bytes) in files(from) {
        let path = to.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
}

#[test]
fn import_then_export_of_the_example_is_byte_identical_and_idempotent() {
    let (_db, pg) = pg_store();
    let source = example_root();
    let expected = files(&source);
    assert!(expected.len() >= 19, "the example has its observations");

    let mut seen = Vec::new();
    let report = import_dir(&pg, &source, &mut |p: Progress| seen.push(p)).unwrap();
    assert!(report.problems.is_empty(), "{:?}", report.problems);
    assert_eq!((report.added, report.updated, report.unchanged), (expected.len(), 0, 0));
    assert_eq!(seen.last(), Some(&Progress { done: expected.len(), total: expected.len() }));
    let again = import_dir(&pg, &source, &mut |_| {}).unwrap();
    assert_eq!((again.added, again.updated, again.unchanged), (0, 0, expected.len()));
    assert_eq!(pg.journal(&Default::default()).unwrap().len(), expected.len(), "one entry per add");

    let out = tempfile::tempdir().unwrap();
    let report = export_dir(&pg, out.path(), &mut |_| {}).unwrap();
    assert_eq!(report.added, expected.len());
    assert_eq!(files(out.path()), expected, "export reproduces every file byte for byte");
    let again = export_dir(&pg, out.path(), &mut |_| {}).unwrap();
    assert_eq!((again.added, again.updated, again.unchanged), (0, 0, expected.len()));
}

#[test]
fn a_changed_file_is_updated_and_a_moved_id_is_a_conflict() {
    let (_db, pg) = pg_store();
    let copy = tempfile::tempdir().unwrap();
    copy_tree(&example_root(), copy.path());
    import_dir(&pg, copy.path(), &mut |_| {}).unwrap();

    let (rel, _) = files(copy.path()).into_iter().find(|(p, _)| p.starts_with("products")).unwrap();
    let path = copy.path().join(&rel);
    let text = std::fs::read_to_string(&path).unwrap();
    let edited = text.replacen("confirmed_count: ", "confirmed_count: 9", 1);
    std::fs::write(&path, &edited).unwrap();
    // The same id moved to another scope in a second directory.
    let other = tempfile::tempdir().unwrap();
    let moved = other.path().join("tests/t_elsewhere").join(rel.file_name().unwrap());
    std::fs::create_dir_all(moved.parent().unwrap()).unwrap();
    std::fs::write(&moved, &text).unwrap();

    let report = import_dir(&pg, copy.path(), &mut |_| {}).unwrap();
    assert_eq!(report.updated, 1);
    let id = rel.file_stem().unwrap().to_str().unwrap();
    let stored = pg.get(&curator_core::ObservationId::parse(id).unwrap()).unwrap();
    assert!(stored.observation.confirmed_count >= 90, "{}", stored.observation.confirmed_count);

    let report = import_dir(&pg, other.path(), &mut |_| {}).unwrap();
    assert_eq!(report.total(), 0);
    assert!(
        matches!(&report.problems[..], [p] if matches!(&p.kind, ProblemKind::DuplicateId { .. })),
        "{:?}",
        report.problems
    );
}

#[test]
fn files_the_file_store_refuses_are_reported_not_imported() {
    let (_db, pg) = pg_store();
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("tests/t_x/obs_aa-lamp-lake-moon-reef-sand-tide-wave-wind-yarn.md");
    std::fs::create_dir_all(bad.parent().unwrap()).unwrap();
    std::fs::write(&bad, "---\nid: nope\n---\n").unwrap();
    let report = import_dir(&pg, dir.path(), &mut |_| {}).unwrap();
    assert_eq!(report.total(), 0);
    assert_eq!(report.problems.len(), 1, "{:?}", report.problems);
    assert!(report.problems[0].path.starts_with("tests/t_x"), "{:?}", report.problems[0].path);
}
