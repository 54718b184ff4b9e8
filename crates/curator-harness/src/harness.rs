//! The harness handle: where every layer lives and the small operations other crates call
//! (harness-curator §1 layers, §2.1 append, §3.1 filing, §3.3 triage, §8.6 locking).
//!
//! `Harness` holds no memory between calls — like the original harness, every operation
//! re-derives what it needs from disk — only paths and options. "Now" is always a parameter so
//! every result is reproducible in tests.

use std::path::{Path, PathBuf};
use std::time::Duration;

use jiff::Timestamp;

use crate::error::{Error, Result};
use crate::fsio::{append_line, lock, read_bytes_or_empty, read_or_empty, write_if_changed};
use crate::issues::{IssueFile, NewIssue, PendingIssue, TriageCounts, read_pending, triage};
use crate::raw::{format_line, iso_seconds};
use crate::rewrite::MemoryRewriter;

/// Settings of a harness handle.
#[derive(Debug)]
pub struct HarnessOptions {
    /// The project the state dir belongs to (default: the state dir's parent), for §4.4/§6 tests.
    pub project_dir: Option<PathBuf>,
    /// The project slug (default: the project dir's name).
    pub slug: Option<String>,
    /// Mission id for the cross-mission ledger (default: `memory/.mission`, created on the first
    /// pass as `<slug>@<first pass time>`).
    pub mission: Option<String>,
    /// How long to wait for a lock before failing.
    pub lock_timeout: Duration,
    /// Optional rewrite step (an LLM) whose output is validated before it is written.
    pub rewriter: Option<Box<dyn MemoryRewriter + Send + Sync>>,
}

impl Default for HarnessOptions {
    fn default() -> Self {
        HarnessOptions {
            project_dir: None,
            slug: None,
            mission: None,
            lock_timeout: Duration::from_secs(10),
            rewriter: None,
        }
    }
}

/// A harness state directory plus the cross-mission identity directory.
#[derive(Debug)]
pub struct Harness {
    pub(crate) state: PathBuf,
    pub(crate) identity: PathBuf,
    pub(crate) options: HarnessOptions,
}

/// What a standalone triage did (`{ok, merged, deduped}` of §8.1).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TriageReport {
    /// New issues.
    pub merged: usize,
    /// Duplicates folded in.
    pub deduped: usize,
}

impl Harness {
    /// Opens a harness; nothing is created until something is written.
    pub fn open(
        state_dir: impl Into<PathBuf>,
        identity_dir: impl Into<PathBuf>,
        options: HarnessOptions,
    ) -> Harness {
        Harness { state: state_dir.into(), identity: identity_dir.into(), options }
    }

    /// The state directory.
    pub fn state_dir(&self) -> &Path {
        &self.state
    }

    /// The identity directory.
    pub fn identity_dir(&self) -> &Path {
        &self.identity
    }

    pub(crate) fn memory_dir(&self) -> PathBuf {
        self.state.join("memory")
    }
    /// `$STATE/memory/raw.md`.
    pub fn raw_path(&self) -> PathBuf {
        self.memory_dir().join("raw.md")
    }
    /// `$STATE/memory/MEMORY.md`.
    pub fn memory_path(&self) -> PathBuf {
        self.memory_dir().join("MEMORY.md")
    }
    /// `$STATE/memory/summary.md`.
    pub fn summary_path(&self) -> PathBuf {
        self.memory_dir().join("summary.md")
    }
    /// `$STATE/pending-issues.jsonl`.
    pub fn pending_path(&self) -> PathBuf {
        self.state.join("pending-issues.jsonl")
    }
    /// `$STATE/issues.json`.
    pub fn issues_path(&self) -> PathBuf {
        self.state.join("issues.json")
    }
    /// `$STATE/features.json`.
    pub fn features_path(&self) -> PathBuf {
        self.state.join("features.json")
    }
    /// `$ID/<role>.md`.
    pub fn identity_path(&self, role: &str) -> PathBuf {
        self.identity.join(format!("{role}.md"))
    }
    pub(crate) fn ledger_path(&self) -> PathBuf {
        self.identity.join(".ledger.jsonl")
    }
    pub(crate) fn curator_lock_path(&self) -> PathBuf {
        self.memory_dir().join(".curator.lock")
    }
    fn raw_lock_path(&self) -> PathBuf {
        self.memory_dir().join(".raw.lock")
    }
    fn pending_lock_path(&self) -> PathBuf {
        self.state.join(".pending-issues.lock")
    }
    pub(crate) fn project_dir(&self) -> PathBuf {
        self.options.project_dir.clone().unwrap_or_else(|| {
            let abs = std::path::absolute(&self.state).unwrap_or_else(|_| self.state.clone());
            abs.parent().map_or_else(|| PathBuf::from("."), Path::to_path_buf)
        })
    }
    pub(crate) fn slug(&self) -> Option<String> {
        self.options.slug.clone().or_else(|| {
            let dir = self.project_dir();
            let abs = std::path::absolute(&dir).unwrap_or(dir);
            abs.file_name().map(|n| n.to_string_lossy().into_owned())
        })
    }

