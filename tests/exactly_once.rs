//! Exactly-once curation through the binary and over HTTP, on the file store and on PostgreSQL
//! (issue 13 item 2, "Must show"): curating a run twice changes nothing the second time and
//! says so; undo, curate again, undo again each act on one generation; two submissions of one
//! run at once apply it once.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use curator_pg::testing::{TestDatabase, test_database};
use serde_json::{Value, json};

use crate::util::{Dir, ID_A, ID_B, Served, observation_file};

/// A memory root with two observations, on the file store or imported into a database.
pub(crate) struct Env {
    pub(crate) dir: Dir,
    pub(crate) db: Option<TestDatabase>,
}

impl Env {
    pub(crate) fn new(name: &str, pg: bool) -> Env {
        let dir = Dir::new(name);
        dir.write(
            &format!("products/acme/{ID_A}.md"),
            observation_file(ID_A, "Login modal", "0.5", "Appears late."),
        );
        dir.write(
            &format!("products/acme/{ID_B}.md"),
            observation_file(ID_B, "Login SSO", "0.3", "Below the form."),
        );
        let db = pg.then(|| test_database().expect("a test PostgreSQL (see curator_pg::testing)"));
        let env = Env { dir, db };
        if env.db.is_some() {
            env.ok(&["import"], None);
        }
        env
    }

    /// `curator --root ROOT [--store URL] ARGS…`.
    pub(crate) fn cmd(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("curator"));
        cmd.env_remove("CURATOR_ROOT").env_remove("CURATOR_STORE");
        cmd.env_remove("CURATOR_DATABASE_URL").current_dir(self.dir.path());
        cmd.arg("--root").arg(self.dir.root());
        if let Some(db) = &self.db {
            cmd.args(["--store", db.url()]);
        }
        cmd.args(args);
        cmd
    }

    /// Runs with `stdin`; (exit code, stdout, stderr).
    pub(crate) fn run(&self, args: &[&str], stdin: Option<&str>) -> (i32, String, String) {
        use std::io::Write;
        let mut cmd = self.cmd(args);
        cmd.stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = cmd.spawn().expect("run curator");
        let mut input = child.stdin.take().unwrap();
        input.write_all(stdin.unwrap_or("").as_bytes()).unwrap();
        drop(input);
        let out = child.wait_with_output().unwrap();
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
    }

    /// Runs, asserts exit 0, returns stdout.
    pub(crate) fn ok(&self, args: &[&str], stdin: Option<&str>) -> String {
        let (code, stdout, stderr) = self.run(args, stdin);
        assert_eq!(code, 0, "curator {args:?}\nstdout:\n{stdout}\nstderr:\n{stderr}");
        stdout
    }

    /// Every observation's exact text, by file name: the files, or what `export` writes.
    pub(crate) fn snapshot(&self) -> BTreeMap<String, String> {
        let root = match &self.db {
            None => self.dir.root(),
            Some(db) => {
                let out = self.dir.path().join(format!("export-{}", rand_suffix()));
                let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("curator"));
                cmd.env_remove("CURATOR_ROOT").env_remove("CURATOR_STORE");
                let status = cmd
                    .arg("--root")
                    .arg(&out)
                    .args(["--store", db.url(), "export"])
                    .output()
                    .unwrap();
                assert!(status.status.success(), "{}", String::from_utf8_lossy(&status.stderr));
                out
            }
        };
        observation_texts(&root)
    }
}

fn rand_suffix() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::SeqCst)
}

/// `tier/scope/obs_….md` → text, for every observation file under `root`.
pub(crate) fn observation_texts(root: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for tier in ["products", "suites", "tests"] {
        let Ok(scopes) = std::fs::read_dir(root.join(tier)) else { continue };
        for scope in scopes.flatten() {
            let Ok(files) = std::fs::read_dir(scope.path()) else { continue };
            for file in files.flatten() {
                let name = file.file_name().to_string_lossy().into_owned();
                if name.starts_with("obs_") && name.ends_with(".md") {
                    let key = format!("{tier}/{}/{name}", scope.file_name().to_string_lossy());
                    out.insert(key, std::fs::read_to_string(file.path()).unwrap());
                }
            }
        }
    }
    out
}

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}):\n{text}"))
}

