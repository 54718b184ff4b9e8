//! The PostgreSQL store through the binary (issue 7 "must show"): `--store postgres://…` for
//! every command, `serve` processes sharing one database, import/export byte for byte, eight
//! concurrent writers losing nothing, and clear errors that never print the password.
//!
//! Each test gets its own database from `curator_pg::testing` (a throwaway PostgreSQL 15
//! cluster, or `CURATOR_TEST_PG_URL`); no mock.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use curator_pg::testing::{TestDatabase, test_database};
use serde_json::{Value, json};

use crate::util::{Dir, ID_A, ID_B, observation_file};

fn db() -> TestDatabase {
    test_database().expect("a test PostgreSQL (initdb from postgresql-15, or CURATOR_TEST_PG_URL)")
}

/// `curator --root ROOT --store URL ARGS…`.
fn curator(root: &Path, url: &str, args: &[&str]) -> Command {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("curator"));
    cmd.env_remove("CURATOR_ROOT").env_remove("CURATOR_STORE").env_remove("CURATOR_DATABASE_URL");
    cmd.arg("--root").arg(root).args(["--store", url]).args(args);
    cmd
}

/// Runs, asserts exit 0, returns (stdout, stderr).
fn ok(mut cmd: Command) -> (String, String) {
    let out = cmd.output().expect("run curator");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(out.status.success(), "{:?}\nstdout:\n{stdout}\nstderr:\n{stderr}", out.status);
    (stdout, stderr)
}

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}):\n{text}"))
}

fn example_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/agent-qa-memory")
}

