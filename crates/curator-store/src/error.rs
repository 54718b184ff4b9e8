//! The store's error type. STUB: the store helper extends it.

/// Result with the store's error.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What went wrong in the store.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error("I/O error on {path}: {source}")]
    Io { path: std::path::PathBuf, source: std::io::Error },
}