fn record(run_id: Option<&str>) -> Value {
    let mut r = json!({"product": "acme", "test": {"id": "t_login", "name": "Login"},
                       "status": "passed", "steps": [{"name": "Log in", "status": "passed"}]});
    if let Some(id) = run_id {
        r["run_id"] = json!(id);
    }
    r
}

fn decisions() -> Value {
    json!({"decisions": [{"action": "update", "observationId": ID_A, "reasoning": "held"}]})
}

/// Writes the run record and decisions into the test folder; returns their paths.
fn inputs(env: &Env, run_id: Option<&str>) -> (String, String) {
    let run = env.dir.path().join(format!("run-{}.json", run_id.unwrap_or("anonymous")));
    std::fs::write(&run, record(run_id).to_string()).unwrap();
    let dec = env.dir.path().join("decisions.json");
    std::fs::write(&dec, decisions().to_string()).unwrap();
    (run.display().to_string(), dec.display().to_string())
}

fn trust_of(env: &Env, id: &str) -> (f64, u64) {
    let shown = json_of(&env.ok(&["--json", "show", id], None));
    let o = if shown.get("observation").is_some() { &shown["observation"] } else { &shown };
    (o["trust"].as_f64().unwrap(), o["confirmed_count"].as_u64().unwrap())
}

fn curate_twice_applies_once_and_says_so(pg: bool) {
    let env = Env::new("once-twice", pg);
    let (run, dec) = inputs(&env, Some("r_twice"));
    let args = ["curate", "--run-record", run.as_str(), "--decisions", dec.as_str()];
    let (code, stdout, stderr) = env.run(&args, None);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.starts_with("  Memory: 1 confirmed ("), "{stdout}");
    assert!(stderr.contains("`curator undo r_twice` reverts it"), "{stderr}");
    let applied = env.snapshot();
    let (code, stdout, stderr) = env.run(&args, None);
    assert_eq!(code, 0, "a retried run is not an error: {stderr}");
    assert!(
        stdout.starts_with("  Memory: run r_twice already applied, generation 1; nothing changed"),
        "{stdout}"
    );
    assert!(stderr.contains("already applied") && !stderr.contains("curator undo"), "{stderr}");
    let log = json_of(&env.ok(&[&["--json"], &args[..]].concat(), None));
    assert_eq!(
        (log["already_applied"].as_bool(), log["generation"].as_u64()),
        (Some(true), Some(1))
    );
    assert_eq!(
        (log["confirmed"].as_u64(), log["deltas"].as_array().map(Vec::len)),
        (Some(0), Some(0))
    );
    assert_eq!(env.snapshot(), applied, "nothing changed");
    assert_eq!(trust_of(&env, ID_A), (0.55, 1));
    let history = json_of(&env.ok(&["--json", "history", ID_A], None));
    let runs: Vec<&str> = history
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["action"] != "add") // PostgreSQL journals its import
        .filter_map(|e| e["run_id"].as_str())
        .collect();
    assert_eq!(runs, ["r_twice"], "one journaled change: {history}");
}

#[test]
fn curate_twice_applies_once_and_says_so_file() {
    curate_twice_applies_once_and_says_so(false);
}

#[test]
fn curate_twice_applies_once_and_says_so_pg() {
    curate_twice_applies_once_and_says_so(true);
}

