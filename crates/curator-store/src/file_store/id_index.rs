//! The id index: which file(s) hold an id, without walking every folder per lookup (fixes
//! agent-qa-memory §11.15, where `findObservationFile` probes tiers × scopes per decision).
//!
//! Invariant: the index is a cache of *names*, never trusted blindly. It is built from one walk
//! of folder names (no file is read), kept current by this process's own writes, and every hit
//! is re-checked with a `stat` before use; a stale hit or a miss rebuilds it. Inside a
//! transaction the writer lock keeps every other writer out, so after one rebuild under the lock
//! a miss is trusted (this keeps `generate_unique`, which asks about fresh ids, at one walk per
//! transaction instead of one per id).

use std::collections::HashMap;
use std::path::Path;

use super::layout::{Location, walk};

/// id (file stem) → every location holding it (more than one is a duplicate).
#[derive(Debug, Default)]
pub(crate) struct IdIndex {
    built: bool,
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
    }

    /// Locations of `id` (checked on disk). `trust_miss` skips the rebuild on a miss (only
    /// valid under the writer lock after one rebuild).
    pub(crate) fn locate(&mut self, root: &Path, id: &str, trust_miss: bool) -> Vec<Location> {
        if self.built {
            match self.by_id.get(id) {
                Some(locs) if locs.iter().all(|l| l.path.symlink_metadata().is_ok()) => {
                    return locs.clone();
                }
                None if trust_miss => return Vec::new(),
                _ => {}
            }
        }
        self.rebuild_from(&walk(root).locations);
        self.by_id.get(id).cloned().unwrap_or_default()
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
