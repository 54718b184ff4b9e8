//! `ApiError`: the one place where library errors become HTTP statuses (issue 6 item 1; STYLE §4).
//!
//! Every error a client sees has the same body, `{"error": {"code": "...", "message": "..."}}`:
//! `code` is a stable machine word (`not_found`, `invalid_json`, `lock_timeout`...), `message` is
//! the library's own sentence, which already names the file, field and rule. The conversion does
//! not log (that would be a side effect of building a value); the handler wrapper logs 5xx once.
//!
//! Status policy: the caller's mistake is 4xx (400 bad input, 404 unknown id, 409 the state on
//! disk refuses the change, 413 too large, 415 not JSON, 422 text the scanner or codec refuses);
//! a lock held by someone else is 503 with `Retry-After`, because retrying later will work;
//! anything else is 500.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use curator_engine::breaker::BreakerError;
use curator_engine::curate::{CurateError, DecisionsError, RunRecordError};
use curator_engine::session::SessionError;
use curator_engine::undo::UndoError;
use curator_engine::{QueryError, providers::ProviderError};
use curator_store::Error as StoreError;

/// An error answered as JSON with a status code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    status: StatusCode,
    code: &'static str,
    message: String,
}

impl ApiError {
    /// An error with an explicit status and code.
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError { status, code, message: message.into() }
    }

    /// 400 `bad_request`: a parameter breaks a rule (the message names it).
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "bad_request", message)
    }

    /// 400 `invalid_scope`: a tier or scope name that is not one folder under its tier.
    pub fn invalid_scope(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "invalid_scope", message)
    }

    /// 404 `not_found`.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "not_found", message)
    }

    /// 413 `payload_too_large`.
    pub fn payload_too_large(limit: usize) -> Self {
        Self::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
            format!("request body is larger than the limit of {limit} bytes"),
        )
    }

    /// 500 `internal`.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", message)
    }

    /// The HTTP status.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// The stable error code.
    pub fn code(&self) -> &'static str {
        self.code
    }

    /// The human message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The JSON body.
    pub fn body(&self) -> serde_json::Value {
        serde_json::json!({"error": {"code": self.code, "message": self.message}})
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}: {}", self.status.as_u16(), self.code, self.message)
    }
}

impl std::error::Error for ApiError {}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.status, axum::Json(self.body())).into_response();
        if self.code == "lock_timeout" {
            response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
        }
        response
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        use StatusCode as S;
        let (status, code) = match &e {
            StoreError::NotFound { .. } => (S::NOT_FOUND, "not_found"),
            StoreError::DuplicateId { .. } => (S::CONFLICT, "duplicate_id"),
            StoreError::Unsafe { .. } => (S::UNPROCESSABLE_ENTITY, "unsafe_text"),
            StoreError::Scope { .. } => (S::BAD_REQUEST, "invalid_scope"),
            StoreError::Write { .. } => (S::UNPROCESSABLE_ENTITY, "invalid_observation"),
            StoreError::Parse { .. } | StoreError::Refused { .. } => (S::CONFLICT, "refused_file"),
            StoreError::LockTimeout { .. } => (S::SERVICE_UNAVAILABLE, "lock_timeout"),
            StoreError::Lock { .. } => (S::SERVICE_UNAVAILABLE, "lock_unavailable"),
            StoreError::Database { .. } => (S::SERVICE_UNAVAILABLE, "database_error"),
            _ => (S::INTERNAL_SERVER_ERROR, "internal"),
        };
        ApiError::new(status, code, e.to_string())
    }
}

impl From<curator_core::ScopeError> for ApiError {
    fn from(e: curator_core::ScopeError) -> Self {
        ApiError::invalid_scope(e.to_string())
    }
}

impl From<curator_core::IdError> for ApiError {
    fn from(e: curator_core::IdError) -> Self {
        ApiError::new(StatusCode::BAD_REQUEST, "invalid_id", e.to_string())
    }
}

impl From<QueryError> for ApiError {
    fn from(e: QueryError) -> Self {
        match e {
            QueryError::Scope(..) => ApiError::invalid_scope(e.to_string()),
            QueryError::MinTrust(_) => ApiError::bad_request(e.to_string()),
            QueryError::Session(s) => s.into(),
            QueryError::Store(s) => s.into(),
            other => ApiError::internal(other.to_string()),
        }
    }
}

impl From<SessionError> for ApiError {
    fn from(e: SessionError) -> Self {
        match e {
            SessionError::InvalidRunId(_) | SessionError::ReservedRunId { .. } => {
                ApiError::new(StatusCode::BAD_REQUEST, "invalid_run_id", e.to_string())
            }
            SessionError::InvalidStep(_) => {
                ApiError::new(StatusCode::BAD_REQUEST, "invalid_step_index", e.to_string())
            }
            SessionError::Store(s) => s.into(),
            other => ApiError::internal(other.to_string()),
        }
    }
}

