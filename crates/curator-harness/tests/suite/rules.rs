//! One test per rule and error of issue 16: keep by default, near-format lines, code pointers,
//! forgotten conventions, entry dates, issue sources, merged duplicates, isolation, missing state
//! dirs, a busy pass lock, bytes and bounds.

use curator_harness::{
    Error, Harness, HarnessOptions, IDENTITY_MAX_BYTES, IDENTITY_MAX_LINES, IdentityEntry,
    IdentityFile, IdentitySection, IssueFile, MemoryDoc, NewIssue, Section, Trigger,
};

use crate::common::{Env, at, raw};

fn disposition_of<'a>(records: &'a [serde_json::Value], needle: &str) -> &'a serde_json::Value {
    records
        .iter()
        .find(|r| r["text"].as_str().is_some_and(|t| t.contains(needle)))
        .unwrap_or_else(|| panic!("no archive record for {needle:?} in {records:#?}"))
}

/// The issue's own reproduction: a debugger's root cause among ten progress notes.
#[test]
fn a_lesson_without_a_keyword_is_kept_and_trace_finds_where_it_went() {
    let env = Env::new();
    let h = env.harness();
    h.append(
        "debugger",
        Some("F-031"),
        false,
        "Root cause of the flaky checkout test: the Stripe webhook handler reads STRIPE_SECRET at import time; read it lazily inside the handler",
        at("2026-04-20T09:00:00Z"),
    )
    .unwrap();
    for i in 1..=10 {
        h.append(
            "worker",
            Some(&format!("F-06{i}")),
            false,
            &format!("Implemented endpoint {i}"),
            at("2026-04-20T10:00:00Z"),
        )
        .unwrap();
    }
    let report = h.curate(Trigger::Done, at("2026-04-24T12:00:00Z")).unwrap();
    assert_eq!(report.absorbed, 1);
    let memory = env.read("memory/MEMORY.md");
    assert!(memory.contains("- [2026-04-20] Root cause of the flaky checkout test: the Stripe webhook handler reads STRIPE_SECRET at import time"), "{memory}");
    // It left raw.md (11 entries, last 10 kept) — archived byte for byte, with its disposition.
    let records = env.records();
    let r = disposition_of(&records, "STRIPE_SECRET");
    assert_eq!(r["disposition"], "promoted");
    assert_eq!(r["to"][0], "MEMORY.md ## Lessons");
    assert_eq!((r["role"].as_str(), r["feature"].as_str()), (Some("debugger"), Some("F-031")));
    let archived = String::from_utf8(env.archived_bytes()).unwrap();
    assert!(archived.starts_with("[2026-04-20T09:00:00Z] debugger F-031 -: Root cause"));
    // trace: the archive record and the MEMORY.md item.
    let t = h.trace("stripe_secret").unwrap();
    let places: Vec<&str> = t.hits.iter().map(|h| h.place.as_str()).collect();
    assert_eq!(places, ["archive", "MEMORY.md ## Lessons"]);
    assert_eq!(t.hits[0].still_there, Some(true));
    assert!(t.render().contains("promoted"), "{}", t.render());
    // The next pass absorbs the progress notes as they leave raw.md, saying why.
    for i in 0..10 {
        h.append(
            "worker",
            Some("F-070"),
            false,
            &format!("started F-070 step {i}"),
            at("2026-04-21T10:00:00Z"),
        )
        .unwrap();
    }
    h.curate(Trigger::Done, at("2026-04-25T12:00:00Z")).unwrap();
    let records = env.records();
    let r = disposition_of(&records, "Implemented endpoint 3");
    assert_eq!(
        (r["disposition"].as_str(), r["reason"].as_str()),
        (Some("absorbed"), Some("progress chatter"))
    );
    let status = h.status().unwrap();
    assert_eq!(status.dispositions.entries_of(curator_harness::Disposition::Absorbed), 10);
    assert!(
        status.render().contains("archive: 1 promoted, 0 merged, 0 kept, 10 absorbed, 0 dropped"),
        "{}",
        status.render()
    );
}

