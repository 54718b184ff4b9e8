//! `MEMORY.md`: its four sections and item line format (harness-curator §6).
//!
//! Invariant: an item the curator does not change is written back byte for byte (humans may edit
//! the file; a pass with nothing new must not reformat it). Items the curator creates or updates
//! use the §6 line format `- [YYYY-MM-DD] <statement> — why: <rationale> (evidence: F-012, F-019)`.
//! Text outside the four headings is never dropped silently: lines before the first heading are
//! kept as a preamble, and lines under an unknown heading are folded into Context verbatim,
//! after the heading's name as a line of its own.
//!
//! Evidence lists are bounded ([`EVIDENCE_MAX`] ids, the most recent kept); further sightings are
//! counted as `+N more`, so "how many features saw this" survives the cut.

use std::sync::LazyLock;

use regex::Regex;

use crate::bounds::EVIDENCE_MAX;
use crate::codebase::feature_ids;

static ITEM: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^- (?:\[(\d{4}-\d{2}-\d{2})\] )?(.*?)(?: — why: (.*?))?(?: \((?i:evidence): ([^)]*?)(?: \+(\d+) more)?\))?\s*$")
        .expect("static regex")
});

/// The four sections, in file order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Section {
    /// Architectural / library choices with their why.
    Decisions,
    /// Durable facts an agent would not get from the code.
    Context,
    /// Terminal events and failure classes.
    History,
    /// Generalised statements with evidence: the most important section.
    Lessons,
}

impl Section {
    /// All sections in file order.
    pub const ALL: [Section; 4] =
        [Section::Decisions, Section::Context, Section::History, Section::Lessons];

    /// The heading text.
    pub fn heading(self) -> &'static str {
        match self {
            Section::Decisions => "## Decisions",
            Section::Context => "## Context",
            Section::History => "## History",
            Section::Lessons => "## Lessons",
        }
    }

    /// The heading's name (`Lessons`).
    pub fn name(self) -> &'static str {
        self.heading().trim_start_matches("## ")
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// One item of a section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    /// `YYYY-MM-DD`, if stamped.
    pub date: Option<String>,
    /// The statement itself.
    pub statement: String,
    /// The rationale (required for Decisions).
    pub why: Option<String>,
    /// Evidence feature ids (required for Lessons), oldest first, at most [`EVIDENCE_MAX`].
    pub evidence: Vec<String>,
    /// Sightings beyond the listed evidence (`+N more`).
    pub more: usize,
    /// The exact text as read (item line plus continuation lines); `None` once changed.
    pub verbatim: Option<String>,
}

impl Item {
    /// A new item.
    pub fn new(date: &str, statement: &str, why: Option<&str>, evidence: Vec<String>) -> Item {
        Item {
            date: Some(date.to_string()),
            statement: statement.trim().to_string(),
            why: why.map(|w| w.trim().to_string()).filter(|w| !w.is_empty()),
            evidence: Vec::new(),
            more: 0,
            verbatim: None,
        }
        .with_evidence(evidence)
    }

    fn with_evidence(mut self, fids: Vec<String>) -> Item {
        self.add_evidence(&fids);
        self.verbatim = None;
        self
    }

    /// Parses one `- ` line (continuation lines are attached by the caller).
    pub fn parse(line: &str) -> Option<Item> {
        let caps = ITEM.captures(line)?;
        let evidence = caps
            .get(4)
            .map(|e| {
                e.as_str()
                    .split(',')
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect()
            })
            .unwrap_or_default();
        Some(Item {
            date: caps.get(1).map(|d| d.as_str().to_string()),
            statement: caps[2].trim().to_string(),
            why: caps.get(3).map(|w| w.as_str().trim().to_string()),
            evidence,
            more: caps.get(5).and_then(|m| m.as_str().parse().ok()).unwrap_or(0),
            verbatim: Some(line.to_string()),
        })
    }

    /// Free text a person wrote inside a section (a sub-heading, a sentence), not a `- ` item:
    /// kept in MEMORY.md where it stands, but neither counted nor summarized as an item.
    pub fn is_note(&self) -> bool {
        self.verbatim.as_deref().is_some_and(|v| !v.starts_with("- "))
    }

