//! The harness review routes (issue 15 item 5): raw.md tail, archive pages, and the §3.4 human
//! issue transitions, with the bad input each must refuse.

use axum::http::StatusCode;
use curator_harness::{Harness, HarnessOptions, Timestamp};
use curator_server::ServerOptions;
use serde_json::json;

use crate::common::*;

const ISSUES: &str = r#"{"issues":[
 {"id":"I-0002","title":"Coupon total wrong","severity":"major","source":"validator","foundAt":"2026-04-01T00:00:00Z","status":"open","attempts":0,"notes":[],"x-ui":"kept"},
 {"id":"I-0001","title":"Login flickers","severity":"minor","source":"validator","foundAt":"2026-04-01T00:00:00Z","status":"closed","attempts":1,"notes":[]}
],"nextId":3}
"#;

#[tokio::test]
async fn review_routes_show_the_tail_page_the_archive_and_change_issues() {
    let f = Fixture::new();
    let state_dir = f.dir.path().join("project/.harness");
    let identity = f.dir.path().join("identity");
    let h = Harness::open(&state_dir, &identity, HarnessOptions::default());
    for i in 0..30 {
        h.append(
            "worker",
            Some("F-001"),
            false,
            &format!("Implemented endpoint {i}"),
            Timestamp::now(),
        )
        .unwrap();
    }
    h.append(
        "debugger",
        Some("F-031"),
        false,
        "the webhook reads STRIPE_SECRET at import time",
        Timestamp::now(),
    )
    .unwrap();
    std::fs::write(state_dir.join("issues.json"), ISSUES).unwrap();
    let app = curator_server::app(
        f.state(ServerOptions { harness: Some(h), ..ServerOptions::default() }),
    );

    // The tail: whole lines only, cut when the budget is smaller than the file.
    let tail = get(&app, "/api/v1/harness/raw").await.json();
    assert_eq!(tail["cut"], false);
    assert!(tail["text"].as_str().unwrap().contains("STRIPE_SECRET"));
    let small = get(&app, "/api/v1/harness/raw?bytes=100").await.json();
    assert_eq!(small["cut"], true);
    let text = small["text"].as_str().unwrap();
    assert!(text.starts_with('['), "starts at a line boundary: {text:?}");
    get(&app, "/api/v1/harness/raw?bytes=0").await.error(400, "bad_request");
    get(&app, "/api/v1/harness/raw?bytes=99999999").await.error(400, "bad_request");
    get(&app, "/api/v1/harness/raw?lines=3").await.error(400, "bad_request");

    // Nothing archived before a pass; then 21 entries leave raw.md (10 stay as history).
    let empty = get(&app, "/api/v1/harness/archive").await.json();
    assert_eq!(empty["total"], 0);
    let pass = post(&app, "/api/v1/harness/curate").await;
    assert_eq!(pass.status, StatusCode::OK, "{}", pass.text);
    let all = get(&app, "/api/v1/harness/archive?limit=5").await.json();
    let total = all["total"].as_u64().unwrap();
    assert!(total >= 21, "{all}");
    let page = all["records"].as_array().unwrap();
    assert_eq!(page.len(), 5);
    // Newest first: the second page continues where the first stopped, in the same order.
    let next = get(&app, "/api/v1/harness/archive?limit=5&offset=5").await.json();
    let both = get(&app, "/api/v1/harness/archive?limit=10").await.json();
    let joined: Vec<_> = page.iter().chain(next["records"].as_array().unwrap()).cloned().collect();
    assert_eq!(&joined, both["records"].as_array().unwrap());
    let absorbed = get(&app, "/api/v1/harness/archive?disposition=absorbed&limit=500").await.json();
    let records = absorbed["records"].as_array().unwrap();
    assert!(!records.is_empty());
    assert!(records.iter().all(|r| r["disposition"] == "absorbed"), "{absorbed}");
    assert!(records.iter().all(|r| r["reason"].is_string()), "absorbed says why: {absorbed}");
    let past = get(&app, &format!("/api/v1/harness/archive?offset={total}")).await.json();
    assert_eq!(past["records"].as_array().unwrap().len(), 0);
    get(&app, "/api/v1/harness/archive?disposition=lost").await.error(400, "bad_request");
    get(&app, "/api/v1/harness/archive?limit=0").await.error(400, "bad_request");
    get(&app, "/api/v1/harness/archive?limit=501").await.error(400, "bad_request");

    // Acknowledge with a note; again changes nothing (idempotent); unknown keys survive.
    let uri = "/api/v1/harness/issues/I-0002/status";
    let ack =
        json(&app, "POST", uri, &json!({"status": "acknowledged", "note": "seen it", "by": "ana"}))
            .await;
    assert_eq!(ack.status, StatusCode::OK, "{}", ack.text);
    let v = ack.json();
    assert_eq!((v["from"].as_str(), v["changed"].as_bool()), (Some("open"), Some(true)));
    assert_eq!(v["issue"]["status"], "acknowledged");
    assert_eq!(v["issue"]["notes"][0]["by"], "ana");
    assert_eq!(v["issue"]["notes"][0]["text"], "Status open → acknowledged by ana: seen it");
    let again = json(&app, "POST", uri, &json!({"status": "acknowledged"})).await.json();
    assert_eq!(again["changed"], false);
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(state_dir.join("issues.json")).unwrap())
            .unwrap();
    assert_eq!(file["issues"][0]["notes"].as_array().unwrap().len(), 1, "no second note");
    assert_eq!(file["issues"][0]["x-ui"], "kept");

    // Close, then reopen; a closed issue cannot be acknowledged; fixing is not a person's.
    let closed = json(&app, "POST", uri, &json!({"status": "closed"})).await.json();
    assert_eq!(closed["issue"]["status"], "closed");
    assert_eq!(closed["issue"]["notes"][1]["by"], "human");
    let m =
        json(&app, "POST", uri, &json!({"status": "acknowledged"})).await.error(400, "bad_request");
    assert!(m.contains("closed"), "{m}");
    json(&app, "POST", uri, &json!({"status": "fixing"})).await.error(400, "bad_request");
    json(&app, "POST", uri, &json!({"status": "resolved"})).await.error(400, "bad_request");
    json(&app, "POST", uri, &json!({"status": "open", "extra": 1}))
        .await
        .error(400, "invalid_request");
    let reopened = json(&app, "POST", uri, &json!({"status": "open"})).await.json();
    assert_eq!(reopened["issue"]["status"], "open");

    // Bad ids, hostile notes, a pass running, a broken file.
    json(&app, "POST", "/api/v1/harness/issues/I-9999/status", &json!({"status": "closed"}))
        .await
        .error(404, "not_found");
    let long = "x".repeat(2001);
    json(&app, "POST", uri, &json!({"status": "closed", "note": long}))
        .await
        .error(400, "bad_request");
    json(&app, "POST", uri, &json!({"status": "closed", "by": "a\nb"}))
        .await
        .error(400, "bad_request");
    let held = curator_store::acquire_lock(
        &state_dir.join("memory/.curator.lock"),
        &curator_store::LockOptions::default(),
    )
    .unwrap();
    let m = json(&app, "POST", uri, &json!({"status": "closed"})).await.error(409, "curator_busy");
    assert!(m.contains(&format!("pid {}", std::process::id())), "{m}");
    drop(held);
    std::fs::write(state_dir.join("issues.json"), "{ not json").unwrap();
    json(&app, "POST", uri, &json!({"status": "closed"})).await.error(409, "refused_file");
    assert_eq!(std::fs::read_to_string(state_dir.join("issues.json")).unwrap(), "{ not json");
}

