//! `curator init --example DIR` (issue 15): the example workspace is written whole, never over
//! anything, and its run records are valid for `curate` and do what the rules say.

use std::path::Path;

use serde_json::Value;

use crate::util::Dir;

const PLUM: &str = "obs_plum-iris-marsh-maple-ruby-planet-violet-atlas-pine-mesa";
const ARROW: &str = "obs_arrow-eagle-kite-rain-camel-grove-shell-fox-candle-dahlia";

/// `curator ARGS` run in `cwd`, with no `CURATOR_ROOT` of the caller.
fn curator(cwd: &Path, args: &[&str]) -> std::process::Output {
    let mut cmd = assert_cmd::Command::cargo_bin("curator").expect("curator binary");
    cmd.current_dir(cwd).env_remove("CURATOR_ROOT").env_remove("CURATOR_STORE").args(args);
    cmd.output().expect("run curator")
}

fn ok(out: &std::process::Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn trust_of(cwd: &Path, id: &str) -> f64 {
    let shown: Value = serde_json::from_str(&ok(&curator(cwd, &["--json", "show", id]))).unwrap();
    shown["trust"].as_f64().unwrap_or_else(|| panic!("no trust in {shown}"))
}

#[test]
fn example_is_written_into_a_new_dir_with_json_and_refuses_to_overwrite() {
    let dir = Dir::new("init-example");
    let target = dir.path().join("demo");
    let written: Value = serde_json::from_str(&ok(&curator(
        dir.path(),
        &["--json", "init", "--example", target.to_str().unwrap()],
    )))
    .unwrap();
    assert_eq!(written["observations"], 19, "{written}");
    assert_eq!(written["runs"].as_array().unwrap().len(), 3, "{written}");
    for file in written["files"].as_array().unwrap() {
        let rel = file.as_str().unwrap();
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples").join(rel);
        assert_eq!(std::fs::read(target.join(rel)).unwrap(), std::fs::read(repo).unwrap(), "{rel}");
    }
    // A user's edit survives a second init: it is refused before anything is written.
    let config = target.join("agent-qa.config.yaml");
    std::fs::write(&config, "# mine\n").unwrap();
    std::fs::remove_dir_all(target.join("runs")).unwrap();
    let out = curator(dir.path(), &["init", "--example", target.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("already holds agent-qa-memory, agent-qa.config.yaml")
            && stderr.contains("nothing was written"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(&config).unwrap(), "# mine\n");
    assert!(!target.join("runs").exists(), "a refused init writes nothing");
}

#[test]
fn example_goes_into_an_existing_dir_beside_other_files_but_not_onto_a_file() {
    let dir = Dir::new("init-example-existing");
    std::fs::write(dir.path().join("notes.txt"), "keep").unwrap();
    let text = ok(&curator(dir.path(), &["init", "--example", "."]));
    assert!(text.starts_with("wrote the example workspace into .: "), "{text}");
    assert_eq!(std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(), "keep");
    // From inside, the example's config finds the memory root without --root.
    let listed = ok(&curator(dir.path(), &["list", "--tier", "product", "--scope", "acme-shop"]));
    assert!(listed.contains(PLUM), "{listed}");

    let out = curator(dir.path(), &["init", "--example", "notes.txt"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not a directory"));
    let out = curator(dir.path(), &["init", "--example"]);
    assert_eq!(out.status.code(), Some(2), "--example needs a DIR");
}

/// The three run records of examples/runs do what docs/rules says: the failed run blames only
/// the first failed step's injections, the ablation run (rerun passed) both suspects (neither
/// has a record yet), the passed run proposes its MEMO for review.
#[test]
fn example_run_records_follow_the_failed_run_and_ablation_rules() {
    let dir = Dir::new("init-example-runs");
    ok(&curator(dir.path(), &["init", "--example", "demo"]));
    let demo = dir.path().join("demo");
    let (plum, arrow) = (trust_of(&demo, PLUM), trust_of(&demo, ARROW));

    let log: Value =
        serde_json::from_str(&ok(&curator(&demo, &["--json", "curate", "runs/failed.json"])))
            .unwrap();
    assert_eq!((log["added"].as_u64(), log["deprecated"].as_u64()), (Some(0), Some(1)), "{log}");
    assert!((trust_of(&demo, PLUM) - (plum - 0.1)).abs() < 1e-9, "the failed step's injection");
    assert_eq!(trust_of(&demo, ARROW), arrow, "an earlier passed step's injection is not blamed");
    ok(&curator(&demo, &["undo", "r2"]));

    let log: Value =
        serde_json::from_str(&ok(&curator(&demo, &["--json", "curate", "runs/ablation.json"])))
            .unwrap();
    assert_eq!(log["case"], "ablation_passed", "{log}");
    assert_eq!(log["deprecated"].as_u64(), Some(2), "{log}");
    assert!((trust_of(&demo, ARROW) - (arrow - 0.1)).abs() < 1e-9);

    // Without its run session (no `query --run-id r1`), the passed run only proposes its MEMO,
    // which waits for review (the example's config leaves `curator.review` at its default).
    let log: Value =
        serde_json::from_str(&ok(&curator(&demo, &["--json", "curate", "runs/passed.json"])))
            .unwrap();
    let counts = ["added", "confirmed", "proposed"].map(|k| log[k].as_u64());
    assert_eq!(counts, [Some(0), Some(0), Some(1)], "{log}");
    assert_eq!(log["deltas"][0]["action"], "propose", "{log}");
    assert!(log["deltas"][0]["after"]["title"].as_str().unwrap().starts_with("Order history:"));
}
