use curator_harness::{
    FeatureStatuses, IssueFile, NewIssue, Severity, Status, Trigger, auto_close, read_pending,
    triage,
};

use crate::common::{Env, at, changed_paths, fixture};

fn pending(lines: &[&str]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

#[test]
fn ids_allocate_past_odd_shapes_and_aliases_load() {
    let mut file = IssueFile::parse(&fixture("issues_odd_ids.json")).unwrap();
    // Only I-<digits> participate: max is I-12345, so the stored nextId 3 is overridden.
    assert_eq!(file.next_id, 12346);
    let by_id = |f: &IssueFile, id: &str| f.issues.iter().find(|i| i.id == id).unwrap().clone();
    assert_eq!(by_id(&file, "I-abc1").status, Status::Open); // new → open
    assert_eq!(by_id(&file, "I-abc1").severity, Severity::Major); // HIGH → major
    assert_eq!(by_id(&file, "PENDING-3").status, Status::Open); // reopened → open
    assert_eq!(by_id(&file, "PENDING-3").severity, Severity::Nit); // informational → nit
    assert_eq!(by_id(&file, "I-0007").status, Status::Closed); // resolved → closed
    assert_eq!(by_id(&file, "I-0002").status, Status::Wontfix); // wont_fix → wontfix
    assert_eq!(by_id(&file, "I-12345").severity, Severity::Minor); // medium → minor
    assert_eq!(file.allocate_id(), "I-12346");

    let mut small = IssueFile::parse(r#"{"issues":[{"id":"I-STUCK","title":"x"},{"id":"I-abc1","title":"y"},{"id":"PENDING-3","title":"z"}]}"#).unwrap();
    assert_eq!(small.allocate_id(), "I-0001", "no numeric id ⇒ nextId 1");
    assert_eq!(IssueFile::parse("").unwrap().next_id, 1);
    // A stored nextId above 1 + the largest id does not decide either (§3.2).
    let high = IssueFile::parse(r#"{"issues":[{"id":"I-0007","title":"a"}],"nextId":50}"#).unwrap();
    assert_eq!(high.next_id, 8);
}

#[test]
fn dedupe_by_pointer_or_title_bumps_attempts_and_severity_up_only() {
    let mut file = IssueFile::parse(&fixture("issues_odd_ids.json")).unwrap();
    let batch = read_pending(
        &pending(&[
            // Title overlap with the acknowledged I-STUCK (Jaccard 1.0 after tokenizing).
            r#"{"title":"orchestrator LOOPS on the same plan item!","severity":"minor","foundDuring":"F-031"}"#,
            // Same pointer as I-0007, but I-0007 is closed: a re-found bug is a new issue.
            r#"{"title":"Cart total wrong with discount","severity":"major","foundDuring":"F-031","codePointer":"apps/web/src/cart.ts:88"}"#,
            // Same pointer as the issue just created above: same-batch dedupe, severity bumped.
            r#"{"title":"Totally different words here","severity":"critical","foundDuring":"F-032","codePointer":"apps/web/src/cart.ts:88"}"#,
            // Drifted line number: not a pointer match, and the title differs: new.
            r#"{"title":"Discount field clears on reload","severity":"nit","foundDuring":"F-032","codePointer":"apps/web/src/cart.ts:95"}"#,
        ]),
        "2026-04-24T12:00:00Z",
    );
    let counts = triage(&mut file, &batch, "2026-04-24T12:00:00Z");
    assert_eq!((counts.merged, counts.deduped), (2, 2));
    let stuck = file.issues.iter().find(|i| i.id == "I-STUCK").unwrap();
    assert_eq!(stuck.attempts, 1);
    assert_eq!(stuck.severity, Severity::Critical, "severity never goes down");
    // §3.3's note, exactly; the duplicate's own wording survives beside it (issue 16: merging
    // keeps evidence).
    let note = stuck.notes.last().unwrap();
    assert_eq!((note.by.as_str(), note.text.as_str()), ("validator", "Resurfaced during F-031"));
    assert_eq!(
        note.extra["resurfaced"],
        serde_json::json!({"title": "orchestrator LOOPS on the same plan item!"})
    );
    // New issues go to the front, newest first.
    assert_eq!(file.issues[0].id, "I-12347");
    assert_eq!(file.issues[0].title, "Discount field clears on reload");
    let cart = &file.issues[1];
    assert_eq!(
        (cart.id.as_str(), cart.attempts, cart.severity),
        ("I-12346", 1, Severity::Critical)
    );
    assert_eq!(cart.status, Status::Open);
    assert_eq!(cart.source, "validator");
}

#[test]
fn jaccard_threshold_is_085_and_closed_issues_never_match() {
    let mut file = IssueFile::parse(
        r#"{"issues":[{"id":"I-0001","title":"login form rejects valid email addresses with plus sign","severity":"minor","status":"fixing"}]}"#,
    )
    .unwrap();
    // 9 shared of 10 tokens = 0.9 ≥ 0.85: duplicate (fixing is eligible).
    let dup = read_pending(
        r#"{"title":"login form rejects valid email addresses with plus sign again","severity":"nit"}"#,
        "T",
    );
    assert_eq!(triage(&mut file, &dup, "T").deduped, 1);
    // 7 of 11 ≈ 0.64: not a duplicate.
    let new = read_pending(
        r#"{"title":"login form rejects valid phone numbers with plus sign","severity":"nit"}"#,
        "T",
    );
    assert_eq!(triage(&mut file, &new, "T").merged, 1);
    let note = &file.issues[1].notes[0];
    assert_eq!(note.text, "Resurfaced during validation");
    assert_eq!(
        note.extra["resurfaced"]["title"],
        "login form rejects valid email addresses with plus sign again"
    );
}

#[test]
fn auto_close_needs_pointer_passed_feature_and_no_fresh_finding() {
    let mut file = IssueFile::parse(
        r#"{"issues":[
        {"id":"I-0001","title":"a","status":"open","foundDuring":"F-1","codePointer":"src/a.ts:1"},
        {"id":"I-0002","title":"b","status":"open","foundDuring":"F-1"},
        {"id":"I-0003","title":"c","status":"acknowledged","foundDuring":"F-2","codePointer":"src/c.ts:1"},
        {"id":"I-0004","title":"d","status":"open","foundDuring":"F-1","codePointer":"src/d.ts:1"},
        {"id":"I-0005","title":"e","status":"fixing","foundDuring":"F-2","linkedFeatureId":"F-FIX-001","codePointer":"src/e.ts:1"},
        {"id":"I-0006","title":"f","status":"wontfix","foundDuring":"F-1","codePointer":"src/f.ts:1"},
        {"id":"I-0007","title":"g","status":"open","foundDuring":"F-2","linkedFeatureId":"F-1","codePointer":"src/g.ts:1"}
        ],"nextId":8}"#,
    )
    .unwrap();
    let features = FeatureStatuses::parse(
        r#"{"features":[{"id":"F-1","status":"passed"},{"id":"F-2","status":"failed"},{"id":"F-FIX-001","status":"passed"}]}"#,
    );
    let refound = vec!["src/d.ts:1".to_owned()];
    let closed = auto_close(&mut file, &features, &refound, "TRIGGER=done 2026-04-24", "T");
    let status = |id: &str| file.issues.iter().find(|i| i.id == id).unwrap().status;
    assert_eq!(status("I-0001"), Status::Closed); // pointer + found-during passed
    assert_eq!(status("I-0002"), Status::Open); // no pointer
    assert_eq!(status("I-0003"), Status::Acknowledged); // feature not passed
    assert_eq!(status("I-0004"), Status::Open); // re-found in this batch
    assert_eq!(status("I-0005"), Status::Closed); // fixing, linked F-FIX passed
    assert_eq!(status("I-0006"), Status::Wontfix);
    assert_eq!(status("I-0007"), Status::Closed); // linked feature wins over found-during
    assert_eq!(closed, 3);
    let note = &file.issues[0].notes[0];
    assert_eq!(
        (note.by.as_str(), note.text.as_str()),
        ("curator", "Code path verified green during TRIGGER=done 2026-04-24")
    );
}

#[test]
fn triage_on_disk_clears_the_queue_and_is_a_no_op_when_empty() {
    let env = Env::new();
    let h = env.harness();
    let issue = |title: &str, severity: &str| NewIssue {
        title: title.into(),
        severity: severity.into(),
        found_during: "F-010".into(),
        ..Default::default()
    };
    h.file_issue(
        &issue("Search returns stale results after edit", "major"),
        at("2026-04-24T10:00:00Z"),
    )
    .unwrap();
    h.file_issue(
        &issue("search returns stale results after an edit", "critical"),
        at("2026-04-24T10:01:00Z"),
    )
    .unwrap();
    assert!(
        h.file_issue(&issue("x", "high"), at("2026-04-24T10:01:00Z")).is_err(),
        "writers use canonical severities"
    );
    // Bad lines in the queue are skipped, not fatal, and kept where a person can find them.
    std::fs::OpenOptions::new()
        .append(true)
        .open(h.pending_path())
        .and_then(|mut f| std::io::Write::write_all(&mut f, b"{not json\n"))
        .unwrap();
    let r = h.triage(at("2026-04-24T11:00:00Z")).unwrap();
    assert_eq!((r.merged, r.deduped, r.skipped), (1, 1, 1));
    assert_eq!(env.read("pending-issues.jsonl"), "");
    let kept = r#"{"triage":"2026-04-24T11:00:00Z","n":0,"line":"{not json"}"#;
    assert_eq!(env.read("memory/archive/pending-skipped.jsonl"), format!("{kept}\n"));
    let file = h.load_issues().unwrap();
    assert_eq!(file.issues[0].severity, Severity::Critical);
    assert_eq!(file.issues[0].found_at, "2026-04-24T10:00:00Z");
    let before = env.snapshot();
    let r = h.triage(at("2026-04-24T12:00:00Z")).unwrap();
    assert_eq!((r.merged, r.deduped), (0, 0));
    assert_eq!(
        changed_paths(&before, &env.snapshot()),
        Vec::<std::path::PathBuf>::new(),
        "an empty queue touches nothing"
    );
    // The same bad line queued again is kept again: nothing queued is erased unseen.
    let bad_twice = b"{not json\n{not json\n";
    std::fs::OpenOptions::new()
        .append(true)
        .open(h.pending_path())
        .and_then(|mut f| std::io::Write::write_all(&mut f, bad_twice))
        .unwrap();
    h.file_issue(&issue("Checkout spinner never stops", "minor"), at("2026-04-24T12:10:00Z"))
        .unwrap();
    let r = h.triage(at("2026-04-24T12:20:00Z")).unwrap();
    assert_eq!(r.skipped, 2);
    let lines = env.read("memory/archive/pending-skipped.jsonl");
    assert_eq!(lines.lines().filter(|l| l.contains("{not json")).count(), 3, "{lines}");
    // The pass reports triage counts on its output line.
    h.file_issue(
        &issue("Search returns stale results after edit", "minor"),
        at("2026-04-24T12:30:00Z"),
    )
    .unwrap();
    let report = h.curate(Trigger::Manual, at("2026-04-24T13:00:00Z")).unwrap();
    assert!(report.line().contains("ISSUES +0 new, 1 deduped, 0 auto-closed"), "{}", report.line());
}

/// A pass that fails after its issues part (the queue already cut, the issue just resurfaced)
/// and is retried: the retry's auto-close still spares what that batch found again, as one
/// whole pass would. It closed it as verified green before the pointers outlived the failure.
#[test]
fn a_retried_pass_does_not_close_an_issue_its_failed_attempt_found_again() {
    let env = Env::new();
    env.write("features.json", r#"{"features":[{"id":"F-001","status":"passed"}]}"#);
    env.write(
        "issues.json",
        r#"{"issues":[{"id":"I-0001","title":"Cart total wrong after coupon","severity":"major","source":"validator","foundAt":"2026-04-01T00:00:00Z","foundDuring":"F-001","status":"open","codePointer":"src/cart.ts:10","attempts":0,"notes":[]}],"nextId":2}"#,
    );
    env.write(
        "pending-issues.jsonl",
        &pending(&[
            r#"{"title":"Cart total still wrong after coupon","severity":"major","foundDuring":"F-001","codePointer":"src/cart.ts:10"}"#,
        ]),
    );
    env.write(
        "memory/raw.md",
        "[2026-04-24T10:00:00Z] debugger F-001 -: Root cause: coupon math must never round twice\n",
    );
    let h = env.harness();
    // summary.md cannot be written: the memory part fails after the issues part was applied.
    std::fs::create_dir_all(env.state.join("memory/summary.md")).unwrap();
    assert!(h.curate(Trigger::Done, at("2026-04-24T12:00:00Z")).is_err());
    assert_eq!(env.read("pending-issues.jsonl"), "", "the issues part ran and cut the queue");
    std::fs::remove_dir(env.state.join("memory/summary.md")).unwrap();
    let report = h.curate(Trigger::Done, at("2026-04-24T12:01:00Z")).unwrap();
    let file =
        IssueFile::parse(&std::fs::read_to_string(env.state.join("issues.json")).unwrap()).unwrap();
    let issue = &file.issues[0];
    assert_eq!((report.auto_closed, issue.status, issue.attempts), (0, Status::Open, 1));
    assert!(!env.state.join(".refound-pointers.json").exists(), "a whole pass drops them");
    // The next whole pass, with nothing found again, closes it.
    let report = h.curate(Trigger::Done, at("2026-04-24T13:00:00Z")).unwrap();
    assert_eq!(report.auto_closed, 1);
}

/// §3.5 spares an issue a finding of "this pass's batch" points at. A batch triaged by a pass
/// killed before its auto-close, or by `harness triage` on its own, is spared by the next
/// auto-close too: the issue just came back, it is not verified green.
#[test]
fn an_issue_refound_in_an_earlier_triage_is_not_closed_by_the_next_pass() {
    let env = Env::new();
    env.write("features.json", r#"{"features":[{"id":"F-001","status":"passed"}]}"#);
    env.write(
        "issues.json",
        r#"{"issues":[{"id":"I-0001","title":"Login redirect loop","severity":"major","source":"validator","foundAt":"2026-01-01T00:00:00Z","foundDuring":"F-001","status":"open","codePointer":"src/login.ts:10","attempts":0,"notes":[]}],"nextId":2}"#,
    );
    env.write(
        "pending-issues.jsonl",
        &pending(&[
            r#"{"title":"Login redirect loop again","severity":"major","foundDuring":"F-001","codePointer":"src/login.ts:10"}"#,
        ]),
    );
    let h = env.harness();
    h.triage(at("2026-04-24T11:00:00Z")).unwrap();
    let status = || {
        let file =
            IssueFile::parse(&std::fs::read_to_string(env.state.join("issues.json")).unwrap())
                .unwrap();
        let issue = file.issues.iter().find(|i| i.id == "I-0001").unwrap().clone();
        (issue.status, issue.attempts)
    };
    assert_eq!(status(), (Status::Open, 1), "resurfaced once");
    let report = h.curate(Trigger::Done, at("2026-04-24T12:00:00Z")).unwrap();
    assert_eq!((report.auto_closed, status()), (0, (Status::Open, 1)), "spared, not re-counted");
    // That auto-close saw the finding; with nothing new, the next one closes the issue.
    let report = h.curate(Trigger::Done, at("2026-04-24T13:00:00Z")).unwrap();
    assert_eq!((report.auto_closed, status()), (1, (Status::Closed, 1)));
    assert!(!env.state.join(".refound-pointers.json").exists());
}
