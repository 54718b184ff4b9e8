//! The API's surface: the OpenAPI document against the registered routes, JSON errors for unknown
//! paths and methods, body size limits, the bearer token and the same-origin rule for writes.

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use curator_server::{ServerOptions, app};
use serde_json::json;

use crate::common::*;
use crate::observations::new_observation;

#[tokio::test]
async fn oversized_bodies_are_refused_with_413_whether_declared_or_streamed() {
    let f = Fixture::new();
    let app = app(f.state(ServerOptions { body_limit: 4096, ..ServerOptions::default() }));
    let mut big = new_observation(PRODUCT);
    big["content"] = json!("x".repeat(10_000));
    let text = big.to_string();
    let declared = Request::post("/api/v1/observations")
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::CONTENT_LENGTH, text.len())
        .body(Body::from(text.clone()))
        .unwrap();
    let m = send(&app, declared).await.error(413, "payload_too_large");
    assert!(m.contains("4096"), "{m}");
    // No Content-Length: the body is cut while being read.
    let streamed = Request::post("/api/v1/observations")
        .header(header::CONTENT_TYPE, "application/json")
        .body(chunked(text))
        .unwrap();
    send(&app, streamed).await.error(413, "payload_too_large");
}

/// The limit is the server's (16 MiB by default), not axum's own 2 MiB: a 3 MiB body is read
/// and judged on its content.
#[tokio::test]
async fn a_body_under_the_limit_is_read_whatever_its_size() {
    let f = Fixture::new();
    let app = app(f.state(ServerOptions::default()));
    let mut big = new_observation(PRODUCT);
    big["content"] = json!("x".repeat(3 << 20));
    let reply = json(&app, "POST", "/api/v1/observations", &big).await;
    assert_ne!(reply.status, StatusCode::PAYLOAD_TOO_LARGE, "{}", reply.text);
    // Refused by the file's own limit (1 MiB), which only a body that was read can reach.
    assert!(reply.error(409, "refused_file").contains("too large"));
}

/// A body with no known length, delivered in chunks of 1000 bytes.
struct Chunked(Vec<axum::body::Bytes>);

impl http_body::Body for Chunked {
    type Data = axum::body::Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        std::task::Poll::Ready(self.0.pop().map(|c| Ok(http_body::Frame::data(c))))
    }
}

fn chunked(text: String) -> Body {
    let mut parts: Vec<_> =
        text.as_bytes().chunks(1000).map(axum::body::Bytes::copy_from_slice).collect();
    parts.reverse();
    Body::new(Chunked(parts))
}

#[tokio::test]
async fn every_registered_route_answers_and_the_document_lists_it() {
    let f = Fixture::new();
    let app = f.app();
    let doc = get(&app, "/api/v1/openapi.json").await;
    assert_eq!(doc.status, StatusCode::OK);
    let doc = doc.json();
    assert_eq!(doc["openapi"], "3.1.0");
    for (method, path) in curator_server::api_routes() {
        assert!(
            doc["paths"][&path][&method].is_object(),
            "{method} {path} missing from openapi.json"
        );
        let uri = path
            .replace("{id}", CART_BADGE)
            .replace("{run_id}", "r_route-check")
            .replace("{step}", "0")
            .replace("{key}", "r_route-check")
            .replace("{role}", "worker");
        let request = Request::builder()
            .method(method.to_uppercase().as_str())
            .uri(&uri)
            .body(Body::empty())
            .unwrap();
        let reply = send(&app, request).await;
        assert_ne!(reply.status, StatusCode::METHOD_NOT_ALLOWED, "{method} {uri}: {}", reply.text);
        assert!(!reply.text.contains("no route"), "{method} {uri} is not routed: {}", reply.text);
        assert!(reply.text.starts_with('{'), "{method} {uri} answered non-JSON: {}", reply.text);
    }
}

#[tokio::test]
async fn unknown_paths_and_methods_get_json_errors() {
    let f = Fixture::new();
    let app = f.app();
    let m = get(&app, "/api/v1/nothing-here").await.error(404, "not_found");
    assert!(m.contains("/api/v1/nothing-here"), "{m}");
    let put = Request::put("/api/v1/observations").body(Body::empty()).unwrap();
    send(&app, put).await.error(405, "method_not_allowed");
}

#[tokio::test]
async fn a_configured_token_is_required_on_every_request() {
    let f = Fixture::new();
    let app =
        app(f.state(ServerOptions {
            token: Some("s3cret-token".into()),
            ..ServerOptions::default()
        }));
    let missing = get(&app, "/api/v1/observations").await;
    let m = missing.error(401, "unauthorized");
    assert!(m.contains("Authorization: Bearer"), "{m}");
    assert!(missing.headers.contains_key(header::WWW_AUTHENTICATE));
    let ui = get(&app, "/").await;
    assert_eq!(ui.status, StatusCode::UNAUTHORIZED, "the UI is guarded too");
    let wrong = Request::get("/api/v1/observations")
        .header(header::AUTHORIZATION, "Bearer s3cret-tokeN")
        .body(Body::empty())
        .unwrap();
    let m = send(&app, wrong).await.error(401, "unauthorized");
    assert!(m.contains("not valid"), "{m}");
    let right = Request::get("/api/v1/observations")
        .header(header::AUTHORIZATION, "Bearer s3cret-token")
        .body(Body::empty())
        .unwrap();
    assert_eq!(send(&app, right).await.status, StatusCode::OK);
}

#[tokio::test]
async fn cross_site_writes_are_refused() {
    let f = Fixture::new();
    let app = f.app();
    let request = Request::post(format!("/api/v1/observations/{CART_BADGE}/confirm"))
        .header(header::HOST, "127.0.0.1:7878")
        .header(header::ORIGIN, "https://evil.example")
        .body(Body::empty())
        .unwrap();
    send(&app, request).await.error(403, "cross_origin");
    let badge = get(&app, &format!("/api/v1/observations/{CART_BADGE}")).await.json();
    assert_eq!(badge["trust"], 0.8, "nothing changed");
}