    /// Appends one canonical raw.md entry (§2.1) after scanning its text; returns the line.
    /// The curator never writes raw.md (it is the layer's only reader, §1).
    pub fn append(
        &self,
        role: &str,
        feature: Option<&str>,
        trick: bool,
        text: &str,
        now: Timestamp,
    ) -> Result<String> {
        if role == "curator" {
            return Err(Error::invalid(
                "role",
                "the curator reads raw.md and never appends to it (§1 L1)",
            ));
        }
        let line = format_line(now, role, feature, trick, text)?;
        crate::safety::check("text", text)?;
        let _guard = lock(&self.raw_lock_path(), self.options.lock_timeout)?;
        append_line(&self.raw_path(), &line)?;
        Ok(line)
    }

    /// Appends one pending issue (§3.1) after scanning it; `foundAt` defaults to `now`.
    pub fn file_issue(&self, issue: &NewIssue, now: Timestamp) -> Result<()> {
        let mut issue = issue.clone();
        issue.found_at.get_or_insert_with(|| iso_seconds(now));
        let line = issue.to_line()?;
        crate::safety::check("issue", &issue.scanned_text())?;
        let _guard = lock(&self.pending_lock_path(), self.options.lock_timeout)?;
        append_line(&self.pending_path(), &line)
    }

    /// Runs §3.3 alone (the UI's "Triage" action), under the curator lock so it never interleaves
    /// with a pass's read-modify-write of issues.json.
    pub fn triage(&self, now: Timestamp) -> Result<TriageReport> {
        let _pass = lock(&self.curator_lock_path(), self.options.lock_timeout)?;
        let (counts, _) = self.triage_locked(now)?;
        Ok(TriageReport { merged: counts.merged, deduped: counts.deduped })
    }

    /// Loads issues.json (missing = empty).
    pub fn load_issues(&self) -> Result<IssueFile> {
        let path = self.issues_path();
        IssueFile::parse(&read_or_empty(&path)?)
            .map_err(|e| Error::Json { path, message: e.to_string() })
    }

    /// §3.3 with the caller holding the curator lock: returns the counts and the batch (§3.5
    /// needs it). The pending lock is held from read to clear so no finding appended meanwhile is
    /// lost; bytes that appear after the snapshot anyway (a writer ignoring the lock) are kept.
    pub(crate) fn triage_locked(
        &self,
        now: Timestamp,
    ) -> Result<(TriageCounts, Vec<PendingIssue>)> {
        let now_iso = iso_seconds(now);
        let path = self.pending_path();
        let _guard = lock(&self.pending_lock_path(), self.options.lock_timeout)?;
        let snapshot = read_bytes_or_empty(&path)?;
        let batch = read_pending(&String::from_utf8_lossy(&snapshot), &now_iso);
        if batch.is_empty() {
            return Ok((TriageCounts::default(), batch));
        }
        let mut file = self.load_issues()?;
        let counts = triage(&mut file, &batch, &now_iso);
        write_if_changed(&self.issues_path(), file.to_json().as_bytes())?;
        let current = read_bytes_or_empty(&path)?;
        let tail = current.strip_prefix(snapshot.as_slice()).unwrap_or(&[]);
        if tail.is_empty() {
            let f = std::fs::OpenOptions::new()
                .write(true)
                .open(&path)
                .map_err(|e| Error::io(&path, e))?;
            f.set_len(0).map_err(|e| Error::io(&path, e))?;
        } else {
            curator_store::atomic_write(&path, tail)?;
        }
        Ok((counts, batch))
    }

    /// The memory part of `role`'s prompt preamble (§1.1).
    pub fn context(&self, role: &str) -> Result<String> {
        if !role.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') || role.is_empty() {
            return Err(Error::invalid("role", format!("{role:?} must match [A-Za-z0-9-]+")));
        }
        let identity = read_or_empty(&self.identity_path(role))?;
        let summary =
            if role == "curator" { String::new() } else { read_or_empty(&self.summary_path())? };
        Ok(crate::context::render(role, &identity, &summary))
    }
}
