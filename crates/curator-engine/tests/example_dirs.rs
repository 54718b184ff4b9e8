//! The repository's example memory root and eval sets stay valid agent-qa data.
//!
//! `examples/agent-qa-memory` feeds the quick start and demos; `eval/dev`, `eval/train` and
//! `eval/holdout` measure ranking. All must be exactly what agent-qa's writer produces (spec
//! §1.6): every file parses and rewrites byte for byte. Every labelled id of an eval set must
//! exist and be visible to its query under the scope rules of spec §3.2 with trust ≥ the default
//! `minTrust`, because a label the engine may never return would only lower recall for nothing.
//! The held-out set is frozen (issue 14): its files must still hash to the sums its README
//! recorded when it was written, so no ranking change can quietly come with a label change.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

use curator_core::codec::{parse_observation, write_observation};
use curator_core::config::Config;
use curator_core::scanner::scan_observation;
use curator_core::{IdShape, Observation};
use curator_engine::eval::load_queries;

/// Default `minTrust` (spec §2): nothing below it may be injected, so nothing below it is labelled.
const MIN_TRUST: f64 = 0.3;

fn repo_path(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(rel)
}

/// One observation file found under a root: its tier folder, scope folder and parsed value.
struct Found {
    path: PathBuf,
    tier: String,
    scope: String,
    obs: Observation,
}

/// Reads every file under `<root>/<tier>/<scope>/`, asserting the layout of spec §1.1 and that
/// each file parses and rewrites to the same bytes.
fn read_root(root: &Path) -> Vec<Found> {
    let mut found = Vec::new();
    // `.curator/` is curator's own derived state (index, sessions, journal): running the quick
    // start over the example creates it, and it is never part of the memory itself.
    let mut tiers: Vec<_> = fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().is_some_and(|n| n != ".curator"))
        .collect();
    tiers.sort();
    let names: Vec<_> =
        tiers.iter().map(|p| p.file_name().unwrap().to_str().unwrap().to_owned()).collect();
    assert_eq!(
        names,
        ["products", "suites", "tests"],
        "{}: unexpected top-level entries",
        root.display()
    );
    for tier_dir in tiers {
        let tier = tier_dir.file_name().unwrap().to_str().unwrap().to_owned();
        for scope_entry in fs::read_dir(&tier_dir).unwrap() {
            let scope_dir = scope_entry.unwrap().path();
            assert!(
                scope_dir.is_dir(),
                "{}: a file directly under a tier folder",
                scope_dir.display()
            );
            let scope = scope_dir.file_name().unwrap().to_str().unwrap().to_owned();
            for file in fs::read_dir(&scope_dir).unwrap() {
                let path = file.unwrap().path();
                let name = path.file_name().unwrap().to_str().unwrap().to_owned();
                assert!(
                    name.starts_with("obs_") && name.ends_with(".md"),
                    "{}: not an observation file",
                    path.display()
                );
                let text = fs::read_to_string(&path).unwrap();
                let stem = name.trim_end_matches(".md");
                let obs = parse_observation(&text, stem)
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                let written =
                    write_observation(&obs).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                assert_eq!(written, text, "{}: rewrite differs from the file", path.display());
                assert!(
                    obs.suite.is_none() || tier == "suites",
                    "{}: positioned observation outside suites/",
                    path.display()
                );
                // `curator lint` must report nothing here, and the index skips unsafe files (§7).
                let verdict = scan_observation(&obs.title, &obs.content);
                assert!(verdict.is_safe(), "{}: scanner blocks it: {verdict:?}", path.display());
                found.push(Found { path, tier: tier.clone(), scope: scope.clone(), obs });
            }
        }
    }
    found
}

