//! §1.4 rules in order and §1.5 field rules.

use curator_core::codec::{ParseError, YamlValue, parse_observation};
use curator_core::{IdShape, SnapshotEntry};

use crate::common::{BASE_LINES, ID, LEGACY_ID, file, observation, with_line};

fn parse(text: &str) -> Result<curator_core::Observation, ParseError> {
    parse_observation(text, ID)
}

fn schema_message(text: &str) -> String {
    match parse(text) {
        Err(e @ ParseError::Schema(_)) => e.to_string(),
        other => panic!("expected a schema error, got {other:?}"),
    }
}

#[test]
fn a_valid_base_file_parses() {
    let obs = parse(&file(BASE_LINES, "Click **Pay now** twice.")).unwrap();
    assert_eq!(obs, observation());
    assert_eq!(obs.id.shape(), IdShape::Canonical);
}

// Rule 1: delimiters.

#[test]
fn rule1_no_delimiters() {
    for text in
        ["", "hello", "--\nx\n--\nbody", "---\nid: x\n", "---\n---\nbody", " ---\na: 1\n---\nb"]
    {
        assert_eq!(
            parse(text),
            Err(ParseError::NoDelimiters { starts_with_bom: false }),
            "{text:?}"
        );
    }
}

#[test]
fn rule1_bom_is_not_stripped_but_named() {
    let text = format!("\u{feff}{}", file(BASE_LINES, "body"));
    let err = parse(&text).unwrap_err();
    assert_eq!(err, ParseError::NoDelimiters { starts_with_bom: true });
    let msg = err.to_string();
    assert!(msg.starts_with("No frontmatter delimiters found"), "{msg}");
    assert!(msg.contains("byte order mark"), "{msg}");
}

#[test]
fn rule1_closing_delimiter_is_any_line_starting_with_three_dashes() {
    let text = format!("---\n{BASE_LINES}---foo\nbody\n");
    assert_eq!(parse(&text).unwrap().content, "foo\nbody");
}

#[test]
fn rule1_crlf_files_parse_and_the_body_loses_its_crs() {
    let text = file(BASE_LINES, "line one\nline two").replace('\n', "\r\n");
    let obs = parse(&text).unwrap();
    assert_eq!(obs.title, "Checkout button needs a second click");
    assert_eq!(obs.content, "line one\nline two");
}

// Rule 2: YAML.

#[test]
fn rule2_empty_frontmatter_is_null_and_fails_the_schema() {
    let msg = schema_message("---\n\n---\nbody\n");
    assert!(msg.contains("(frontmatter)") && msg.contains("got null"), "{msg}");
}

#[test]
fn rule2_duplicate_keys_multiple_documents_and_syntax_are_yaml_errors() {
    let dup = file(&format!("{BASE_LINES}trust: 0.6\n"), "body");
    let multi = file(&format!("{BASE_LINES}...\nextra: 1\n"), "body");
    let syntax = file(&format!("{BASE_LINES}bad: [unclosed\n"), "body");
    for (text, needle) in
        [(dup, "Map keys must be unique"), (multi, "multiple documents"), (syntax, "line 10")]
    {
        match parse(&text) {
            Err(ParseError::Yaml(msg)) => assert!(msg.contains(needle), "{msg}"),
            other => panic!("{other:?}"),
        }
        assert!(parse(&text).unwrap_err().to_string().starts_with("YAML parse error: "));
    }
}

#[test]
fn rule2_comes_before_rule3() {
    let text = "---\na: [\n---\n   \n";
    assert!(matches!(parse(text), Err(ParseError::Yaml(_))));
}

// Rule 3: body.

#[test]
fn rule3_blank_bodies() {
    for body in ["", " ", "\n\n", "\t \r\n", "\u{a0}\u{feff}\u{3000}\u{2028}"] {
        let text = format!("---\n{BASE_LINES}---\n{body}");
        assert_eq!(parse(&text), Err(ParseError::BlankBody), "{body:?}");
    }
    // U+0085 is not JavaScript whitespace, so it is content.
    assert_eq!(parse(&file(BASE_LINES, "\u{85}")).unwrap().content, "\u{85}");
}

#[test]
fn rule3_only_one_trailing_newline_is_removed() {
    let text = format!("---\n{BASE_LINES}---\nbody\n\n");
    assert_eq!(parse(&text).unwrap().content, "body\n");
}

#[test]
fn rule3_comes_before_rule4() {
    let text = format!("---\n{BASE_LINES}content: x\n---\n  \n");
    assert_eq!(parse(&text), Err(ParseError::BlankBody));
}

