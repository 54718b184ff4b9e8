//! Request guards in front of every route: bearer token, body size, same-origin writes
//! (issue 6 item 1 "Security").
//!
//! - **Token.** When a token is configured every request, API, UI or static file, must carry
//!   `Authorization: Bearer <token>`; the comparison is constant-time so response timing does
//!   not reveal how much of a guess was right. Missing or wrong → 401 with `WWW-Authenticate`.
//! - **Body size.** A declared `Content-Length` over the limit is refused at once with the
//!   JSON 413 (the body is never read); bodies without a length are cut by tower-http's limit
//!   while being read and the extractors turn that into the same 413.
//! - **Same origin.** A state-changing request (any method but GET/HEAD/OPTIONS) that a browser
//!   marks as cross-site (`Sec-Fetch-Site: cross-site`, or an `Origin` whose host is not the
//!   `Host` served) is refused with 403: the UI's forms post to the server on 127.0.0.1, and
//!   another web page open in the same browser must not be able to post them for the user.
//!   `Origin: null` is what a browser sends for the UI's own form posts, since every page says
//!   `Referrer-Policy: no-referrer` (issue 13); it passes only with `Sec-Fetch-Site:
//!   same-origin`, which no other page can make a browser send.

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use subtle::ConstantTimeEq;

use crate::error::ApiError;
use crate::state::AppState;

/// Refuses a request without the configured bearer token.
pub(crate) async fn require_token(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    if let Some(expected) = state.token()
        && let Err(err) = check_token(request.headers(), expected)
    {
        let mut response = err.into_response();
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"curator\""));
        return response;
    }
    next.run(request).await
}

fn check_token(headers: &HeaderMap, expected: &str) -> Result<(), ApiError> {
    let unauthorized = |m: &str| ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", m);
    let Some(value) = headers.get(header::AUTHORIZATION) else {
        return Err(unauthorized("this server requires Authorization: Bearer <token>"));
    };
    let presented = value
        .to_str()
        .ok()
        .and_then(|v| v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("bearer ")))
        .map(str::trim)
        .ok_or_else(|| unauthorized("the Authorization header must be `Bearer <token>`"))?;
    if bool::from(presented.as_bytes().ct_eq(expected.as_bytes())) {
        Ok(())
    } else {
        Err(unauthorized("the bearer token is not valid"))
    }
}

/// Refuses a body whose declared length is over the limit before reading any of it.
pub(crate) async fn limit_declared_body(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|len| len > state.body_limit() as u64) {
        return ApiError::payload_too_large(state.body_limit()).into_response();
    }
    next.run(request).await
}

/// Refuses state-changing requests that a browser says come from another site.
pub(crate) async fn same_origin_writes(request: Request, next: Next) -> Response {
    if !matches!(*request.method(), Method::GET | Method::HEAD | Method::OPTIONS)
        && let Err(err) = check_origin(request.headers())
    {
        return err.into_response();
    }
    next.run(request).await
}

fn check_origin(headers: &HeaderMap) -> Result<(), ApiError> {
    let forbidden = |m: String| ApiError::new(StatusCode::FORBIDDEN, "cross_origin", m);
    let header_str = |name| headers.get(name).and_then(|v: &HeaderValue| v.to_str().ok());
    if header_str("sec-fetch-site") == Some("cross-site") {
        return Err(forbidden("cross-site requests may not change memory".into()));
    }
    let Some(origin) = header_str(header::ORIGIN.as_str()) else {
        return Ok(()); // not a browser, or a same-origin GET-style navigation
    };
    let origin_host = origin.split_once("://").map_or(origin, |(_, rest)| rest);
    match header_str(header::HOST.as_str()) {
        Some(host) if host.eq_ignore_ascii_case(origin_host) => Ok(()),
        // The UI's own form under `Referrer-Policy: no-referrer` (the browser vouches for it).
        _ if origin == "null" && header_str("sec-fetch-site") == Some("same-origin") => Ok(()),
        _ if origin == "null" => {
            Err(forbidden("requests from an opaque origin may not change memory".into()))
        }
        host => Err(forbidden(format!(
            "origin {origin} does not match the server's host {}",
            host.unwrap_or("(none)")
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderName;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    fn tokens_are_compared_whole() {
        assert!(check_token(&headers(&[("authorization", "Bearer s3cret")]), "s3cret").is_ok());
        for bad in ["Bearer s3cre", "Bearer s3cret2", "Basic s3cret", "s3cret", "Bearer "] {
            let h = HeaderMap::from_iter([(header::AUTHORIZATION, HeaderValue::from_static(bad))]);
            assert!(check_token(&h, "s3cret").is_err(), "{bad:?} accepted");
        }
        let missing = check_token(&HeaderMap::new(), "s3cret").unwrap_err();
        assert!(missing.message().contains("requires Authorization"));
    }

    #[test]
    fn cross_site_writes_are_refused_and_same_site_ones_pass() {
        let ok = headers(&[("host", "127.0.0.1:7878"), ("origin", "http://127.0.0.1:7878")]);
        assert!(check_origin(&ok).is_ok());
        assert!(
            check_origin(&headers(&[("host", "127.0.0.1:7878")])).is_ok(),
            "curl sends no Origin"
        );
        let evil = headers(&[("host", "127.0.0.1:7878"), ("origin", "https://evil.example")]);
        assert_eq!(check_origin(&evil).unwrap_err().status(), StatusCode::FORBIDDEN);
        let fetch = headers(&[("host", "127.0.0.1:7878"), ("sec-fetch-site", "cross-site")]);
        assert!(check_origin(&fetch).is_err());
        let null = headers(&[("host", "127.0.0.1:7878"), ("origin", "null")]);
        assert!(check_origin(&null).is_err());
        // A form of the UI's own page under `Referrer-Policy: no-referrer`.
        let own_form = headers(&[
            ("host", "127.0.0.1:7878"),
            ("origin", "null"),
            ("sec-fetch-site", "same-origin"),
        ]);
        assert!(check_origin(&own_form).is_ok());
        for site in ["cross-site", "same-site", "none"] {
            let opaque = HeaderMap::from_iter([
                (header::HOST, HeaderValue::from_static("127.0.0.1:7878")),
                (header::ORIGIN, HeaderValue::from_static("null")),
                (HeaderName::from_static("sec-fetch-site"), HeaderValue::from_static(site)),
            ]);
            assert!(check_origin(&opaque).is_err(), "{site}");
        }
    }
}
