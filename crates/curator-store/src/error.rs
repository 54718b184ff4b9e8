//! The store's error type: every variant names the path, id, field or rule involved, so a
//! message read on its own says what to fix.
//!
//! Files that a *listing* cannot serve are not errors but [`crate::Problem`]s (one bad file never
//! hides the others); these errors are for the single operation the caller asked for.

use std::path::PathBuf;
use std::time::Duration;

use curator_core::codec::{ParseError, WriteError};

use crate::lock::LockHolder;
use crate::store::ProblemKind;

/// Result with the store's error.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What went wrong in the store.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file system call failed on `path`.
    #[error("I/O error on {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    /// No observation file carries this id.
    #[error("observation {id} not found")]
    NotFound { id: String },
    /// The same id is in two or more folders; the store does not guess which one is meant.
    #[error("duplicate id {id}: found in {}", display_paths(paths))]
    DuplicateId { id: String, paths: Vec<PathBuf> },
    /// The security scanner blocked the text (agent-qa-memory §5.9, §7).
    #[error("security scan blocked observation {id}: rule {rule}")]
    Unsafe { id: String, rule: String },
    /// A scope folder that does not stay under the memory root (agent-qa-memory §1.8, stricter).
    #[error("scope {scope:?} of tier {tier} escapes the memory root {root}: {reason}")]
    Scope { tier: String, scope: String, root: PathBuf, reason: String },
    /// The file exists but is not a valid observation (rule named by the codec).
    #[error("{path}: {source}")]
    Parse { path: PathBuf, source: ParseError },
    /// The observation cannot be written as an agent-qa file.
    #[error("cannot write {path}: {source}")]
    Write { path: PathBuf, source: WriteError },
    /// The file exists but is refused for another reason (too large, not UTF-8, misplaced...).
    #[error("{path}: {kind}")]
    Refused { path: PathBuf, kind: ProblemKind },
    /// Somebody else held the lock for the whole timeout.
    #[error("{}", lock_timeout_message(path, holder.as_ref(), *waited))]
    LockTimeout { path: PathBuf, holder: Option<LockHolder>, waited: Duration },
    /// The lock file could not be created or verified for a reason other than contention.
    #[error("lock {path}: {reason}")]
    Lock { path: PathBuf, reason: String },
    /// A journal line (1-based) that is not a valid entry and is not a torn last line.
    #[error("journal {path} line {line}: {reason}")]
    Journal { path: PathBuf, line: usize, reason: String },
    /// The memory root is missing or not a directory.
    #[error("memory root {path} is not a directory")]
    NotADirectory { path: PathBuf },
    /// A database-backed store failed (curator-pg): `what` names the operation, `source` is the
    /// driver's error (its SQLSTATE decides whether a transaction is retried).
    #[error("database error while {what}: {source}")]
    Database { what: String, source: Box<dyn std::error::Error + Send + Sync> },
    /// The full-text index could not answer (file store; see `index`).
    #[error(transparent)]
    Index(#[from] crate::index::IndexError),
    /// A run id or breaker key that cannot name a session or a breaker (it would not be a
    /// plain file name under `<root>/.curator/`).
    #[error("invalid {kind} {key:?}: {rule}")]
    InvalidKey { kind: &'static str, key: String, rule: String },
    /// A run-session or breaker file that is not the JSON this store writes.
    #[error("{path}: not a valid {what}: {reason}")]
    State { path: PathBuf, what: &'static str, reason: String },
    /// A step of the transaction failed after its change was journaled, so the transaction can
    /// only be rolled back: later changes are refused and nothing of it stands (the file store
    /// after a failed write or fsync, as PostgreSQL after a failed statement).
    #[error("transaction rolled back: {reason}")]
    Aborted { reason: String },
    /// The store does not keep this kind of data (a store of observations only, such as a test
    /// double, keeps the [`crate::Store`] trait's refusing defaults).
    #[error("this store does not support {operation}")]
    Unsupported { operation: &'static str },
}

impl Error {
    /// Whether the store could not look at all (a file system call failed, a file could not be
    /// read, a lock or the database did not answer), as against having looked and found the
    /// content wanting (absent, unparsable, refused by the scanner). A change that met the
    /// first may well succeed on a retry; reporting it as "not found" would lose it for good.
    pub fn is_environmental(&self) -> bool {
        match self {
            Error::Io { .. }
            | Error::LockTimeout { .. }
            | Error::Lock { .. }
            | Error::Database { .. }
            | Error::Aborted { .. } => true,
            Error::Refused { kind, .. } => matches!(kind, ProblemKind::Unreadable(_)),
            _ => false,
        }
    }

    /// Wraps an I/O error with the path it happened on.
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { path: path.into(), source }
    }
}

fn display_paths(paths: &[PathBuf]) -> String {
    paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(" and ")
}

fn lock_timeout_message(
    path: &std::path::Path,
    holder: Option<&LockHolder>,
    waited: Duration,
) -> String {
    let waited = format_duration(waited);
    match holder {
        Some(h) => format!(
            "lock held by pid {} since {} ({}); waited {waited}",
            h.pid,
            h.timestamp,
            path.display()
        ),
        None => format!("lock {} could not be acquired; waited {waited}", path.display()),
    }
}

fn format_duration(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{:.3}s", d.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_timeout_names_the_holder_and_the_wait() {
        let err = Error::LockTimeout {
            path: PathBuf::from("/m/.curator.lock"),
            holder: Some(LockHolder { pid: 4242, timestamp: "2026-04-10T12:00:00.000Z".into() }),
            waited: Duration::from_secs(120),
        };
        assert_eq!(
            err.to_string(),
            "lock held by pid 4242 since 2026-04-10T12:00:00.000Z (/m/.curator.lock); waited 120s"
        );
    }

    #[test]
    fn duplicate_id_names_every_path() {
        let err = Error::DuplicateId {
            id: "obs_a".into(),
            paths: vec!["/m/tests/a/obs_a.md".into(), "/m/tests/b/obs_a.md".into()],
        };
        assert_eq!(
            err.to_string(),
            "duplicate id obs_a: found in /m/tests/a/obs_a.md and /m/tests/b/obs_a.md"
        );
    }
}
