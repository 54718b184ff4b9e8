//! Values of frontmatter keys the schema does not know (agent-qa-memory §1.4 rule 6, §11.20).
//!
//! agent-qa strips unknown keys when it validates, so a rewrite loses them; curator keeps them in
//! [`ExtraKeys`] and writes them back after the known fields. The model is JavaScript's, because
//! that is what agent-qa's `yaml` library produces: one number type (kept as `Int` when the YAML
//! spelling was an integer that fits, `Float` otherwise), string map keys, and `===` equality
//! between scalars (so `Int(3) == Float(3.0)` and a NaN equals nothing).

use std::fmt::Write as _;

use super::number::format_js_number;

/// Frontmatter keys outside the schema, in file order, kept so a rewrite does not drop them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ExtraKeys(pub Vec<(String, YamlValue)>);

impl ExtraKeys {
    /// The value of `key`, if present.
    pub fn get(&self, key: &str) -> Option<&YamlValue> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// True when no unknown key was read.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// A YAML value of an unknown frontmatter key (YAML 1.2 core schema, as a JS value).
#[derive(Debug, Clone)]
pub enum YamlValue {
    /// `null`, `~`, an empty value.
    Null,
    /// `true` / `false` (and their `True`, `TRUE` spellings).
    Bool(bool),
    /// A number whose YAML spelling was an integer that fits in an `i64`.
    Int(i64),
    /// Any other number, including `.inf`, `.nan` and `-0`.
    Float(f64),
    /// A string (quoted, block, or plain text that resolves to no other type).
    String(String),
    /// A sequence.
    Seq(Vec<YamlValue>),
    /// A mapping; keys are the strings JavaScript would use as property names, in file order.
    Map(Vec<(String, YamlValue)>),
}

impl PartialEq for YamlValue {
    /// Scalars compare as JavaScript's `===` (numbers by value, whatever their variant);
    /// collections compare item by item.
    fn eq(&self, other: &Self) -> bool {
        use YamlValue::*;
        match (self, other) {
            (Null, Null) => true,
            (Bool(a), Bool(b)) => a == b,
            (String(a), String(b)) => a == b,
            (Seq(a), Seq(b)) => a == b,
            (Map(a), Map(b)) => a == b,
            (a, b) => match (a.as_f64(), b.as_f64()) {
                (Some(x), Some(y)) => x == y,
                _ => false,
            },
        }
    }
}

impl YamlValue {
    /// The number this value holds, as JavaScript sees it (`Int` widened to `f64`).
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            YamlValue::Int(i) => Some(*i as f64),
            YamlValue::Float(f) => Some(*f),
            _ => None,
        }
    }

    /// The string this value holds.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            YamlValue::String(s) => Some(s),
            _ => None,
        }
    }

    /// How an error message names this value: its JS type and a short rendering,
    /// e.g. `string "0.5"`, `number 1.5`, `null`, `a sequence`.
    pub(crate) fn describe(&self) -> String {
        match self {
            YamlValue::Null => "null".to_owned(),
            YamlValue::Bool(b) => format!("boolean {b}"),
            YamlValue::Int(_) | YamlValue::Float(_) => {
                format!("number {}", self.js_string())
            }
            YamlValue::String(s) => format!("string {}", quote_for_message(s)),
            YamlValue::Seq(_) => "a sequence".to_owned(),
            YamlValue::Map(_) => "a mapping".to_owned(),
        }
    }

    /// JavaScript's `String(value)` for scalars (used where agent-qa interpolates a value into
    /// a message, and for non-string map keys). Collections get a short flow rendering.
    pub(crate) fn js_string(&self) -> String {
        match self {
            YamlValue::Null => "null".to_owned(),
            YamlValue::Bool(b) => b.to_string(),
            YamlValue::Int(i) => i.to_string(),
            YamlValue::Float(f) => format_js_number(*f),
            YamlValue::String(s) => s.clone(),
            YamlValue::Seq(items) => {
                // `String([1, 2])` is "1,2"; nested nulls render empty, as in JS.
                let parts: Vec<String> =
                    items
                        .iter()
                        .map(|v| {
                            if matches!(v, YamlValue::Null) { String::new() } else { v.js_string() }
                        })
                        .collect();
                parts.join(",")
            }
            YamlValue::Map(_) => "[object Object]".to_owned(),
        }
    }
}

/// A string for an error message: JSON-style quotes, cut after 60 characters so a huge value
/// does not flood a lint report.
pub(crate) fn quote_for_message(s: &str) -> String {
    const MAX: usize = 60;
    let mut out = String::from("\"");
    for (i, c) in s.chars().enumerate() {
        if i == MAX {
            out.push('…');
            break;
        }
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_compare_like_javascript() {
        assert_eq!(YamlValue::Int(3), YamlValue::Float(3.0));
        assert_eq!(YamlValue::Float(-0.0), YamlValue::Int(0));
        assert_ne!(YamlValue::Float(f64::NAN), YamlValue::Float(f64::NAN));
        assert_ne!(YamlValue::Int(1), YamlValue::String("1".into()));
        assert_ne!(YamlValue::Null, YamlValue::String(String::new()));
    }

    #[test]
    fn describe_names_type_and_value() {
        assert_eq!(YamlValue::String("0.5".into()).describe(), "string \"0.5\"");
        assert_eq!(YamlValue::Float(1.5).describe(), "number 1.5");
        assert_eq!(YamlValue::Int(-2).describe(), "number -2");
        assert_eq!(YamlValue::Bool(true).describe(), "boolean true");
        assert_eq!(YamlValue::Seq(vec![]).describe(), "a sequence");
        let long = "x".repeat(100);
        assert!(YamlValue::String(long).describe().ends_with("…\""));
    }

    #[test]
    fn js_string_matches_string_conversion() {
        assert_eq!(YamlValue::Int(123).js_string(), "123");
        assert_eq!(YamlValue::Float(0.1).js_string(), "0.1");
        assert_eq!(YamlValue::Float(-0.0).js_string(), "0");
        let seq = YamlValue::Seq(vec![YamlValue::Int(1), YamlValue::Null, YamlValue::Bool(true)]);
        assert_eq!(seq.js_string(), "1,,true");
        assert_eq!(YamlValue::Map(vec![]).js_string(), "[object Object]");
    }
}
