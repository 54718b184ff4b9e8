//! The web UI (issue 6 item 4). STUB while the API lands.

use axum::Router;
use axum::response::{Html, IntoResponse, Response};

use crate::state::AppState;

pub(crate) fn router() -> Router<AppState> {
    Router::new()
}

pub(crate) fn not_found_page(path: &str) -> Response {
    (axum::http::StatusCode::NOT_FOUND, Html(format!("not found: {}", path.len()))).into_response()
}
