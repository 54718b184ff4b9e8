use curator_harness::{
    IDENTITY_MAX_LINES, IdentityFile, IdentitySection, MEMORY_MAX_BYTES, MEMORY_MAX_LINES,
    MemoryDoc, SUMMARY_MAX_LINES, SUMMARY_MAX_TOKENS, Section, Trigger, render_summary,
};

use crate::common::{Env, at};

fn lines(s: &str) -> usize {
    s.bytes().filter(|&b| b == b'\n').count() + usize::from(!s.is_empty() && !s.ends_with('\n'))
}

/// A MEMORY.md of exactly 500 physical lines with long items in every section.
fn big_memory() -> String {
    let mut s = String::from("# MEMORY\n\n## Decisions\n");
    let push = |s: &mut String, line: String| {
        s.push_str(&line);
        s.push('\n');
    };
    for i in 0..120 {
        push(
            &mut s,
            format!(
                "- [2026-04-{:02}] Decision number {i} about the storage layer and its many callers — why: reason {i} that is fairly long to eat tokens",
                1 + i % 28
            ),
        );
    }
    s.push_str("\n## Context\n");
    for i in 0..120 {
        push(&mut s, format!("- [2026-04-01] Context fact {i} about an external constraint"));
    }
    s.push_str("\n## History\n");
    for i in 0..120 {
        push(
            &mut s,
            format!(
                "- [2026-04-02] F-{:03}: escalated after {i} worker attempts on flaky auth",
                i % 40
            ),
        );
    }
    s.push_str("\n## Lessons\n");
    let mut i = 0;
    while lines(&s) < 500 {
        i += 1;
        let evidence = if i % 4 == 0 {
            format!("F-{:03}, F-{:03}", i % 40, (i + 1) % 40)
        } else {
            format!("F-{:03}", i % 40)
        };
        push(
            &mut s,
            format!(
                "- [2026-04-03] Never retry lesson {i} without reseeding the database first (evidence: {evidence})"
            ),
        );
    }
    s
}

#[test]
fn summary_meets_both_bounds_under_a_500_line_memory() {
    let memory = big_memory();
    assert_eq!(lines(&memory), 500);
    let doc = MemoryDoc::parse(&memory);
    let summary = render_summary(&doc, "2026-04-24").unwrap();
    assert!(lines(&summary) <= SUMMARY_MAX_LINES, "{} lines", lines(&summary));
    assert!(summary.chars().count().div_ceil(4) <= SUMMARY_MAX_TOKENS);
    assert!(summary.starts_with("# Harness memory (curated 2026-04-24)\n"));
    // Lessons and Avoid are filled before Decisions when space is tight.
    let lessons = summary.find("## Lessons").unwrap();
    assert!(summary[lessons..].lines().nth(1).unwrap().starts_with("- Never retry"));
    assert!(summary.contains("## Avoid\n"));
    // Every Avoid line names a feature.
    let avoid = &summary[summary.find("## Avoid").unwrap()..];
    assert!(avoid.lines().skip(1).take_while(|l| l.starts_with("- ")).all(|l| l.contains("F-")));
}

