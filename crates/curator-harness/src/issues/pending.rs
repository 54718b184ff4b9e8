//! `pending-issues.jsonl` records (harness-curator §3.1).
//!
//! The reader follows the original exactly: a line that is not JSON or lacks `title` or `severity`
//! is skipped, a line without `id` gets the display id `PENDING-<n>`, severity is clamped, and
//! `foundAt` defaults to the read time. The writer (`NewIssue`) enforces the writer rules: the
//! curator-owned fields (`id`, `status`, `attempts`, ...) are never written by a producer.

use serde::Serialize;
use serde_json::Value;

use super::store::Severity;
use crate::error::{Error, Result};

/// One record read from the pending queue (serialized with §3.1's camelCase keys).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingIssue {
    /// The record's `id`, or `PENDING-<n>` (display only).
    pub id: String,
    /// One-line title.
    pub title: String,
    /// Clamped severity.
    pub severity: Severity,
    /// The feature being validated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub found_during: Option<String>,
    /// `foundAt`, or the read time.
    pub found_at: String,
    /// Optional details.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
    /// Optional details.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repro: Option<String>,
    /// Optional details.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suggested_fix: Option<String>,
    /// `path:line`, if given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code_pointer: Option<String>,
    /// The filing role (`validator`, `worker`, …), if given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

fn field(obj: &serde_json::Map<String, Value>, key: &str) -> Option<String> {
    match obj.get(key)? {
        Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The record a queue line holds: a JSON object with a `title` and a `severity`, else `None`
/// (§3.1 skips such a line). A byte-order mark before it (a Windows editor's first line) is
/// not part of the record.
fn record(line: &str) -> Option<(serde_json::Map<String, Value>, String, String)> {
    let json = line.trim().trim_start_matches('\u{feff}');
    let Ok(Value::Object(obj)) = serde_json::from_str::<Value>(json) else { return None };
    let (title, severity) = (field(&obj, "title")?, field(&obj, "severity")?);
    Some((obj, title, severity))
}

/// The non-blank lines [`read_pending`] skips, as written: triage keeps them in the archive
/// (`memory/archive/pending-skipped.jsonl`) when it cuts the queue, so none is lost unseen.
pub(crate) fn skipped_lines(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.trim().is_empty() && record(l).is_none())
        .map(str::to_owned)
        .collect()
}

/// Parses the queue in file order; `now_iso` stamps records without `foundAt`.
pub fn read_pending(text: &str, now_iso: &str) -> Vec<PendingIssue> {
    let mut out = Vec::new();
    for line in text.lines() {
        let Some((obj, title, severity)) = record(line) else { continue };
        let n = out.len() + 1;
        out.push(PendingIssue {
            id: field(&obj, "id").unwrap_or_else(|| format!("PENDING-{n}")),
            title,
            severity: Severity::clamp(&severity),
            found_during: field(&obj, "foundDuring"),
            found_at: field(&obj, "foundAt").unwrap_or_else(|| now_iso.to_string()),
            evidence: field(&obj, "evidence"),
            repro: field(&obj, "repro"),
            suggested_fix: field(&obj, "suggestedFix"),
            code_pointer: field(&obj, "codePointer"),
            source: field(&obj, "source"),
        });
    }
    out
}

/// A finding a validator or blocked worker files (the writer side of §3.1).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NewIssue {
    /// One-line title (`BLOCKED: …` for blocked workers).
    pub title: String,
    /// `critical|major|minor|nit`.
    pub severity: String,
    /// The feature being validated.
    pub found_during: String,
    /// Optional details.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
    /// Optional details.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repro: Option<String>,
    /// Optional details.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suggested_fix: Option<String>,
    /// `path:line`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code_pointer: Option<String>,
    /// Stamped by the writer (readers use it as `foundAt`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub found_at: Option<String>,
    /// The filing role (`validator` when absent): becomes the issue's `source` (issue 16).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

impl NewIssue {
    /// Checks the writer rules and returns the one JSON line to append.
    pub fn to_line(&self) -> Result<String> {
        if self.title.trim().is_empty() || self.title.contains(['\n', '\r']) {
            return Err(Error::invalid("title", "required, one line"));
        }
        if Severity::parse_strict(&self.severity).is_none() {
            return Err(Error::invalid(
                "severity",
                format!("{:?} must be one of critical|major|minor|nit", self.severity),
            ));
        }
        if let Some(source) = &self.source
            && (source.is_empty() || !source.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
        {
            return Err(Error::invalid(
                "source",
                format!("{source:?} must be a role name matching [A-Za-z0-9-]+"),
            ));
        }
        if self.found_during.trim().is_empty() {
            return Err(Error::invalid("foundDuring", "required: the feature being validated"));
        }
        // §3.5 finds the issue's feature by this id in features.json, as `append --feature`.
        if !crate::raw::FEATURE.is_match(&self.found_during) {
            return Err(Error::invalid(
                "foundDuring",
                format!("{:?} is not a feature id", curator_core::excerpt(&self.found_during)),
            ));
        }
        Ok(serde_json::to_string(self).expect("pending issue serializes"))
    }

    /// All text a scanner must see before the record is written.
    pub fn scanned_text(&self) -> String {
        [
            Some(&self.title),
            self.evidence.as_ref(),
            self.repro.as_ref(),
            self.suggested_fix.as_ref(),
            self.code_pointer.as_ref(),
        ]
        .into_iter()
        .flatten()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reader_skips_bad_lines_and_numbers_the_rest() {
        let text = "not json\n{\"title\":\"a\",\"severity\":\"HIGH\",\"foundDuring\":\"F-1\"}\n\
                    {\"severity\":\"major\"}\n[1,2]\n\
                    {\"id\":\"X-9\",\"title\":\"b\",\"severity\":\"low\",\"foundAt\":\"2026-01-01T00:00:00Z\"}\n\
                    {\"title\":\"c\",\"severity\":\"nit\"}\n";
        let got = read_pending(text, "NOW");
        let ids: Vec<_> = got.iter().map(|p| p.id.as_str()).collect();
        assert_eq!(ids, ["PENDING-1", "X-9", "PENDING-3"]);
        assert_eq!(got[0].severity, Severity::Major);
        assert_eq!(got[0].found_at, "NOW");
        assert_eq!(got[1].severity, Severity::Minor);
        assert_eq!(got[1].found_at, "2026-01-01T00:00:00Z");
        assert_eq!(skipped_lines(text), ["not json", "{\"severity\":\"major\"}", "[1,2]"]);
    }

    #[test]
    fn a_byte_order_mark_before_a_record_is_not_part_of_it() {
        let text = "\u{feff}{\"title\":\"a\",\"severity\":\"minor\"}\n\n";
        assert_eq!(read_pending(text, "NOW").len(), 1);
        assert!(skipped_lines(text).is_empty());
    }

    #[test]
    fn writer_rules_are_enforced() {
        let mut n = NewIssue {
            title: "x".into(),
            severity: "major".into(),
            found_during: "F-1".into(),
            ..Default::default()
        };
        assert_eq!(n.to_line().unwrap(), r#"{"title":"x","severity":"major","foundDuring":"F-1"}"#);
        n.severity = "high".into();
        assert!(n.to_line().is_err());
        n.severity = "nit".into();
        n.title = "a\nb".into();
        assert!(n.to_line().is_err());
        n.title = "x".into();
        n.found_during = "not a feature id at all".into();
        let err = n.to_line().unwrap_err().to_string();
        assert!(err.contains("is not a feature id"), "{err}");
        n.found_during = "F-FIX-001".into();
        assert!(n.to_line().is_ok());
    }
}
