//! `/api/v1/observations`: list, read, create, edit, confirm, deprecate, delete, history
//! (issue 6 item 2).
//!
//! Reads answer from the files as they are now; writes go through [`crate::ops`], i.e. the
//! store's lock, scanner, codec and journal, exactly as the CLI's `add` and `rm` do. A listing is
//! sorted by tier, scope and id so that paging is stable between requests. A page without a
//! text or trust filter reads only its own files ([`curator_store::Store::list_page`]): its
//! `total` counts observation files and its `problems` the refused files on the page. With `q`
//! or `min_trust` every file of the tier and scope is read, since the filter needs their text.

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Json};
use curator_core::{ScopeName, Tier};
use curator_store::{JournalFilter, ListFilter};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{ApiRoutes, ObservationView};
use crate::error::ApiError;
use crate::extract::{ApiJson, ApiQuery, MaybeJson};
use crate::ops::{self, Changed, Edit, NewObservation, Once};
use crate::state::{AppState, blocking};

/// Default and largest page size.
const DEFAULT_LIMIT: usize = 100;
const MAX_LIMIT: usize = 1000;

pub(crate) fn router() -> ApiRoutes {
    ApiRoutes::new()
        .get("/observations", list)
        .post("/observations", create)
        .get("/observations/{id}", show)
        .patch("/observations/{id}", edit)
        .delete("/observations/{id}", remove)
        .post("/observations/{id}/confirm", confirm)
        .post("/observations/{id}/deprecate", deprecate)
        .get("/observations/{id}/history", history)
}

/// Filters and paging of a listing.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListParams {
    pub(crate) tier: Option<String>,
    pub(crate) scope: Option<String>,
    pub(crate) min_trust: Option<f64>,
    /// Case-insensitive text that the title or content must contain.
    pub(crate) q: Option<String>,
    pub(crate) offset: Option<usize>,
    pub(crate) limit: Option<usize>,
}

/// One page of observations.
#[derive(Debug, Serialize)]
pub(crate) struct Page {
    /// Without `q` or `min_trust`, the observation files the filter matches, served or not
    /// (the page reads only its own files); with either, the observations that match.
    pub(crate) total: usize,
    pub(crate) offset: usize,
    pub(crate) limit: usize,
    pub(crate) observations: Vec<ObservationView>,
    /// Files of this page found but not served (see `/api/v1/lint` for each reason); with
    /// `q` or `min_trust`, of the whole tier and scope.
    pub(crate) problems: usize,
    /// The `offset` of the next page; `null` on the last. A page may hold fewer than `limit`
    /// observations when files on it are not served, so a client pages by this, never by the
    /// rows it got.
    pub(crate) next_offset: Option<usize>,
}

impl Page {
    fn new(
        total: usize,
        offset: usize,
        limit: usize,
        observations: Vec<ObservationView>,
        problems: usize,
    ) -> Page {
        let next = offset.saturating_add(limit);
        let next_offset = (next < total).then_some(next);
        Page { total, offset, limit, observations, problems, next_offset }
    }
}

/// The listing behind both the API and the UI's overview.
pub(crate) fn list_page(state: &AppState, params: &ListParams) -> Result<Page, ApiError> {
    let tier = params.tier.as_deref().map(str::parse::<Tier>).transpose()?;
    let scope = params.scope.as_deref().map(ScopeName::new).transpose()?;
    if let Some(t) = params.min_trust
        && !(t.is_finite() && (0.0..=1.0).contains(&t))
    {
        return Err(ApiError::bad_request(format!("min_trust must be in [0, 1], got {t}")));
    }
    let limit = params.limit.unwrap_or(DEFAULT_LIMIT);
    if limit == 0 || limit > MAX_LIMIT {
        return Err(ApiError::bad_request(format!("limit must be 1..={MAX_LIMIT}, got {limit}")));
    }
    let offset = params.offset.unwrap_or(0);
    let filter = ListFilter { tier, scope };
    let needle = params.q.as_deref().map(str::to_lowercase).filter(|q| !q.trim().is_empty());
    if needle.is_none() && params.min_trust.is_none() {
        let page = state.store().list_page(&filter, offset, limit)?;
        let observations = page.observations.iter().map(ObservationView::from).collect();
        return Ok(Page::new(page.total, offset, limit, observations, page.problems.len()));
    }
    let listing = state.store().list(&filter)?;
    let mut matching: Vec<_> = listing
        .observations
        .iter()
        .filter(|s| params.min_trust.is_none_or(|t| s.observation.trust >= t))
        .filter(|s| {
            needle.as_ref().is_none_or(|n| {
                s.observation.title.to_lowercase().contains(n)
                    || s.observation.content.to_lowercase().contains(n)
            })
        })
        .collect();
    matching.sort_by(|a, b| {
        (a.tier, &a.scope, a.observation.id.as_str()).cmp(&(
            b.tier,
            &b.scope,
            b.observation.id.as_str(),
        ))
    });
    let total = matching.len();
    let observations =
        matching.into_iter().skip(offset).take(limit).map(ObservationView::from).collect();
    Ok(Page::new(total, offset, limit, observations, listing.problems.len()))
}

