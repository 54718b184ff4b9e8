//! Where a command runs: the memory root, the config and the store, resolved once.
//!
//! Resolution order for the root: `--root` (or `$CURATOR_ROOT`), then `services.memory.dir` of the
//! config file relative to the config's folder (agent-qa's `resolveMemoryRoot`), then
//! `./agent-qa-memory`. The config file is `--config`, else `./agent-qa.config.yaml` if present.
//!
//! The store (issue 7 item 4) is `--store` (or `$CURATOR_STORE`), else the config's
//! `curator.store`, else the file store at the root. A `postgres://` URL may carry a password,
//! so no message here ever repeats it: the database is named by host, port and name only.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, Result, bail};
use curator_core::config::Config;
use curator_pg::{PgOptions, PgStore};
use curator_store::{FileStore, FileStoreOptions, Store};

use crate::args::GlobalArgs;

/// The default config file agent-qa reads from its working directory.
const DEFAULT_CONFIG_FILE: &str = "agent-qa.config.yaml";

/// Which store a command uses.
#[derive(Clone, PartialEq, Eq)]
pub(crate) enum StoreChoice {
    /// Files under the memory root (the default).
    Files,
    /// A PostgreSQL database; the URL is never printed.
    Postgres(String),
}

impl std::fmt::Debug for StoreChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreChoice::Files => f.write_str("Files"),
            StoreChoice::Postgres(_) => f.write_str("Postgres(<url>)"),
        }
    }
}

impl StoreChoice {
    /// Reads a `--store` / `$CURATOR_STORE` / `curator.store` value; `source` names where it
    /// came from for the error.
    pub(crate) fn parse(value: &str, source: &str) -> Result<Self> {
        let value = value.trim();
        if value == "file" || value == "files" {
            return Ok(StoreChoice::Files);
        }
        if value.starts_with("postgres://") || value.starts_with("postgresql://") {
            return Ok(StoreChoice::Postgres(value.to_owned()));
        }
        // Only the scheme is repeated: the rest of a mistyped URL may hold a password.
        let scheme = value.split_once("://").map_or("(none)", |(s, _)| s);
        bail!(
            "{source}: unsupported store (expected postgres://user@host:port/db, postgresql://… \
             or file); the value's scheme is {scheme:?}"
        )
    }
}

/// A resolved command context.
#[derive(Debug)]
pub(crate) struct Context {
    pub(crate) root: PathBuf,
    pub(crate) config: Config,
    pub(crate) json: bool,
    pub(crate) store: StoreChoice,
}

impl Context {
    pub(crate) fn load(global: &GlobalArgs) -> Result<Self> {
        let config = load_config(global.config.as_deref())?;
        let root = match &global.root {
            Some(root) => root.clone(),
            None => config.memory_root(),
        };
        let store = match (&global.store, &config.curator.store) {
            (Some(value), _) => StoreChoice::parse(value, "--store (or $CURATOR_STORE)")?,
            (None, Some(value)) => StoreChoice::parse(value, "curator.store in the config")?,
            (None, None) => StoreChoice::Files,
        };
        Ok(Context { root, config, json: global.json, store })
    }

    /// Opens the selected store: the file store at the root (which must exist; `curator init`
    /// creates it) or the PostgreSQL database (migrated to this binary's schema on open).
    pub(crate) fn store(&self) -> Result<Box<dyn Store>> {
        Ok(match &self.store {
            StoreChoice::Files => Box::new(self.file_store()?),
            StoreChoice::Postgres(url) => Box::new(self.pg_store(url, true)?),
        })
    }

    /// [`Context::store`] shared, plus the folder a server shows as its root (the memory root;
    /// a PostgreSQL store keeps nothing there).
    pub(crate) fn shared_store(&self) -> Result<(Arc<dyn Store>, PathBuf)> {
        Ok(match &self.store {
            StoreChoice::Files => {
                let store = self.file_store()?;
                let root = store.root().to_path_buf();
                (Arc::new(store), root)
            }
            StoreChoice::Postgres(url) => (Arc::new(self.pg_store(url, true)?), self.root.clone()),
        })
    }

    /// The store for messages: `memory root DIR` or `PostgreSQL host:port/db` (no password).
    pub(crate) fn describe_store(&self) -> String {
        match &self.store {
            StoreChoice::Files => format!("memory root {}", self.root.display()),
            StoreChoice::Postgres(url) => match curator_pg::target_of(url) {
                Ok(target) => format!("PostgreSQL {target}"),
                Err(_) => "PostgreSQL (unparsable URL)".to_owned(),
            },
        }
    }

    /// The file store at the root; the root must exist.
    pub(crate) fn file_store(&self) -> Result<FileStore> {
        if self.root.exists() && !self.root.is_dir() {
            bail!(
                "memory root {} is not a directory (--root names the folder that holds products/, suites/ and tests/)",
                self.root.display()
            );
        }
        if !self.root.is_dir() {
            bail!(
                "memory root {} does not exist (create it with `curator init`, or pass --root)",
                self.root.display()
            );
        }
        if let Some(memory) = self.workspace_memory_root() {
            bail!(
                "{} is a workspace, not a memory root: it holds {DEFAULT_CONFIG_FILE} and no \
                 products/, suites/ or tests/ folder, and its memory root is {} (pass --root {}, \
                 or run from the workspace without --root)",
                self.root.display(),
                memory.display(),
                memory.display()
            );
        }
        let options = FileStoreOptions {
            lock_timeout: Duration::from_millis(self.config.memory.lock_timeout_ms),
            ..FileStoreOptions::default()
        };
        FileStore::open(&self.root, options)
            .with_context(|| format!("opening memory root {}", self.root.display()))
    }

