//! §1.6: layout, quoting and numbers, checked against `yaml` 2.8.4's own output.

use curator_core::ObservationId;
use curator_core::codec::{ExtraKeys, WriteError, YamlValue, parse_observation, write_observation};

use crate::common::{ID, LEGACY_ID, observation, suite_observation};

/// The frontmatter line(s) written for `title`.
fn title_yaml(title: &str) -> String {
    let obs = curator_core::Observation { title: title.into(), ..observation() };
    let text = write_observation(&obs).unwrap();
    let start = text.find("title:").unwrap();
    let end = text.find("trust:").unwrap();
    text[start..end].to_owned()
}

#[test]
fn layout_key_order_and_trailing_newlines() {
    let text = write_observation(&suite_observation()).unwrap();
    assert_eq!(
        text,
        format!(
            "---\nid: {ID}\ntitle: Checkout button needs a second click\ntrust: 0.5\n\
             created: 2026-04-10T12:00:00.000Z\nlast_confirmed: 2026-04-12T08:30:15.250Z\n\
             confirmed_count: 1\ncontradicted_count: 0\n\
             source_test: t_lack-auto-quit-dow-boat-urus-mild-pine-rose-tide\nposition: 1\n\
             suite_snapshot:\n  - test: tests/web/a.yaml\n    id: t_a\n  - test: tests/web/b.yaml\n    id: t_b\n\
             ---\nClick **Pay now** twice.\n"
        )
    );
}

#[test]
fn plain_strings_of_section_1_6() {
    for s in [
        "t_lack-auto-quit-dow-boat-urus",
        "tests/web/01-homepage-basics.yaml",
        "a:b",
        "x#y",
        "-x",
        ":x",
        "?x",
        "a, b",
        "yes",
        "Yes",
        "on",
        "NaN",
        "inf",
        "1_000",
        "2026-04-10",
        "Ünïcode ✓",
        "a\tb",
    ] {
        assert_eq!(title_yaml(s), format!("title: {s}\n"), "{s:?}");
    }
}

#[test]
fn quoted_strings_of_section_1_6() {
    for (s, written) in [
        ("true", "\"true\""),
        ("True", "\"True\""),
        ("TRUE", "\"TRUE\""),
        ("false", "\"false\""),
        ("null", "\"null\""),
        ("Null", "\"Null\""),
        ("~", "\"~\""),
        ("0", "\"0\""),
        ("123", "\"123\""),
        ("-1", "\"-1\""),
        ("+1", "\"+1\""),
        ("0.5", "\"0.5\""),
        (".5", "\".5\""),
        ("1.", "\"1.\""),
        ("1e3", "\"1e3\""),
        ("0x1F", "\"0x1F\""),
        ("0o17", "\"0o17\""),
        (".inf", "\".inf\""),
        (".nan", "\".nan\""),
        (
            "Login page: modal appears after a short delay",
            "\"Login page: modal appears after a short delay\"",
        ),
        ("ends with:", "\"ends with:\""),
        ("a #b", "\"a #b\""),
        ("#x", "\"#x\""),
        ("&x", "\"&x\""),
        ("*x", "\"*x\""),
        ("!x", "\"!x\""),
        ("|x", "\"|x\""),
        (">x", "\">x\""),
        ("'x", "\"'x\""),
        ("%x", "\"%x\""),
        ("@x", "\"@x\""),
        ("`x", "\"`x\""),
        ("[x", "\"[x\""),
        ("{x", "\"{x\""),
        (",x", "\",x\""),
        ("- x", "\"- x\""),
        ("? x", "\"? x\""),
        ("?", "\"?\""),
        (" x", "\" x\""),
        ("x ", "\"x \""),
        ("\tx", "\"\\tx\""),
        ("a\u{1}b", "\"a\\x01b\""),
        ("a\rb", "\"a\\rb\""),
        ("\"q\" 'x': z", "\"\\\"q\\\" 'x': z\""),
        ("c:\\dir: x", "\"c:\\\\dir: x\""),
        ("say \"hi\": now", "'say \"hi\": now'"),
        ("\"x", "'\"x'"),
    ] {
        assert_eq!(title_yaml(s), format!("title: {written}\n"), "{s:?}");
    }
}

#[test]
fn multi_line_titles_use_block_literals() {
    for (s, written) in [
        ("a\nb", "|-\n  a\n  b"),
        ("a\nb\n", "|\n  a\n  b"),
        ("a\nb\n\n", "|+\n  a\n  b\n"),
        ("  indented\nnext", "|2-\n    indented\n  next"),
        ("a\n\n  b", "|-\n  a\n\n    b"),
    ] {
        assert_eq!(title_yaml(s), format!("title: {written}\n"), "{s:?}");
    }
}

#[test]
fn numbers_are_javascript_shortest_forms() {
    for (trust, written) in
        [(0.5, "0.5"), (0.55, "0.55"), (1.0, "1"), (0.0, "0"), (0.123, "0.123"), (1e-7, "1e-7")]
    {
        let text =
            write_observation(&curator_core::Observation { trust, ..observation() }).unwrap();
        assert!(text.contains(&format!("\ntrust: {written}\n")), "{trust}: {text}");
    }
}

