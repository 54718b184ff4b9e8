//! `/api/v1/harness`: harness memory of the configured state directory (harness-curator §1,
//! §3.3, §8; issue 6 item 2 "harness state and triage/curate triggers").
//!
//! Reads show the layer files as they are on disk plus the status against each bound; the two
//! triggers run the harness crate's own operations (`triage`, a manual curator pass) under its
//! locks, and never wait for a pass already running: they answer 409 `curator_busy` at once,
//! naming the lock's holder (§8.1; issue 16). `/harness/trace?text=` says where an entry went
//! (raw.md, the archive with its disposition, MEMORY.md, identity). A pass whose issues part
//! failed (a broken issues.json, left as it was) answers 200 with `partial: true` and the error:
//! the memory part was done. Without `--state-dir` every route answers 404
//! `harness_not_configured`; with one that does not exist, 404 `harness_state_missing`.
//!
//! For a person reviewing the harness (issue 15 item 5): `/harness/raw` is the tail of raw.md,
//! `/harness/archive` the archive's records a page at a time (what was dropped, absorbed, merged
//! and where each entry went), and `POST /harness/issues/{id}/status` the §3.4 human
//! transitions (acknowledge, close, won't fix, reopen), refused with 409 during a pass like the
//! triggers, and idempotent: setting the status an issue has changes nothing.

use std::path::Path as FsPath;

use axum::extract::{Path, State};
use axum::response::Json;
use curator_harness::{Disposition, Harness, Status, Trigger};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::ApiRoutes;
use crate::error::ApiError;
use crate::extract::{ApiJson, ApiQuery, MaybeJson};
use crate::state::{AppState, blocking};

/// Largest layer file shown whole; the rest is cut with a note (the bounds keep real files far
/// below this).
const MAX_SHOWN_BYTES: u64 = 1 << 20;

pub(crate) fn router() -> ApiRoutes {
    ApiRoutes::new()
        .get("/harness", overview)
        .get("/harness/issues", issues)
        .get("/harness/context/{role}", context)
        .get("/harness/trace", trace)
        .get("/harness/raw", raw_tail)
        .get("/harness/archive", archive)
        .post("/harness/issues/{id}/status", issue_status)
        .post("/harness/triage", triage)
        .post("/harness/curate", curate)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TraceQuery {
    /// Text to look for (case-insensitive).
    text: String,
}

/// Where `text` went (`harness trace`).
pub(crate) fn run_trace(state: &AppState, text: &str) -> Result<Value, ApiError> {
    let report = state.require_harness()?.trace(text)?;
    serde_json::to_value(report).map_err(|e| ApiError::internal(format!("encoding the trace: {e}")))
}

async fn trace(
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<TraceQuery>,
) -> Result<Json<Value>, ApiError> {
    blocking(&state, move |s| run_trace(&s, &q.text)).await.map(Json)
}

/// One identity file.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct IdentityText {
    pub(crate) role: String,
    pub(crate) text: String,
}

/// What the harness panels show.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct HarnessView {
    pub(crate) state_dir: String,
    pub(crate) status: curator_harness::StatusReport,
    pub(crate) summary: Option<String>,
    pub(crate) memory: Option<String>,
    pub(crate) identities: Vec<IdentityText>,
}

/// A layer file's text, `None` when absent.
fn read_layer(path: &FsPath) -> Result<Option<String>, ApiError> {
    use std::io::Read;
    // Not a plain open: a FIFO there would hold this request (and a worker) for ever.
    let file = match curator_store::open_regular(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(ApiError::internal(format!("reading {}: {e}", path.display()))),
    };
    let mut bytes = Vec::new();
    file.take(MAX_SHOWN_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| ApiError::internal(format!("reading {}: {e}", path.display())))?;
    let cut = bytes.len() as u64 > MAX_SHOWN_BYTES;
    bytes.truncate(MAX_SHOWN_BYTES as usize);
    let mut text = String::from_utf8_lossy(&bytes).into_owned();
    if cut {
        text.push_str("\n… (cut: the file is larger than 1 MiB)\n");
    }
    Ok(Some(text))
}

