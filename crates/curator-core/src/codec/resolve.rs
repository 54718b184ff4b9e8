//! YAML 1.2 core-schema resolution of plain scalars, as `yaml` 2.8.4 does it (agent-qa-memory
//! §1.4 rule 2, §1.6 "quoted").
//!
//! One table serves both directions: the reader turns a plain scalar into null, a boolean or a
//! number when one of these tests matches, and the writer quotes any string one of them would
//! match, so a written string always reads back as a string. The tests are `yaml`'s core tags
//! in its order: null `~|[Nn]ull|NULL|` (empty), bool `[Tt]rue|TRUE|[Ff]alse|FALSE`, int
//! `0o[0-7]+`, `[-+]?[0-9]+`, `0x[0-9a-fA-F]+`, float `[-+]?.(inf|Inf|INF)|.nan|.NaN|.NAN`,
//! `[-+]?(.D+|D+(.D*)?)[eE][-+]?D+`, `[-+]?(.D+|D+.D*)`. Everything else (`yes`, `on`, `NaN`,
//! `1_000`, `0b101`, `2026-04-10`) is a string: YAML 1.1 forms are not core schema.

use super::value::YamlValue;

/// Which core tag a plain scalar resolves to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CoreTag {
    Null,
    Bool,
    Int,
    Float,
}

/// The core tag `s` would resolve to if written plain; `None` means it stays a string.
pub(crate) fn core_tag(s: &str) -> Option<CoreTag> {
    if matches!(s, "" | "~" | "null" | "Null" | "NULL") {
        Some(CoreTag::Null)
    } else if matches!(s, "true" | "True" | "TRUE" | "false" | "False" | "FALSE") {
        Some(CoreTag::Bool)
    } else if radix_digits(s, "0o", 8).is_some()
        || is_decimal_int(s)
        || radix_digits(s, "0x", 16).is_some()
    {
        Some(CoreTag::Int)
    } else if is_special_float(s) || is_decimal_float(s) {
        Some(CoreTag::Float)
    } else {
        None
    }
}

/// The value of a plain scalar under the core schema.
pub(crate) fn resolve_plain(s: &str) -> YamlValue {
    match core_tag(s) {
        None => YamlValue::String(s.to_owned()),
        Some(tag) => resolve_as(s, tag).unwrap_or_else(|| YamlValue::String(s.to_owned())),
    }
}

/// The value of `s` under one core tag (an explicit `!!int` etc.), or `None` when the tag's
/// tests do not match; `yaml` then falls back to a string with a warning.
pub(crate) fn resolve_as(s: &str, tag: CoreTag) -> Option<YamlValue> {
    if core_tag(s) != Some(tag) {
        return None;
    }
    Some(match tag {
        CoreTag::Null => YamlValue::Null,
        CoreTag::Bool => YamlValue::Bool(s.starts_with(['t', 'T'])),
        CoreTag::Int => {
            if let Some(d) = radix_digits(s, "0o", 8) {
                radix_value(d, 8)
            } else if let Some(d) = radix_digits(s, "0x", 16) {
                radix_value(d, 16)
            } else {
                decimal_int_value(s)
            }
        }
        CoreTag::Float => YamlValue::Float(float_value(s)),
    })
}

/// `^[-+]?[0-9]+$`
fn is_decimal_int(s: &str) -> bool {
    let d = s.strip_prefix(['-', '+']).unwrap_or(s);
    !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit())
}

/// The digits after `prefix` when all of them are valid in `radix` (`0o17`, `0x1F`; no sign).
fn radix_digits<'a>(s: &'a str, prefix: &str, radix: u32) -> Option<&'a str> {
    let d = s.strip_prefix(prefix)?;
    (!d.is_empty() && d.chars().all(|c| c.is_digit(radix))).then_some(d)
}

/// `parseInt(digits, radix)`: exact while it fits an `i64`, then the nearest double.
fn radix_value(digits: &str, radix: u32) -> YamlValue {
    match i64::from_str_radix(digits, radix) {
        Ok(i) => YamlValue::Int(i),
        Err(_) => YamlValue::Float(digits.chars().fold(0.0, |acc, c| {
            acc * f64::from(radix) + f64::from(c.to_digit(radix).unwrap_or(0))
        })),
    }
}

fn decimal_int_value(s: &str) -> YamlValue {
    match s.parse::<i64>() {
        // `parseInt("-0")` is negative zero, which JavaScript keeps (and `yaml` writes as `-0`).
        Ok(0) if s.starts_with('-') => YamlValue::Float(-0.0),
        Ok(i) => YamlValue::Int(i),
        Err(_) => YamlValue::Float(s.parse::<f64>().unwrap_or(f64::NAN)),
    }
}