/// Every file under `root` (relative path → bytes), `.curator/` excluded.
fn files(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.file_name().is_some_and(|n| n == ".curator" || n == ".gitignore") {
                continue;
            }
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                out.insert(
                    path.strip_prefix(root).unwrap().to_owned(),
                    std::fs::read(&path).unwrap(),
                );
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

#[test]
fn a_bad_store_is_exit_1_and_an_unreachable_server_75_without_the_password() {
    let dir = Dir::new("pg-bad-url");
    let out = dir.curator(&["--store", "mysql://u:hunter2@h/db", "list"]).expect_code(1);
    assert!(out.1.contains("unsupported store") && !out.1.contains("hunter2"), "{}", out.1);
    // Port 1 on loopback: nothing listens there, the connection is refused at once. Nothing
    // was done and the same command may work later: 75, as a lock timeout (audit 8: a harness
    // retrying on 75 lost the run of a database that was restarting).
    let url = "postgres://alice:hunter2@127.0.0.1:1/memory";
    let (_, err) = dir.curator(&["--store", url, "list"]).expect_code(75);
    assert!(err.contains("127.0.0.1:1/memory"), "names host:port/db: {err}");
    assert!(!err.contains("hunter2"), "never the password: {err}");
    let run = dir.path().join("run.json");
    let record = r#"{"run_id":"r1","product":"p","test":{"id":"t","name":"T"},"status":"failed","steps":[]}"#;
    std::fs::write(&run, record).unwrap();
    dir.curator(&["--store", url, "curate", run.to_str().unwrap()]).expect_code(75);
    let (_, err) =
        dir.curator(&["serve", "--listen", "127.0.0.1:0"]).env_store(url).expect_code(75);
    assert!(err.contains("127.0.0.1:1/memory") && !err.contains("hunter2"), "{err}");
    for no_host in ["postgres://", "postgresql:///memory"] {
        let (_, err) = dir.curator(&["--store", no_host, "list"]).expect_code(1);
        assert!(err.contains("the URL names no host") && !err.contains("localhost"), "{err}");
    }
}

/// `CURATOR_STORE` for a [`crate::util::TestCommand`].
trait EnvStore {
    fn env_store(self, url: &str) -> Self;
}

impl EnvStore for crate::util::TestCommand {
    fn env_store(mut self, url: &str) -> Self {
        self.cmd.env("CURATOR_STORE", url);
        self
    }
}

#[test]
fn import_then_export_of_the_example_is_byte_identical_and_idempotent() {
    let db = db();
    let example = example_root();
    let (stdout, stderr) = ok(curator(&example, db.url(), &["import"]));
    let n = files(&example).len();
    assert!(stdout.contains(&format!("{n} added, 0 updated, 0 unchanged")), "{stdout}");
    assert!(stdout.contains(db.name()) && !stdout.contains("postgres://"), "{stdout}");
    // stderr is not a terminal here: plain progress lines, no bar, no cursor codes.
    assert!(stderr.contains(&format!("imported {n}/{n}")), "{stderr}");
    assert!(!stderr.contains('\u{1b}'), "{stderr:?}");

    let out = tempfile::tempdir().unwrap();
    let (stdout, _) = ok(curator(out.path(), db.url(), &["export"]));
    assert!(stdout.contains(&format!("{n} added")), "{stdout}");
    assert_eq!(files(out.path()), files(&example), "export reproduces every file byte for byte");

    let (stdout, _) = ok(curator(&example, db.url(), &["--json", "import"]));
    let report = json_of(&stdout);
    assert_eq!((report["added"].as_u64(), report["unchanged"].as_u64()), (Some(0), Some(n as u64)));
    let (stdout, _) = ok(curator(out.path(), db.url(), &["export"]));
    assert!(stdout.contains(&format!("0 added, 0 updated, {n} unchanged")), "{stdout}");

    // The import moved memory, it did not change it: it is not undone (undoing it would empty
    // the database, and the next export would delete every file).
    let refused = curator(&example, db.url(), &["undo", "import"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("not undone") && stderr.contains("fresh database"), "{stderr}");
    let list = json_of(&ok(curator(out.path(), db.url(), &["--json", "list"])).0);
    assert_eq!(list.as_array().map(Vec::len), Some(n), "{list}");
}

/// A memory root with two product observations, imported into `db`.
fn seeded(name: &str, db: &TestDatabase) -> Dir {
    let dir = Dir::new(name);
    dir.write(
        &format!("products/acme/{ID_A}.md"),
        observation_file(ID_A, "Login modal", "0.5", "Appears late."),
    );
    dir.write(
        &format!("products/acme/{ID_B}.md"),
        observation_file(ID_B, "Login SSO", "0.3", "Below the form."),
    );
    ok(curator(&dir.root(), db.url(), &["import"]));
    dir
}

#[test]
fn every_command_uses_the_database_a_query_session_feeds_curate() {
    let db = db();
    let dir = seeded("pg-cli-session", &db);
    // Nothing on disk: the observations are only in the database from here on.
    std::fs::remove_dir_all(dir.root()).unwrap();
    let empty = dir.path().join("empty");
    let list = json_of(&ok(curator(&empty, db.url(), &["--json", "list"])).0);
    assert_eq!(list.as_array().map(Vec::len), Some(2), "{list}");
    let step =
        ["query", "--product", "acme", "--test", "t_login", "--run-id", "r_s", "--step-index", "1"];
    let (block, _) = ok(curator(&empty, db.url(), &[&step[..], &["login modal"]].concat()));
    assert!(block.starts_with("<memory-context>") && block.contains("Login modal"), "{block}");
    let run = dir.path().join("run.json");
    let record = json!({"run_id": "r_s", "product": "acme", "test": {"id": "t_login", "name": "L"},
        "status": "failed", "steps": [{"name": "Open", "status": "passed"},
                                      {"name": "Log in", "status": "failed"}]});
    std::fs::write(&run, record.to_string()).unwrap();
    let args = ["--json", "curate", "--run-record", run.to_str().unwrap(), "--breaker", "r_s"];
    let log = json_of(&ok(curator(&empty, db.url(), &args)).0);
    assert_eq!((log["case"].as_str(), log["deprecated"].as_u64()), (Some("failed"), Some(1)));
    let shown = json_of(&ok(curator(&empty, db.url(), &["--json", "show", ID_A])).0);
    assert_eq!(shown["trust"], json!(0.4), "{shown}");
    let breaker =
        json_of(&ok(curator(&empty, db.url(), &["--json", "breaker", "status", "r_s"])).0);
    assert_eq!(breaker["window"], 1, "the breaker window lives in the database: {breaker}");
    let history = json_of(&ok(curator(&empty, db.url(), &["--json", "history", ID_A])).0);
    assert!(history.to_string().contains("deprecate"), "{history}");
    assert!(!empty.exists(), "no command wrote to the memory root");
}

#[test]
fn eight_concurrent_writers_of_fifty_runs_each_lose_no_update() {
    const WRITERS: usize = 8;
    const RUNS: usize = 50;
    let db = db();
    let dir = seeded("pg-eight-writers", &db);
    let url = db.url().to_owned();
    let root = dir.root();
    let lanes: Vec<_> = (0..WRITERS)
        .map(|w| {
            let (url, root, tmp) = (url.clone(), root.clone(), dir.path().to_path_buf());
            std::thread::spawn(move || {
                for i in 0..RUNS {
                    let run = tmp.join(format!("run-{w}-{i}.json"));
                    let record = json!({"run_id": format!("r_{w}_{i}"), "product": "acme",
                        "test": {"id": "t_login", "name": "Login"}, "status": "passed",
                        "steps": [{"name": "x", "status": "passed"}]});
                    std::fs::write(&run, record.to_string()).unwrap();
                    let dec = tmp.join(format!("dec-{w}-{i}.json"));
                    let decisions = json!({"decisions": [
                        {"action": "update", "observationId": ID_A, "reasoning": "seen again"},
                        {"action": "update", "observationId": ID_B, "reasoning": "seen again"},
                        {"action": "add", "title": format!("Fact {w}-{i}"), "content": "Body",
                         "scope": "product", "reasoning": "new"}]});
                    std::fs::write(&dec, decisions.to_string()).unwrap();
                    let args =
                        ["--json", "curate", "--run-record", run.to_str().unwrap(), "--decisions"];
                    let mut cmd = curator(&root, &url, &args);
                    cmd.arg(&dec);
                    let log = json_of(&ok(cmd).0);
                    assert_eq!(
                        (log["confirmed"].as_u64(), log["added"].as_u64()),
                        (Some(2), Some(1))
                    );
                }
            })
        })
        .collect();
    for lane in lanes {
        lane.join().expect("a writer lane failed");
    }
    let total = (WRITERS * RUNS) as u64;
    for id in [ID_A, ID_B] {
        let o = json_of(&ok(curator(&root, &url, &["--json", "show", id])).0);
        assert_eq!(o["confirmed_count"].as_u64(), Some(total), "{o}");
        assert_eq!(o["trust"], 1.0, "{o}");
        let history = json_of(&ok(curator(&root, &url, &["--json", "history", id])).0);
        let confirms = history
            .as_array()
            .or_else(|| history["entries"].as_array())
            .expect("history entries")
            .iter()
            .filter(|e| e["action"] == "confirm")
            .count();
        assert_eq!(confirms as u64, total, "one journal entry per confirmation");
    }
    let list = json_of(&ok(curator(&root, &url, &["--json", "list"])).0);
    assert_eq!(list.as_array().map(Vec::len), Some(2 + WRITERS * RUNS));
}

/// A `curator serve` child and the address it listens on.
struct Served {
    child: Child,
    addr: String,
}

impl Served {
    fn start(root: &Path, url: &str) -> Served {
        Served::start_with(root, url, &[])
    }

    /// With `global` flags (a `--config`) before `serve`.
    fn start_with(root: &Path, url: &str, global: &[&str]) -> Served {
        let args = [global, &["serve", "--listen", "127.0.0.1:0"]].concat();
        let mut child = curator(root, url, &args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn curator serve");
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let first = lines.next().expect("serve says where it listens").unwrap();
        let addr = first
            .split("http://")
            .nth(1)
            .and_then(|rest| rest.split('/').next())
            .unwrap_or_else(|| panic!("no address in {first:?}"))
            .to_owned();
        assert!(first.contains("PostgreSQL"), "serve names its store: {first}");
        std::thread::spawn(move || lines.for_each(drop));
        Served { child, addr }
    }

    /// One request; (status, JSON body).
    fn call(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let mut s = TcpStream::connect(&self.addr).unwrap();
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        write!(
            s,
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            self.addr,
            body.len()
        )
        .unwrap();
        let mut response = String::new();
        s.read_to_string(&mut response).unwrap();
        let (head, body) = response.split_once("\r\n\r\n").expect("an HTTP response");
        let status = head.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap();
        (status, serde_json::from_str(body).unwrap_or(Value::Null))
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A `serve` that connected before another machine's newer curator migrated the database
/// writes nothing more into the schema it does not know (audit 9: an older server's adds got
/// empty terms columns and were never injected again); it still answers reads.
#[test]
fn a_serve_refuses_writes_once_a_newer_curator_migrated_the_database() {
    let db = db();
    let dir = seeded("pg-migrated-under-serve", &db);
    let served = Served::start(&dir.root(), db.url());
    let new = json!({"tier": "products", "scope": "acme", "title": "Checkout needs a postcode",
                     "content": "Fill it before paying.", "source_test": "t_checkout"});
    let (status, body) = served.call("POST", "/api/v1/observations", Some(new.clone()));
    assert_eq!(status, 201, "{body}");
    // What the next release's migration records.
    psql(
        db.url(),
        "INSERT INTO schema_version (version, name, checksum) VALUES (99, 'future', 'x')",
    );
    let (status, body) = served.call("POST", "/api/v1/observations", Some(new));
    assert_eq!(status, 503, "{body}");
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("schema version 99") && message.contains("upgrade"), "{body}");
    let (status, _) = served.call(
        "POST",
        "/api/v1/breaker/k1/record",
        Some(json!({"outcome": "failed", "memory": "with"})),
    );
    assert_eq!(status, 503, "a breaker write is refused too");
    let (status, list) = served.call("GET", "/api/v1/observations", None);
    assert_eq!(status, 200, "{list}");
}

#[test]
fn two_serve_processes_on_one_database_see_each_others_writes_at_once() {
    let db = db();
    let dir = seeded("pg-two-servers", &db);
    let a = Served::start(&dir.root(), db.url());
    let b = Served::start(&dir.root(), db.url());
    assert_ne!(a.addr, b.addr);
    let fingerprint = |server: &Served| {
        let (status, body) = server.call("GET", "/api/v1/changes", None);
        assert_eq!(status, 200, "{body}");
        body["fingerprint"].as_str().unwrap().to_owned()
    };
    let before = fingerprint(&b);
    let new = json!({"tier": "products", "scope": "acme", "title": "Checkout needs a postcode",
                     "content": "Fill it before paying.", "source_test": "t_checkout"});
    let (status, created) = a.call("POST", "/api/v1/observations", Some(new));
    assert_eq!(status, 201, "{created}");
    let id = created["id"].as_str().unwrap().to_owned();
    let (status, seen) = b.call("GET", &format!("/api/v1/observations/{id}"), None);
    assert_eq!((status, seen["title"].as_str()), (200, Some("Checkout needs a postcode")));
    let (status, _) =
        b.call("POST", &format!("/api/v1/observations/{id}/confirm"), Some(json!({})));
    assert_eq!(status, 200);
    let (_, seen) = a.call("GET", &format!("/api/v1/observations/{id}"), None);
    assert_eq!(seen["confirmed_count"], 1, "a confirm through b is seen through a: {seen}");
    let (_, list) = b.call("GET", "/api/v1/observations?scope=acme", None);
    assert_eq!(list["total"], 3, "{list}");
    // The live refresh of b's UI sees a's write: the memory is not in b's root.
    let (_, changes) = b.call("GET", &format!("/api/v1/changes?since={before}"), None);
    assert_eq!(changes["changed"], true, "{changes}");
    let now = fingerprint(&b);
    let (_, changes) = b.call("GET", &format!("/api/v1/changes?since={now}"), None);
    assert_eq!(changes["changed"], false, "nothing since: {changes}");
}

#[test]
fn migrate_says_what_it_applies_before_the_wait_and_nothing_when_current() {
    let db = db();
    let dir = Dir::new("pg-migrate");
    let (out, err) = ok(curator(&dir.root(), db.url(), &["migrate"]));
    assert!(
        err.contains("curator: applying 0001 init,") && err.contains("0006 terms_arrays"),
        "{err}"
    );
    assert!(out.contains("0006 terms_arrays: applied now"), "{out}");
    let (out, err) = ok(curator(&dir.root(), db.url(), &["migrate"]));
    assert!(!err.contains("applying"), "{err}");
    assert!(out.contains("0006 terms_arrays: applied 2"), "{out}");
}

/// Moving a memory root to PostgreSQL moves its state: the runs applied before the move are
/// applied once (a harness retrying one gets `already applied`), their evidence counts, the
/// history and `undo` work, and the review queue comes along; a second import adds nothing.
#[test]
fn import_moves_the_journal_evidence_and_review_queue_so_a_retry_applies_nothing() {
    let db = db();
    let tmp = tempfile::tempdir().unwrap();
    let work = tmp.path().join("ws");
    let init = Command::new(assert_cmd::cargo::cargo_bin("curator"))
        .args(["init", "--example"])
        .arg(&work)
        .output()
        .unwrap();
    assert!(init.status.success());
    let root = work.join("agent-qa-memory");
    let run = |url: Option<&str>, args: &[&str]| {
        let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("curator"));
        cmd.current_dir(&work).env_remove("CURATOR_ROOT").env_remove("CURATOR_STORE");
        cmd.arg("--root").arg(&root);
        if let Some(url) = url {
            cmd.args(["--store", url]);
        }
        cmd.args(args);
        ok(cmd)
    };
    let plum = "obs_plum-iris-marsh-maple-ruby-planet-violet-atlas-pine-mesa";
    run(None, &["curate", "runs/failed.json"]);
    run(None, &["curate", "runs/passed.json"]);
    let (queue, _) = run(None, &["review", "list"]);
    let proposal = queue.split_whitespace().next().unwrap().to_owned();
    assert!(proposal.starts_with("obs_"), "{queue}");

    let url = Some(db.url());
    let (first, _) = run(url, &["--json", "import"]);
    let first = json_of(&first);
    assert!(first["journal_entries"].as_u64().unwrap() >= 3, "{first}");
    assert_eq!(first["proposals"].as_u64(), Some(1), "{first}");
    let (again, _) = run(url, &["--json", "import"]);
    let again = json_of(&again);
    assert_eq!(
        (again["journal_entries"].as_u64(), again["proposals"].as_u64()),
        (Some(0), Some(0))
    );

    let shown = |url| json_of(&run(url, &["--json", "show", plum]).0);
    let (file_view, pg_view) = (shown(None), shown(url));
    assert_eq!(pg_view["trust"], file_view["trust"]);
    assert!(!file_view["evidence"].is_null(), "{file_view}");
    assert_eq!(pg_view["evidence"], file_view["evidence"], "the evidence counts on PostgreSQL");
    for record in ["runs/failed.json", "runs/passed.json"] {
        let (out, _) = run(url, &["--json", "curate", record]);
        assert_eq!(json_of(&out)["already_applied"], true, "{record}: {out}");
    }
    let (queue, _) = run(url, &["review", "list"]);
    assert!(queue.contains(&proposal), "{queue}");
    let (history, _) = run(url, &["history", plum]);
    assert!(history.contains("run r2") && history.contains("deprecate"), "{history}");
    run(url, &["undo", "r2"]);
    assert_eq!(shown(url)["trust"], 0.65, "undo of a run applied before the move");
}

/// An old copy of a root imported again does not undo what the fleet did in the database
/// since (a deletion, a confirmation), and an export carries the database's deletions to the
/// root when the file still holds the deleted text.
/// A scope folder linked out of the root: `export` refused it in words and wrote through it
/// all the same, adding and overwriting files outside the root (audit 9).
#[test]
fn export_never_writes_through_a_scope_folder_linked_out_of_the_root() {
    let db = db();
    let example = example_root();
    ok(curator(&example, db.url(), &["import"]));
    let out = tempfile::tempdir().unwrap();
    let root = out.path().join("m");
    let outside = out.path().join("outside");
    std::fs::create_dir_all(root.join("products")).unwrap();
    std::fs::create_dir(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, root.join("products/acme-shop")).unwrap();
    let stale = outside.join("obs_blaze-salmon-cinder-ginger-owl-sand-marble-cider-ocean-brick.md");
    std::fs::write(&stale, "kept as it was").unwrap();
    let out = curator(&root, db.url(), &["export"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("escapes the memory root"), "{stdout}");
    let outside_files: Vec<_> = std::fs::read_dir(&outside).unwrap().collect();
    assert_eq!(outside_files.len(), 1, "nothing added outside the root");
    assert_eq!(std::fs::read_to_string(&stale).unwrap(), "kept as it was");
    assert!(files(&root).keys().any(|p| p.starts_with("products/acme-admin")), "the rest exported");
}

#[test]
fn import_and_export_never_undo_the_other_sides_newer_changes() {
    let db = db();
    let (tmp, root) = imported_example(&db);
    let pg = |args: &[&str]| curator(&root, db.url(), args);
    let plum = "obs_plum-iris-marsh-maple-ruby-planet-violet-atlas-pine-mesa";
    let cabin = "obs_cabin-pine-orbit-linen-honey-cider-noble-solar-talon-jasper";
    ok(pg(&["rm", plum]));
    let decisions = tmp.path().join("dec.json");
    let update =
        json!({"decisions": [{"action": "update", "observationId": cabin, "reasoning": "r"}]});
    std::fs::write(&decisions, update.to_string()).unwrap();
    let run = json!({"run_id": "r-fleet", "product": "acme-shop",
        "test": {"id": "t_lake-mint-harbor-kelp-river-moss-glade-cedar-iris-camel", "name": "T"},
        "status": "passed", "steps": []});
    let record = tmp.path().join("run.json");
    std::fs::write(&record, run.to_string()).unwrap();
    ok(pg(&["curate", record.to_str().unwrap(), "--decisions", decisions.to_str().unwrap()]));
    let confirmed = json_of(&ok(pg(&["--json", "show", cabin])).0)["trust"].clone();

    let out = pg(&["--json", "import"]).output().unwrap();
    assert_eq!(out.status.code(), Some(3), "the two files are reported");
    let report = json_of(&String::from_utf8_lossy(&out.stdout));
    let problems = report["problems"].to_string();
    assert!(problems.contains(plum) && problems.contains("deleted in the database"), "{problems}");
    assert!(problems.contains(cabin) && problems.contains("changed in the database"), "{problems}");
    assert!(pg(&["show", plum]).output().unwrap().status.code() == Some(1), "still deleted");
    assert_eq!(json_of(&ok(pg(&["--json", "show", cabin])).0)["trust"], confirmed, "not reverted");

    let (out, _) = ok(pg(&["--json", "export"]));
    let report = json_of(&out);
    assert_eq!(
        (report["removed"].as_u64(), report["updated"].as_u64()),
        (Some(1), Some(1)),
        "{out}"
    );
    assert!(!root.join(format!("products/acme-shop/{plum}.md")).exists());
    let (out, _) = ok(pg(&["--json", "import"]));
    let report = json_of(&out);
    assert_eq!((report["added"].as_u64(), report["updated"].as_u64()), (Some(0), Some(0)), "{out}");

    // A file of the root that does not parse is not held either: export names it (exit 3),
    // as lint does, and leaves it in place.
    let broken = root.join("products/acme-shop/obs_broken-broken-broken-broken-broken-broken-broken-broken-broken-broken.md");
    std::fs::write(&broken, "---\nid: [unclosed\n---\nbody\n").unwrap();
    let out = pg(&["--json", "export"]).output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stderr));
    let problems = json_of(&String::from_utf8_lossy(&out.stdout))["problems"].to_string();
    assert!(problems.contains("obs_broken"), "{problems}");
    assert!(broken.exists());
}

/// A copy of the example memory root (its `.curator/` left out), imported into `db`.
fn imported_example(db: &TestDatabase) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("m");
    copy_dir(&example_root(), &root);
    ok(curator(&root, db.url(), &["import"]));
    (tmp, root)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap();
        if name == ".curator" {
            continue;
        }
        if path.is_dir() {
            copy_dir(&path, &to.join(name));
        } else {
            std::fs::copy(&path, to.join(name)).unwrap();
        }
    }
}