/// Every `<role>.md` of the identity directory, sorted by role.
fn identities(harness: &Harness) -> Result<Vec<IdentityText>, ApiError> {
    let dir = harness.identity_dir();
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(ApiError::internal(format!("reading {}: {e}", dir.display()))),
    };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(role) = name.strip_suffix(".md") else { continue };
        if role.is_empty() || role.starts_with('.') {
            continue;
        }
        if let Some(text) = read_layer(&entry.path())? {
            out.push(IdentityText { role: role.to_owned(), text });
        }
    }
    out.sort_by(|a, b| a.role.cmp(&b.role));
    Ok(out)
}

/// Every identity file of the configured harness, sorted by role.
pub(crate) fn identity_files(state: &AppState) -> Result<Vec<IdentityText>, ApiError> {
    identities(state.require_harness()?)
}

pub(crate) fn view(state: &AppState) -> Result<HarnessView, ApiError> {
    let h = state.require_harness()?;
    Ok(HarnessView {
        state_dir: h.state_dir().display().to_string(),
        status: h.status()?,
        summary: read_layer(&h.summary_path())?,
        memory: read_layer(&h.memory_path())?,
        identities: identities(h)?,
    })
}

async fn overview(State(state): State<AppState>) -> Result<Json<HarnessView>, ApiError> {
    blocking(&state, |s| view(&s)).await.map(Json)
}

/// issues.json as the harness reads it (aliases mapped, newest first).
pub(crate) fn issue_list(state: &AppState) -> Result<Value, ApiError> {
    let file = state.require_harness()?.load_issues()?;
    Ok(json!({ "next_id": file.next_id, "issues": file.issues }))
}

async fn issues(State(state): State<AppState>) -> Result<Json<Value>, ApiError> {
    blocking(&state, |s| issue_list(&s)).await.map(Json)
}

async fn context(
    State(state): State<AppState>,
    Path(role): Path<String>,
) -> Result<Json<Value>, ApiError> {
    blocking(&state, move |s| {
        let text = s.require_harness()?.context(&role)?;
        Ok(json!({ "role": role, "context": text }))
    })
    .await
    .map(Json)
}

pub(crate) fn run_triage(state: &AppState) -> Result<Value, ApiError> {
    let report = state.require_harness()?.triage(curator_core::time::now())?;
    // The spec's exact answer (§3.3): `{ok, merged, deduped}`.
    Ok(json!({ "ok": true, "merged": report.merged, "deduped": report.deduped }))
}

