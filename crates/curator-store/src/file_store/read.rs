//! Reading one observation file into something the store may serve (agent-qa-memory §1.4, §5.9).
//!
//! agent-qa skips every file it cannot parse or that fails the security scan, silently (§1.4
//! "Ignored vs error", §11.10). Here each refusal is a [`ProblemKind`] naming the rule, so
//! listings and `lint` can say which file was refused and why.
//!
//! Files larger than the size limit are refused before parsing: an observation is a short fact
//! (agent-qa's own writers produce a few hundred bytes), and a multi-megabyte body would be read
//! into every prompt and index. The default limit is [`DEFAULT_MAX_FILE_SIZE`] (1 MiB).

use std::io::Read;
use std::path::Path;

use curator_core::Observation;
use curator_core::codec::parse_observation;
use curator_core::scanner::scan_observation;

use crate::store::ProblemKind;

/// The default largest observation file served: 1 MiB.
pub(crate) const DEFAULT_MAX_FILE_SIZE: u64 = 1 << 20;

/// A file read and accepted.
#[derive(Debug, Clone)]
pub(crate) struct Loaded {
    pub(crate) observation: Observation,
}

/// Why a file was not loaded.
#[derive(Debug, Clone)]
pub(crate) enum LoadError {
    /// It vanished since it was listed (a concurrent delete): look again, do not report.
    Missing,
    Refused(ProblemKind),
}

impl From<ProblemKind> for LoadError {
    fn from(kind: ProblemKind) -> Self {
        LoadError::Refused(kind)
    }
}

/// Reads the file's text, refusing what is too large or not UTF-8.
pub(crate) fn read_text(path: &Path, limit: u64) -> Result<String, LoadError> {
    let file = match crate::open_regular(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(LoadError::Missing),
        Err(e) => return Err(unreadable(e).into()),
    };
    let size = file.metadata().map_err(unreadable)?.len();
    if size > limit {
        return Err(ProblemKind::TooLarge { size, limit }.into());
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    // The file may grow between stat and read; never read more than the limit allows.
    file.take(limit + 1).read_to_end(&mut bytes).map_err(unreadable)?;
    if bytes.len() as u64 > limit {
        return Err(ProblemKind::TooLarge { size: bytes.len() as u64, limit }.into());
    }
    String::from_utf8(bytes)
        .map_err(|e| ProblemKind::InvalidUtf8 { valid_up_to: e.utf8_error().valid_up_to() }.into())
}

/// Reads, parses and scans the file at `path` whose name without `.md` is `stem`.
pub(crate) fn load(path: &Path, stem: &str, limit: u64) -> Result<Loaded, LoadError> {
    let loaded = load_unscanned(path, stem, limit)?;
    let observation = &loaded.observation;
    if let Some(rule) = scan_observation(&observation.title, &observation.content).rule() {
        return Err(ProblemKind::Unsafe { rule: rule.to_owned() }.into());
    }
    Ok(loaded)
}

/// [`load`] without the scanner: for the readers agent-qa does not scan with (§5.6).
pub(crate) fn load_unscanned(path: &Path, stem: &str, limit: u64) -> Result<Loaded, LoadError> {
    let text = read_text(path, limit)?;
    let observation = parse_observation(&text, stem).map_err(ProblemKind::Parse)?;
    Ok(Loaded { observation })
}

fn unreadable(e: std::io::Error) -> ProblemKind {
    ProblemKind::Unreadable(e.to_string())
}
