//! `issues.json` schema, aliases and the id allocator (harness-curator §3.2).
//!
//! Invariant: loading accepts every alias and unknown value the spec lists; a file holding an issue
//! that cannot be read as one (a field of the wrong shape, such as `notes` that is not a list) is
//! refused as a whole with an error naming the problem and left untouched. Saving writes canonical
//! values only, keeps keys it does not know (a UI may add some) and keeps the newest-first order
//! it was given.

use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

static NUMERIC_ID: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^I-(\d+)$").expect("static regex"));

/// Issue severity, ordered `nit < minor < major < critical` (§3.3 `rank`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Cosmetic, typo, style.
    Nit,
    /// Edge case, perf, papercut; also the value of every unknown severity.
    Minor,
    /// User-visible breakage.
    Major,
    /// Data loss, auth bypass, crash loop.
    Critical,
}

impl Severity {
    /// Clamps a written severity (§3.1): aliases map, unknown values become `minor`.
    pub fn clamp(value: &str) -> Severity {
        match value.trim().to_ascii_lowercase().as_str() {
            "critical" => Severity::Critical,
            "major" | "high" => Severity::Major,
            "nit" | "info" | "informational" | "trivial" => Severity::Nit,
            _ => Severity::Minor,
        }
    }

    /// Parses a severity strictly (for writers: the four canonical values only).
    pub fn parse_strict(value: &str) -> Option<Severity> {
        match value {
            "critical" => Some(Severity::Critical),
            "major" => Some(Severity::Major),
            "minor" => Some(Severity::Minor),
            "nit" => Some(Severity::Nit),
            _ => None,
        }
    }

    /// The canonical spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Nit => "nit",
            Severity::Minor => "minor",
            Severity::Major => "major",
            Severity::Critical => "critical",
        }
    }
}

impl<'de> Deserialize<'de> for Severity {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Severity::clamp(&lenient_string(d)?))
    }
}

/// Issue status (§3.2, §3.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// New or re-opened.
    Open,
    /// Seen by a human.
    Acknowledged,
    /// Promoted to an F-FIX feature.
    Fixing,
    /// Done; never matched by dedupe again.
    Closed,
    /// Will not be fixed; never matched by dedupe again.
    Wontfix,
}

impl Status {
    /// Maps aliases on load: `resolved|done|fixed→closed`, `reopened|new→open`,
    /// `wont_fix→wontfix`, unknown → `open`.
    pub fn from_alias(value: &str) -> Status {
        match value.trim().to_ascii_lowercase().as_str() {
            "acknowledged" => Status::Acknowledged,
            "fixing" => Status::Fixing,
            "closed" | "resolved" | "done" | "fixed" => Status::Closed,
            "wontfix" | "wont_fix" => Status::Wontfix,
            _ => Status::Open,
        }
    }

    /// Parses a status strictly (for writers: the five canonical values only).
    pub fn parse_strict(value: &str) -> Option<Status> {
        match value {
            "open" => Some(Status::Open),
            "acknowledged" => Some(Status::Acknowledged),
            "fixing" => Some(Status::Fixing),
            "closed" => Some(Status::Closed),
            "wontfix" => Some(Status::Wontfix),
            _ => None,
        }
    }

    /// Whether dedupe may match an issue in this status (§3.3: all but closed and wontfix).
    pub fn is_live(self) -> bool {
        !matches!(self, Status::Closed | Status::Wontfix)
    }

    /// The canonical spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Open => "open",
            Status::Acknowledged => "acknowledged",
            Status::Fixing => "fixing",
            Status::Closed => "closed",
            Status::Wontfix => "wontfix",
        }
    }
}

impl<'de> Deserialize<'de> for Status {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Status::from_alias(&lenient_string(d)?))
    }
}

/// A string field that tolerates `null` and non-string scalars (hand-edited files).
fn lenient_string<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::String(s) => s,
        Value::Null => String::new(),
        other => other.to_string(),
    })
}

fn lenient_u32<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::Number(n) => n.as_u64().map_or(0, |n| u32::try_from(n).unwrap_or(u32::MAX)),
        Value::String(s) => s.trim().parse().unwrap_or(0),
        _ => 0,
    })
}

