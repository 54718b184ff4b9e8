//! The web UI through `oneshot`: pages render the files as they are, escape what they show, and
//! the forms change memory through the same code as the API, then redirect back.

mod common;

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use common::*;
use serde_json::json;

async fn form(app: &axum::Router, uri: &str, body: &str) -> Reply {
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

#[tokio::test]
async fn the_overview_groups_by_tier_and_scope_with_counters() {
    let f = Fixture::new();
    let app = f.app();
    let page = get(&app, "/").await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.headers[header::CONTENT_TYPE].to_str().unwrap().starts_with("text/html"));
    let html = &page.text;
    assert!(html.contains("<b id=\"count-total\">19</b>"), "{html}");
    for heading in ["<h2>Products</h2>", "<h2>Suites</h2>", "<h2>Tests</h2>"] {
        assert!(html.contains(heading), "{heading}");
    }
    assert!(html.contains("data-scope=\"acme-shop\""));
    assert!(html.contains(&format!("href=\"/observations/{CART_BADGE}\"")));
    assert!(html.contains("optimum=\"1\" value=\"0.8\">"), "trust meter of 0.8");
    let filtered = get(&app, "/?q=badge&tier=products").await.text;
    assert!(filtered.contains("<b id=\"count-total\">1</b>"), "{filtered}");
}

#[tokio::test]
async fn the_overview_shows_one_page_at_a_time_and_reads_only_its_files() {
    let f = Fixture::new();
    f.bulk("zz-bulk", 230); // 19 example observations, then 230, then one broken file
    let app = f.app();
    let first = get(&app, "/").await.text;
    assert!(first.contains("<b id=\"count-total\">250</b>"), "every file is counted");
    assert!(first.contains("1–100 of 250"), "{first}");
    assert_eq!(first.matches("class=\"obs-link\"").count(), 100);
    assert!(
        first.contains("<b>0</b>files refused on this page"),
        "the broken file is not on this page: {first}"
    );
    assert!(first.contains("href=\"/?page=2\"") && first.contains("href=\"/?page=3\""));
    assert!(first.len() < 200_000, "one page, not the root: {} bytes", first.len());
    let last = get(&app, "/?page=3").await.text;
    assert!(last.contains("201–250 of 250"), "{last}");
    assert_eq!(last.matches("class=\"obs-link\"").count(), 49);
    assert!(last.contains("<a href=\"/lint\">1</a></b>files refused on this page"), "{last}");
    assert!(last.contains("231 observation(s), 43 on this page"), "the scope's full count: {last}");
    let beyond = get(&app, "/?page=9").await.text;
    assert!(beyond.contains("No observation matches"), "{beyond}");
    // A text filter searches every file of the tier, and pages keep it.
    let found = get(&app, "/?q=bulk+fact&tier=products").await.text;
    assert!(found.contains("<b id=\"count-total\">230</b>"), "{found}");
    assert!(found.contains("href=\"/?page=2&#38;q=bulk+fact&#38;tier=products\""), "{found}");
}

#[tokio::test]
async fn the_review_list_pages_every_match_and_its_links_keep_the_sort_and_filters() {
    let f = Fixture::new();
    f.bulk("zz-bulk", 230);
    let app = f.app();
    let first = get(&app, "/observations?sort=recency&q=bulk+fact").await.text;
    assert!(first.contains("<b>230</b> of 249 stored"), "{first}");
    assert!(first.contains("1–100 of 230"), "{first}");
    assert_eq!(first.matches("class=\"obs-link\"").count(), 100);
    let next = "href=\"/observations?page=2&#38;sort=recency&#38;q=bulk+fact\"";
    assert!(first.contains(next), "the pager keeps the sort and the text: {first}");
    let last = get(&app, "/observations?sort=recency&q=bulk+fact&page=3").await.text;
    assert!(last.contains("201–230 of 230"), "{last}");
    assert_eq!(last.matches("class=\"obs-link\"").count(), 30);
    // Every match is on exactly one page.
    let mut seen = std::collections::BTreeSet::new();
    for page in 1..=3 {
        let html = get(&app, &format!("/observations?sort=recency&q=bulk+fact&page={page}")).await;
        for row in html.text.split("<tr data-id=\"").skip(1) {
            assert!(seen.insert(row[..row.find('"').unwrap()].to_owned()), "a row shown twice");
        }
    }
    assert_eq!(seen.len(), 230);
    // A sort or filter link starts again at the first page; a page past the end says so.
    assert!(last.contains("href=\"/observations?sort=trust&#38;q=bulk+fact\""), "{last}");
    let beyond = get(&app, "/observations?q=bulk+fact&page=9").await.text;
    assert!(beyond.contains("No observation matches on this page"), "{beyond}");
}

