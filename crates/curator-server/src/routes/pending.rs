//! `/api/v1/pending`: the review queue of proposed memory, and `/api/v1/observations/{id}/
//! evidence`: an observation's outcome record (issue 18 items 1 and 4).
//!
//! A proposal posted here is what an agent learned on its own: with `curator.review` on it
//! waits in the queue (`<root>/.curator/pending/`), never injected as ordinary memory, until a
//! person approves or rejects it here, in the UI, with `curator review` or over MCP — or, with
//! `review: auto`, until it passes its probation injections. Every transition is journaled
//! under a run id the answer returns, so `POST /api/v1/runs/{run_id}/undo` reverts it. What a
//! person or a harness creates directly (`POST /api/v1/observations`) does not wait here.

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Json};
use curator_core::{Observation, trust};
use curator_engine::review::{self, ReviewOutcome};
use curator_store::evidence::{Evidence, EvidenceQuery};
use curator_store::{ListFilter, Place, StoredObservation};
use serde::Serialize;
use serde_json::{Value, json};

use super::observations::Reason;
use super::{ApiRoutes, ObservationView};
use crate::error::ApiError;
use crate::extract::{ApiJson, MaybeJson};
use crate::ops::{self, NewObservation, Once};
use crate::state::{AppState, blocking};

pub(crate) fn router() -> ApiRoutes {
    ApiRoutes::new()
        .get("/pending", list)
        .post("/pending", propose)
        .get("/pending/{id}", show)
        .post("/pending/{id}/approve", approve)
        .post("/pending/{id}/reject", reject)
        .get("/observations/{id}/evidence", evidence)
}

/// An observation with where it lives and its record.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct EvidenceView {
    #[serde(flatten)]
    pub(crate) observation: ObservationView,
    /// `memory`, or `pending` while it waits for review.
    pub(crate) place: Place,
    pub(crate) evidence: Evidence,
}

/// The records of `observations` (zeros from a store that keeps none).
pub(crate) fn with_evidence(
    state: &AppState,
    observations: &[StoredObservation],
    place: Place,
) -> Result<Vec<EvidenceView>, ApiError> {
    let query = EvidenceQuery {
        ids: observations.iter().map(|o| o.observation.id.to_string()).collect(),
        tests: Vec::new(),
    };
    let view = match state.store().evidence(&query) {
        Ok(view) => view,
        Err(curator_store::Error::Unsupported { .. }) => Default::default(),
        Err(e) => return Err(e.into()),
    };
    Ok(observations
        .iter()
        .map(|o| EvidenceView {
            observation: ObservationView::from(o),
            place,
            evidence: view.of(o.observation.id.as_str()),
        })
        .collect())
}

/// The queue, oldest scope first (the listing's order), each with its probation record.
pub(crate) fn queue(state: &AppState) -> Result<(Vec<EvidenceView>, usize), ApiError> {
    let listing = review::pending(state.store(), &ListFilter::default()).map_err(review_error)?;
    Ok((with_evidence(state, &listing.observations, Place::Pending)?, listing.problems.len()))
}

/// One observation, served or queued, with its record.
pub(crate) fn find(state: &AppState, raw_id: &str) -> Result<EvidenceView, ApiError> {
    let id = ops::parse_id(raw_id)?;
    let (stored, place) = match state.store().get(&id) {
        Ok(stored) => (stored, Place::Memory),
        Err(curator_store::Error::NotFound { .. }) => match state.store().get_pending(&id) {
            Ok(Some(stored)) => (stored, Place::Pending),
            Ok(None) | Err(curator_store::Error::Unsupported { .. }) => {
                return Err(ApiError::not_found(format!("observation {id} not found")));
            }
            Err(e) => return Err(e.into()),
        },
        Err(e) => return Err(e.into()),
    };
    Ok(with_evidence(state, std::slice::from_ref(&stored), place)?.remove(0))
}

pub(crate) fn review_error(e: review::ReviewError) -> ApiError {
    match e {
        review::ReviewError::NotPending { .. } => ApiError::not_found(e.to_string()),
        review::ReviewError::KeyReused { reason } => ops::key_reused(&reason),
        review::ReviewError::Store(s) => s.into(),
        other => ApiError::internal(other.to_string()),
    }
}

