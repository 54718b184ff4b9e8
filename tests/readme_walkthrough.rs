//! README.md's "A run, end to end", run verbatim (issue 15): the walkthrough a new user follows is
//! the one CI runs, so the README cannot drift from the binary.
//!
//! Every ```` ```console ```` block of that section is read in order: a line starting with `$ `
//! is a command (a line ending in `\` continues it), the lines after it are the stdout it must
//! print. The commands run in one `bash` process, in an empty scratch directory, with the built
//! `curator` first on `PATH` and no `CURATOR_*` variable of the caller's environment, so `cd`,
//! variables and `curator init --example` behave as in a user's shell. A command that exits
//! non-zero, or prints other than the README shows, fails the test naming its README line.
//!
//! Expected output is compared line by line after trimming trailing blanks; `…` in a line
//! stands for any text, and a line holding only `…` for any number of lines (ids the run makes
//! up, times, durations). The quick start's query and the harness commands run too, and the MCP snippets of "MCP
//! setup" must parse, and each stdio one is started as the client would start it and must answer
//! an MCP `tools/list`; the "HTTP API" table must list exactly the routes of the server's
//! `/api/v1/openapi.json`.

use std::path::{Path, PathBuf};
use std::process::Command;

const SECTION: &str = "## A run, end to end";
const MCP_SECTION: &str = "## MCP setup";
const HTTP_SECTION: &str = "## HTTP API";

/// One walkthrough command and what it must print.
#[derive(Debug, Clone, PartialEq)]
struct Step {
    /// 1-based README line of the `$ ` line.
    line: usize,
    command: String,
    expected: Vec<String>,
}

fn repo_file(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// The lines of the `## ` section titled `title` (its heading excluded), with 1-based line numbers.
fn section<'a>(readme: &'a str, title: &str) -> Vec<(usize, &'a str)> {
    let mut lines = readme.lines().enumerate();
    let Some((start, _)) = lines.by_ref().find(|(_, l)| l.trim_end() == title) else {
        panic!("README.md has no {title:?} section");
    };
    let _ = start;
    lines.take_while(|(_, l)| !l.starts_with("## ")).map(|(i, l)| (i + 1, l)).collect()
}

/// The fenced blocks with info string `lang` in `lines`: (line of the fence, body lines).
fn blocks<'a>(lines: &[(usize, &'a str)], lang: &str) -> Vec<Vec<(usize, &'a str)>> {
    let mut out = Vec::new();
    let mut current: Option<(bool, Vec<(usize, &str)>)> = None;
    for &(n, line) in lines {
        let fence = line.trim_start().starts_with("```");
        match &mut current {
            None if fence => {
                let info = line.trim_start().trim_start_matches('`').trim();
                current = Some((info.split_whitespace().next() == Some(lang), Vec::new()));
            }
            None => {}
            Some((wanted, body)) if fence => {
                if *wanted {
                    out.push(std::mem::take(body));
                }
                current = None;
            }
            Some((_, body)) => body.push((n, line)),
        }
    }
    assert!(current.is_none(), "README.md: a code block is not closed");
    out
}

/// The walkthrough's commands and expected outputs, in README order.
fn walkthrough(readme: &str) -> Vec<Step> {
    let lines = section(readme, SECTION);
    let mut steps: Vec<Step> = Vec::new();
    for block in blocks(&lines, "console") {
        let mut continued = false;
        for (n, line) in block {
            if continued {
                let step = steps.last_mut().expect("a continuation follows a command");
                step.command.push('\n');
                step.command.push_str(line);
                continued = line.ends_with('\\');
            } else if let Some(command) = line.strip_prefix("$ ") {
                steps.push(Step { line: n, command: command.to_owned(), expected: Vec::new() });
                continued = command.ends_with('\\');
            } else {
                let Some(step) = steps.last_mut() else {
                    panic!("README.md line {n}: output before any `$ ` command: {line:?}");
                };
                step.expected.push(line.trim_end().to_owned());
            }
        }
    }
    assert!(!steps.is_empty(), "README.md: the {SECTION:?} section has no console commands");
    steps
}