fn undo_curate_undo_acts_on_each_generation(pg: bool) {
    let env = Env::new("once-undo", pg);
    let (run, dec) = inputs(&env, Some("r_gen"));
    let curate = ["--json", "curate", "--run-record", run.as_str(), "--decisions", dec.as_str()];
    let original = env.snapshot();
    let first = json_of(&env.ok(&curate, None));
    assert_eq!((first["generation"].as_u64(), first["confirmed"].as_u64()), (Some(1), Some(1)));
    let out = env.ok(&["undo", "r_gen"], None);
    assert!(out.starts_with("reverted 1 change(s) of run r_gen, generation 1"), "{out}");
    assert_eq!(env.snapshot(), original, "byte for byte");
    let (code, stdout, stderr) = env.run(&curate[1..], None);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.starts_with("  Memory: 1 confirmed"), "applied again: {stdout}");
    assert!(stderr.contains("generation 2") && stderr.contains("`curator undo r_gen`"), "{stderr}");
    assert_eq!(trust_of(&env, ID_A), (0.55, 1));
    let second = json_of(&env.ok(&["--json", "undo", "r_gen"], None));
    assert_eq!(second["generation"], 2);
    assert_eq!(env.snapshot(), original, "the second undo reverts the second application");
    // A retried undo succeeds and changes nothing: what it asked for stands.
    let (code, _, stderr) = env.run(&["undo", "r_gen"], None);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("run r_gen was already undone"), "{stderr}");
    assert_eq!(env.snapshot(), original);
    let retried = json_of(&env.ok(&["--json", "undo", "r_gen"], None));
    assert_eq!(
        (&retried["already_applied"], &retried["undo_run_id"]),
        (&json!(true), &json!("undo-r_gen"))
    );
    // Undoing the undo brings generation 2 back; curating then changes nothing.
    env.ok(&["undo", "undo-r_gen"], None);
    assert_eq!(trust_of(&env, ID_A), (0.55, 1));
    assert_eq!(json_of(&env.ok(&curate, None))["already_applied"], true);
    assert_eq!(trust_of(&env, ID_A), (0.55, 1));
}

#[test]
fn undo_curate_undo_acts_on_each_generation_file() {
    undo_curate_undo_acts_on_each_generation(false);
}

#[test]
fn undo_curate_undo_acts_on_each_generation_pg() {
    undo_curate_undo_acts_on_each_generation(true);
}

fn a_record_without_run_id_is_one_run(pg: bool) {
    let env = Env::new("once-anonymous", pg);
    let (run, dec) = inputs(&env, None);
    let curate = ["--json", "curate", "--run-record", run.as_str(), "--decisions", dec.as_str()];
    let first = json_of(&env.ok(&curate, None));
    let second = json_of(&env.ok(&curate, None));
    let run_id = first["run_id"].as_str().unwrap();
    assert!(run_id.starts_with("r_") && run_id.len() == 34, "{run_id}");
    assert_eq!(second["run_id"], run_id);
    assert_eq!(
        (first["already_applied"].as_bool(), second["already_applied"].as_bool()),
        (Some(false), Some(true))
    );
    assert_eq!(trust_of(&env, ID_A), (0.55, 1));
    env.ok(&["undo", run_id], None);
    assert_eq!(trust_of(&env, ID_A), (0.5, 0));
}

#[test]
fn a_record_without_run_id_is_one_run_file() {
    a_record_without_run_id_is_one_run(false);
}

#[test]
fn a_record_without_run_id_is_one_run_pg() {
    a_record_without_run_id_is_one_run(true);
}

