//! Run sessions: which observations were injected into which step (agent-qa-memory §3.4).
//!
//! agent-qa keeps `stepIndex → ids` in the provider's memory, so only the process that ran the
//! test can tell the curator what was injected. curator records it in the store when a query is
//! made with `--run-id R --step-index N` (the file store: `<root>/.curator/runs/<run_id>.json`;
//! curator-pg: a table), so a later `curate` (another process, maybe another machine, maybe
//! much later) can blame or confirm exactly those observations.
//!
//! Rules: a later query for the same step replaces its entry (§3.4: the last attempt counts); a
//! query that injects nothing removes the step's entry instead of leaving an earlier attempt's
//! ids to be blamed for a step they were not part of (agent-qa keeps them, a quirk we fix). A
//! bad run id is refused here, before any store sees it.

use std::path::{Path, PathBuf};

use curator_store::{FileStore, FileStoreOptions, Store};

pub use curator_store::{MAX_RUN_ID_LEN, RunSession};

/// Why a run session could not be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SessionError {
    /// The run id would not be a plain file name under `.curator/runs/`.
    #[error(
        "invalid run id {0:?}: use 1-{MAX_RUN_ID_LEN} characters from A-Z a-z 0-9 . _ -, not starting with '.'"
    )]
    InvalidRunId(String),
    /// A run named like the runs curator journals its own writes under (`req-<key>`, a keyed
    /// write; `undo-<run>`, an undo; `import`, an import into PostgreSQL): its record would be
    /// taken for one of them.
    #[error(
        "run id {run_id:?} is reserved for curator's own journal runs (keyed writes are req-<key>, undos undo-<run>, an import is import): give the run another id"
    )]
    ReservedRunId { run_id: String },
    /// A step index no store can key a step by.
    #[error("invalid step index {0}: a step index is 0 to {max} (2^53 - 1)", max = curator_store::MAX_STEP_INDEX)]
    InvalidStep(u64),
    /// The store could not read or write the session (the message names the file or database).
    #[error(transparent)]
    Store(#[from] curator_store::Error),
}

/// Checks that `run_id` is a safe file name: ASCII letters, digits, `.`, `_`, `-`; not starting
/// with `.` (no `..`, no hidden files); at most [`MAX_RUN_ID_LEN`] bytes.
pub fn validate_run_id(run_id: &str) -> Result<(), SessionError> {
    if curator_store::is_valid_run_id(run_id) {
        Ok(())
    } else {
        Err(SessionError::InvalidRunId(curator_core::excerpt(run_id)))
    }
}

/// [`validate_run_id`] for the id of a run a harness runs (its step queries and its run record):
/// not one of the prefixes curator journals its own writes under, or curating the run would
/// answer "already applied" for a keyed write's run, or undo it as an undo.
pub fn validate_harness_run_id(run_id: &str) -> Result<(), SessionError> {
    validate_run_id(run_id)?;
    let prefixes = [crate::once::KEYED_RUN_PREFIX, crate::runs::UNDO_PREFIX];
    if run_id == curator_store::IMPORT_RUN_ID || prefixes.iter().any(|p| run_id.starts_with(p)) {
        return Err(SessionError::ReservedRunId { run_id: run_id.to_owned() });
    }
    Ok(())
}

/// `<root>/.curator/runs/<run_id>.json` (the file store's layout), after checking the id.
pub fn session_path(root: &Path, run_id: &str) -> Result<PathBuf, SessionError> {
    validate_run_id(run_id)?;
    Ok(root.join(".curator").join("runs").join(format!("{run_id}.json")))
}

/// The session of `run_id` in `store`, or `None` if nothing was ever recorded for it.
pub fn load_session_in(
    store: &dyn Store,
    run_id: &str,
) -> Result<Option<RunSession>, SessionError> {
    validate_run_id(run_id)?;
    Ok(store.load_session(run_id)?)
}

/// Records in `store` that `ids` were injected into `step` of `run_id`, replacing what an
/// earlier query for that step recorded; empty `ids` removes the step's entry.
pub fn record_injection_in(
    store: &dyn Store,
    run_id: &str,
    step: u64,
    ids: &[String],
) -> Result<(), SessionError> {
    validate_run_id(run_id)?;
    Ok(store.record_injection(run_id, step, ids)?)
}

/// Completes `record` from its run session in `store`: every step without an `injected` list
/// takes the ids `query --run-id` recorded (none when no session exists), and every step takes
/// the probation id recorded for it when it is among its injections.
pub fn fill_from_session(
    store: &dyn Store,
    record: &mut crate::curate::RunRecord,
) -> Result<(), SessionError> {
    let session = match &record.run_id {
        Some(run_id) => match load_session_in(store, run_id) {
            Ok(session) => session,
            // A store without sessions cannot have recorded any: nothing to fill in.
            Err(SessionError::Store(curator_store::Error::Unsupported { .. })) => None,
            Err(e) => return Err(e),
        },
        None => None,
    };
    let session = session.unwrap_or_default();
    if record.needs_session() {
        let injected =
            session.injected.iter().map(|(step, ids)| (*step as usize, ids.clone())).collect();
        record.fill_injected(&injected);
    }
    let probation =
        session.probation.iter().map(|(step, id)| (*step as usize, id.clone())).collect();
    record.fill_probation(&probation);
    Ok(())
}

/// The file store at `root` (opening one reads nothing but the root's path).
fn file_store(root: &Path) -> Result<FileStore, SessionError> {
    Ok(FileStore::open(root, FileStoreOptions::default())?)
}

/// [`load_session_in`] the file store at `root`.
pub fn load_session(root: &Path, run_id: &str) -> Result<Option<RunSession>, SessionError> {
    validate_run_id(run_id)?;
    load_session_in(&file_store(root)?, run_id)
}

/// [`record_injection_in`] the file store at `root`.
pub fn record_injection(
    root: &Path,
    run_id: &str,
    step: u64,
    ids: &[String],
) -> Result<(), SessionError> {
    validate_run_id(run_id)?;
    record_injection_in(&file_store(root)?, run_id, step, ids)
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
        assert!(matches!(err, SessionError::Store(_)) && err.to_string().contains("r4.json"));
        assert!(matches!(
            record_injection(root, "../x", 0, &ids(&["obs_a"])),
            Err(SessionError::InvalidRunId(_))
        ));
    }
}
