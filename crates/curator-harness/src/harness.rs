//! The harness handle: where every layer lives and the small operations other crates call
//! (harness-curator §1 layers, §2.1 append, §3.1 filing, §3.3 triage, §8.6 locking).
//!
//! `Harness` holds no memory between calls — like the original harness, every operation
//! re-derives what it needs from disk — only paths and options. "Now" is always a parameter so
//! every result is reproducible in tests.
//!
//! Only `append` and `file_issue` create a state directory; every other operation on one that
//! does not exist is [`Error::NoState`], so a mistyped `--state-dir` never curates a fresh, empty
//! state (issue 16).

use std::path::{Path, PathBuf};
use std::time::Duration;

use jiff::Timestamp;

use curator_store::LockGuard;

use crate::error::{Error, Result};
use crate::fsio::{append_line, lock, read_bytes_or_empty, read_or_empty};
use crate::identity::IdentityFile;
use crate::issues::{
    IssueFile, NewIssue, PendingIssue, TriageCounts, read_pending, skipped_lines, triage,
};
use crate::judge::{EntryJudge, JUDGE_MAX_ENTRIES};
use crate::raw::{format_line, hex, iso_seconds};
use crate::redo::{Cut, FileWrite, Journal, LineAppend, Phase, Target, identify};

/// Where triage keeps the pending-queue lines that hold no record (relative to the state dir).
pub(crate) const PENDING_SKIPPED_REL: &str = "memory/archive/pending-skipped.jsonl";

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
    /// How long to wait for a lock before failing (a manual pass or triage does not wait for
    /// the pass lock: it is refused at once with [`Error::Busy`]).
    pub lock_timeout: Duration,
    /// Optional LLM judge for the entries the rules are least sure of (`judge.rs`).
    pub judge: Option<Box<dyn EntryJudge>>,
    /// Entries the judge sees per pass at most.
    pub judge_max: usize,
}