async fn triage(State(state): State<AppState>) -> Result<Json<Value>, ApiError> {
    blocking(&state, |s| run_triage(&s)).await.map(Json)
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CurateBody {
    /// `manual` (default), `done`, `escalate` or `periodic`.
    #[serde(default)]
    pub(crate) trigger: Option<String>,
}

pub(crate) fn run_curate(state: &AppState, trigger: Option<&str>) -> Result<Value, ApiError> {
    let trigger = match trigger {
        None => Trigger::Manual,
        Some(t) => Trigger::parse(t).ok_or_else(|| {
            ApiError::bad_request(format!(
                "trigger must be done, escalate, manual or periodic, got {t:?}"
            ))
        })?,
    };
    let report = state.require_harness()?.curate_at_once(trigger, curator_core::time::now())?;
    Ok(json!({
        "line": report.line(),
        "trigger": trigger.as_str(),
        "partial": report.is_partial(),
        "issues_error": report.issues_error,
        "dispositions": report.dispositions,
        "decisions": report.decisions,
        "lessons": report.lessons,
        "absorbed": report.absorbed,
        "new_issues": report.new_issues,
        "deduped": report.deduped,
        "auto_closed": report.auto_closed,
        "promoted": report.promoted,
        "notes": report.notes,
        "changed": report.changed,
    }))
}

async fn curate(
    State(state): State<AppState>,
    MaybeJson(body): MaybeJson<CurateBody>,
) -> Result<Json<Value>, ApiError> {
    blocking(&state, move |s| run_curate(&s, body.trigger.as_deref())).await.map(Json)
}

/// Default and largest byte budget of the raw.md tail.
pub(crate) const RAW_TAIL_DEFAULT: u64 = 64 << 10;
const RAW_TAIL_MAX: u64 = 1 << 20;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawQuery {
    /// Bytes from the end (default 64 KiB, at most 1 MiB).
    #[serde(default)]
    bytes: Option<u64>,
}

/// The last whole lines of raw.md within `bytes`.
pub(crate) fn run_raw_tail(state: &AppState, bytes: Option<u64>) -> Result<Value, ApiError> {
    let bytes = bytes.unwrap_or(RAW_TAIL_DEFAULT);
    if !(1..=RAW_TAIL_MAX).contains(&bytes) {
        return Err(ApiError::bad_request(format!("bytes must be 1 to {RAW_TAIL_MAX}")));
    }
    let tail = state.require_harness()?.raw_tail(bytes)?;
    serde_json::to_value(tail).map_err(|e| ApiError::internal(format!("encoding the tail: {e}")))
}

async fn raw_tail(
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<RawQuery>,
) -> Result<Json<Value>, ApiError> {
    blocking(&state, move |s| run_raw_tail(&s, q.bytes)).await.map(Json)
}

/// Default page size of the archive.
pub(crate) const ARCHIVE_PAGE_DEFAULT: usize = 50;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ArchiveQuery {
    /// Only records of this disposition (promoted, merged, kept, absorbed, dropped).
    #[serde(default)]
    pub(crate) disposition: Option<String>,
    /// Records skipped from the newest (default 0).
    #[serde(default)]
    pub(crate) offset: Option<usize>,
    /// Page size (default 50, at most 500).
    #[serde(default)]
    pub(crate) limit: Option<usize>,
}

/// Parses a disposition filter; empty means none.
pub(crate) fn parse_disposition(value: Option<&str>) -> Result<Option<Disposition>, ApiError> {
    match value.map(str::trim).filter(|v| !v.is_empty()) {
        None => Ok(None),
        Some(v) => {
            Disposition::ALL.into_iter().find(|d| d.as_str() == v).map(Some).ok_or_else(|| {
                ApiError::bad_request(format!(
                    "disposition must be promoted, merged, kept, absorbed or dropped, got {v:?}"
                ))
            })
        }
    }
}

/// One page of the archive, newest first.
pub(crate) fn archive_page(
    state: &AppState,
    q: &ArchiveQuery,
) -> Result<curator_harness::ArchivePage, ApiError> {
    let disposition = parse_disposition(q.disposition.as_deref())?;
    let limit = q.limit.unwrap_or(ARCHIVE_PAGE_DEFAULT);
    Ok(state.require_harness()?.archive_page(disposition, q.offset.unwrap_or(0), limit)?)
}

async fn archive(
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<ArchiveQuery>,
) -> Result<Json<curator_harness::ArchivePage>, ApiError> {
    blocking(&state, move |s| archive_page(&s, &q)).await.map(Json)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct StatusBody {
    /// `acknowledged`, `closed`, `wontfix` or `open`.
    status: String,
    /// Why, kept in the issue's notes.
    #[serde(default)]
    note: Option<String>,
    /// Who (default `human`).
    #[serde(default)]
    by: Option<String>,
}

/// Sets an issue's status as a person would (§3.4).
pub(crate) fn set_issue_status(
    state: &AppState,
    id: &str,
    status: &str,
    note: Option<&str>,
    by: Option<&str>,
) -> Result<curator_harness::IssueChange, ApiError> {
    let status = Status::parse_strict(status).ok_or_else(|| {
        ApiError::bad_request(format!(
            "status must be acknowledged, closed, wontfix or open, got {status:?}"
        ))
    })?;
    let by = by.unwrap_or("human");
    Ok(state.require_harness()?.set_issue_status(
        id,
        status,
        by,
        note,
        curator_core::time::now(),
    )?)
}

async fn issue_status(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<StatusBody>,
) -> Result<Json<curator_harness::IssueChange>, ApiError> {
    blocking(&state, move |s| {
        set_issue_status(&s, &id, &body.status, body.note.as_deref(), body.by.as_deref())
    })
    .await
    .map(Json)
}
