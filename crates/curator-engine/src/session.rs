//! Run sessions: which observations were injected into which step (agent-qa-memory §3.4).
//!
//! agent-qa keeps `stepIndex → ids` in the provider's memory, so only the process that ran the
//! test can tell the curator what was injected. curator records it in
//! `<root>/.curator/runs/<run_id>.json` when a query is made with `--run R --step I`, so a later
//! `curate` (another process, maybe much later) can blame or confirm exactly those observations.
//!
//! Rules: a later query for the same step replaces its entry (§3.4: the last attempt counts); a
//! query that injects nothing removes the step's entry instead of leaving an earlier attempt's
//! ids to be blamed for a step they were not part of (agent-qa keeps them, a quirk we fix). The
//! file is replaced atomically, so a reader sees the old or the new session, never a torn one;
//! keys we do not know (written by a newer curator) are kept. Steps of one run are recorded
//! one after another by the harness that runs them; two processes recording the same run at the
//! same instant could lose one update (last writer wins).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Longest accepted run id, in bytes.
pub const MAX_RUN_ID_LEN: usize = 128;

/// Why a run session could not be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SessionError {
    /// The run id would not be a plain file name under `.curator/runs/`.
    #[error(
        "invalid run id {0:?}: use 1-{MAX_RUN_ID_LEN} characters from A-Z a-z 0-9 . _ -, not starting with '.'"
    )]
    InvalidRunId(String),
    /// The session file could not be read.
    #[error("{}: cannot read run session: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    /// The session file is not a run session.
    #[error("{}: not a run session: {source}", path.display())]
    Malformed { path: PathBuf, source: serde_json::Error },
    /// The session file could not be written.
    #[error("{}: cannot write run session: {source}", path.display())]
    Write { path: PathBuf, source: Box<curator_store::Error> },
}

/// The recorded injections of one run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunSession {
    pub run_id: String,
    /// Step index (0-based, as agent-qa's `stepIndex`) → injected ids, best first. Only steps
    /// that injected at least one observation have an entry.
    #[serde(default)]
    pub injected: BTreeMap<u64, Vec<String>>,
    /// Keys this version does not know, kept on rewrite.
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

impl RunSession {
    /// The ids injected into `step`, or nothing.
    pub fn injected_at(&self, step: u64) -> &[String] {
        self.injected.get(&step).map_or(&[], Vec::as_slice)
    }
}

/// Checks that `run_id` is a safe file name: ASCII letters, digits, `.`, `_`, `-`; not starting
/// with `.` (no `..`, no hidden files); at most [`MAX_RUN_ID_LEN`] bytes.
pub fn validate_run_id(run_id: &str) -> Result<(), SessionError> {
    let ok = !run_id.is_empty()
        && run_id.len() <= MAX_RUN_ID_LEN
        && !run_id.starts_with('.')
        && run_id.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if ok { Ok(()) } else { Err(SessionError::InvalidRunId(run_id.to_owned())) }
}

/// `<root>/.curator/runs/<run_id>.json`, after checking the id.
pub fn session_path(root: &Path, run_id: &str) -> Result<PathBuf, SessionError> {
    validate_run_id(run_id)?;
    Ok(root.join(".curator").join("runs").join(format!("{run_id}.json")))
}

/// The session of `run_id`, or `None` if nothing was ever recorded for it.
pub fn load_session(root: &Path, run_id: &str) -> Result<Option<RunSession>, SessionError> {
    let path = session_path(root, run_id)?;
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(SessionError::Read { path, source }),
    };
    let session =
        serde_json::from_str(&text).map_err(|source| SessionError::Malformed { path, source })?;
    Ok(Some(session))
}

/// Records that `ids` were injected into `step` of `run_id`, replacing what an earlier query
/// for that step recorded; empty `ids` removes the step's entry.
pub fn record_injection(
    root: &Path,
    run_id: &str,
    step: u64,
    ids: &[String],
) -> Result<(), SessionError> {
    let path = session_path(root, run_id)?;
    let mut session = match load_session(root, run_id)? {
        Some(s) => s,
        None if ids.is_empty() => return Ok(()),
        None => RunSession { run_id: run_id.to_owned(), ..RunSession::default() },
    };
    if ids.is_empty() {
        if session.injected.remove(&step).is_none() {
            return Ok(());
        }
    } else {
        session.injected.insert(step, ids.to_vec());
    }
    let mut json = serde_json::to_vec_pretty(&session).expect("a session always serializes");
    json.push(b'\n');
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| SessionError::Write {
            path: path.clone(),
            source: Box::new(curator_store::Error::Io { path: dir.to_owned(), source: e }),
        })?;
    }
    curator_store::atomic_write(&path, &json)
        .map_err(|source| SessionError::Write { path, source: Box::new(source) })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(xs: &[&str]) -> Vec<String> {
        xs.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn run_ids_must_be_plain_file_names() {
        for good in ["r_lack-auto-quit", "run-2026.04.10_1", "A"] {
            validate_run_id(good).unwrap();
        }
        for bad in ["", ".", "..", "../x", "a/b", "a\\b", ".hidden", "a b", "é", "a\0"] {
            assert!(validate_run_id(bad).is_err(), "{bad:?} accepted");
        }
        assert!(validate_run_id(&"r".repeat(MAX_RUN_ID_LEN + 1)).is_err());
    }

    #[test]
    fn a_later_query_for_the_same_step_replaces_its_entry() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        record_injection(root, "r1", 0, &ids(&["obs_a"])).unwrap();
        record_injection(root, "r1", 2, &ids(&["obs_b", "obs_c"])).unwrap();
        record_injection(root, "r1", 0, &ids(&["obs_d"])).unwrap();
        let s = load_session(root, "r1").unwrap().unwrap();
        assert_eq!(s.run_id, "r1");
        assert_eq!(s.injected_at(0), ["obs_d"]);
        assert_eq!(s.injected_at(2), ["obs_b", "obs_c"]);
        assert!(s.injected_at(1).is_empty());
        assert!(root.join(".curator/runs/r1.json").is_file());
    }

    #[test]
    fn injecting_nothing_clears_the_step_and_creates_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        record_injection(root, "r2", 0, &[]).unwrap();
        assert!(load_session(root, "r2").unwrap().is_none());
        record_injection(root, "r2", 1, &ids(&["obs_a"])).unwrap();
        record_injection(root, "r2", 1, &[]).unwrap();
        assert!(load_session(root, "r2").unwrap().unwrap().injected.is_empty());
    }

    #[test]
    fn unknown_keys_survive_a_rewrite_and_bad_files_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let runs = root.join(".curator/runs");
        std::fs::create_dir_all(&runs).unwrap();
        std::fs::write(runs.join("r3.json"), r#"{"run_id":"r3","injected":{},"note":"kept"}"#)
            .unwrap();
        record_injection(root, "r3", 4, &ids(&["obs_a"])).unwrap();
        let s = load_session(root, "r3").unwrap().unwrap();
        assert_eq!(s.extra.get("note").and_then(|v| v.as_str()), Some("kept"));
        std::fs::write(runs.join("r4.json"), "not json").unwrap();
        let err = load_session(root, "r4").unwrap_err();
        assert!(err.to_string().contains("r4.json"), "{err}");
        assert!(matches!(
            record_injection(root, "../x", 0, &ids(&["obs_a"])),
            Err(SessionError::InvalidRunId(_))
        ));
    }
}
