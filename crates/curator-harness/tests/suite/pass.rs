use curator_harness::{HarnessOptions, Trigger};

use crate::common::{Env, at, changed_paths, raw};

fn seeded() -> Env {
    let env = Env::new();
    env.files(&["src/db.ts", "src/api/routes.ts"]).git();
    let mut text = String::new();
    text += &raw(
        0,
        "architect",
        "-",
        "-",
        "DECISION: use drizzle for migrations because the schema stays typed",
    );
    text += &raw(1, "worker", "F-001", "-", "never run the e2e suite before `pnpm db:seed`");
    text +=
        &raw(2, "worker", "F-002", "-", "never run the e2e suite before pnpm db:seed has finished");
    text += &raw(
        3,
        "orchestrator",
        "F-003",
        "-",
        "escalated after 5 worker attempts: auth callback 500s",
    );
    text += &raw(4, "validator", "F-001", "-", "F-001 verified via curl + DB row inspection");
    text += &raw(5, "worker", "F-002", "TRICK", "src/db.ts pool must be closed in afterAll");
    env.write("memory/raw.md", &text);
    env.write(
        "features.json",
        r#"{"features":[{"id":"F-001","status":"passed"},{"id":"F-002","status":"passed"},{"id":"F-003","status":"failed"}]}"#,
    );
    env
}

#[test]
fn the_output_line_counts_what_the_files_hold() {
    let env = seeded();
    let report = env.harness().curate(Trigger::Done, at("2026-04-24T12:00:00Z")).unwrap();
    assert_eq!(
        report.line(),
        "CURATED 1 decisions, 2 lessons, 1 raw entries absorbed; ISSUES +0 new, 0 deduped, 0 auto-closed; IDENTITY +1"
    );
    let memory = env.read("memory/MEMORY.md");
    assert_eq!(
        memory,
        "# MEMORY\n\n\
         ## Decisions\n\
         - [2026-04-24] use drizzle for migrations — why: the schema stays typed\n\n\
         ## Context\n\n\
         ## History\n\
         - [2026-04-24] F-003: escalated after 5 worker attempts: auth callback 500s (evidence: F-003)\n\n\
         ## Lessons\n\
         - [2026-04-24] never run the e2e suite before `pnpm db:seed` (evidence: F-001, F-002)\n\
         - [2026-04-24] src/db.ts pool must be closed in afterAll (evidence: F-002)\n"
    );
    // A general lesson from two features reaches the authoring role's identity (§4.5 d).
    assert!(env.read_identity("worker").contains("never run the e2e suite before `pnpm db:seed`."));
    let summary = env.read("memory/summary.md");
    assert!(summary.starts_with(
        "# Harness memory (curated 2026-04-24)\n\n## Lessons\n- never run the e2e suite"
    ));
    assert!(summary.contains("## Avoid\n- F-003: escalated"), "{summary}");
    // The TRICK left raw.md; the other five stay (fewer than 10).
    let raw_after = env.read("memory/raw.md");
    assert!(!raw_after.contains("TRICK"));
    assert_eq!(raw_after.lines().count(), 5);
}

#[test]
fn a_second_pass_with_no_new_input_changes_no_byte() {
    let env = seeded();
    let h = env.harness();
    h.curate(Trigger::Done, at("2026-04-24T12:00:00Z")).unwrap();
    let before = env.snapshot();
    // Another day: the summary's date would differ, but its content does not, so it stays.
    let again = h.curate(Trigger::Manual, at("2026-04-25T09:00:00Z")).unwrap();
    assert_eq!(
        changed_paths(&before, &env.snapshot()),
        Vec::<std::path::PathBuf>::new(),
        "{:?}",
        again.changed
    );
    assert!(again.changed.is_empty());
    assert_eq!(again.promoted, 0);
}

#[test]
fn a_busy_curator_lock_refuses_a_second_pass() {
    let env = seeded();
    let h = env.harness_with(HarnessOptions {
        lock_timeout: std::time::Duration::from_millis(200),
        ..Default::default()
    });
    let mut inner: Option<String> = None;
    h.curate_with(Trigger::Manual, at("2026-04-24T12:00:00Z"), &mut |_| {
        inner = Some(match h.curate(Trigger::Manual, at("2026-04-24T12:00:01Z")) {
            Ok(_) => "ran".into(),
            Err(e) => e.to_string(),
        });
    })
    .unwrap();
    assert_ne!(inner.as_deref(), Some("ran"));
}

