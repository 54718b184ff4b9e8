//! The read schemas of agent-qa-memory §1.5 (zod 4.4.2): frontmatter value + body → observation.
//!
//! The suite schema applies iff the raw map has a `position` key; otherwise the base schema
//! applies and a stray `suite_snapshot` is an unknown key. zod strips unknown keys; we keep them
//! in [`Observation::extra`], in file order, so a rewrite does not lose them (§11.20). Every
//! failing field is reported, each naming the field, the rule and the value found.

use crate::id::ObservationId;
use crate::observation::{Observation, SnapshotEntry, SuitePlacement};

use super::datetime::is_iso_datetime;
use super::error::{ParseError, SchemaIssue};
use super::value::{ExtraKeys, YamlValue};

/// `Number.MAX_SAFE_INTEGER`: zod's `.int()` accepts only safe integers.
pub(crate) const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// The base schema's fields in write order; the suite schema adds [`SUITE_FIELDS`].
pub(crate) const BASE_FIELDS: [&str; 8] = [
    "id",
    "title",
    "trust",
    "created",
    "last_confirmed",
    "confirmed_count",
    "contradicted_count",
    "source_test",
];
/// The suite schema's extra fields, written after the base ones.
pub(crate) const SUITE_FIELDS: [&str; 2] = ["position", "suite_snapshot"];

pub(crate) const EXPECT_ID: &str =
    "an observation id: obs_ followed by 10 canonical words or a legacy 6-word body";
pub(crate) const EXPECT_NON_EMPTY: &str = "a non-empty string";
pub(crate) const EXPECT_TRUST: &str = "a number between 0 and 1";
pub(crate) const EXPECT_DATETIME: &str = "an ISO datetime YYYY-MM-DDTHH:MM[:SS[.fraction]]Z (UTC)";
pub(crate) const EXPECT_COUNT: &str = "a whole number >= 0";
pub(crate) const EXPECT_SNAPSHOT: &str = "a non-empty list of {test, id} entries";

/// Validates the frontmatter `value` (rule 6) with `content` as the body.
pub(crate) fn validate(value: YamlValue, content: String) -> Result<Observation, ParseError> {
    let YamlValue::Map(entries) = value else {
        return Err(ParseError::Schema(vec![SchemaIssue {
            field: "(frontmatter)".into(),
            expected: "a mapping of fields".into(),
            got: value.describe(),
        }]));
    };
    let is_suite = entries.iter().any(|(k, _)| k == "position");
    // Schema fields apart, unknown keys in file order: one pass, however many keys there are.
    let is_field = |k: &str| BASE_FIELDS.contains(&k) || (is_suite && SUITE_FIELDS.contains(&k));
    let (known, extra): (Vec<_>, Vec<_>) = entries.into_iter().partition(|(k, _)| is_field(k));
    let mut fields = Fields { entries: known, issues: Vec::new() };

    let id =
        fields.take("id", EXPECT_ID, |v| v.as_str().and_then(|s| ObservationId::parse(s).ok()));
    let title = fields.take("title", EXPECT_NON_EMPTY, non_empty);
    let trust = fields.take("trust", EXPECT_TRUST, |v| v.as_f64().filter(|x| is_trust(*x)));
    let created = fields.take("created", EXPECT_DATETIME, datetime);
    let last_confirmed = fields.take("last_confirmed", EXPECT_DATETIME, datetime);
    let confirmed_count = fields.take("confirmed_count", EXPECT_COUNT, count);
    let contradicted_count = fields.take("contradicted_count", EXPECT_COUNT, count);
    let source_test = fields.take("source_test", EXPECT_NON_EMPTY, non_empty);
    let suite = if is_suite {
        let position = fields.take("position", EXPECT_COUNT, count);
        let snapshot = fields.take_snapshot();
        position
            .zip(snapshot)
            .map(|(position, suite_snapshot)| SuitePlacement { position, suite_snapshot })
    } else {
        None
    };

    if !fields.issues.is_empty() {
        return Err(ParseError::Schema(fields.issues));
    }
    // Every `take` succeeded (no issue was recorded), so each option holds its value.
    match (
        id,
        title,
        trust,
        created,
        last_confirmed,
        confirmed_count,
        contradicted_count,
        source_test,
    ) {
        (
            Some(id),
            Some(title),
            Some(trust),
            Some(created),
            Some(last_confirmed),
            Some(confirmed_count),
            Some(contradicted_count),
            Some(source_test),
        ) if suite.is_some() == is_suite => Ok(Observation {
            id,
            title,
            content,
            trust,
            created,
            last_confirmed,
            confirmed_count,
            contradicted_count,
            source_test,
            suite,
            extra: ExtraKeys(extra),
        }),
        _ => Err(ParseError::Schema(vec![SchemaIssue {
            field: "(frontmatter)".into(),
            expected: "every schema field".into(),
            got: "an incomplete set".into(),
        }])),
    }
}

/// zod's `z.number().min(0).max(1)`: finite (zod 4 refuses NaN and infinities) and in range.
pub(crate) fn is_trust(x: f64) -> bool {
    x.is_finite() && (0.0..=1.0).contains(&x)
}

