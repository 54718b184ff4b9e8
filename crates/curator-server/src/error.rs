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

/// Where an error belongs in the vocabulary every surface shares: its HTTP status and its
/// stable code. Read by reference, so the CLI names an error it only holds in a chain
/// ([`code_of`]) with the code the API would answer.
trait Classify {
    fn classify(&self) -> (StatusCode, &'static str);
}

impl<E: Classify + std::fmt::Display> From<E> for ApiError {
    fn from(e: E) -> Self {
        let (status, code) = e.classify();
        ApiError::new(status, code, e.to_string())
    }
}

const INTERNAL: (StatusCode, &str) = (StatusCode::INTERNAL_SERVER_ERROR, "internal");

impl Classify for StoreError {
    fn classify(&self) -> (StatusCode, &'static str) {
        use StatusCode as S;
        match self {
            StoreError::NotFound { .. } => (S::NOT_FOUND, "not_found"),
            StoreError::DuplicateId { .. } => (S::CONFLICT, "duplicate_id"),
            StoreError::Unsafe { .. } => (S::UNPROCESSABLE_ENTITY, "unsafe_text"),
            StoreError::Scope { .. } => (S::BAD_REQUEST, "invalid_scope"),
            StoreError::Write { .. } => (S::UNPROCESSABLE_ENTITY, "invalid_observation"),
            StoreError::Parse { .. } | StoreError::Refused { .. } => (S::CONFLICT, "refused_file"),
            StoreError::LockTimeout { .. } => (S::SERVICE_UNAVAILABLE, "lock_timeout"),
            StoreError::Lock { .. } => (S::SERVICE_UNAVAILABLE, "lock_unavailable"),
            StoreError::Database { .. } => (S::SERVICE_UNAVAILABLE, "database_error"),
            _ => INTERNAL,
        }
    }
}

impl Classify for curator_core::ScopeError {
    fn classify(&self) -> (StatusCode, &'static str) {
        (StatusCode::BAD_REQUEST, "invalid_scope")
    }
}

impl Classify for curator_core::IdError {
    fn classify(&self) -> (StatusCode, &'static str) {
        (StatusCode::BAD_REQUEST, "invalid_id")
    }
}

impl Classify for QueryError {
    fn classify(&self) -> (StatusCode, &'static str) {
        match self {
            QueryError::Scope(..) => (StatusCode::BAD_REQUEST, "invalid_scope"),
            QueryError::MinTrust(_) => (StatusCode::BAD_REQUEST, "bad_request"),
            QueryError::Session(s) => s.classify(),
            QueryError::Store(s) => s.classify(),
            _ => INTERNAL,
        }
    }
}

impl Classify for SessionError {
    fn classify(&self) -> (StatusCode, &'static str) {
        match self {
            SessionError::InvalidRunId(_) | SessionError::ReservedRunId { .. } => {
                (StatusCode::BAD_REQUEST, "invalid_run_id")
            }
            SessionError::InvalidStep(_) => (StatusCode::BAD_REQUEST, "invalid_step_index"),
            SessionError::Store(s) => s.classify(),
            _ => INTERNAL,
        }
    }
}

impl Classify for RunRecordError {
    fn classify(&self) -> (StatusCode, &'static str) {
        (StatusCode::BAD_REQUEST, "invalid_run_record")
    }
}

impl Classify for DecisionsError {
    fn classify(&self) -> (StatusCode, &'static str) {
        (StatusCode::BAD_REQUEST, "invalid_decisions")
    }
}

impl Classify for CurateError {
    fn classify(&self) -> (StatusCode, &'static str) {
        match self {
            CurateError::Store(s) => s.classify(),
            CurateError::AfterAnswer { source, .. } => source.classify(),
            CurateError::Provider(p) => p.classify(),
            CurateError::Conflict { .. } => (StatusCode::CONFLICT, "run_conflict"),
            _ => INTERNAL,
        }
    }
}

impl Classify for ProviderError {
    fn classify(&self) -> (StatusCode, &'static str) {
        (StatusCode::BAD_GATEWAY, "provider_failed")
    }
}

impl Classify for UndoError {
    fn classify(&self) -> (StatusCode, &'static str) {
        match self {
            UndoError::Store(store) => store.classify(),
            UndoError::InvalidRunId { .. } => (StatusCode::BAD_REQUEST, "invalid_run_id"),
            UndoError::UnknownRun { .. } => (StatusCode::NOT_FOUND, "unknown_run"),
            UndoError::NothingToUndo { .. } => (StatusCode::NOT_FOUND, "nothing_to_undo"),
            UndoError::Import => (StatusCode::CONFLICT, "import_not_undoable"),
            UndoError::Conflict { .. } => (StatusCode::CONFLICT, "undo_conflict"),
            UndoError::BadEntry { .. } => (StatusCode::CONFLICT, "bad_journal_entry"),
            _ => INTERNAL,
        }
    }
}

impl Classify for BreakerError {
    fn classify(&self) -> (StatusCode, &'static str) {
        match self {
            BreakerError::BadKey { .. } => (StatusCode::BAD_REQUEST, "invalid_breaker_key"),
            BreakerError::BadRunId(_) => (StatusCode::BAD_REQUEST, "invalid_run_id"),
            BreakerError::Store(s) => s.classify(),
            _ => INTERNAL,
        }
    }
}

impl Classify for curator_harness::Error {
    fn classify(&self) -> (StatusCode, &'static str) {
        use curator_harness::Error as H;
        match self {
            H::Store(store) => store.classify(),
            H::Invalid { .. } => (StatusCode::BAD_REQUEST, "bad_request"),
            H::Unsafe { .. } => (StatusCode::UNPROCESSABLE_ENTITY, "unsafe_text"),
            H::Bound { .. } => (StatusCode::CONFLICT, "harness_bound"),
            H::Json { .. } => (StatusCode::CONFLICT, "refused_file"),
            // A manual trigger during a pass: refused at once, naming the holder (§8.1).
            H::Busy { .. } => (StatusCode::CONFLICT, "curator_busy"),
            H::Changed { .. } => (StatusCode::CONFLICT, "changed_under_pass"),
            H::NoState { .. } => (StatusCode::NOT_FOUND, "harness_state_missing"),
            H::UnknownIssue { .. } => (StatusCode::NOT_FOUND, "not_found"),
            _ => INTERNAL,
        }
    }
}

/// The API's code for the first error of `chain` the vocabulary knows (the CLI's `--json`
/// error object carries it beside the message); `None` when none is known.
pub fn code_of<'a>(
    chain: impl IntoIterator<Item = &'a (dyn std::error::Error + 'static)>,
) -> Option<&'static str> {
    fn known(e: &(dyn std::error::Error + 'static)) -> Option<(StatusCode, &'static str)> {
        macro_rules! try_as {
            ($($t:ty),*) => {$(
                if let Some(e) = e.downcast_ref::<$t>() {
                    return Some(e.classify());
                }
            )*};
        }
        try_as!(
            StoreError,
            curator_core::ScopeError,
            curator_core::IdError,
            QueryError,
            SessionError,
            RunRecordError,
            DecisionsError,
            CurateError,
            ProviderError,
            UndoError,
            BreakerError,
            curator_harness::Error
        );
        None
    }
    chain.into_iter().find_map(known).map(|(_, code)| code)
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
