//! The harness page through `oneshot` (issue 15 item 5): the raw.md tail, the archive a page at a
//! time and filtered, and a person's issue actions as forms that redirect back, with the input
//! the page's own links and buttons never send refused by a page that says why and changes
//! nothing.

mod common;

use std::path::{Path, PathBuf};

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use common::*;
use curator_harness::{Harness, HarnessOptions, Timestamp};
use curator_server::ServerOptions;

const ISSUES: &str = r#"{"issues":[
 {"id":"I-0002","title":"Coupon total wrong","severity":"major","source":"validator","foundAt":"2026-04-01T00:00:00Z","status":"open","attempts":0,"notes":[]},
 {"id":"I-0001","title":"Login flickers","severity":"minor","source":"validator","foundAt":"2026-04-01T00:00:00Z","status":"closed","attempts":1,"notes":[]}
],"nextId":3}
"#;

/// A harness with 60 progress entries, one lesson and one hostile line, and two issues.
fn harness_app(f: &Fixture) -> (Router, PathBuf) {
    let state_dir = f.dir.path().join("project/.harness");
    let h = Harness::open(&state_dir, f.dir.path().join("identity"), HarnessOptions::default());
    for i in 0..60 {
        h.append(
            "worker",
            Some("F-001"),
            false,
            &format!("Implemented endpoint {i}"),
            Timestamp::now(),
        )
        .unwrap();
    }
    let lesson = "the webhook reads STRIPE_SECRET at import time";
    h.append("debugger", Some("F-031"), false, lesson, Timestamp::now()).unwrap();
    h.append("worker", Some("F-032"), false, "<script>alert(1)</script>", Timestamp::now())
        .unwrap();
    std::fs::write(state_dir.join("issues.json"), ISSUES).unwrap();
    let app = curator_server::app(
        f.state(ServerOptions { harness: Some(h), ..ServerOptions::default() }),
    );
    (app, state_dir)
}

async fn form(app: &Router, uri: &str, body: &str) -> Reply {
    let request = Request::post(uri)
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(Body::from(body.to_owned()))
        .unwrap();
    send(app, request).await
}

fn location(reply: &Reply) -> String {
    assert_eq!(reply.status, StatusCode::SEE_OTHER, "{}", reply.text);
    reply.headers[header::LOCATION].to_str().unwrap().to_owned()
}

fn issues(state_dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(state_dir.join("issues.json")).unwrap()).unwrap()
}

/// The disposition cells of the archive table, in order.
fn dispositions(html: &str) -> Vec<&str> {
    html.split("<td class=\"disposition\">").skip(1).map(|s| s.split('<').next().unwrap()).collect()
}

#[tokio::test]
async fn the_page_shows_the_tail_and_pages_and_filters_the_archive() {
    let f = Fixture::new();
    let (app, _) = harness_app(&f);
    let page = get(&app, "/harness").await;
    assert_eq!(page.status, StatusCode::OK);
    let html = &page.text;
    assert!(html.contains("id=\"raw-tail\"") && html.contains("STRIPE_SECRET"), "{html}");
    assert!(html.contains("&#60;script&#62;") || html.contains("&lt;script&gt;"), "escaped");
    assert!(!html.contains("<script>alert"), "hostile text is never markup");
    assert!(html.contains("nothing has left raw.md"), "no archive before a pass");
    assert!(html.contains("data-issue=\"I-0002\"") && html.contains("value=\"acknowledged\""));

    assert_eq!(location(&form(&app, "/harness/curate", "").await), "/harness?done=curated");
    let first = get(&app, "/harness?done=curated").await.text;
    assert!(first.contains("Curator pass finished"), "flash");
    let total: usize = first
        .split(" of ")
        .nth(1)
        .and_then(|s| s.split(',').next())
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("a range line: {first}"));
    assert!(total >= 50, "{total}");
    assert!(first.contains(&format!("Records 1–25 of {total}, newest first.")), "{first}");
    assert_eq!(dispositions(&first).len(), 25);
    assert!(
        first.contains("id=\"archive-older\" ")
            || first.contains("href=\"/harness?offset=25#archive\"")
    );
    assert!(!first.contains("id=\"archive-newer\""), "no newer page on the first");
    let second = get(&app, "/harness?offset=25").await.text;
    assert!(second.contains(&format!("Records 26–50 of {total}")), "{second}");
    assert!(second.contains("href=\"/harness?offset=0#archive\""), "newer leads back");

    let absorbed = get(&app, "/harness?disposition=absorbed").await.text;
    let cells = dispositions(&absorbed);
    assert!(!cells.is_empty() && cells.iter().all(|d| *d == "absorbed"), "{cells:?}");
    assert!(absorbed.contains("<option value=\"absorbed\" selected>"), "the filter stays chosen");
    let promoted = get(&app, "/harness?disposition=promoted").await.text;
    assert!(dispositions(&promoted).iter().all(|d| *d == "promoted"));

    // Past the end: says so and links to the last page that has records.
    let past = get(&app, "/harness?offset=9999").await;
    assert_eq!(past.status, StatusCode::OK);
    assert!(past.text.contains(&format!("No records past {total}")), "{}", past.text);
    let last = (total - 1) / 25 * 25;
    assert!(
        past.text.contains(&format!("href=\"/harness?offset={last}#archive\"")),
        "{}",
        past.text
    );

    // Page numbers and filters the page never links to are refused with a page saying why.
    for bad in ["offset=abc", "offset=-1", "offset=99999999999999999999999", "disposition=lost"] {
        let reply = get(&app, &format!("/harness?{bad}")).await;
        assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{bad}: {}", reply.text);
        assert!(reply.text.contains("Refused"), "{bad}: {}", reply.text);
        assert!(reply.headers[header::CONTENT_TYPE].to_str().unwrap().starts_with("text/html"));
    }
}

