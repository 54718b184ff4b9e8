//! Every example a `--help` shows runs as shown (audit 8: a person copies them first).

use std::path::Path;

/// The commands whose help has an "Example" section; each runs in a fresh example workspace.
const COMMANDS: [&str; 11] =
    ["init", "add", "show", "list", "rm", "lint", "query", "curate", "history", "undo", "review"];

/// The `$ ` lines after the help's "Example" heading, continuation lines (`\`) joined.
fn examples(help: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let section = help.split_once("\nExample").map_or("", |(_, rest)| rest);
    for line in section.lines().skip(1) {
        let line = line.trim();
        if let Some(command) = line.strip_prefix("$ ") {
            out.push(command.to_owned());
        } else if let Some(last) = out.last_mut().filter(|l| l.ends_with('\\')) {
            last.pop();
            last.push_str(line);
        }
    }
    out
}

#[test]
fn every_help_example_runs_as_shown() {
    let bin = assert_cmd::cargo::cargo_bin("curator");
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for command in COMMANDS {
        let out = std::process::Command::new(&bin).args([command, "--help"]).output().unwrap();
        let help = String::from_utf8(out.stdout).unwrap();
        let lines = examples(&help);
        assert!(!lines.is_empty(), "{command} --help shows no example:\n{help}");
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        let workspace = if command == "init" {
            dir.path().to_owned()
        } else {
            let init =
                std::process::Command::new(&bin).args(["init", "--example"]).arg(&ws).output();
            assert!(init.unwrap().status.success());
            ws
        };
        run(&workspace, &path, command, &lines);
    }
}

fn run(cwd: &Path, path: &str, command: &str, lines: &[String]) {
    let script = format!("set -e\n{}\n", lines.join("\n"));
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(&script)
        .current_dir(cwd)
        .env("PATH", path)
        .env_remove("CURATOR_ROOT")
        .env_remove("CURATOR_STORE")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{command}'s example failed:\n{script}\nstdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