    /// The item's line(s) as written.
    pub fn render(&self) -> String {
        if let Some(v) = &self.verbatim {
            return v.clone();
        }
        let mut s = String::from("- ");
        if let Some(d) = &self.date {
            s.push_str(&format!("[{d}] "));
        }
        s.push_str(&self.statement);
        if let Some(w) = &self.why {
            s.push_str(&format!(" — why: {w}"));
        }
        if !self.evidence.is_empty() {
            s.push_str(&format!(" (evidence: {}", self.evidence.join(", ")));
            if self.more > 0 {
                s.push_str(&format!(" +{} more", self.more));
            }
            s.push(')');
        }
        s
    }

    /// Adds evidence ids not yet listed, keeping the most recent [`EVIDENCE_MAX`] and counting
    /// the older ones as `+N more`; returns whether anything was added.
    pub fn add_evidence<'a>(&mut self, fids: impl IntoIterator<Item = &'a String>) -> bool {
        let mut changed = false;
        for f in fids {
            if !self.evidence.contains(f) {
                self.evidence.push(f.clone());
                changed = true;
            }
        }
        if self.evidence.len() > EVIDENCE_MAX {
            let extra = self.evidence.len() - EVIDENCE_MAX;
            self.evidence.drain(..extra);
            self.more += extra;
        }
        if changed {
            self.verbatim = None;
        }
        changed
    }

    /// How many distinct features this item has evidence from (listed + `+N more`), counting
    /// feature ids named in the statement too.
    pub fn sightings(&self) -> usize {
        let named = feature_ids(&self.statement).into_iter().filter(|f| !self.evidence.contains(f));
        self.evidence.len() + self.more + named.count()
    }

    /// Evidence ids plus feature ids named in the statement.
    pub fn all_fids(&self) -> Vec<String> {
        let mut out = self.evidence.clone();
        for f in feature_ids(&self.statement) {
            if !out.contains(&f) {
                out.push(f);
            }
        }
        out
    }

    /// Physical lines this item occupies.
    pub fn line_count(&self) -> usize {
        self.render().lines().count().max(1)
    }
}

/// The parsed MEMORY.md.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MemoryDoc {
    /// Lines before the first heading, kept verbatim.
    pub preamble: Vec<String>,
    /// Items per section, in [`Section::ALL`] order.
    pub sections: [Vec<Item>; 4],
}

impl MemoryDoc {
    /// Parses MEMORY.md; missing or empty text is an empty store.
    pub fn parse(text: &str) -> MemoryDoc {
        let mut doc = MemoryDoc::default();
        let mut current: Option<Section> = None;
        for line in text.lines() {
            let trimmed = line.trim_end();
            if let Some(h) = trimmed.strip_prefix("## ") {
                let section = match h.trim().to_ascii_lowercase().as_str() {
                    "decisions" => Section::Decisions,
                    "history" => Section::History,
                    "lessons" => Section::Lessons,
                    "context" => Section::Context,
                    // An unknown heading's lines are kept under Context, after its name as a
                    // plain line (`Deploy checklist:`), so they keep their title and the file
                    // keeps four sections.
                    _ => {
                        let label = format!("{}:", h.trim().trim_end_matches(':'));
                        doc.sections[Section::Context.index()].push(Item {
                            date: None,
                            statement: label.clone(),
                            why: None,
                            evidence: Vec::new(),
                            more: 0,
                            verbatim: Some(label),
                        });
                        Section::Context
                    }
                };
                current = Some(section);
                continue;
            }
            let Some(section) = current else {
                if !(doc.preamble.is_empty() && trimmed.is_empty()) {
                    doc.preamble.push(trimmed.to_string());
                }
                continue;
            };
            if trimmed.is_empty() {
                continue;
            }
            let items = &mut doc.sections[section.index()];
            if trimmed.starts_with("- ") {
                let item = Item::parse(trimmed).unwrap_or_else(|| Item {
                    date: None,
                    statement: trimmed[2..].to_string(),
                    why: None,
                    evidence: Vec::new(),
                    more: 0,
                    verbatim: Some(trimmed.to_string()),
                });
                items.push(item);
            } else if let Some(last) = items.last_mut().filter(|_| line.starts_with([' ', '\t'])) {
                // An indented continuation belongs to the item above it.
                let v = last.verbatim.get_or_insert_with(String::new);
                v.push('\n');
                v.push_str(trimmed);
            } else {
                // Free text inside a section: kept as an opaque item so it is never lost.
                items.push(Item {
                    date: None,
                    statement: trimmed.to_string(),
                    why: None,
                    evidence: Vec::new(),
                    more: 0,
                    verbatim: Some(trimmed.to_string()),
                });
            }
        }
        while doc.preamble.last().is_some_and(|l| l.is_empty()) {
            doc.preamble.pop();
        }
        doc
    }