#[test]
fn findings_in_plain_prose_are_kept_in_their_roles_sections() {
    let env = Env::new();
    let mut text = String::new();
    text += &raw(1, "validator", "F-040", "-", "CI needs pgcrypto on the test database");
    text += &raw(2, "planner", "-", "-", "the admin UI ships after the public API");
    text += &raw(3, "worker", "F-041", "-", "the cart total is computed on the client");
    env.write("memory/raw.md", &text);
    env.harness().curate(Trigger::Done, at("2026-04-24T12:00:00Z")).unwrap();
    let doc = MemoryDoc::parse(&env.read("memory/MEMORY.md"));
    let has = |s: Section, t: &str| doc.items(s).iter().any(|i| i.statement.contains(t));
    assert!(has(Section::History, "F-040: CI needs pgcrypto"), "{doc:?}");
    assert!(has(Section::Context, "the admin UI ships after the public API"));
    assert!(has(Section::Lessons, "the cart total is computed on the client"));
}

#[test]
fn near_format_lines_are_read_leniently_and_reported() {
    let env = Env::new();
    let text = "- [2026-04-24 10:08] worker F-034 note: the payment webhook retries three times\n\
                [2026-04-24T10:09:00Z] worker F-034 -: TRICK: curl -sf fails on 4xx, so scripts stop early\n\
                [2026-04-24T10:10:00Z] worker F-035 -: TRICK: curl -sf fails on any 4xx so scripts stop early\n\
                [2026-04-24 10:11] planner: the search index is rebuilt nightly\n";
    env.write("memory/raw.md", text);
    let report = env.harness().curate(Trigger::Done, at("2026-04-24T12:00:00Z")).unwrap();
    assert!(
        report.notes.iter().any(|n| n.starts_with("2 near-format line(s) read leniently")),
        "{:?}",
        report.notes
    );
    let memory = env.read("memory/MEMORY.md");
    assert!(memory.contains("- [2026-04-24] the payment webhook retries three times"), "{memory}");
    assert!(memory.contains("the search index is rebuilt nightly"), "{memory}");
    // `-: TRICK:` is a TRICK: two features → identity.
    let worker = env.read_identity("worker");
    assert!(worker.contains("curl -sf fails on"), "{worker}");
}

#[test]
fn a_code_pointer_of_an_existing_file_is_a_codebase_lesson_and_never_stale() {
    let env = Env::new();
    env.files(&["src/checkout/webhook.ts"]).git();
    env.write(
        "features.json",
        r#"[{"id":"F-031","status":"passed"},{"id":"F-032","status":"passed"}]"#,
    );
    let mut text = String::new();
    text += &raw(
        1,
        "worker",
        "F-031",
        "TRICK",
        "src/checkout/webhook.ts:42 reads the secret at import time",
    );
    text += &raw(
        2,
        "worker",
        "F-032",
        "TRICK",
        "src/checkout/webhook.ts:42 reads the secret at import time, move it",
    );
    env.write("memory/raw.md", &text);
    let h = env.harness();
    h.curate(Trigger::Done, at("2026-04-24T12:00:00Z")).unwrap();
    let memory = env.read("memory/MEMORY.md");
    // Codebase-specific: stays in MEMORY.md even with two features; not promoted to identity.
    assert!(memory.contains("src/checkout/webhook.ts:42 reads the secret at import time, move it (evidence: F-031, F-032)"), "{memory}");
    assert!(!env.read_identity("worker").contains("webhook"));
    // A later pass with other input does not drop it as stale.
    env.write("memory/raw.md", &raw(3, "worker", "F-032", "-", "never skip the seed"));
    let r = h.curate(Trigger::Done, at("2026-04-25T12:00:00Z")).unwrap();
    assert!(env.read("memory/MEMORY.md").contains("webhook.ts:42"), "{:?}", r.notes);
}

