//! The reference harness UI's own paths (harness-curator §8.1, §8.5), beside `/api/v1/harness`.
//!
//! A harness UI written for the reference server calls `/api/harness/{slug}/…` for one project
//! and `/api/harness/identity` for the cross-mission files. curator serves one state directory,
//! so `{slug}` must name its project (the configured slug, else the project directory's name);
//! any other slug is 404 `harness_unknown_project`. The handlers are the `/api/v1` ones; only the
//! issues list has the reference's own shape, `{issues, nextId, pending}`. These paths are a
//! compatibility surface, not part of the versioned API, so the OpenAPI document leaves them out.

use axum::Router;
use axum::extract::{Path, State};
use axum::response::Json;
use axum::routing::{get, post};
use curator_harness::Timestamp;
use serde_json::{Value, json};

use super::harness::{CurateBody, run_curate, run_triage};
use crate::error::ApiError;
use crate::extract::MaybeJson;
use crate::state::{AppState, blocking};

pub(crate) fn router() -> Router<AppState> {
    Router::new()
        .route("/api/harness/identity", get(identity))
        .route("/api/harness/{slug}/issues-list", get(issues_list))
        .route("/api/harness/{slug}/triage", post(triage))
        .route("/api/harness/{slug}/curate", post(curate))
}

/// Refuses a slug that is not the served project's.
fn require_project(state: &AppState, slug: &str) -> Result<(), ApiError> {
    let ours = state.require_harness()?.slug();
    if ours.as_deref() == Some(slug) {
        return Ok(());
    }
    Err(ApiError::new(
        axum::http::StatusCode::NOT_FOUND,
        "harness_unknown_project",
        format!(
            "this server keeps the harness memory of project {:?}, not {slug:?}",
            ours.unwrap_or_default()
        ),
    ))
}

/// `{issues, nextId, pending}`: issues.json as read (aliases mapped) and the queue not yet
/// triaged, as §3.1's reader reads it.
pub(crate) fn issues_list_of(state: &AppState) -> Result<Value, ApiError> {
    let h = state.require_harness()?;
    let file = h.load_issues()?;
    let pending = h.pending_issues(curator_core::time::now())?;
    Ok(json!({ "issues": file.issues, "nextId": file.next_id, "pending": pending }))
}

/// Runs `work` for the served project only.
async fn for_project<F>(state: &AppState, slug: String, work: F) -> Result<Json<Value>, ApiError>
where
    F: FnOnce(&AppState) -> Result<Value, ApiError> + Send + 'static,
{
    blocking(state, move |s| {
        require_project(&s, &slug)?;
        work(&s)
    })
    .await
    .map(Json)
}

async fn issues_list(
    State(state): State<AppState>,
    Path(slug): Path<String>,
) -> Result<Json<Value>, ApiError> {
    for_project(&state, slug, issues_list_of).await
}

async fn triage(
    State(state): State<AppState>,
    Path(slug): Path<String>,
) -> Result<Json<Value>, ApiError> {
    for_project(&state, slug, run_triage).await
}

async fn curate(
    State(state): State<AppState>,
    Path(slug): Path<String>,
    MaybeJson(body): MaybeJson<CurateBody>,
) -> Result<Json<Value>, ApiError> {
    for_project(&state, slug, move |s| run_curate(s, body.trigger.as_deref())).await
}

/// Every identity file with the panel's figures (§8.5): `lessons` = non-blank lines not starting
/// with `<!--`, `bytes`, `mtime` (RFC 3339) and the file's text.
async fn identity(State(state): State<AppState>) -> Result<Json<Value>, ApiError> {
    blocking(&state, |s| {
        let dir = s.require_harness()?.identity_dir().to_path_buf();
        let files = super::harness::identity_files(&s)?;
        let roles: Vec<Value> = files
            .into_iter()
            .map(|f| {
                let lessons = f
                    .text
                    .lines()
                    .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with("<!--"))
                    .count();
                let mtime = std::fs::metadata(dir.join(format!("{}.md", f.role)))
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| Timestamp::try_from(t).ok())
                    .map(|t| t.to_string());
                json!({
                    "role": f.role,
                    "lessons": lessons,
                    "bytes": f.text.len(),
                    "mtime": mtime,
                    "content": f.text,
                })
            })
            .collect();
        Ok(json!({ "roles": roles }))
    })
    .await
    .map(Json)
}