/// PostgreSQL cannot hold a NUL character. A run record that carries one (a step's error copied
/// from a page) is still applied, its report kept with the NUL shown as ␀; an observation
/// holding one is refused with the reason, and import refuses that file alone (exit 3).
#[test]
fn a_nul_character_is_shown_in_a_report_and_refused_in_an_observation() {
    let db = db();
    let (tmp, root) = imported_example(&db);
    let pg = |args: &[&str]| curator(&root, db.url(), args);
    let plum = "obs_plum-iris-marsh-maple-ruby-planet-violet-atlas-pine-mesa";
    let run = json!({"run_id": "r-nul", "product": "acme-shop",
        "test": {"id": "t_lake-mint-harbor-kelp-river-moss-glade-cedar-iris-camel", "name": "T"},
        "status": "failed",
        "steps": [{"name": "Open", "status": "failed", "error": "page said \u{0}", "injected": [plum]}]});
    let record = tmp.path().join("run.json");
    std::fs::write(&record, run.to_string()).unwrap();
    let (out, _) = ok(pg(&["--json", "curate", record.to_str().unwrap()]));
    assert_eq!(json_of(&out)["deprecated"], 1, "{out}");
    let (out, _) = ok(pg(&["--json", "curate", record.to_str().unwrap()]));
    assert_eq!(json_of(&out)["already_applied"], true, "{out}");

    // An argument cannot hold a NUL: the body comes on stdin.
    let mut add = pg(&["add", "--tier", "product", "--scope", "acme-shop", "--title", "T"]);
    add.args(["--source-test", "t_a", "-"]).stdin(Stdio::piped()).stdout(Stdio::piped());
    let mut child = add.stderr(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(b"Body with a NUL \0 byte.").unwrap();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("cannot store the NUL character"), "{err}");

    let nul = "obs_aa-bb-cc-dd-ee-ff-gg-hh-ii-jj";
    let file = observation_file(nul, "nul", "0.5", "A \u{0} here.");
    std::fs::write(root.join(format!("products/acme-shop/{nul}.md")), file).unwrap();
    let out = pg(&["import"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{stdout}");
    assert!(stdout.contains(nul) && stdout.contains("NUL character"), "{stdout}");

    // Written as a YAML escape, the NUL is no byte of the file but one of the title: refused
    // the same way, the rest imported, and a decision adding one fails alone.
    std::fs::remove_file(root.join(format!("products/acme-shop/{nul}.md"))).unwrap();
    let escaped = "obs_kk-ll-mm-nn-oo-pp-qq-rr-ss-tt";
    let file = observation_file(escaped, "nul", "0.5", "Fine body.").replacen(
        "title: nul",
        "title: \"a \\0 title\"",
        1,
    );
    std::fs::write(root.join(format!("products/acme-shop/{escaped}.md")), file).unwrap();
    let out = pg(&["import"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains(escaped) && stdout.contains("its title holds"), "{stdout}");
    std::fs::remove_file(root.join(format!("products/acme-shop/{escaped}.md"))).unwrap();
    let decisions = tmp.path().join("dec.json");
    let adds = json!({"decisions": [
        {"action": "add", "title": "with \u{0} inside", "content": "c", "scope": "product", "reasoning": "r"},
        {"action": "add", "title": "Plain fact", "content": "c", "scope": "product", "reasoning": "r"}]});
    std::fs::write(&decisions, adds.to_string()).unwrap();
    let run = json!({"run_id": "r-nul-add", "product": "acme-shop",
        "test": {"id": "t_lake-mint-harbor-kelp-river-moss-glade-cedar-iris-camel", "name": "T"},
        "status": "passed", "steps": []});
    std::fs::write(&record, run.to_string()).unwrap();
    let out = pg(&[
        "--json",
        "curate",
        record.to_str().unwrap(),
        "--decisions",
        decisions.to_str().unwrap(),
    ])
    .output()
    .unwrap();
    let log = json_of(&String::from_utf8_lossy(&out.stdout));
    assert_eq!((out.status.code(), log["added"].as_u64()), (Some(0), Some(1)), "{log}");
    assert!(log["errors"].to_string().contains("NUL"), "{log}");
}

/// A queued proposal import cannot read is named and makes the import exit 3, as an
/// observation that cannot be read does (audit 8: it was skipped with exit 0, "0 proposals").
#[test]
fn a_queued_proposal_that_cannot_be_read_is_named_by_import() {
    let db = db();
    let (_tmp, root) = imported_example(&db);
    let queued = root.join(".curator/pending/products/acme-shop");
    std::fs::create_dir_all(&queued).unwrap();
    let bad = "obs_aa-bb-cc-dd-ee-ff-gg-hh-ii-kk";
    let mut bytes = observation_file(bad, "Queued", "0.5", "A body.").into_bytes();
    bytes.extend_from_slice(b"\xff\xfe not UTF-8\n");
    std::fs::write(queued.join(format!("{bad}.md")), bytes).unwrap();
    let out = curator(&root, db.url(), &["import"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains(bad) && stdout.contains("UTF-8"), "{stdout}");
}

/// `psql URL -tAc SQL`: one answer of the test database, as another session sees it.
fn psql(url: &str, sql: &str) -> String {
    let out = Command::new("psql").arg(url).args(["-tAc", sql]).output().expect("psql");
    assert!(out.status.success(), "psql {sql}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// Another session holds `ID_A`'s row for `secs` seconds; returns once it does.
fn hold_row(url: &str, secs: u32) -> Child {
    let sql = format!(
        "BEGIN; SELECT id FROM observations WHERE id = '{ID_A}' FOR UPDATE; \
         SELECT pg_sleep({secs}); COMMIT;"
    );
    let holder =
        Command::new("psql").arg(url).args(["-qc", &sql]).stdout(Stdio::null()).spawn().unwrap();
    wait_for_sleeper(url);
    holder
}

/// Waits until one session of the test database sleeps in `pg_sleep`: the holder holds its lock.
fn wait_for_sleeper(url: &str) {
    let sleeping = "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'PgSleep' \
                    AND datname = current_database()";
    let start = std::time::Instant::now();
    while psql(url, sleeping) != "1" {
        assert!(start.elapsed().as_secs() < 30, "the holder never took its lock");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// A config whose `curatorLockTimeout` is 1 s, for tests that hold a lock longer.
fn lock_timeout_config(dir: &Dir) -> String {
    let config = dir.path().join("config.yaml");
    std::fs::write(&config, "services:\n  memory:\n    curatorLockTimeout: 1000\n").unwrap();
    config.display().to_string()
}

/// Every lock wait is bounded by curatorLockTimeout, not only curate's: an import behind a row
/// another session holds (a client gone mid-transaction) exits 75 after it, and the retry
/// imports the change (audit 8: it waited for as long as the holder held, 9 minutes there).
#[test]
fn an_import_behind_a_held_row_gives_up_after_the_lock_timeout() {
    let db = db();
    let dir = seeded("pg-import-lock", &db);
    let config = lock_timeout_config(&dir);
    let file = dir.root().join(format!("products/acme/{ID_A}.md"));
    let edited = std::fs::read_to_string(&file).unwrap().replace("trust: 0.5", "trust: 0.6");
    std::fs::write(&file, edited).unwrap();
    let args = ["--config", config.as_str(), "import"];
    let mut holder = hold_row(db.url(), 8);
    let started = std::time::Instant::now();
    let out = curator(&dir.root(), db.url(), &args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(75), "{stderr}");
    assert!(started.elapsed().as_secs() < 6, "it gave up before the holder let go");
    holder.wait().unwrap();
    ok(curator(&dir.root(), db.url(), &args));
    assert_eq!(trust_in(&dir.root(), db.url(), ID_A), json!(0.6));

    // A step of a run whose session another session holds locked: the same bound.
    let sql = "BEGIN; SELECT pg_advisory_xact_lock(hashtext('run-session:r_held')); \
               SELECT pg_sleep(8); COMMIT;";
    let mut holder = Command::new("psql")
        .arg(db.url())
        .args(["-qc", sql])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_sleeper(db.url());
    let query = ["--config", config.as_str(), "query", "--product", "acme", "--test", "t_login"];
    let step = ["--run-id", "r_held", "--step-index", "0", "Login modal"];
    let started = std::time::Instant::now();
    let out = curator(&dir.root(), db.url(), &[&query[..], &step].concat()).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(75), "{stderr}");
    assert!(started.elapsed().as_secs() < 6, "it gave up before the holder let go");
    holder.wait().unwrap();
}

/// A database at this binary's schema is not written to on open: a read-only one (a standby,
/// `default_transaction_read_only`) serves reads, and a write says why it cannot (audit 8:
/// every command failed on the migration step's CREATE TABLE).
#[test]
fn a_read_only_database_serves_reads() {
    let db = db();
    let dir = seeded("pg-read-only", &db);
    psql(
        db.url(),
        &format!("ALTER DATABASE \"{}\" SET default_transaction_read_only = on", db.name()),
    );
    let (out, _) = ok(curator(&dir.root(), db.url(), &["list"]));
    assert!(out.contains(ID_A), "{out}");
    // Named in pg_stat_activity, so an operator tells curator's sessions apart.
    let mut serve = curator(&dir.root(), db.url(), &["serve", "--listen", "127.0.0.1:0"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let named = "SELECT count(*) > 0 FROM pg_stat_activity WHERE application_name = 'curator'";
    let start = std::time::Instant::now();
    while psql(db.url(), named) != "t" {
        assert!(start.elapsed().as_secs() < 30, "no session named curator");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    serve.kill().unwrap();
    serve.wait().unwrap();
    ok(curator(&dir.root(), db.url(), &["show", ID_A]));
    let out = curator(&dir.root(), db.url(), &["rm", ID_A]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && stderr.contains("read-only"), "{stderr}");
    let reset = format!(
        "BEGIN READ WRITE; ALTER DATABASE \"{}\" RESET default_transaction_read_only; COMMIT",
        db.name()
    );
    psql(db.url(), &reset);
}

/// The backends of this process's database sessions, stopped (SIGSTOP) until dropped: a server
/// that keeps its connections but never answers.
struct Stopped(Vec<String>);

impl Stopped {
    fn sessions_named_curator(url: &str) -> Stopped {
        let pids = psql(
            url,
            "SELECT string_agg(pid::text, ' ') FROM pg_stat_activity \
             WHERE application_name = 'curator' AND datname = current_database()",
        );
        let pids: Vec<String> = pids.split_whitespace().map(str::to_owned).collect();
        assert!(!pids.is_empty(), "no curator session to stop");
        assert!(Command::new("kill").arg("-STOP").args(&pids).status().unwrap().success());
        Stopped(pids)
    }
}

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = Command::new("kill").arg("-CONT").args(&self.0).status();
    }
}

/// A server that stops answering on open connections fails the call after the stall limit
/// (twice curatorLockTimeout plus 5 s), as unavailable, instead of holding it for ever; the
/// pool then opens new connections (audit 8: `serve` requests hung, and so did its stop).
#[test]
fn a_database_that_stops_answering_fails_the_call_after_the_stall_limit() {
    let db = db();
    let dir = seeded("pg-stall", &db);
    let config = lock_timeout_config(&dir);
    let served = Served::start_with(&dir.root(), db.url(), &["--config", config.as_str()]);
    assert_eq!(served.call("GET", "/api/v1/observations", None).0, 200);
    let stopped = Stopped::sessions_named_curator(db.url());
    let started = std::time::Instant::now();
    let (status, body) = served.call("GET", "/api/v1/observations", None);
    let waited = started.elapsed();
    assert_eq!(status, 503, "{body}");
    assert!(waited.as_secs() >= 6 && waited.as_secs() < 20, "{waited:?}");
    drop(stopped);
    let (status, body) = served.call("GET", "/api/v1/observations", None);
    assert_eq!(status, 200, "new connections once it answers again: {body}");
}

/// A failed run whose first failed step was given `ID_A`: curating it contradicts `ID_A`.
fn failed_run(dir: &Dir, run_id: &str) -> String {
    let run = dir.path().join(format!("{run_id}.json"));
    let record = json!({"run_id": run_id, "product": "acme",
        "test": {"id": "t_login", "name": "Login"}, "status": "failed",
        "steps": [{"name": "Log in", "status": "failed", "injected": [ID_A]}]});
    std::fs::write(&run, record.to_string()).unwrap();
    run.display().to_string()
}

fn trust_in(root: &Path, url: &str, id: &str) -> Value {
    json_of(&ok(curator(root, url, &["--json", "show", id])).0)["trust"].clone()
}

#[test]
fn a_row_held_past_the_lock_timeout_or_a_dropped_connection_exits_75_and_the_retry_applies_once() {
    let db = db();
    let dir = seeded("pg-lock-timeout", &db);
    let config = lock_timeout_config(&dir);
    let run = failed_run(&dir, "r_held");
    let args = ["--config", config.as_str(), "curate", "--run-record", run.as_str()];
    let mut holder = hold_row(db.url(), 6);
    let started = std::time::Instant::now();
    let out = curator(&dir.root(), db.url(), &args).output().unwrap();
    let (stdout, stderr) =
        (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(75), "{stdout}\n{stderr}");
    assert!(started.elapsed().as_secs() < 5, "it gave up before the holder let go");
    assert!(stdout.contains("Curator error: Lock acquisition timed out"), "{stdout}");
    assert!(stderr.contains("run r_held was not applied, curate it again"), "{stderr}");
    assert_eq!(trust_in(&dir.root(), db.url(), ID_A), json!(0.5), "nothing applied");
    holder.wait().unwrap();
    ok(curator(&dir.root(), db.url(), &args));
    assert_eq!(trust_in(&dir.root(), db.url(), ID_A), json!(0.4));
    let again = json_of(&ok(curator(&dir.root(), db.url(), &[&["--json"], &args[..]].concat())).0);
    assert_eq!(again["already_applied"], true, "{again}");

    // The server drops the connection of a curate waiting for the row: exit 75 again.
    std::fs::write(
        dir.path().join("config.yaml"),
        "services:\n  memory:\n    curatorLockTimeout: 20000\n",
    )
    .unwrap();
    let run = failed_run(&dir, "r_dropped");
    let args = ["--config", config.as_str(), "curate", "--run-record", run.as_str()];
    let mut holder = hold_row(db.url(), 10);
    let waiting = curator(&dir.root(), db.url(), &args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let blocked = "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' \
                   AND datname = current_database()";
    let start = std::time::Instant::now();
    while psql(db.url(), blocked) != "1" {
        assert!(start.elapsed().as_secs() < 30, "the curate never waited for the row");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    psql(
        db.url(),
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE wait_event_type = 'Lock' \
         AND datname = current_database()",
    );
    let out = waiting.wait_with_output().unwrap();
    let (stdout, stderr) =
        (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(75), "{stdout}\n{stderr}");
    assert!(stdout.contains("Curator error: database error"), "{stdout}");
    holder.wait().unwrap();
    assert_eq!(trust_in(&dir.root(), db.url(), ID_A), json!(0.4), "nothing applied");
    ok(curator(&dir.root(), db.url(), &args));
    assert_eq!(trust_in(&dir.root(), db.url(), ID_A), json!(0.3));
}