/// Whether `actual` is `line` with each `…` standing for any text.
fn line_matches(pattern: &str, actual: &str) -> bool {
    let parts: Vec<&str> = pattern.split('…').collect();
    if parts.len() == 1 {
        return pattern == actual;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !actual.starts_with(first) || actual.len() < first.len() + last.len() {
        return false;
    }
    let mut rest = &actual[first.len()..];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

/// Whether `actual` lines match the `expected` lines (`…` alone: any number of lines).
fn output_matches(expected: &[String], actual: &[&str]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((first, rest)) if first == "…" => {
            (0..=actual.len()).any(|skip| output_matches(rest, &actual[skip..]))
        }
        Some((first, rest)) => actual
            .split_first()
            .is_some_and(|(line, more)| line_matches(first, line) && output_matches(rest, more)),
    }
}

/// The bash script that runs `steps`, each one's stdout into `out/<i>.out`; the first command
/// that fails stops the script, which says which on stderr and exits 99.
fn script(steps: &[Step], out: &Path) -> String {
    let mut s = String::from("set -u -o pipefail\n");
    for (i, step) in steps.iter().enumerate() {
        s.push_str(&format!(
            "{{\n{}\n}} > '{}/{i}.out'\nrc=$?\nif [ $rc -ne 0 ]; then echo \"walkthrough step {i} exited $rc\" >&2; exit 99; fi\n",
            step.command,
            out.display()
        ));
    }
    s
}

/// `bash -c SCRIPT` in `cwd` as a user's shell would run it: the built `curator` first on
/// `PATH`, `HOME` at `home`, no `CURATOR_*` variable of the caller's environment.
fn bash(script: &str, cwd: &Path, home: &Path) -> Command {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_curator"));
    let path = std::env::join_paths(
        std::iter::once(bin.parent().unwrap().to_path_buf())
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
    )
    .unwrap();
    let mut cmd = Command::new("bash");
    cmd.args(["--noprofile", "--norc", "-c", script])
        .current_dir(cwd)
        .env("PATH", path)
        .env("HOME", home);
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("CURATOR_") {
            cmd.env_remove(key);
        }
    }
    cmd
}

/// Runs the walkthrough of `readme` in a fresh scratch directory, returned with its working
/// directory `work/` as the commands left it; `Err` says what went wrong.
fn run_walkthrough(readme: &str) -> Result<tempfile::TempDir, String> {
    let steps = walkthrough(readme);
    let scratch = tempfile::tempdir().expect("scratch dir");
    let work = scratch.path().join("work");
    let out = scratch.path().join("out");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(&out).unwrap();
    let mut cmd = bash(&script(&steps, &out), &work, scratch.path());
    let result = cmd.output().expect("run bash");
    let stderr = String::from_utf8_lossy(&result.stderr);
    for (i, step) in steps.iter().enumerate() {
        let Ok(actual) = std::fs::read_to_string(out.join(format!("{i}.out"))) else {
            break;
        };
        if stderr.contains(&format!("walkthrough step {i} exited")) {
            return Err(format!(
                "README.md line {}: `{}` failed ({}); stdout:\n{actual}\nstderr:\n{stderr}",
                step.line,
                step.command,
                stderr.lines().rev().find(|l| l.starts_with("walkthrough step")).unwrap_or(""),
            ));
        }
        let lines: Vec<&str> = actual.lines().map(str::trim_end).collect();
        if !output_matches(&step.expected, &lines) {
            return Err(format!(
                "README.md line {}: `{}` printed other than the README shows.\n--- README:\n{}\n--- actual:\n{actual}",
                step.line,
                step.command,
                step.expected.join("\n"),
            ));
        }
    }
    if !result.status.success() {
        return Err(format!("the walkthrough exited {:?}; stderr:\n{stderr}", result.status));
    }
    Ok(scratch)
}

