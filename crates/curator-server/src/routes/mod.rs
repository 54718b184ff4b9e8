//! The JSON API under `/api/v1` (issue 6 item 2): one module per resource, each with a
//! `router()` that registers its handlers through [`ApiRoutes`].
//!
//! [`ApiRoutes`] wraps `axum::Router::route` and records every `(method, path)` it registers, so
//! the list the OpenAPI test compares against the document is the router itself, not a second
//! hand-kept list that could drift from it.

pub(crate) mod breaker;
pub(crate) mod changes;
pub(crate) mod harness;
pub(crate) mod journal;
pub(crate) mod lint;
pub(crate) mod observations;
pub(crate) mod pending;
pub(crate) mod query;
pub(crate) mod reference_harness;
pub(crate) mod runs;

use axum::Router;
use axum::handler::Handler;
use axum::routing::{MethodRouter, delete, get, patch, post};
use serde::Serialize;

use crate::state::AppState;

/// The API's path prefix.
pub(crate) const PREFIX: &str = "/api/v1";

/// A router that remembers what it registered.
#[derive(Debug)]
pub(crate) struct ApiRoutes {
    router: Router<AppState>,
    registered: Vec<(&'static str, String)>,
}

impl ApiRoutes {
    pub(crate) fn new() -> Self {
        ApiRoutes { router: Router::new(), registered: Vec::new() }
    }

    fn add(mut self, method: &'static str, path: &str, route: MethodRouter<AppState>) -> Self {
        let full = format!("{PREFIX}{path}");
        self.router = self.router.route(&full, route);
        self.registered.push((method, full));
        self
    }

    pub(crate) fn get<H, T>(self, path: &str, handler: H) -> Self
    where
        H: Handler<T, AppState>,
        T: 'static,
    {
        self.add("get", path, get(handler))
    }

    pub(crate) fn post<H, T>(self, path: &str, handler: H) -> Self
    where
        H: Handler<T, AppState>,
        T: 'static,
    {
        self.add("post", path, post(handler))
    }

    pub(crate) fn patch<H, T>(self, path: &str, handler: H) -> Self
    where
        H: Handler<T, AppState>,
        T: 'static,
    {
        self.add("patch", path, patch(handler))
    }

    pub(crate) fn delete<H, T>(self, path: &str, handler: H) -> Self
    where
        H: Handler<T, AppState>,
        T: 'static,
    {
        self.add("delete", path, delete(handler))
    }

    /// Adds every route of `other`.
    pub(crate) fn merge(mut self, other: ApiRoutes) -> Self {
        self.router = self.router.merge(other.router);
        self.registered.extend(other.registered);
        self
    }

    /// Every `(method, full path)` registered, in registration order.
    pub(crate) fn registered(&self) -> &[(&'static str, String)] {
        &self.registered
    }

    pub(crate) fn into_router(self) -> Router<AppState> {
        self.router
    }
}

/// The whole API.
pub(crate) fn api() -> ApiRoutes {
    ApiRoutes::new()
        .merge(observations::router())
        .merge(query::router())
        .merge(runs::router())
        .merge(pending::router())
        .merge(journal::router())
        .merge(breaker::router())
        .merge(lint::router())
        .merge(harness::router())
        .merge(changes::router())
        .get("/openapi.json", crate::openapi::serve)
}

/// An observation as the API returns it: where it lives plus its §5.7 snapshot fields.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ObservationView {
    pub(crate) tier: &'static str,
    pub(crate) scope: String,
    #[serde(flatten)]
    pub(crate) fields: curator_core::ObservationSnapshot,
}

impl From<&curator_store::StoredObservation> for ObservationView {
    fn from(s: &curator_store::StoredObservation) -> Self {
        ObservationView {
            tier: s.tier.dir_name(),
            scope: s.scope.as_str().to_owned(),
            fields: s.observation.snapshot(),
        }
    }
}
