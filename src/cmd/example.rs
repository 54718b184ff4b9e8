//! `curator init --example DIR`: a scratch copy of the project's `examples/` folder — a memory
//! directory, the agent-qa config that points at it and the run records of `examples/runs/` —
//! so the README's walkthrough runs on files nobody tracks in git.
//!
//! The folder is embedded in the binary at build time (rust-embed, as the web UI's assets are),
//! so an installed `curator` carries it. Writing never replaces anything: `DIR` may exist and hold
//! other files, but when one of the entries the example would write (`agent-qa.config.yaml`,
//! `agent-qa-memory/`, `runs/`) is already there, the command refuses before writing a byte, and
//! every file is created with `create_new`, so a file that appears meanwhile is not overwritten
//! either. Hidden paths under `examples/` (a `.curator/` index a developer's queries left there)
//! are not part of the example and are never written.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Component, Path, PathBuf};

use anyhow::{Context as _, Result, bail};
use rust_embed::RustEmbed;
use serde::Serialize;

#[derive(RustEmbed)]
#[folder = "examples/"]
struct Example;

/// What `init --example` wrote (the `--json` shape).
#[derive(Debug, Serialize)]
pub(crate) struct Written {
    /// The directory the example was written into.
    pub(crate) dir: PathBuf,
    /// The example's agent-qa config (its `services.memory.dir` names `root`).
    pub(crate) config: PathBuf,
    /// The memory root.
    pub(crate) root: PathBuf,
    /// How many observation files the memory root holds.
    pub(crate) observations: usize,
    /// The run records, for `curator curate --run`.
    pub(crate) runs: Vec<PathBuf>,
    /// Every file written, relative to `dir`.
    pub(crate) files: Vec<String>,
}

/// The embedded files of the example, sorted, hidden paths left out.
fn example_files() -> Vec<String> {
    let mut files: Vec<String> = Example::iter()
        .map(|p| p.into_owned())
        .filter(|p| !p.split('/').any(|part| part.starts_with('.')))
        .collect();
    files.sort();
    files
}

/// Writes the example into `dir` (created when missing); see the module docs for what it refuses.
pub(crate) fn write(dir: &Path) -> Result<Written> {
    let files = example_files();
    if files.is_empty() {
        bail!("this curator binary was built without its example (examples/ was empty)");
    }
    match std::fs::metadata(dir) {
        Ok(meta) if !meta.is_dir() => bail!("{} exists and is not a directory", dir.display()),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e).with_context(|| format!("reading {}", dir.display())),
    }
    let tops: BTreeSet<&str> = files.iter().filter_map(|f| f.split('/').next()).collect();
    let taken: Vec<&str> =
        tops.iter().copied().filter(|top| dir.join(top).symlink_metadata().is_ok()).collect();
    if !taken.is_empty() {
        bail!(
            "{} already holds {}; the example never overwrites anything, so nothing was written \
             (choose a new or empty directory)",
            dir.display(),
            taken.join(", ")
        );
    }
    for rel in &files {
        let data = Example::get(rel).with_context(|| format!("embedded file {rel} is missing"))?;
        let path = dir.join(safe_relative(rel)?);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("creating {}", parent.display()))?;
        }
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .with_context(|| format!("creating {}", path.display()))?;
        file.write_all(&data.data).with_context(|| format!("writing {}", path.display()))?;
    }
    let observations = files
        .iter()
        .filter(|f| f.starts_with("agent-qa-memory/") && f.ends_with(".md"))
        .filter(|f| f.rsplit('/').next().is_some_and(|name| name.starts_with("obs_")))
        .count();
    let runs = files
        .iter()
        .filter(|f| f.starts_with("runs/") && f.ends_with(".json"))
        .map(|f| dir.join(f))
        .collect();
    Ok(Written {
        dir: dir.to_path_buf(),
        config: dir.join("agent-qa.config.yaml"),
        root: dir.join("agent-qa-memory"),
        observations,
        runs,
        files,
    })
}

/// An embedded path as a relative path of plain components (rust-embed only lists files under
/// the folder, but nothing here should ever write outside `dir`).
fn safe_relative(rel: &str) -> Result<PathBuf> {
    let path = PathBuf::from(rel);
    if path.components().all(|c| matches!(c, Component::Normal(_))) {
        Ok(path)
    } else {
        bail!("embedded example path {rel:?} is not a plain relative path")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_example_holds_a_config_a_memory_root_and_run_records() {
        let files = example_files();
        assert!(files.contains(&"agent-qa.config.yaml".to_owned()), "{files:?}");
        for run in ["runs/passed.json", "runs/failed.json", "runs/ablation.json"] {
            assert!(files.contains(&run.to_owned()), "{run} missing: {files:?}");
        }
        assert!(files.iter().any(|f| f.starts_with("agent-qa-memory/products/")));
        assert!(files.iter().all(|f| !f.contains("/.") && !f.starts_with('.')));
    }

    #[test]
    fn only_plain_relative_paths_are_written() {
        assert!(safe_relative("runs/passed.json").is_ok());
        assert!(safe_relative("../x").is_err());
        assert!(safe_relative("/etc/x").is_err());
        assert!(safe_relative("a/./b").is_ok(), "PathBuf drops `.` components");
    }
}