/// Every file under `dir` (relative path → bytes), hidden paths (`.curator/`) left out.
fn files_under(dir: &Path) -> std::collections::BTreeMap<PathBuf, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(path) = stack.pop() {
        let hidden = path.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.'));
        if hidden && path != dir {
            continue;
        }
        if path.is_dir() {
            stack.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
        } else {
            let rel = path.strip_prefix(dir).unwrap().to_path_buf();
            out.insert(rel, std::fs::read(&path).unwrap());
        }
    }
    out
}

fn readme() -> String {
    std::fs::read_to_string(repo_file("README.md")).expect("read README.md")
}

#[test]
fn readme_walkthrough_runs_verbatim() {
    let scratch = run_walkthrough(&readme()).unwrap_or_else(|e| panic!("{e}"));
    // The walkthrough left r1's three confirms and the approved proposal, nothing else.
    let demo = scratch.path().join("work/demo");
    let memory = demo.join("agent-qa-memory");
    let example = files_under(&repo_file("examples/agent-qa-memory"));
    let left = files_under(&memory);
    let changed: Vec<&PathBuf> = left.keys().filter(|k| example.get(*k) != left.get(*k)).collect();
    assert_eq!(changed.len(), 4, "{changed:?}");
    let approved = changed
        .iter()
        .find(|k| !example.contains_key(**k))
        .unwrap_or_else(|| panic!("no approved observation among {changed:?}"));
    let id = approved.file_stem().unwrap().to_str().unwrap().to_owned();

    // The README says: undoing the approval (its run id is in the journal) and then r1 leaves
    // every observation file byte for byte what `init --example` wrote, which is the
    // repository's examples/ (the walkthrough never touched those).
    let curator = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_curator"))
            .args(args)
            .current_dir(&demo)
            .env_remove("CURATOR_ROOT")
            .env_remove("CURATOR_STORE")
            .output()
            .unwrap();
        assert!(out.status.success(), "curator {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let history: serde_json::Value =
        serde_json::from_str(&curator(&["--json", "history", &id])).unwrap();
    let approval = history
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["action"] == "approve")
        .unwrap_or_else(|| panic!("no approval in {history}"))["run_id"]
        .as_str()
        .unwrap()
        .to_owned();
    curator(&["undo", &approval]);
    curator(&["undo", "r1"]);
    let restored = files_under(&memory);
    assert!(restored == example, "the undos did not restore the example memory");
}

/// Copies the tree `from` to `to` (files and folders only), hidden paths (`.curator/`) left out.
fn copy_tree(from: &Path, to: &Path) {
    for (rel, bytes) in files_under(from) {
        let path = to.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
}

/// The quick start is two commands on a fresh checkout: `cargo run` of one query on the example
/// memory directory, then `./scripts/test`. The query runs as shown (the built binary standing
/// in for `cargo run --locked --`, on a copy of the checkout's example so the test writes nothing
/// into the repository) and prints that step's memory block; the test runner it names exists and
/// is executable (running it here would run this suite inside itself).
#[test]
fn readme_quick_start_runs_verbatim() {
    let readme = readme();
    let lines = section(&readme, "## Quick start");
    let commands: Vec<&str> = blocks(&lines, "sh").into_iter().flatten().map(|(_, l)| l).collect();
    let [query, tests] = commands.as_slice() else {
        panic!("the quick start is not two commands: {commands:?}");
    };
    let args = query.strip_prefix("cargo run --locked -- ").unwrap_or_else(|| {
        panic!("the quick start's first command is not `cargo run --locked --`: {query}")
    });
    assert!(
        args.contains("--root examples/agent-qa-memory") && args.contains(" query "),
        "{query}"
    );
    assert_eq!(*tests, "./scripts/test");
    let runner = repo_file("scripts/test");
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&runner).unwrap().permissions());
    assert!(mode & 0o111 != 0, "scripts/test is not executable");

    let checkout = tempfile::tempdir().unwrap();
    copy_tree(&repo_file("examples"), &checkout.path().join("examples"));
    let script = format!("set -e -u -o pipefail\ncurator {args}\n");
    let out = bash(&script, checkout.path(), checkout.path()).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success()
            && stdout.starts_with("<memory-context>")
            && stdout.contains("Order history lives under Account"),
        "the quick start's query failed ({:?}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    // It only read the example: every tracked file is as it was.
    assert!(files_under(&checkout.path().join("examples")) == files_under(&repo_file("examples")));
}

