//! The `Host` guard on every route (issue 13 item 3, DNS rebinding): each API route, each UI
//! page and form, the static files and `/mcp` refuse a foreign `Host` before doing anything,
//! answer the listen address, `localhost` and configured names, and every response carries the
//! security headers.

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use curator_server::{ServerOptions, app, app_on};

use crate::common::*;

/// Every route the server has: the API's (from its own registry), the UI's pages and forms,
/// a static file and MCP, with path parameters filled in.
fn every_route() -> Vec<(String, String)> {
    let mut routes: Vec<(String, String)> = curator_server::api_routes()
        .into_iter()
        .map(|(method, path)| {
            let uri = path
                .replace("{id}", CART_BADGE)
                .replace("{run_id}", "r_route-check")
                .replace("{step}", "0")
                .replace("{key}", "r_route-check")
                .replace("{role}", "worker");
            (method.to_uppercase(), uri)
        })
        .collect();
    let ui = [
        ("GET", "/".to_owned()),
        ("GET", format!("/observations/{CART_BADGE}")),
        ("POST", format!("/observations/{CART_BADGE}/edit")),
        ("POST", format!("/observations/{CART_BADGE}/confirm")),
        ("POST", format!("/observations/{CART_BADGE}/deprecate")),
        ("POST", format!("/observations/{CART_BADGE}/delete")),
        ("GET", "/query".to_owned()),
        ("GET", "/runs".to_owned()),
        ("GET", "/runs/r_route-check".to_owned()),
        ("POST", "/runs/r_route-check/undo".to_owned()),
        ("GET", "/lint".to_owned()),
        ("GET", "/harness".to_owned()),
        ("POST", "/harness/triage".to_owned()),
        ("POST", "/harness/curate".to_owned()),
        ("GET", "/static/app.js".to_owned()),
        ("GET", "/static/app.css".to_owned()),
        ("GET", "/no-such-page".to_owned()),
        ("POST", "/mcp".to_owned()),
        ("GET", "/mcp".to_owned()),
    ];
    routes.extend(ui.into_iter().map(|(m, p)| (m.to_owned(), p)));
    routes
}

fn request(method: &str, uri: &str, host: Option<&str>) -> Request<Body> {
    let mut builder = Request::builder().method(method).uri(uri);
    if let Some(host) = host {
        builder = builder.header(header::HOST, host);
    }
    if method == "POST" && uri.starts_with("/mcp") {
        builder = builder
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::ACCEPT, "application/json, text/event-stream");
    }
    builder.body(Body::empty()).unwrap()
}

/// Every file of the memory root, with its bytes: nothing may change under a refused request.
fn snapshot(root: &std::path::Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                out.push((path.clone(), std::fs::read(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[tokio::test]
async fn every_route_refuses_a_foreign_host_before_doing_anything() {
    let f = Fixture::new();
    let app = f.app();
    let routes = every_route();
    assert!(routes.len() > 40, "{} routes", routes.len());
    let before = snapshot(&f.root);
    for (method, uri) in &routes {
        for host in ["evil.example", "evil.example:7878", "127.0.0.1.evil.example", "[::2]"] {
            let reply = send_as_is(&app, request(method, uri, Some(host))).await;
            let m = reply.error(403, "host_not_allowed");
            assert!(m.contains("allowedHosts"), "{method} {uri}: {m}");
            assert!(reply.headers.contains_key(header::CONTENT_SECURITY_POLICY));
        }
        send_as_is(&app, request(method, uri, None)).await.error(400, "missing_host");
    }
    assert!(snapshot(&f.root) == before, "a refused request changed the memory root");
}

#[tokio::test]
async fn every_route_answers_the_listen_address_and_localhost() {
    let f = Fixture::new();
    let app = app_on(f.state(ServerOptions::default()), "127.0.0.1:7878".parse().unwrap());
    for (method, uri) in every_route() {
        for host in ["127.0.0.1:7878", "localhost:7878", "LOCALHOST"] {
            let reply = send_as_is(&app, request(&method, &uri, Some(host))).await;
            assert!(
                !reply.text.contains("host_not_allowed") && !reply.text.contains("missing_host"),
                "{method} {uri} with Host {host}: {} {}",
                reply.status,
                reply.text
            );
        }
    }
}

#[tokio::test]
async fn configured_names_are_answered_and_nothing_else() {
    let f = Fixture::new();
    let options =
        ServerOptions { allowed_hosts: vec!["memory.example".into()], ..ServerOptions::default() };
    let app = app(f.state(options));
    let ok = send_as_is(&app, request("GET", "/api/v1/observations", Some("memory.example"))).await;
    assert_eq!(ok.status, StatusCode::OK, "{}", ok.text);
    send_as_is(&app, request("GET", "/", Some("other.example")))
        .await
        .error(403, "host_not_allowed");
}

#[tokio::test]
async fn every_response_carries_the_security_headers() {
    let f = Fixture::new();
    let app = f.app();
    let pages = [
        "/".to_owned(),
        format!("/observations/{CART_BADGE}"),
        "/observations/obs_not-here".to_owned(),
        "/query".to_owned(),
        "/runs".to_owned(),
        "/lint".to_owned(),
        "/harness".to_owned(),
        "/static/app.js".to_owned(),
        "/static/app.css".to_owned(),
        "/static/nothing.js".to_owned(),
        "/no-such-page".to_owned(),
        "/api/v1/observations".to_owned(),
        "/api/v1/nothing".to_owned(),
    ];
    for page in pages {
        let reply = get(&app, &page).await;
        let h = &reply.headers;
        let csp = h[header::CONTENT_SECURITY_POLICY].to_str().unwrap();
        assert!(csp.contains("frame-ancestors 'none'"), "{page}: {csp}");
        assert!(csp.contains("script-src 'self'") && csp.contains("style-src 'self'"), "{csp}");
        assert!(!csp.contains("unsafe-inline") && !csp.contains("unsafe-eval"), "{csp}");
        assert!(csp.contains("default-src 'none'"), "{csp}");
        assert_eq!(h[header::X_CONTENT_TYPE_OPTIONS], "nosniff", "{page}");
        assert_eq!(h[header::REFERRER_POLICY], "no-referrer", "{page}");
        assert_eq!(h[header::X_FRAME_OPTIONS], "DENY", "{page}");
    }
    // A form post answered with a redirect carries them too.
    let post = Request::post(format!("/observations/{CART_BADGE}/confirm"))
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(Body::from("reasoning="))
        .unwrap();
    let reply = send(&app, post).await;
    assert_eq!(reply.status, StatusCode::SEE_OTHER, "{}", reply.text);
    assert!(reply.headers.contains_key(header::CONTENT_SECURITY_POLICY));
}
