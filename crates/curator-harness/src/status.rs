//! What each layer holds against its bound, and the issue counts (issue 5 `status`; the data of
//! the UI's memory map, identity panel and issues list, harness-curator §8.5).

use serde::Serialize;

use crate::compact::MEMORY_MAX_LINES;
use crate::error::Result;
use crate::fsio::{estimated_tokens, physical_lines, read_or_empty};
use crate::harness::Harness;
use crate::identity::IDENTITY_MAX_LINES;
use crate::issues::{Status, read_pending};
use crate::raw::segment;
use crate::summary::{SUMMARY_MAX_LINES, SUMMARY_MAX_TOKENS};
use crate::truncate::RAW_KEEP_ENTRIES;

/// One layer file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LayerStatus {
    /// `raw.md`, `MEMORY.md`, `summary.md`, `identity/<role>.md`.
    pub name: String,
    /// Whether the file exists.
    pub exists: bool,
    /// Size in bytes.
    pub bytes: u64,
    /// Physical lines.
    pub lines: usize,
    /// Entries (raw.md), items (MEMORY.md) or lessons (identity: non-blank lines not `<!--`).
    pub entries: usize,
    /// The bound, in words.
    pub bound: String,
    /// Whether the file is within its bound right now (raw.md may exceed it between passes).
    pub within_bound: bool,
}

/// Issue counts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct IssueCounts {
    /// open.
    pub open: usize,
    /// acknowledged.
    pub acknowledged: usize,
    /// fixing.
    pub fixing: usize,
    /// closed.
    pub closed: usize,
    /// wontfix.
    pub wontfix: usize,
    /// Valid records waiting in pending-issues.jsonl.
    pub pending: usize,
    /// The next id the allocator hands out.
    pub next_id: u64,
}

/// The whole status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StatusReport {
    /// Mission layers then identity files (sorted by role).
    pub layers: Vec<LayerStatus>,
    /// Issue counts.
    pub issues: IssueCounts,
}

impl StatusReport {
    /// Human text, one line per layer then the issue counts.
    pub fn render(&self) -> String {
        let mut s = String::new();
        for l in &self.layers {
            let mark = if !l.exists {
                "absent"
            } else if l.within_bound {
                "ok"
            } else {
                "OVER"
            };
            s.push_str(&format!(
                "{:<24} {:>6} B {:>4} lines {:>4} entries  bound {:<28} {mark}\n",
                l.name, l.bytes, l.lines, l.entries, l.bound
            ));
        }
        let i = &self.issues;
        s.push_str(&format!(
            "issues: {} open, {} acknowledged, {} fixing, {} closed, {} wontfix; {} pending; next id I-{:04}\n",
            i.open, i.acknowledged, i.fixing, i.closed, i.wontfix, i.pending, i.next_id
        ));
        s
    }
}

fn layer(
    name: String,
    text: &str,
    exists: bool,
    entries: usize,
    bound: String,
    within: bool,
) -> LayerStatus {
    LayerStatus {
        name,
        exists,
        bytes: text.len() as u64,
        lines: physical_lines(text),
        entries,
        bound,
        within_bound: within,
    }
}

impl Harness {
    /// Reads every layer and the issue queue.
    pub fn status(&self) -> Result<StatusReport> {
        let mut layers = Vec::new();
        let raw = read_or_empty(&self.raw_path())?;
        let n = segment(&raw).len();
        layers.push(layer(
            "raw.md".into(),
            &raw,
            self.raw_path().exists(),
            n,
            format!("last {RAW_KEEP_ENTRIES} entries after a pass"),
            n <= RAW_KEEP_ENTRIES,
        ));
        let mem = read_or_empty(&self.memory_path())?;
        let doc = crate::memory_md::MemoryDoc::parse(&mem);
        let items = doc.sections.iter().map(Vec::len).sum();
        let lines = physical_lines(&mem);
        layers.push(layer(
            "MEMORY.md".into(),
            &mem,
            self.memory_path().exists(),
            items,
            format!("{MEMORY_MAX_LINES} lines"),
            lines <= MEMORY_MAX_LINES,
        ));
        let sum = read_or_empty(&self.summary_path())?;
        let ok = physical_lines(&sum) <= SUMMARY_MAX_LINES
            && estimated_tokens(&sum) <= SUMMARY_MAX_TOKENS;
        let bullets = sum.lines().filter(|l| l.starts_with("- ")).count();
        layers.push(layer(
            "summary.md".into(),
            &sum,
            self.summary_path().exists(),
            bullets,
            format!("{SUMMARY_MAX_LINES} lines, {SUMMARY_MAX_TOKENS} tokens"),
            ok,
        ));
        let mut roles: Vec<String> = self.load_identities()?.into_keys().collect();
        roles.sort();
        for role in roles {
            let text = read_or_empty(&self.identity_path(&role))?;
            let lessons = text
                .lines()
                .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with("<!--"))
                .count();
            let lines = physical_lines(&text);
            layers.push(layer(
                format!("identity/{role}.md"),
                &text,
                true,
                lessons,
                format!("{IDENTITY_MAX_LINES} lines (compaction)"),
                lines <= IDENTITY_MAX_LINES,
            ));
        }
        let file = self.load_issues()?;
        let pending = read_pending(&read_or_empty(&self.pending_path())?, "").len();
        let issues = IssueCounts {
            open: file.count(Status::Open),
            acknowledged: file.count(Status::Acknowledged),
            fixing: file.count(Status::Fixing),
            closed: file.count(Status::Closed),
            wontfix: file.count(Status::Wontfix),
            pending,
            next_id: file.next_id,
        };
        Ok(StatusReport { layers, issues })
    }
}