/// `^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$`
fn is_special_float(s: &str) -> bool {
    matches!(s, ".nan" | ".NaN" | ".NAN")
        || matches!(s.strip_prefix(['-', '+']).unwrap_or(s), ".inf" | ".Inf" | ".INF")
}

/// `^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$` or `^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$`
fn is_decimal_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'-' | b'+')));
    let int_digits = count_digits(&b[i..]);
    i += int_digits;
    let mut has_dot = false;
    let mut frac_digits = 0;
    if b.get(i) == Some(&b'.') {
        has_dot = true;
        i += 1;
        frac_digits = count_digits(&b[i..]);
        i += frac_digits;
    }
    // A mantissa is `.D+` or `D+` optionally followed by `.D*`.
    if int_digits == 0 && frac_digits == 0 {
        return false;
    }
    if i == b.len() {
        // Without an exponent the dot is required (`1` is an int, not a float).
        return has_dot;
    }
    if !matches!(b[i], b'e' | b'E') {
        return false;
    }
    i += 1;
    if matches!(b.get(i), Some(b'-' | b'+')) {
        i += 1;
    }
    let exp_digits = count_digits(&b[i..]);
    exp_digits > 0 && i + exp_digits == b.len()
}

fn count_digits(b: &[u8]) -> usize {
    b.iter().take_while(|c| c.is_ascii_digit()).count()
}

/// `parseFloat` of a string one of the float tests matched.
fn float_value(s: &str) -> f64 {
    if is_special_float(s) {
        return if s.ends_with(['n', 'N']) {
            f64::NAN
        } else if s.starts_with('-') {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        };
    }
    // Rust's parser accepts every spelling the float tests admit (`1.`, `.5`, `+1.e3`) and
    // rounds correctly; overflow gives infinity, as `parseFloat("1e999")` does.
    s.parse::<f64>().unwrap_or(f64::NAN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_1_1_forms_stay_strings() {
        for s in [
            "yes",
            "Yes",
            "no",
            "on",
            "off",
            "y",
            "NaN",
            "nan",
            "inf",
            "Infinity",
            "1_000",
            "0b101",
            "2026-04-10",
            "2026-04-10T12:00:00Z",
            "0x",
            "0o",
            "0o8",
            "0xG",
            "+0x1F",
            "-0o7",
            "1e",
            "1e+",
            "e3",
            ".",
            "+",
            "-",
            "+.nan",
            "-.nan",
            ".Nan",
            "1.2.3",
            "0.5 ",
            " 1",
            "１",
            "TrUe",
            "nULL",
            "..5",
            "1..",
            "--1",
        ] {
            assert_eq!(core_tag(s), None, "{s:?}");
            assert_eq!(resolve_plain(s), YamlValue::String(s.to_owned()), "{s:?}");
        }
    }

    #[test]
    fn core_schema_scalars_resolve() {
        use YamlValue::*;
        for (s, v) in [
            ("", Null),
            ("~", Null),
            ("null", Null),
            ("Null", Null),
            ("NULL", Null),
            ("true", Bool(true)),
            ("True", Bool(true)),
            ("TRUE", Bool(true)),
            ("false", Bool(false)),
            ("FALSE", Bool(false)),
            ("0", Int(0)),
            ("123", Int(123)),
            ("-1", Int(-1)),
            ("+1", Int(1)),
            ("0755", Int(755)),
            ("0x1F", Int(31)),
            ("0o17", Int(15)),
            ("0.5", Float(0.5)),
            (".5", Float(0.5)),
            ("1.", Float(1.0)),
            ("+1.e3", Float(1000.0)),
            ("1e3", Float(1000.0)),
            ("1E-7", Float(1e-7)),
            (".5e1", Float(5.0)),
            ("3.0", Float(3.0)),
            (".inf", Float(f64::INFINITY)),
            ("-.Inf", Float(f64::NEG_INFINITY)),
            ("+.INF", Float(f64::INFINITY)),
            ("99999999999999999999", Float(1e20)),
            ("1e999", Float(f64::INFINITY)),
        ] {
            assert_eq!(resolve_plain(s), v, "{s:?}");
        }
        assert!(matches!(resolve_plain(".nan"), Float(f) if f.is_nan()));
        assert!(matches!(resolve_plain(".NaN"), Float(f) if f.is_nan()));
        assert!(matches!(resolve_plain("-0"), Float(f) if f == 0.0 && f.is_sign_negative()));
    }

    #[test]
    fn explicit_tags_resolve_only_matching_text() {
        assert_eq!(resolve_as("5", CoreTag::Int), Some(YamlValue::Int(5)));
        assert_eq!(resolve_as("5", CoreTag::Float), None);
        assert_eq!(resolve_as("abc", CoreTag::Int), None);
        assert_eq!(resolve_as("True", CoreTag::Bool), Some(YamlValue::Bool(true)));
    }
}
