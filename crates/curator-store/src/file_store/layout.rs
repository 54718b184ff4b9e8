//! Where observation files are, by names alone (agent-qa-memory §1.1, §1.2, §1.8 made stricter).
//!
//! Invariant: every location handed out resolves to a path under the canonicalized memory root.
//! A tier folder, scope folder or file that is a symlink is followed only when it resolves inside
//! the root; otherwise it is reported as misplaced, never read. Only names are read here (one
//! `readdir` per folder), which is what makes the id index cheap to rebuild.

use std::fs;
use std::path::{Path, PathBuf};

use curator_core::{ScopeName, Tier};

use crate::store::{Problem, ProblemKind};
use crate::{Error, Result};

/// One `obs_*.md` file found in `<tier>/<scope>/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Location {
    pub(crate) tier: Tier,
    pub(crate) scope: ScopeName,
    /// The file name without `.md`: the id the file claims (checked when parsed).
    pub(crate) stem: String,
    pub(crate) path: PathBuf,
}

/// A problem found while walking, with the tier and scope it belongs to when known (so a
/// filtered listing reports only its own).
#[derive(Debug, Clone)]
pub(crate) struct WalkProblem {
    pub(crate) tier: Tier,
    pub(crate) scope: Option<ScopeName>,
    pub(crate) problem: Problem,
}

/// Everything a walk found.
#[derive(Debug, Default)]
pub(crate) struct Walk {
    /// In tier order, then scope folder order, then agent-qa's file order within a folder.
    pub(crate) locations: Vec<Location>,
    pub(crate) problems: Vec<WalkProblem>,
}

/// agent-qa's listing rule (§1.2): `obs_` prefix and `.md` suffix, case-sensitive.
pub(crate) fn is_observation_name(name: &[u8]) -> bool {
    name.starts_with(b"obs_") && name.ends_with(b".md")
}

/// JavaScript's default sort: UTF-16 code units (differs from byte order only above U+FFFF vs
/// U+E000–U+FFFF).
pub(crate) fn sort_js(names: &mut [String]) {
    names.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
}

/// Walks every tier and scope folder under `root` (canonical).
pub(crate) fn walk(root: &Path) -> Walk {
    let mut walk = Walk::default();
    for tier in Tier::ALL {
        walk_tier(root, tier, &mut walk);
    }
    walk
}

/// Walks the scope folders of one tier.
pub(crate) fn walk_one_tier(root: &Path, tier: Tier) -> Walk {
    let mut walk = Walk::default();
    walk_tier(root, tier, &mut walk);
    walk
}

fn walk_tier(root: &Path, tier: Tier, walk: &mut Walk) {
    let tier_dir = root.join(tier.dir_name());
    let problem = |path: &Path, scope: Option<ScopeName>, kind| WalkProblem {
        tier,
        scope,
        problem: Problem { path: path.to_owned(), kind },
    };
    match inside_root(root, &tier_dir) {
        Ok(Some(_)) => {}
        Ok(None) => return,
        Err(kind) => return walk.problems.push(problem(&tier_dir, None, kind)),
    }
    let entries = match read_names(&tier_dir) {
        Ok(entries) => entries,
        Err(kind) => return walk.problems.push(problem(&tier_dir, None, kind)),
    };
    for path in entries.not_utf8.iter().filter(|p| p.is_dir()) {
        walk.problems.push(problem(path, None, not_utf8("scope folder")));
    }
    for name in entries.utf8 {
        let path = tier_dir.join(&name);
        if is_observation_name(name.as_bytes()) && !path.is_dir() {
            let kind = ProblemKind::Misplaced(format!(
                "observation file directly in the {tier} folder; agent-qa reads only \
                 {tier}/<scope>/obs_*.md"
            ));
            walk.problems.push(problem(&path, None, kind));
            continue;
        }
        match inside_root(root, &path) {
            Ok(Some(meta)) if meta.is_dir() => {}
            Ok(_) => continue, // other files in a tier folder are ignored, as agent-qa does
            Err(kind) => {
                walk.problems.push(problem(&path, None, kind));
                continue;
            }
        }
        let scope = match ScopeName::new(name.clone()) {
            Ok(scope) => scope,
            Err(e) => {
                let kind = ProblemKind::Misplaced(format!("scope folder name refused: {e}"));
                walk.problems.push(problem(&path, None, kind));
                continue;
            }
        };
        if let Some(e) = scope.write_rule_violation() {
            walk.problems.push(problem(&path, Some(scope.clone()), ProblemKind::ScopeName(e)));
        }
        walk_scope(root, tier, scope, &path, walk);
    }
}

