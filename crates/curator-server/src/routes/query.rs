//! `POST /api/v1/query`: the memory one agent step gets (agent-qa-memory §3–§4; issue 6 item 2).
//!
//! The body carries what `curator query` takes as flags, and the answer is the engine's
//! [`curator_engine::QueryOutcome`], the same JSON `curator query --json` prints:
//! `{"observations": [...], "formatted": "<memory-context>..."|null, "warnings": [...]}`; a
//! product, test or suite name that cannot be a folder is skipped with a warning, not refused.
//! Defaults for `min_trust`, `max_injections` and `mode` are the server's engine settings (from
//! the config).
//! A query here records nothing; the run-session route records the injection per step.

use axum::extract::State;
use axum::response::Json;
use curator_core::SnapshotEntry;
use curator_engine::{QueryOptions, QueryOutcome, RunStep};
use curator_store::index::QueryMode;
use serde::Deserialize;

use super::ApiRoutes;
use crate::error::ApiError;
use crate::extract::ApiJson;
use crate::state::{AppState, blocking};

pub(crate) fn router() -> ApiRoutes {
    ApiRoutes::new().post("/query", query)
}

/// One step's query, as `curator query` takes it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct QueryRequest {
    pub(crate) product: String,
    pub(crate) test: String,
    /// The step instruction (`text` is a deprecated alias).
    #[serde(alias = "text")]
    pub(crate) step_text: String,
    #[serde(default)]
    pub(crate) suite: Option<String>,
    #[serde(default)]
    pub(crate) suite_tests: Option<Vec<SnapshotEntry>>,
    #[serde(default)]
    pub(crate) position: Option<u64>,
    #[serde(default)]
    pub(crate) min_trust: Option<f64>,
    #[serde(default)]
    pub(crate) max_injections: Option<usize>,
    /// `terms` (default) or `phrase` (agent-qa exactly).
    #[serde(default)]
    pub(crate) mode: Option<String>,
}

/// Parses `terms` / `phrase`.
pub(crate) fn parse_mode(mode: &str) -> Result<QueryMode, ApiError> {
    match mode {
        "terms" => Ok(QueryMode::Terms),
        "phrase" => Ok(QueryMode::Phrase),
        other => Err(ApiError::bad_request(format!(
            "mode must be \"terms\" or \"phrase\", got {other:?}"
        ))),
    }
}

impl QueryRequest {
    /// The engine's options, with the server's defaults for what the request leaves out.
    pub(crate) fn options(
        &self,
        state: &AppState,
        run: Option<RunStep>,
    ) -> Result<QueryOptions, ApiError> {
        let engine = state.engine();
        // An invalid scope name is skipped with a warning in the answer, as agent-qa skips the
        // folder (issue 13 item 5).
        let mut opts = QueryOptions::lenient(&self.product, &self.test, self.step_text.clone());
        if let Some(suite) = &self.suite {
            opts.set_suite(suite, self.suite_tests.clone(), self.position);
        } else if self.suite_tests.is_some() || self.position.is_some() {
            return Err(ApiError::bad_request("suite_tests and position need a suite"));
        }
        opts.min_trust = self.min_trust.unwrap_or(engine.min_trust);
        opts.max_injections = self.max_injections.unwrap_or(engine.max_injections);
        opts.mode = match &self.mode {
            Some(m) => parse_mode(m)?,
            None => engine.mode,
        };
        if run.is_some() {
            opts.probation = engine.probation();
        }
        opts.run = run;
        Ok(opts)
    }
}

/// Runs one query on the blocking pool.
pub(crate) fn run_query(
    state: &AppState,
    request: &QueryRequest,
    run: Option<RunStep>,
) -> Result<QueryOutcome, ApiError> {
    let opts = request.options(state, run)?;
    Ok(curator_engine::query_in(state.store(), &opts)?)
}

async fn query(
    State(state): State<AppState>,
    ApiJson(request): ApiJson<QueryRequest>,
) -> Result<Json<QueryOutcome>, ApiError> {
    blocking(&state, move |s| run_query(&s, &request, None)).await.map(Json)
}
