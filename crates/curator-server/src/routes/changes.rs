//! `GET /api/v1/changes?since=FP`: a cheap "did anything change on disk?" for live refresh
//! (issue 6 item 4, issue 13 item 3).
//!
//! The fingerprint comes from the server's inotify watch ([`crate::live`]): a poll costs the
//! events queued since the previous one, not a walk of the root. Where the watch cannot vouch
//! for the root, the fingerprint hashes the name, size and modification time of every
//! observation file and scope folder, the journal, and the harness files instead (metadata
//! only, never contents). Either way a change made by another process (the CLI, agent-qa, an
//! editor) changes the fingerprint as surely as one made through this server. On PostgreSQL
//! the store's change stamp (the journal's last row) is part of it: there the memory is not in
//! the root, and another machine's write is seen at the next poll.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::Path;
use std::time::UNIX_EPOCH;

use axum::extract::State;
use axum::response::Json;
use curator_core::Tier;
use serde::Deserialize;
use serde_json::{Value, json};

use super::ApiRoutes;
use crate::error::ApiError;
use crate::extract::ApiQuery;
use crate::live::Watched;
use crate::state::{AppState, blocking};

pub(crate) fn router() -> ApiRoutes {
    ApiRoutes::new().get("/changes", changes)
}

fn hash_meta(hasher: &mut DefaultHasher, path: &Path) {
    path.hash(hasher);
    match std::fs::metadata(path) {
        Ok(meta) => {
            meta.len().hash(hasher);
            let mtime = meta.modified().ok().and_then(|t| t.duration_since(UNIX_EPOCH).ok());
            mtime.map(|d| d.as_nanos()).hash(hasher);
        }
        Err(_) => 0xdead_u32.hash(hasher),
    }
}

/// Sorted entries of a folder (empty when it cannot be read).
fn sorted_entries(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out: Vec<_> = std::fs::read_dir(dir)
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    out.sort();
    out
}

/// What the UI shows, for the watch: the root, and the harness files when there is a harness.
fn watched(state: &AppState) -> Watched {
    let mut w = Watched { root: state.root().to_path_buf(), ..Watched::default() };
    if let Some(h) = state.harness() {
        w.files = vec![
            h.raw_path(),
            h.memory_path(),
            h.summary_path(),
            h.issues_path(),
            h.pending_path(),
        ];
        w.folders = vec![h.identity_dir().to_path_buf()];
    }
    w
}

/// The fingerprint of everything the UI shows: from the watch, else from a walk; and, for a
/// store whose memory is not the root's files (PostgreSQL), its change stamp, so a change made
/// through another server or machine shows too.
pub(crate) fn fingerprint(state: &AppState) -> Result<String, ApiError> {
    let files =
        state.live().fingerprint(&watched(state)).unwrap_or_else(|| scan_fingerprint(state));
    Ok(match state.store().change_stamp()? {
        Some(stamp) => format!("{files}-{stamp}"),
        None => files,
    })
}

/// The fingerprint from a walk of every file the UI shows.
pub(crate) fn scan_fingerprint(state: &AppState) -> String {
    let mut hasher = DefaultHasher::new();
    let root = state.root();
    for tier in Tier::ALL {
        let tier_dir = root.join(tier.dir_name());
        hash_meta(&mut hasher, &tier_dir);
        for scope in sorted_entries(&tier_dir) {
            hash_meta(&mut hasher, &scope);
            for file in sorted_entries(&scope) {
                hash_meta(&mut hasher, &file);
            }
        }
    }
    hash_meta(&mut hasher, &root.join(".curator").join("journal.jsonl"));
    if let Some(h) = state.harness() {
        for path in
            [h.raw_path(), h.memory_path(), h.summary_path(), h.issues_path(), h.pending_path()]
        {
            hash_meta(&mut hasher, &path);
        }
        for file in sorted_entries(h.identity_dir()) {
            hash_meta(&mut hasher, &file);
        }
    }
    format!("{:016x}", hasher.finish())
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    since: Option<String>,
}

async fn changes(
    State(state): State<AppState>,
    ApiQuery(params): ApiQuery<Params>,
) -> Result<Json<Value>, ApiError> {
    let now = blocking(&state, |s| fingerprint(&s)).await?;
    let changed = params.since.as_deref().is_some_and(|since| since != now);
    Ok(Json(json!({ "fingerprint": now, "changed": changed })))
}
