//! curate / history / undo / breaker through the binary (issue 4, CLI contract).

use std::process::Command;

use serde_json::{Value, json};

use crate::util::{Dir, ID_A, ID_B, observation_file};

const TEST_ID: &str = "t_login";

fn run_record(run_id: &str, status: &str, steps: Value) -> String {
    json!({"run_id": run_id, "product": "acme", "test": {"id": TEST_ID, "name": "Login"},
           "status": status, "steps": steps})
    .to_string()
}

fn seeded(name: &str) -> Dir {
    let dir = Dir::new(name);
    dir.write(
        &format!("products/acme/{ID_A}.md"),
        observation_file(ID_A, "Login modal", "0.5", "Appears late."),
    );
    dir.write(
        &format!("products/acme/{ID_B}.md"),
        observation_file(ID_B, "Login SSO", "0.1", "Below the form."),
    );
    dir
}

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}):\n{text}"))
}

#[test]
fn explicit_decisions_print_the_summary_line_and_the_memory_log() {
    let dir = seeded("curate-explicit");
    let run = dir.path().join("run.json");
    std::fs::write(
        &run,
        run_record("r_one", "passed", json!([{"name": "Log in", "status": "passed"}])),
    )
    .unwrap();
    let decisions = json!({"decisions": [
        {"action": "update", "observationId": ID_A, "reasoning": "held"},
        {"action": "deprecate", "observationId": ID_B, "reasoning": "wrong"},
        {"action": "update", "observationId": "obs_no-such-thing-here-at-all", "reasoning": "x"},
        {"action": "add", "title": "Login: remember me", "content": "Checked by default.", "scope": "test", "reasoning": "seen"}
    ]});
    let mut cmd =
        dir.curator(&["curate", "--run-record", run.to_str().unwrap(), "--decisions", "-"]);
    cmd = cmd.stdin(decisions.to_string());
    let (stdout, stderr) = cmd.expect_code(0);
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines[0].starts_with("  Memory: 1 added, 1 confirmed, 1 deprecated ("), "{stdout}");
    assert_eq!(
        lines[1],
        "  Memory: warning -- Unknown observation ID for update: obs_no-such-thing-here-at-all"
    );
    assert!(stderr.contains("r_one"), "{stderr}");
    assert!(dir.read(&format!("products/acme/{ID_A}.md")).contains("trust: 0.55\n"));
    assert!(!dir.root().join(format!("products/acme/{ID_B}.md")).exists(), "0.1 - 0.1 deletes");

    // --json prints the MemoryLog; the add above is undone first so the run is repeatable.
    dir.curator(&["undo", "r_one"]).stdout();
    assert!(dir.read(&format!("products/acme/{ID_A}.md")).contains("trust: 0.5\n"));
    let log = json_of(
        &dir.curator(&[
            "--json",
            "curate",
            "--run-record",
            run.to_str().unwrap(),
            "--decisions",
            "-",
        ])
        .stdin(decisions.to_string())
        .stdout(),
    );
    assert_eq!(log["run_id"], "r_one");
    assert_eq!(log["case"], "passed");
    assert_eq!(
        (
            log["added"].as_u64(),
            log["confirmed"].as_u64(),
            log["deprecated"].as_u64(),
            log["deleted"].as_u64()
        ),
        (Some(1), Some(1), Some(1), Some(1))
    );
    assert_eq!(log["deltas"][0]["observationId"], ID_A);
    assert!(log["curatorDuration"].is_u64());
}