#[tokio::test]
async fn review_routes_without_a_harness_say_so() {
    let f = Fixture::new();
    let app = f.app();
    get(&app, "/api/v1/harness/raw").await.error(404, "harness_not_configured");
    get(&app, "/api/v1/harness/archive").await.error(404, "harness_not_configured");
    json(&app, "POST", "/api/v1/harness/issues/I-0001/status", &json!({"status": "closed"}))
        .await
        .error(404, "harness_not_configured");
}

#[tokio::test]
async fn review_routes_refuse_bad_page_numbers_and_cross_site_posts() {
    let f = Fixture::new();
    let state_dir = f.dir.path().join("project/.harness");
    let h = Harness::open(&state_dir, f.dir.path().join("identity"), HarnessOptions::default());
    std::fs::create_dir_all(&state_dir).unwrap();
    std::fs::write(state_dir.join("issues.json"), ISSUES).unwrap();
    let app = curator_server::app(
        f.state(ServerOptions { harness: Some(h), ..ServerOptions::default() }),
    );
    for bad in ["offset=-1", "offset=abc", "offset=99999999999999999999999", "limit=x", "limit=-5"]
    {
        get(&app, &format!("/api/v1/harness/archive?{bad}")).await.error(400, "bad_request");
    }
    get(&app, "/api/v1/harness/raw?bytes=-1").await.error(400, "bad_request");
    get(&app, "/api/v1/harness/raw?bytes=lots").await.error(400, "bad_request");
    json(&app, "POST", "/api/v1/harness/issues/I-0002/status", &json!({"status": 3}))
        .await
        .error(400, "invalid_request");
    raw(
        &app,
        "POST",
        "/api/v1/harness/issues/I-0002/status",
        Some("application/json"),
        "{\"status\":",
    )
    .await
    .error(400, "invalid_json");

    // A browser page of another site (Origin not the Host served) cannot change an issue.
    let request = axum::http::Request::post("/api/v1/harness/issues/I-0002/status")
        .header(axum::http::header::CONTENT_TYPE, "application/json")
        .header(axum::http::header::HOST, "127.0.0.1:7878")
        .header(axum::http::header::ORIGIN, "http://attacker.example")
        .body(axum::body::Body::from(r#"{"status":"closed"}"#))
        .unwrap();
    assert_eq!(send(&app, request).await.status, StatusCode::FORBIDDEN);
    assert_eq!(std::fs::read_to_string(state_dir.join("issues.json")).unwrap(), ISSUES);
}
