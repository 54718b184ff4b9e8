//! What each layer holds against its bounds, the archive's dispositions and the issue counts
//! (issue 5 `status`, issue 16 item 1; the data of the UI's memory map, identity panel and issues
//! list, harness-curator §8.5).
//!
//! Status reads, never writes, and reads raw.md as a stream (a 50 MB raw.md costs its bytes in
//! time, not in memory). A broken issues.json does not hide the layers: its error is reported in
//! [`StatusReport::issues_error`].

use std::io::BufReader;

use serde::Serialize;

use crate::archive::{DispositionCounts, read_counts};
use crate::bounds::{
    IDENTITY_MAX_BYTES, IDENTITY_MAX_LINES, MEMORY_MAX_BYTES, MEMORY_MAX_LINES, RAW_KEEP_ENTRIES,
    SUMMARY_MAX_LINES, SUMMARY_MAX_TOKENS,
};
use crate::error::{Error, Result};
use crate::fsio::{estimated_tokens, physical_lines, read_or_empty};
use crate::harness::Harness;
use crate::issues::{Status, read_pending};
use crate::raw::EntryReader;

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
    /// Issue counts (zero when issues.json cannot be read).
    pub issues: IssueCounts,
    /// Why issues.json could not be read, if it could not.
    pub issues_error: Option<String>,
    /// Archive records so far, per disposition: where every entry that left raw.md went.
    pub dispositions: DispositionCounts,
}

impl StatusReport {
    /// Human text, one line per layer, then the archive, then the issue counts.
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
                "{:<24} {:>8} B {:>5} lines {:>6} entries  bound {:<32} {mark}\n",
                l.name, l.bytes, l.lines, l.entries, l.bound
            ));
        }
        s.push_str(&format!("archive: {}\n", self.dispositions.render()));
        match &self.issues_error {
            Some(e) => s.push_str(&format!("issues: unreadable: {e}\n")),
            None => {
                let i = &self.issues;
                s.push_str(&format!(
                    "issues: {} open, {} acknowledged, {} fixing, {} closed, {} wontfix; {} pending; next id I-{:04}\n",
                    i.open, i.acknowledged, i.fixing, i.closed, i.wontfix, i.pending, i.next_id
                ));
            }
        }
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
    /// Reads every layer, the archive counts and the issue queue.
    pub fn status(&self) -> Result<StatusReport> {
        self.require_state()?;
        let mut layers = vec![self.raw_status()?];
        let mem = read_or_empty(&self.memory_path())?;
        let doc = crate::memory_md::MemoryDoc::parse(&mem);
        let items = doc.sections.iter().map(Vec::len).sum();
        layers.push(layer(
            "MEMORY.md".into(),
            &mem,
            self.memory_path().exists(),
            items,
            format!("{MEMORY_MAX_LINES} lines, {MEMORY_MAX_BYTES} bytes"),
            physical_lines(&mem) <= MEMORY_MAX_LINES && mem.len() <= MEMORY_MAX_BYTES,
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
        let mut roles: Vec<String> = self.load_identities(false)?.into_keys().collect();
        roles.sort();
        for role in roles {
            let text = read_or_empty(&self.identity_path(&role))?;
            let lessons = text
                .lines()
                .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with("<!--"))
                .count();
            layers.push(layer(
                format!("identity/{role}.md"),
                &text,
                true,
                lessons,
                format!("{IDENTITY_MAX_LINES} lines, {IDENTITY_MAX_BYTES} bytes"),
                physical_lines(&text) <= IDENTITY_MAX_LINES && text.len() <= IDENTITY_MAX_BYTES,
            ));
        }
        let pending = read_pending(&read_or_empty(&self.pending_path())?, "").len();
        let (issues, issues_error) = match self.load_issues() {
            Ok(file) => (
                IssueCounts {
                    open: file.count(Status::Open),
                    acknowledged: file.count(Status::Acknowledged),
                    fixing: file.count(Status::Fixing),
                    closed: file.count(Status::Closed),
                    wontfix: file.count(Status::Wontfix),
                    pending,
                    next_id: file.next_id,
                },
                None,
            ),
            Err(e) => (IssueCounts { pending, ..Default::default() }, Some(e.to_string())),
        };
        let dispositions = read_counts(&self.archive_dir())?;
        Ok(StatusReport { layers, issues, issues_error, dispositions })
    }

    /// raw.md's entries and lines, counted as a stream.
    fn raw_status(&self) -> Result<LayerStatus> {
        let path = self.raw_path();
        let file = match crate::fsio::open_regular(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(layer("raw.md".into(), "", false, 0, raw_bound(), true));
            }
            Err(e) => return Err(Error::io(&path, e)),
        };
        let len = file.metadata().map_err(|e| Error::io(&path, e))?.len();
        let mut entries = 0;
        let mut lines = 0;
        let mut last_newline = true;
        for e in EntryReader::new(BufReader::with_capacity(1 << 16, &file), len) {
            let e = e.map_err(|err| Error::io(&path, err))?;
            entries += 1;
            lines += e.head.iter().filter(|&&b| b == b'\n').count();
            last_newline = e.head.last() == Some(&b'\n');
        }
        if entries > 0 && !last_newline {
            lines += 1;
        }
        Ok(LayerStatus {
            name: "raw.md".into(),
            exists: true,
            bytes: len,
            lines,
            entries,
            bound: raw_bound(),
            within_bound: entries <= RAW_KEEP_ENTRIES,
        })
    }
}

fn raw_bound() -> String {
    format!("last {RAW_KEEP_ENTRIES} entries after a pass")
}
