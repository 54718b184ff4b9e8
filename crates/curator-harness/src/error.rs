//! The harness crate's error type (STYLE §4: one `Error` per library crate).
//!
//! Every variant names the file, field or rule involved so a caller can print it as is. Bad input
//! never panics: malformed lines in the logs are skipped or kept verbatim by the readers, and only
//! refusals a caller must act on (unsafe text, invalid arguments, unmet bounds) become errors.

use std::path::PathBuf;

/// Result with the harness error.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What went wrong in a harness operation.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Reading or writing a file failed.
    #[error("I/O error on {path}: {source}")]
    Io {
        /// The file involved.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A JSON file the harness must read whole (issues.json) did not parse.
    #[error("{path}: invalid JSON: {message}")]
    Json {
        /// The file involved.
        path: PathBuf,
        /// The parser's message (line and column included).
        message: String,
    },
    /// An argument broke a rule of the spec (field and rule named in `message`).
    #[error("invalid {field}: {rule}")]
    Invalid {
        /// The field that is wrong (`role`, `feature`, `severity`, ...).
        field: &'static str,
        /// The rule it breaks.
        rule: String,
    },
    /// The security scanner refused the text (agent-qa-memory §7).
    #[error("refused {field}: unsafe text matched scanner rule {rule}")]
    Unsafe {
        /// Which field carried the text.
        field: &'static str,
        /// The scanner rule that matched.
        rule: String,
    },
    /// The lock or atomic write of curator-store failed.
    #[error("{0}")]
    Store(#[from] curator_store::Error),
    /// A rendered file could not be made to meet its bound; the previous file is kept.
    #[error("{file}: bound not met: {rule}")]
    Bound {
        /// The file whose bound failed (`summary.md`, `MEMORY.md`, ...).
        file: &'static str,
        /// The bound and the measured value.
        rule: String,
    },
    /// An LLM rewrite failed validation; the deterministic files are kept.
    #[error("LLM rewrite rejected: {}", problems.join("; "))]
    Rewrite {
        /// Every validation problem found.
        problems: Vec<String>,
    },
}

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io { path: path.into(), source }
    }

    pub(crate) fn invalid(field: &'static str, rule: impl Into<String>) -> Self {
        Self::Invalid { field, rule: rule.into() }
    }
}