#[test]
fn a_forgotten_convention_goes_to_the_forgetters_identity_once() {
    let env = Env::new();
    let mut text = String::new();
    // A validator reports what the worker forgot, twice, in two features.
    text += &raw(
        1,
        "validator",
        "F-050",
        "-",
        "the worker forgot to run pnpm db:generate after the schema change",
    );
    text += &raw(
        2,
        "validator",
        "F-051",
        "-",
        "the worker forgot to run pnpm db:generate after a schema change",
    );
    env.write("memory/raw.md", &text);
    let h = env.harness();
    let r1 = h.curate(Trigger::Done, at("2026-04-24T12:00:00Z")).unwrap();
    let worker = env.read_identity("worker");
    let shortcuts = &worker[worker.find("## Context shortcuts").unwrap()..];
    assert!(shortcuts.contains("forgot to run pnpm db:generate"), "{worker}");
    assert!(!env.identity.join("validator.md").exists(), "not the author's file: {:?}", r1.notes);
    let patterns = &worker[..worker.find("## Failures").unwrap()];
    assert!(!patterns.contains("db:generate"), "never in Patterns: {worker}");
    // A third sighting next pass: nothing new, and still not in Patterns.
    env.write(
        "memory/raw.md",
        &raw(3, "validator", "F-052", "-", "the worker forgot to run pnpm db:generate again"),
    );
    let r2 = h.curate(Trigger::Done, at("2026-04-25T12:00:00Z")).unwrap();
    assert_eq!(r2.promoted, 0, "{:?}", r2.notes);
    assert_eq!(env.read_identity("worker"), worker);
}

#[test]
fn items_are_dated_by_their_entry() {
    let env = Env::new();
    env.write("memory/raw.md", &format!(
        "{}{}",
        "[2026-03-02T23:59:59Z] worker F-001 -: never reuse the session cookie across tests\n",
        "[2026-03-05T08:00:00Z] architect - -: DECISION: keep Postgres because the team knows it\n"
    ));
    env.harness().curate(Trigger::Done, at("2026-04-24T12:00:00Z")).unwrap();
    let memory = env.read("memory/MEMORY.md");
    assert!(memory.contains("- [2026-03-02] never reuse the session cookie"), "{memory}");
    assert!(memory.contains("- [2026-03-05] keep Postgres — why: the team knows it"), "{memory}");
}

#[test]
fn an_issue_records_its_source_and_a_duplicate_keeps_its_evidence() {
    let env = Env::new();
    let h = env.harness();
    let issue = |title: &str, source: Option<&str>, evidence: Option<&str>| NewIssue {
        title: title.into(),
        severity: "major".into(),
        found_during: "F-010".into(),
        evidence: evidence.map(str::to_string),
        code_pointer: Some("apps/api/src/auth.ts:77".into()),
        source: source.map(str::to_string),
        ..Default::default()
    };
    h.file_issue(
        &issue("BLOCKED: cannot reach the sandbox", Some("worker"), None),
        at("2026-04-24T10:00:00Z"),
    )
    .unwrap();
    h.file_issue(
        &issue("Sandbox unreachable", None, Some("curl: (7) connection refused on :8443")),
        at("2026-04-24T10:05:00Z"),
    )
    .unwrap();
    assert!(h.file_issue(&issue("x", Some("bad role"), None), at("2026-04-24T10:05:00Z")).is_err());
    h.triage(at("2026-04-24T11:00:00Z")).unwrap();
    let file = IssueFile::parse(&env.read("issues.json")).unwrap();
    assert_eq!(file.issues.len(), 1);
    let i = &file.issues[0];
    // §3.3: every new issue is the validator's; the role that filed it is kept beside.
    assert_eq!((i.source.as_str(), i.attempts), ("validator", 1));
    assert_eq!(i.extra["filedBy"], "worker");
    let note = &i.notes[0];
    assert_eq!((note.by.as_str(), note.text.as_str()), ("validator", "Resurfaced during F-010"));
    assert_eq!(
        note.extra["resurfaced"],
        serde_json::json!({
            "title": "Sandbox unreachable",
            "evidence": "curl: (7) connection refused on :8443",
            "codePointer": "apps/api/src/auth.ts:77",
        })
    );
}

