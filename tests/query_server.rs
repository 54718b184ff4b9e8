//! `curator query` answered by a running `curator serve` over `<root>/.curator/query.sock`, and
//! by itself when no server can answer (issue 14 item 4): the same answer either way.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use crate::util::{Dir, ID_A, ID_B, ID_C, observation_file};

const TEST: &str = "t_lack-auto-quit-dow-boat-urus-zip-van-oak-elm";

fn seeded(name: &str) -> Dir {
    let dir = Dir::new(name);
    dir.write(
        &format!("products/acme/{ID_A}.md"),
        observation_file(ID_A, "Login button stays disabled until the form is valid", "0.9", "x"),
    );
    dir.write(
        &format!("products/acme/{ID_B}.md"),
        observation_file(ID_B, "Export CSV dialog closes on Escape", "0.7", "Press it once."),
    );
    dir
}

/// A `curator serve` child of one root; killed on drop.
struct Served {
    child: Child,
}

impl Served {
    /// Starts a server and waits until its stderr has a line containing `marker`.
    fn start_until(dir: &Dir, marker: &str) -> Served {
        Served::start_at(dir, &dir.root(), marker).0
    }

    /// Starts a server on `root` (as given: a link stays a link) and returns it with the first
    /// stderr line containing `marker`.
    fn start_at(dir: &Dir, root: &std::path::Path, marker: &str) -> (Served, String) {
        let mut child = Command::new(assert_cmd::cargo::cargo_bin("curator"))
            .current_dir(dir.path())
            .env_remove("CURATOR_ROOT")
            .arg("--root")
            .arg(root)
            .args(["serve", "--listen", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn curator serve");
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let found = loop {
            let line = lines.next().unwrap_or_else(|| panic!("no {marker:?} line")).unwrap();
            if line.contains(marker) {
                break line;
            }
        };
        std::thread::spawn(move || lines.for_each(drop));
        (Served { child }, found)
    }

    fn start(dir: &Dir) -> Served {
        Served::start_until(dir, "answering `curator query` on")
    }

    fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `curator [--json] query …` with the debug log on: (stdout, whether the server answered).
fn query(dir: &Dir, json: bool, extra: &[&str], text: &str) -> (String, bool) {
    let mut args = vec![];
    if json {
        args.push("--json");
    }
    args.extend(["query", "--product", "acme", "--test", TEST]);
    args.extend_from_slice(extra);
    args.push(text);
    let mut cmd = dir.curator(&args);
    cmd.cmd.env("CURATOR_LOG", "curator=debug");
    let out = cmd.output();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let by_server = stderr.contains("answered by the curator serve of this root");
    assert!(by_server || stderr.contains("answering without a server"), "{stderr}");
    (String::from_utf8(out.stdout).unwrap(), by_server)
}

const STEPS: &[&str] = &[
    "Click the login button",
    "Press Escape in the export dialog",
    "Open the billing page",
    "login",
];

#[test]
fn a_running_server_answers_exactly_what_the_process_would() {
    let dir = seeded("query-server-same");
    let alone: Vec<(String, String)> =
        STEPS.iter().map(|s| (query(&dir, false, &[], s).0, query(&dir, true, &[], s).0)).collect();
    // A suite name that cannot be a folder is skipped with a warning (issue 13 item 5).
    let skipped = ["--suite", "../s"];
    let skipped_alone = query(&dir, true, &skipped, "login").0;
    assert!(skipped_alone.contains("invalid suite name skipped"), "{skipped_alone}");
    let served = Served::start(&dir);
    let (skipped_served, by_server) = query(&dir, true, &skipped, "login");
    assert!(by_server, "the server answered a query with a skipped name");
    assert_eq!(skipped_served, skipped_alone, "the warning comes back from the server");
    for (step, (text, json)) in STEPS.iter().zip(&alone) {
        let (served_text, by_server) = query(&dir, false, &[], step);
        assert!(by_server, "the server answered {step:?}");
        assert_eq!(&served_text, text, "{step:?}");
        assert_eq!(&query(&dir, true, &[], step).0, json, "{step:?}");
    }
    // Mode and trust flags reach the server: at min trust 0.8 only the 0.9 observation is seen.
    for mode in ["phrase", "terms"] {
        let (out, by_server) = query(&dir, false, &["--mode", mode, "--min-trust", "0.8"], "login");
        assert!(by_server);
        assert!(out.contains("Login button stays disabled"), "{mode}: {out}");
        assert!(!out.contains("Export CSV"), "{mode}: {out}");
    }
    // A file written while the server runs is in the very next answer.
    dir.write(
        &format!("products/acme/{ID_C}.md"),
        observation_file(ID_C, "Billing page loads invoices lazily", "0.8", "Scroll to load."),
    );
    let (out, by_server) = query(&dir, false, &[], "Open the billing page");
    assert!(by_server && out.contains("Billing page loads invoices lazily"), "{out}");
    // Run bookkeeping goes through the server's store.
    let (_, by_server) = query(&dir, false, &["--run", "r1", "--step", "0"], "login button");
    assert!(by_server);
    assert!(dir.read(".curator/runs/r1.json").contains(ID_A));
    served.kill();
}

#[test]
fn a_tripped_breaker_is_honoured_by_the_server() {
    let dir = seeded("query-server-breaker");
    for (outcome, memory) in [("passed", "without"), ("failed", "with")] {
        for _ in 0..3 {
            dir.curator(&["breaker", "record", "ci", "--outcome", outcome, "--memory", memory])
                .stdout();
        }
    }
    let _served = Served::start(&dir);
    let (out, by_server) = query(&dir, true, &["--breaker", "ci"], "login button");
    assert!(by_server);
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["breaker_tripped"], true, "{json}");
    assert_eq!(json["observations"].as_array().unwrap().len(), 0);
}

#[test]
fn a_killed_server_leaves_a_socket_that_queries_and_the_next_server_handle() {
    let dir = seeded("query-server-killed");
    let (expected, _) = query(&dir, false, &[], "Click the login button");
    let served = Served::start(&dir);
    served.kill();
    assert!(dir.root().join(".curator/query.sock").exists(), "SIGKILL leaves the socket file");
    let (out, by_server) = query(&dir, false, &[], "Click the login button");
    assert!(!by_server);
    assert_eq!(out, expected);
    // The next server takes the dead one's place.
    let _served = Served::start(&dir);
    let (out, by_server) = query(&dir, false, &[], "Click the login button");
    assert!(by_server);
    assert_eq!(out, expected);
    // While it runs, a second server for the root serves HTTP but leaves the socket alone.
    let second = Served::start_until(&dir, "another server answers `curator query`");
    second.kill();
    let (_, by_server) = query(&dir, false, &[], "Click the login button");
    assert!(by_server, "the first server still answers");
}

/// The socket is only a fast path: a folder where it should be is a warning, the server
/// serves HTTP all the same, and queries answer by themselves.
#[test]
fn a_folder_in_place_of_the_socket_is_a_warning_not_a_refusal_to_serve() {
    let dir = seeded("query-server-socket-dir");
    let (expected, _) = query(&dir, false, &[], "Click the login button");
    std::fs::create_dir_all(dir.root().join(".curator/query.sock/inside")).unwrap();
    let served = Served::start_until(&dir, "curator serve: http://");
    let (out, by_server) = query(&dir, false, &[], "Click the login button");
    assert!(!by_server);
    assert_eq!(out, expected);
    served.kill();
}

#[test]
fn a_hung_server_delays_a_query_by_the_client_timeout_only() {
    let dir = seeded("query-server-hung");
    let (expected, _) = query(&dir, false, &[], "Click the login button");
    let served = Served::start(&dir);
    let pid = served.child.id().to_string();
    // SIGSTOP: the kernel still accepts connections, and nothing ever answers them.
    assert!(Command::new("kill").args(["-STOP", &pid]).status().unwrap().success());
    let started = std::time::Instant::now();
    let (out, by_server) = query(&dir, false, &[], "Click the login button");
    let waited = started.elapsed();
    let _ = Command::new("kill").args(["-CONT", &pid]).status();
    assert!(!by_server);
    assert_eq!(out, expected);
    // The client gives up after 2 s (it waited 10 s before); the margin is for a loaded machine.
    assert!(waited < std::time::Duration::from_secs(7), "waited {waited:?}");
    served.kill();
}

#[test]
fn a_server_stopped_by_sigterm_removes_its_socket() {
    let dir = seeded("query-server-sigterm");
    let mut served = Served::start(&dir);
    let socket = dir.root().join(".curator/query.sock");
    assert!(socket.exists());
    let pid = served.child.id().to_string();
    assert!(Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    let status = served.child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    assert!(!socket.exists(), "a clean stop removes the socket");
}

#[test]
fn probation_reaches_the_server_as_the_process_would_draw_it() {
    // Memory below minTrust is injected on probation into a run's step (issue 18); a server
    // answering the query must draw it exactly as the process alone does.
    let dir = seeded("query-server-probation");
    dir.write(
        &format!("products/acme/{ID_C}.md"),
        observation_file(ID_C, "Billing page loads invoices lazily", "0.2", "Scroll to load."),
    );
    let run = ["--run-id", "r_alone", "--step-index", "0"];
    let (alone, by_server) = query(&dir, true, &run, "Open the billing page");
    assert!(!by_server);
    let served = Served::start(&dir);
    let run = ["--run-id", "r_served", "--step-index", "0"];
    let (out, by_server) = query(&dir, true, &run, "Open the billing page");
    assert!(by_server);
    let alone: serde_json::Value = serde_json::from_str(&alone).unwrap();
    let out: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(out["observations"][0]["id"], ID_C, "{out}");
    assert_eq!(out["observations"][0]["probation"], true, "{out}");
    assert_eq!(out["observations"], alone["observations"]);
    let session = dir.read(".curator/runs/r_served.json");
    assert!(session.contains("\"probation\"") && session.contains(ID_C), "{session}");
    served.kill();
}

/// `serve --json` prints one line a script reads to learn where it listens (audit 8: the
/// address chosen for `--listen 127.0.0.1:0` was only on stderr, as text).
#[test]
fn serve_json_prints_where_it_listens_on_one_line() {
    let dir = seeded("serve-json");
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("curator"))
        .current_dir(dir.path())
        .env_remove("CURATOR_ROOT")
        .arg("--root")
        .arg(dir.root())
        .args(["--json", "serve", "--listen", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let started: serde_json::Value = serde_json::from_str(&line).unwrap();
    let url = started["url"].as_str().unwrap().to_owned();
    let socket = started["query_socket"].as_str().unwrap();
    assert!(socket.ends_with(".curator/query.sock"), "{started}");
    let host = url.trim_start_matches("http://").trim_end_matches('/');
    let mut stream = std::net::TcpStream::connect(host).unwrap();
    let request =
        format!("GET /api/v1/observations HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    std::io::Write::write_all(&mut stream, request.as_bytes()).unwrap();
    let mut answer = String::new();
    std::io::Read::read_to_string(&mut stream, &mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let _ = child.kill();
    let _ = child.wait();
}

/// A root given as a symlink (a deploy's `current` link) is pinned at start: serve says so,
/// since a re-pointed link is followed by fresh `curator query` processes and not by it
/// (audit 9).
#[test]
fn a_symlinked_root_is_named_as_pinned_at_start() {
    let dir = Dir::new("serve-linked-root");
    let link = dir.path().join("current");
    std::os::unix::fs::symlink(dir.root(), &link).unwrap();
    let (served, pinned) = Served::start_at(&dir, &link, "is a symlink to");
    served.kill();
    assert!(pinned.contains("until it restarts"), "{pinned}");
}