/// The harness commands of "Harness memory" run as shown, in an empty directory, and the curator
/// pass prints its `CURATED` line.
#[test]
fn readme_harness_commands_run_verbatim() {
    let readme = readme();
    let lines = section(&readme, "## Harness memory");
    let commands: Vec<&str> = blocks(&lines, "sh").into_iter().flatten().map(|(_, l)| l).collect();
    assert!(commands.iter().any(|c| c.contains("harness --state-dir $S curate")), "{commands:?}");
    let scratch = tempfile::tempdir().unwrap();
    let script = format!("set -e -u -o pipefail\n{}\n", commands.join("\n"));
    let out = bash(&script, scratch.path(), scratch.path()).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.lines().any(|l| l.starts_with("CURATED")),
        "the harness commands failed ({:?}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("STRIPE_SECRET"), "trace found nothing:\n{stdout}");
}

/// The walkthrough test can fail: a README whose command the binary rejects, or whose output the
/// binary does not print, is reported with its line.
#[test]
fn a_drifted_readme_fails_the_walkthrough() {
    let readme = readme();
    let bad_flag =
        readme.replacen("curate runs/passed.json", "curate --record runs/passed.json", 1);
    assert!(bad_flag != readme, "the walkthrough curates runs/passed.json");
    let err = run_walkthrough(&bad_flag).expect_err("an unknown flag must fail");
    assert!(err.contains("--record runs/passed.json") && err.contains("failed"), "{err}");

    let bad_output = readme.replacen(
        "  Memory: 3 confirmed, 1 proposed for review (…)",
        "  Memory: 2 added (…)",
        1,
    );
    assert!(bad_output != readme, "the walkthrough shows curate's summary line");
    let err = run_walkthrough(&bad_output).expect_err("a wrong expected output must fail");
    assert!(err.contains("printed other than the README shows"), "{err}");
}

#[test]
fn walkthrough_parsing_and_matching() {
    let readme = "# x\n## A run, end to end\ntext\n```console\n$ echo a \\\n  b\na b\n$ true\n```\n\
                  ```sh\n$ not-run\n```\n## Next\n```console\n$ not-either\n```\n";
    let steps = walkthrough(readme);
    assert_eq!(steps.len(), 2, "{steps:?}");
    assert_eq!(steps[0].command, "echo a \\\n  b");
    assert_eq!((steps[0].line, steps[0].expected.clone()), (5, vec!["a b".to_owned()]));
    assert!(steps[1].expected.is_empty());

    assert!(line_matches("run … path", "run r1 (Passed) path"));
    assert!(line_matches("a…", "a") && line_matches("…", "") && line_matches("…z", "xyz"));
    assert!(!line_matches("a…b", "ab c") && !line_matches("abc", "abd"));
    assert!(!line_matches("aa…aa", "aaa"), "prefix and suffix may not overlap");
    let exp = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert!(output_matches(&exp(&["…", "b", "…"]), &["a", "b", "c"]));
    assert!(output_matches(&exp(&["…"]), &[]));
    assert!(!output_matches(&exp(&["a"]), &["a", "b"]), "extra output is drift");
    assert!(!output_matches(&exp(&[]), &["a"]));
}

