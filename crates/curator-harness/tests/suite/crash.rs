//! A pass that dies at each of its stages, then the next pass: nothing lost, nothing archived or
//! kept twice, and the interrupted pass is rolled back (before its commit) or completed (after).
//! The process-level version — SIGKILL at random moments of a hundred passes with a writer
//! appending all the while — is `tests/harness.rs` in the binary's tests.

use std::panic::{AssertUnwindSafe, catch_unwind};

use curator_harness::{PassStage, Status, Trigger};

use crate::common::{Env, at, raw};

fn entries() -> Vec<String> {
    (0..30)
        .map(|n| match n % 3 {
            0 => raw(
                n,
                "worker",
                &format!("F-{:03}", n % 4),
                "TRICK",
                "jq -e exits non-zero on null",
            ),
            1 => raw(
                n,
                "validator",
                "F-002",
                "-",
                &format!("the checkout test {n} fails on a cold cache"),
            ),
            _ => raw(n, "worker", "F-003", "-", &format!("Implemented endpoint {n}")),
        })
        .collect()
}

fn once_each(env: &Env, lines: &[String]) {
    let raw_md = env.read("memory/raw.md");
    let archive = String::from_utf8(env.archived_bytes()).unwrap();
    for l in lines {
        let n = raw_md.matches(l.as_str()).count() + archive.matches(l.as_str()).count();
        assert_eq!(n, 1, "{l:?}\nraw.md:\n{raw_md}\narchive:\n{archive}");
    }
    let records = env.records();
    assert_eq!(
        records.iter().filter(|r| r["kind"] == "entry").count(),
        lines.iter().filter(|l| archive.contains(l.as_str())).count(),
        "one record per archived entry"
    );
}

const REFOUND_ISSUE: &str = r#"{"issues":[{"id":"I-0001","title":"Cart total wrong","severity":"major","source":"validator","foundAt":"2026-04-01T00:00:00Z","foundDuring":"F-001","status":"open","codePointer":"src/cart.ts:10","attempts":0,"notes":[]}],"nextId":2}"#;

