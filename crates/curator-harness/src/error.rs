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
    /// A file changed under the pass in a way appends cannot explain; nothing was written.
    #[error("{file} changed under the pass: {detail}")]
    Changed {
        /// The file.
        file: &'static str,
        /// What was seen.
        detail: String,
    },
    /// The state directory does not exist: only `append` and `issue` create one, so a mistyped
    /// `--state-dir` is an error instead of a pass over a fresh, empty state (issue 16).
    #[error("harness state directory {path} does not exist (only `append` and `issue` create one)")]
    NoState {
        /// The missing directory.
        path: PathBuf,
    },
    /// Another curator pass (or triage) holds the pass lock; a manual trigger is refused at once
    /// instead of waiting (harness-curator §8.1 "refused with 409").
    #[error("a curator pass is already running: {holder} ({path})")]
    Busy {
        /// The lock file.
        path: PathBuf,
        /// Who holds it, as the lock file says (`pid N since <time>`).
        holder: String,
    },
    /// No issue in issues.json has this id.
    #[error("no issue {id} in issues.json")]
    UnknownIssue {
        /// The id asked for.
        id: String,
    },
}

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io { path: path.into(), source }
    }

    pub(crate) fn invalid(field: &'static str, rule: impl Into<String>) -> Self {
        Self::Invalid { field, rule: rule.into() }
    }

    /// A lock timeout on the pass lock becomes [`Error::Busy`]; other errors pass through.
    pub(crate) fn busy_if_held(e: curator_store::Error) -> Self {
        match e {
            curator_store::Error::LockTimeout { path, holder, .. } => Error::Busy {
                path,
                holder: match holder {
                    Some(h) => format!("pid {} since {}", h.pid, h.timestamp),
                    None => "holder unknown".to_string(),
                },
            },
            other => Error::Store(other),
        }
    }
}
