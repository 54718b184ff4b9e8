//! Where a command runs: the memory root and the config, resolved once.
//!
//! Resolution order for the root: `--root` (or `$CURATOR_ROOT`), then `services.memory.dir` of the
//! config file relative to the config's folder (agent-qa's `resolveMemoryRoot`), then
//! `./agent-qa-memory`. The config file is `--config`, else `./agent-qa.config.yaml` if present.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context as _, Result};
use curator_core::config::Config;
use curator_store::{FileStore, FileStoreOptions};

use crate::args::GlobalArgs;

/// The default config file agent-qa reads from its working directory.
const DEFAULT_CONFIG_FILE: &str = "agent-qa.config.yaml";

/// A resolved command context.
#[derive(Debug)]
pub(crate) struct Context {
    pub(crate) root: PathBuf,
    pub(crate) config: Config,
    pub(crate) json: bool,
}

impl Context {
    pub(crate) fn load(global: &GlobalArgs) -> Result<Self> {
        let config = load_config(global.config.as_deref())?;
        let root = match &global.root {
            Some(root) => root.clone(),
            None => config.memory_root(),
        };
        Ok(Context { root, config, json: global.json })
    }

    /// Opens the file store at the root; the root must exist (`curator init` creates it).
    pub(crate) fn store(&self) -> Result<FileStore> {
        if !self.root.is_dir() {
            anyhow::bail!(
                "memory root {} does not exist (create it with `curator init`, or pass --root)",
                self.root.display()
            );
        }
        let options = FileStoreOptions {
            lock_timeout: Duration::from_millis(self.config.memory.lock_timeout_ms),
            ..FileStoreOptions::default()
        };
        FileStore::open(&self.root, options)
            .with_context(|| format!("opening memory root {}", self.root.display()))
    }
}

fn load_config(explicit: Option<&Path>) -> Result<Config> {
    let path = match explicit {
        Some(path) => path.to_path_buf(),
        None => {
            let default = PathBuf::from(DEFAULT_CONFIG_FILE);
            if !default.is_file() {
                return Ok(Config::from_yaml_str("", Path::new("."))?);
            }
            default
        }
    };
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("reading config file {}", path.display()))?;
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    Config::from_yaml_str(&text, &dir).with_context(|| format!("in config file {}", path.display()))
}