impl Default for HarnessOptions {
    fn default() -> Self {
        HarnessOptions {
            project_dir: None,
            slug: None,
            mission: None,
            lock_timeout: Duration::from_secs(10),
            judge: None,
            judge_max: JUDGE_MAX_ENTRIES,
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
    /// Queue lines that held no record, kept in `memory/archive/pending-skipped.jsonl`.
    pub skipped: usize,
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
    pub(crate) fn raw_lock_path(&self) -> PathBuf {
        self.memory_dir().join(".raw.lock")
    }
    /// `$STATE/memory/archive/`: where everything that leaves raw.md goes first.
    pub fn archive_dir(&self) -> PathBuf {
        self.memory_dir().join("archive")
    }
    pub(crate) fn pass_journal_path(&self) -> PathBuf {
        self.memory_dir().join(".pass.json")
    }
    fn triage_journal_path(&self) -> PathBuf {
        self.state.join(".triage.json")
    }
    /// The code pointers of the findings triaged since the last auto-close (a JSON array).
    pub(crate) fn refound_path(&self) -> PathBuf {
        self.state.join(".refound-pointers.json")
    }

    /// The pointers [`Self::refound_path`] holds; a missing or unreadable file holds none.
    pub(crate) fn refound_pointers(&self) -> Result<Vec<String>> {
        let text = read_or_empty(&self.refound_path())?;
        Ok(serde_json::from_str(&text).unwrap_or_default())
    }

    /// Fails with [`Error::NoState`] unless the state directory exists.
    pub(crate) fn require_state(&self) -> Result<()> {
        if self.state.is_dir() { Ok(()) } else { Err(Error::NoState { path: self.state.clone() }) }
    }

    /// Takes the pass lock, waiting at most `wait`; a held lock is [`Error::Busy`].
    pub(crate) fn pass_lock(&self, wait: Duration) -> Result<LockGuard> {
        let path = self.curator_lock_path();
        crate::fsio::ensure_parent(&path)?;
        // Not waiting is no reason to judge a holder's age by a zero timeout (2·T staleness).
        let taken = if wait.is_zero() {
            curator_store::acquire_lock_now(&path, self.options.lock_timeout)
        } else {
            curator_store::acquire_lock(&path, &curator_store::LockOptions { timeout: wait })
        };
        taken.map_err(Error::busy_if_held)
    }
    pub(crate) fn pending_lock_path(&self) -> PathBuf {
        self.state.join(".pending-issues.lock")
    }
    pub(crate) fn project_dir(&self) -> PathBuf {
        self.options.project_dir.clone().unwrap_or_else(|| {
            let abs = std::path::absolute(&self.state).unwrap_or_else(|_| self.state.clone());
            abs.parent().map_or_else(|| PathBuf::from("."), Path::to_path_buf)
        })
    }

    /// The project's slug: the configured one, else the project directory's name (§4.4).
    pub fn slug(&self) -> Option<String> {
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
            return Err(Error::invalid("role", "the curator reads raw.md and never appends to it"));
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

    /// Runs §3.3 alone (the UI's "Triage" action), under the pass lock so it never interleaves
    /// with a pass's read-modify-write of issues.json; refused at once while a pass runs.
    pub fn triage(&self, now: Timestamp) -> Result<TriageReport> {
        self.require_state()?;
        let _pass = self.pass_lock(Duration::ZERO)?;
        self.recover()?;
        let counts = self.triage_locked(now)?;
        Ok(TriageReport { merged: counts.merged, deduped: counts.deduped, skipped: counts.skipped })
    }

    /// The pending queue as §3.1's reader reads it (file order; missing = empty).
    pub fn pending_issues(&self, now: Timestamp) -> Result<Vec<PendingIssue>> {
        Ok(read_pending(&read_or_empty(&self.pending_path())?, &iso_seconds(now)))
    }

    /// Loads issues.json (missing = empty).
    pub fn load_issues(&self) -> Result<IssueFile> {
        let path = self.issues_path();
        IssueFile::parse(&read_or_empty(&path)?)
            .map_err(|e| Error::Json { path, message: e.to_string() })
    }

    /// §3.3 with the caller holding the pass lock: returns the counts. The pending lock is held
    /// from read to cut so no finding appended meanwhile is lost. issues.json, the batch's code
    /// pointers (added to [`Self::refound_path`] for the next auto-close, §3.5) and the cut of
    /// the queue are one journal (`redo.rs`): a crash between them never merges a batch twice
    /// nor loses what the auto-close must spare. A broken issues.json fails here, before
    /// anything is written.
    pub(crate) fn triage_locked(&self, now: Timestamp) -> Result<TriageCounts> {
        let now_iso = iso_seconds(now);
        let path = self.pending_path();
        let _guard = lock(&self.pending_lock_path(), self.options.lock_timeout)?;
        let Some((dev, ino)) = identify(&path)? else {
            return Ok(TriageCounts::default());
        };
        let snapshot = read_bytes_or_empty(&path)?;
        let text = String::from_utf8_lossy(&snapshot);
        let batch = read_pending(&text, &now_iso);
        if batch.is_empty() {
            // Nothing to merge: the queue, unreadable lines and all, stays as it is.
            return Ok(TriageCounts::default());
        }
        let skipped = skipped_lines(&text);
        let mut file = self.load_issues()?;
        let mut counts = triage(&mut file, &batch, &now_iso);
        counts.skipped = skipped.len();
        let mut refound = self.refound_pointers()?;
        for pointer in batch.iter().filter_map(|p| p.code_pointer.as_ref()) {
            if !refound.contains(pointer) {
                refound.push(pointer.clone());
            }
        }
        use sha2::Digest as _;
        let journal = Journal {
            id: format!("triage {now_iso}"),
            phase: Phase::Committed,
            archive: None,
            writes: vec![
                FileWrite { target: Target::State("issues.json".into()), text: file.to_json() },
                FileWrite {
                    target: Target::State(".refound-pointers.json".into()),
                    text: serde_json::to_string(&refound).expect("strings serialize"),
                },
            ],
            // §3.1 skips a line that holds no record; the cut would erase it, so it is kept.
            appends: if skipped.is_empty() {
                Vec::new()
            } else {
                // One record per line, named by its triage and place in the queue: an append
                // is applied once however often its journal is replayed (lines already there
                // are not written again), yet the same bad line queued twice is kept twice.
                let records = skipped.iter().enumerate().map(|(n, line)| {
                    serde_json::json!({ "triage": now_iso, "n": n, "line": line }).to_string()
                });
                vec![LineAppend {
                    target: Target::State(PENDING_SKIPPED_REL.into()),
                    lines: records.collect(),
                }]
            },
            cut: Some(Cut {
                file: "pending-issues.jsonl".into(),
                len: snapshot.len() as u64,
                sha256: hex(&sha2::Sha256::digest(&snapshot)),
                dev,
                ino,
                keep: Vec::new(),
            }),
        };
        let journal_path = self.triage_journal_path();
        journal.save(&journal_path)?;
        journal.apply_files(self.roots())?;
        // This thread already holds the pending lock.
        journal.apply_cut(self.roots(), &|| Ok(Box::new(())))?;
        self.remove_durably(&journal_path)?;
        Ok(counts)
    }

    /// Applies a triage journal a crash left behind.
    pub(crate) fn recover_triage(&self) -> Result<Vec<String>> {
        let path = self.triage_journal_path();
        let Some(journal) = Journal::load(&path)? else { return Ok(Vec::new()) };
        let pending_lock = self.pending_lock_path();
        let timeout = self.options.lock_timeout;
        journal.apply_files(self.roots())?;
        journal.apply_cut(self.roots(), &|| Ok(Box::new(lock(&pending_lock, timeout)?)))?;
        self.remove_durably(&path)?;
        Ok(vec![format!("recovered: {} was interrupted and completed", journal.id)])
    }

    /// The memory part of `role`'s prompt preamble (§1.1).
    /// An identity file that is still the seed template (no entry in any section) is left out,
    /// and the placeholder comments of an identity file are never injected (issue 16).
    pub fn context(&self, role: &str) -> Result<String> {
        if !role.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') || role.is_empty() {
            return Err(Error::invalid("role", format!("{role:?} must match [A-Za-z0-9-]+")));
        }
        self.require_state()?;
        let text = read_or_empty(&self.identity_path(role))?;
        let identity = if IdentityFile::parse(role, &text).has_content() {
            text.lines()
                .filter(|l| !l.trim_start().starts_with("<!--"))
                .map(|l| format!("{l}\n"))
                .collect()
        } else {
            String::new()
        };
        let summary =
            if role == "curator" { String::new() } else { read_or_empty(&self.summary_path())? };
        Ok(crate::context::render(role, &identity, &summary))
    }
}
