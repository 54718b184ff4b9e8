//! `raw.md` line grammar and entry segmentation (harness-curator §2.1, §2.2).
//!
//! The writer always emits the canonical form `[<ts>] <role> <fid> <tag>: <text>` with the tag
//! slot filled (`TRICK` or `-`); the parser also accepts the tolerant forms of §2.1 (`TRICK:` as
//! the first word of the text, or no tag at all). Segmentation keeps the exact bytes of every
//! entry (`Entry::span`) so truncation (§2.3) can rewrite the file without reformatting a single
//! line it keeps: entries the curator did not absorb come back byte for byte.

use std::ops::Range;
use std::sync::LazyLock;

use jiff::Timestamp;
use regex::Regex;

use crate::error::{Error, Result};

/// The tag that flags a worker pattern for promotion (§2.1; case-sensitive).
pub const TRICK: &str = "TRICK";

static CANONICAL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^\[(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z)\] ([A-Za-z0-9-]+) (-|[A-Za-z0-9][A-Za-z0-9-]*)(?: (TRICK|-))?: ?(.*)$",
    )
    .expect("static regex")
});

static ENTRY_START: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\[\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z\]").expect("static regex")
});

static ROLE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[A-Za-z0-9-]+$").expect("static regex"));

static FEATURE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[A-Za-z0-9][A-Za-z0-9-]*$").expect("static regex"));

/// One parsed canonical (or tolerant) raw line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawLine {
    /// The ISO-8601 UTC timestamp as written.
    pub timestamp: String,
    /// The authoring role (`worker`, `plan-reviewer`, ...).
    pub role: String,
    /// The feature in scope; `None` when the writer put `-`.
    pub feature: Option<String>,
    /// Whether the entry carries the `TRICK` tag (in the slot or as the text's first word).
    pub trick: bool,
    /// The observation itself.
    pub text: String,
}

/// What kind of entry a segment of raw.md is (§2.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntryKind {
    /// A line of the §2.1 grammar (possibly followed by continuation lines).
    Line(RawLine),
    /// A line starting with `[<timestamp>]` that does not follow the grammar.
    Malformed,
    /// A `## ` heading block (the monitor role's status blocks).
    Block,
    /// Lines before the first entry start.
    Preamble,
}

/// One entry of raw.md with the byte range it occupies in the text it was cut from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// What the entry is.
    pub kind: EntryKind,
    /// Its bytes in the segmented text, including its trailing newline(s) but no leading blank line.
    pub span: Range<usize>,
}

impl Entry {
    /// The parsed line, if this entry follows the grammar.
    pub fn line(&self) -> Option<&RawLine> {
        match &self.kind {
            EntryKind::Line(line) => Some(line),
            _ => None,
        }
    }

    /// Whether this entry is a TRICK line.
    pub fn is_trick(&self) -> bool {
        self.line().is_some_and(|l| l.trick)
    }
}

/// Parses one line of the §2.1 grammar, accepting the tolerant forms.
pub fn parse_line(line: &str) -> Option<RawLine> {
    let line = line.strip_suffix('\r').unwrap_or(line);
    let caps = CANONICAL.captures(line)?;
    let mut text = caps[5].to_string();
    let mut trick = caps.get(4).is_some_and(|t| t.as_str() == TRICK);
    // Tolerant form `…<fid>: TRICK: <text>`: the tag travels as the first word of the text.
    if caps.get(4).is_none()
        && let Some(rest) = text.strip_prefix("TRICK:")
    {
        trick = true;
        text = rest.trim_start().to_string();
    }
    let fid = &caps[3];
    Some(RawLine {
        timestamp: caps[1].to_string(),
        role: caps[2].to_string(),
        feature: (fid != "-").then(|| fid.to_string()),
        trick,
        text,
    })
}

/// Whether a line starts a new entry (§2.2): `[` + timestamp, or `## `.
fn starts_entry(line: &str) -> bool {
    ENTRY_START.is_match(line) || line.starts_with("## ")
}