fn processes_submitting_one_run_at_once_apply_it_once(pg: bool) {
    let env = Env::new("once-concurrent", pg);
    let (run, dec) = inputs(&env, Some("r_race"));
    let children: Vec<_> = (0..6)
        .map(|_| {
            env.cmd(&["--json", "curate", "--run-record", &run, "--decisions", &dec])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut applied = 0;
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let log = json_of(&String::from_utf8_lossy(&out.stdout));
        if log["already_applied"] == false {
            applied += 1;
            assert_eq!(log["confirmed"], 1);
        }
    }
    assert_eq!(applied, 1, "exactly one process applies the run");
    assert_eq!(trust_of(&env, ID_A), (0.55, 1));
}

#[test]
fn processes_submitting_one_run_at_once_apply_it_once_file() {
    processes_submitting_one_run_at_once_apply_it_once(false);
}

#[test]
fn processes_submitting_one_run_at_once_apply_it_once_pg() {
    processes_submitting_one_run_at_once_apply_it_once(true);
}

fn over_http_a_run_is_applied_once_and_undone_per_generation(pg: bool) {
    let env = Env::new("once-http", pg);
    let server = Served::start(env.cmd(&["serve", "--listen", "127.0.0.1:0"]));
    let body = json!({"record": record(Some("r_http")), "decisions": decisions()});
    let finish = "/api/v1/runs/r_http/finish";
    let original = env.snapshot();
    let (status, first) = server.call("POST", finish, Some(&body));
    assert_eq!(
        (status, first["confirmed"].as_u64(), first["already_applied"].as_bool()),
        (200, Some(1), Some(false)),
        "{first}"
    );
    // A harness that lost the answer retries: 200 again, nothing changes twice.
    let (status, again) = server.call("POST", finish, Some(&body));
    assert_eq!(
        (status, again["confirmed"].as_u64(), again["already_applied"].as_bool()),
        (200, Some(0), Some(true)),
        "{again}"
    );
    assert_eq!(trust_of(&env, ID_A), (0.55, 1));
    let (status, undone) = server.call("POST", "/api/v1/runs/r_http/undo", None);
    assert_eq!((status, undone["generation"].as_u64()), (200, Some(1)), "{undone}");
    assert_eq!(env.snapshot(), original);
    let (_, third) = server.call("POST", finish, Some(&body));
    assert_eq!(
        (third["already_applied"].as_bool(), third["generation"].as_u64()),
        (Some(false), Some(2)),
        "{third}"
    );
    let (_, undone) = server.call("POST", "/api/v1/runs/r_http/undo", None);
    assert_eq!(undone["generation"], 2, "{undone}");
    assert_eq!(env.snapshot(), original);
    // A retried undo (its answer lost) answers what stands and changes nothing.
    let (status, retried) = server.call("POST", "/api/v1/runs/r_http/undo", None);
    assert_eq!((status, &retried["already_applied"]), (200, &json!(true)), "{retried}");
    assert_eq!(env.snapshot(), original);
    let (_, runs) = server.call("GET", "/api/v1/runs", None);
    let summary =
        runs["runs"].as_array().unwrap().iter().find(|r| r["run_id"] == "r_http").unwrap();
    assert_eq!(summary["generations"], 2, "{summary}");

    // Six clients finishing one run at once: one applies it.
    let body = json!({"record": record(Some("r_http_race")), "decisions": decisions()});
    let answers: Vec<Value> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..6)
            .map(|_| {
                s.spawn(|| server.call("POST", "/api/v1/runs/r_http_race/finish", Some(&body)))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap())
            .map(|(status, v)| {
                assert_eq!(status, 200, "{v}");
                v
            })
            .collect()
    });
    let applied = answers.iter().filter(|a| a["already_applied"] == false).count();
    assert_eq!(applied, 1, "{answers:?}");
    assert_eq!(trust_of(&env, ID_A), (0.55, 1));
}

#[test]
fn over_http_a_run_is_applied_once_and_undone_per_generation_file() {
    over_http_a_run_is_applied_once_and_undone_per_generation(false);
}

#[test]
fn over_http_a_run_is_applied_once_and_undone_per_generation_pg() {
    over_http_a_run_is_applied_once_and_undone_per_generation(true);
}

fn a_retried_run_feeds_the_breaker_once(pg: bool) {
    let env = Env::new(if pg { "once-breaker-pg" } else { "once-breaker" }, pg);
    let (run, dec) = inputs(&env, Some("r_breaker"));
    let curate = |breaker: bool| {
        let mut args = vec!["curate", "--run-record", run.as_str(), "--decisions", dec.as_str()];
        if breaker {
            args.extend(["--breaker", "nightly"]);
        }
        env.ok(&args, None)
    };
    let status = || json_of(&env.ok(&["--json", "breaker", "status", "nightly"], None));
    // What a curate killed after applying its run and before its breaker write leaves: the
    // run applied, the breaker without it. The retry records it, and only once.
    curate(false);
    assert_eq!(status()["window"], 0);
    curate(true);
    let window = status();
    assert_eq!(window["window"], 1, "{window}");
    curate(true);
    assert_eq!(status(), window);
}

#[test]
fn a_retried_run_feeds_the_breaker_once_file() {
    a_retried_run_feeds_the_breaker_once(false);
}

#[test]
fn a_retried_run_feeds_the_breaker_once_pg() {
    a_retried_run_feeds_the_breaker_once(true);
}

#[test]
fn a_breaker_record_with_a_run_id_counts_once() {
    let env = Env::new("once-breaker-record", false);
    let record = |run: &str| {
        let args = ["--json", "breaker", "record", "k", "--outcome", "failed", "--memory", "with"];
        let mut args = args.to_vec();
        args.extend(["--run-id", run]);
        json_of(&env.ok(&args, None))
    };
    let first = record("r_1");
    let again = record("r_1");
    assert_eq!((&first["window"], &first["already_applied"]), (&json!(1), &json!(false)));
    assert_eq!((&again["window"], &again["already_applied"]), (&json!(1), &json!(true)));
    assert_eq!(record("r_2")["window"], 2);
    let (code, _, stderr) = env.run(
        &["breaker", "record", "k", "--outcome", "passed", "--memory", "with", "--run-id", "../x"],
        None,
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("invalid run id"), "{stderr}");
}