/// The placeholder project directory of the README's MCP snippets.
const SNIPPET_PROJECT: &str = "/home/me/project";

/// Starts `curator ARGS` with `env` as a client would, completes the MCP handshake, lists the
/// tools and returns the `tools/list` response line; the server is killed after 60 s.
fn mcp_tools_list(args: &[String], env: &[(String, String)], cwd: &Path) -> String {
    use std::io::{BufRead, Write};
    let mut child = Command::new(env!("CARGO_BIN_EXE_curator"))
        .args(args)
        .env_remove("CURATOR_ROOT")
        .env_remove("CURATOR_STORE")
        .envs(env.iter().map(|(k, v)| (k, v)))
        .current_dir(cwd)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn curator");
    let mut stdin = child.stdin.take().unwrap();
    for message in [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"readme","version":"0"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
    ] {
        writeln!(stdin, "{message}").unwrap();
    }
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let found = std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
            .find(|l| l.contains(r#""id":2"#));
        let _ = tx.send(found);
    });
    let answer = rx.recv_timeout(std::time::Duration::from_secs(60));
    drop(stdin);
    if answer.is_err() {
        let _ = child.kill();
    }
    let out = child.wait_with_output().expect("wait for curator");
    match answer {
        Ok(Some(line)) => line,
        _ => panic!(
            "curator {args:?} gave no tools/list answer; stderr:\n{}",
            String::from_utf8_lossy(&out.stderr)
        ),
    }
}

/// Every MCP client snippet is valid JSON; a stdio one starts `curator … mcp` with flags the
/// binary accepts — it is run, with the placeholder project replaced by an `init --example`
/// workspace, and must answer `tools/list` — and an HTTP one points at `/mcp`. The README's
/// tools table names exactly the tools those servers list.
#[test]
fn readme_mcp_snippets_are_valid_json_running_curator_mcp() {
    let readme = readme();
    let lines = section(&readme, MCP_SECTION);
    let snippets = blocks(&lines, "json");
    assert!(snippets.len() >= 3, "one snippet per client, found {}", snippets.len());
    let scratch = tempfile::tempdir().unwrap();
    let project = scratch.path().join("project");
    let init = Command::new(env!("CARGO_BIN_EXE_curator"))
        .args(["init", "--example"])
        .arg(&project)
        .output()
        .unwrap();
    assert!(init.status.success(), "{}", String::from_utf8_lossy(&init.stderr));
    let place = |v: &str| v.replace(SNIPPET_PROJECT, project.to_str().unwrap());
    let mut started = 0;
    let mut served = std::collections::BTreeSet::new();
    for body in snippets {
        let line = body.first().map_or(0, |(n, _)| *n);
        let text: String = body.iter().map(|(_, l)| format!("{l}\n")).collect();
        let value: serde_json::Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("README.md line {line}: not valid JSON: {e}"));
        let servers = value["mcpServers"]
            .as_object()
            .unwrap_or_else(|| panic!("README.md line {line}: no mcpServers object"));
        for (name, server) in servers {
            if let Some(url) = server["url"].as_str() {
                assert!(url.ends_with("/mcp"), "README.md line {line}: {name}: {url} is not /mcp");
                continue;
            }
            assert_eq!(server["command"], "curator", "README.md line {line}: {name}");
            let args: Vec<String> = server["args"]
                .as_array()
                .unwrap_or_else(|| panic!("README.md line {line}: {name} has no args"))
                .iter()
                .map(|a| place(a.as_str().expect("args are strings")))
                .collect();
            assert!(args.iter().any(|a| a == "mcp"), "README.md line {line}: {name}: {args:?}");
            let env: Vec<(String, String)> = server["env"]
                .as_object()
                .map(|e| e.iter().map(|(k, v)| (k.clone(), place(v.as_str().unwrap()))).collect())
                .unwrap_or_default();
            let answer = mcp_tools_list(&args, &env, scratch.path());
            // Tool descriptions and schemas are read by users too: no spec section cited
            // (docs_citations.rs).
            assert!(!answer.contains('§'), "tools/list cites a spec section: {answer}");
            let answer: serde_json::Value = serde_json::from_str(&answer)
                .unwrap_or_else(|e| panic!("README.md line {line}: {name}: {e}: {answer}"));
            let tools = answer["result"]["tools"]
                .as_array()
                .unwrap_or_else(|| panic!("README.md line {line}: {name}: {answer}"));
            assert!(!tools.is_empty(), "README.md line {line}: {name}: no tools");
            served.extend(tools.iter().map(|t| t["name"].as_str().unwrap().to_owned()));
            started += 1;
        }
    }
    assert!(started >= 2, "the stdio snippets were not run");
    // The tools table lists exactly what the snippets' servers offer (one of them has the
    // harness tools).
    let listed = readme_tools(&readme);
    assert!(
        listed == served,
        "README.md's MCP tools table differs from tools/list:\n  only in the README: {:?}\n  only served: {:?}",
        listed.difference(&served).collect::<Vec<_>>(),
        served.difference(&listed).collect::<Vec<_>>(),
    );
}

