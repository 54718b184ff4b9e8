//! `GET /api/v1/lint`: every file the store found but will not serve, and why (the same report
//! as `curator lint --json`; ARCHITECTURE "nothing is skipped silently").

use axum::extract::State;
use axum::response::Json;
use curator_store::ListFilter;
use serde::Serialize;

use super::ApiRoutes;
use crate::error::ApiError;
use crate::state::{AppState, blocking};

pub(crate) fn router() -> ApiRoutes {
    ApiRoutes::new().get("/lint", lint)
}

/// The lint report.
#[derive(Debug, Serialize)]
pub(crate) struct LintReport {
    pub(crate) observations: usize,
    /// Readable proposals waiting in the review queue.
    pub(crate) pending: usize,
    pub(crate) problems: Vec<LintProblem>,
}

/// One refused file; `path` is relative to the memory root.
#[derive(Debug, Serialize)]
pub(crate) struct LintProblem {
    pub(crate) path: String,
    pub(crate) reason: String,
}

pub(crate) fn report(state: &AppState) -> Result<LintReport, ApiError> {
    let listing = state.store().list(&ListFilter::default())?;
    // The review queue too: a proposal that cannot be read is never reviewed.
    let queue = curator_engine::review::queue_or_empty(state.store())?;
    let problems = listing
        .problems
        .iter()
        .chain(&queue.problems)
        .map(|p| LintProblem {
            path: p.path.strip_prefix(state.root()).unwrap_or(&p.path).display().to_string(),
            reason: p.kind.to_string(),
        })
        .collect();
    Ok(LintReport {
        observations: listing.observations.len(),
        pending: queue.observations.len(),
        problems,
    })
}

async fn lint(State(state): State<AppState>) -> Result<Json<LintReport>, ApiError> {
    blocking(&state, |s| report(&s)).await.map(Json)
}