fn non_empty(v: &YamlValue) -> Option<String> {
    v.as_str().filter(|s| !s.is_empty()).map(str::to_owned)
}

fn datetime(v: &YamlValue) -> Option<String> {
    v.as_str().filter(|s| is_iso_datetime(s)).map(str::to_owned)
}

/// zod's `z.number().int().min(0)`: a safe integer ≥ 0, whatever its YAML spelling (`3.0`
/// and `3e0` are the JS number 3; `-0` is 0).
fn count(v: &YamlValue) -> Option<u64> {
    match *v {
        YamlValue::Int(i) => u64::try_from(i).ok().filter(|n| *n <= MAX_SAFE_INTEGER),
        // `-0.0 >= 0.0` holds, and `fract` of an infinity or NaN is NaN, so both are refused.
        YamlValue::Float(f) if f.fract() == 0.0 && (0.0..=MAX_SAFE_INTEGER as f64).contains(&f) => {
            Some(f as u64)
        }
        _ => None,
    }
}

/// The schema fields of the frontmatter map, taken one by one.
struct Fields {
    entries: Vec<(String, YamlValue)>,
    issues: Vec<SchemaIssue>,
}

impl Fields {
    fn remove(&mut self, name: &str) -> Option<YamlValue> {
        let at = self.entries.iter().position(|(k, _)| k == name)?;
        Some(self.entries.remove(at).1)
    }

    fn issue(&mut self, field: impl Into<String>, expected: &str, got: String) {
        self.issues.push(SchemaIssue { field: field.into(), expected: expected.into(), got });
    }

    fn take<T>(
        &mut self,
        name: &str,
        expected: &str,
        check: impl Fn(&YamlValue) -> Option<T>,
    ) -> Option<T> {
        let Some(value) = self.remove(name) else {
            self.issue(name, expected, "nothing".into());
            return None;
        };
        let out = check(&value);
        if out.is_none() {
            self.issue(name, expected, value.describe());
        }
        out
    }

    /// `suite_snapshot`: length ≥ 1 of strict `{test: string, id: string}` objects.
    fn take_snapshot(&mut self) -> Option<Vec<SnapshotEntry>> {
        const FIELD: &str = "suite_snapshot";
        let items = match self.remove(FIELD) {
            None => {
                self.issue(FIELD, EXPECT_SNAPSHOT, "nothing".into());
                return None;
            }
            Some(YamlValue::Seq(items)) if !items.is_empty() => items,
            Some(other) => {
                let got = match &other {
                    YamlValue::Seq(_) => "an empty sequence".to_owned(),
                    v => v.describe(),
                };
                self.issue(FIELD, EXPECT_SNAPSHOT, got);
                return None;
            }
        };
        let before = self.issues.len();
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.into_iter().enumerate() {
            let at = format!("{FIELD}[{i}]");
            let YamlValue::Map(mut entry) = item else {
                self.issue(at, "a mapping {test, id}", item.describe());
                continue;
            };
            let mut strings = [None, None];
            for (slot, key) in strings.iter_mut().zip(["test", "id"]) {
                match entry.iter().position(|(k, _)| k == key).map(|p| entry.remove(p).1) {
                    Some(YamlValue::String(s)) => *slot = Some(s),
                    Some(other) => self.issue(format!("{at}.{key}"), "a string", other.describe()),
                    None => self.issue(format!("{at}.{key}"), "a string", "nothing".into()),
                }
            }
            for (key, _) in entry {
                // zod's `.strict()`: an entry has exactly `test` and `id`.
                self.issue(
                    format!("{at}.{key}"),
                    "no other keys than test and id",
                    "an unknown key".into(),
                );
            }
            if let [Some(test), Some(id)] = strings {
                out.push(SnapshotEntry { test, id });
            }
        }
        (self.issues.len() == before).then_some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_accept_js_integers_only() {
        use YamlValue::*;
        assert_eq!(count(&Int(3)), Some(3));
        assert_eq!(count(&Float(3.0)), Some(3));
        assert_eq!(count(&Float(-0.0)), Some(0));
        assert_eq!(count(&Int(MAX_SAFE_INTEGER as i64)), Some(MAX_SAFE_INTEGER));
        assert_eq!(count(&Int(MAX_SAFE_INTEGER as i64 + 1)), None);
        assert_eq!(count(&Float(9007199254740992.0)), None);
        assert_eq!(count(&Float(1.5)), None);
        assert_eq!(count(&Int(-1)), None);
        assert_eq!(count(&Float(f64::INFINITY)), None);
        assert_eq!(count(&Float(f64::NAN)), None);
        assert_eq!(count(&String("3".into())), None);
    }

    #[test]
    fn trust_is_finite_and_in_range() {
        assert!(is_trust(0.0) && is_trust(1.0) && is_trust(0.55) && is_trust(-0.0));
        assert!(!is_trust(1.0000001) && !is_trust(-0.1) && !is_trust(f64::NAN));
        assert!(!is_trust(f64::INFINITY));
    }
}
