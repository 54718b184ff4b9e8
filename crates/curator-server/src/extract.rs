//! Extractors that answer bad input in the API's own error format (issue 6 "clear JSON errors").
//!
//! axum's `Json` and `Query` reject with plain-text bodies and their own statuses; these wrappers
//! read the same input but classify every failure into an [`ApiError`]: a body over the limit is
//! 413, a body that is not JSON is 400 `invalid_json`, JSON of the wrong shape is 400
//! `invalid_request` naming the field, and a non-empty body without `Content-Type:
//! application/json` is 415. Requiring the JSON content type is also what keeps a cross-site
//! HTML form (which can only send form encodings or `text/plain` without a CORS preflight) from
//! driving the API.

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use serde::de::DeserializeOwned;

use crate::error::ApiError;
use crate::state::AppState;

/// A JSON body that must be present.
#[derive(Debug)]
pub(crate) struct ApiJson<T>(pub(crate) T);

/// A JSON body that may be empty (then `T::default()`), e.g. an optional `{"reasoning": ...}`.
#[derive(Debug)]
pub(crate) struct MaybeJson<T>(pub(crate) T);

/// Query-string parameters with API errors.
#[derive(Debug)]
pub(crate) struct ApiQuery<T>(pub(crate) T);

impl<T: DeserializeOwned> FromRequest<AppState> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, ApiError> {
        let bytes = read_body(req, state).await?;
        if bytes.is_empty() {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "invalid_json",
                "the request body is empty: a JSON object is required",
            ));
        }
        parse(&bytes).map(ApiJson)
    }
}

impl<T: DeserializeOwned + Default> FromRequest<AppState> for MaybeJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, ApiError> {
        let bytes = read_body(req, state).await?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(MaybeJson(T::default()));
        }
        parse(&bytes).map(MaybeJson)
    }
}

impl<T: DeserializeOwned + Send> FromRequestParts<AppState> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &AppState) -> Result<Self, ApiError> {
        let query = parts.uri.query().unwrap_or("");
        serde_urlencoded_like(query).map(ApiQuery)
    }
}

/// Decodes a query string through axum's own `Query` deserializer, keeping its message.
pub(crate) fn serde_urlencoded_like<T: DeserializeOwned>(query: &str) -> Result<T, ApiError> {
    let uri: axum::http::Uri = format!("/?{query}")
        .parse()
        .map_err(|e| ApiError::bad_request(format!("invalid query string: {e}")))?;
    axum::extract::Query::<T>::try_from_uri(&uri)
        .map(|q| q.0)
        .map_err(|e| ApiError::bad_request(format!("invalid query parameter: {}", e.body_text())))
}

/// Reads the whole body, enforcing the JSON content type and the size limit.
async fn read_body(req: Request, state: &AppState) -> Result<Bytes, ApiError> {
    let is_json = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|mime| {
            let mime = mime.trim();
            mime.eq_ignore_ascii_case("application/json")
                || (mime.starts_with("application/") && mime.ends_with("+json"))
        });
    let has_content_type = req.headers().contains_key(header::CONTENT_TYPE);
    let limit = state.body_limit();
    let bytes = Bytes::from_request(req, state).await.map_err(|rejection| {
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::payload_too_large(limit)
        } else {
            ApiError::bad_request(format!(
                "cannot read the request body: {}",
                rejection.body_text()
            ))
        }
    })?;
    if bytes.len() > limit {
        return Err(ApiError::payload_too_large(limit));
    }
    if !bytes.iter().all(u8::is_ascii_whitespace) && !is_json {
        let what = if has_content_type { "is not" } else { "is missing; expected" };
        return Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            format!("Content-Type {what} application/json"),
        ));
    }
    Ok(bytes)
}

/// Parses JSON, telling a syntax error (400 `invalid_json`) from a shape error (400
/// `invalid_request`, serde's message names the field and what was expected).
fn parse<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    serde_json::from_slice(bytes).map_err(|e| {
        use serde_json::error::Category;
        match e.classify() {
            Category::Syntax | Category::Eof | Category::Io => ApiError::new(
                StatusCode::BAD_REQUEST,
                "invalid_json",
                format!("the request body is not valid JSON: {e}"),
            ),
            Category::Data => ApiError::new(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                format!("the request body does not match the schema: {e}"),
            ),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Body {
        title: String,
    }

    #[test]
    fn syntax_and_shape_errors_are_told_apart() {
        let syntax = parse::<Body>(b"{\"title\": ").unwrap_err();
        assert_eq!(syntax.code(), "invalid_json");
        let shape = parse::<Body>(b"{\"title\": 3}").unwrap_err();
        assert_eq!(shape.code(), "invalid_request");
        assert!(shape.message().contains("expected a string"), "{}", shape.message());
        let unknown = parse::<Body>(b"{\"title\": \"t\", \"tilte\": 1}").unwrap_err();
        assert!(unknown.message().contains("tilte"), "{}", unknown.message());
    }

    #[test]
    fn query_strings_are_decoded_with_api_errors() {
        #[derive(Debug, serde::Deserialize)]
        struct Q {
            limit: Option<usize>,
        }
        let q: Q = serde_urlencoded_like("limit=5").unwrap();
        assert_eq!(q.limit, Some(5));
        let err = serde_urlencoded_like::<Q>("limit=lots").unwrap_err();
        assert_eq!(err.code(), "bad_request");
        assert!(err.message().contains("limit"), "{}", err.message());
    }
}
