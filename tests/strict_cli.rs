//! Strict inputs and one vocabulary through the binary (issue 15 items 2 and 3): every case a
//! user reported as silently wrong now fails loudly with a message that says what to fix, and
//! the ids the next command needs are printed.

use serde_json::{Value, json};

use crate::util::{Dir, ID_A, ID_B, observation_file};

fn seeded(name: &str) -> Dir {
    let dir = Dir::new(name);
    dir.write(
        &format!("products/acme/{ID_A}.md"),
        observation_file(ID_A, "Login modal appears late", "0.5", "The login modal appears late."),
    );
    dir.write(
        &format!("tests/t_login/{ID_B}.md"),
        observation_file(ID_B, "Login SSO button", "0.4", "Below the form."),
    );
    dir
}

fn record(steps: Value) -> String {
    json!({"run_id": "r_strict", "product": "acme", "test": {"id": "t_login", "name": "Login"},
           "status": "passed", "steps": steps})
    .to_string()
}

fn journal(dir: &Dir) -> String {
    std::fs::read_to_string(dir.root().join(".curator/journal.jsonl")).unwrap_or_default()
}

#[test]
fn a_misspelt_run_record_key_is_an_error_naming_the_nearest_key_and_nothing_changes() {
    let dir = seeded("strict-record");
    let run = dir.path().join("run.json");
    let steps = json!([{"name": "Log in", "status": "passed", "observaton": "MEMO: SSO is slow"}]);
    std::fs::write(&run, record(steps)).unwrap();
    let (_, stderr) = dir.curator(&["curate", run.to_str().unwrap()]).expect_code(1);
    assert!(stderr.contains("steps[0].observaton"), "{stderr}");
    assert!(stderr.contains("did you mean \"observation\""), "{stderr}");
    assert_eq!(journal(&dir), "", "a refused record changes nothing");
    // agent-qa's leniency, by the parity setting: the key is ignored and the run applied.
    std::fs::write(dir.path().join("lenient.yaml"), "curator:\n  unknownKeys: ignore\n").unwrap();
    let config = dir.path().join("lenient.yaml");
    let args = ["--config", config.to_str().unwrap(), "curate", run.to_str().unwrap()];
    dir.curator(&args).stdout();
    // The run is applied: its outcome evidence is journaled (issue 18), but no memory is added.
    let journal = journal(&dir);
    assert!(journal.contains("\"action\":\"evidence\""), "{journal}");
    assert!(
        !journal.contains("\"action\":\"add\"") && !journal.contains("\"action\":\"propose\""),
        "the MEMO was in the ignored key: nothing to add: {journal}"
    );
}

#[test]
fn a_misspelt_decisions_key_is_an_error_naming_the_nearest_key() {
    let dir = seeded("strict-decisions");
    let run = dir.path().join("run.json");
    std::fs::write(&run, record(json!([{"name": "Log in", "status": "passed"}]))).unwrap();
    let dec = json!({"decisions": [{"action": "update", "observationID": ID_A, "reasoning": "r"}]});
    let (_, stderr) = dir
        .curator(&["curate", "--run-record", run.to_str().unwrap(), "--decisions", "-"])
        .stdin(dec.to_string())
        .expect_code(1);
    assert!(stderr.contains("decisions[0].observationID"), "{stderr}");
    assert!(stderr.contains("did you mean \"observationId\""), "{stderr}");
    assert_eq!(journal(&dir), "");
}

#[test]
fn history_and_undo_of_unknown_or_invalid_ids_exit_non_zero_with_a_clear_message() {
    let dir = seeded("strict-ids");
    let unknown = "obs_lake-lake-lake-lake-lake-lake-lake-lake-lake-lake";
    let (_, stderr) = dir.curator(&["history", unknown]).expect_code(1);
    assert!(stderr.contains("no observation") && stderr.contains(unknown), "{stderr}");
    let (_, stderr) = dir.curator(&["history", "../../x"]).expect_code(1);
    assert!(stderr.contains("../../x"), "{stderr}");
    let (stdout, stderr) = dir.curator(&["history", ID_A]).expect_code(0);
    assert_eq!(stdout, "", "a note is not data");
    assert!(stderr.contains("no journal entries"), "an untouched observation: {stderr}");
    let (_, stderr) = dir.curator(&["undo", "../../x"]).expect_code(2);
    assert!(stderr.contains("invalid run id"), "{stderr}");
    let (_, stderr) = dir.curator(&["undo", "r_never-ran"]).expect_code(1);
    assert!(stderr.contains("not in the journal"), "{stderr}");
}