/// One note on an issue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Note {
    /// When (ISO-8601).
    #[serde(default, deserialize_with = "lenient_string")]
    pub ts: String,
    /// Who (`validator`, `curator`, a person).
    #[serde(default, deserialize_with = "lenient_string")]
    pub by: String,
    /// What.
    #[serde(default, deserialize_with = "lenient_string")]
    pub text: String,
    /// Keys this version does not know, kept on rewrite (triage keeps a duplicate's own fields
    /// under `resurfaced`).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One issue of issues.json (§3.2). Field order is the order written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Issue {
    /// `I-NNNN`, or any other shape a human or an older tool wrote.
    #[serde(default, deserialize_with = "lenient_string")]
    pub id: String,
    /// One-line title.
    #[serde(default, deserialize_with = "lenient_string")]
    pub title: String,
    /// Severity (aliases clamped on load).
    #[serde(default = "default_severity")]
    pub severity: Severity,
    /// `validator|worker|human|system`.
    #[serde(default = "default_source", deserialize_with = "lenient_string")]
    pub source: String,
    /// When first filed (left out when the file gave none: an empty string is no time).
    #[serde(
        default,
        deserialize_with = "lenient_string",
        skip_serializing_if = "String::is_empty"
    )]
    pub found_at: String,
    /// The feature being validated when found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub found_during: Option<String>,
    /// Status (aliases mapped on load).
    #[serde(default = "default_status")]
    pub status: Status,
    /// Reproduction steps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repro: Option<String>,
    /// Evidence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
    /// Suggested fix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suggested_fix: Option<String>,
    /// `path:line`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_pointer: Option<String>,
    /// The F-FIX feature it was promoted to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub linked_feature_id: Option<String>,
    /// Times it resurfaced after first filing.
    #[serde(default, deserialize_with = "lenient_u32")]
    pub attempts: u32,
    /// History of the issue.
    #[serde(default)]
    pub notes: Vec<Note>,
    /// Keys this version does not know, kept on rewrite.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

fn default_severity() -> Severity {
    Severity::Minor
}
fn default_status() -> Status {
    Status::Open
}
fn default_source() -> String {
    "validator".to_string()
}

impl Issue {
    /// The feature whose passing verifies this issue's code path (§3.5): linked, else found-during.
    pub fn its_feature(&self) -> Option<&str> {
        self.linked_feature_id.as_deref().or(self.found_during.as_deref()).filter(|f| !f.is_empty())
    }

    /// The code pointer, if non-empty.
    pub fn pointer(&self) -> Option<&str> {
        self.code_pointer.as_deref().filter(|p| !p.trim().is_empty())
    }
}

/// The whole issues.json document.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct IssueFile {
    /// Newest first.
    pub issues: Vec<Issue>,
    /// The next numeric id to allocate.
    pub next_id: u64,
    /// Top-level keys this version does not know (another tool's, a person's), kept on
    /// rewrite: a triage must not erase what it cannot read.
    pub extra: Map<String, Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawFile {
    #[serde(default)]
    issues: Vec<Value>,
    #[serde(flatten)]
    extra: Map<String, Value>,
}

impl IssueFile {
    /// Parses issues.json. Empty text is an empty store; a top-level array is accepted as the
    /// issue list. An element that is not an object is dropped (it cannot be an issue).
    pub fn parse(text: &str) -> Result<IssueFile, serde_json::Error> {
        if text.trim().is_empty() {
            return Ok(IssueFile { issues: Vec::new(), next_id: 1, extra: Map::new() });
        }
        let value: Value = serde_json::from_str(text)?;
        let raw = match value {
            Value::Array(issues) => RawFile { issues, extra: Map::new() },
            other => serde_json::from_value(other)?,
        };
        let mut extra = raw.extra;
        // Recomputed below (§3.2), so not kept beside the one written.
        extra.remove("nextId");
        let issues: Vec<Issue> = raw
            .issues
            .into_iter()
            .filter(|v| v.is_object())
            .map(serde_json::from_value)
            .collect::<Result<_, _>>()?;
        let mut file = IssueFile { issues, next_id: 1, extra };
        // §3.2's allocator, exactly: the stored nextId is not read (a stale one, too high or too
        // low, never decides the next id).
        file.next_id = file.computed_next_id();
        Ok(file)
    }