#[test]
fn a_pass_over_a_500_line_memory_drops_the_weakest_and_meets_every_bound() {
    let env = Env::new();
    env.write("memory/MEMORY.md", &big_memory());
    let features: Vec<String> =
        (0..40).map(|i| format!(r#"{{"id":"F-{i:03}","status":"passed"}}"#)).collect();
    env.write("features.json", &format!("[{}]", features.join(",")));
    let h = env.harness();
    let report = h.curate(Trigger::Done, at("2026-04-24T12:00:00Z")).unwrap();
    let memory = env.read("memory/MEMORY.md");
    assert!(lines(&memory) <= MEMORY_MAX_LINES, "{}", lines(&memory));
    let doc = MemoryDoc::parse(&memory);
    // §6 order: Context without evidence, then History of passed features, then single-evidence
    // Lessons; Decisions (none superseded) and two-evidence Lessons are never dropped.
    assert!(
        report.notes.iter().all(|n| n.contains("over the MEMORY.md bound")),
        "{:?}",
        report.notes
    );
    // Every dropped item is in the archive with its reason, never just gone.
    let records = env.records();
    let dropped: Vec<&serde_json::Value> =
        records.iter().filter(|r| r["kind"] == "item" && r["disposition"] == "dropped").collect();
    let original = MemoryDoc::parse(&big_memory());
    let before: usize = original.sections.iter().map(Vec::len).sum();
    let after_count: usize = MemoryDoc::parse(&memory).sections.iter().map(Vec::len).sum();
    assert_eq!(dropped.len(), before - after_count);
    assert!(
        dropped.iter().all(|r| r["reason"].as_str().unwrap().contains("over the MEMORY.md bound"))
    );
    assert_eq!(doc.count(Section::Context), 0);
    assert_eq!(doc.count(Section::History), 0);
    // Tier 3 stops as soon as the bound holds: every two-evidence Lesson survives, and the
    // single-evidence ones that survive are the newest (the oldest went first).
    let two =
        |d: &MemoryDoc| d.items(Section::Lessons).iter().filter(|l| l.evidence.len() == 2).count();
    assert_eq!(two(&doc), two(&original));
    let singles: Vec<&str> = doc
        .items(Section::Lessons)
        .iter()
        .filter(|l| l.evidence.len() == 1)
        .map(|l| l.statement.as_str())
        .collect();
    let all_singles: Vec<&str> = original
        .items(Section::Lessons)
        .iter()
        .filter(|l| l.evidence.len() == 1)
        .map(|l| l.statement.as_str())
        .collect();
    assert!(singles.len() < all_singles.len());
    assert_eq!(singles, all_singles[all_singles.len() - singles.len()..]);
    assert_eq!(doc.count(Section::Decisions), 120);
    let summary = env.read("memory/summary.md");
    assert!(lines(&summary) <= SUMMARY_MAX_LINES);
}

#[test]
fn a_bound_the_spec_cannot_meet_drops_into_the_archive_and_the_pass_finishes() {
    let env = Env::new();
    // 230 Decisions with a why: §6's tiers never drop them, so before issue 16 the bound failed
    // the pass, on every later pass, and raw.md was never truncated.
    let mut memory = String::from("## Decisions\n");
    for i in 0..230 {
        memory
            .push_str(&format!("- [2026-04-{:02}] decision {i} — why: because {i}\n", 1 + i % 28));
    }
    env.write("memory/MEMORY.md", &memory);
    let raw: String = (0..15)
        .map(|n| {
            format!("[2026-04-24T10:00:{n:02}Z] validator F-1 -: never skip the seed step {n}\n")
        })
        .collect();
    env.write("memory/raw.md", &raw);
    let report = env.harness().curate(Trigger::Done, at("2026-04-24T12:00:00Z")).unwrap();
    let memory = env.read("memory/MEMORY.md");
    assert!(lines(&memory) <= MEMORY_MAX_LINES && memory.len() <= MEMORY_MAX_BYTES);
    // raw.md is truncated to its last 10 entries; the 5 older ones are archived.
    assert_eq!(curator_harness::segment(env.read("memory/raw.md")).len(), 10);
    assert_eq!(report.absorbed, 5);
    // Decisions went oldest first (the last tier of the documented order), into the archive.
    let records = env.records();
    let decisions: Vec<&serde_json::Value> =
        records.iter().filter(|r| r["from"] == "MEMORY.md ## Decisions").collect();
    assert!(!decisions.is_empty());
    assert!(decisions.iter().all(|r| r["reason"] == "over the MEMORY.md bound: oldest Decision"));
    assert!(decisions[0]["text"].as_str().unwrap().starts_with("- [2026-04-01] decision 0 "));
    let kept = MemoryDoc::parse(&memory);
    assert_eq!(kept.count(Section::Decisions) + decisions.len(), 230);
    assert!(report.notes.iter().any(|n| n.contains("oldest Decision")), "{:?}", report.notes);
    // A second pass has nothing more to drop and finishes too.
    env.harness().curate(Trigger::Done, at("2026-04-25T12:00:00Z")).unwrap();
}

#[test]
fn identity_compaction_merges_over_60_lines_and_overflow_keeps_the_file() {
    let mut f = IdentityFile::seed("worker");
    for d in 1..=20 {
        let e = curator_harness::IdentityEntry::parse(&format!(
            "- [2026-03-{d:02}] Run pnpm install before the e2e suite. Evidence: F-{d:03}"
        ))
        .unwrap();
        f.append(IdentitySection::Patterns, &e);
    }
    for d in 1..=30 {
        let e = curator_harness::IdentityEntry::parse(&format!("- [2026-04-{:02}] Distinct failure mode number {d} with unique words w{d}a w{d}b w{d}c", 1 + d % 28)).unwrap();
        f.append(IdentitySection::Failures, &e);
    }
    let correction = curator_harness::IdentityEntry::parse("- [2026-04-20] CORRECTION to 2026-03-01 entry: Run pnpm install --frozen-lockfile before the e2e suite").unwrap();
    f.append(IdentitySection::Patterns, &correction);
    assert!(f.line_count() > IDENTITY_MAX_LINES);
    assert_eq!(f.compact_if_needed(), Ok(true));
    let text = f.render();
    assert!(f.line_count() <= IDENTITY_MAX_LINES, "{text}");
    let patterns = f.entries(IdentitySection::Patterns);
    assert_eq!(patterns.len(), 1, "{text}");
    let p = &patterns[0];
    assert_eq!(p.date, "2026-03-01", "earliest date kept");
    assert_eq!(
        p.statement, "Run pnpm install --frozen-lockfile before the e2e suite",
        "the correction wins"
    );
    // Union of evidence, bounded: the most recent EVIDENCE_MAX ids.
    assert_eq!(p.evidence.len(), curator_harness::EVIDENCE_MAX);
    assert_eq!(p.evidence.last().map(String::as_str), Some("F-020"));
    assert_eq!(p.reconfirmed.as_deref(), Some("2026-04-20"));
    assert_eq!(
        f.entries(IdentitySection::Failures).len(),
        30,
        "distinct entries are never dropped"
    );
    assert!(text.starts_with("# IDENTITY — worker\n\nDurable cross-mission memory"));
    assert!(
        !text.contains("<!-- Populated by curator. Each entry"),
        "placeholder of a filled section goes"
    );
    assert!(text.contains("## Context shortcuts\n<!--"), "placeholder of an empty section stays");

    // 70 distinct entries cannot be merged: overflow, file unchanged.
    let mut g = IdentityFile::seed("validator");
    for d in 0..70 {
        let e = curator_harness::IdentityEntry::parse(&format!(
            "- [2026-04-01] unique lesson {d} alpha{d} beta{d} gamma{d}"
        ))
        .unwrap();
        g.append(IdentitySection::Patterns, &e);
    }
    let before = g.render();
    assert!(matches!(g.compact_if_needed(), Err(n) if n > IDENTITY_MAX_LINES));
    assert_eq!(g.render(), before);
}

#[test]
fn a_pass_compacts_identity_it_appends_to() {
    let env = Env::new();
    let mut f = IdentityFile::seed("worker");
    for d in 1..=55 {
        let e = curator_harness::IdentityEntry::parse(&format!(
            "- [2026-03-{:02}] Seed the database before running e2e. Evidence: F-{d:03}",
            1 + d % 28
        ))
        .unwrap();
        f.append(IdentitySection::Patterns, &e);
    }
    std::fs::create_dir_all(&env.identity).unwrap();
    std::fs::write(env.identity.join("worker.md"), f.render()).unwrap();
    // Two features flag a new general trick: it is appended, then the file (now > 60) compacts.
    env.write(
        "memory/raw.md",
        "[2026-04-24T10:00:00Z] worker F-101 TRICK: jq -e exits non-zero on null\n\
         [2026-04-24T10:01:00Z] worker F-102 TRICK: jq -e exits non-zero when the result is null\n",
    );
    let report = env.harness().curate(Trigger::Done, at("2026-04-24T12:00:00Z")).unwrap();
    assert_eq!(report.promoted, 1);
    assert!(report.notes.iter().any(|n| n == "IDENTITY compacted worker"), "{:?}", report.notes);
    let text = env.read_identity("worker");
    assert!(lines(&text) <= IDENTITY_MAX_LINES);
    assert!(text.contains("jq -e exits non-zero when the result is null. Evidence: F-101, F-102"));
    assert!(text.contains("Seed the database before running e2e."));
}

/// Every bound is checked each pass: an identity file left over its bound (a person's edit, an
/// older version) is compacted by the next pass even when the pass appends nothing to it.
#[test]
fn a_pass_compacts_an_identity_file_over_its_bound_it_did_not_append_to() {
    let env = Env::new();
    let mut f = IdentityFile::seed("validator");
    for d in 1..=70 {
        let e = curator_harness::IdentityEntry::parse(&format!(
            "- [2026-03-{:02}] Check the login page in Safari too. Evidence: F-{d:03}",
            1 + d % 28
        ))
        .unwrap();
        f.append(IdentitySection::Patterns, &e);
    }
    std::fs::create_dir_all(&env.identity).unwrap();
    std::fs::write(env.identity.join("validator.md"), f.render()).unwrap();
    assert!(lines(&env.read_identity("validator")) > IDENTITY_MAX_LINES);
    env.write(
        "memory/raw.md",
        "[2026-04-24T10:00:00Z] worker F-101 -: implemented the login form\n",
    );
    let report = env.harness().curate(Trigger::Manual, at("2026-04-24T12:00:00Z")).unwrap();
    assert!(report.notes.iter().any(|n| n == "IDENTITY compacted validator"), "{:?}", report.notes);
    let text = env.read_identity("validator");
    assert!(lines(&text) <= IDENTITY_MAX_LINES, "{text}");
    assert!(text.contains("Check the login page in Safari too."));
}