#[test]
fn context_follows_section_1_1() {
    let env = seeded();
    let h = env.harness();
    assert!(!h.context("worker").unwrap().contains("## Memory (curated"), "no summary yet");
    h.curate(Trigger::Done, at("2026-04-24T12:00:00Z")).unwrap();
    let worker = h.context("worker").unwrap();
    let parts: Vec<&str> = worker.split("\n---\n\n").collect();
    assert_eq!(parts.len(), 3);
    assert!(parts[0].starts_with("## Memory discipline"));
    assert!(parts[1].starts_with(
        "## Your identity (cross-mission memory for the worker role)\n\n# IDENTITY — worker"
    ));
    assert!(
        parts[2].starts_with(
            "## Memory (curated from prior iterations of this run)\n\n# Harness memory"
        )
    );
    assert_eq!(
        h.context("validator").unwrap().split("\n---\n\n").count(),
        2,
        "no identity file: no block"
    );
    // A seed template with no entry says nothing: it is left out (issue 16).
    std::fs::write(
        env.identity.join("curator.md"),
        curator_harness::IdentityFile::seed("curator").render(),
    )
    .unwrap();
    assert_eq!(h.context("curator").unwrap(), "");
    std::fs::write(
        env.identity.join("curator.md"),
        "# IDENTITY — curator\n\n## Patterns I've learned\n<!-- Populated by curator. -->\n- [2026-04-01] triage first\n",
    )
    .unwrap();
    let curator = h.context("curator").unwrap();
    assert!(curator.starts_with("## Your identity (cross-mission memory for the curator role)"));
    assert!(
        curator.contains("- [2026-04-01] triage first") && !curator.contains("<!--"),
        "{curator}"
    );
    assert!(!curator.contains("---") && !curator.contains("Harness memory"));
    // §1.1: a non-empty file is injected, also prose with no heading or bullet.
    for prose in [
        "Always run the full test suite before reporting done.\n",
        "# IDENTITY — curator\n\nTriage before anything else; the queue is the truth.\n",
    ] {
        std::fs::write(env.identity.join("curator.md"), prose).unwrap();
        let curator = h.context("curator").unwrap();
        assert!(curator.contains(prose.lines().last().unwrap()), "{prose:?}: {curator}");
    }
    assert!(h.context("../etc").is_err());
}

/// The last 10 entries stay in raw.md (§2.3) and the next pass reads them again: they must not
/// count as evidence twice, also past the ids an item lists (`+N more`).
#[test]
fn retained_entries_are_not_counted_again_by_the_next_pass() {
    let env = Env::new();
    env.files(&["src/cache.ts"]).git();
    let mut text = String::new();
    for i in 1..=10 {
        text += &raw(i, "debugger", &format!("F-{i:03}"), "-", "root cause was a stale cache key");
    }
    env.write("memory/raw.md", &text);
    let h = env.harness();
    let lesson = |env: &Env| {
        env.read("memory/MEMORY.md")
            .lines()
            .find(|l| l.contains("stale cache key"))
            .map(str::to_string)
            .unwrap_or_default()
    };
    h.curate(Trigger::Done, at("2026-04-24T12:00:00Z")).unwrap();
    let first = lesson(&env);
    assert!(first.ends_with("F-010 +2 more)"), "{first}");
    for hour in 13..16 {
        h.curate(Trigger::Manual, at(&format!("2026-04-24T{hour}:00:00Z"))).unwrap();
        assert_eq!(lesson(&env), first, "pass at {hour}:00 counted retained entries again");
    }
    // A new sighting still counts, once.
    let more = raw(40, "debugger", "F-011", "-", "root cause was a stale cache key");
    env.write("memory/raw.md", &(env.read("memory/raw.md") + &more));
    h.curate(Trigger::Manual, at("2026-04-24T17:00:00Z")).unwrap();
    assert!(lesson(&env).ends_with("F-011 +3 more)"), "{}", lesson(&env));
    h.curate(Trigger::Manual, at("2026-04-24T18:00:00Z")).unwrap();
    assert!(lesson(&env).ends_with("F-011 +3 more)"), "{}", lesson(&env));
}