/// Cuts raw.md text into entries (§2.2). Blank lines between entries belong to no entry; the
/// bytes of the whole text are the entries' spans plus those blank lines.
pub fn segment(text: &str) -> Vec<Entry> {
    let mut entries: Vec<Entry> = Vec::new();
    let mut offset = 0;
    let mut pending_blank: Option<usize> = None;
    for piece in text.split_inclusive('\n') {
        let start = offset;
        offset += piece.len();
        let line = piece.trim_end_matches(['\n', '\r']);
        if line.trim().is_empty() {
            pending_blank.get_or_insert(start);
            continue;
        }
        if starts_entry(line) {
            let kind = if line.starts_with("## ") {
                EntryKind::Block
            } else {
                parse_line(line).map_or(EntryKind::Malformed, EntryKind::Line)
            };
            entries.push(Entry { kind, span: start..offset });
        } else if let Some(last) = entries.last_mut() {
            // A continuation line: the entry absorbs any blank lines inside it.
            last.span.end = offset;
        } else {
            entries.push(Entry { kind: EntryKind::Preamble, span: start..offset });
        }
        pending_blank = None;
    }
    entries
}

/// Builds the canonical line the writer appends (no trailing newline).
///
/// Refuses what the grammar cannot carry: a role outside `[A-Za-z0-9-]`, a feature id that is not
/// one token, text with a newline or nothing in it.
pub fn format_line(
    now: Timestamp,
    role: &str,
    feature: Option<&str>,
    trick: bool,
    text: &str,
) -> Result<String> {
    if !ROLE.is_match(role) {
        return Err(Error::invalid("role", format!("{role:?} must match [A-Za-z0-9-]+ (§2.1)")));
    }
    let fid = match feature {
        None | Some("-") | Some("") => "-",
        Some(f) if FEATURE.is_match(f) => f,
        Some(f) => {
            return Err(Error::invalid(
                "feature",
                format!("{f:?} is not a feature id or `-` (§2.1)"),
            ));
        }
    };
    if text.contains(['\n', '\r']) {
        return Err(Error::invalid("text", "one line per observation: no embedded newline (§2.1)"));
    }
    let text = text.trim();
    if text.is_empty() {
        return Err(Error::invalid("text", "an entry needs an observation (§2.1)"));
    }
    let tag = if trick { TRICK } else { "-" };
    Ok(format!("[{}] {role} {fid} {tag}: {text}", iso_seconds(now)))
}

/// `YYYY-MM-DDThh:mm:ssZ`: the writer's second precision (§2.1).
pub fn iso_seconds(now: Timestamp) -> String {
    now.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// `YYYY-MM-DD` in UTC: the date stamp of MEMORY.md and identity items.
pub fn iso_date(now: Timestamp) -> String {
    now.strftime("%Y-%m-%d").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_and_tolerant_forms_parse_alike() {
        let a =
            parse_line("[2026-04-24T10:05:12Z] worker F-023 TRICK: psql applies in order").unwrap();
        let b = parse_line("[2026-04-24T10:05:12Z] worker F-023: TRICK: psql applies in order")
            .unwrap();
        assert_eq!(a, b);
        assert!(a.trick);
        let c =
            parse_line("[2026-04-24T10:18:33.120Z] validator F-023: verified via curl").unwrap();
        assert!(!c.trick);
        assert_eq!(c.text, "verified via curl");
        let d = parse_line("[2026-04-24T10:18:33Z] planner - -: split F-9 in two").unwrap();
        assert_eq!(d.feature, None);
        // The tag is case-sensitive: a lowercase `trick:` is ordinary text.
        let e = parse_line("[2026-04-24T10:18:33Z] worker F-1: trick: x").unwrap();
        assert!(!e.trick);
        assert!(parse_line("[2026-04-24 10:18:33] worker F-1: x").is_none());
    }

    #[test]
    fn writer_refuses_what_the_grammar_cannot_carry() {
        let now: Timestamp = "2026-04-24T10:05:12.9Z".parse().unwrap();
        assert_eq!(
            format_line(now, "worker", Some("F-023"), true, "x").unwrap(),
            "[2026-04-24T10:05:12Z] worker F-023 TRICK: x"
        );
        assert!(format_line(now, "work er", None, false, "x").is_err());
        assert!(format_line(now, "worker", Some("F 1"), false, "x").is_err());
        assert!(format_line(now, "worker", None, false, "a\nb").is_err());
        assert!(format_line(now, "worker", None, false, "  ").is_err());
    }
}
