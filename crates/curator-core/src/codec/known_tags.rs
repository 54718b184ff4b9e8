//! The YAML 1.1 tags `yaml` 2 still resolves when a node names them explicitly (`!!binary`,
//! `!!timestamp`, `!!set`, `!!omap`, `!!pairs`, `!!merge`), as agent-qa then sees the value
//! (issue 13 item 4; agent-qa-memory §1.4 rule 2).
//!
//! `yaml` turns them into JavaScript objects (a `Buffer`, a `Date`, a `Set`, a `Map`), and
//! agent-qa only ever looks at values through `Object.entries` and zod: a `Date`, a `Set` and a
//! `Map` have no own entries (an empty mapping here), a `Buffer` has one per byte. So a
//! schema field given such a value fails the schema as it does in agent-qa, and an unknown key
//! holding one keeps what agent-qa would have seen. A value `yaml` refuses for its tag
//! (`!!timestamp x`, a `!!set` with a non-null value) is refused with `yaml`'s message and code.

use super::value::YamlValue;
use super::yaml_rules::Broken;

/// A scalar tag of this list: `Some(Ok(value))` when `suffix` is one, `Some(Err(_))` when the
/// text is not valid for it, `None` when `suffix` is not one of them.
pub(crate) fn scalar(suffix: &str, text: &str, at: usize) -> Option<Result<YamlValue, Broken>> {
    Some(match suffix {
        "binary" => Ok(bytes(&decode_base64(text))),
        "timestamp" if is_timestamp(text) => Ok(YamlValue::Map(Vec::new())),
        "timestamp" => Err(Broken::new(
            "TAG_RESOLVE_FAILED",
            "!!timestamp expects a date, starting with yyyy-mm-dd",
            at,
        )),
        // `yaml` reads the value of an explicit merge tag as nothing.
        "merge" => Ok(YamlValue::Null),
        _ => return None,
    })
}

/// A collection tag of this list, applied to the collection built: `None` when `suffix` is
/// not one of them or does not apply to this kind of collection (then `yaml` only warns and
/// keeps the collection).
pub(crate) fn collection(
    suffix: &str,
    value: &YamlValue,
    at: usize,
) -> Option<Result<YamlValue, Broken>> {
    let failed = |message: &str| Err(Broken::new("TAG_RESOLVE_FAILED", message, at));
    Some(match (suffix, value) {
        ("set", YamlValue::Map(entries)) => {
            if entries.iter().all(|(_, v)| matches!(v, YamlValue::Null)) {
                Ok(YamlValue::Map(Vec::new()))
            } else {
                failed("Set items must all have null values")
            }
        }
        ("omap", YamlValue::Seq(items)) => {
            let mut keys: Vec<&str> = Vec::new();
            for item in items {
                if let YamlValue::Map(entries) = item {
                    for (k, _) in entries {
                        if keys.contains(&k.as_str()) {
                            return Some(failed("Ordered maps must not include duplicate keys"));
                        }
                        keys.push(k);
                    }
                }
            }
            Ok(YamlValue::Map(Vec::new()))
        }
        ("pairs", YamlValue::Seq(items)) => Ok(YamlValue::Seq(
            items
                .iter()
                .map(|item| match item {
                    YamlValue::Map(_) => item.clone(),
                    scalar => YamlValue::Map(vec![(scalar.js_string(), YamlValue::Null)]),
                })
                .collect(),
        )),
        _ => return None,
    })
}

/// `yaml`'s timestamp pattern: `yyyy-m-d`, optionally a time and a zone.
fn is_timestamp(text: &str) -> bool {
    use std::sync::LazyLock;
    static PATTERN: LazyLock<regex::Regex> = LazyLock::new(|| {
        regex::Regex::new(
            r"^([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})(?:(?:t|T|[ \t]+)([0-9]{1,2}):([0-9]{1,2}):([0-9]{1,2}(\.[0-9]+)?)(?:[ \t]*(Z|[-+][012]?[0-9](?::[0-9]{2})?))?)?$",
        )
        .expect("a valid pattern")
    });
    PATTERN.is_match(text)
}

/// node's `Buffer.from(text, 'base64')`: both alphabets, anything else skipped, stops at `=`.
fn decode_base64(text: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in text.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            b'=' => break,
            _ => continue,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    out
}

/// A `Uint8Array` as `Object.entries` sees it.
fn bytes(data: &[u8]) -> YamlValue {
    YamlValue::Map(
        data.iter()
            .enumerate()
            .map(|(i, b)| (i.to_string(), YamlValue::Int(i64::from(*b))))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_reads_as_node_reads_it() {
        assert_eq!(decode_base64("aGVsbG8="), b"hello");
        assert_eq!(decode_base64("aGVs\n bG8"), b"hello");
        assert_eq!(decode_base64("a-_b"), [107, 239, 219]);
        assert_eq!(decode_base64("!!!"), b"");
    }

    #[test]
    fn timestamps_follow_yamls_pattern() {
        assert!(is_timestamp("2026-04-10") && is_timestamp("2026-4-1 1:2:3.5 +02:00"));
        assert!(!is_timestamp("x") && !is_timestamp("") && !is_timestamp("2026-04-10T12:00Z"));
    }
}