#[test]
fn status_reports_sizes_against_bounds() {
    let env = seeded();
    let h = env.harness();
    let s = h.status().unwrap();
    assert_eq!(s.layers[0].name, "raw.md");
    assert_eq!(s.layers[0].entries, 6);
    assert!(!s.layers[1].exists);
    h.curate(Trigger::Done, at("2026-04-24T12:00:00Z")).unwrap();
    let s = h.status().unwrap();
    assert_eq!(s.layers[1].entries, 4);
    assert!(s.layers.iter().all(|l| l.within_bound));
    assert!(s.layers.iter().any(|l| l.name == "identity/worker.md"));
    assert!(s.render().contains("issues: 0 open"));
}

/// An entry with no content word (`...`, `the`) is one item, however many passes read it.
#[test]
fn entries_without_content_words_are_not_added_again_by_each_pass() {
    let env = Env::new();
    let mut text = String::new();
    for (i, junk) in ["...", "the", "!!"].into_iter().enumerate() {
        text += &raw(i as u32, "worker", "F-002", "-", junk);
    }
    text += &raw(9, "worker", "F-002", "-", "avoid the flaky login helper because it races");
    env.write("memory/raw.md", &text);
    let h = env.harness();
    h.curate(Trigger::Manual, at("2026-04-24T12:00:00Z")).unwrap();
    let first = env.read("memory/MEMORY.md");
    for hour in 13..16 {
        h.curate(Trigger::Manual, at(&format!("2026-04-24T{hour}:00:00Z"))).unwrap();
        assert_eq!(env.read("memory/MEMORY.md"), first, "pass at {hour}:00");
    }
    // The same text in a later entry, after raw.md was cut, is still the same item.
    let again = raw(30, "worker", "F-003", "-", "...");
    env.write("memory/raw.md", &(env.read("memory/raw.md") + &again));
    h.curate(Trigger::Manual, at("2026-04-24T17:00:00Z")).unwrap();
    let items = env.read("memory/MEMORY.md").lines().filter(|l| l.contains("] ...")).count();
    assert_eq!(items, 1, "{}", env.read("memory/MEMORY.md"));
}

/// A hand-edited MEMORY.md item or identity entry holding bytes that are not UTF-8 (a cp1252
/// paste) is written back with U+FFFD by a pass; the original bytes are kept first, once.
#[test]
fn a_file_a_pass_rewrites_keeps_its_non_utf8_original() {
    let env = seeded();
    std::fs::create_dir_all(&env.identity).unwrap();
    let identity = b"# IDENTITY \xe2\x80\x94 worker\n\n## Context shortcuts\n- [2026-01-01] Caf\xe9 build: use the mirror (shop@0)\n".to_vec();
    std::fs::write(env.identity.join("worker.md"), &identity).unwrap();
    env.write(
        "memory/raw.md",
        &raw(5, "worker", "F-001", "-", "TRICK: seed the db before the e2e suite"),
    );
    let h = env.harness();
    h.curate(Trigger::Manual, at("2026-04-24T11:00:00Z")).unwrap();
    let originals = env.state.join("memory/archive/originals");
    let kept: Vec<Vec<u8>> = std::fs::read_dir(&originals)
        .unwrap()
        .flatten()
        .map(|e| std::fs::read(e.path()).unwrap())
        .collect();
    assert_eq!(kept, [identity], "the original bytes, kept once");
    // A second pass over the rewritten (now UTF-8) file keeps nothing more.
    h.curate(Trigger::Manual, at("2026-04-24T12:00:00Z")).unwrap();
    assert_eq!(std::fs::read_dir(&originals).unwrap().count(), 1);
}

/// The mission id a first pass makes up from the project's name keeps what a mission id may
/// hold (accents, spaces) and replaces what it may not (the identity list's `(`, `)` and `,`).
#[test]
fn a_made_up_mission_id_keeps_the_project_name_readable() {
    let env = seeded();
    let options = HarnessOptions {
        slug: Some("projet (été), v2".into()),
        mission: None,
        ..HarnessOptions::default()
    };
    let h = curator_harness::Harness::open(&env.state, &env.identity, options);
    h.curate(Trigger::Manual, at("2026-04-24T11:00:00Z")).unwrap();
    let mission = env.read("memory/.mission");
    assert_eq!(mission, "projet -été-- v2@2026-04-24T11:00:00Z\n");
    h.curate(Trigger::Manual, at("2026-04-24T12:00:00Z")).unwrap();
}
