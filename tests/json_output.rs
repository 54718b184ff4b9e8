//! docs/json-output.md is what `--json` prints: every `<!-- json: ARGS -->` command of the page
//! runs, in order, in one example workspace, and its document must have every key the page
//! marks *always* and no key the page does not name.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

/// What the page says of one command's document.
#[derive(Debug, Default)]
struct Documented {
    args: String,
    /// Keys that may appear.
    allowed: BTreeSet<String>,
    /// Keys that must appear.
    always: BTreeSet<String>,
}

/// The keys of an observation as curator prints it (the page names them once, for every
/// observation printed): those of a serialized snapshot with every optional field set, so a
/// field the snapshot gains is known here without a second list.
fn observation_keys() -> Vec<String> {
    let full = curator_core::ObservationSnapshot {
        id: String::new(),
        title: String::new(),
        content: String::new(),
        trust: 0.5,
        created: String::new(),
        last_confirmed: String::new(),
        confirmed_count: 0,
        contradicted_count: 0,
        source_test: String::new(),
        position: Some(0),
        suite_snapshot: Some(Vec::new()),
    };
    match serde_json::to_value(full).unwrap() {
        Value::Object(map) => map.keys().cloned().collect(),
        other => panic!("a snapshot serializes as an object, not {other}"),
    }
}

/// The backticked words of `text`.
fn backticked(text: &str) -> Vec<String> {
    text.split('`').skip(1).step_by(2).map(str::to_owned).collect()
}

/// The top-level keys of an inline shape such as `{query, hits: [{place, text}], truncated}`.
fn inline_keys(shape: &str) -> Vec<String> {
    let inner = shape.trim().trim_start_matches('{').trim_end_matches('}');
    let mut keys = Vec::new();
    let (mut depth, mut current) = (0, String::new());
    for c in inner.chars() {
        match c {
            '{' | '[' => depth += 1,
            '}' | ']' => depth -= 1,
            ',' if depth == 0 => keys.push(std::mem::take(&mut current)),
            _ if depth == 0 => current.push(c),
            _ => {}
        }
    }
    keys.push(current);
    keys.into_iter()
        .map(|k| k.split(':').next().unwrap_or_default().trim().to_owned())
        .filter(|k| !k.is_empty())
        .collect()
}

/// What `span` (the page's text about one command) documents.
fn documented(args: &str, span: &[&str]) -> Documented {
    let mut doc = Documented { args: args.to_owned(), ..Documented::default() };
    for line in span {
        if line.to_lowercase().contains("the observation's keys") {
            doc.allowed.extend(observation_keys());
        }
        if line.starts_with("| `") {
            // `| key(s) | always | what |`: "", the keys, "yes" or "", …
            let cells: Vec<&str> = line.split('|').collect();
            let keys = backticked(cells[1]);
            if cells.get(2).is_some_and(|c| c.trim() == "yes") {
                doc.always.extend(keys.iter().cloned());
            }
            doc.allowed.extend(keys);
        } else if line.starts_with('`') && line.contains("`: `{") {
            // "`append`: `{line}` …": the document is exactly that shape.
            for shape in backticked(line).iter().filter(|w| w.starts_with('{')).take(1) {
                let keys = inline_keys(shape);
                doc.always.extend(keys.iter().cloned());
                doc.allowed.extend(keys);
            }
        }
    }
    doc
}

/// Every command of the page with what it documents, in order.
fn page() -> Vec<Documented> {
    let text = std::fs::read_to_string("docs/json-output.md").unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let heading = |i: usize| lines[i].starts_with("## ");
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(args) = line.strip_prefix("<!-- json: ").and_then(|l| l.strip_suffix(" -->"))
        else {
            continue;
        };
        let next_comment = (i + 1..lines.len())
            .find(|&j| heading(j) || lines[j].starts_with("<!-- json: "))
            .unwrap_or(lines.len());
        let mut doc = documented(args, &lines[i + 1..next_comment]);
        if doc.allowed.is_empty() {
            // Several commands sharing one table (curate of a failed and a passed run).
            let end = (i + 1..lines.len()).find(|&j| heading(j)).unwrap_or(lines.len());
            doc = documented(args, &lines[i + 1..end]);
        }
        assert!(!doc.allowed.is_empty(), "the page documents no key for `{args}`");
        out.push(doc);
    }
    out
}

fn run(bin: &Path, ws: &Path, args: &str) -> Value {
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!("\"$CURATOR\" --json {args}"))
        .env("CURATOR", bin)
        .env("CURATOR_IDENTITY", ws.join("identity"))
        .env_remove("CURATOR_ROOT")
        .env_remove("CURATOR_STORE")
        .current_dir(ws)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "`curator --json {args}` failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("`{args}`: not JSON ({e}): {stdout}"))
}

fn check(doc: &Documented, value: &Value) {
    let objects: Vec<&serde_json::Map<String, Value>> = match value {
        Value::Array(items) => items.iter().map(|v| v.as_object().unwrap()).collect(),
        Value::Object(map) => vec![map],
        other => panic!("`{}` printed {other}", doc.args),
    };
    for object in objects {
        let keys: BTreeSet<String> = object.keys().cloned().collect();
        let missing: Vec<_> = doc.always.difference(&keys).collect();
        let unnamed: Vec<_> = keys.difference(&doc.allowed).collect();
        assert!(missing.is_empty(), "`{}` lacks {missing:?}: {value}", doc.args);
        assert!(
            unnamed.is_empty(),
            "`{}` prints keys the page does not name {unnamed:?}",
            doc.args
        );
    }
}

#[test]
fn every_documented_json_document_has_the_documented_keys() {
    let bin = assert_cmd::cargo::cargo_bin("curator");
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let init = std::process::Command::new(&bin).args(["init", "--example"]).arg(&ws).output();
    assert!(init.unwrap().status.success());
    let docs = page();
    assert!(docs.len() > 15, "{} commands found on the page", docs.len());
    for doc in &docs {
        let mut args = doc.args.clone();
        if args.contains("{pending}") {
            let queued = run(&bin, &ws, "review list");
            let id = queued[0]["id"].as_str().expect("a queued proposal").to_owned();
            args = args.replace("{pending}", &id);
        }
        check(doc, &run(&bin, &ws, &args));
    }
}