/// Walks the one folder `<root>/<tier>/<scope>`: what [`walk`] finds there, without reading any
/// other folder. Problems of the tier or scope folder itself belong to no scope, so (as in a
/// full walk filtered to this scope) they are not reported here; `lint` walks everything.
pub(crate) fn walk_one_scope(root: &Path, tier: Tier, scope: &ScopeName) -> Walk {
    let mut walk = Walk::default();
    let tier_dir = root.join(tier.dir_name());
    let dir = tier_dir.join(scope.as_str());
    let is_dir = |path: &Path| matches!(inside_root(root, path), Ok(Some(meta)) if meta.is_dir());
    if is_dir(&tier_dir) && is_dir(&dir) {
        walk_scope(root, tier, scope.clone(), &dir, &mut walk);
    }
    walk
}

pub(crate) fn walk_scope(root: &Path, tier: Tier, scope: ScopeName, dir: &Path, walk: &mut Walk) {
    let problem = |path: &Path, kind| WalkProblem {
        tier,
        scope: Some(scope.clone()),
        problem: Problem { path: path.to_owned(), kind },
    };
    let (mut names, others) = match read_names(dir) {
        Ok(names) => (names.utf8, names.not_utf8),
        Err(kind) => return walk.problems.push(problem(dir, kind)),
    };
    for path in others
        .iter()
        .filter(|p| p.file_name().is_some_and(|n| n.as_encoded_bytes().starts_with(b"obs_")))
    {
        walk.problems.push(problem(path, not_utf8("file")));
    }
    // A temp file whose writer died is never served but is worth a line in `lint` (issue 13):
    // the next writer removes the temps of the transaction it recovers.
    for name in names.iter().filter(|n| n.starts_with('.')) {
        if let Some(pid) = crate::atomic::is_dead_writers_temp(&dir.join(name)) {
            walk.problems.push(problem(&dir.join(name), ProblemKind::LeftoverTemp { pid }));
        }
    }
    names.retain(|n| is_observation_name(n.as_bytes()));
    sort_js(&mut names);
    for name in names {
        let path = dir.join(&name);
        match inside_root(root, &path) {
            Ok(Some(meta)) if meta.is_file() => {}
            Ok(Some(_)) => {
                let kind = ProblemKind::Unreadable("not a regular file".into());
                walk.problems.push(problem(&path, kind));
                continue;
            }
            Ok(None) => continue, // deleted while we walked
            Err(kind) => {
                walk.problems.push(problem(&path, kind));
                continue;
            }
        }
        let stem = name.strip_suffix(".md").unwrap_or(&name).to_owned();
        walk.locations.push(Location { tier, scope: scope.clone(), stem, path });
    }
}

/// The entries of a folder: the UTF-8 names, and the paths of those that are not (which can
/// name neither an id nor a scope, so agent-qa cannot serve what they hold either).
struct Names {
    utf8: Vec<String>,
    not_utf8: Vec<PathBuf>,
}

fn read_names(dir: &Path) -> Result<Names, ProblemKind> {
    let entries = fs::read_dir(dir).map_err(|e| ProblemKind::Unreadable(e.to_string()))?;
    let mut names = Names { utf8: Vec::new(), not_utf8: Vec::new() };
    for entry in entries {
        let entry = entry.map_err(|e| ProblemKind::Unreadable(e.to_string()))?;
        match entry.file_name().into_string() {
            Ok(name) => names.utf8.push(name),
            Err(_) => names.not_utf8.push(entry.path()),
        }
    }
    Ok(names)
}

/// Why a name that is not UTF-8 is not read: `lint` names it, so memory in a folder or file
/// named so is not skipped without a word.
fn not_utf8(what: &str) -> ProblemKind {
    ProblemKind::Misplaced(format!("{what} name is not UTF-8: it can name no scope or id"))
}

/// Metadata of `path` (following symlinks) when it exists and resolves under `root`;
/// `Ok(None)` when it does not exist; a problem when it escapes or cannot be examined.
pub(crate) fn inside_root(root: &Path, path: &Path) -> Result<Option<fs::Metadata>, ProblemKind> {
    let link = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(ProblemKind::Unreadable(e.to_string())),
    };
    if !link.file_type().is_symlink() {
        return Ok(Some(link));
    }
    let target = match fs::canonicalize(path) {
        Ok(target) => target,
        Err(e) => {
            return Err(ProblemKind::Misplaced(format!("symlink that cannot be resolved: {e}")));
        }
    };
    if !target.starts_with(root) {
        return Err(ProblemKind::Misplaced(format!(
            "symlink to {} outside the memory root",
            target.display()
        )));
    }
    fs::metadata(&target).map(Some).map_err(|e| ProblemKind::Unreadable(e.to_string()))
}

