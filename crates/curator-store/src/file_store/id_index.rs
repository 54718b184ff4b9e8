//! The id index: which file(s) hold an id, without walking every folder per lookup (fixes
//! agent-qa-memory §11.15, where `findObservationFile` probes tiers × scopes per decision).
//!
//! Invariant: the index is a cache of *names*, never trusted blindly. It is built from one walk
//! of folder names (no file is read), kept current by this process's own writes, and every hit
//! is re-checked with a `stat` before use. A miss is checked on disk by probing each scope
//! folder for the file name (one `stat` per folder, far cheaper than a walk that reads every
//! name), and rebuilds the index only when the probe finds the id. Inside a transaction the
//! writer lock keeps every other writer out, so after one rebuild under the lock a miss is
//! trusted without a probe.
//!
//! A listing of one folder asks the index which *other* folders hold its ids: an id the index
//! does not know there (a file added by another process) rebuilds it first, so a copy made into
//! a new folder is reported as a duplicate by the next listing of either folder.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

use curator_core::Tier;

use super::layout::{Location, walk};

/// id (file stem) → every location holding it (more than one is a duplicate).
#[derive(Debug, Default)]
pub(crate) struct IdIndex {
    built: bool,
    /// How many times the index was rebuilt from a walk (a transaction trusts misses once it
    /// has seen a rebuild made while it held the lock).
    rebuilds: u64,
    by_id: HashMap<String, Vec<Location>>,
}

impl IdIndex {
    /// Replaces the index with what a walk found.
    pub(crate) fn rebuild_from(&mut self, locations: &[Location]) {
        self.by_id.clear();
        for loc in locations {
            self.by_id.entry(loc.stem.clone()).or_default().push(loc.clone());
        }
        self.built = true;
        self.rebuilds += 1;
    }

    /// Rebuilds so far (see [`IdIndex::locate`]'s `trust_miss`).
    pub(crate) fn rebuilds(&self) -> u64 {
        self.rebuilds
    }

    /// Locations of `id` (checked on disk). `trust_miss` skips the probe on a miss (only
    /// valid under the writer lock after one rebuild).
    pub(crate) fn locate(&mut self, root: &Path, id: &str, trust_miss: bool) -> Vec<Location> {
        if self.built {
            match self.by_id.get(id) {
                Some(locs) if locs.iter().all(|l| l.path.symlink_metadata().is_ok()) => {
                    return locs.clone();
                }
                None if trust_miss || !probe(root, id) => return Vec::new(),
                _ => {}
            }
        }
        self.rebuild_from(&walk(root).locations);
        self.by_id.get(id).cloned().unwrap_or_default()
    }

    /// For each location of one folder's listing, another file holding the same id, if any.
    pub(crate) fn other_holders(
        &mut self,
        root: &Path,
        locations: &[Location],
    ) -> Vec<Option<PathBuf>> {
        let known = |index: &Self, loc: &Location| {
            index.by_id.get(&loc.stem).is_some_and(|locs| locs.iter().any(|l| l.path == loc.path))
        };
        if !self.built || !locations.iter().all(|loc| known(self, loc)) {
            self.rebuild_from(&walk(root).locations);
        }
        locations
            .iter()
            .map(|loc| {
                let locs = self.by_id.entry(loc.stem.clone()).or_default();
                if !locs.iter().any(|l| l.path == loc.path) {
                    locs.push(loc.clone()); // created between the two walks
                }
                locs.retain(|l| l.path == loc.path || l.path.symlink_metadata().is_ok());
                locs.iter().find(|l| l.path != loc.path).map(|l| l.path.clone())
            })
            .collect()
    }

    /// Records a file this process just wrote.
    pub(crate) fn insert(&mut self, loc: Location) {
        let locs = self.by_id.entry(loc.stem.clone()).or_default();
        if !locs.iter().any(|l| l.path == loc.path) {
            locs.push(loc);
        }
    }

    /// Forgets a file this process just deleted (or found missing).
    pub(crate) fn remove(&mut self, id: &str, path: &Path) {
        if let Some(locs) = self.by_id.get_mut(id) {
            locs.retain(|l| l.path != path);
            if locs.is_empty() {
                self.by_id.remove(id);
            }
        }
    }
}

/// Whether any `<tier>/<scope>/<id>.md` exists: one `readdir` per tier folder and one `stat` per
/// scope folder. A hit only triggers a rebuild, which applies the walk's rules (symlinks,
/// misplaced files), so the probe may be loose about them.
fn probe(root: &Path, id: &str) -> bool {
    let file = format!("{id}.md");
    Tier::ALL.iter().any(|tier| {
        fs::read_dir(root.join(tier.dir_name())).is_ok_and(|entries| {
            entries.flatten().any(|entry| entry.path().join(&file).symlink_metadata().is_ok())
        })
    })
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;

    #[test]
    fn hits_are_rechecked_and_misses_rebuild() {
        let tmp = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(tmp.path()).unwrap();
        let a = root.join("tests/t_a/obs_x.md");
        fs::create_dir_all(a.parent().unwrap()).unwrap();
        fs::write(&a, "x").unwrap();
        let mut index = IdIndex::default();
        assert_eq!(index.locate(&root, "obs_x", false).len(), 1);
        // Another process moves the file: the stale hit is noticed and the index rebuilt.
        let b = root.join("tests/t_b/obs_x.md");
        fs::create_dir_all(b.parent().unwrap()).unwrap();
        fs::rename(&a, &b).unwrap();
        assert_eq!(index.locate(&root, "obs_x", false)[0].path, b);
        // A new file written elsewhere is found on a miss, unless misses are trusted.
        let c = root.join("products/p/obs_y.md");
        fs::create_dir_all(c.parent().unwrap()).unwrap();
        fs::write(&c, "y").unwrap();
        assert!(index.locate(&root, "obs_y", true).is_empty());
        assert_eq!(index.locate(&root, "obs_y", false)[0].path, c);
        index.remove("obs_y", &c);
        assert!(!index.by_id.contains_key("obs_y"));
    }
}