fn assert_canonical_scope_ids(found: &[Found]) {
    let canonical = |s: &str, prefix: &str| {
        s.strip_prefix(prefix).is_some_and(|body| {
            let words: Vec<_> = body.split('-').collect();
            words.len() == 10
                && words.iter().all(|w| {
                    (3..=6).contains(&w.len()) && w.bytes().all(|b| b.is_ascii_lowercase())
                })
        })
    };
    for f in found {
        match f.tier.as_str() {
            "suites" => assert!(
                canonical(&f.scope, "s_"),
                "{}: suite folder is not a canonical s_ id",
                f.path.display()
            ),
            "tests" => assert!(
                canonical(&f.scope, "t_"),
                "{}: test folder is not a canonical t_ id",
                f.path.display()
            ),
            _ => {}
        }
        assert!(
            canonical(&f.obs.source_test, "t_"),
            "{}: source_test is not a canonical t_ id",
            f.path.display()
        );
        if f.obs.id.shape() == IdShape::Canonical {
            assert!(
                canonical(f.obs.id.as_str(), "obs_"),
                "{}: id words must be 3-6 letters",
                f.path.display()
            );
        }
        for entry in f.obs.suite.iter().flat_map(|s| &s.suite_snapshot) {
            assert!(
                canonical(&entry.id, "t_")
                    && entry.test.starts_with("tests/")
                    && entry.test.ends_with(".yaml")
            );
        }
    }
}

#[test]
fn example_memory_root_is_agent_qa_exact() {
    let found = read_root(&repo_path("examples/agent-qa-memory"));
    assert_canonical_scope_ids(&found);
    let in_tier = |t: &str| found.iter().filter(|f| f.tier == t).count();
    assert!((15..=20).contains(&found.len()), "{} observations", found.len());
    assert!(in_tier("suites") >= 4 && in_tier("tests") >= 2);
    assert_eq!(found.iter().filter(|f| f.obs.id.shape() == IdShape::Legacy).count(), 1);
    assert!(
        found.iter().any(|f| f.obs.suite.is_none() && f.tier == "suites"),
        "no base suite observation"
    );
    assert!(
        found.iter().any(|f| f.obs.suite.as_ref().is_some_and(|s| s.suite_snapshot.len() == 3))
    );
    // The config resolves `services.memory.dir` against its own folder (spec §2).
    let examples = repo_path("examples");
    let text = fs::read_to_string(examples.join("agent-qa.config.yaml")).unwrap();
    let config = Config::from_yaml_str(&text, &examples).unwrap();
    assert_eq!(
        fs::canonicalize(config.memory_root()).unwrap(),
        fs::canonicalize(examples.join("agent-qa-memory")).unwrap()
    );
}

/// Checks one eval set: agent-qa exact files, at least `min_observations` / `min_queries`, at
/// least one fifth "nothing" queries, a suite step, and every label visible to its query.
fn check_eval_set(dir: &str, min_observations: usize, min_queries: usize) {
    let found = read_root(&repo_path(&format!("{dir}/memory")));
    assert_canonical_scope_ids(&found);
    assert!(found.len() >= min_observations, "{dir}: {} observations", found.len());
    let mut by_id: HashMap<&str, &Found> = HashMap::new();
    for f in &found {
        assert!(by_id.insert(f.obs.id.as_str(), f).is_none(), "{}: duplicate id", f.path.display());
    }

    let queries = load_queries(&repo_path(&format!("{dir}/queries.jsonl"))).unwrap();
    assert!(queries.len() >= min_queries, "{dir}: {} queries", queries.len());
    let nothing = queries.iter().filter(|q| q.relevant.is_empty()).count();
    assert!(nothing * 5 >= queries.len() || dir == "eval/dev", "{dir}: {nothing} nothing queries");
    assert!(queries.iter().any(|q| q.suite.is_some()), "{dir}: no suite step");
    for q in &queries {
        for id in &q.relevant {
            let f = by_id
                .get(id.as_str())
                .unwrap_or_else(|| panic!("{dir} line {}: {id} does not exist", q.line));
            assert!(
                f.obs.trust >= MIN_TRUST,
                "{dir} line {}: {id} has trust below minTrust",
                q.line
            );
            // Spec §3.2: products/<product>, tests/<test>, and in a suite suites/<id>, where a
            // positioned observation needs the same snapshot and position.
            let visible = match f.tier.as_str() {
                "products" => f.scope == q.product.as_str(),
                "tests" => f.scope == q.test.as_str(),
                "suites" => q.suite.as_ref().is_some_and(|s| {
                    f.scope == s.id.as_str()
                        && f.obs
                            .suite
                            .as_ref()
                            .is_none_or(|p| p.position == s.position && p.suite_snapshot == s.tests)
                }),
                _ => false,
            };
            assert!(
                visible,
                "{dir} line {}: {id} ({}) is not visible to the query",
                q.line,
                f.path.display()
            );
        }
        // `nothing` is a label of the relevant list, never a guess beside it.
        let labelled_nothing = q.classes.iter().any(|c| c == "nothing");
        assert!(
            q.classes.is_empty() || labelled_nothing == q.relevant.is_empty(),
            "{dir} line {}: class `nothing` disagrees with `relevant`",
            q.line
        );
    }
}