#[test]
fn rules_are_the_default_and_propose_memo_lines_for_review() {
    let dir = seeded("curate-rules");
    let run = dir.path().join("run.json");
    let steps = json!([{"name": "Log in", "status": "passed", "injected": [ID_A],
                        "observation": "MEMO(test): Login redirects twice before the dashboard"}]);
    std::fs::write(&run, run_record("r_rules", "passed", steps)).unwrap();
    let log = json_of(
        &dir.curator(&["--json", "curate", "--run-record", run.to_str().unwrap()]).stdout(),
    );
    assert_eq!(log["provider"], "rules");
    assert_eq!((log["proposed"].as_u64(), log["confirmed"].as_u64()), (Some(1), Some(1)));
    assert_eq!(log["added"], 0, "an agent's MEMO waits for review (curator.review: auto)");
    assert_eq!(log["deltas"][1]["action"], "propose");
    assert_eq!(log["deltas"][1]["tier"], "tests");
    assert_eq!(log["deltas"][1]["scope"], TEST_ID);
    let id = log["deltas"][1]["observationId"].as_str().unwrap();
    assert!(dir.root().join(format!(".curator/pending/tests/{TEST_ID}/{id}.md")).is_file());
    assert!(!dir.root().join(format!("tests/{TEST_ID}/{id}.md")).exists());
}

#[test]
fn a_failed_run_takes_injections_from_the_run_session() {
    let dir = seeded("curate-session");
    // What `query --run-id r_sess --step-index 1` records.
    dir.write(
        ".curator/runs/r_sess.json",
        json!({"run_id": "r_sess", "injected": {"1": [ID_A]}}).to_string(),
    );
    let run = dir.path().join("run.json");
    let steps =
        json!([{"name": "Open", "status": "passed"}, {"name": "Log in", "status": "failed"}]);
    std::fs::write(&run, run_record("r_sess", "failed", steps)).unwrap();
    let log = json_of(
        &dir.curator(&["--json", "curate", "--run-record", run.to_str().unwrap()]).stdout(),
    );
    assert_eq!(log["case"], "failed");
    assert_eq!(log["deprecated"], 1);
    assert!(dir.read(&format!("products/acme/{ID_A}.md")).contains("trust: 0.4\n"));
}

#[test]
fn a_bad_run_record_names_the_field() {
    let dir = seeded("curate-bad");
    let run = dir.path().join("run.json");
    std::fs::write(&run, run_record("r_bad", "passed", json!([{"name": "x", "status": 3}])))
        .unwrap();
    let (_, stderr) =
        dir.curator(&["curate", "--run-record", run.to_str().unwrap()]).expect_code(1);
    assert!(stderr.contains("steps[0].status") && stderr.contains("run.json"), "{stderr}");
}

