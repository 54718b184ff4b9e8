//! The file store's run sessions and breaker windows: JSON files under `<root>/.curator/`
//! (agent-qa-memory §3.4, §9; issue 7 item 4).
//!
//! * `runs/<run_id>.json` — a [`RunSession`]. Replaced atomically, so a reader sees the old or
//!   the new session, never a torn one; keys a newer curator wrote are kept. A step is read,
//!   decided and written under `runs/<run_id>.lock` (see [`update_step`]), so steps of one run
//!   recorded at the same instant by several processes never lose each other.
//! * `records/<run_id>.json` — what a finished run reported, as the curator kept it (issue 15;
//!   replaced atomically, so the last curate of a run id wins and a reader never sees a torn
//!   one).
//! * `breaker/<key>.json` — one breaker window, changed only under `breaker/<key>.lock` (the
//!   agent-qa lock protocol, per key), so concurrent outcomes are never lost.
//!
//! Deleting `.curator/` loses these (agent-qa keeps them in memory only); no observation is lost.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::lock::{LockOptions, acquire_lock};
use crate::run_state::{RunSession, check_breaker_key, check_run_id};
use crate::store::StepRecord;
use crate::{Error, Result, atomic_write};

/// How long a breaker change waits for another process changing the same key.
const BREAKER_LOCK_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a step's record waits for another step of the same run being recorded.
const SESSION_LOCK_TIMEOUT: Duration = Duration::from_secs(30);

/// `<root>/.curator/runs/<run_id>.json`, after checking the id.
pub(crate) fn session_path(root: &Path, run_id: &str) -> Result<PathBuf> {
    check_run_id(run_id)?;
    Ok(root.join(".curator").join("runs").join(format!("{run_id}.json")))
}

/// `<root>/.curator/records/<run_id>.json`, after checking the id.
pub(crate) fn record_path(root: &Path, run_id: &str) -> Result<PathBuf> {
    check_run_id(run_id)?;
    Ok(root.join(".curator").join("records").join(format!("{run_id}.json")))
}

pub(crate) fn keep_run_record(root: &Path, run_id: &str, record: &serde_json::Value) -> Result<()> {
    write_json(&record_path(root, run_id)?, record, "run record")
}

pub(crate) fn load_run_record(root: &Path, run_id: &str) -> Result<Option<serde_json::Value>> {
    let path = record_path(root, run_id)?;
    let Some(text) = read_optional(&path)? else { return Ok(None) };
    serde_json::from_str(&text).map(Some).map_err(|e| Error::State {
        path,
        what: "run record",
        reason: e.to_string(),
    })
}

/// `<root>/.curator/breaker/<key>.json`, after checking the key.
pub(crate) fn breaker_path(root: &Path, key: &str) -> Result<PathBuf> {
    check_breaker_key(key)?;
    Ok(root.join(".curator").join("breaker").join(format!("{key}.json")))
}

/// The text of `path`, `None` when it does not exist.
fn read_optional(path: &Path) -> Result<Option<String>> {
    match crate::read_regular_to_string(path, crate::MAX_STATE_FILE) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(path, e)),
    }
}

/// Writes `value` as pretty JSON plus a newline, creating the folder first.
fn write_json(path: &Path, value: &impl serde::Serialize, what: &'static str) -> Result<()> {
    let mut json = serde_json::to_vec_pretty(value).map_err(|e| Error::State {
        path: path.to_owned(),
        what,
        reason: e.to_string(),
    })?;
    json.push(b'\n');
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    }
    atomic_write(path, &json)
}

pub(crate) fn load_session(root: &Path, run_id: &str) -> Result<Option<RunSession>> {
    let path = session_path(root, run_id)?;
    let Some(text) = read_optional(&path)? else { return Ok(None) };
    serde_json::from_str(&text).map(Some).map_err(|e| Error::State {
        path,
        what: "run session",
        reason: e.to_string(),
    })
}

pub(crate) fn record_step(
    root: &Path,
    run_id: &str,
    step: u64,
    ids: &[String],
    probation: Option<&str>,
) -> Result<()> {
    let record = StepRecord { ids: ids.to_vec(), probation: probation.map(str::to_owned) };
    update_step(root, run_id, step, &mut |_| Ok(record.clone()))
}

/// Reads the session, asks `decide` and writes its answer for `step`, holding
/// `.curator/runs/<run_id>.lock` throughout: the steps of one run queried at once each see the
/// others' records and none is lost (a dead holder's lock is taken over, as the writer
/// lock's is).
pub(crate) fn update_step(
    root: &Path,
    run_id: &str,
    step: u64,
    decide: &mut dyn FnMut(Option<&RunSession>) -> Result<StepRecord>,
) -> Result<()> {
    crate::check_step_index(step)?;
    let path = session_path(root, run_id)?;
    let dir = path.parent().unwrap_or(root);
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let guard =
        acquire_lock(&path.with_extension("lock"), &LockOptions { timeout: SESSION_LOCK_TIMEOUT })?;
    let result = load_session(root, run_id).and_then(|current| {
        let record = decide(current.as_ref())?;
        let mut session = match current {
            Some(s) => s,
            None if record.ids.is_empty() => return Ok(()),
            None => RunSession { run_id: run_id.to_owned(), ..RunSession::default() },
        };
        if !session.set_step(step, &record.ids, record.probation.as_deref()) {
            return Ok(());
        }
        write_json(&path, &session, "run session")
    });
    // Written or not, the outcome stands: a lock file left behind is removed by the next
    // writer, and failing here would have a caller retry a write that was made.
    if let Err(release) = guard.release() {
        tracing::warn!("releasing the run session's lock: {release}");
    }
    result
}

