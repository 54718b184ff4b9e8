//! The YAML edge-case table (issue 13 item 4): every frontmatter text of
//! `tests/fixtures/codec/yaml-2.8.4-edge-vectors.json` (compact nested mappings, flow
//! collections, anchors, tags, duplicate keys, tabs, document markers, scalars, keys, and the
//! quirks of `yaml` 2) reads here as `yaml` 2.8.4's `parse` read it for agent-qa: the same
//! value where it accepted the text, an error where it refused it. An error names a rule: the
//! event parser's own (`mapping values are not allowed in this context`), or, for the rules
//! `yaml_rules` adds, `yaml`'s message and code, which must then be one `yaml` reported for
//! that text.

use super::load::load_yaml;
use super::value::YamlValue;

#[derive(Debug, serde::Deserialize)]
struct Vector {
    group: String,
    text: String,
    /// `yaml`'s value (present, possibly `null`, when it accepted the text).
    #[serde(default, deserialize_with = "present")]
    ok: Option<serde_json::Value>,
    /// `yaml`'s error code when it refused the text (the first, which `parse` throws).
    err: Option<String>,
    message: Option<String>,
    /// Every error code of the document `yaml` refused.
    #[serde(default)]
    codes: Vec<String>,
}

/// Keeps a present `null` as `Some(Null)`, so "accepted as null" differs from "refused".
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<serde_json::Value>, D::Error> {
    serde::Deserialize::deserialize(d).map(Some)
}

/// A value of the table (numbers are `{"n": String(n)}`, maps `{"map": [[k, v]]}`).
fn decode(v: &serde_json::Value) -> YamlValue {
    use serde_json::Value as J;
    match v {
        J::Null => YamlValue::Null,
        J::Bool(b) => YamlValue::Bool(*b),
        J::String(s) => YamlValue::String(s.clone()),
        J::Array(items) => YamlValue::Seq(items.iter().map(decode).collect()),
        J::Object(o) if o.contains_key("lossy") => YamlValue::String(key(v)),
        J::Object(o) if o.contains_key("n") => YamlValue::Float(match o["n"].as_str() {
            Some("NaN") => f64::NAN,
            Some("Infinity") => f64::INFINITY,
            Some("-Infinity") => f64::NEG_INFINITY,
            Some(n) => n.parse().expect("a JS number"),
            None => panic!("bad number {v}"),
        }),
        J::Object(o) => YamlValue::Map(
            o["map"]
                .as_array()
                .expect("a map")
                .iter()
                .map(|p| (key(&p[0]), decode(&p[1])))
                .collect(),
        ),
        J::Number(_) => panic!("numbers are encoded as {{\"n\": ...}}"),
    }
}

/// A string of the table: plain, or `{"lossy": s}` for a JS string with a lone surrogate, which
/// reads here with U+FFFD in its place.
fn key(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other["lossy"].as_str().expect("a string").to_owned(),
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

/// The `yaml` error code a message names, as `(CODE)`.
fn named_code(message: &str) -> Option<&str> {
    message.split(" (").skip(1).find_map(|part| {
        let code = &part[..part.find(')')?];
        (!code.is_empty() && code.bytes().all(|b| b.is_ascii_uppercase() || b == b'_'))
            .then_some(code)
    })
}

#[test]
fn every_edge_case_reads_as_yaml_2_8_4_reads_it() {
    let raw = include_str!("../../tests/fixtures/codec/yaml-2.8.4-edge-vectors.json");
    let vectors: Vec<Vector> = serde_json::from_str(raw).expect("the table is JSON");
    assert!(vectors.len() > 500);
    let groups: std::collections::BTreeSet<&str> =
        vectors.iter().map(|v| v.group.as_str()).collect();
    for group in [
        "compact nested mappings",
        "flow collections",
        "anchors and aliases",
        "tags",
        "duplicate keys",
        "tabs",
        "document markers and directives",
    ] {
        assert!(groups.contains(group), "no {group} in the table");
    }
    let mut mismatches = Vec::new();
    for v in &vectors {
        let got = load_yaml(&v.text, 2).map_err(|e| e.to_string());
        let agrees = match (&v.ok, &v.err, &got) {
            (Some(expected), None, Ok(value)) => same(value, &decode(expected)),
            (None, Some(_), Err(msg)) => {
                named_code(msg).is_none_or(|c| v.codes.iter().any(|x| x == c))
            }
            _ => false,
        };
        if !agrees {
            let yaml = match (&v.ok, &v.err) {
                (Some(ok), _) => format!("ok {ok}"),
                (_, Some(code)) => format!("{code}: {}", v.message.as_deref().unwrap_or("")),
                _ => "?".to_owned(),
            };
            mismatches
                .push(format!("[{}] {:?}\n    yaml: {yaml}\n    here: {got:?}", v.group, v.text));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} of {} differ:\n{}",
        mismatches.len(),
        vectors.len(),
        mismatches.join("\n")
    );
}

#[test]
fn the_rules_curator_adds_name_yamls_code() {
    let cases = [
        (": : : invalid{{{", "BLOCK_AS_IMPLICIT_KEY"),
        ("a:\n  \tb: 1", "TAB_AS_INDENT"),
        ("a: [b,\nc]", "BAD_INDENT"),
        ("a: 1\n...\n...", "MULTIPLE_DOCS"),
        ("a: 1\na: 2", "DUPLICATE_KEY"),
        ("a: !!timestamp x", "TAG_RESOLVE_FAILED"),
    ];
    for (text, code) in cases {
        let err = load_yaml(text, 2).unwrap_err().to_string();
        assert_eq!(named_code(&err), Some(code), "{text:?}: {err}");
    }
    let err = load_yaml(": : : invalid{{{", 2).unwrap_err().to_string();
    assert_eq!(
        err,
        "YAML parse error: Nested mappings are not allowed in compact mappings (BLOCK_AS_IMPLICIT_KEY) at line 2, column 3"
    );
}