/// A run named like curator's own journal runs (a keyed write's `req-<key>`, an undo's
/// `undo-<run>`, `import`) would be answered "already applied" or taken for an undo: refused, with the
/// reason, before anything is read or written.
#[test]
fn a_run_id_curator_reserves_is_refused_by_curate_and_query() {
    let env = Env::new("once-reserved", false);
    let add = [
        "add",
        "--tier",
        "products",
        "--scope",
        "acme",
        "--title",
        "Keyed",
        "--source-test",
        "t_login",
        "--idempotency-key",
        "42",
        "A keyed fact.",
    ];
    env.ok(&add, None);
    for id in ["req-42", "undo-r_1", "import"] {
        let run = env.dir.path().join(format!("{id}.json"));
        std::fs::write(&run, record(Some(id)).to_string()).unwrap();
        let (code, stdout, stderr) =
            env.run(&["curate", "--run-record", &run.display().to_string()], None);
        assert_eq!(code, 1, "{id}: {stdout}{stderr}");
        assert!(stderr.contains("is reserved"), "{id}: {stderr}");
        let query = [
            "query",
            "--product",
            "acme",
            "--test",
            "t_login",
            "--run-id",
            id,
            "--step-index",
            "0",
            "Log in",
        ];
        let (code, _, stderr) = env.run(&query, None);
        assert_eq!(code, 2, "{id}: {stderr}");
        assert!(stderr.contains("is reserved"), "{id}: {stderr}");
    }
    assert!(!env.dir.root().join(".curator/runs/req-42.json").exists());
}

/// A journal written before issue 13: the same entries without `txn`, and no end markers.
fn as_old_journal(journal: &str) -> String {
    let mut out = String::new();
    for line in journal.lines().filter(|l| !l.starts_with(r#"{"end":"#)) {
        let mut entry: Value = serde_json::from_str(line).unwrap();
        let map = entry.as_object_mut().unwrap();
        assert!(map.remove("txn").is_some(), "{line}");
        map.remove("reverts");
        out.push_str(&entry.to_string());
        out.push('\n');
    }
    out
}

#[test]
fn a_journal_written_before_transactions_still_backs_history_undo_and_curate_once() {
    let env = Env::new("once-old-journal", false);
    let (run, dec) = inputs(&env, Some("r_old"));
    let original = env.snapshot();
    env.ok(&["curate", "--run-record", &run, "--decisions", &dec], None);
    let applied = env.snapshot();
    let path = env.dir.root().join(".curator/journal.jsonl");
    let old = as_old_journal(&std::fs::read_to_string(&path).unwrap());
    std::fs::write(&path, &old).unwrap();
    let history = json_of(&env.ok(&["--json", "history", ID_A], None));
    assert_eq!(history.as_array().map(Vec::len), Some(1), "{history}");
    // The old run stands: curating it again changes nothing.
    let again =
        json_of(&env.ok(&["--json", "curate", "--run-record", &run, "--decisions", &dec], None));
    assert_eq!(again["already_applied"], true, "{again}");
    assert_eq!(env.snapshot(), applied);
    // Undo reverts it byte for byte, and the run can be applied and undone again.
    env.ok(&["undo", "r_old"], None);
    assert_eq!(env.snapshot(), original);
    let third =
        json_of(&env.ok(&["--json", "curate", "--run-record", &run, "--decisions", &dec], None));
    assert_eq!(
        (third["already_applied"].as_bool(), third["generation"].as_u64()),
        (Some(false), Some(2))
    );
    env.ok(&["undo", "r_old"], None);
    assert_eq!(env.snapshot(), original);
    // The old lines are untouched: new ones were only appended.
    assert!(std::fs::read_to_string(&path).unwrap().starts_with(&old));
    let (code, stdout, stderr) = env.run(&["lint"], None);
    assert_eq!(code, 0, "{stdout}{stderr}");
}
