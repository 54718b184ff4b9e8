//! The repository's example memory root and dev eval set stay valid agent-qa data.
//!
//! `examples/agent-qa-memory` feeds the quick start and demos, `eval/dev` measures ranking.
//! Both must be exactly what agent-qa's writer produces (spec §1.6): every file parses and
//! rewrites byte for byte. Every labelled id in `eval/dev/queries.jsonl` must exist and be
//! visible to its query under the scope rules of spec §3.2 with trust ≥ the default `minTrust`,
//! because a label the engine may never return would only lower recall for nothing.

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

#[test]
fn dev_eval_set_labels_exist_and_are_visible_to_their_query() {
    let found = read_root(&repo_path("eval/dev/memory"));
    assert_canonical_scope_ids(&found);
    assert!(found.len() >= 40, "{} observations", found.len());
    let mut by_id: HashMap<&str, &Found> = HashMap::new();
    for f in &found {
        assert!(by_id.insert(f.obs.id.as_str(), f).is_none(), "{}: duplicate id", f.path.display());
    }

    let queries = load_queries(&repo_path("eval/dev/queries.jsonl")).unwrap();
    assert!(queries.len() >= 60, "{} queries", queries.len());
    assert!(queries.iter().filter(|q| q.relevant.is_empty()).count() >= 10);
    assert!(queries.iter().any(|q| q.suite.is_some()));
    for q in &queries {
        for id in &q.relevant {
            let f = by_id
                .get(id.as_str())
                .unwrap_or_else(|| panic!("line {}: {id} does not exist", q.line));
            assert!(f.obs.trust >= MIN_TRUST, "line {}: {id} has trust below minTrust", q.line);
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
                "line {}: {id} ({}) is not visible to the query",
                q.line,
                f.path.display()
            );
        }
    }
}
