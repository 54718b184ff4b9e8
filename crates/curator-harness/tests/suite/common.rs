//! Shared helpers: a temp project with a state dir, a fixed clock, fixture loading.

use std::path::{Path, PathBuf};
use std::process::Command;

use curator_harness::{Harness, HarnessOptions};
use jiff::Timestamp;

pub(crate) fn fixture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

pub(crate) fn at(ts: &str) -> Timestamp {
    ts.parse().unwrap_or_else(|e| panic!("bad timestamp {ts}: {e}"))
}

/// A temp dir holding `project/` (with `.harness/` inside) and `identity/`.
#[derive(Debug)]
pub(crate) struct Env {
    _dir: tempfile::TempDir,
    pub(crate) project: PathBuf,
    pub(crate) state: PathBuf,
    pub(crate) identity: PathBuf,
}

impl Env {
    pub(crate) fn new() -> Env {
        let dir = tempfile::tempdir().expect("tempdir");
        let project = dir.path().join("shop");
        let state = project.join(".harness");
        let identity = dir.path().join("identity");
        std::fs::create_dir_all(state.join("memory")).unwrap();
        Env { _dir: dir, project, state, identity }
    }

    /// Creates project files (relative paths) with placeholder content.
    pub(crate) fn files(&self, paths: &[&str]) -> &Env {
        for p in paths {
            let path = self.project.join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, "x\n").unwrap();
        }
        self
    }

    /// Makes the project a git repo tracking every file created so far.
    pub(crate) fn git(&self) -> &Env {
        let run = |args: &[&str]| {
            let ok = Command::new("git").arg("-C").arg(&self.project).args(args).output().unwrap();
            assert!(ok.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&ok.stderr));
        };
        run(&["init", "-q"]);
        std::fs::write(self.project.join(".gitignore"), ".harness/\n").unwrap();
        run(&["add", "-A"]);
        self
    }

    pub(crate) fn write(&self, rel: &str, text: &str) {
        let path = self.state.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    pub(crate) fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.state.join(rel)).unwrap_or_default()
    }

    pub(crate) fn read_identity(&self, role: &str) -> String {
        std::fs::read_to_string(self.identity.join(format!("{role}.md"))).unwrap_or_default()
    }

    pub(crate) fn harness(&self) -> Harness {
        self.harness_with(HarnessOptions::default())
    }

    pub(crate) fn harness_with(&self, mut options: HarnessOptions) -> Harness {
        options.mission.get_or_insert_with(|| "shop@2026-04-24".to_string());
        Harness::open(&self.state, &self.identity, options)
    }

    /// The archive's entry bytes, every month's file in order.
    pub(crate) fn archived_bytes(&self) -> Vec<u8> {
        let dir = self.state.join("memory/archive");
        let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        names.retain(|p| p.file_name().unwrap().to_string_lossy().starts_with("raw-"));
        names.sort();
        names.iter().flat_map(|p| std::fs::read(p).unwrap()).collect()
    }

    /// The archive's records, in order.
    pub(crate) fn records(&self) -> Vec<serde_json::Value> {
        let dir = self.state.join("memory/archive");
        let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        names.retain(|p| p.file_name().unwrap().to_string_lossy().starts_with("dispositions-"));
        names.sort();
        names
            .iter()
            .flat_map(|p| {
                std::fs::read_to_string(p)
                    .unwrap()
                    .lines()
                    .map(|l| serde_json::from_str(l).unwrap())
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// Every file under the state and identity dirs with its bytes (for idempotency checks).
    pub(crate) fn snapshot(&self) -> Vec<(PathBuf, Vec<u8>)> {
        let mut out = Vec::new();
        for root in [&self.state, &self.identity] {
            collect(root, &mut out);
        }
        out.sort();
        out
    }
}

fn collect(dir: &Path, out: &mut Vec<(PathBuf, Vec<u8>)>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out);
        } else {
            out.push((p.clone(), std::fs::read(&p).unwrap()));
        }
    }
}

/// A raw line in canonical form.
pub(crate) fn raw(ts_sec: u32, role: &str, fid: &str, tag: &str, text: &str) -> String {
    format!("[2026-04-24T10:{:02}:{:02}Z] {role} {fid} {tag}: {text}\n", ts_sec / 60, ts_sec % 60)
}

/// Paths whose bytes differ between two snapshots (or exist in only one); empty = identical.
pub(crate) fn changed_paths(a: &[(PathBuf, Vec<u8>)], b: &[(PathBuf, Vec<u8>)]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for (p, bytes) in a {
        if b.iter().find(|(q, _)| q == p).is_none_or(|(_, other)| other != bytes) {
            out.push(p.clone());
        }
    }
    for (p, _) in b {
        if !a.iter().any(|(q, _)| q == p) {
            out.push(p.clone());
        }
    }
    out
}
