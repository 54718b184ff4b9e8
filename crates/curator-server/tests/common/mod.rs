//! Shared setup of the server tests: a temp copy of `examples/agent-qa-memory`, the app over it,
//! and a request helper that sends one request with `oneshot` (no socket) and decodes the body.

#![allow(dead_code, unreachable_pub)]

use std::path::{Path, PathBuf};

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use curator_server::{AppState, ServerOptions, app};
use curator_store::{FileStore, FileStoreOptions};
use http_body_util::BodyExt;
use serde_json::Value;
use tower::ServiceExt;

/// An observation of the example root: products/acme-shop, trust 0.8.
pub const CART_BADGE: &str = "obs_noble-poppy-winter-dingo-hazel-storm-bloom-orbit-coral-sage";
pub const PRODUCT: &str = "acme-shop";
pub const TEST_ID: &str = "t_lake-mint-harbor-kelp-river-moss-glade-cedar-iris-camel";

/// A temp memory root holding a copy of the example.
pub struct Fixture {
    pub dir: tempfile::TempDir,
    pub root: PathBuf,
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

impl Fixture {
    pub fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("memory");
        let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/agent-qa-memory");
        copy_dir(&example, &root);
        Fixture { dir, root }
    }

    pub fn state(&self, options: ServerOptions) -> AppState {
        let store = FileStore::open(&self.root, FileStoreOptions::default()).unwrap();
        AppState::new(store, options)
    }

    pub fn app(&self) -> Router {
        app(self.state(ServerOptions::default()))
    }

    /// Writes `n` observations into `products/<scope>`, then one file that is not an
    /// observation, named to sort after them all; returns that file's path.
    pub fn bulk(&self, scope: &str, n: usize) -> PathBuf {
        let dir = self.root.join("products").join(scope);
        std::fs::create_dir_all(&dir).unwrap();
        for i in 0..n {
            let obs = curator_core::Observation {
                id: curator_core::ObservationId::generate(),
                title: format!("Bulk fact {i}"),
                content: format!("Body of bulk fact {i}."),
                trust: 0.5,
                created: "2026-04-10T12:00:00.000Z".into(),
                last_confirmed: "2026-04-10T12:00:00.000Z".into(),
                confirmed_count: 0,
                contradicted_count: 0,
                source_test: "t_bulk".into(),
                suite: None,
                extra: Default::default(),
            };
            let text = curator_core::codec::write_observation(&obs).unwrap();
            std::fs::write(dir.join(format!("{}.md", obs.id)), text).unwrap();
        }
        let broken = dir.join("obs_zzzz-zzzz-zzzz-zzzz-zzzz-zzzz.md");
        std::fs::write(&broken, "not an observation\n").unwrap();
        broken
    }

    /// The file of an observation in products/acme-shop.
    pub fn product_file(&self, id: &str) -> PathBuf {
        self.root.join("products").join(PRODUCT).join(format!("{id}.md"))
    }
}

/// A decoded response.
#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub headers: axum::http::HeaderMap,
    pub text: String,
}

impl Reply {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.text))
    }

    /// Asserts an API error with this status and code; returns its message.
    pub fn error(&self, status: u16, code: &str) -> String {
        assert_eq!(self.status.as_u16(), status, "body: {}", self.text);
        let body = self.json();
        assert_eq!(body["error"]["code"], code, "body: {}", self.text);
        body["error"]["message"].as_str().unwrap().to_owned()
    }
}

/// Sends `request`, naming `Host: localhost` when it names none (as every HTTP/1.1 client
/// does; the server refuses a request without a Host).
pub async fn send(app: &Router, mut request: Request<Body>) -> Reply {
    if !request.headers().contains_key(header::HOST) {
        request.headers_mut().insert(header::HOST, header::HeaderValue::from_static("localhost"));
    }
    send_as_is(app, request).await
}

/// Sends `request` exactly as built.
pub async fn send_as_is(app: &Router, request: Request<Body>) -> Reply {
    let response = app.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    Reply { status, headers, text: String::from_utf8_lossy(&bytes).into_owned() }
}

pub async fn get(app: &Router, uri: &str) -> Reply {
    send(app, Request::get(uri).body(Body::empty()).unwrap()).await
}

/// A request with a JSON body (Content-Type set).
pub async fn json(app: &Router, method: &str, uri: &str, body: &Value) -> Reply {
    let request = Request::builder()
        .method(method)
        .uri(uri)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_string()))
        .unwrap();
    send(app, request).await
}

/// A JSON write sent with an `Idempotency-Key` (a retry sends the key of the first try).
#[allow(dead_code)] // not every test binary sends one
pub async fn keyed(app: &Router, method: &str, uri: &str, key: &str, body: &Value) -> Reply {
    let request = Request::builder()
        .method(method)
        .uri(uri)
        .header(header::CONTENT_TYPE, "application/json")
        .header("idempotency-key", key)
        .body(Body::from(body.to_string()))
        .unwrap();
    send(app, request).await
}

/// A request with a raw body and content type.
pub async fn raw(
    app: &Router,
    method: &str,
    uri: &str,
    content_type: Option<&str>,
    body: &str,
) -> Reply {
    let mut builder = Request::builder().method(method).uri(uri);
    if let Some(ct) = content_type {
        builder = builder.header(header::CONTENT_TYPE, ct);
    }
    send(app, builder.body(Body::from(body.to_owned())).unwrap()).await
}

pub async fn post(app: &Router, uri: &str) -> Reply {
    send(app, Request::post(uri).body(Body::empty()).unwrap()).await
}