/// The tool names of the "MCP setup" tools table: every backticked name in a row's first column.
fn readme_tools(readme: &str) -> std::collections::BTreeSet<String> {
    let mut tools = std::collections::BTreeSet::new();
    for (_, line) in section(readme, MCP_SECTION) {
        let Some(first) = line.strip_prefix('|').and_then(|l| l.split('|').next()) else {
            continue;
        };
        for span in first.split('`').skip(1).step_by(2) {
            if span.chars().all(|c| c.is_ascii_lowercase() || c == '_') && !span.is_empty() {
                tools.insert(span.to_owned());
            }
        }
    }
    tools
}

/// `(METHOD, path)` pairs of the "HTTP API" table: every backticked `METHODS /api/v1/…` of its
/// first column, `GET/POST` meaning both.
fn readme_routes(readme: &str) -> std::collections::BTreeSet<(String, String)> {
    let mut routes = std::collections::BTreeSet::new();
    for (_, line) in section(readme, HTTP_SECTION) {
        let Some(first) = line.strip_prefix('|').and_then(|l| l.split('|').next()) else {
            continue;
        };
        for span in first.split('`').skip(1).step_by(2) {
            let Some((methods, path)) = span.split_once(' ') else { continue };
            if !path.starts_with("/api/") {
                continue;
            }
            for method in methods.split('/') {
                routes.insert((method.to_owned(), path.to_owned()));
            }
        }
    }
    routes
}

/// The README's table of HTTP paths is the server's: the same routes as its OpenAPI document.
#[test]
fn readme_http_paths_match_openapi() {
    let readme_routes = readme_routes(&readme());
    let dir = crate::util::Dir::new("readme-http");
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_curator"));
    cmd.arg("--root").arg(dir.root()).args(["serve", "--listen", "127.0.0.1:0"]);
    let served = crate::util::Served::start(cmd);
    let (status, doc) = served.call("GET", "/api/v1/openapi.json", None);
    assert_eq!(status, 200, "{doc}");
    assert!(!doc.to_string().contains('§'), "openapi.json cites a spec section");
    let mut served_routes = std::collections::BTreeSet::new();
    for (path, ops) in doc["paths"].as_object().expect("paths") {
        for method in ops.as_object().unwrap().keys() {
            if ["get", "post", "put", "patch", "delete"].contains(&method.as_str()) {
                served_routes.insert((method.to_uppercase(), path.clone()));
            }
        }
    }
    let missing: Vec<_> = served_routes.difference(&readme_routes).collect();
    let phantom: Vec<_> = readme_routes.difference(&served_routes).collect();
    assert!(
        missing.is_empty() && phantom.is_empty(),
        "README \"HTTP API\" table vs openapi.json: not in the README {missing:?}; not served {phantom:?}"
    );
}
