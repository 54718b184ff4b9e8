//! `/mcp` on the app `curator serve` runs, one JSON-RPC POST at a time through `oneshot`
//! (issue 6 item 3): the stateless streamable-HTTP mode answers each request with a JSON body,
//! the tools change the files, and the server's guards (Host, token) stand in front of it. The
//! official Python SDK drives the same endpoint in tests/mcp/test_mcp.py.

mod common;

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use common::*;
use curator_server::{ServerOptions, app_on};
use serde_json::{Value, json};

const REVIEWS: &str = "obs_hover-ginger-harbor-echo-citrus-ginger";

/// One JSON-RPC request to `/mcp` with the headers a streamable-HTTP client sends.
async fn rpc(app: &axum::Router, host: &str, token: Option<&str>, body: &Value) -> Reply {
    let mut builder = Request::post("/mcp")
        .header(header::HOST, host)
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ACCEPT, "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25");
    if let Some(token) = token {
        builder = builder.header(header::AUTHORIZATION, format!("Bearer {token}"));
    }
    send(app, builder.body(Body::from(body.to_string())).unwrap()).await
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "curator-tests", "version": "0"}}})
}

fn call(id: u64, name: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": name, "arguments": arguments}})
}

/// The JSON-RPC `result` of a 200 JSON reply.
fn result(reply: &Reply) -> Value {
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    let body = reply.json();
    assert!(body.get("error").is_none(), "{body}");
    body["result"].clone()
}

const HOST: &str = "127.0.0.1:7878";

#[tokio::test]
async fn initialize_names_curator_and_lists_every_tool() {
    let f = Fixture::new();
    let app = f.app();
    let init = result(&rpc(&app, HOST, None, &initialize()).await);
    assert_eq!(init["serverInfo"]["name"], "curator");
    assert_eq!(init["serverInfo"]["version"], env!("CARGO_PKG_VERSION"));
    assert!(init["instructions"].as_str().unwrap().contains("record_run"));
    assert!(init["capabilities"]["tools"].is_object(), "{init}");
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let tools = result(&rpc(&app, HOST, None, &list).await);
    let names: Vec<&str> =
        tools["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, curator_server::mcp::McpServer::tool_names());
}

#[tokio::test]
async fn a_run_over_http_moves_trust_on_disk() {
    let f = Fixture::new();
    let app = f.app();
    let step = "Check the product reviews widget shows reviews";
    let args = json!({"product": PRODUCT, "test": TEST_ID, "step": step,
                      "run_id": "r_http-run", "step_index": 0});
    let query = result(&rpc(&app, HOST, None, &call(2, "query_memory", args)).await);
    assert_eq!(query["isError"], false, "{query}");
    let ids: Vec<&str> = query["structuredContent"]["observations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["id"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&REVIEWS), "{ids:?}");
    let run = json!({"run_id": "r_http-run", "product": PRODUCT,
                     "test": {"id": TEST_ID, "name": "reviews"}, "status": "passed",
                     "steps": [{"name": step, "status": "passed"}]});
    let log = result(&rpc(&app, HOST, None, &call(3, "record_run", json!({"run": run}))).await);
    assert_eq!(log["structuredContent"]["confirmed"].as_u64(), Some(ids.len() as u64), "{log}");
    let text = std::fs::read_to_string(f.product_file(REVIEWS)).unwrap();
    assert!(text.contains("\ntrust: 0.55\n"), "{text}");
    let history = get(&app, &format!("/api/v1/observations/{REVIEWS}/history")).await;
    assert!(history.text.contains("r_http-run"), "the JSON API sees the MCP run: {}", history.text);
}

#[tokio::test]
async fn bad_arguments_are_tool_errors_and_an_unknown_tool_is_a_protocol_error() {
    let f = Fixture::new();
    let app = f.app();
    let reply = rpc(&app, HOST, None, &call(2, "get_observation", json!({"id": 42}))).await;
    let body = result(&reply);
    assert_eq!(body["isError"], true, "{body}");
    assert_eq!(body["structuredContent"]["error"]["code"], "invalid_arguments");
    let reply = rpc(&app, HOST, None, &call(3, "drop_database", json!({}))).await;
    let body = reply.json();
    assert!(body["error"]["message"].as_str().unwrap().contains("unknown tool"), "{body}");
}

#[tokio::test]
async fn the_token_and_the_host_guard_stand_in_front_of_mcp() {
    let f = Fixture::new();
    let open = f.app();
    let rebinding = rpc(&open, "attacker.example:7878", None, &initialize()).await;
    rebinding.error(403, "host_not_allowed");

    // Listening on every address with a token: any IP literal names this server, a name only
    // when it is configured.
    let options = ServerOptions {
        token: Some("s3cret".into()),
        allowed_hosts: vec!["memory.example".into()],
        ..ServerOptions::default()
    };
    let guarded = app_on(f.state(options), "0.0.0.0:7878".parse().unwrap());
    let missing = rpc(&guarded, "10.0.0.5:7878", None, &initialize()).await;
    missing.error(401, "unauthorized");
    let wrong = rpc(&guarded, "10.0.0.5:7878", Some("guess"), &initialize()).await;
    wrong.error(401, "unauthorized");
    let init = result(&rpc(&guarded, "10.0.0.5:7878", Some("s3cret"), &initialize()).await);
    assert_eq!(init["serverInfo"]["name"], "curator");
    let named = result(&rpc(&guarded, "memory.example:7878", Some("s3cret"), &initialize()).await);
    assert_eq!(named["serverInfo"]["name"], "curator");
    let other = rpc(&guarded, "attacker.example", Some("s3cret"), &initialize()).await;
    other.error(403, "host_not_allowed");
}