#[test]
fn list_scope_works_alone_and_a_root_that_is_a_file_is_named_as_such() {
    let dir = seeded("strict-list");
    let out = dir.curator(&["list", "--scope", "acme"]).stdout();
    assert!(out.contains(ID_A) && !out.contains(ID_B), "{out}");
    let file = dir.path().join("not-a-dir");
    std::fs::write(&file, "x").unwrap();
    let (_, stderr) = dir.curator(&["--root", file.to_str().unwrap(), "list"]).expect_code(1);
    assert!(stderr.contains("is not a directory"), "{stderr}");
}

#[test]
fn ids_are_printed_where_the_next_command_needs_them_and_steps_are_numbered_by_index() {
    let dir = seeded("strict-ids-printed");
    let query = [
        "query",
        "--product",
        "acme",
        "--test",
        "t_login",
        "--run-id",
        "r_strict",
        "--step-index",
        "1",
        "--step-text",
        "login modal",
    ];
    let (stdout, stderr) = dir.curator(&query).expect_code(0);
    assert!(stdout.starts_with("<memory-context>"), "stdout stays the planner's block: {stdout}");
    assert!(stderr.contains(&format!("injected {ID_A}")), "{stderr}");
    assert!(stderr.contains("run r_strict, step index 1"), "{stderr}");
    let run = dir.path().join("run.json");
    let steps =
        json!([{"name": "Open", "status": "passed"}, {"name": "Log in", "status": "passed"}]);
    std::fs::write(&run, record(steps)).unwrap();
    let (stdout, stderr) = dir.curator(&["curate", run.to_str().unwrap()]).expect_code(0);
    assert!(stdout.contains(&format!("confirm   {ID_A}  products/acme")), "{stdout}");
    assert!(stderr.contains("curator undo r_strict"), "{stderr}");
    let history = dir.curator(&["history", ID_A]).stdout();
    assert!(history.contains("Injected into step 1 (Log in)"), "the index users gave: {history}");
}

#[test]
fn old_spellings_still_work_with_a_deprecation_warning() {
    let dir = seeded("strict-deprecated");
    let run = dir.path().join("run.json");
    std::fs::write(&run, record(json!([{"name": "Log in", "status": "passed"}]))).unwrap();
    let (_, stderr) = dir.curator(&["curate", "--run", run.to_str().unwrap()]).expect_code(0);
    assert!(stderr.contains("`curate --run` is deprecated"), "{stderr}");
    assert!(stderr.contains("--run-record"), "{stderr}");
    let query =
        ["query", "--product", "acme", "--test", "t_x", "--run", "r_2", "--step", "0", "modal"];
    let (_, stderr) = dir.curator(&query).expect_code(0);
    assert!(stderr.contains("use --run-id") && stderr.contains("use --step-index"), "{stderr}");
}

/// A diagnostic that cannot be written (stderr on a full disk) is dropped: the command ends
/// with its own status, not a panic after the work is done (audit 8: exit 101 and a backtrace).
#[test]
fn a_stderr_that_cannot_be_written_does_not_change_the_exit_code() {
    let dir = seeded("strict-stderr-full");
    let run = |args: &[&str]| {
        let full = std::fs::File::options().write(true).open("/dev/full").unwrap();
        std::process::Command::new(assert_cmd::cargo::cargo_bin("curator"))
            .arg("--root")
            .arg(dir.root())
            .args(args)
            .stdout(std::process::Stdio::null())
            .stderr(full)
            .status()
            .unwrap()
            .code()
    };
    assert_eq!(run(&["lint"]), Some(0));
    assert_eq!(run(&["history", "obs_not-a-valid-id"]), Some(1), "the error, not a panic");
}

/// `--json` errors carry the HTTP API's code for the same error, so a script tells "not found"
/// from "invalid id" from a usage error without matching English text (audit 8).
#[test]
fn json_errors_carry_the_apis_code() {
    let dir = seeded("strict-json-codes");
    let code = |args: &[&str]| {
        let (stdout, _) = dir.curator(&[&["--json"][..], args].concat()).expect_code(1);
        let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        v["error"]["code"].as_str().map(str::to_owned)
    };
    assert_eq!(code(&["show", "obs_nope"]).as_deref(), Some("invalid_id"));
    let unknown = "obs_lake-lake-lake-lake-lake-lake-lake-lake-lake-lake";
    assert_eq!(code(&["show", unknown]).as_deref(), Some("not_found"));
    assert_eq!(code(&["undo", "r_never-ran"]).as_deref(), Some("unknown_run"));
    let (stdout, _) = dir.curator(&["--json", "list", "--tier", "nope"]).expect_code(2);
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["error"]["code"], "usage", "{v}");
}