#[tokio::test]
async fn user_text_is_escaped_everywhere_it_is_shown() {
    let f = Fixture::new();
    let app = f.app();
    let created = json(
        &app,
        "POST",
        "/api/v1/observations",
        &json!({
            "tier": "tests", "scope": TEST_ID, "source_test": TEST_ID,
            "title": "Price <b>bold</b> & <img src=x onerror=alert(1)>",
            "content": "Body with </pre><script>alert(2)</script>",
        }),
    )
    .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.text);
    let id = created.json()["id"].as_str().unwrap().to_owned();
    for page in [get(&app, "/").await.text, get(&app, &format!("/observations/{id}")).await.text] {
        assert!(!page.contains("<img src=x"), "raw HTML leaked");
        assert!(!page.contains("<script>alert"), "raw script leaked");
        assert!(
            page.contains("&lt;img src=x onerror=alert(1)&gt;") || page.contains("&#60;img"),
            "escaped title shown"
        );
    }
}

#[tokio::test]
async fn an_observation_page_shows_body_frontmatter_file_and_journal() {
    let f = Fixture::new();
    let app = f.app();
    let page = get(&app, &format!("/observations/{CART_BADGE}")).await;
    assert_eq!(page.status, StatusCode::OK);
    let html = &page.text;
    assert!(html.contains("Cart badge updates about one second after Add to cart"));
    assert!(html.contains("keeps the old number for"), "body");
    assert!(html.contains("<th>confirmed_count</th><td>6</td>"), "frontmatter");
    assert!(html.contains(&format!("products/acme-shop/{CART_BADGE}.md")), "file path");
    assert!(html.contains("No change recorded yet"), "empty timeline says so");
    let missing =
        get(&app, "/observations/obs_apple-apple-apple-apple-apple-apple-apple-apple-apple-apple")
            .await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    assert!(missing.text.contains("not found"));
    assert_eq!(get(&app, "/observations/..%2Fetc").await.status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn buttons_confirm_deprecate_edit_and_delete_then_redirect_back() {
    let f = Fixture::new();
    let app = f.app();
    let page = format!("/observations/{CART_BADGE}");

    let to = location(&form(&app, &format!("{page}/confirm"), "reasoning=seen+again").await);
    assert!(to.starts_with(&format!("{page}?done=confirmed&run=r_")), "{to}");
    let html = get(&app, &to).await.text;
    assert!(html.contains("<b id=\"obs-trust\">0.85</b>"), "{html}");
    assert!(html.contains("Confirmed. Journaled as run r_"), "flash");
    assert!(html.contains("trust 0.8 → 0.85") && html.contains("seen again"), "timeline entry");

    location(&form(&app, &format!("{page}/deprecate"), "reasoning=").await);
    let html = get(&app, &page).await.text;
    assert!(html.contains("<b id=\"obs-trust\">0.75</b>"), "{html}");
    assert!(html.contains("deprecated by a person"), "default reason journaled");

    location(
        &form(&app, &format!("{page}/edit"), "title=Badge+lags&content=&trust=0.6&reasoning=tidy")
            .await,
    );
    let html = get(&app, &page).await.text;
    assert!(html.contains("<h1 id=\"obs-title\">Badge lags</h1>"));
    assert!(html.contains("keeps the old number"), "empty content field leaves the body");
    let refused = form(&app, &format!("{page}/edit"), "trust=lots").await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST);
    assert!(refused.text.contains("trust must be a number"), "{}", refused.text);

    let to = location(&form(&app, &format!("{page}/delete"), "reasoning=obsolete").await);
    assert!(to.contains("done=deleted"), "{to}");
    assert!(!f.product_file(CART_BADGE).exists());
    assert_eq!(get(&app, &page).await.status, StatusCode::NOT_FOUND);
}

/// The value of the hidden input `name` in a page.
fn hidden(html: &str, name: &str) -> String {
    let at = html.find(&format!("name=\"{name}\" value=\"")).unwrap_or_else(|| panic!("{name}"));
    let rest = &html[at + name.len() + 15..];
    rest[..rest.find('"').unwrap()].to_owned()
}

/// A page loaded before another client confirmed the observation: saving it is refused with
/// the current values shown and the typed text kept, so old values are never written back.
#[tokio::test]
async fn a_stale_edit_form_is_refused_and_keeps_what_was_typed() {
    let f = Fixture::new();
    let app = f.app();
    let page = format!("/observations/{CART_BADGE}");
    let html = get(&app, &page).await.text;
    let (key, version) = (hidden(&html, "form_key"), hidden(&html, "version"));
    post(&app, &format!("/api/v1/observations/{CART_BADGE}/confirm")).await;
    let body =
        format!("title=Badge+lags+behind&content=&trust=0.8&form_key={key}&version={version}");
    let refused = form(&app, &format!("{page}/edit"), &body).await;
    assert_eq!(refused.status, StatusCode::CONFLICT, "{}", refused.text);
    assert!(refused.text.contains("id=\"edit-error\""), "{}", refused.text);
    assert!(refused.text.contains("value=\"Badge lags behind\""), "the typed title is kept");
    assert!(refused.text.contains("<b id=\"obs-trust\">0.85</b>"), "the current trust is shown");
    let badge = get(&app, &format!("/api/v1/observations/{CART_BADGE}")).await.json();
    assert_eq!((&badge["trust"], &badge["confirmed_count"]), (&json!(0.85), &json!(7)));
    // Saved from the fresh page, it applies.
    let html = get(&app, &page).await.text;
    let body = format!(
        "title=Badge+lags+behind&trust=0.85&form_key={}&version={}",
        hidden(&html, "form_key"),
        hidden(&html, "version")
    );
    assert!(location(&form(&app, &format!("{page}/edit"), &body).await).contains("done=edited"));
}

/// Saving the edit form without changing a field writes nothing and journals nothing: the
/// history a person reviews holds changes, not page saves.
#[tokio::test]
async fn an_edit_that_changes_nothing_journals_nothing() {
    let f = Fixture::new();
    let app = f.app();
    let page = format!("/observations/{CART_BADGE}");
    let history = format!("/api/v1/observations/{CART_BADGE}/history");
    let entries =
        || async { get(&app, &history).await.json()["entries"].as_array().unwrap().len() };
    let before = (entries().await, std::fs::read(f.product_file(CART_BADGE)).unwrap());
    let current = get(&app, &format!("/api/v1/observations/{CART_BADGE}")).await.json();
    let body = format!(
        "title={}&trust={}&reasoning=no+change",
        current["title"].as_str().unwrap().replace(' ', "+"),
        current["trust"]
    );
    let to = location(&form(&app, &format!("{page}/edit"), &body).await);
    assert!(to.ends_with("done=unchanged"), "no run to undo: {to}");
    assert!(get(&app, &to).await.text.contains("Nothing to save"));
    assert_eq!((entries().await, std::fs::read(f.product_file(CART_BADGE)).unwrap()), before);
    // Over the API too: answered, flagged, not journaled.
    let uri = format!("/api/v1/observations/{CART_BADGE}");
    let api = json(&app, "PATCH", &uri, &json!({"trust": current["trust"]})).await;
    assert_eq!(api.json()["unchanged"], true, "{}", api.text);
    assert_eq!(entries().await, before.0);
}

/// A form sent twice (a double click, a resubmit while the lock was busy) is one change: the
/// second is answered with the first's, as a keyed API write is.
#[tokio::test]
async fn a_form_sent_twice_changes_memory_once() {
    let f = Fixture::new();
    let app = f.app();
    let page = format!("/observations/{CART_BADGE}");
    let count = || async {
        get(&app, &format!("/api/v1/observations/{CART_BADGE}")).await.json()["confirmed_count"]
            .as_u64()
            .unwrap()
    };
    let before = count().await;
    let key = hidden(&get(&app, &page).await.text, "form_key");
    let first = location(&form(&app, &format!("{page}/confirm"), &format!("form_key={key}")).await);
    let again = location(&form(&app, &format!("{page}/confirm"), &format!("form_key={key}")).await);
    assert_eq!(first, again, "the same run answers both");
    assert_eq!(count().await, before + 1);
    let key = hidden(&get(&app, "/observations/new").await.text, "form_key");
    let create = format!(
        "tier=products&scope={PRODUCT}&title=Twice&content=Sent+twice.&source_test={TEST_ID}&form_key={key}"
    );
    let first = location(&form(&app, "/observations/new", &create).await);
    let again = location(&form(&app, "/observations/new", &create).await);
    assert_eq!(first, again);
    let shop = get(&app, &format!("/api/v1/observations?scope={PRODUCT}&q=Twice")).await.json();
    assert_eq!(shop["total"], 1, "{shop}");
}

/// A malformed page parameter is the UI's HTML error page with a way back, not a plain-text
/// rejection.
#[tokio::test]
async fn a_malformed_query_parameter_is_an_html_error_page() {
    let f = Fixture::new();
    let app = f.app();
    for path in ["/?page=abc", "/review?page=-1"] {
        let page = get(&app, path).await;
        assert_eq!(page.status, StatusCode::BAD_REQUEST, "{path}: {}", page.text);
        assert!(page.headers[header::CONTENT_TYPE].to_str().unwrap().starts_with("text/html"));
        assert!(page.text.contains("invalid query"), "{path}: {}", page.text);
    }
}

#[tokio::test]
async fn a_cross_site_form_post_is_refused() {
    let f = Fixture::new();
    let app = f.app();
    let request = Request::post(format!("/observations/{CART_BADGE}/delete"))
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(header::HOST, "127.0.0.1:7878")
        .header(header::ORIGIN, "http://attacker.example")
        .body(Body::from("reasoning=x"))
        .unwrap();
    assert_eq!(send(&app, request).await.status, StatusCode::FORBIDDEN);
    assert!(f.product_file(CART_BADGE).exists());
}

#[tokio::test]
async fn the_query_playground_shows_the_exact_memory_context() {
    let f = Fixture::new();
    let app = f.app();
    let empty = get(&app, "/query").await;
    assert_eq!(empty.status, StatusCode::OK);
    assert!(empty.text.contains("<option value=\"acme-shop\">"), "products offered");
    let uri = format!(
        "/query?product={PRODUCT}&test={TEST_ID}&text=click+Add+to+cart+and+check+the+cart+badge"
    );
    let html = get(&app, &uri).await.text;
    let opts = curator_engine::QueryOptions::new(
        PRODUCT,
        TEST_ID,
        "click Add to cart and check the cart badge",
    )
    .unwrap();
    let block = curator_engine::query(&f.root, &opts).unwrap().formatted.unwrap();
    let escaped = block.replace('&', "&#38;").replace('<', "&#60;").replace('>', "&#62;");
    let escaped_named = block.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;");
    assert!(
        html.contains(&escaped) || html.contains(&escaped_named),
        "the block, escaped, verbatim: {html}"
    );
    // A product name that cannot be a folder is skipped, and the page says so.
    let bad = get(&app, &format!("/query?product=..&test={TEST_ID}&text=x")).await.text;
    assert!(bad.contains("id=\"query-warnings\""), "{bad}");
    assert!(bad.contains("invalid product name skipped"), "{bad}");
    let bad = get(&app, &format!("/query?product={PRODUCT}&test={TEST_ID}&text=x&min_trust=7"))
        .await
        .text;
    assert!(bad.contains("id=\"query-error\""), "{bad}");
}

#[tokio::test]
async fn runs_lint_and_harness_pages() {
    let f = Fixture::new();
    let app = f.app();
    assert!(get(&app, "/runs").await.text.contains("No run has changed memory yet"));
    let to = location(&form(&app, &format!("/observations/{CART_BADGE}/confirm"), "").await);
    let run = to.split("run=").nth(1).unwrap().to_owned();
    let runs = get(&app, "/runs").await.text;
    assert!(runs.contains(&format!("href=\"/runs/{run}\"")), "{runs}");
    let detail = get(&app, &format!("/runs/{run}")).await.text;
    assert!(detail.contains("id=\"memory-log\"") && detail.contains("0.8 → 0.85"), "{detail}");
    let undone = location(&form(&app, &format!("/runs/{run}/undo"), "").await);
    assert!(undone.contains("done=undone"), "{undone}");
    // A second press of the button (or a resubmitted form) changes nothing and says so.
    let again = location(&form(&app, &format!("/runs/{run}/undo"), "").await);
    assert!(again.contains("done=already-undone"), "{again}");
    let badge = get(&app, &format!("/api/v1/observations/{CART_BADGE}")).await.json();
    assert_eq!(badge["trust"], 0.8);
    assert_eq!(get(&app, "/runs/r_no-such-run").await.status, StatusCode::NOT_FOUND);

    std::fs::write(
        f.root.join("tests").join(TEST_ID).join("obs_bad-bad-bad-bad-bad-bad.md"),
        "no frontmatter",
    )
    .unwrap();
    let lint = get(&app, "/lint").await.text;
    assert!(lint.contains("<b id=\"problem-count\">1</b>"), "{lint}");
    assert!(lint.contains("obs_bad-bad-bad-bad-bad-bad.md"));

    let harness = get(&app, "/harness").await.text;
    assert!(harness.contains("No harness state directory is configured"));
}

#[tokio::test]
async fn assets_and_unknown_pages() {
    let f = Fixture::new();
    let app = f.app();
    let css = get(&app, "/static/app.css").await;
    assert_eq!(css.status, StatusCode::OK);
    assert_eq!(css.headers[header::CONTENT_TYPE], "text/css; charset=utf-8");
    let js = get(&app, "/static/app.js").await;
    assert!(js.text.contains("/api/v1/changes"), "live refresh polls the change fingerprint");
    assert_eq!(get(&app, "/static/../Cargo.toml").await.status, StatusCode::NOT_FOUND);
    let missing = get(&app, "/nowhere").await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    assert!(missing.text.contains("<html"), "an HTML 404 outside the API");
}

#[tokio::test]
async fn the_review_queue_page_approves_and_rejects_with_forms() {
    let f = Fixture::new();
    let app = f.app();
    let propose = |title: &str| {
        serde_json::json!({"tier": "product", "scope": PRODUCT, "title": title,
                           "content": "An <agent>'s note.", "source_test": TEST_ID})
    };
    let a = json(&app, "POST", "/api/v1/pending", &propose("Reviews load <late>")).await.json();
    let b = json(&app, "POST", "/api/v1/pending", &propose("Coupon box")).await.json();
    let (a, b) = (a["id"].as_str().unwrap().to_owned(), b["id"].as_str().unwrap().to_owned());
    let page = get(&app, "/review").await.text;
    assert!(page.contains(&format!("action=\"/review/{a}/approve\"")), "{page}");
    assert!(!page.contains("<late>") && !page.contains("<agent>"), "raw text leaked: {page}");
    assert!(page.contains("Reviews load &lt;late&gt;") || page.contains("&#60;late"), "{page}");
    assert!(page.contains("probation passed / failed"), "the evidence table");
    assert!(!page.contains("<script>") && !page.contains("onclick"), "no inline script");
    let to = location(&form(&app, &format!("/review/{a}/approve"), "reasoning=looks+right").await);
    assert!(to.starts_with("/review?done=approved&run=r_"), "{to}");
    assert!(f.product_file(&a).is_file());
    let to = location(&form(&app, &format!("/review/{b}/reject"), "reasoning=").await);
    assert!(to.starts_with("/review?done=rejected&run=r_"), "{to}");
    let page = get(&app, &to).await.text;
    assert!(
        page.contains("Rejected from the review queue") && page.contains("Nothing waits"),
        "{page}"
    );
    // The approved observation's page shows its (empty) evidence table.
    let obs = get(&app, &format!("/observations/{a}")).await.text;
    assert!(obs.contains("Outcome evidence") && obs.contains("runs injected"), "{obs}");
    let missing = form(&app, &format!("/review/{b}/approve"), "").await;
    assert_eq!(missing.status.as_u16(), 404, "{}", missing.text);
}