    /// 1 + the largest numeric suffix over ids shaped `I-<digits>` (others do not participate).
    pub fn computed_next_id(&self) -> u64 {
        let max = self
            .issues
            .iter()
            .filter_map(|i| NUMERIC_ID.captures(&i.id))
            .filter_map(|c| c[1].parse::<u64>().ok())
            .max()
            .unwrap_or(0);
        max + 1
    }

    /// Hands out the next `I-NNNN` id.
    pub fn allocate_id(&mut self) -> String {
        let id = format!("I-{:04}", self.next_id);
        self.next_id += 1;
        id
    }

    /// Canonical JSON text (2-space indent, trailing newline).
    pub fn to_json(&self) -> String {
        let mut doc = Map::new();
        doc.insert("issues".into(), serde_json::json!(self.issues));
        doc.insert("nextId".into(), self.next_id.into());
        for (key, value) in &self.extra {
            doc.entry(key.clone()).or_insert_with(|| value.clone());
        }
        let mut text = serde_json::to_string_pretty(&doc).expect("issues serialize");
        text.push('\n');
        text
    }

    /// Counts issues per status.
    pub fn count(&self, status: Status) -> usize {
        self.issues.iter().filter(|i| i.status == status).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_clamp_on_load() {
        let f = IssueFile::parse(
            r#"{"issues":[{"id":"I-0002","title":"a","severity":"HIGH","status":"resolved"},
            {"id":"I-0001","title":"b","severity":"weird","status":"reopened","attempts":"3"},
            {"id":"I-0003","title":"c","severity":"informational","status":"wont_fix"},
            {"id":"x","title":"d","severity":"medium","status":"bogus"}],"nextId":2}"#,
        )
        .unwrap();
        let st: Vec<_> = f.issues.iter().map(|i| (i.severity, i.status)).collect();
        assert_eq!(
            st,
            [
                (Severity::Major, Status::Closed),
                (Severity::Minor, Status::Open),
                (Severity::Nit, Status::Wontfix),
                (Severity::Minor, Status::Open)
            ]
        );
        assert_eq!(f.issues[1].attempts, 3);
        assert_eq!(f.next_id, 4);
    }

    #[test]
    fn unknown_keys_survive_a_rewrite() {
        let f = IssueFile::parse(r#"{"issues":[{"id":"I-0001","title":"a","severity":"nit","status":"open","ui":{"pinned":true}}],"nextId":2}"#).unwrap();
        let again = IssueFile::parse(&f.to_json()).unwrap();
        assert_eq!(again.issues[0].extra["ui"]["pinned"], Value::Bool(true));
        assert_eq!(f.to_json(), again.to_json());
    }

    #[test]
    fn a_document_of_another_shape_keeps_what_it_holds() {
        // Another tool's list under another key: a triage adds its issues beside it, it does
        // not write an empty store over it. A stored nextId is recomputed, never kept twice.
        let text = r#"{"items":[{"id":"I-0005","title":"x"}],"nextId":6,"owner":"qa"}"#;
        let mut f = IssueFile::parse(text).unwrap();
        assert!(f.issues.is_empty());
        assert_eq!(f.next_id, 1);
        let id = f.allocate_id();
        f.issues
            .push(serde_json::from_value(serde_json::json!({"id": id, "title": "new"})).unwrap());
        let written: Value = serde_json::from_str(&f.to_json()).unwrap();
        assert_eq!(written["items"], serde_json::json!([{"id":"I-0005","title":"x"}]));
        assert_eq!(written["owner"], "qa");
        assert_eq!(written["nextId"], 2);
        let keys: Vec<_> = written.as_object().unwrap().keys().cloned().collect();
        assert_eq!(keys, ["issues", "nextId", "items", "owner"]);
        // An issue filed without foundAt is written without one, not with an empty time.
        assert!(!f.to_json().contains("foundAt"), "{}", f.to_json());
    }
}
