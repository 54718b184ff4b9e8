//! JavaScript number formatting (agent-qa-memory §1.6 "Numbers").
//!
//! agent-qa writes numbers with `yaml`'s `stringifyNumber`, which is `JSON.stringify(n)`: the
//! shortest string that reads back to the same double (`0.5`, `0.55`, `1`, `1e-7`, `1e+21`).
//! The `ryu-js` crate implements exactly that algorithm. Two places differ from `String(n)` and
//! are kept apart here on purpose: YAML writes negative zero as `-0` and the non-finite values
//! as `.nan` / `.inf` / `-.inf`, while `String(n)` says `0`, `NaN`, `Infinity`.

/// JavaScript's `String(x)`: `0.5`, `1`, `1e-7`, `1e+21`, `NaN`, `Infinity`; `-0` gives `0`.
pub fn format_js_number(x: f64) -> String {
    if x == 0.0 {
        // `String(-0)` is "0"; ryu-js keeps the sign.
        return "0".to_owned();
    }
    ryu_js::Buffer::new().format(x).to_owned()
}

/// Serializes `x` as `JSON.stringify` writes it where that differs from `serde_json`: a whole
/// number without a fraction (`1`, `0`, not `1.0`), so a MemoryLog reads as agent-qa's
/// dashboard stores it (§5.7). Other values are `serde_json`'s shortest form, which is
/// JavaScript's for every value a trust can take. (`serde(serialize_with)`.)
pub fn serialize_js_number<S: serde::Serializer>(
    x: &f64,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    const MAX_SAFE: f64 = 9_007_199_254_740_991.0;
    if x.fract() == 0.0 && x.abs() <= MAX_SAFE {
        // Exact: a whole number within ±2^53 is an i64.
        #[allow(clippy::cast_possible_truncation)]
        return serializer.serialize_i64(*x as i64);
    }
    serializer.serialize_f64(*x)
}

/// How `yaml` 2.8.4 writes a number in a document (`stringifyNumber`).
pub(crate) fn yaml_number(x: f64) -> String {
    if x.is_nan() {
        ".nan".to_owned()
    } else if x.is_infinite() {
        if x < 0.0 { "-.inf".to_owned() } else { ".inf".to_owned() }
    } else if x == 0.0 && x.is_sign_negative() {
        "-0".to_owned()
    } else {
        format_js_number(x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_numbers_are_written_as_javascript_writes_them() {
        #[derive(serde::Serialize)]
        struct T(#[serde(serialize_with = "serialize_js_number")] f64);
        for (x, s) in [(1.0, "1"), (0.0, "0"), (-0.0, "0"), (0.55, "0.55"), (1e-7, "1e-7")] {
            assert_eq!(serde_json::to_string(&T(x)).unwrap(), s, "{x}");
        }
    }

    #[test]
    fn shortest_round_trip_forms_of_the_spec() {
        for (x, s) in [
            (0.5, "0.5"),
            (0.55, "0.55"),
            (1.0, "1"),
            (0.0, "0"),
            (0.123, "0.123"),
            (3.0, "3"),
            (1e-7, "1e-7"),
            (0.000001, "0.000001"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (0.1 + 0.2, "0.30000000000000004"),
            (-1.5, "-1.5"),
        ] {
            assert_eq!(format_js_number(x), s, "{x}");
            assert_eq!(yaml_number(x), s, "{x}");
        }
    }

    #[test]
    fn string_and_yaml_forms_differ_only_where_javascript_does() {
        assert_eq!(format_js_number(-0.0), "0");
        assert_eq!(yaml_number(-0.0), "-0");
        assert_eq!(format_js_number(f64::NAN), "NaN");
        assert_eq!(yaml_number(f64::NAN), ".nan");
        assert_eq!(format_js_number(f64::INFINITY), "Infinity");
        assert_eq!(yaml_number(f64::INFINITY), ".inf");
        assert_eq!(yaml_number(f64::NEG_INFINITY), "-.inf");
    }
}