    /// The memory root beside a workspace that `--root` named by mistake: the root holds
    /// agent-qa's config file and no tier folder, and the memory root the config names (or
    /// `agent-qa-memory/`) holds one. Written into, the workspace would take runs whose memory
    /// lives next door (their confirmations lost to the real root).
    fn workspace_memory_root(&self) -> Option<PathBuf> {
        let has_tiers =
            |dir: &Path| ["products", "suites", "tests"].iter().any(|t| dir.join(t).is_dir());
        if !self.root.join(DEFAULT_CONFIG_FILE).is_file() || has_tiers(&self.root) {
            return None;
        }
        let configured =
            load_config(Some(&self.root.join(DEFAULT_CONFIG_FILE))).ok().map(|c| c.memory_root());
        let candidates = configured.into_iter().chain([self.root.join("agent-qa-memory")]);
        candidates.filter(|c| c != &self.root).find(|c| has_tiers(c))
    }

    /// The curator settings of the config: trust deltas, ablation, blame policy, review gate.
    pub(crate) fn curate_options(&self) -> curator_engine::curate::CurateOptions {
        let m = &self.config.memory;
        curator_engine::curate::CurateOptions {
            deltas: curator_core::trust::TrustDeltas {
                confirm: m.trust_confirm_delta,
                contradict: m.trust_contradict_delta,
            },
            now: None,
            ablation_enabled: m.ablation_enabled,
            policy: self.config.curator.policy,
            review: self.config.curator.review,
            min_trust: m.min_trust,
        }
    }

    /// The probation injections the config asks for (issue 18).
    pub(crate) fn probation(&self) -> Option<curator_engine::probation::ProbationOptions> {
        let c = &self.config.curator;
        curator_engine::probation::ProbationOptions::from_config(
            c.policy,
            c.review,
            c.probation_rate,
        )
    }

    /// The PostgreSQL store at `url`; `migrate` applies pending migrations on open.
    pub(crate) fn pg_store(&self, url: &str, migrate: bool) -> Result<PgStore> {
        // A writer waits for another session's lock as long as it waits for the file store's
        // writer lock (`curatorLockTimeout`), then gives up with nothing applied.
        let lock_timeout = Some(Duration::from_millis(self.config.memory.lock_timeout_ms));
        PgStore::connect(url, PgOptions { migrate, lock_timeout, ..PgOptions::default() })
            .context("opening the PostgreSQL store")
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
    let text =
        read_config(&path).with_context(|| format!("reading config file {}", path.display()))?;
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    Config::from_yaml_str(&text, &dir).with_context(|| format!("in config file {}", path.display()))
}

/// The config's text, at most [`MAX_CONFIG_BYTES`]: a config named on the command line may
/// be a pipe (`--config <(…)`), so it is read as a stream, but never without a bound.
fn read_config(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(path)?.take(MAX_CONFIG_BYTES + 1).read_to_string(&mut text)?;
    if text.len() as u64 > MAX_CONFIG_BYTES {
        let why = format!("larger than {MAX_CONFIG_BYTES} bytes: not a config file");
        return Err(std::io::Error::new(std::io::ErrorKind::FileTooLarge, why));
    }
    Ok(text)
}

/// The largest config file read. agent-qa's configs are a few hundred bytes.
const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// The cross-mission identity directory of harness memory: `--identity` (which clap also fills
/// from `$CURATOR_IDENTITY`), else `~/.curator/identity`.
pub(crate) fn identity_dir(explicit: Option<&Path>) -> Result<PathBuf> {
    if let Some(dir) = explicit {
        return Ok(dir.to_path_buf());
    }
    let home = std::env::var_os("HOME").context(
        "no --identity, no $CURATOR_IDENTITY and no $HOME to default to ~/.curator/identity",
    )?;
    Ok(PathBuf::from(home).join(".curator").join("identity"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_store_is_file_or_a_postgres_url_and_errors_hide_the_url() {
        assert_eq!(StoreChoice::parse("file", "x").unwrap(), StoreChoice::Files);
        let pg = StoreChoice::parse("postgres://u:pw@h:5/db", "x").unwrap();
        assert_eq!(pg, StoreChoice::Postgres("postgres://u:pw@h:5/db".into()));
        assert!(!format!("{pg:?}").contains("pw"));
        assert!(StoreChoice::parse("postgresql://h/db", "x").is_ok());
        let err = StoreChoice::parse("mysql://u:secret@h/db", "--store").unwrap_err().to_string();
        assert!(err.contains("--store") && err.contains("\"mysql\""), "{err}");
        assert!(!err.contains("secret"), "{err}");
    }
}
