//! Issue 16 "must show": 540 mixed entries over 3 passes — every role, prose without keywords,
//! near-format lines, non-UTF-8 bytes, TRICKs across features and passes, progress chatter,
//! monitor blocks — and after each pass every entry is in raw.md or in the archive (exactly once,
//! byte for byte) with a disposition whose target really holds what it says, and every file is
//! within its bounds.

use std::collections::BTreeMap;

use curator_harness::{
    IDENTITY_MAX_BYTES, IDENTITY_MAX_LINES, MEMORY_MAX_BYTES, MEMORY_MAX_LINES, SUMMARY_MAX_LINES,
    Trigger,
};

use crate::common::{Env, at};

const ROLES: &[&str] = &[
    "worker",
    "validator",
    "planner",
    "debugger",
    "orchestrator",
    "architect",
    "documenter",
    "plan-reviewer",
    "ui-qa",
    "product",
    "crosscheck",
];
const PER_PASS: usize = 180;
const TRICKS: &[&str] = &[
    "jq -e exits non-zero when the result is null",
    "node --test <file> runs one file without extra deps",
    "git stash before bisecting keeps the index clean",
    "curl -sf makes scripts stop on any 4xx",
    "psql -v ON_ERROR_STOP=1 stops a migration at the first error",
];
const PROSE: &[&str] = &[
    "the payment webhook is retried three times by the provider",
    "the admin UI ships after the public API",
    "CI needs pgcrypto on the test database",
    "the cart total is computed on the client",
    "session cookies are scoped to the api subdomain",
    "the search index is rebuilt every night at two",
];

/// Entry `g` (globally numbered), newline-terminated; bytes are unique by their timestamp.
fn entry(g: usize) -> Vec<u8> {
    let secs = 8 * 3600 + g * 7;
    let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    let day = 20 + g / PER_PASS;
    let ts = format!("2026-04-{day:02}T{h:02}:{m:02}:{s:02}Z");
    let role = ROLES[g % ROLES.len()];
    let fid = format!("F-{:03}", 1 + g % 40);
    let line = match g % 13 {
        0 => format!("[{ts}] worker {fid} TRICK: {} (seen {g})", TRICKS[g / 12 % TRICKS.len()]),
        1 => format!("[{ts}] {role} {fid} -: {} (note {g})", PROSE[g % PROSE.len()]),
        2 => format!("[{ts}] worker {fid} -: Implemented endpoint {g}"),
        3 => format!("[{ts}] validator {fid} -: {fid} verified via curl"),
        4 => {
            let minute = &ts[..16].replace('T', " ");
            format!("- [{minute}] {role} {fid} note: the {g}th near-format line keeps its lesson")
        }
        5 => format!("[{ts}] worker {fid} -: TRICK: {} (again {g})", TRICKS[g / 12 % TRICKS.len()]),
        6 => {
            let mut b = format!("[{ts}] {role} {fid} -: caf").into_bytes();
            b.extend_from_slice(
                format!("\u{e9} cr\u{e8}me and \u{fffd}-free bytes {g} ").as_bytes(),
            );
            b.extend_from_slice(b"\xe9\xff\xfe latin-1 pasted\n");
            return b;
        }
        7 => format!("## monitor {ts}\n- workers: {} running\n- queue: {g} todo", g % 3),
        8 => format!(
            "[{ts}] orchestrator {fid} -: escalated after {} worker attempts: sandbox {g} times out",
            2 + g % 4
        ),
        9 => format!(
            "[{ts}] planner - -: DECISION: ship search {g} behind a flag because the index is slow"
        ),
        10 => format!("[{ts}] {role} {fid} -: never run the e2e suite before seeding, case {g}"),
        11 => format!(
            "[{ts}] {role} - -: prose {g} about the {} without any keyword",
            PROSE[g % PROSE.len()]
        ),
        // Starts like an entry but cannot be read as one: kept verbatim, reported.
        _ => format!("[2026-04-{day:02}] the build broke badly: investigate {g} later"),
    };
    let mut b = line.into_bytes();
    b.push(b'\n');
    b
}

fn read_file(env: &Env, rel: &str) -> Vec<u8> {
    std::fs::read(env.state.join(rel)).unwrap_or_default()
}

/// `- [date] statement — why: … (evidence: …)` → statement; `[date] statement. Evidence …` too.
fn statement(item: &str) -> String {
    let s = item.trim_start_matches("- ");
    let s = if s.starts_with('[') && s.get(11..13) == Some("] ") { &s[13..] } else { s };
    let end = [" — why:", " (evidence:", " Evidence:"].iter().filter_map(|m| s.find(m)).min();
    s[..end.unwrap_or(s.len())].trim_end_matches('.').to_string()
}

