//! `harness trace TEXT`: where did an entry go? (issue 16 item 1).
//!
//! Looks for `TEXT` (case-insensitive substring) everywhere an entry's content can be: raw.md
//! (not curated yet, or kept as recent history), the archive's records (with the disposition,
//! the target, the item it became and why), MEMORY.md and the identity files. For an archived
//! entry that was promoted or merged it also says whether its item is still in the target file —
//! a later pass may have dropped it, and then a record of that drop is among the hits too.

use std::io::BufReader;

use serde::Serialize;

use crate::archive::{ArchiveRecord, RecordKind, for_each_record};
use crate::error::{Error, Result};
use crate::fsio::read_or_empty;
use crate::harness::Harness;
use crate::merge::Disposition;
use crate::raw::EntryReader;

/// Hits returned at most (the report says when there were more).
pub const TRACE_MAX_HITS: usize = 200;

/// One place the text was found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TraceHit {
    /// `raw.md`, `archive`, `MEMORY.md`, `identity/<role>.md`.
    pub place: String,
    /// The matching text (entry, item line or record text).
    pub text: String,
    /// For archive hits: the record.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub record: Option<ArchiveRecord>,
    /// For promoted/merged archive hits: whether the item is still in its first target.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub still_there: Option<bool>,
}

/// Everything `trace` found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TraceReport {
    /// The text looked for.
    pub query: String,
    /// Hits: raw.md first, then the archive (oldest first), then MEMORY.md and identity files.
    pub hits: Vec<TraceHit>,
    /// More hits existed than [`TRACE_MAX_HITS`].
    pub truncated: bool,
}

impl TraceReport {
    /// Human text: one block per hit.
    pub fn render(&self) -> String {
        if self.hits.is_empty() {
            return format!(
                "{:?}: not found in raw.md, the archive, MEMORY.md or identity files\n",
                self.query
            );
        }
        let mut s = String::new();
        for h in &self.hits {
            match &h.record {
                Some(r) => {
                    let what = match r.kind {
                        RecordKind::Entry => "entry",
                        RecordKind::Item => "item",
                    };
                    s.push_str(&format!(
                        "archive ({what}, pass {}): {}\n",
                        r.pass,
                        r.disposition.as_str()
                    ));
                    if !r.to.is_empty() {
                        s.push_str(&format!("  to: {}\n", r.to.join("; ")));
                    }
                    if let Some(item) = &r.item {
                        s.push_str(&format!("  as: {item}\n"));
                    }
                    if let Some(from) = &r.from {
                        s.push_str(&format!("  from: {from}\n"));
                    }
                    if let Some(reason) = &r.reason {
                        s.push_str(&format!("  why: {reason}\n"));
                    }
                    if let (Some(file), Some(offset)) = (&r.archive, r.offset) {
                        s.push_str(&format!("  bytes: memory/archive/{file} at {offset}\n"));
                    }
                    if let Some(still) = h.still_there {
                        s.push_str(if still {
                            "  still there\n"
                        } else {
                            "  no longer there (see a later drop)\n"
                        });
                    }
                    s.push_str(&format!("  text: {}\n", h.text));
                }
                None => s.push_str(&format!("{}: {}\n", h.place, h.text)),
            }
        }
        if self.truncated {
            s.push_str(&format!("… more than {TRACE_MAX_HITS} hits; narrow the text\n"));
        }
        s
    }
}

fn contains(haystack: &str, needle_lower: &str) -> bool {
    haystack.to_lowercase().contains(needle_lower)
}

impl Harness {
    /// Finds where `text` went.
    pub fn trace(&self, text: &str) -> Result<TraceReport> {
        self.require_state()?;
        let query = text.trim();
        if query.is_empty() {
            return Err(Error::invalid("text", "trace needs some text to look for"));
        }
        let needle = query.to_lowercase();
        let mut hits = Vec::new();
        let mut truncated = false;
        let mut push = |hit: TraceHit, hits: &mut Vec<TraceHit>| {
            if hits.len() < TRACE_MAX_HITS {
                hits.push(hit);
            } else {
                truncated = true;
            }
        };
        let raw_path = self.raw_path();
        if let Ok(file) = crate::fsio::open_regular(&raw_path) {
            let len = file.metadata().map_err(|e| Error::io(&raw_path, e))?.len();
            for e in EntryReader::new(BufReader::new(&file), len) {
                let e = e.map_err(|err| Error::io(&raw_path, err))?;
                let flat = e.flat_text();
                if contains(&flat, &needle) {
                    push(
                        TraceHit {
                            place: "raw.md".into(),
                            text: flat,
                            record: None,
                            still_there: None,
                        },
                        &mut hits,
                    );
                }
            }
        }
        let memory = read_or_empty(&self.memory_path())?;
        let ids = self.load_identities(false)?;
        let identity_texts: Vec<(String, String)> =
            ids.iter().map(|(r, f)| (format!("identity/{r}.md"), f.render())).collect();
        for_each_record(&self.archive_dir(), |_, r| {
            let matches = contains(&r.text, &needle)
                || r.item.as_deref().is_some_and(|i| contains(i, &needle));
            if !matches {
                return;
            }
            let still_there = match (r.disposition, r.to.first(), &r.item) {
                (
                    Disposition::Promoted | Disposition::Merged | Disposition::Kept,
                    Some(to),
                    Some(item),
                ) => {
                    let statement = item_statement(item);
                    Some(if to.starts_with("MEMORY.md") {
                        memory.contains(&statement)
                    } else {
                        identity_texts.iter().any(|(name, text)| {
                            to.starts_with(name.as_str()) && text.contains(&statement)
                        })
                    })
                }
                _ => None,
            };
            let text = r.text.clone();
            push(
                TraceHit { place: "archive".into(), text, record: Some(r), still_there },
                &mut hits,
            );
        })?;
        let mut section = String::new();
        for line in memory.lines() {
            if line.starts_with("## ") {
                section = line.to_string();
            } else if contains(line, &needle) {
                push(
                    TraceHit {
                        place: format!("MEMORY.md {section}"),
                        text: line.to_string(),
                        record: None,
                        still_there: None,
                    },
                    &mut hits,
                );
            }
        }
        for (name, text) in &identity_texts {
            for line in text.lines().filter(|l| contains(l, &needle)) {
                push(
                    TraceHit {
                        place: name.clone(),
                        text: line.to_string(),
                        record: None,
                        still_there: None,
                    },
                    &mut hits,
                );
            }
        }
        Ok(TraceReport { query: query.to_string(), hits, truncated })
    }
}

/// The statement part of an item line (`- [date] statement — why: … (evidence: …)`) or an
/// identity statement: what stays the same when evidence is added later.
fn item_statement(item: &str) -> String {
    let s = item.trim_start_matches("- ");
    let s = match s.strip_prefix('[') {
        Some(rest) if rest.get(10..12) == Some("] ") => &rest[12..],
        _ => s,
    };
    let end = [" — why:", " (evidence:", " Evidence:"]
        .iter()
        .filter_map(|m| s.find(m))
        .min()
        .unwrap_or(s.len());
    s[..end].trim_end_matches('.').trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_are_cut_from_item_lines() {
        assert_eq!(
            item_statement("- [2026-04-24] seed first — why: x (evidence: F-1)"),
            "seed first"
        );
        assert_eq!(
            item_statement("- [2026-04-24] seed first (evidence: F-1 +2 more)"),
            "seed first"
        );
        assert_eq!(item_statement("Seed first. Evidence: F-1"), "Seed first");
    }
}
