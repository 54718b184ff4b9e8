//! Replays a realistic mission: 27 raw entries from eight roles across six features (with a
//! monitor block and both TRICK forms), a dozen pending issues in two batches (plus malformed
//! lines), the orchestrator promoting one issue to an F-FIX feature in between, and two passes.

use curator_harness::{IssueFile, MemoryDoc, Section, Severity, Status, Trigger, segment};

use crate::common::{Env, at, changed_paths, fixture};

fn mission_env() -> Env {
    let env = Env::new();
    env.files(&[
        "drizzle/0001_init.sql",
        "drizzle/0002_cart.sql",
        "apps/web/src/Grid.tsx",
        "apps/web/src/cart.ts",
        "apps/api/src/auth.ts",
        "apps/api/src/refund.ts",
        "package.json",
    ])
    .git();
    env
}

#[test]
fn two_passes_over_a_realistic_mission() {
    let env = mission_env();
    let h = env.harness();
    env.write("memory/raw.md", &fixture("mission/raw1.md"));
    env.write("pending-issues.jsonl", &fixture("mission/pending1.jsonl"));
    env.write("features.json", &fixture("mission/features1.json"));

    let first = h.curate(Trigger::Escalate, at("2026-04-24T11:00:00Z")).unwrap();
    dump(&env, "first", &first);
    assert_eq!(
        first.line(),
        "CURATED 2 decisions, 8 lessons, 17 raw entries absorbed; ISSUES +6 new, 1 deduped, 0 auto-closed; IDENTITY +3"
    );
    // raw.md: the last 10 of 26 entries minus the promoted F-005 TRICK, bytes unchanged.
    let raw = env.read("memory/raw.md");
    assert_eq!(segment(&raw).len(), 9);
    assert!(raw.starts_with("[2026-04-24T09:20:00Z] debugger F-003 -: LESSON:"));
    assert!(!raw.contains("TRICK") && !raw.contains("## monitor"));
    let original = fixture("mission/raw1.md");
    assert!(
        raw.lines().all(|l| original.lines().any(|o| o == l)),
        "retained entries keep their bytes"
    );
    let memory = MemoryDoc::parse(&env.read("memory/MEMORY.md"));
    let statements = |s: Section| memory.items(s).iter().map(|i| i.render()).collect::<Vec<_>>();
    assert_eq!(
        statements(Section::Decisions),
        [
            "- [2026-04-24] split checkout into F-004 API and F-005 UI — why: the payment provider sandbox is slow",
            "- [2026-04-24] use drizzle for migrations — why: the schema stays typed end to end",
        ]
    );
    assert_eq!(
        statements(Section::Context),
        ["- [2026-04-24] the payment provider rejects amounts with more than 2 decimals"]
    );
    assert_eq!(
        statements(Section::History),
        [
            "- [2026-04-24] F-003: e2e suite failed on the login page after the auth refactor (evidence: F-003)",
            "- [2026-04-24] F-004: escalated after 5 worker attempts: provider sandbox times out (evidence: F-004)",
            // A verification that says more than "verified via …" is a validator's finding:
            // kept, in the validator's default section (issue 16: keep by default).
            "- [2026-04-24] F-004 verified via curl, refund path untested (evidence: F-004)",
            "- [2026-04-24] F-005 verified via playwright, cart totals match (evidence: F-005)",
        ]
    );
    let lessons = statements(Section::Lessons).join("\n");
    // Codebase-specific TRICK seen twice: stays in MEMORY.md with both features as evidence.
    assert!(lessons.contains("psql -f drizzle/*.sql runs migrations in filename order, so prefix with a number (evidence: F-001, F-005)"));
    // Single-sighting general TRICK: a candidate in MEMORY.md, carried to the next pass.
    assert!(lessons.contains(
        "sqlite3.connect(missing_path) creates an empty file instead of failing (evidence: F-003)"
    ));
    // Promoted general TRICK left MEMORY.md for identity.
    assert!(!lessons.contains("node --test"));
    // Validator verifications and progress notes create no item.
    assert!(!lessons.contains("verified via") && !lessons.contains("working on"));
    let worker = env.read_identity("worker");
    assert!(worker.contains("## Patterns I've learned\n<!-- Populated by curator. Each entry: [ISO-date] one sentence, concrete. -->\n- [2026-04-24] node --test <file> runs a single test file without extra deps. Evidence: F-001, F-002 (shop@2026-04-24)\n"), "{worker}");
    assert!(worker.contains("- [2026-04-24] never run the e2e suite before pnpm db:seed has finished. Evidence: F-002, F-003"));
    assert!(worker.contains("## Context shortcuts\n<!-- Populated by curator with file paths / conventions the role repeatedly needs. -->\n- [2026-04-24] forgot to run pnpm db:generate after editing the schema.\n"));
    let issues = IssueFile::parse(&env.read("issues.json")).unwrap();
    let ids: Vec<&str> = issues.issues.iter().map(|i| i.id.as_str()).collect();
    assert_eq!(ids, ["I-0006", "I-0005", "I-0004", "I-0003", "I-0002", "I-0001"]);
    let cart = &issues.issues[5];
    assert_eq!((cart.severity, cart.attempts), (Severity::Critical, 1));
    assert_eq!(issues.issues[3].severity, Severity::Major, "high → major");
    assert_eq!(issues.issues[1].severity, Severity::Nit, "trivial → nit");
    assert_eq!(env.read("pending-issues.jsonl"), "");
    let summary = env.read("memory/summary.md");
    assert!(
        summary.starts_with(
            "# Harness memory (curated 2026-04-24)\n\n## Lessons\n- never run the e2e suite before"
        ),
        "{summary}"
    );

    // Between passes: the orchestrator converts the rounding issue into F-FIX-001, more work
    // happens, a new batch of findings arrives and features move on.
    let mut issues = IssueFile::parse(&env.read("issues.json")).unwrap();
    let cart = issues.issues.iter_mut().find(|i| i.title.starts_with("Cart total rounds")).unwrap();
    cart.status = Status::Fixing;
    cart.linked_feature_id = Some("F-FIX-001".into());
    env.write("issues.json", &issues.to_json());
    env.write("memory/raw.md", &(env.read("memory/raw.md") + &fixture("mission/raw2.md")));
    env.write("pending-issues.jsonl", &fixture("mission/pending2.jsonl"));
    env.write("features.json", &fixture("mission/features2.json"));

    let second = h.curate(Trigger::Done, at("2026-04-25T11:00:00Z")).unwrap();
    dump(&env, "second", &second);
    assert_eq!(
        second.line(),
        "CURATED 2 decisions, 8 lessons, 5 raw entries absorbed; ISSUES +3 new, 2 deduped, 2 auto-closed; IDENTITY +1"
    );
    // A fix note with no keyword is kept (by role default), not absorbed as chatter.
    assert!(
        env.read("memory/MEMORY.md")
            .contains("fixed the cart rounding found in I-0002 (evidence: F-FIX-001)")
    );
    // Cross-pass carry: F-003's candidate + F-006's sighting = 2 features → identity.
    let worker2 = env.read_identity("worker");
    // Append-only: the old file's lines all survive, in order, with one line inserted.
    let mut new_lines = worker2.lines();
    assert!(worker.lines().all(|old| new_lines.any(|n| n == old)), "identity is append-only");
    assert_eq!(worker2.lines().count(), worker.lines().count() + 1);
    assert!(worker2.contains("- [2026-04-25] sqlite3.connect(missing_path) creates an empty file instead of failing. Evidence: F-003, F-006 (shop@2026-04-24)\n\n## Failures"), "{worker2}");
    let memory = env.read("memory/MEMORY.md");
    assert!(!memory.contains("sqlite3.connect"));
    assert!(memory.contains(
        "never run the e2e suite before pnpm db:seed has finished (evidence: F-002, F-003, F-006)"
    ));
    assert!(memory.contains("- [2026-04-25] F-006: escalated after 3 worker attempts: provider sandbox times out (evidence: F-006)"));
    let issues = IssueFile::parse(&env.read("issues.json")).unwrap();
    let get = |title: &str| issues.issues.iter().find(|i| i.title.starts_with(title)).unwrap();
    // Linked F-FIX passed: closed. Found-during F-003 passed, pointer not re-found: closed.
    assert_eq!(get("Cart total rounds").status, Status::Closed);
    assert_eq!(get("Login page 500").status, Status::Closed);
    assert_eq!(
        get("Login page 500").notes[0].text,
        "Code path verified green during TRIGGER=done 2026-04-25"
    );
    // The same pointer was re-found this batch: stays open, attempts +1.
    let flicker = get("Product list flickers");
    assert_eq!((flicker.status, flicker.attempts), (Status::Open, 1));
    // Line drift (auth.ts:77 → :81) and a reworded title: a new issue (spec §3.3 known limit).
    assert_eq!(get("Login page returns 500").id, "I-0007");
    // Same-batch dedupe: the second sandbox finding folds into I-0008 created just before it.
    let sandbox = get("Sandbox timeout");
    assert_eq!(
        (sandbox.id.as_str(), sandbox.attempts, sandbox.severity),
        ("I-0008", 1, Severity::Major)
    );
    assert_eq!(issues.next_id, 10);
    let raw = env.read("memory/raw.md");
    assert_eq!(segment(&raw).len(), 9);
    assert!(raw.ends_with(
        &fixture("mission/raw2.md")
            [fixture("mission/raw2.md").find("[2026-04-25T08:05").unwrap()..]
    ));

    // A third pass with no new findings: the two issues whose features passed and whose
    // pointers were not re-found this time close (rule 4 of §3.5 looks at this pass's batch).
    let third = h.curate(Trigger::Manual, at("2026-04-26T11:00:00Z")).unwrap();
    assert!(
        third.line().ends_with("ISSUES +0 new, 0 deduped, 2 auto-closed; IDENTITY +0"),
        "{}",
        third.line()
    );
    assert_eq!(third.changed, ["issues.json"]);
    // A fourth pass with nothing new changes no byte.
    let before = env.snapshot();
    let fourth = h.curate(Trigger::Manual, at("2026-04-27T11:00:00Z")).unwrap();
    assert_eq!(changed_paths(&before, &env.snapshot()), Vec::<std::path::PathBuf>::new());
    assert!(fourth.changed.is_empty());

    // A later mission hits the same sandbox failure: two missions → orchestrator's identity.
    let next = Env::new();
    next.write("memory/raw.md", "[2026-05-01T09:00:00Z] orchestrator F-002 -: escalated after 4 worker attempts: provider sandbox times out\n");
    std::fs::create_dir_all(&next.identity).unwrap();
    for f in ["worker.md", ".ledger.jsonl"] {
        std::fs::copy(env.identity.join(f), next.identity.join(f)).unwrap();
    }
    let h2 = next.harness_with(curator_harness::HarnessOptions {
        mission: Some("shop@2026-05-01".into()),
        ..Default::default()
    });
    let r = h2.curate(Trigger::Escalate, at("2026-05-01T10:00:00Z")).unwrap();
    assert_eq!(r.promoted, 1, "{:?}", r.notes);
    let orchestrator = std::fs::read_to_string(next.identity.join("orchestrator.md")).unwrap();
    assert!(orchestrator.contains("## Failures I've seen\n<!-- Populated by curator when a recurring failure mode is detected. -->\n- [2026-05-01] escalated after 4 worker attempts: provider sandbox times out. Evidence: shop@2026-04-24, shop@2026-05-01\n"), "{orchestrator}");
}

fn dump(env: &Env, label: &str, r: &curator_harness::PassReport) {
    eprintln!("===== {label}: {}\nnotes: {:#?}\nchanged: {:?}", r.line(), r.notes, r.changed);
    for f in ["memory/MEMORY.md", "memory/summary.md", "memory/raw.md", "issues.json"] {
        eprintln!("----- {f}\n{}", env.read(f));
    }
    for role in ["worker", "debugger", "validator", "orchestrator"] {
        eprintln!("----- identity/{role}.md\n{}", env.read_identity(role));
    }
}