    /// Items of one section.
    pub fn items(&self, section: Section) -> &[Item] {
        &self.sections[section.index()]
    }

    /// Mutable items of one section.
    pub fn items_mut(&mut self, section: Section) -> &mut Vec<Item> {
        &mut self.sections[section.index()]
    }

    /// Renders the file: preamble, then the four headings in order, a blank line after each block.
    pub fn render(&self) -> String {
        let mut out = String::new();
        if self.preamble.is_empty() {
            out.push_str("# MEMORY\n\n");
        } else {
            for l in &self.preamble {
                out.push_str(l);
                out.push('\n');
            }
            out.push('\n');
        }
        for (i, section) in Section::ALL.iter().enumerate() {
            out.push_str(section.heading());
            out.push('\n');
            for item in &self.sections[section.index()] {
                out.push_str(&item.render());
                out.push('\n');
            }
            if i + 1 < Section::ALL.len() {
                out.push('\n');
            }
        }
        out
    }

    /// Number of items in a section (the output line's decisions/lessons counts).
    pub fn count(&self, section: Section) -> usize {
        self.sections[section.index()].iter().filter(|i| !i.is_note()).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn item_format_round_trips() {
        let line = "- [2026-04-24] Use drizzle for migrations — why: typed schema (evidence: F-012, F-019)";
        let item = Item::parse(line).unwrap();
        assert_eq!(item.date.as_deref(), Some("2026-04-24"));
        assert_eq!(item.statement, "Use drizzle for migrations");
        assert_eq!(item.why.as_deref(), Some("typed schema"));
        assert_eq!(item.evidence, ["F-012", "F-019"]);
        let mut fresh = item.clone();
        fresh.verbatim = None;
        assert_eq!(fresh.render(), line);
    }

    #[test]
    fn evidence_lists_are_bounded_and_counted() {
        let fids: Vec<String> = (1..=11).map(|n| format!("F-{n:03}")).collect();
        let item = Item::new("2026-04-24", "seed first", None, fids);
        assert_eq!(item.evidence.len(), EVIDENCE_MAX);
        assert_eq!(item.evidence[0], "F-004");
        assert_eq!((item.more, item.sightings()), (3, 11));
        let line = item.render();
        assert!(line.ends_with("F-011 +3 more)"), "{line}");
        let back = Item::parse(&line).unwrap();
        assert_eq!((back.evidence, back.more), (item.evidence.clone(), 3));
    }

    #[test]
    fn hand_edits_survive_and_unknown_sections_fold_into_context() {
        let text = "# MEMORY\nnotes for humans\n\n## Decisions\n- a — why: b\n  continued\n\
                    ## Random\nfree text\n## Lessons\n- [2026-01-01] x (evidence: F-1)\n";
        let doc = MemoryDoc::parse(text);
        assert_eq!(doc.preamble, ["# MEMORY", "notes for humans"]);
        assert_eq!(doc.items(Section::Decisions)[0].render(), "- a — why: b\n  continued");
        assert_eq!(doc.items(Section::Context)[0].render(), "Random:", "the heading's name");
        assert_eq!(doc.items(Section::Context)[1].render(), "free text");
        let again = MemoryDoc::parse(&doc.render());
        assert_eq!(again.render(), doc.render());
    }
}