#[test]
fn dev_eval_set_labels_exist_and_are_visible_to_their_query() {
    check_eval_set("eval/dev", 40, 60);
}

#[test]
fn train_eval_set_labels_exist_and_are_visible_to_their_query() {
    check_eval_set("eval/train", 100, 150);
}

#[test]
fn holdout_eval_set_labels_exist_and_are_visible_to_their_query() {
    check_eval_set("eval/holdout", 300, 400);
}

#[test]
fn cjk_eval_set_labels_exist_and_are_visible_to_their_query() {
    check_eval_set("eval/cjk", 100, 200);
}

#[test]
fn cjk_train_set_labels_exist_and_are_visible_to_their_query() {
    check_eval_set("eval/cjk-train", 90, 200);
}

/// SHA-256 of `bytes` in lowercase hex, as `sha256sum` prints it.
fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// The two sums `eval/holdout/README.md` records, recomputed the way its commands do: the
/// queries file, and the sorted `<sha256>  <path>` listing of every memory file.
#[test]
fn holdout_eval_set_is_unchanged_since_it_was_frozen() {
    assert_frozen("eval/holdout");
}

/// `eval/cjk` was frozen before the bigram change it judges (its README).
#[test]
fn cjk_eval_set_is_unchanged_since_it_was_frozen() {
    assert_frozen("eval/cjk");
}

/// The sums the set's README records match its files (see the holdout test).
fn assert_frozen(set: &str) {
    let dir = repo_path(set);
    let readme = fs::read_to_string(dir.join("README.md")).unwrap();
    let queries_sum = sha256_hex(&fs::read(dir.join("queries.jsonl")).unwrap());

    let memory = dir.join("memory");
    let mut listing: Vec<String> = Vec::new();
    for tier in ["products", "suites", "tests"] {
        let mut stack = vec![memory.join(tier)];
        while let Some(path) = stack.pop() {
            if path.is_dir() {
                stack.extend(fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
            } else if path.extension().is_some_and(|e| e == "md") {
                let rel = path.strip_prefix(&memory).unwrap().to_str().unwrap().to_owned();
                listing.push(format!("{}  {rel}\n", sha256_hex(&fs::read(&path).unwrap())));
            }
        }
    }
    // The README's command sorts the paths (`find | LC_ALL=C sort`, byte order, which is `str`'s
    // order) and then hashes each; a line is `<64 hex>  <path>`, so its path starts at byte 66.
    listing.sort_by(|a, b| a[66..].cmp(&b[66..]));
    let memory_sum = sha256_hex(listing.concat().as_bytes());

    for (what, sum) in [("queries.jsonl", &queries_sum), ("memory files", &memory_sum)] {
        assert!(
            readme.contains(sum.as_str()),
            "{set} {what} hash to {sum}, which its README does not record: the frozen set was changed"
        );
    }
}
