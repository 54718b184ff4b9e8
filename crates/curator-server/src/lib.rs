//! curator-server: `curator serve`, the versioned JSON API and the web UI (issue 6 items 1, 2, 4;
//! ARCHITECTURE "interfaces").
//!
//! Handlers extract, call the same library functions the CLI calls (store transactions, the
//! engine's query and curate, the harness), and map the result; nothing here holds memory of
//! its own, so the server and the CLI can work on one root at the same time. [`app`] builds the
//! whole router (tests drive it with `tower::ServiceExt::oneshot`, no socket); [`serve`] binds
//! and runs it with graceful shutdown.
//!
//! Layers, outermost first: tracing, security headers on every response, the `Host` guard
//! against DNS rebinding, bearer token, declared body size, tower-http's streaming body limit,
//! same-origin check for writes; then `/api/v1/*` (JSON errors everywhere), the UI at `/`,
//! static assets at `/static/*`, MCP at `/mcp`.

mod connections;
mod error;
mod extract;
mod guard;
mod host;
mod live;
pub mod mcp;
mod openapi;
mod ops;
mod routes;
mod server;
mod state;
mod ui;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::{Method, Uri};
use axum::middleware::{from_fn, from_fn_with_state};
use axum::response::{IntoResponse, Response};
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::trace::TraceLayer;

pub use error::{ApiError, code_of};
pub use server::{ServeError, Server, check_listen, serve, shutdown_signal};
pub use state::{AppState, DEFAULT_BODY_LIMIT, EngineSettings, ServerOptions};

/// The whole application: API, UI, assets and MCP, behind the guards, as served on a loopback
/// address (the `Host` guard answers 127.0.0.1, `localhost` and the configured names).
pub fn app(state: AppState) -> Router {
    app_with_hosts(state, None)
}

/// The whole application as served on `listen`: the `Host` guard answers that address,
/// `localhost` and the configured names ([`ServerOptions::allowed_hosts`]).
pub fn app_on(state: AppState, listen: SocketAddr) -> Router {
    app_with_hosts(state, Some(listen))
}

fn app_with_hosts(state: AppState, listen: Option<SocketAddr>) -> Router {
    let hosts = Arc::new(host::AllowedHosts::new(listen, state.allowed_hosts()));
    let limit = state.body_limit();
    Router::new()
        .merge(routes::api().into_router())
        .merge(routes::reference_harness::router())
        .merge(ui::router())
        .nest_service("/mcp", mcp::http_service(&state))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(from_fn(guard::same_origin_writes))
        .layer(RequestBodyLimitLayer::new(limit))
        // axum's extractors stop at 2 MiB of their own unless told the limit.
        .layer(DefaultBodyLimit::max(limit))
        .layer(from_fn_with_state(state.clone(), guard::limit_declared_body))
        .layer(from_fn_with_state(state.clone(), guard::require_token))
        .layer(from_fn_with_state(hosts, host::require_allowed_host))
        .layer(from_fn(host::security_headers))
        .layer(TraceLayer::new_for_http())
        .with_state(state)
}

/// Every `(method, path)` the API registers (the OpenAPI document must list exactly these).
pub fn api_routes() -> Vec<(String, String)> {
    routes::api().registered().iter().map(|(m, p)| ((*m).to_owned(), p.clone())).collect()
}

/// The OpenAPI 3.1 document served at `/api/v1/openapi.json`.
pub fn openapi_document() -> serde_json::Value {
    openapi::document()
}

async fn not_found(method: Method, uri: Uri) -> Response {
    if uri.path().starts_with("/api/") {
        ApiError::not_found(format!("no route {method} {}", uri.path())).into_response()
    } else {
        ui::not_found_page(uri.path())
    }
}

async fn method_not_allowed(method: Method, uri: Uri) -> Response {
    ApiError::new(
        axum::http::StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        format!("{method} is not allowed on {}", uri.path()),
    )
    .into_response()
}
