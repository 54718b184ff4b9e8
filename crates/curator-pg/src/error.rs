//! curator-pg's own errors: opening a database, migrating it, importing and exporting.
//!
//! Operations of the [`curator_store::Store`] trait return the store's error instead (database
//! failures there are [`curator_store::Error::Database`]); this type covers what only a
//! PostgreSQL store can get wrong. Messages name the database by host, port and name, never by
//! its URL: a URL may carry a password.

use std::path::PathBuf;

/// Result with curator-pg's error.
pub type Result<T, E = PgError> = std::result::Result<T, E>;

/// What went wrong opening, migrating or copying a PostgreSQL store.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PgError {
    /// The connection string could not be understood.
    #[error("invalid PostgreSQL connection string: {0}")]
    Config(String),
    /// The server could not be reached or refused the login.
    #[error("cannot connect to PostgreSQL at {target}: {source}")]
    Connect { target: String, source: Box<dyn std::error::Error + Send + Sync> },
    /// The database was migrated by a newer curator; this binary would misread it.
    #[error(
        "database {target} has schema version {found}, newer than the {supported} this curator \
         knows: upgrade curator before using this database"
    )]
    SchemaTooNew { target: String, found: i32, supported: i32 },
    /// A migration recorded in the database is not the one embedded in this binary.
    #[error(
        "database {target}: migration {version} ({name}) was applied with checksum {recorded}, \
         but this curator embeds checksum {embedded}: a released migration was edited"
    )]
    ChecksumMismatch {
        target: String,
        version: i32,
        name: String,
        recorded: String,
        embedded: String,
    },
    /// Applying a migration failed; its transaction was rolled back.
    #[error("database {target}: migration {version} ({name}) failed: {source}")]
    Migration { target: String, version: i32, name: String, source: tokio_postgres::Error },
    /// A store operation failed (database, scanner, codec, duplicate id…).
    #[error(transparent)]
    Store(#[from] curator_store::Error),
    /// A file of a memory directory could not be read or written.
    #[error("I/O error on {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    /// The store's internal tokio runtime could not be started.
    #[error("cannot start the PostgreSQL store's runtime: {0}")]
    Runtime(std::io::Error),
    /// The throwaway test cluster could not be set up (see [`crate::testing`]).
    #[error("test cluster: {0}")]
    Cluster(String),
}

impl PgError {
    /// Whether nothing was done for a reason that passes: the database could not be reached
    /// (refused, gone, timed out, shutting down) or a lock another session held outlasted
    /// `curatorLockTimeout`. The same call may succeed later. A refused login or a bad URL is
    /// not: retrying it changes nothing.
    pub fn is_retryable(&self) -> bool {
        match self {
            PgError::Connect { source, .. } => {
                if let Some(e) = source.downcast_ref::<tokio_postgres::Error>() {
                    return crate::store::driver_unavailable(e);
                }
                match source.downcast_ref::<deadpool_postgres::PoolError>() {
                    Some(deadpool_postgres::PoolError::Backend(e)) => {
                        crate::store::driver_unavailable(e)
                    }
                    Some(deadpool_postgres::PoolError::Timeout(_)) => true,
                    _ => false,
                }
            }
            PgError::Store(e) => {
                matches!(e, curator_store::Error::LockTimeout { .. }) || crate::is_unavailable(e)
            }
            _ => false,
        }
    }

    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        PgError::Io { path: path.into(), source }
    }
}