fn check(env: &Env, appended: &[Vec<u8>], pass: usize) {
    let raw = read_file(env, "memory/raw.md");
    let archive = env.archived_bytes();
    let records = env.records();
    let memory = env.read("memory/MEMORY.md");
    let identities: BTreeMap<String, String> = std::fs::read_dir(&env.identity)
        .map(|d| {
            d.flatten()
                .filter(|e| e.file_name().to_string_lossy().ends_with(".md"))
                .map(|e| {
                    let name = format!("identity/{}", e.file_name().to_string_lossy());
                    (name, std::fs::read_to_string(e.path()).unwrap())
                })
                .collect()
        })
        .unwrap_or_default();
    // Records of entries, by their archive offset.
    let by_offset: BTreeMap<u64, &serde_json::Value> = records
        .iter()
        .filter(|r| r["kind"] == "entry")
        .map(|r| (r["offset"].as_u64().unwrap(), r))
        .collect();
    assert_eq!(by_offset.len(), records.iter().filter(|r| r["kind"] == "entry").count());
    let dropped_items: Vec<&str> = records
        .iter()
        .filter(|r| r["kind"] == "item")
        .map(|r| r["text"].as_str().unwrap())
        .collect();
    let mut dispositions: BTreeMap<String, usize> = BTreeMap::new();
    for (g, bytes) in appended.iter().enumerate() {
        let in_raw = count(&raw, bytes);
        let in_archive = count(&archive, bytes);
        assert_eq!(
            in_raw + in_archive,
            1,
            "pass {pass}: entry {g} is in raw.md {in_raw}x and in the archive {in_archive}x: {}",
            String::from_utf8_lossy(bytes)
        );
        if in_raw == 1 {
            *dispositions.entry("in raw.md".into()).or_default() += 1;
            continue;
        }
        let at = find(&archive, bytes).unwrap() as u64;
        let r = by_offset
            .get(&at)
            .unwrap_or_else(|| panic!("pass {pass}: entry {g} archived at {at} without a record"));
        assert_eq!(r["len"].as_u64(), Some(bytes.len() as u64), "entry {g}");
        let d = r["disposition"].as_str().unwrap();
        *dispositions.entry(d.into()).or_default() += 1;
        match d {
            "absorbed" | "dropped" => {
                assert!(r["reason"].as_str().is_some_and(|s| !s.is_empty()), "entry {g}: {r}")
            }
            "promoted" | "merged" | "kept" => {
                let to = r["to"][0].as_str().unwrap();
                let item = statement(r["item"].as_str().unwrap());
                let target = if to.starts_with("MEMORY.md") {
                    memory.clone()
                } else {
                    identities.get(to.split(' ').next().unwrap()).cloned().unwrap_or_default()
                };
                let later_dropped = dropped_items.iter().any(|t| t.contains(&item));
                assert!(
                    target.contains(&item) || later_dropped,
                    "pass {pass}: entry {g} {d} to {to} as {item:?}, which is neither there nor dropped later"
                );
            }
            other => panic!("unknown disposition {other}"),
        }
    }
    eprintln!("pass {pass}: {dispositions:?}");
    // Bounds, lines and bytes.
    let lines = |t: &str| t.lines().count();
    assert!(lines(&memory) <= MEMORY_MAX_LINES && memory.len() <= MEMORY_MAX_BYTES);
    assert!(lines(&env.read("memory/summary.md")) <= SUMMARY_MAX_LINES);
    for (name, text) in &identities {
        assert!(lines(text) <= IDENTITY_MAX_LINES && text.len() <= IDENTITY_MAX_BYTES, "{name}");
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn count(hay: &[u8], needle: &[u8]) -> usize {
    hay.windows(needle.len()).filter(|w| *w == needle).count()
}

#[test]
fn every_entry_of_three_passes_is_accounted_for() {
    let env = Env::new();
    env.files(&["apps/web/src/cart.ts", "drizzle/0001_init.sql"]).git();
    let features: Vec<String> =
        (1..=40).map(|n| format!(r#"{{"id":"F-{n:03}","status":"passed"}}"#)).collect();
    env.write("features.json", &format!("[{}]", features.join(",")));
    // A MEMORY.md close to its bound: 120 old Decisions, so new items push it over and the pass
    // has to drop by the documented order (into the archive).
    let mut memory = String::from("# MEMORY\n\n## Decisions\n");
    for i in 0..120 {
        memory.push_str(&format!(
            "- [2026-01-{:02}] old decision {i} — why: reason {i}\n",
            1 + i % 28
        ));
    }
    env.write("memory/MEMORY.md", &memory);
    let h = env.harness();
    let mut appended: Vec<Vec<u8>> = Vec::new();
    let mut kinds_seen = std::collections::BTreeSet::new();
    for pass in 0..3 {
        let mut raw = read_file(&env, "memory/raw.md");
        for g in pass * PER_PASS..(pass + 1) * PER_PASS {
            let e = entry(g);
            kinds_seen.insert(g % 13);
            raw.extend_from_slice(&e);
            appended.push(e);
        }
        std::fs::write(env.state.join("memory/raw.md"), &raw).unwrap();
        let report = h.curate(Trigger::Done, at(&format!("2026-04-2{}T23:00:00Z", pass))).unwrap();
        assert!(report.absorbed > 0, "{:?}", report);
        check(&env, &appended, pass);
    }
    assert_eq!(appended.len(), 540);
    assert_eq!(kinds_seen.len(), 13);
    // What the archive says, overall: nothing silently gone, TRICKs promoted across passes.
    let records = env.records();
    let of = |d: &str| records.iter().filter(|r| r["disposition"] == d).count();
    for d in ["promoted", "merged", "kept", "absorbed", "dropped"] {
        assert!(of(d) > 0, "no {d} record");
    }
    let worker = env.read_identity("worker");
    assert!(worker.contains("jq -e exits non-zero"), "{worker}");
    let status = h.status().unwrap();
    assert_eq!(
        status.dispositions.total_entries() as usize,
        records.iter().filter(|r| r["kind"] == "entry").count()
    );
}