/// Vectors produced by `yaml` 2.8.4 (`fixtures/codec/yaml-2.8.4-vectors.js` and
/// `yaml-2.8.4-random-vectors.js`, 1,500 seeded random strings of quoting-sensitive pieces):
/// every string is written as `{title: s}` would be, every key and number as `yaml` writes it.
#[test]
fn matches_yaml_2_8_4_vectors() {
    let raw = include_str!("../fixtures/codec/yaml-2.8.4-vectors.json");
    let vectors: serde_json::Value = serde_json::from_str(raw).unwrap();
    let pairs = |name: &str| -> Vec<(String, String)> {
        vectors[name]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| (p[0].as_str().unwrap().to_owned(), p[1].as_str().unwrap().to_owned()))
            .collect()
    };
    let strings = pairs("strings");
    let random = pairs("random_strings");
    assert!(strings.len() > 150 && random.len() >= 1500);
    for (s, expected) in strings.iter().chain(&random) {
        assert_eq!(&title_yaml(s), expected, "{s:?}");
    }
    for (key, expected) in pairs("keys") {
        let obs = curator_core::Observation {
            extra: ExtraKeys(vec![(key.clone(), YamlValue::Int(1))]),
            ..observation()
        };
        let text = write_observation(&obs).unwrap();
        assert!(text.contains(&format!("\n{expected}---\n")), "{key:?}: {text}");
    }
    for (n, expected) in pairs("numbers") {
        let x: f64 = n.parse().unwrap();
        let obs = curator_core::Observation {
            extra: ExtraKeys(vec![("n".into(), YamlValue::Float(x))]),
            ..observation()
        };
        assert!(write_observation(&obs).unwrap().contains(&format!("\n{expected}---\n")), "{n}");
    }
}

#[test]
fn unknown_keys_are_written_after_the_known_ones() {
    let obs = curator_core::Observation {
        extra: ExtraKeys(vec![
            ("zeta".into(), YamlValue::Int(1)),
            (
                "tags".into(),
                YamlValue::Seq(vec![YamlValue::String("a b".into()), YamlValue::Bool(true)]),
            ),
            ("meta".into(), YamlValue::Map(vec![("k".into(), YamlValue::String("0.5".into()))])),
            ("empty".into(), YamlValue::Null),
        ]),
        ..suite_observation()
    };
    let text = write_observation(&obs).unwrap();
    assert!(
        text.contains("    id: t_b\nzeta: 1\ntags:\n  - a b\n  - true\nmeta:\n  k: \"0.5\"\nempty: null\n---\n"),
        "{text}"
    );
    assert_eq!(parse_observation(&text, ID).unwrap(), obs);
}

#[test]
fn legacy_ids_are_writable() {
    let obs =
        curator_core::Observation { id: ObservationId::parse(LEGACY_ID).unwrap(), ..observation() };
    let text = write_observation(&obs).unwrap();
    assert!(text.starts_with(&format!("---\nid: {LEGACY_ID}\n")));
    assert_eq!(parse_observation(&text, LEGACY_ID).unwrap(), obs);
}

#[test]
fn the_write_schema_is_enforced() {
    let base = observation();
    let cases: Vec<(curator_core::Observation, &str)> = vec![
        (curator_core::Observation { title: String::new(), ..base.clone() }, "title"),
        (curator_core::Observation { content: " \n\t\u{feff}".into(), ..base.clone() }, "content"),
        (curator_core::Observation { trust: 1.01, ..base.clone() }, "trust"),
        (curator_core::Observation { trust: f64::NAN, ..base.clone() }, "trust"),
        (
            curator_core::Observation {
                created: "2026-04-10T12:00:00+02:00".into(),
                ..base.clone()
            },
            "created",
        ),
        (
            curator_core::Observation {
                last_confirmed: "2026-02-30T00:00Z".into(),
                ..base.clone()
            },
            "last_confirmed",
        ),
        (curator_core::Observation { confirmed_count: 1 << 53, ..base.clone() }, "confirmed_count"),
        (curator_core::Observation { source_test: String::new(), ..base.clone() }, "source_test"),
        (
            curator_core::Observation {
                extra: ExtraKeys(vec![("title".into(), YamlValue::Null)]),
                ..base.clone()
            },
            "extra.title",
        ),
        (
            curator_core::Observation {
                extra: ExtraKeys(vec![("position".into(), YamlValue::Int(1))]),
                ..base.clone()
            },
            "extra.position",
        ),
        (
            curator_core::Observation {
                extra: ExtraKeys(vec![
                    ("x".into(), YamlValue::Null),
                    ("x".into(), YamlValue::Null),
                ]),
                ..base.clone()
            },
            "extra.x",
        ),
    ];
    for (obs, field) in cases {
        match write_observation(&obs) {
            Err(WriteError::Invalid { field: f, .. }) => assert_eq!(f, field),
            other => panic!("{field}: {other:?}"),
        }
    }
    let mut empty_snapshot = suite_observation();
    empty_snapshot.suite.as_mut().unwrap().suite_snapshot.clear();
    let err = write_observation(&empty_snapshot).unwrap_err();
    assert!(err.to_string().contains("field suite_snapshot"), "{err}");
    // A base observation may carry a `suite_snapshot` it read as an unknown key.
    let carried = curator_core::Observation {
        extra: ExtraKeys(vec![("suite_snapshot".into(), YamlValue::Seq(vec![]))]),
        ..base
    };
    assert!(write_observation(&carried).is_ok());
}