#[test]
fn a_broken_issues_json_fails_only_the_issues_part() {
    let env = Env::new();
    env.write("issues.json", "{ not json");
    let pending = "{\"title\":\"a\",\"severity\":\"major\",\"foundDuring\":\"F-1\"}\n";
    env.write("pending-issues.jsonl", pending);
    let raw_text: String = (0..12)
        .map(|n| raw(n, "worker", "F-001", "-", &format!("never skip step {n} of the seed")))
        .collect();
    env.write("memory/raw.md", &raw_text);
    let report = env.harness().curate(Trigger::Done, at("2026-04-24T12:00:00Z")).unwrap();
    assert!(report.is_partial());
    assert!(
        report.issues_error.as_deref().unwrap().contains("issues.json: invalid JSON"),
        "{:?}",
        report.issues_error
    );
    assert_eq!(env.read("issues.json"), "{ not json", "left as it was");
    assert_eq!(env.read("pending-issues.jsonl"), pending, "the queue is kept for a later triage");
    // Memory curation ran: MEMORY.md written, raw.md truncated, the two oldest archived.
    assert!(env.read("memory/MEMORY.md").contains("never skip step 0 of the seed"));
    assert_eq!(report.absorbed, 2);
    let status = env.harness().status().unwrap();
    assert!(status.issues_error.is_some() && status.render().contains("issues: unreadable"));
}

#[test]
fn only_append_and_issue_create_a_state_directory() {
    let dir = tempfile::tempdir().unwrap();
    let h = Harness::open(
        dir.path().join("typo/.harness"),
        dir.path().join("id"),
        HarnessOptions::default(),
    );
    let now = at("2026-04-24T12:00:00Z");
    for err in [
        h.curate(Trigger::Done, now).unwrap_err(),
        h.context("worker").unwrap_err(),
        h.status().unwrap_err(),
        h.triage(now).unwrap_err(),
        h.trace("x").unwrap_err(),
    ] {
        assert!(matches!(err, Error::NoState { .. }), "{err}");
        assert!(err.to_string().contains("typo/.harness does not exist"), "{err}");
    }
    assert!(!dir.path().join("typo").exists(), "nothing was created");
    h.append("worker", None, false, "first note", now).unwrap();
    assert!(h.state_dir().join("memory/raw.md").exists());
    let other =
        Harness::open(dir.path().join("b"), dir.path().join("id"), HarnessOptions::default());
    other
        .file_issue(
            &NewIssue {
                title: "t".into(),
                severity: "nit".into(),
                found_during: "F-1".into(),
                ..Default::default()
            },
            now,
        )
        .unwrap();
    assert!(other.status().is_ok());
}

#[test]
fn a_manual_trigger_during_a_pass_is_refused_at_once_naming_the_holder() {
    let env = Env::new();
    env.write("memory/raw.md", &raw(1, "worker", "F-001", "-", "never skip the seed"));
    let h = env.harness();
    let mut inner = None;
    h.curate_with(Trigger::Done, at("2026-04-24T12:00:00Z"), &mut |stage| {
        if stage == curator_harness::PassStage::Snapshotted {
            let started = std::time::Instant::now();
            let manual = h.curate(Trigger::Manual, at("2026-04-24T12:00:01Z"));
            let triage = h.triage(at("2026-04-24T12:00:01Z"));
            inner = Some((manual, triage, started.elapsed()));
        }
    })
    .unwrap();
    let (manual, triage, took) = inner.unwrap();
    assert!(took < std::time::Duration::from_secs(1), "no waiting: {took:?}");
    for err in [manual.unwrap_err(), triage.unwrap_err()] {
        let Error::Busy { holder, .. } = &err else { panic!("{err}") };
        assert!(holder.starts_with(&format!("pid {} since ", std::process::id())), "{holder}");
        assert!(err.to_string().starts_with("a curator pass is already running: pid "), "{err}");
    }
}