#[cfg(test)]
fn record_injection(root: &Path, run_id: &str, step: u64, ids: &[String]) -> Result<()> {
    record_step(root, run_id, step, ids, None)
}

pub(crate) fn load_breaker(root: &Path, key: &str) -> Result<Option<serde_json::Value>> {
    let path = breaker_path(root, key)?;
    let Some(text) = read_optional(&path)? else { return Ok(None) };
    serde_json::from_str(&text).map(Some).map_err(|e| Error::State {
        path,
        what: "breaker state",
        reason: e.to_string(),
    })
}

pub(crate) fn update_breaker(
    root: &Path,
    key: &str,
    change: &mut dyn FnMut(Option<serde_json::Value>) -> serde_json::Value,
) -> Result<serde_json::Value> {
    let path = breaker_path(root, key)?;
    let dir = path.parent().unwrap_or(root);
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let guard =
        acquire_lock(&path.with_extension("lock"), &LockOptions { timeout: BREAKER_LOCK_TIMEOUT })?;
    let result = load_breaker(root, key).and_then(|current| {
        let next = change(current);
        write_json(&path, &next, "breaker state")?;
        Ok(next)
    });
    if let Err(release) = guard.release() {
        tracing::warn!("releasing the breaker's lock: {release}");
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(xs: &[&str]) -> Vec<String> {
        xs.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn a_later_record_for_the_same_step_replaces_its_entry() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        record_injection(root, "r1", 0, &ids(&["obs_a"])).unwrap();
        record_injection(root, "r1", 2, &ids(&["obs_b", "obs_c"])).unwrap();
        record_injection(root, "r1", 0, &ids(&["obs_d"])).unwrap();
        let s = load_session(root, "r1").unwrap().unwrap();
        assert_eq!((s.run_id.as_str(), s.injected_at(0)), ("r1", &ids(&["obs_d"])[..]));
        assert_eq!(s.injected_at(2), ["obs_b", "obs_c"]);
        assert!(root.join(".curator/runs/r1.json").is_file());
        record_injection(root, "r2", 0, &[]).unwrap();
        assert!(load_session(root, "r2").unwrap().is_none(), "nothing injected: no file");
    }

    #[test]
    fn a_probation_is_kept_with_its_step_and_replaced_with_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        record_step(root, "r1", 1, &ids(&["obs_a", "obs_p"]), Some("obs_p")).unwrap();
        let text = std::fs::read_to_string(root.join(".curator/runs/r1.json")).unwrap();
        assert!(text.contains("\"probation\""), "{text}");
        assert_eq!(load_session(root, "r1").unwrap().unwrap().probation_at(1), Some("obs_p"));
        record_step(root, "r1", 1, &ids(&["obs_a"]), None).unwrap();
        let s = load_session(root, "r1").unwrap().unwrap();
        assert_eq!((s.probation_at(1), s.injected_at(1)), (None, &ids(&["obs_a"])[..]));
        let text = std::fs::read_to_string(root.join(".curator/runs/r1.json")).unwrap();
        assert!(!text.contains("probation"), "an empty map is left out: {text}");
    }

    #[test]
    fn bad_files_and_names_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join(".curator/runs")).unwrap();
        std::fs::write(root.join(".curator/runs/r4.json"), "not json").unwrap();
        let err = load_session(root, "r4").unwrap_err();
        assert!(err.to_string().contains("r4.json") && err.to_string().contains("run session"));
        assert!(matches!(load_session(root, "../x"), Err(Error::InvalidKey { .. })));
        assert!(matches!(load_breaker(root, "a/b"), Err(Error::InvalidKey { .. })));
    }

    #[test]
    fn a_breaker_update_sees_the_previous_window_and_leaves_no_lock() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        assert_eq!(load_breaker(root, "k").unwrap(), None);
        let bump = &mut |v: Option<serde_json::Value>| {
            serde_json::json!(v.and_then(|v| v.as_u64()).unwrap_or(0) + 1)
        };
        update_breaker(root, "k", bump).unwrap();
        assert_eq!(update_breaker(root, "k", bump).unwrap(), serde_json::json!(2));
        assert_eq!(load_breaker(root, "k").unwrap(), Some(serde_json::json!(2)));
        assert!(!root.join(".curator/breaker/k.lock").exists());
    }

    #[test]
    fn a_kept_run_record_is_replaced_whole_and_bad_ones_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        assert_eq!(load_run_record(root, "r1").unwrap(), None);
        keep_run_record(root, "r1", &serde_json::json!({"status": "failed"})).unwrap();
        keep_run_record(root, "r1", &serde_json::json!({"status": "passed"})).unwrap();
        let kept = load_run_record(root, "r1").unwrap().unwrap();
        assert_eq!(kept, serde_json::json!({"status": "passed"}));
        // A run id that is also a session's file name stays apart from the session.
        assert!(root.join(".curator/records/r1.json").is_file());
        assert!(!root.join(".curator/runs/r1.json").exists());
        std::fs::write(root.join(".curator/records/r2.json"), "{").unwrap();
        let err = load_run_record(root, "r2").unwrap_err().to_string();
        assert!(err.contains("r2.json") && err.contains("run record"), "{err}");
        assert!(matches!(
            keep_run_record(root, "../x", &serde_json::json!({})),
            Err(Error::InvalidKey { .. })
        ));
    }
}