#[tokio::test]
async fn issue_buttons_acknowledge_close_and_reopen_once_each() {
    let f = Fixture::new();
    let (app, state_dir) = harness_app(&f);
    let uri = "/harness/issues/I-0002/status";
    let to = location(&form(&app, uri, "status=acknowledged&note=seen+it").await);
    assert_eq!(to, "/harness?done=issue-acknowledged");
    assert_eq!(issues(&state_dir)["issues"][0]["status"], "acknowledged");
    let html = get(&app, &to).await.text;
    assert!(html.contains("Issue acknowledged"), "flash");
    assert!(html.contains("Status open → acknowledged by human: seen it"), "last note: {html}");

    // A second press (a double click, a reload of the post) changes nothing.
    location(&form(&app, uri, "status=acknowledged&note=seen+it").await);
    assert_eq!(issues(&state_dir)["issues"][0]["notes"].as_array().unwrap().len(), 1);

    assert_eq!(location(&form(&app, uri, "status=closed").await), "/harness?done=issue-closed");
    assert_eq!(issues(&state_dir)["issues"][0]["status"], "closed");
    let html = get(&app, "/harness").await.text;
    let row = html.split("data-issue=\"I-0002\"").nth(1).unwrap().split("</tr>").next().unwrap();
    assert!(row.contains("value=\"open\"") && !row.contains("value=\"closed\""), "{row}");
    assert_eq!(location(&form(&app, uri, "status=open").await), "/harness?done=issue-reopened");
    assert_eq!(issues(&state_dir)["issues"][0]["status"], "open");
}

#[tokio::test]
async fn issue_buttons_refuse_bad_input_a_running_pass_and_other_sites() {
    let f = Fixture::new();
    let (app, state_dir) = harness_app(&f);
    let before = std::fs::read_to_string(state_dir.join("issues.json")).unwrap();
    let unchanged =
        || assert_eq!(std::fs::read_to_string(state_dir.join("issues.json")).unwrap(), before);
    let uri = "/harness/issues/I-0002/status";

    let unknown = form(&app, "/harness/issues/I-9999/status", "status=closed").await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND, "{}", unknown.text);
    assert!(unknown.text.contains("I-9999"), "{}", unknown.text);
    let traversal = form(&app, "/harness/issues/..%2F..%2Fetc/status", "status=closed").await;
    assert!(traversal.status.is_client_error(), "{}", traversal.text);
    for (body, says) in
        [("", "invalid form"), ("status=fixing", "fixing"), ("status=resolved", "resolved")]
    {
        let reply = form(&app, uri, body).await;
        assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{body}: {}", reply.text);
        assert!(
            reply.text.contains("Refused") && reply.text.contains(says),
            "{body}: {}",
            reply.text
        );
    }
    let long = format!("status=closed&note={}", "x".repeat(2001));
    assert_eq!(form(&app, uri, &long).await.status, StatusCode::BAD_REQUEST);
    unchanged();

    // A pass holds the lock: refused at once, naming the holder; nothing written.
    let held = curator_store::acquire_lock(
        &state_dir.join("memory/.curator.lock"),
        &curator_store::LockOptions::default(),
    )
    .unwrap();
    let busy = form(&app, uri, "status=closed").await;
    assert_eq!(busy.status, StatusCode::CONFLICT, "{}", busy.text);
    assert!(busy.text.contains(&format!("pid {}", std::process::id())), "{}", busy.text);
    drop(held);
    unchanged();

    // Another web page open in the same browser cannot press the button for the user.
    for (name, value) in [("origin", "http://attacker.example"), ("sec-fetch-site", "cross-site")] {
        let request = Request::post(uri)
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(header::HOST, "127.0.0.1:7878")
            .header(name, value)
            .body(Body::from("status=closed"))
            .unwrap();
        assert_eq!(send(&app, request).await.status, StatusCode::FORBIDDEN, "{name}");
    }
    unchanged();
    let same_origin = Request::post(uri)
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(header::HOST, "127.0.0.1:7878")
        .header(header::ORIGIN, "http://127.0.0.1:7878")
        .body(Body::from("status=closed"))
        .unwrap();
    assert_eq!(send(&app, same_origin).await.status, StatusCode::SEE_OTHER, "the page's own post");
}