impl From<RunRecordError> for ApiError {
    fn from(e: RunRecordError) -> Self {
        ApiError::new(StatusCode::BAD_REQUEST, "invalid_run_record", e.to_string())
    }
}

impl From<DecisionsError> for ApiError {
    fn from(e: DecisionsError) -> Self {
        ApiError::new(StatusCode::BAD_REQUEST, "invalid_decisions", e.to_string())
    }
}

impl From<CurateError> for ApiError {
    fn from(e: CurateError) -> Self {
        match e {
            CurateError::Store(s) => s.into(),
            CurateError::AfterAnswer { source, .. } => (*source).into(),
            CurateError::Provider(p) => p.into(),
            other => ApiError::internal(other.to_string()),
        }
    }
}

impl From<ProviderError> for ApiError {
    fn from(e: ProviderError) -> Self {
        ApiError::new(StatusCode::BAD_GATEWAY, "provider_failed", e.to_string())
    }
}

impl From<UndoError> for ApiError {
    fn from(e: UndoError) -> Self {
        let (status, code) = match e {
            UndoError::Store(store) => return store.into(),
            UndoError::InvalidRunId { .. } => (StatusCode::BAD_REQUEST, "invalid_run_id"),
            UndoError::UnknownRun { .. } => (StatusCode::NOT_FOUND, "unknown_run"),
            UndoError::NothingToUndo { .. } => (StatusCode::NOT_FOUND, "nothing_to_undo"),
            UndoError::Import => (StatusCode::CONFLICT, "import_not_undoable"),
            UndoError::Conflict { .. } => (StatusCode::CONFLICT, "undo_conflict"),
            UndoError::BadEntry { .. } => (StatusCode::CONFLICT, "bad_journal_entry"),
            _ => (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
        };
        ApiError::new(status, code, e.to_string())
    }
}

impl From<BreakerError> for ApiError {
    fn from(e: BreakerError) -> Self {
        match e {
            BreakerError::BadKey { .. } => {
                ApiError::new(StatusCode::BAD_REQUEST, "invalid_breaker_key", e.to_string())
            }
            BreakerError::BadRunId(_) => {
                ApiError::new(StatusCode::BAD_REQUEST, "invalid_run_id", e.to_string())
            }
            BreakerError::Store(s) => s.into(),
            other => ApiError::internal(other.to_string()),
        }
    }
}

impl From<curator_harness::Error> for ApiError {
    fn from(e: curator_harness::Error) -> Self {
        use curator_harness::Error as H;
        let (status, code) = match e {
            H::Store(store) => return store.into(),
            H::Invalid { .. } => (StatusCode::BAD_REQUEST, "bad_request"),
            H::Unsafe { .. } => (StatusCode::UNPROCESSABLE_ENTITY, "unsafe_text"),
            H::Bound { .. } => (StatusCode::CONFLICT, "harness_bound"),
            H::Json { .. } => (StatusCode::CONFLICT, "refused_file"),
            // A manual trigger during a pass: refused at once, naming the holder (§8.1).
            H::Busy { .. } => (StatusCode::CONFLICT, "curator_busy"),
            H::Changed { .. } => (StatusCode::CONFLICT, "changed_under_pass"),
            H::NoState { .. } => (StatusCode::NOT_FOUND, "harness_state_missing"),
            H::UnknownIssue { .. } => (StatusCode::NOT_FOUND, "not_found"),
            _ => (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
        };
        ApiError::new(status, code, e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;
    use std::time::Duration;

    #[test]
    fn store_errors_map_to_statuses_a_client_can_act_on() {
        let cases: Vec<(StoreError, u16, &str)> = vec![
            (StoreError::NotFound { id: "obs_a".into() }, 404, "not_found"),
            (
                StoreError::LockTimeout {
                    path: PathBuf::from("/m/.curator.lock"),
                    holder: None,
                    waited: Duration::from_secs(1),
                },
                503,
                "lock_timeout",
            ),
            (
                StoreError::Unsafe { id: "obs_a".into(), rule: "role_hijack".into() },
                422,
                "unsafe_text",
            ),
            (StoreError::NotADirectory { path: PathBuf::from("/m") }, 500, "internal"),
        ];
        for (err, status, code) in cases {
            let message = err.to_string();
            let api = ApiError::from(err);
            assert_eq!((api.status().as_u16(), api.code()), (status, code), "{message}");
            assert_eq!(api.message(), message, "the library's sentence is kept");
        }
    }

    #[test]
    fn the_body_has_one_shape_and_lock_timeouts_say_when_to_retry() {
        let err = ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "lock_timeout", "held");
        assert_eq!(
            err.body(),
            serde_json::json!({"error": {"code": "lock_timeout", "message": "held"}})
        );
        let response = err.into_response();
        assert_eq!(response.headers()[header::RETRY_AFTER], "5");
    }
}
