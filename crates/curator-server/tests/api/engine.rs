//! The engine over the API: query, run sessions curated into MemoryLogs and undone, breaker,
//! lint, journal, change fingerprint and harness memory.

use axum::http::StatusCode;
use curator_server::ServerOptions;
use serde_json::json;

use crate::common::*;

#[tokio::test]
async fn query_gives_the_same_answer_as_the_engine() {
    let f = Fixture::new();
    let app = f.app();
    let request = json!({"product": PRODUCT, "test": TEST_ID, "text": "click Add to cart and check the cart badge"});
    let reply = json(&app, "POST", "/api/v1/query", &request).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    let body = reply.json();
    let ids: Vec<&str> = body["observations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["id"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&CART_BADGE), "{ids:?}");
    let formatted = body["formatted"].as_str().unwrap();
    assert!(formatted.starts_with("<memory-context>"), "{formatted}");

    let opts = curator_engine::QueryOptions::new(
        PRODUCT,
        TEST_ID,
        "click Add to cart and check the cart badge",
    )
    .unwrap();
    let direct = curator_engine::query(&f.root, &opts).unwrap();
    // Byte for byte (serde_json's float parsing is not exact, so compare the texts).
    assert_eq!(
        reply.text,
        serde_json::to_string(&direct).unwrap(),
        "same result as `curator query --json`"
    );

    let nothing = json(
        &app,
        "POST",
        "/api/v1/query",
        &json!({"product": PRODUCT, "test": TEST_ID, "text": "zebra quantum"}),
    )
    .await
    .json();
    assert_eq!(nothing["observations"], json!([]));
    assert!(nothing["formatted"].is_null());

    // A name that cannot be a folder is skipped with a warning, the test folder still served
    // (agent-qa skips the folder; issue 13 item 5).
    let skipped = json(
        &app,
        "POST",
        "/api/v1/query",
        &json!({"product": "../products", "test": TEST_ID, "step_text": "x", "min_trust": 0}),
    )
    .await;
    assert_eq!(skipped.status, StatusCode::OK, "{}", skipped.text);
    let skipped = skipped.json();
    assert!(skipped["warnings"][0].as_str().unwrap().contains("invalid product name"), "{skipped}");
    json(
        &app,
        "POST",
        "/api/v1/query",
        &json!({"product": PRODUCT, "test": TEST_ID, "text": "x", "mode": "fuzzy"}),
    )
    .await
    .error(400, "bad_request");
    json(
        &app,
        "POST",
        "/api/v1/query",
        &json!({"product": PRODUCT, "test": TEST_ID, "text": "x", "min_trust": 3}),
    )
    .await
    .error(400, "bad_request");
    json(&app, "POST", "/api/v1/query", &json!({"product": PRODUCT}))
        .await
        .error(400, "invalid_request");
}

#[tokio::test]
async fn a_run_session_records_injections_and_its_record_is_curated_and_undone() {
    let f = Fixture::new();
    let app = f.app();
    let started = json(&app, "POST", "/api/v1/runs", &json!({"run_id": "r_api-test-1"})).await;
    assert_eq!(started.status, StatusCode::CREATED, "{}", started.text);
    assert_eq!(started.json()["run_id"], "r_api-test-1");
    let generated = post(&app, "/api/v1/runs").await.json();
    assert!(generated["run_id"].as_str().unwrap().starts_with("r_"), "{generated}");

    let step = json(
        &app,
        "POST",
        "/api/v1/runs/r_api-test-1/steps/0/query",
        &json!({"product": PRODUCT, "test": TEST_ID, "text": "click Add to cart and check the cart badge"}),
    )
    .await;
    assert_eq!(step.status, StatusCode::OK, "{}", step.text);
    let step = step.json();
    assert_eq!(step["breaker_tripped"], false);
    let injected: Vec<String> = step["observations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["id"].as_str().unwrap().to_owned())
        .collect();
    assert!(injected.contains(&CART_BADGE.to_owned()));
    let session = get(&app, "/api/v1/runs/r_api-test-1").await.json();
    assert_eq!(session["session"]["injected"]["0"], json!(injected), "{session}");

    // The record has no `injected` lists: the session's are used, so a failed first step
    // deprecates exactly what step 0 got (§5.5).
    let record = json!({
        "product": PRODUCT, "test": {"id": TEST_ID, "name": "checkout"}, "status": "failed",
        "steps": [{"name": "add to cart", "status": "failed", "error": "badge never changed"}],
    });
    let log =
        json(&app, "POST", "/api/v1/runs/r_api-test-1/finish", &json!({"record": record})).await;
    assert_eq!(log.status, StatusCode::OK, "{}", log.text);
    let log = log.json();
    assert_eq!(log["run_id"], "r_api-test-1");
    assert_eq!(log["deprecated"].as_u64().unwrap() as usize, injected.len(), "{log}");
    let badge = get(&app, &format!("/api/v1/observations/{CART_BADGE}")).await.json();
    assert_eq!(badge["trust"], 0.7);

    let runs = get(&app, "/api/v1/runs").await.json();
    assert_eq!(runs["runs"][0]["run_id"], "r_api-test-1", "{runs}");
    let journal = get(&app, "/api/v1/journal?run_id=r_api-test-1").await.json();
    // One entry per deprecation, and the run's outcome evidence (issue 18).
    assert_eq!(journal["total"].as_u64().unwrap() as usize, injected.len() + 1, "{journal}");

    let undone = post(&app, "/api/v1/runs/r_api-test-1/undo").await;
    assert_eq!(undone.status, StatusCode::OK, "{}", undone.text);
    assert_eq!(undone.json()["reverted"].as_array().unwrap().len(), injected.len());
    let badge = get(&app, &format!("/api/v1/observations/{CART_BADGE}")).await.json();
    assert_eq!(badge["trust"], 0.8, "undo restored the file");
    assert_eq!(undone.json()["already_applied"], false);
    // A retried undo (its first answer lost) answers what stands and changes nothing.
    let again = post(&app, "/api/v1/runs/r_api-test-1/undo").await;
    assert_eq!(again.status, StatusCode::OK, "{}", again.text);
    assert_eq!(again.json()["already_applied"], true);
    assert_eq!(again.json()["reverted"].as_array().unwrap().len(), 0);
    let badge = get(&app, &format!("/api/v1/observations/{CART_BADGE}")).await.json();
    assert_eq!(badge["trust"], 0.8, "the retry changed nothing");
    post(&app, "/api/v1/runs/r_never-ran/undo").await.error(404, "unknown_run");
}

#[tokio::test]
async fn run_routes_refuse_bad_ids_records_and_decisions() {
    let f = Fixture::new();
    let app = f.app();
    json(&app, "POST", "/api/v1/runs", &json!({"run_id": "../escape"}))
        .await
        .error(400, "invalid_run_id");
    get(&app, "/api/v1/runs/..hidden").await.error(400, "invalid_run_id");
    get(&app, "/api/v1/runs/r_unknown-run").await.error(404, "not_found");
    let q = json!({"product": PRODUCT, "test": TEST_ID, "text": "x"});
    json(&app, "POST", "/api/v1/runs/r_x/steps/first/query", &q).await.error(400, "bad_request");
    json(&app, "POST", "/api/v1/runs/.x/steps/0/query", &q).await.error(400, "invalid_run_id");
    let beyond = format!("/api/v1/runs/r_x/steps/{}/query", curator_store::MAX_STEP_INDEX + 1);
    json(&app, "POST", &beyond, &q).await.error(400, "invalid_step_index");
    let record = json!({"run_id": "r_other", "product": PRODUCT, "test": {"id": TEST_ID, "name": "t"}, "status": "passed", "steps": []});
    let m = json(&app, "POST", "/api/v1/runs/r_x/finish", &json!({"record": record}))
        .await
        .error(400, "bad_request");
    assert!(m.contains("r_other"), "{m}");
    let m = json(&app, "POST", "/api/v1/runs/r_x/finish", &json!({"record": {"product": PRODUCT}}))
        .await
        .error(400, "invalid_run_record");
    assert!(m.contains("test"), "{m}");
    let ok_record = json!({"product": PRODUCT, "test": {"id": TEST_ID, "name": "t"}, "status": "passed", "steps": []});
    let m = json(
        &app,
        "POST",
        "/api/v1/runs/r_x/finish",
        &json!({"record": ok_record, "decisions": {"decisions": [{"action": "explode"}]}}),
    )
    .await
    .error(400, "invalid_decisions");
    assert!(m.contains("action"), "{m}");
    // Strict inputs (issue 15): a misspelt key is named with the nearest known one, in the run
    // record (new name `run_record`) and in the decisions, and nothing is applied.
    let typo = json!({"product": PRODUCT, "test": {"id": TEST_ID, "name": "t"}, "status": "passed",
                      "steps": [{"name": "s", "status": "passed", "observaton": "MEMO: x"}]});
    let m = json(&app, "POST", "/api/v1/runs/r_x/finish", &json!({"run_record": typo}))
        .await
        .error(400, "invalid_run_record");
    assert!(m.contains("steps[0].observaton") && m.contains("\"observation\""), "{m}");
    let decisions = json!({"decisions": [{"action": "noop", "reasonig": "x"}]});
    let body = json!({"run_record": ok_record, "decisions": decisions});
    let m =
        json(&app, "POST", "/api/v1/runs/r_x/finish", &body).await.error(400, "invalid_decisions");
    assert!(m.contains("decisions[0].reasonig") && m.contains("\"reasoning\""), "{m}");
    post(&app, "/api/v1/runs/..%2F..%2Fx/undo").await.error(400, "invalid_run_id");
    get(&app, "/api/v1/runs").await.json()["runs"]
        .as_array()
        .unwrap()
        .iter()
        .for_each(|r| assert_ne!(r["run_id"], "r_x", "nothing was applied"));
}

#[tokio::test]
async fn a_passed_run_with_explicit_decisions_adds_and_confirms() {
    let f = Fixture::new();
    let app = f.app();
    let record = json!({
        "product": PRODUCT, "test": {"id": TEST_ID, "name": "checkout"}, "status": "passed",
        "steps": [{"name": "add to cart", "status": "passed", "injected": [CART_BADGE]}],
    });
    let decisions = json!({"decisions": [
        {"action": "update", "observationId": CART_BADGE, "reasoning": "badge lag seen again"},
        {"action": "add", "title": "Checkout button is below the fold on small screens",
         "content": "Scroll down before clicking Checkout.", "scope": "product", "reasoning": "new"},
    ]});
    let log = json(
        &app,
        "POST",
        "/api/v1/runs/r_passed-1/finish",
        &json!({"record": record, "decisions": decisions}),
    )
    .await;
    assert_eq!(log.status, StatusCode::OK, "{}", log.text);
    let log = log.json();
    assert_eq!((log["added"].as_u64(), log["confirmed"].as_u64()), (Some(1), Some(1)), "{log}");
    assert_eq!(log["provider"], "explicit");
    let shop = get(&app, "/api/v1/observations?scope=acme-shop").await.json();
    assert_eq!(shop["total"], 8);
}

#[tokio::test]
async fn breaker_status_record_and_reset() {
    let f = Fixture::new();
    let app = f.app();
    let status = get(&app, "/api/v1/breaker/r_b1").await.json();
    assert_eq!((status["tripped"].as_bool(), status["window"].as_u64()), (Some(false), Some(0)));
    let recorded = json(
        &app,
        "POST",
        "/api/v1/breaker/r_b1/record",
        &json!({"outcome": "failed", "memory": "with"}),
    )
    .await;
    assert_eq!(recorded.status, StatusCode::OK, "{}", recorded.text);
    assert_eq!(recorded.json()["window"], 1);
    json(&app, "POST", "/api/v1/breaker/r_b1/record", &json!({"outcome": "meh", "memory": "with"}))
        .await
        .error(400, "bad_request");
    let reset = post(&app, "/api/v1/breaker/r_b1/reset").await.json();
    assert_eq!(reset["window"], 0);
    get(&app, "/api/v1/breaker/..").await.error(400, "invalid_breaker_key");
    get(&app, "/api/v1/breaker/.hidden").await.error(400, "invalid_breaker_key");
}

/// A long run (300 steps of 4 KB reasoning, 1.2 MB) is taken over HTTP as the CLI and MCP over
/// stdio take it: the default body limit is MCP stdio's line limit, not an observation's size.
#[tokio::test]
async fn a_run_record_over_a_megabyte_is_finished_over_http() {
    let f = Fixture::new();
    let app = f.app();
    let step = json!({"name": "look", "status": "passed", "reasoning": "r".repeat(4096)});
    let record = json!({
        "product": PRODUCT, "test": {"id": TEST_ID, "name": "long"}, "status": "passed",
        "steps": vec![step; 300],
    });
    let body = json!({"record": record});
    assert!(body.to_string().len() > 1 << 20);
    let log = json(&app, "POST", "/api/v1/runs/r_long/finish", &body).await;
    assert_eq!(log.status, StatusCode::OK, "{}", log.text);
    assert_eq!(log.json()["run_id"], "r_long");
}

#[tokio::test]
async fn a_retried_breaker_record_counts_once_by_run_id_or_key() {
    let f = Fixture::new();
    let app = f.app();
    let uri = "/api/v1/breaker/suite-a/record";
    let failed = json!({"outcome": "failed", "memory": "with", "run_id": "r_one"});
    let first = json(&app, "POST", uri, &failed).await.json();
    let again = json(&app, "POST", uri, &failed).await.json();
    assert_eq!((&first["window"], &first["already_applied"]), (&json!(1), &json!(false)));
    assert_eq!((&again["window"], &again["already_applied"]), (&json!(1), &json!(true)));
    // Naming no run, the Idempotency-Key names it.
    let passed = json!({"outcome": "passed", "memory": "without"});
    assert_eq!(keyed(&app, "POST", uri, "k1", &passed).await.json()["window"], 2);
    let retried = keyed(&app, "POST", uri, "k1", &passed).await.json();
    assert_eq!((&retried["window"], &retried["already_applied"]), (&json!(2), &json!(true)));
    // Neither: a by-hand record, counted each time.
    assert_eq!(json(&app, "POST", uri, &passed).await.json()["window"], 3);
    assert_eq!(json(&app, "POST", uri, &passed).await.json()["window"], 4);
    let bad = json!({"outcome": "passed", "memory": "with", "run_id": "../x"});
    json(&app, "POST", uri, &bad).await.error(400, "invalid_run_id");
    keyed(&app, "POST", uri, "not a key", &passed).await.error(400, "bad_request");
    assert_eq!(get(&app, "/api/v1/breaker/suite-a").await.json()["window"], 4);
}

#[tokio::test]
async fn a_tripped_breaker_injects_nothing_into_a_run_step() {
    let f = Fixture::new();
    let app = f.app();
    for (outcome, memory) in [
        ("failed", "with"),
        ("failed", "with"),
        ("failed", "with"),
        ("passed", "without"),
        ("passed", "without"),
        ("passed", "without"),
    ] {
        json(
            &app,
            "POST",
            "/api/v1/breaker/r_tripped/record",
            &json!({"outcome": outcome, "memory": memory}),
        )
        .await;
    }
    assert_eq!(get(&app, "/api/v1/breaker/r_tripped").await.json()["tripped"], true);
    let step = json(
        &app,
        "POST",
        "/api/v1/runs/r_tripped/steps/0/query",
        &json!({"product": PRODUCT, "test": TEST_ID, "text": "click Add to cart and check the cart badge"}),
    )
    .await
    .json();
    assert_eq!(step["breaker_tripped"], true);
    assert_eq!(step["observations"], json!([]));
    assert!(step["formatted"].is_null());
}

#[tokio::test]
async fn lint_reports_every_refused_file() {
    let f = Fixture::new();
    let bad =
        f.root.join("products").join(PRODUCT).join("obs_broken-file-broken-file-broken-file.md");
    std::fs::write(&bad, "---\ntitle: no closing fence\n").unwrap();
    let app = f.app();
    let report = get(&app, "/api/v1/lint").await.json();
    assert_eq!(report["observations"], 19);
    let problems = report["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 1, "{report}");
    assert_eq!(
        problems[0]["path"],
        format!("products/{PRODUCT}/obs_broken-file-broken-file-broken-file.md")
    );
    assert_eq!(get(&app, "/api/v1/observations").await.json()["problems"], 1);
    // The review queue is checked too.
    let queue = f.root.join(".curator/pending/products").join(PRODUCT);
    std::fs::create_dir_all(&queue).unwrap();
    std::fs::write(queue.join("obs_broken-file-broken-file-broken-file.md"), "no fence\n").unwrap();
    let report = get(&app, "/api/v1/lint").await.json();
    let paths: Vec<&str> = report["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths.len(), 2, "{report}");
    assert!(
        paths.contains(
            &format!(
                ".curator/pending/products/{PRODUCT}/obs_broken-file-broken-file-broken-file.md"
            )
            .as_str()
        ),
        "{report}"
    );
    assert_eq!(report["pending"], 0);
}

#[tokio::test]
async fn journal_pages_newest_first() {
    let f = Fixture::new();
    let app = f.app();
    for _ in 0..3 {
        post(&app, &format!("/api/v1/observations/{CART_BADGE}/confirm")).await;
    }
    let page = get(&app, &format!("/api/v1/journal?id={CART_BADGE}&limit=2")).await.json();
    assert_eq!(page["total"], 3);
    let entries = page["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0]["after"]["trust"], 0.95, "newest first");
    get(&app, "/api/v1/journal?limit=0").await.error(400, "bad_request");
}

#[tokio::test]
async fn changes_notice_a_write_by_anyone() {
    let f = Fixture::new();
    let app = f.app();
    let first = get(&app, "/api/v1/changes").await.json();
    let fp = first["fingerprint"].as_str().unwrap().to_owned();
    assert_eq!(first["changed"], false);
    let same = get(&app, &format!("/api/v1/changes?since={fp}")).await.json();
    assert_eq!(same["changed"], false);
    // Another process (here: a plain file write) adds an observation.
    std::fs::copy(
        f.product_file(CART_BADGE),
        f.root.join("products/acme-shop/obs_copy-copy-copy-copy-copy-copy.md"),
    )
    .unwrap();
    let after = get(&app, &format!("/api/v1/changes?since={fp}")).await.json();
    assert_eq!(after["changed"], true);
    assert_ne!(after["fingerprint"], fp);
}

#[tokio::test]
async fn harness_routes_say_when_none_is_configured_and_work_when_one_is() {
    let f = Fixture::new();
    let app = f.app();
    let m = get(&app, "/api/v1/harness").await.error(404, "harness_not_configured");
    assert!(m.contains("--state-dir"), "{m}");
    post(&app, "/api/v1/harness/triage").await.error(404, "harness_not_configured");

    let state_dir = f.dir.path().join("project/.harness");
    let identity = f.dir.path().join("identity");
    std::fs::create_dir_all(state_dir.join("memory")).unwrap();
    std::fs::create_dir_all(&identity).unwrap();
    std::fs::write(identity.join("worker.md"), "# worker\n- run the tests before DONE\n").unwrap();
    std::fs::write(
        state_dir.join("pending-issues.jsonl"),
        "{\"title\":\"Login button overlaps footer\",\"severity\":\"minor\",\"source\":\"validator\"}\n",
    )
    .unwrap();
    let harness = curator_harness::Harness::open(
        &state_dir,
        &identity,
        curator_harness::HarnessOptions::default(),
    );
    let app = curator_server::app(
        f.state(ServerOptions { harness: Some(harness), ..ServerOptions::default() }),
    );
    let view = get(&app, "/api/v1/harness").await;
    assert_eq!(view.status, StatusCode::OK, "{}", view.text);
    let view = view.json();
    assert_eq!(view["identities"][0]["role"], "worker");
    assert!(view["status"]["layers"].as_array().unwrap().len() >= 3);

    let triage = post(&app, "/api/v1/harness/triage").await;
    assert_eq!(triage.status, StatusCode::OK, "{}", triage.text);
    assert_eq!(triage.json()["merged"], 1);
    let issues = get(&app, "/api/v1/harness/issues").await.json();
    assert_eq!(issues["issues"][0]["title"], "Login button overlaps footer");

    let context = get(&app, "/api/v1/harness/context/worker").await.json();
    assert!(
        context["context"].as_str().unwrap().contains("run the tests before DONE"),
        "{context}"
    );
    get(&app, "/api/v1/harness/context/..%2Fetc").await.error(400, "bad_request");

    json(&app, "POST", "/api/v1/harness/curate", &json!({"trigger": "sometimes"}))
        .await
        .error(400, "bad_request");
    let pass = post(&app, "/api/v1/harness/curate").await;
    assert_eq!(pass.status, StatusCode::OK, "{}", pass.text);
    assert!(pass.json()["line"].as_str().unwrap().starts_with("CURATED "), "{}", pass.text);

    // The reference harness UI's own paths (§8.1, §8.5), for this project's slug only.
    std::fs::write(
        state_dir.join("pending-issues.jsonl"),
        "{\"title\":\"Cart badge stale after undo\",\"severity\":\"high\"}\n",
    )
    .unwrap();
    let list = get(&app, "/api/harness/project/issues-list").await;
    assert_eq!(list.status, StatusCode::OK, "{}", list.text);
    let list = list.json();
    assert_eq!(list["nextId"], 2);
    assert_eq!(list["issues"][0]["id"], "I-0001");
    assert_eq!(list["pending"][0]["title"], "Cart badge stale after undo");
    assert_eq!(list["pending"][0]["severity"], "major", "clamped as §3.1 reads it");
    assert_eq!(list["pending"][0]["id"], "PENDING-1");
    get(&app, "/api/harness/other/issues-list").await.error(404, "harness_unknown_project");
    post(&app, "/api/harness/other/triage").await.error(404, "harness_unknown_project");
    let triage = post(&app, "/api/harness/project/triage").await;
    assert_eq!(triage.status, StatusCode::OK, "{}", triage.text);
    assert_eq!(triage.json(), json!({"ok": true, "merged": 1, "deduped": 0}));
    let pass = post(&app, "/api/harness/project/curate").await;
    assert_eq!(pass.status, StatusCode::OK, "{}", pass.text);
    assert!(pass.json()["line"].as_str().unwrap().starts_with("CURATED "), "{}", pass.text);
    let identity = get(&app, "/api/harness/identity").await.json();
    assert_eq!(identity["roles"][0]["role"], "worker");
    assert_eq!(identity["roles"][0]["lessons"], 2, "non-blank lines not starting with <!--");
    assert!(identity["roles"][0]["mtime"].is_string(), "{identity}");
}

#[tokio::test]
async fn harness_triggers_during_a_pass_get_409_at_once_and_trace_says_where_entries_went() {
    let f = Fixture::new();
    let state_dir = f.dir.path().join("project/.harness");
    let identity = f.dir.path().join("identity");
    let harness = |dir: &std::path::Path| {
        curator_harness::Harness::open(dir, &identity, curator_harness::HarnessOptions::default())
    };
    // A configured state directory that does not exist: 404, nothing created.
    let missing = f.dir.path().join("typo/.harness");
    let app = curator_server::app(
        f.state(ServerOptions { harness: Some(harness(&missing)), ..ServerOptions::default() }),
    );
    let m = post(&app, "/api/v1/harness/curate").await.error(404, "harness_state_missing");
    assert!(m.contains("does not exist"), "{m}");
    assert!(!missing.exists());

    let h = harness(&state_dir);
    h.append(
        "debugger",
        Some("F-031"),
        false,
        "the webhook reads STRIPE_SECRET at import time",
        curator_harness::Timestamp::now(),
    )
    .unwrap();
    let app = curator_server::app(
        f.state(ServerOptions { harness: Some(h), ..ServerOptions::default() }),
    );
    // Another process's pass holds the lock: refused at once, the holder named.
    let held = curator_store::acquire_lock(
        &state_dir.join("memory/.curator.lock"),
        &curator_store::LockOptions::default(),
    )
    .unwrap();
    let started = std::time::Instant::now();
    let m = json(&app, "POST", "/api/v1/harness/curate", &json!({"trigger": "done"}))
        .await
        .error(409, "curator_busy");
    assert!(m.contains(&format!("pid {}", std::process::id())), "{m}");
    post(&app, "/api/v1/harness/triage").await.error(409, "curator_busy");
    assert!(started.elapsed() < std::time::Duration::from_secs(2), "no waiting");
    drop(held);
    let pass = post(&app, "/api/v1/harness/curate").await;
    assert_eq!(pass.status, StatusCode::OK, "{}", pass.text);
    assert_eq!(pass.json()["partial"], false);

    let trace = get(&app, "/api/v1/harness/trace?text=stripe_secret").await;
    assert_eq!(trace.status, StatusCode::OK, "{}", trace.text);
    let places: Vec<String> = trace.json()["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["place"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(places, ["raw.md", "MEMORY.md ## Lessons"]);
    get(&app, "/api/v1/harness/trace").await.error(400, "bad_request");

    // A broken issues.json: the pass is partial, memory still curated, the file left alone.
    std::fs::write(state_dir.join("issues.json"), "{ not json").unwrap();
    std::fs::write(
        state_dir.join("pending-issues.jsonl"),
        "{\"title\":\"a\",\"severity\":\"nit\"}\n",
    )
    .unwrap();
    let pass = post(&app, "/api/v1/harness/curate").await;
    assert_eq!(pass.status, StatusCode::OK, "{}", pass.text);
    let v = pass.json();
    assert_eq!(v["partial"], true);
    assert!(v["issues_error"].as_str().unwrap().contains("invalid JSON"), "{v}");
    assert_eq!(std::fs::read_to_string(state_dir.join("issues.json")).unwrap(), "{ not json");
}
