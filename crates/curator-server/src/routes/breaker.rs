//! `/api/v1/breaker/{key}`: the persisted circuit breaker of a run session or suite
//! (agent-qa-memory §9): status, record one finished run, reset.

use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::Json;
use curator_engine::breaker::{Breaker, RunOutcome};
use curator_engine::once::IdempotencyKey;
use serde::Deserialize;
use serde_json::Value;

use super::ApiRoutes;
use crate::error::ApiError;
use crate::extract::ApiJson;
use crate::ops::Once;
use crate::state::{AppState, blocking};

pub(crate) fn router() -> ApiRoutes {
    ApiRoutes::new()
        .get("/breaker/{key}", status)
        .post("/breaker/{key}/record", record)
        .post("/breaker/{key}/reset", reset)
}

async fn status(
    State(state): State<AppState>,
    Path(key): Path<String>,
) -> Result<Json<Value>, ApiError> {
    blocking(&state, move |s| {
        let b = Breaker::load_in(s.store(), &key)?;
        Ok(b.report(&key, &s.engine().breaker, false))
    })
    .await
    .map(Json)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Record {
    /// `passed` or `failed`.
    outcome: String,
    /// `with` (memory was injected) or `without` (the baseline).
    memory: String,
    /// The run the outcome belongs to: recorded once per run id, so a retry counts once.
    #[serde(default)]
    run_id: Option<String>,
}

/// Records one outcome. With a `run_id` in the body, or else an `Idempotency-Key` header (the
/// run `req-<key>`), the outcome is counted once however often the request is retried;
/// without either, every request counts (a by-hand record).
async fn record(
    State(state): State<AppState>,
    Path(key): Path<String>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<Record>,
) -> Result<Json<Value>, ApiError> {
    let once = Once::from_headers(&headers)?;
    let run_id = body.run_id.or_else(|| once.key().map(IdempotencyKey::run_id));
    let passed = match body.outcome.as_str() {
        "passed" => true,
        "failed" => false,
        other => {
            return Err(ApiError::bad_request(format!(
                "outcome must be passed or failed, got {other:?}"
            )));
        }
    };
    let with_memory = match body.memory.as_str() {
        "with" => true,
        "without" => false,
        other => {
            return Err(ApiError::bad_request(format!(
                "memory must be with or without, got {other:?}"
            )));
        }
    };
    blocking(&state, move |s| {
        let config = s.engine().breaker;
        let outcome = RunOutcome { with_memory, passed };
        let (b, now, already) = match &run_id {
            Some(run) => Breaker::record_run_in(s.store(), &key, run, &[outcome], &config)?,
            None => {
                let (b, now) = Breaker::record_in(s.store(), &key, outcome, &config)?;
                (b, now, false)
            }
        };
        let mut report = b.report(&key, &config, now);
        report["already_applied"] = already.into();
        Ok(report)
    })
    .await
    .map(Json)
}

async fn reset(
    State(state): State<AppState>,
    Path(key): Path<String>,
) -> Result<Json<Value>, ApiError> {
    blocking(&state, move |s| {
        let b = Breaker::reset_in(s.store(), &key)?;
        Ok(b.report(&key, &s.engine().breaker, false))
    })
    .await
    .map(Json)
}
