use curator_harness::{Lemma, ProjectIndex, Trigger, cluster, same_lemma};

use crate::common::{Env, at, raw};

#[test]
fn lemma_reduction_matches_paraphrases_not_neighbours() {
    // Main clause only: what follows `;`, ` — `, ` -- ` or `. ` does not count.
    assert!(same_lemma(
        "node --test <file> needs no deps; handy for quick checks",
        "node --test <file> needs no deps — the runner is built in"
    ));
    // Stemming and stop words: "mocking the clock" ~ "mock clock".
    assert!(same_lemma("Mocking the clock in unit tests", "mock clock unit tests"));
    // A shared code token lowers the bar to 0.5.
    assert!(same_lemma(
        "sqlite3.connect(missing_path) creates the file",
        "sqlite3.connect(missing_path) silently creates an empty file"
    ));
    // Same topic, different trick.
    assert!(!same_lemma(
        "sqlite3.connect(missing_path) creates the file",
        "sqlite3 WAL mode needs a writable directory"
    ));
    let lemmas: Vec<Lemma> =
        ["run pnpm install first", "zod parse errors hide the path", "pnpm install first run"]
            .iter()
            .map(|t| Lemma::new(t))
            .collect();
    assert_eq!(cluster(&lemmas), vec![vec![0, 2], vec![1]]);
}

#[test]
fn codebase_specific_detection_uses_git_ls_files() {
    let env = Env::new();
    env.files(&[
        "drizzle/0001_init.sql",
        "apps/web/src/Grid.tsx",
        "package.json",
        "untracked/later.txt",
    ]);
    env.git();
    // A file created after `git add` is not tracked: it does not make text codebase-specific.
    env.files(&["scratch/notes.md"]);
    let p = ProjectIndex::scan(&env.project, Some("shop"));
    assert!(p.files.contains("apps/web/src/Grid.tsx") && !p.files.contains("scratch/notes.md"));
    for specific in [
        "psql -f drizzle/*.sql applies migrations in filename order", // glob over a tracked dir
        "Grid.tsx re-renders on every keystroke",                     // file name in the repo
        "edit apps/web/src/Grid.tsx, not the generated copy",         // path
        "the shop checkout needs a seeded cart",                      // slug
        "F-012 showed the race",                                      // feature id
        "see I-0004 before touching auth",                            // issue id
        "`package.json` scripts are the source of truth",             // quoted file name
    ] {
        assert!(p.is_codebase_specific(specific), "{specific}");
    }
    for general in [
        "sqlite3.connect(missing_path) creates the file",
        "node --test <file> needs no deps",
        "scratch/notes.md is where I keep notes", // untracked
        "see https://example.com/apps/web for docs",
        "and/or",
    ] {
        assert!(!p.is_codebase_specific(general), "{general}");
    }
}

#[test]
fn directory_listing_is_used_without_git() {
    let env = Env::new();
    env.files(&["lib/server.py", "README.md"]);
    let p = ProjectIndex::scan(&env.project, None);
    assert!(p.files.contains("lib/server.py"));
    assert!(!p.files.iter().any(|f| f.starts_with(".harness")), "the state dir is not the project");
    assert!(p.is_codebase_specific("lib/server.py binds to 0.0.0.0"));
}

#[test]
fn two_distinct_features_promote_a_general_trick_one_does_not() {
    let env = Env::new();
    env.files(&["src/index.ts"]).git();
    let mut text = String::new();
    // Same lemma twice from the SAME feature (a retried worker): counts once.
    text += &raw(1, "worker", "F-001", "TRICK", "node --test <file> needs no deps");
    text += &raw(2, "worker", "F-001", "TRICK", "node --test <file> needs no extra deps");
    // A general trick from one feature only.
    text += &raw(3, "worker", "F-002", "TRICK", "sqlite3.connect(missing_path) creates the file");
    // A codebase-specific trick seen by two features: stays in MEMORY.md.
    text += &raw(4, "worker", "F-002", "TRICK", "src/index.ts must export the router last");
    text += &raw(
        5,
        "worker",
        "F-003",
        "TRICK",
        "src/index.ts must export the router last, or routes vanish",
    );
    // TRICK with fid `-` does not count as a distinct feature.
    text +=
        &raw(6, "worker", "-", "TRICK", "sqlite3.connect(missing_path) creates the file silently");
    env.write("memory/raw.md", &text);
    env.write("features.json", r#"[{"id":"F-001","status":"passed"},{"id":"F-002","status":"passed"},{"id":"F-003","status":"todo"}]"#);
    let h = env.harness();
    let r1 = h.curate(Trigger::Manual, at("2026-04-24T12:00:00Z")).unwrap();
    assert_eq!(r1.promoted, 0, "{:?}", r1.notes);
    let memory = env.read("memory/MEMORY.md");
    assert!(
        memory.contains("- [2026-04-24] node --test <file> needs no extra deps (evidence: F-001)"),
        "{memory}"
    );
    assert!(
        memory
            .contains("sqlite3.connect(missing_path) creates the file silently (evidence: F-002)"),
        "{memory}"
    );
    assert!(
        memory.contains(
            "src/index.ts must export the router last, or routes vanish (evidence: F-002, F-003)"
        ),
        "{memory}"
    );
    // Every TRICK left raw.md (all were promoted to Lessons).
    assert_eq!(env.read("memory/raw.md"), "");

    // Next pass: a second feature sees the node trick → cross-pass carry reaches 2 → identity.
    env.write("memory/raw.md", &raw(10, "worker", "F-003", "TRICK", "node --test needs no deps"));
    let r2 = h.curate(Trigger::Manual, at("2026-04-25T12:00:00Z")).unwrap();
    assert_eq!(r2.promoted, 1, "{:?}", r2.notes);
    let worker = env.read_identity("worker");
    // Dated by the entry that completed the count (10:00:10 on the 24th), not by the pass.
    assert!(worker.contains("- [2026-04-24] node --test <file> needs no extra deps. Evidence: F-001, F-003 (shop@2026-04-24)"), "{worker}");
    let memory = env.read("memory/MEMORY.md");
    assert!(!memory.contains("node --test"), "the graduated candidate leaves MEMORY.md: {memory}");
    assert!(r2.line().ends_with("IDENTITY +1"));

    // Seen again later: already in identity, never promoted twice.
    env.write(
        "memory/raw.md",
        &raw(20, "worker", "F-001", "TRICK", "node --test <file> needs no deps"),
    );
    env.write(
        "memory/raw.md",
        &(env.read("memory/raw.md")
            + &raw(21, "worker", "F-002", "TRICK", "node --test <file> needs no deps")),
    );
    let r3 = h.curate(Trigger::Manual, at("2026-04-26T12:00:00Z")).unwrap();
    assert_eq!(r3.promoted, 0);
    assert_eq!(env.read_identity("worker"), worker);
}