/// `<root>/<tier>/<scope>` after checking that neither folder escapes the root; created when
/// `create` is set (one level at a time, so nothing is ever created through an escaping link).
/// `Ok(None)` when it does not exist and `create` is not set.
pub(crate) fn scope_dir(
    root: &Path,
    tier: Tier,
    scope: &ScopeName,
    create: bool,
) -> Result<Option<PathBuf>> {
    let tier_dir = root.join(tier.dir_name());
    let dir = tier_dir.join(scope.as_str());
    for folder in [&tier_dir, &dir] {
        let refuse = |reason: String| Error::Scope {
            tier: tier.dir_name().to_owned(),
            scope: scope.as_str().to_owned(),
            root: root.to_owned(),
            reason,
        };
        match inside_root(root, folder) {
            Ok(Some(meta)) if meta.is_dir() => {}
            Ok(Some(_)) => return Err(refuse(format!("{} is not a folder", folder.display()))),
            Ok(None) if create => match fs::create_dir(folder) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(Error::io(folder, e)),
            },
            Ok(None) => return Ok(None),
            Err(kind) => return Err(refuse(format!("{}: {kind}", folder.display()))),
        }
    }
    Ok(Some(dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("mem");
        fs::create_dir(&root).unwrap();
        let root = fs::canonicalize(root).unwrap();
        (dir, root)
    }

    fn touch(path: &Path) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, b"x").unwrap();
    }

    #[test]
    fn listing_rule_and_order_follow_agent_qa() {
        let (_t, root) = root();
        for name in [
            "obs_b.md",
            "obs_a.md",
            "obs_B.md",
            "README.md",
            "obs_x.txt",
            "OBS_c.md",
            ".obs_d.md.tmp-1-2",
        ] {
            touch(&root.join("tests/t_x").join(name));
        }
        let walk = walk(&root);
        let stems: Vec<&str> = walk.locations.iter().map(|l| l.stem.as_str()).collect();
        assert_eq!(stems, ["obs_B", "obs_a", "obs_b"]);
        assert!(walk.problems.is_empty(), "{:?}", walk.problems);
    }

    #[test]
    fn utf16_order_differs_from_byte_order_above_the_bmp() {
        let mut names = vec!["obs_\u{10000}".to_owned(), "obs_\u{FF5E}".to_owned()];
        sort_js(&mut names);
        // UTF-16: U+10000 is D800 DC00, which sorts before FF5E; UTF-8 bytes say the opposite.
        assert_eq!(names, ["obs_\u{10000}", "obs_\u{FF5E}"]);
    }

    #[test]
    fn misplaced_files_and_escaping_symlinks_are_problems() {
        let (tmp, root) = root();
        touch(&root.join("products/obs_loose.md"));
        let outside = tmp.path().join("outside");
        touch(&outside.join("obs_evil.md"));
        std::os::unix::fs::symlink(&outside, root.join("products/evil")).unwrap();
        touch(&root.join("tests/t_a/obs_ok.md"));
        std::os::unix::fs::symlink(outside.join("obs_evil.md"), root.join("tests/t_a/obs_link.md"))
            .unwrap();
        // A symlink that stays inside the root is followed.
        std::os::unix::fs::symlink(root.join("tests/t_a"), root.join("tests/t_alias")).unwrap();
        let walk = walk(&root);
        let found: Vec<String> =
            walk.locations.iter().map(|l| format!("{}/{}", l.scope, l.stem)).collect();
        assert_eq!(found, ["t_a/obs_ok", "t_alias/obs_ok"]);
        let mut problems: Vec<String> =
            walk.problems.iter().map(|p| p.problem.to_string()).collect();
        problems.sort();
        assert_eq!(problems.len(), 4, "{problems:#?}");
        assert!(problems.iter().any(|p| p.contains(
            "obs_loose.md: misplaced: observation file directly in the products folder"
        )));
        assert!(problems.iter().any(|p| p.contains("products/evil: misplaced: symlink to")
            && p.contains("outside the memory root")));
        assert!(problems.iter().any(|p| p.contains("t_a/obs_link.md: misplaced: symlink to")));
        assert!(problems.iter().any(|p| p.contains("t_alias/obs_link.md: misplaced")));
    }

    #[test]
    fn scope_dirs_never_leave_the_root() {
        let (tmp, root) = root();
        let scope = ScopeName::new("acme").unwrap();
        assert_eq!(scope_dir(&root, Tier::Products, &scope, false).unwrap(), None);
        let dir = scope_dir(&root, Tier::Products, &scope, true).unwrap().unwrap();
        assert_eq!(dir, root.join("products/acme"));
        assert!(dir.is_dir());
        // A tier folder linked outside the root: refused, and nothing is created out there.
        let outside = tmp.path().join("outside");
        fs::create_dir(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("tests")).unwrap();
        let err = scope_dir(&root, Tier::Tests, &ScopeName::new("t_x").unwrap(), true).unwrap_err();
        assert!(matches!(err, Error::Scope { .. }), "{err}");
        assert!(err.to_string().contains("escapes the memory root"), "{err}");
        assert!(fs::read_dir(&outside).unwrap().next().is_none());
    }
}
