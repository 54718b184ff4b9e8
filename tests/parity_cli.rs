//! agent-qa parity through the binary (issue 13 item 5): a query with an invalid suite or test
//! name serves the rest with a warning; a suite position equal to the suite's length is
//! accepted with a warning; every write path takes scope names through one rule, and `lint`
//! reports existing folders that break it; `add` keeps the body's bytes.

use serde_json::{Value, json};

use crate::util::{Dir, ID_A, ID_B, live_lock, observation_file};

const TEST: &str = "t_lack-auto-quit-dow-boat-urus-zip-van-oak-elm";

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}):\n{text}"))
}

fn ids(out: &Value) -> Vec<String> {
    out["observations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["id"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_query_skips_each_invalid_name_and_serves_the_other_folders() {
    let dir = Dir::new("parity-query");
    dir.write(
        &format!("products/acme/{ID_A}.md"),
        observation_file(ID_A, "Login button needs a valid form", "0.9", "Fill it first."),
    );
    dir.write(
        &format!("tests/{TEST}/{ID_B}.md"),
        observation_file(ID_B, "Login modal opens late", "0.9", "Two seconds."),
    );
    let query = |test: &str, suite: Option<&str>| {
        let mut args = vec!["--json", "query", "--product", "acme", "--test", test];
        if let Some(suite) = suite {
            args.extend(["--suite", suite]);
        }
        // Words that tell the two observations apart: "login" alone is in every file of the
        // root, so the ranker finds it says nothing.
        args.push("login button modal");
        let (stdout, stderr) = dir.curator(&args).expect_code(0);
        (json_of(&stdout), stderr)
    };
    let (out, stderr) = query("bad/path", None);
    assert_eq!(ids(&out), [ID_A], "the product folder is still served");
    assert!(stderr.contains("warning: invalid test name skipped"), "{stderr}");
    assert!(out["formatted"].as_str().unwrap().contains("Login button"));
    let (out, stderr) = query(TEST, Some("../tests"));
    let mut got = ids(&out);
    got.sort();
    assert_eq!(got, [ID_A, ID_B], "product and test folders served without the suite");
    assert!(out["warnings"][0].as_str().unwrap().contains("invalid suite name"), "{out}");
    assert!(stderr.contains("warning: invalid suite name skipped"), "{stderr}");
    // Every name invalid: nothing read, nothing injected, still exit 0.
    let (stdout, stderr) =
        dir.curator(&["query", "--product", "..", "--test", "a\\b", "login"]).expect_code(0);
    assert_eq!(stdout, "", "no block");
    assert_eq!(stderr.matches("warning:").count(), 2, "{stderr}");
    // A valid query says nothing on stderr and has an empty warnings list.
    let (out, stderr) = query(TEST, None);
    assert_eq!(out["warnings"], json!([]));
    assert!(!stderr.contains("warning"), "{stderr}");
}

#[test]
fn a_suite_position_equal_to_the_length_is_accepted_with_a_warning() {
    let dir = Dir::new("parity-position");
    let tests = dir.path().join("suite-tests.json");
    std::fs::write(&tests, r#"[{"test":"a.yaml","id":"t_a"},{"test":"b.yaml","id":"t_b"}]"#)
        .unwrap();
    let tests = tests.to_str().unwrap();
    let (_, stderr) = dir
        .curator(&[
            "--json",
            "query",
            "--product",
            "acme",
            "--test",
            "t_b",
            "--suite",
            "s_x",
            "--suite-tests",
            tests,
            "--position",
            "2",
            "login",
        ])
        .expect_code(0);
    assert!(stderr.contains("suite position 2 is past the last"), "{stderr}");
    // The run record of a suite child at position == length is curated (agent-qa accepts it).
    let run = dir.path().join("run.json");
    let record = json!({"run_id": "r_pos", "product": "acme", "test": {"id": "t_b", "name": "B"},
        "suite": {"id": "s_x", "tests": [{"test": "a.yaml", "id": "t_a"}, {"test": "b.yaml", "id": "t_b"}], "position": 2},
        "status": "passed", "steps": [{"name": "Log in", "status": "passed"}]});
    std::fs::write(&run, record.to_string()).unwrap();
    let (_, stderr) =
        dir.curator(&["curate", "--run-record", run.to_str().unwrap(), "--rules"]).expect_code(0);
    assert!(stderr.contains("suite.position 2 equals the length"), "{stderr}");
    let mut past = record.clone();
    past["suite"]["position"] = json!(3);
    std::fs::write(&run, past.to_string()).unwrap();
    let (_, stderr) =
        dir.curator(&["curate", "--run-record", run.to_str().unwrap(), "--rules"]).expect_code(1);
    assert!(stderr.contains("suite.position"), "{stderr}");
}

#[test]
fn every_write_path_refuses_invisible_padded_and_encoded_scope_names() {
    let dir = Dir::new("parity-names");
    for bad in ["evil\u{202E}txt", "a\u{2066}b", " shop", "shop ", "%2e%2e%2fx", "a%2Fb", "x%5C"] {
        let (_, stderr) = dir
            .curator(&[
                "add",
                "--tier",
                "products",
                "--scope",
                bad,
                "--title",
                "T",
                "--source-test",
                "t_x",
                "Body.",
            ])
            .expect_code(1);
        assert!(stderr.contains("scope name"), "{bad:?}: {stderr}");
        // The run record of curate: its product names the folder adds go to.
        let run = dir.path().join("run.json");
        let record = json!({"run_id": "r_names", "product": bad, "test": {"id": "t_x", "name": "X"},
            "status": "passed", "steps": [{"name": "s", "status": "passed"}]});
        std::fs::write(&run, record.to_string()).unwrap();
        let (_, stderr) = dir
            .curator(&["curate", "--run-record", run.to_str().unwrap(), "--rules"])
            .expect_code(1);
        assert!(stderr.contains("product") && stderr.contains("scope name"), "{bad:?}: {stderr}");
    }
    let products = std::fs::read_dir(dir.root().join("products")).unwrap().count();
    assert_eq!(products, 0, "no folder was created");
    // Ordinary names are fine.
    dir.curator(&[
        "add",
        "--tier",
        "products",
        "--scope",
        "Checkout suite",
        "--title",
        "T",
        "--source-test",
        "t_x",
        "Body.",
    ])
    .stdout();
}

#[test]
fn lint_reports_existing_folders_that_break_the_rule_and_still_serves_them() {
    let dir = Dir::new("parity-lint");
    let evil = "shop\u{202E}";
    dir.write(&format!("products/{evil}/{ID_A}.md"), observation_file(ID_A, "T", "0.9", "B."));
    dir.write(&format!("products/ padded/{ID_B}.md"), observation_file(ID_B, "T", "0.9", "B."));
    let (stdout, _) = dir.curator(&["lint"]).expect_code(3);
    assert!(stdout.contains("U+202E"), "{stdout}");
    assert!(stdout.contains("starts or ends with whitespace"), "{stdout}");
    // agent-qa reads these folders; so does curator.
    let list = dir.curator(&["--json", "list"]).stdout();
    assert_eq!(json_of(&list).as_array().map_or(0, Vec::len), 2, "{list}");
}

#[test]
fn add_keeps_the_body_bytes() {
    let dir = Dir::new("parity-body");
    for body in ["one trailing newline\n", "two\n\n", "none", "  indented\n\ttab\n"] {
        let id = dir
            .curator(&[
                "add",
                "--tier",
                "products",
                "--scope",
                "acme",
                "--title",
                "T",
                "--source-test",
                "t_x",
                "-",
            ])
            .stdin(body)
            .stdout();
        let shown = dir.curator(&["--json", "show", id.trim()]).stdout();
        assert_eq!(json_of(&shown)["content"], body, "{body:?}");
        let file = dir.read(&format!("products/acme/{}.md", id.trim()));
        assert!(file.ends_with(&format!("---\n{body}\n")), "{file:?}");
    }
}

fn failed_run(run_id: &str) -> String {
    json!({"run_id": run_id, "product": "acme", "test": {"id": TEST, "name": "Login"},
           "status": "failed", "steps": [{"name": "Log in", "status": "failed", "injected": [ID_A]}]})
    .to_string()
}

fn memory_with_one_observation(name: &str) -> Dir {
    let dir = Dir::new(name);
    dir.write(
        &format!("products/acme/{ID_A}.md"),
        observation_file(ID_A, "Login button needs a valid form", "0.9", "Fill it first."),
    );
    dir
}

/// `services.memory.enabled: false` is agent-qa without a memory provider (§2): nothing is
/// injected and nothing curated.
#[test]
fn memory_disabled_in_the_config_injects_and_curates_nothing() {
    let dir = memory_with_one_observation("parity-disabled");
    let step = ["--json", "query", "--product", "acme", "--test", TEST, "Login button"];
    assert_eq!(ids(&json_of(&dir.curator(&step).stdout())), [ID_A], "enabled by default");
    let config = dir.path().join("agent-qa.config.yaml");
    std::fs::write(config, "services:\n  memory:\n    enabled: false\n").unwrap();
    let (out, err) = dir.curator(&step).expect_code(0);
    assert!(ids(&json_of(&out)).is_empty(), "{out}");
    assert!(err.contains("services.memory.enabled is false"), "{err}");
    let (_, err) = dir.curator(&["curate", "-"]).stdin(failed_run("r_off")).expect_code(0);
    assert!(err.contains("nothing curated"), "{err}");
    assert!(dir.read(&format!("products/acme/{ID_A}.md")).contains("trust: 0.9"));
    // A script reading --json gets a document saying so; a record that is not there is still
    // an error.
    let (out, _) =
        dir.curator(&["--json", "curate", "-"]).stdin(failed_run("r_off")).expect_code(0);
    assert_eq!(json_of(&out)["curated"], false, "{out}");
    dir.curator(&["curate", "no-such-run.json"]).expect_code(1);
}

/// The MemoryLog's snapshots write a whole trust as agent-qa's `JSON.stringify` does: `1`.
#[test]
fn a_whole_trust_is_written_as_javascript_writes_it() {
    let dir = Dir::new("parity-js-number");
    dir.write(
        &format!("products/acme/{ID_A}.md"),
        observation_file(ID_A, "Login button needs a valid form", "0.95", "Fill it first."),
    );
    let run = json!({"run_id": "r_one", "product": "acme", "test": {"id": TEST, "name": "Login"},
        "status": "passed", "steps": [{"name": "Log in", "status": "passed", "injected": [ID_A]}]});
    let out = dir.curator(&["--json", "curate", "-"]).stdin(run.to_string()).stdout();
    assert_eq!(json_of(&out)["deltas"][0]["after"]["trust"], 1.0, "{out}");
    assert!(out.contains("\"trust\": 1,") && !out.contains("\"trust\": 1.0"), "{out}");
}

/// `curatorEnabled: false` skips the curator (§5.1), not the ablation path before it (§8): a
/// failure a rerun without memory passed is still penalized; any other run curates nothing.
#[test]
fn curator_disabled_still_applies_the_ablation_penalty() {
    let dir = memory_with_one_observation("parity-curator-off");
    let config = dir.path().join("agent-qa.config.yaml");
    std::fs::write(
        config,
        "services:\n  memory:\n    curatorEnabled: false\ncurator:\n  policy: agent-qa\n",
    )
    .unwrap();
    let (_, err) = dir.curator(&["curate", "-"]).stdin(failed_run("r_plain")).expect_code(0);
    assert!(err.contains("nothing curated"), "{err}");
    assert!(dir.read(&format!("products/acme/{ID_A}.md")).contains("trust: 0.9"));
    let mut ablated: serde_json::Value = serde_json::from_str(&failed_run("r_ablated")).unwrap();
    ablated["ablation"] = json!({"status": "passed"});
    let out = dir.curator(&["--json", "curate", "-"]).stdin(ablated.to_string()).stdout();
    assert_eq!(json_of(&out)["deprecated"], 1, "{out}");
    assert!(dir.read(&format!("products/acme/{ID_A}.md")).contains("trust: 0.8"));
    ablated["run_id"] = json!("r_rerun_failed");
    ablated["ablation"] = json!({"status": "failed"});
    let (out, err) = dir.curator(&["curate", "-"]).stdin(ablated.to_string()).expect_code(0);
    assert!(err.contains("nothing curated"), "{err}");
    assert_eq!(out, "  Memory: ablation retry also failed -- memory not the cause\n", "§8 step 5");
}

/// The breaker records every finished test (§9) whether or not the curator runs: with
/// `curatorEnabled: false`, runs that fail with memory against a clean baseline still trip it,
/// and each run counts once however often its curate is retried.
#[test]
fn curator_disabled_still_feeds_the_breaker() {
    let dir = memory_with_one_observation("parity-curator-off-breaker");
    let config = dir.path().join("agent-qa.config.yaml");
    std::fs::write(config, "services:\n  memory:\n    curatorEnabled: false\n").unwrap();
    let curate = |run: &serde_json::Value| {
        dir.curator(&["curate", "--breaker", "nightly", "-"]).stdin(run.to_string()).expect_code(0)
    };
    for n in 0..3 {
        let passed = json!({"run_id": format!("r_base{n}"), "product": "acme",
            "test": {"id": TEST, "name": "Login"}, "status": "passed",
            "steps": [{"name": "Log in", "status": "passed"}]});
        curate(&passed);
        curate(&passed);
        curate(&serde_json::from_str(&failed_run(&format!("r_fail{n}"))).unwrap());
    }
    let status = json_of(&dir.curator(&["--json", "breaker", "status", "nightly"]).stdout());
    assert_eq!((&status["window"], &status["tripped"]), (&json!(6), &json!(true)), "{status}");
}

/// A lock held past `curatorLockTimeout`: agent-qa's runCurator answers with a MemoryLog whose
/// error is "Curator error: Lock acquisition timed out" (§6); curator prints that log, applies
/// nothing and exits 75 so a harness retries, and the retry applies the run once.
#[test]
fn a_lock_timeout_is_agent_qas_memory_log_error_and_a_retry_applies_the_run() {
    let dir = memory_with_one_observation("parity-lock-timeout");
    let config = dir.path().join("agent-qa.config.yaml");
    std::fs::write(config, "services:\n  memory:\n    curatorLockTimeout: 1000\n").unwrap();
    let mut holder = std::process::Command::new("sleep").arg("30").spawn().unwrap();
    let lock = dir.write(".curator.lock", live_lock(holder.id()));
    let (out, err) =
        dir.curator(&["--json", "curate", "-"]).stdin(failed_run("r_lock")).expect_code(75);
    let log = json_of(&out);
    assert_eq!(log["errors"], json!(["Curator error: Lock acquisition timed out"]), "{out}");
    assert_eq!((log["deprecated"].as_u64(), log["run_id"].as_str()), (Some(0), Some("r_lock")));
    assert!(err.contains("was not applied"), "{err}");
    assert!(dir.read(&format!("products/acme/{ID_A}.md")).contains("trust: 0.9"));
    // Every other write that cannot take the lock in time changes nothing and asks for a
    // retry the same way.
    for args in [&["rm", ID_A][..], &["review", "reject", ID_B]] {
        let (_, err) = dir.curator(args).expect_code(75);
        assert!(err.contains("lock held by pid"), "{args:?}: {err}");
    }
    assert!(dir.read(&format!("products/acme/{ID_A}.md")).contains("trust: 0.9"));

    holder.kill().unwrap();
    holder.wait().unwrap();
    std::fs::remove_file(lock).unwrap();
    let out = dir.curator(&["--json", "curate", "-"]).stdin(failed_run("r_lock")).stdout();
    assert_eq!(json_of(&out)["deprecated"], 1);
    assert!(dir.read(&format!("products/acme/{ID_A}.md")).contains("trust: 0.8"));
}
