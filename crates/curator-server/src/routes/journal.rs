//! `GET /api/v1/journal`: the journal, newest first, filtered by observation or run id
//! (ARCHITECTURE "Journal": it backs history, undo, the UI's timeline and audits).

use axum::extract::State;
use axum::response::Json;
use curator_store::JournalFilter;
use serde::Deserialize;
use serde_json::{Value, json};

use super::ApiRoutes;
use crate::error::ApiError;
use crate::extract::ApiQuery;
use crate::state::{AppState, blocking};

const DEFAULT_LIMIT: usize = 100;
const MAX_LIMIT: usize = 1000;

pub(crate) fn router() -> ApiRoutes {
    ApiRoutes::new().get("/journal", journal)
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    id: Option<String>,
    run_id: Option<String>,
    offset: Option<usize>,
    limit: Option<usize>,
}

async fn journal(
    State(state): State<AppState>,
    ApiQuery(params): ApiQuery<Params>,
) -> Result<Json<Value>, ApiError> {
    let limit = params.limit.unwrap_or(DEFAULT_LIMIT);
    if limit == 0 || limit > MAX_LIMIT {
        return Err(ApiError::bad_request(format!("limit must be 1..={MAX_LIMIT}, got {limit}")));
    }
    let offset = params.offset.unwrap_or(0);
    let filter = JournalFilter { id: params.id, run_id: params.run_id };
    let page =
        blocking(&state, move |s| Ok(s.store().journal_page(&filter, offset, limit)?)).await?;
    let (total, entries) = (page.total, page.entries);
    Ok(Json(json!({ "total": total, "offset": offset, "limit": limit, "entries": entries })))
}
