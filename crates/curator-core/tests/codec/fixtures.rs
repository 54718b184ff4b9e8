//! Files exactly as agent-qa's writer produces them (`fixtures/codec/*.md`, made with `yaml`
//! 2.8.4 by `agent-qa-writer.js`): reading then writing must give the same bytes.

use std::path::{Path, PathBuf};

use curator_core::codec::{parse_observation, write_observation};
use curator_core::{IdShape, Observation};

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/codec")
}

/// Reads a fixture; its id is the stem agent-qa would have named it by.
fn read(name: &str) -> (String, Observation) {
    let text = std::fs::read_to_string(fixture_dir().join(name)).unwrap();
    let id = text.lines().nth(1).and_then(|l| l.strip_prefix("id: ")).unwrap().to_owned();
    let obs = parse_observation(&text, &id).unwrap_or_else(|e| panic!("{name}: {e}"));
    (text, obs)
}

#[test]
fn every_fixture_rewrites_byte_for_byte() {
    let mut names: Vec<String> = std::fs::read_dir(fixture_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".md"))
        .collect();
    names.sort();
    assert!(names.len() >= 9, "{names:?}");
    for name in names {
        let (text, obs) = read(&name);
        assert_eq!(write_observation(&obs).unwrap(), text, "{name}");
    }
}

#[test]
fn fixture_values() {
    let (_, base) = read("base.md");
    assert_eq!(base.trust, 0.5);
    assert!(base.suite.is_none() && base.extra.is_empty());

    let (_, suite) = read("suite.md");
    let placement = suite.suite.unwrap();
    assert_eq!((suite.trust, placement.position, placement.suite_snapshot.len()), (1.0, 2, 3));

    assert_eq!(read("quoted-title.md").1.title, "Login page: modal appears after a short delay");
    assert_eq!(read("quoted-title.md").1.trust, 0.55);
    assert_eq!(read("single-quoted-title.md").1.title, "Banner says \"hi\": dismiss it first");
    assert_eq!(
        read("multiline-title.md").1.title,
        "Two-step login\nthen a captcha on the second try"
    );
    assert_eq!(
        read("multiline-title-indented.md").1.title,
        "  indented first line\nsecond line\n\n"
    );

    let (_, rich) = read("rich-content.md");
    assert_eq!(rich.title, "Search results table: columns and \"sort\" #order");
    assert!(rich.content.contains("```yaml\nsort: price\n---\nkey: \"value\" # comment\n```"));
    assert!(rich.content.contains("| \"Price\" | it's numeric |"));
    assert!(rich.content.ends_with("spaces   \nend."));

    let (_, legacy) = read("legacy-id.md");
    assert_eq!(legacy.id.shape(), IdShape::Legacy);

    let (_, small) = read("small-trust.md");
    assert_eq!((small.title.as_str(), small.trust), ("true", 1e-7));
    assert_eq!(small.confirmed_count, 9_007_199_254_740_991);
    assert_eq!(small.created, "2026-04-10T12:00Z");
}