/// Approves or rejects `raw_id`; `approve` chooses which.
pub(crate) fn decide(
    state: &AppState,
    raw_id: &str,
    approve: bool,
    reasoning: Option<String>,
) -> Result<ReviewOutcome, ApiError> {
    let id = ops::parse_id(raw_id)?;
    let result = if approve {
        let reason = reasoning.unwrap_or_else(|| "approved over the HTTP API".to_owned());
        review::approve(state.store(), &id, &reason)
    } else {
        let reason = reasoning.unwrap_or_else(|| "rejected over the HTTP API".to_owned());
        review::reject(state.store(), &id, &reason)
    };
    result.map_err(review_error)
}

/// Writes an agent's proposal: queued unless `curator.review` is off.
pub(crate) fn propose_new(
    state: &AppState,
    new: NewObservation,
    via: &str,
    once: &Once,
) -> Result<ReviewOutcome, ApiError> {
    let checked = ops::check_new(&new)?;
    // An agent's fact starts where agent-qa's curator starts an add, and earns the rest from
    // outcomes: a proposal at 0.9 would be injected as proven memory, past the trial slot,
    // the moment it is approved (or at once with review off).
    if checked.trust != trust::INITIAL_TRUST {
        return Err(ApiError::bad_request(format!(
            "a proposal starts at trust {}: leave trust out (a person's create, POST \
             /api/v1/observations, may set it)",
            trust::INITIAL_TRUST
        )));
    }
    let now = curator_core::time::now_iso();
    let observation = Observation {
        id: curator_core::ObservationId::generate(),
        title: checked.title,
        content: checked.content,
        trust: checked.trust,
        created: now.clone(),
        last_confirmed: now,
        confirmed_count: 0,
        contradicted_count: 0,
        source_test: new.source_test.clone(),
        suite: checked.suite,
        extra: Default::default(),
    };
    let reasoning = new.reasoning.unwrap_or_else(|| format!("proposed {via}"));
    review::propose(
        state.store(),
        checked.tier,
        &checked.scope,
        observation,
        &reasoning,
        state.engine().review,
        once.key(),
    )
    .map_err(review_error)
}

async fn list(State(state): State<AppState>) -> Result<Json<Value>, ApiError> {
    let (pending, problems) = blocking(&state, |s| queue(&s)).await?;
    Ok(Json(json!({ "total": pending.len(), "pending": pending, "problems": problems })))
}

async fn propose(
    State(state): State<AppState>,
    headers: HeaderMap,
    ApiJson(new): ApiJson<NewObservation>,
) -> Result<impl IntoResponse, ApiError> {
    let once = Once::from_headers(&headers)?;
    let outcome =
        blocking(&state, move |s| propose_new(&s, new, "over the HTTP API", &once)).await?;
    let status = if outcome.already_applied { StatusCode::OK } else { StatusCode::CREATED };
    Ok((status, Json(outcome)))
}

async fn show(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<EvidenceView>, ApiError> {
    let found = blocking(&state, move |s| find(&s, &id)).await?;
    if found.place != Place::Pending {
        return Err(ApiError::not_found(format!(
            "observation {} is not waiting for review",
            found.observation.fields.id
        )));
    }
    Ok(Json(found))
}

async fn approve(
    State(state): State<AppState>,
    Path(id): Path<String>,
    MaybeJson(body): MaybeJson<Reason>,
) -> Result<Json<ReviewOutcome>, ApiError> {
    blocking(&state, move |s| decide(&s, &id, true, body.reasoning)).await.map(Json)
}

async fn reject(
    State(state): State<AppState>,
    Path(id): Path<String>,
    MaybeJson(body): MaybeJson<Reason>,
) -> Result<Json<ReviewOutcome>, ApiError> {
    blocking(&state, move |s| decide(&s, &id, false, body.reasoning)).await.map(Json)
}

async fn evidence(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<EvidenceView>, ApiError> {
    blocking(&state, move |s| find(&s, &id)).await.map(Json)
}