#[test]
fn non_utf8_bytes_survive_in_raw_md_and_the_archive() {
    let env = Env::new();
    let mut bytes = Vec::new();
    for n in 0..12 {
        bytes.extend_from_slice(
            format!("[2026-04-24T10:00:{n:02}Z] worker F-00{} -: caf", n % 3).as_bytes(),
        );
        bytes.extend_from_slice(b"\xe9 cr\xe8me \xff entry ");
        bytes.extend_from_slice(format!("{n}\n").as_bytes());
    }
    std::fs::write(env.state.join("memory/raw.md"), &bytes).unwrap();
    env.harness().curate(Trigger::Done, at("2026-04-24T12:00:00Z")).unwrap();
    let after = std::fs::read(env.state.join("memory/raw.md")).unwrap();
    let archived = env.archived_bytes();
    let mut together = archived.clone();
    together.extend_from_slice(&after);
    assert_eq!(together, bytes, "archive + raw.md tail = the original bytes, byte for byte");
    assert!(after.windows(3).any(|w| w == b"\xe9 c"), "no U+FFFD in the tail");
}

#[test]
fn identity_files_meet_their_byte_bound_and_the_oldest_entries_go_to_the_archive() {
    let env = Env::new();
    let mut f = IdentityFile::seed("worker");
    for d in 1..=45 {
        let e = IdentityEntry::parse(&format!(
            "- [2026-03-{:02}] distinct pattern {d} alpha{d} beta{d} gamma{d} delta{d} {}",
            1 + d % 28,
            "word ".repeat(30)
        ))
        .unwrap();
        f.append(IdentitySection::Patterns, &e);
    }
    std::fs::create_dir_all(&env.identity).unwrap();
    std::fs::write(env.identity.join("worker.md"), f.render()).unwrap();
    assert!(f.render().len() > IDENTITY_MAX_BYTES);
    env.write(
        "memory/raw.md",
        "[2026-04-24T10:00:00Z] worker F-101 TRICK: jq -e exits non-zero on null\n\
         [2026-04-24T10:01:00Z] worker F-102 TRICK: jq -e exits non-zero when the result is null\n",
    );
    let report = env.harness().curate(Trigger::Done, at("2026-04-24T12:00:00Z")).unwrap();
    let text = env.read_identity("worker");
    assert!(text.len() <= IDENTITY_MAX_BYTES && text.lines().count() <= IDENTITY_MAX_LINES);
    assert!(text.contains("jq -e exits non-zero"), "the new entry is the newest: kept");
    let records = env.records();
    let removed: Vec<&serde_json::Value> =
        records.iter().filter(|r| r["from"] == "identity/worker.md").collect();
    assert!(!removed.is_empty());
    assert!(removed.iter().all(|r| r["disposition"] == "dropped"));
    assert!(
        report.notes.iter().any(|n| n.starts_with("IDENTITY compaction-overflow worker")),
        "{:?}",
        report.notes
    );
    assert_eq!(
        removed.len()
            + IdentityFile::parse("worker", &text).entries(IdentitySection::Patterns).len(),
        46
    );
}

#[test]
fn long_entries_are_cut_in_memory_and_kept_whole_in_the_archive() {
    let env = Env::new();
    let long =
        format!("never run the migration twice {}", "because it duplicates rows ".repeat(30));
    let mut text: String =
        (0..11).map(|n| raw(n, "worker", "F-001", "-", &format!("{long} {n}"))).collect();
    text += &raw(20, "worker", "F-002", "-", "done");
    env.write("memory/raw.md", &text);
    env.harness().curate(Trigger::Done, at("2026-04-24T12:00:00Z")).unwrap();
    let memory = env.read("memory/MEMORY.md");
    assert!(
        memory.lines().all(|l| l.chars().count() <= curator_harness::ITEM_MAX_CHARS + 60),
        "{memory}"
    );
    assert!(memory.contains('…'));
    let archived = String::from_utf8(env.archived_bytes()).unwrap();
    assert!(archived.contains(&format!("{long} 0")), "whole in the archive");
}