#[test]
fn a_pass_killed_at_any_stage_is_rolled_back_or_completed_by_the_next() {
    for stage in [
        PassStage::Snapshotted,
        PassStage::Archived,
        PassStage::Committed,
        PassStage::BeforeTruncate,
    ] {
        let env = Env::new();
        let lines = entries();
        env.write("memory/raw.md", &lines.concat());
        // An issue of a passed feature that this pass's batch finds again: one whole pass
        // leaves it open, so the pass completed after a crash must too.
        env.write("features.json", r#"{"features":[{"id":"F-001","status":"passed"}]}"#);
        env.write("issues.json", REFOUND_ISSUE);
        env.write(
            "pending-issues.jsonl",
            "{\"title\":\"Cart total still wrong\",\"severity\":\"major\",\"foundDuring\":\"F-001\",\"codePointer\":\"src/cart.ts:10\"}\n",
        );
        let h = env.harness();
        let crashed = catch_unwind(AssertUnwindSafe(|| {
            h.curate_with(Trigger::Done, at("2026-04-24T12:00:00Z"), &mut |s| {
                if s == stage {
                    panic!("killed at {s:?}");
                }
            })
        }));
        assert!(crashed.is_err(), "{stage:?}");
        let journal = env.state.join("memory/.pass.json").exists();
        assert_eq!(journal, stage != PassStage::Snapshotted, "{stage:?}");
        if stage == PassStage::Archived {
            // Archived but not committed: raw.md and MEMORY.md are as before.
            assert_eq!(env.read("memory/raw.md"), lines.concat());
            assert!(!env.state.join("memory/MEMORY.md").exists());
        }
        // A worker appends before the next pass; the next pass finishes the story.
        let late = raw(90, "worker", "F-009", "-", "the late entry survives every crash");
        env.write("memory/raw.md", &(env.read("memory/raw.md") + &late));
        let report = h.curate(Trigger::Done, at("2026-04-24T13:00:00Z")).unwrap();
        let recovered = report.notes.iter().find(|n| n.starts_with("recovered: "));
        match stage {
            PassStage::Snapshotted => assert!(recovered.is_none(), "{:?}", report.notes),
            PassStage::Archived => {
                assert!(recovered.unwrap().contains("rolled back"), "{:?}", report.notes)
            }
            _ => assert!(recovered.unwrap().contains("completed"), "{:?}", report.notes),
        }
        assert!(!env.state.join("memory/.pass.json").exists());
        let issues = curator_harness::IssueFile::parse(&env.read("issues.json")).unwrap();
        assert_eq!((report.auto_closed, issues.issues[0].status), (0, Status::Open), "{stage:?}");
        let mut all = lines.clone();
        all.push(late);
        once_each(&env, &all);
        assert!(env.read("memory/MEMORY.md").contains("fails on a cold cache"), "{stage:?}");
        assert!(env.read_identity("worker").contains("jq -e exits non-zero on null"), "{stage:?}");
        // And a pass after that has nothing left to recover.
        let again = h.curate(Trigger::Done, at("2026-04-24T14:00:00Z")).unwrap();
        assert!(!again.notes.iter().any(|n| n.starts_with("recovered: ")));
        once_each(&env, &all);
    }
}

#[test]
fn a_triage_killed_after_its_journal_is_completed_once_by_the_next_pass() {
    use sha2::Digest as _;
    use std::os::unix::fs::MetadataExt as _;
    let env = Env::new();
    let h = env.harness();
    // The state a triage leaves when it dies right after committing its journal: issues.json
    // not yet written, the batch still pending, the journal saying what both become.
    let pending =
        "{\"title\":\"Cart total rounds down\",\"severity\":\"major\",\"foundDuring\":\"F-1\"}\n";
    env.write("pending-issues.jsonl", pending);
    let meta = std::fs::metadata(env.state.join("pending-issues.jsonl")).unwrap();
    let merged = r#"{"issues":[{"id":"I-0001","title":"Cart total rounds down","severity":"major","source":"validator","foundAt":"2026-04-24T10:00:00Z","foundDuring":"F-1","status":"open","attempts":0,"notes":[]}],"nextId":2}"#;
    let journal = serde_json::json!({
        "id": "triage 2026-04-24T10:00:00Z",
        "phase": "committed",
        "writes": [{"target": {"state": "issues.json"}, "text": merged}],
        "appends": [],
        "cut": {
            "file": "pending-issues.jsonl",
            "len": pending.len(),
            "sha256": sha2::Sha256::digest(pending.as_bytes()).iter().map(|b| format!("{b:02x}")).collect::<String>(),
            "dev": meta.dev(),
            "ino": meta.ino(),
            "keep": []
        }
    });
    env.write(".triage.json", &journal.to_string());
    // A finding appended after the crash stays for this pass's triage.
    let later = "{\"title\":\"Search ignores diacritics\",\"severity\":\"minor\",\"foundDuring\":\"F-2\"}\n";
    env.write("pending-issues.jsonl", &format!("{pending}{later}"));
    let report = h.curate(Trigger::Done, at("2026-04-24T12:00:00Z")).unwrap();
    assert!(
        report
            .notes
            .iter()
            .any(|n| n.contains("triage 2026-04-24T10:00:00Z was interrupted and completed")),
        "{:?}",
        report.notes
    );
    assert!(!env.state.join(".triage.json").exists());
    let file = curator_harness::IssueFile::parse(&env.read("issues.json")).unwrap();
    let titles: Vec<&str> = file.issues.iter().map(|i| i.title.as_str()).collect();
    assert_eq!(titles, ["Search ignores diacritics", "Cart total rounds down"]);
    assert_eq!(file.issues[1].attempts, 0, "the interrupted batch is merged once, not twice");
    assert_eq!(env.read("pending-issues.jsonl"), "");
}