#[test]
fn two_curate_processes_at_once_lose_no_update() {
    let dir = seeded("curate-concurrent");
    let bin = assert_cmd::cargo::cargo_bin("curator");
    let mut children = Vec::new();
    for i in 0..8 {
        let run = dir.path().join(format!("run{i}.json"));
        std::fs::write(
            &run,
            run_record(&format!("r_c{i}"), "passed", json!([{"name": "x", "status": "passed"}])),
        )
        .unwrap();
        let dec = dir.path().join(format!("dec{i}.json"));
        let decisions = json!({"decisions": [
            {"action": "update", "observationId": ID_A, "reasoning": "c"},
            {"action": "add", "title": format!("Fact {i}"), "content": "Body", "scope": "product", "reasoning": "a"}]});
        std::fs::write(&dec, decisions.to_string()).unwrap();
        children.push(
            Command::new(&bin)
                .arg("--root")
                .arg(dir.root())
                .args(["--json", "curate", "--run-record"])
                .arg(&run)
                .arg("--decisions")
                .arg(&dec)
                .output(),
        );
    }
    for child in children {
        let out = child.unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let text = dir.read(&format!("products/acme/{ID_A}.md"));
    assert!(text.contains("confirmed_count: 8\n"), "every confirmation counted:\n{text}");
    assert!(text.contains("trust: 0.9\n"), "{text}");
    let files = std::fs::read_dir(dir.root().join("products/acme")).unwrap().count();
    assert_eq!(files, 2 + 8);
}

#[test]
fn undo_refuses_after_a_later_edit_and_names_the_file() {
    let dir = seeded("curate-undo");
    let run = dir.path().join("run.json");
    std::fs::write(&run, run_record("r_u", "passed", json!([{"name": "x", "status": "passed"}])))
        .unwrap();
    let dec = json!({"decisions": [{"action": "update", "observationId": ID_A, "reasoning": "c"}]})
        .to_string();
    let before = dir.read(&format!("products/acme/{ID_A}.md"));
    dir.curator(&["curate", "--run-record", run.to_str().unwrap(), "--decisions", "-"])
        .stdin(dec.clone())
        .stdout();
    let after = dir.read(&format!("products/acme/{ID_A}.md"));
    dir.write(
        &format!("products/acme/{ID_A}.md"),
        after.replace("Appears late.", "Edited by hand."),
    );
    let (_, stderr) = dir.curator(&["undo", "r_u"]).expect_code(1);
    assert!(
        stderr.contains(&format!("products/acme/{ID_A}.md"))
            && stderr.contains("nothing was reverted"),
        "{stderr}"
    );
    dir.write(&format!("products/acme/{ID_A}.md"), &after);
    let out = dir.curator(&["undo", "r_u"]).stdout();
    assert!(out.contains("reverted 1 change(s) of run r_u"), "{out}");
    assert_eq!(dir.read(&format!("products/acme/{ID_A}.md")), before, "byte for byte");
    let history = json_of(&dir.curator(&["--json", "history", ID_A]).stdout());
    let actions: Vec<&str> =
        history.as_array().unwrap().iter().map(|e| e["action"].as_str().unwrap()).collect();
    assert_eq!(actions, ["confirm", "undo"]);
}

#[test]
fn breaker_records_trips_and_resets_across_processes() {
    let dir = Dir::new("breaker");
    for (outcome, memory) in [
        ("failed", "with"),
        ("failed", "with"),
        ("failed", "with"),
        ("passed", "without"),
        ("passed", "without"),
    ] {
        dir.curator(&["breaker", "record", "s_suite", "--outcome", outcome, "--memory", memory])
            .stdout();
    }
    let status = json_of(&dir.curator(&["--json", "breaker", "status", "s_suite"]).stdout());
    assert_eq!(status["tripped"], false);
    let (stdout, stderr) = dir
        .curator(&[
            "--json",
            "breaker",
            "record",
            "s_suite",
            "--outcome",
            "passed",
            "--memory",
            "without",
        ])
        .expect_code(0);
    assert_eq!(json_of(&stdout)["tripped_now"], true);
    assert!(stderr.contains("circuit breaker tripped"), "{stderr}");
    let text = dir.curator(&["breaker", "status", "s_suite"]).stdout();
    assert!(text.starts_with("breaker s_suite: TRIPPED"), "{text}");
    dir.curator(&["breaker", "reset", "s_suite"]).stdout();
    assert_eq!(
        json_of(&dir.curator(&["--json", "breaker", "status", "s_suite"]).stdout())["tripped"],
        false
    );
    let (_, stderr) = dir.curator(&["breaker", "status", "../x"]).expect_code(1);
    assert!(stderr.contains("breaker key"), "{stderr}");
}

#[test]
fn curate_feeds_the_breaker_like_agent_qa_does_per_test() {
    let dir = seeded("curate-breaker");
    let run = dir.path().join("run.json");
    // Three runs, so three run ids: one run curated again is applied (and counted) once.
    let curate = |run_id: &str, status: &str, injected: Value, ablation: Option<&str>| {
        let mut record: Value = json_of(&run_record(
            run_id,
            status,
            json!([{"name": "x", "status": status, "injected": injected}]),
        ));
        if let Some(a) = ablation {
            record["ablation"] = json!({"status": a});
        }
        std::fs::write(&run, record.to_string()).unwrap();
        let mut cmd = dir.curator(&["curate", "--breaker", "nightly", "--run-record"]);
        cmd.cmd.arg(&run);
        cmd.output()
    };
    // Three failed runs with memory whose ablation reruns passed: each records a baseline pass
    // (the rerun) and a failure with memory, so fM - fB = 1 > 0.15 trips the breaker.
    for i in 0..3 {
        let out = curate(&format!("r_b{i}"), "failed", json!([ID_A]), Some("passed"));
        assert!(out.status.success(), "{out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.contains("circuit breaker tripped"), i == 2, "run {i}: {stderr}");
    }
    let status = json_of(&dir.curator(&["--json", "breaker", "status", "nightly"]).stdout());
    assert_eq!(status["tripped"], true, "{status}");
    // With ablation off agent-qa reruns nothing: a record's ablation result is not a baseline run.
    std::fs::write(
        dir.path().join("agent-qa.config.yaml"),
        "services:\n  memory:\n    ablationEnabled: false\n",
    )
    .unwrap();
    dir.curator(&["breaker", "reset", "nightly"]).stdout();
    assert!(curate("r_off", "failed", json!([ID_A]), Some("passed")).status.success());
    let status = json_of(&dir.curator(&["--json", "breaker", "status", "nightly"]).stdout());
    assert_eq!(
        (&status["baseline"]["runs"], &status["with_memory"]["runs"]),
        (&json!(0), &json!(1))
    );
}

/// A journal line damaged by hand could be one of a run's changes: `undo` refuses, naming the
/// line, rather than revert the changes it can read and report the run undone.
#[test]
fn undo_refuses_while_a_journal_line_cannot_be_read() {
    let dir = seeded("undo-damaged-journal");
    let record = run_record(
        "r_two",
        "passed",
        json!([{"name": "x", "status": "passed", "injected": [ID_A, ID_B]}]),
    );
    dir.curator(&["curate", "-"]).stdin(record).stdout();
    let files = || {
        (
            dir.read(&format!("products/acme/{ID_A}.md")),
            dir.read(&format!("products/acme/{ID_B}.md")),
        )
    };
    let confirmed = files();
    let journal_path = dir.root().join(".curator/journal.jsonl");
    let journal = std::fs::read_to_string(&journal_path).unwrap();
    let lines: Vec<&str> = journal.lines().collect();
    let victim = lines.iter().position(|l| l.contains(ID_A) && l.contains("\"confirm\"")).unwrap();
    let damaged: Vec<&str> = lines
        .iter()
        .enumerate()
        .map(|(i, l)| if i == victim { "{\"hello\":1}" } else { l })
        .collect();
    std::fs::write(&journal_path, damaged.join("\n") + "\n").unwrap();
    let (_, err) = dir.curator(&["undo", "r_two"]).expect_code(1);
    assert!(err.contains(&format!("line {}", victim + 1)), "{err}");
    assert_eq!(files(), confirmed, "nothing was reverted");
    // Once the line is put back, the run is undone whole.
    std::fs::write(&journal_path, &journal).unwrap();
    dir.curator(&["undo", "r_two"]).stdout();
    assert!(files().0.contains("trust: 0.5") && files().1.contains("trust: 0.1"), "{:?}", files());
}

/// An observation the store cannot read is not an unknown one: the run is rolled back and left
/// unapplied (exit 75), so the retry once the file can be read applies the whole run, instead
/// of answering "already applied" without the change (audit 8: the penalty was lost for good).
/// The file is made unreadable for real: another owner's file with mode 600, curator run as
/// `nobody` when the tests run as root (root reads every file), mode 000 otherwise.
#[test]
fn an_observation_that_cannot_be_read_leaves_the_run_unapplied_for_a_retry() {
    use std::os::unix::fs::PermissionsExt;
    let dir = seeded("curate-unreadable");
    let run = dir.path().join("run.json");
    let steps = json!([{"name": "Log in", "status": "failed", "injected": [ID_A]}]);
    std::fs::write(&run, run_record("r_io", "failed", steps)).unwrap();
    let file = dir.root().join(format!("products/acme/{ID_A}.md"));
    let as_root = Command::new("id").arg("-u").output().unwrap().stdout == b"0\n";
    let bin = dir.path().join("curator");
    let sh =
        |script: &str| assert!(Command::new("sh").args(["-c", script]).status().unwrap().success());
    let curate = |json: bool| {
        let mut cmd = if as_root {
            let mut cmd = assert_cmd::Command::new("setpriv");
            cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups"]);
            cmd.arg(&bin);
            cmd
        } else {
            assert_cmd::Command::cargo_bin("curator").unwrap()
        };
        cmd.current_dir(dir.path()).env_remove("CURATOR_ROOT").arg("--root").arg(dir.root());
        if json {
            cmd.arg("--json");
        }
        cmd.arg("curate").arg(&run).output().unwrap()
    };
    if as_root {
        sh(&format!(
            "chown -R 65534:65534 '{}' && chown 0:0 '{}'",
            dir.path().display(),
            file.display()
        ));
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        // `nobody` may not reach the build's own binary (a checkout under /root is mode 700):
        // it runs a link (or a copy) of it inside the test's folder, made after the chown so
        // the build's file keeps its owner.
        let built = assert_cmd::cargo::cargo_bin("curator");
        if std::fs::hard_link(&built, &bin).is_err() {
            std::fs::copy(&built, &bin).unwrap();
        }
    } else {
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o000)).unwrap();
    }
    let out = curate(false);
    let (stdout, stderr) =
        (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(75), "{stdout}{stderr}");
    assert!(stdout.contains("Curator error:") && stdout.contains("denied"), "{stdout}");
    assert!(stderr.contains("run r_io was not applied, curate it again"), "{stderr}");
    if as_root {
        sh(&format!("chown 65534:65534 '{}'", file.display()));
    }
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = curate(true);
    assert!(out.status.success(), "{out:?}");
    let log = json_of(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(
        (log["deprecated"].as_u64(), log["already_applied"].as_bool()),
        (Some(1), Some(false))
    );
    assert!(std::fs::read_to_string(&file).unwrap().contains("trust: 0.4\n"), "penalised once");
}

/// A run's `injected` list reaches only the run's own scopes: an id of another product was
/// never injected into this run, and a forged list moved that product's trust (audit 9).
#[test]
fn an_injected_id_of_another_product_is_ignored() {
    let dir = seeded("curate-foreign-injected");
    dir.write(
        &format!("products/bank/{}.md", crate::util::ID_C),
        observation_file(crate::util::ID_C, "Bank login", "1", "Uses a card reader."),
    );
    let run = dir.path().join("run.json");
    let steps = json!([{"name": "Log in", "status": "failed", "error": "timeout",
                        "injected": [crate::util::ID_C, ID_A]}]);
    std::fs::write(&run, run_record("r_forged", "failed", steps)).unwrap();
    let (stdout, _) = dir.curator(&["curate", run.to_str().unwrap()]).expect_code(0);
    assert!(stdout.contains("lives in products/bank, outside this run's"), "{stdout}");
    let bank = dir.read(&format!("products/bank/{}.md", crate::util::ID_C));
    assert!(bank.contains("trust: 1\n"), "another product's trust is untouched: {bank}");
    let own = dir.read(&format!("products/acme/{ID_A}.md"));
    assert!(!own.contains("trust: 0.5\n"), "the run's own injection is still judged: {own}");
}

/// A run id names one run: a record with another verdict under an applied run id is refused,
/// not answered "already applied" while its verdict is lost (audit 9: an agent's early "passed"
/// record pre-empted the harness's real failure). The same record again is still a retry.
#[test]
fn a_record_with_another_verdict_under_an_applied_run_id_is_refused() {
    let dir = seeded("curate-conflict");
    let passed = dir.path().join("passed.json");
    let step = |status: &str| json!([{"name": "Log in", "status": status, "injected": [ID_A]}]);
    std::fs::write(&passed, run_record("r_same", "passed", step("passed"))).unwrap();
    dir.curator(&["curate", passed.to_str().unwrap()]).expect_code(0);
    let (_, retry) = dir.curator(&["curate", passed.to_str().unwrap()]).expect_code(0);
    assert!(retry.contains("already applied"), "{retry}");
    let failed = dir.path().join("failed.json");
    std::fs::write(&failed, run_record("r_same", "failed", step("failed"))).unwrap();
    let (stdout, stderr) =
        dir.curator(&["--json", "curate", failed.to_str().unwrap()]).expect_code(1);
    assert!(stderr.contains("was applied from a record that reported passed"), "{stderr}");
    assert_eq!(json_of(&stdout)["error"]["code"], "run_conflict", "{stdout}");
    assert!(dir.read(&format!("products/acme/{ID_A}.md")).contains("trust: 0.55\n"), "unchanged");
}