// Rule 4: content key.

#[test]
fn rule4_content_key_is_refused_before_the_id_check() {
    let fm = format!("{}content: hello\n", with_line("id", "id: obs_wrong"));
    assert_eq!(parse(&file(&fm, "body")), Err(ParseError::ContentInFrontmatter));
    assert_eq!(
        ParseError::ContentInFrontmatter.to_string(),
        "Observation content must live in the markdown body, not frontmatter"
    );
}

// Rule 5: id.

#[test]
fn rule5_id_mismatch_is_strict() {
    let text = file(BASE_LINES, "body");
    let err = parse_observation(&text, "obs_other").unwrap_err();
    assert_eq!(err.to_string(), format!("ID mismatch: file obs_other vs frontmatter {ID}"));
    // A number never equals a file name, even `123` and `123.md`.
    let numeric = file(&with_line("id", "id: 123"), "body");
    assert_eq!(
        parse_observation(&numeric, "123"),
        Err(ParseError::IdMismatch { file: "123".into(), frontmatter: "123".into() })
    );
    // The same text quoted passes rule 5 and fails the id shape.
    let quoted = file(&with_line("id", "id: \"123\""), "body");
    let msg = parse_observation(&quoted, "123").unwrap_err().to_string();
    assert!(msg.starts_with("schema: field id: expected an observation id"), "{msg}");
}

#[test]
fn rule5_quoted_id_matches() {
    let text = file(&with_line("id", &format!("id: '{ID}'")), "body");
    assert!(parse(&text).is_ok());
}

// Rule 6: schema.

#[test]
fn missing_id_is_a_schema_error() {
    let msg = schema_message(&file(&with_line("id", ""), "body"));
    assert!(msg.contains("field id: expected an observation id"), "{msg}");
    assert!(msg.contains("got nothing"), "{msg}");
}

#[test]
fn legacy_ids_are_readable() {
    let text = file(&with_line("id", &format!("id: {LEGACY_ID}")), "body");
    let obs = parse_observation(&text, LEGACY_ID).unwrap();
    assert_eq!(obs.id.shape(), IdShape::Legacy);
    for bad in ["bad_id", "obs_one-two-three", "obs_ONE-TWO-THREE-FOUR-FIVE-SIX"] {
        let text = file(&with_line("id", &format!("id: {bad}")), "body");
        let msg = parse_observation(&text, bad).unwrap_err().to_string();
        assert!(msg.contains("field id"), "{bad}: {msg}");
    }
}

#[test]
fn trust_rules() {
    assert_eq!(
        schema_message(&file(&with_line("trust", "trust: \"0.5\""), "b")),
        "schema: field trust: expected a number between 0 and 1, got string \"0.5\""
    );
    for bad in ["1.5", "-0.1", ".nan", ".inf", "-.inf", "true", "null", "[]", "'1'"] {
        let msg = schema_message(&file(&with_line("trust", &format!("trust: {bad}")), "b"));
        assert!(msg.starts_with("schema: field trust"), "{bad}: {msg}");
    }
    for (good, value) in
        [("1", 1.0), ("0", 0.0), ("0.55", 0.55), (".5", 0.5), ("1e-7", 1e-7), ("1.0", 1.0)]
    {
        let obs = parse(&file(&with_line("trust", &format!("trust: {good}")), "b")).unwrap();
        assert_eq!(obs.trust, value, "{good}");
    }
}

#[test]
fn count_rules() {
    for (good, value) in [
        ("3", 3),
        ("3.0", 3),
        ("1e3", 1000),
        ("0x10", 16),
        ("-0", 0),
        ("9007199254740991", 9007199254740991),
    ] {
        let obs =
            parse(&file(&with_line("confirmed_count", &format!("confirmed_count: {good}")), "b"))
                .unwrap_or_else(|e| panic!("{good}: {e}"));
        assert_eq!(obs.confirmed_count, value, "{good}");
    }
    for bad in ["1.5", "-1", "\"3\"", "9007199254740992", ".inf", "~", "three"] {
        let text =
            file(&with_line("contradicted_count", &format!("contradicted_count: {bad}")), "b");
        let msg = schema_message(&text);
        assert!(
            msg.starts_with("schema: field contradicted_count: expected a whole number"),
            "{bad}: {msg}"
        );
    }
}