async fn list(
    State(state): State<AppState>,
    ApiQuery(params): ApiQuery<ListParams>,
) -> Result<Json<Page>, ApiError> {
    blocking(&state, move |s| list_page(&s, &params)).await.map(Json)
}

async fn show(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<super::pending::EvidenceView>, ApiError> {
    // A proposal waiting for review is shown too, with `place: pending`, as `curator show`
    // and MCP's get_observation show it; only memory is ever injected.
    Ok(Json(blocking(&state, move |s| super::pending::find(&s, &id)).await?))
}

/// The answer to a change: what was done, under which run id, and the observation after it.
pub(crate) fn changed_body(changed: &Changed) -> serde_json::Value {
    json!({
        "run_id": changed.run_id,
        "action": changed.action,
        "id": changed.id.as_str(),
        "tier": changed.tier.dir_name(),
        "scope": changed.scope.as_str(),
        "observation": changed.after.as_ref().map(ObservationView::from),
        "already_applied": changed.replayed,
        "unchanged": changed.unchanged,
    })
}

async fn create(
    State(state): State<AppState>,
    headers: HeaderMap,
    ApiJson(new): ApiJson<NewObservation>,
) -> Result<impl IntoResponse, ApiError> {
    let once = Once::from_headers(&headers)?;
    let changed = blocking(&state, move |s| ops::create(&s, new, &once)).await?;
    let status = if changed.replayed { StatusCode::OK } else { StatusCode::CREATED };
    Ok((status, Json(changed_body(&changed))))
}

async fn edit(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<Edit>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let id = ops::parse_id(&id)?;
    let once = Once::from_headers(&headers)?;
    let changed = blocking(&state, move |s| ops::edit(&s, &id, body, &once, None)).await?;
    Ok(Json(changed_body(&changed)))
}

/// An optional reason for a confirm, deprecate or delete (kept in the journal).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Reason {
    #[serde(default)]
    pub(crate) reasoning: Option<String>,
}

async fn confirm(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    MaybeJson(body): MaybeJson<Reason>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let id = ops::parse_id(&id)?;
    let once = Once::from_headers(&headers)?;
    let changed = blocking(&state, move |s| ops::confirm(&s, &id, body.reasoning, &once)).await?;
    Ok(Json(changed_body(&changed)))
}

async fn deprecate(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    MaybeJson(body): MaybeJson<Reason>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let id = ops::parse_id(&id)?;
    let once = Once::from_headers(&headers)?;
    let changed = blocking(&state, move |s| ops::deprecate(&s, &id, body.reasoning, &once)).await?;
    Ok(Json(changed_body(&changed)))
}

async fn remove(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    MaybeJson(body): MaybeJson<Reason>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let id = ops::parse_id(&id)?;
    let once = Once::from_headers(&headers)?;
    let changed = blocking(&state, move |s| ops::delete(&s, &id, body.reasoning, &once)).await?;
    Ok(Json(changed_body(&changed)))
}

/// The journal of `id`, oldest first (`curator history`, this route and MCP's
/// `observation_history`). An id with no history must at least exist now; otherwise it is
/// unknown (`not_found`), so a mistyped id never looks like an untouched observation.
pub(crate) fn history_of(
    state: &AppState,
    id: &curator_core::ObservationId,
) -> Result<Vec<curator_store::JournalEntry>, ApiError> {
    let entries =
        state.store().journal(&JournalFilter { id: Some(id.to_string()), run_id: None })?;
    if entries.is_empty() {
        state.store().get(id)?;
    }
    Ok(entries)
}

async fn history(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<serde_json::Value>, ApiError> {
    let id = ops::parse_id(&id)?;
    let entries = blocking(&state, move |s| history_of(&s, &id)).await?;
    Ok(Json(json!({ "entries": entries })))
}