#[test]
fn datetime_rules_of_section_1_5() {
    for good in [
        "2026-04-10T12:00:00.000Z",
        "2026-04-10T12:00Z",
        "2026-04-10T12:00:00.123456789Z",
        "2024-02-29T00:00:00Z",
        "\"2026-04-10T12:00:00Z\"",
    ] {
        let obs = parse(&file(&with_line("created", &format!("created: {good}")), "b"))
            .unwrap_or_else(|e| panic!("{good}: {e}"));
        assert_eq!(obs.created, good.trim_matches('"'));
    }
    for bad in [
        "2026-04-10T12:00:00+02:00",
        "2026-04-10T12:00:00",
        "\"2026-04-10 12:00:00Z\"",
        "2026-04-10T12:00:00z",
        "2026-02-30T00:00:00Z",
        "2023-02-29T00:00:00Z",
        "2026-04-10T24:00:00Z",
        "2026-04-10T12:00:60Z",
        "2026-04-10",
        "1712750400",
    ] {
        let msg = schema_message(&file(
            &with_line("last_confirmed", &format!("last_confirmed: {bad}")),
            "b",
        ));
        assert!(
            msg.starts_with("schema: field last_confirmed: expected an ISO datetime"),
            "{bad}: {msg}"
        );
    }
}

#[test]
fn string_fields_and_the_core_schema() {
    // YAML 1.1 spellings are strings under the 1.2 core schema.
    for plain in ["yes", "on", "NaN", "1_000", "2026-04-10", "0b101", "Ünïcode ✓"] {
        let obs = parse(&file(&with_line("title", &format!("title: {plain}")), "b")).unwrap();
        assert_eq!(obs.title, plain);
    }
    // Core-schema non-strings are not titles.
    for typed in ["true", "True", "TRUE", "null", "~", "0x1F", "0o17", ".inf", "1e3", "12", "\"\""]
    {
        let msg = schema_message(&file(&with_line("title", &format!("title: {typed}")), "b"));
        assert!(
            msg.starts_with("schema: field title: expected a non-empty string"),
            "{typed}: {msg}"
        );
    }
    // No trim: a single space is a title.
    assert_eq!(parse(&file(&with_line("title", "title: \" \""), "b")).unwrap().title, " ");
    let msg = schema_message(&file(&with_line("source_test", "source_test: ''"), "b"));
    assert!(msg.contains("field source_test"), "{msg}");
}

#[test]
fn every_failing_field_is_reported() {
    let fm = with_line("trust", "trust: 2").replace("confirmed_count: 1", "confirmed_count: -1");
    let msg = schema_message(&file(&fm, "b"));
    assert!(msg.contains("field trust") && msg.contains("field confirmed_count"), "{msg}");
}

#[test]
fn a_non_mapping_frontmatter_fails_the_schema() {
    for fm in ["just text\n", "- a\n- b\n", "42\n"] {
        let msg = schema_message(&file(fm, "body"));
        assert!(msg.contains("(frontmatter)"), "{msg}");
    }
}

// Base vs suite.

const SNAPSHOT: &str = "suite_snapshot:\n  - test: tests/web/a.yaml\n    id: t_a\n  - test: tests/web/b.yaml\n    id: t_b\n";

#[test]
fn position_selects_the_suite_schema() {
    let obs = parse(&file(&format!("{BASE_LINES}position: 1\n{SNAPSHOT}"), "b")).unwrap();
    let suite = obs.suite.unwrap();
    assert_eq!(suite.position, 1);
    assert_eq!(
        suite.suite_snapshot[1],
        SnapshotEntry { test: "tests/web/b.yaml".into(), id: "t_b".into() }
    );
    // Flow style is as good as block style.
    let flow = "position: 0\nsuite_snapshot: [{test: x.yaml, id: t_x}]\n";
    assert_eq!(
        parse(&file(&format!("{BASE_LINES}{flow}"), "b")).unwrap().suite.unwrap().position,
        0
    );
}

#[test]
fn suite_schema_requires_a_snapshot_and_a_position() {
    let msg = schema_message(&file(&format!("{BASE_LINES}position: 1\n"), "b"));
    assert!(msg.contains("field suite_snapshot: expected a non-empty list"), "{msg}");
    let msg = schema_message(&file(&format!("{BASE_LINES}position: ~\n{SNAPSHOT}"), "b"));
    assert!(msg.contains("field position"), "{msg}");
    let msg = schema_message(&file(&format!("{BASE_LINES}position: 1\nsuite_snapshot: []\n"), "b"));
    assert!(msg.contains("got an empty sequence"), "{msg}");
}

#[test]
fn snapshot_entries_are_strict() {
    for (entries, needle) in [
        ("  - test: a\n    id: t_a\n    extra: 1\n", "suite_snapshot[0].extra"),
        ("  - test: a\n", "suite_snapshot[0].id"),
        ("  - test: 1\n    id: t_a\n", "suite_snapshot[0].test: expected a string, got number 1"),
        ("  - test: a\n    id: t_a\n  - just a string\n", "suite_snapshot[1]: expected a mapping"),
    ] {
        let msg = schema_message(&file(
            &format!("{BASE_LINES}position: 0\nsuite_snapshot:\n{entries}"),
            "b",
        ));
        assert!(msg.contains(needle), "{needle}: {msg}");
    }
}

#[test]
fn without_position_a_snapshot_is_an_unknown_key() {
    let obs = parse(&file(&format!("{BASE_LINES}{SNAPSHOT}"), "b")).unwrap();
    assert!(obs.suite.is_none());
    assert!(
        matches!(obs.extra.get("suite_snapshot"), Some(YamlValue::Seq(items)) if items.len() == 2)
    );
}

#[test]
fn unknown_keys_are_kept_in_file_order() {
    let fm = format!("zeta: 1\n{BASE_LINES}alpha: [x, 2]\nnested:\n  k: \"0.5\"\n");
    let obs = parse(&file(&fm, "b")).unwrap();
    let keys: Vec<&str> = obs.extra.0.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, ["zeta", "alpha", "nested"]);
    assert_eq!(obs.extra.get("zeta"), Some(&YamlValue::Int(1)));
    assert_eq!(
        obs.extra.get("nested"),
        Some(&YamlValue::Map(vec![("k".into(), YamlValue::String("0.5".into()))]))
    );
}

// Reading, against `yaml` 2.8.4 itself.

/// A value of `yaml-2.8.4-read-vectors.json` (numbers are `{"n": String(n)}`, maps
/// `{"map": [[k, v]]}`) as a [`YamlValue`].
fn decode(v: &serde_json::Value) -> YamlValue {
    use serde_json::Value as J;
    match v {
        J::Null => YamlValue::Null,
        J::Bool(b) => YamlValue::Bool(*b),
        J::String(s) => YamlValue::String(s.clone()),
        J::Array(items) => YamlValue::Seq(items.iter().map(decode).collect()),
        J::Object(o) if o.contains_key("n") => {
            let n = o["n"].as_str().unwrap();
            YamlValue::Float(match n {
                "NaN" => f64::NAN,
                "Infinity" => f64::INFINITY,
                "-Infinity" => f64::NEG_INFINITY,
                n => n.parse().unwrap(),
            })
        }
        J::Object(o) => YamlValue::Map(
            o["map"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| (p[0].as_str().unwrap().to_owned(), decode(&p[1])))
                .collect(),
        ),
        J::Number(_) => unreachable!("numbers are encoded as {{\"n\": ...}}"),
    }
}

/// JavaScript equality, except that NaN matches NaN and -0 only matches -0.
fn same(a: &YamlValue, b: &YamlValue) -> bool {
    match (a, b) {
        (YamlValue::Seq(x), YamlValue::Seq(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (YamlValue::Map(x), YamlValue::Map(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|((ka, a), (kb, b))| ka == kb && same(a, b))
        }
        _ => match (a.as_f64(), b.as_f64()) {
            (Some(x), Some(y)) => {
                (x.is_nan() && y.is_nan())
                    || (x == y && x.is_sign_negative() == y.is_sign_negative())
            }
            _ => a == b,
        },
    }
}

/// Each `x: <text>` read by `yaml` 2.8.4 (`yaml-2.8.4-read-vectors.js`) reads the same here:
/// the same value, or an error where `yaml` throws.
#[test]
fn reads_like_yaml_2_8_4() {
    let raw = include_str!("../fixtures/codec/yaml-2.8.4-read-vectors.json");
    let vectors: Vec<(String, serde_json::Value)> = serde_json::from_str(raw).unwrap();
    assert!(vectors.len() > 100);
    let mut mismatches = Vec::new();
    for (text, expected) in &vectors {
        // A key after `x` keeps the delimiter from eating a `|+` block's last line break.
        let got = parse(&file(&format!("{BASE_LINES}x: {text}\nend: 0\n"), "body"));
        let ok = match (expected.get("ok"), &got) {
            (Some(v), Ok(obs)) => obs.extra.get("x").is_some_and(|x| same(x, &decode(v))),
            (None, Err(ParseError::Yaml(_))) => true,
            _ => false,
        };
        if !ok {
            mismatches.push(format!("{text:?}: yaml {expected}, here {got:?}"));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}
