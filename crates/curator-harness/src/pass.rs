//! One curator pass, in the order of harness-curator §8.2, and its one output line.
//!
//! Order: recover an interrupted pass → triage → stale auto-close (the issues part) → snapshot
//! raw.md and stream it through the merge → promotions and bounds → render MEMORY.md and
//! summary.md → archive every entry that leaves raw.md and every item removed → commit →
//! write MEMORY.md, summary.md and identity files → cut raw.md → the `CURATED …` line.
//!
//! Invariants (issue 16):
//! - **Nothing leaves raw.md unarchived.** The archive is appended and fsynced before the commit;
//!   raw.md is cut after it. A SIGKILL before the commit rolls the archive back (the next pass
//!   redoes everything); after it, the next pass applies the journal (`redo.rs`). Bytes appended
//!   to raw.md while the pass runs are never lost: the cut keeps everything after the snapshot.
//! - **Every bound is met, and the pass finishes.** The merge drops by the documented order into
//!   the archive instead of failing (`compact.rs`, `identity.rs`), and raw.md is truncated.
//! - **The issues part is isolated.** A broken issues.json fails triage and auto-close with a
//!   clear error, leaves the file and the pending queue as they were, and memory curation still
//!   runs: the report is *partial* ([`PassReport::issues_error`]).
//! - **Streaming.** raw.md is read twice, one entry at a time; memory follows the live items, not
//!   the size of raw.md.
//!
//! The whole pass holds `$STATE/memory/.curator.lock`. A manual pass does not wait for it: a
//! person who clicks "curate" during a pass is told at once who holds it ([`Error::Busy`]).

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::io::{BufReader, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::Duration;

use jiff::Timestamp;
use sha2::{Digest, Sha256};

use crate::archive::{
    ArchiveMark, ArchiveRecord, ArchiveWriter, DispositionCounts, RecordKind, read_counts,
};
use crate::bounds::{MEMORY_MAX_BYTES, MEMORY_MAX_LINES, RAW_KEEP_ENTRIES};
use crate::classify::Verdict;
use crate::codebase::ProjectIndex;
use crate::error::{Error, Result};
use crate::fsio::{lock, physical_lines, read_or_empty, write_if_changed};
use crate::harness::Harness;
use crate::harness::PENDING_SKIPPED_REL;
use crate::identity::IdentityFile;
use crate::issues::{FeatureStatuses, auto_close};
use crate::judge::{JudgeInput, consult, uncertain};
use crate::ledger::Ledger;
use crate::memory_md::{MemoryDoc, Section};
use crate::merge::{Disposition, MergeContext, Merger};
use crate::merged_head::{MERGED_HEAD_REL, MergedHead};
use crate::raw::{EntryKind, EntryReader, RawEntry, hex, iso_date, iso_seconds};
use crate::redo::{Cut, FileWrite, Journal, LineAppend, Phase, Roots, Target, identify};
use crate::summary;

/// What fired the pass (§8.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    /// The mission finished.
    Done,
    /// The orchestrator escalated.
    Escalate,
    /// A person asked (UI / CLI).
    Manual,
    /// Every N iterations.
    Periodic,
}

impl Trigger {
    /// The `TRIGGER=` value.
    pub fn as_str(self) -> &'static str {
        match self {
            Trigger::Done => "done",
            Trigger::Escalate => "escalate",
            Trigger::Manual => "manual",
            Trigger::Periodic => "periodic",
        }
    }

    /// Parses `done|escalate|manual|periodic`.
    pub fn parse(s: &str) -> Option<Trigger> {
        Some(match s {
            "done" => Trigger::Done,
            "escalate" => Trigger::Escalate,
            "manual" => Trigger::Manual,
            "periodic" => Trigger::Periodic,
            _ => return None,
        })
    }
}

/// Points in a pass where a test may act (append to raw.md, or crash the pass).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PassStage {
    /// raw.md has been read once (merged); nothing is written yet.
    Snapshotted,
    /// The archive holds this pass's records (fsynced); nothing is committed yet.
    Archived,
    /// The journal is committed; no memory file is written yet.
    Committed,
    /// MEMORY.md, summary.md and identity files are written; raw.md is cut next.
    BeforeTruncate,
}

/// The result of a pass; [`PassReport::line`] is the §8.2 output line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PassReport {
    /// Decision items in MEMORY.md after the pass.
    pub decisions: usize,
    /// Lesson items in MEMORY.md after the pass.
    pub lessons: usize,
    /// Raw entries that left raw.md (§2.3 step 5), every one of them archived.
    pub absorbed: usize,
    /// New issues from triage.
    pub new_issues: usize,
    /// Pending records deduped.
    pub deduped: usize,
    /// Issues auto-closed.
    pub auto_closed: usize,
    /// Identity entries appended.
    pub promoted: usize,
    /// This pass's archive records per disposition.
    pub dispositions: DispositionCounts,
    /// The issues part failed with this error (issues.json and the queue left as they were);
    /// memory curation still ran. `Some` makes the pass *partial*.
    pub issues_error: Option<String>,
    /// Everything else worth saying: drops, near-format lines, compactions, recoveries.
    pub notes: Vec<String>,
    /// Files whose bytes changed.
    pub changed: Vec<String>,
}

impl PassReport {
    /// `CURATED <d> decisions, <l> lessons, <r> raw entries absorbed; ISSUES +<n> new, <u> deduped, <c> auto-closed; IDENTITY +<p>`
    pub fn line(&self) -> String {
        format!(
            "CURATED {} decisions, {} lessons, {} raw entries absorbed; ISSUES +{} new, {} deduped, {} auto-closed; IDENTITY +{}",
            self.decisions,
            self.lessons,
            self.absorbed,
            self.new_issues,
            self.deduped,
            self.auto_closed,
            self.promoted
        )
    }

    /// Whether a part of the pass failed while memory curation completed.
    pub fn is_partial(&self) -> bool {
        self.issues_error.is_some()
    }
}

pub(crate) fn is_safe_role(role: &str) -> bool {
    !role.is_empty() && role.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
}

/// Identity appends a report names one by one.
const NOTES_SHOWN: usize = 20;

/// Read buffer for raw.md.
const READ_BUFFER: usize = 256 * 1024;

/// One entry that stays in raw.md's tail candidates. Its bytes are kept (at most
/// [`RAW_KEEP_ENTRIES`] + 1 entries of at most `MAX_ENTRY_TEXT` each) so that only the entries
/// the cut keeps are hashed for the merged-head record, not every entry of raw.md.
#[derive(Debug, Clone)]
struct Tail {
    index: usize,
    head: Vec<u8>,
    offset: u64,
    len: u64,
    trick: bool,
}

fn entry_key(e: &RawEntry) -> [u8; 32] {
    key_of(&e.head)
}

/// An entry's key: the SHA-256 of its bytes (its head, which is all of any ordinary entry).
fn key_of(head: &[u8]) -> [u8; 32] {
    Sha256::digest(head).into()
}

impl Harness {
    /// Runs a full pass.
    pub fn curate(&self, trigger: Trigger, now: Timestamp) -> Result<PassReport> {
        self.curate_with(trigger, now, &mut |_| {})
    }

    /// Runs a full pass that never waits for another one: while a pass holds the lock it is
    /// refused at once with [`Error::Busy`], whatever its trigger. For requests a person or an
    /// agent makes (HTTP, MCP), who should hear "busy" rather than wait.
    pub fn curate_at_once(&self, trigger: Trigger, now: Timestamp) -> Result<PassReport> {
        self.run_pass(trigger, now, Duration::ZERO, &mut |_| {})
    }

    /// Runs a full pass, calling `hook` at each [`PassStage`]. A manual pass does not wait for
    /// a running one ([`Error::Busy`]); the others wait up to the lock timeout.
    pub fn curate_with(
        &self,
        trigger: Trigger,
        now: Timestamp,
        hook: &mut dyn FnMut(PassStage),
    ) -> Result<PassReport> {
        let wait =
            if trigger == Trigger::Manual { Duration::ZERO } else { self.options.lock_timeout };
        self.run_pass(trigger, now, wait, hook)
    }

    fn run_pass(
        &self,
        trigger: Trigger,
        now: Timestamp,
        wait: Duration,
        hook: &mut dyn FnMut(PassStage),
    ) -> Result<PassReport> {
        self.require_state()?;
        let mut report = PassReport::default();
        let judged = self.consult_judge(&mut report.notes)?;
        let _pass = self.pass_lock(wait)?;
        report.notes.extend(self.recover()?);
        let (date, now_iso) = (iso_date(now), iso_seconds(now));

        // 1–2. The issues part, isolated: its failure leaves its files alone and the pass goes on.
        let issues_done = match self.issues_part(trigger, now, &date, &now_iso, &mut report) {
            Ok(()) => true,
            Err(e) => {
                report.issues_error = Some(e.to_string());
                false
            }
        };

        // 3. Snapshot: raw.md's length under its writers' lock (appends are whole lines).
        let raw_path = self.raw_path();
        let (snapshot_len, raw_id) = {
            let _raw = lock(&self.raw_lock_path(), self.options.lock_timeout)?;
            match identify(&raw_path)? {
                Some(id) => (
                    std::fs::metadata(&raw_path).map_err(|e| Error::io(&raw_path, e))?.len(),
                    Some(id),
                ),
                None => (0, None),
            }
        };
        let features = FeatureStatuses::parse(&read_or_empty(&self.features_path())?);
        let doc = MemoryDoc::parse(&self.read_keeping_original(&self.memory_path(), "MEMORY.md")?);
        let project = ProjectIndex::scan(&self.project_dir(), self.slug().as_deref());
        let mut ids = self.load_identities(true)?;
        let ids_before: HashMap<String, String> =
            ids.iter().map(|(r, f)| (r.clone(), f.render())).collect();
        let mut ledger = Ledger::parse(&read_or_empty(&self.ledger_path())?);
        let mission = self.mission(now)?;
        let merged_head =
            MergedHead::parse(&read_or_empty(&self.state_dir().join(MERGED_HEAD_REL))?);

        // 4. Stream raw.md through the merge.
        let cx =
            MergeContext { project: &project, features: &features, date: &date, mission: &mission };
        let mut merger = Merger::new(doc, cx);
        let raw_file = match raw_id {
            Some(_) => {
                Some(crate::fsio::open_regular(&raw_path).map_err(|e| Error::io(&raw_path, e))?)
            }
            None => None,
        };
        let mut tail: VecDeque<Tail> = VecDeque::with_capacity(RAW_KEEP_ENTRIES + 1);
        let mut count = 0usize;
        let mut sha256 = String::new();
        let mut head = merged_head.matcher();
        if let Some(file) = &raw_file {
            let mut reader =
                EntryReader::new(BufReader::with_capacity(READ_BUFFER, file), snapshot_len)
                    .hashing();
            for e in reader.by_ref() {
                let e = e.map_err(|err| Error::io(&raw_path, err))?;
                // Hashing is the pass's costliest step per byte: only the judge's verdicts and
                // the merged head still being matched need a key here.
                let key = (!judged.is_empty() || head.matching()).then(|| entry_key(&e));
                let verdict = key.and_then(|k| judged.get(&k).cloned());
                merger.take(&e, verdict, key.is_some_and(|k| head.already_merged(&k)));
                let trick = e.line().is_some_and(|l| l.trick);
                tail.push_back(Tail {
                    index: count,
                    head: e.head,
                    offset: e.offset,
                    len: e.len,
                    trick,
                });
                if tail.len() > RAW_KEEP_ENTRIES {
                    tail.pop_front();
                }
                count += 1;
            }
            sha256 = reader.finish_hash().unwrap_or_default();
        }
        hook(PassStage::Snapshotted);

        // 5. Promotions, bounds, the rendered files (verified before anything is written).
        let result = merger.finish(&mut ids, &mut ledger);
        report.notes.extend(result.notes.iter().cloned());
        let memory_text = result.doc.render();
        let (lines, bytes) = (physical_lines(&memory_text), memory_text.len());
        if lines > MEMORY_MAX_LINES || bytes > MEMORY_MAX_BYTES {
            return Err(Error::Bound {
                file: "MEMORY.md",
                rule: format!(
                    "{lines} lines / {bytes} bytes (max {MEMORY_MAX_LINES} / {MEMORY_MAX_BYTES})"
                ),
            });
        }
        let summary_text = summary::render(&result.doc, &date)?;
        let summary_before = read_or_empty(&self.summary_path())?;
        let summary_same = !summary_before.is_empty()
            && summary::body(&summary_before) == summary::body(&summary_text);

        // §2.3: the last 10 entries stay, minus TRICKs promoted this pass, no backfill.
        let kept: Vec<Tail> = tail
            .into_iter()
            .filter(|t| !result.is_promoted_trick(result.fates[t.index], t.trick))
            .collect();
        let kept_index: BTreeSet<usize> = kept.iter().map(|t| t.index).collect();
        report.absorbed = count - kept.len();

        // 6. Archive what leaves raw.md and what the pass removed, then fsync.
        let archive_dir = self.archive_dir();
        let journal_path = self.pass_journal_path();
        let pass_id = format!("{now_iso}#{}", std::process::id());
        let mut journal = Journal {
            id: pass_id.clone(),
            phase: Phase::Archiving,
            archive: None,
            writes: Vec::new(),
            appends: Vec::new(),
            cut: None,
        };
        if report.absorbed > 0 || !result.removed.is_empty() {
            let mark = ArchiveMark::now(&archive_dir, &now.strftime("%Y-%m").to_string())?;
            journal.archive = Some(mark.clone());
            journal.save(&journal_path)?;
            let mut writer = ArchiveWriter::open(&archive_dir, mark)?;
            if let Some(mut file) = raw_file.as_ref() {
                // The second read starts at the top again: the first left the shared offset at
                // the end of the snapshot (and an appended tail must never be archived).
                file.seek(SeekFrom::Start(0)).map_err(|e| Error::io(&raw_path, e))?;
                let reader =
                    EntryReader::new(BufReader::with_capacity(READ_BUFFER, file), snapshot_len);
                let mut seen = 0;
                for (i, e) in reader.enumerate() {
                    let e = e.map_err(|err| Error::io(&raw_path, err))?;
                    seen += 1;
                    if kept_index.contains(&i) {
                        continue;
                    }
                    let Some(&fate) = result.fates.get(i) else { break };
                    writer.entry(
                        file,
                        &e,
                        entry_record(&pass_id, &e, &result.disposition(fate)),
                    )?;
                }
                if seen != count {
                    // raw.md's prefix changed between the two reads (not by an append): undo.
                    drop(writer);
                    if let Some(mark) = &journal.archive {
                        mark.rollback(&archive_dir)?;
                    }
                    self.remove_durably(&journal_path)?;
                    return Err(Error::Changed {
                        file: "raw.md",
                        detail: format!("read {count} entries, then {seen}; nothing was written"),
                    });
                }
            }
            for r in &result.removed {
                writer.item(&ArchiveRecord {
                    pass: pass_id.clone(),
                    kind: RecordKind::Item,
                    disposition: Disposition::Dropped,
                    to: Vec::new(),
                    item: None,
                    reason: Some(r.reason.clone()),
                    at: None,
                    role: None,
                    feature: None,
                    trick: false,
                    from: Some(r.from.clone()),
                    text: r.line.clone(),
                    archive: None,
                    offset: None,
                    len: None,
                })?;
            }
            report.dispositions = writer.finish()?;
        }
        hook(PassStage::Archived);

        // 7. Commit: every write of the pass in one journal.
        journal.phase = Phase::Committed;
        journal.writes.push(FileWrite {
            target: Target::State("memory/MEMORY.md".into()),
            text: memory_text,
        });
        if !summary_same {
            journal.writes.push(FileWrite {
                target: Target::State("memory/summary.md".into()),
                text: summary_text,
            });
        }
        for (role, file) in &ids {
            let text = file.render();
            // Roles not on disk before are files this pass's appends created.
            if ids_before.get(role).is_some_and(|b| *b == text) {
                continue;
            }
            if !is_safe_role(role) {
                report
                    .notes
                    .push(format!("identity role {role:?} is not a safe file name; not written"));
                continue;
            }
            journal.writes.push(FileWrite { target: Target::Identity(format!("{role}.md")), text });
        }
        if report.dispositions != DispositionCounts::default() {
            let mut totals = read_counts(&archive_dir)?;
            totals.add(&report.dispositions);
            let text = serde_json::to_string_pretty(&totals).expect("counts serialize") + "\n";
            journal.writes.push(FileWrite {
                target: Target::State("memory/archive/counts.json".into()),
                text,
            });
        }
        // What raw.md will begin with after the cut, merged (merged_head.rs).
        journal.writes.push(FileWrite {
            target: Target::State(MERGED_HEAD_REL.into()),
            text: MergedHead::of(kept.iter().map(|t| key_of(&t.head))).render(),
        });
        let added = ledger.added_lines();
        if !added.is_empty() {
            journal.appends.push(LineAppend {
                target: Target::Identity(".ledger.jsonl".into()),
                lines: added.lines().map(str::to_string).collect(),
            });
        }
        if let (Some((dev, ino)), true) = (raw_id, report.absorbed > 0) {
            journal.cut = Some(Cut {
                file: "memory/raw.md".into(),
                len: snapshot_len,
                sha256,
                dev,
                ino,
                keep: kept.iter().map(|t| (t.offset, t.offset + t.len)).collect(),
            });
        }
        journal.save(&journal_path)?;
        hook(PassStage::Committed);

        // 8. Apply.
        let roots = self.roots();
        let applied = journal.apply_files(roots)?;
        hook(PassStage::BeforeTruncate);
        let raw_lock = self.raw_lock_path();
        let timeout = self.options.lock_timeout;
        let cut = journal.apply_cut(roots, &|| Ok(Box::new(lock(&raw_lock, timeout)?)))?;
        self.remove_durably(&journal_path)?;
        // The pass is whole: its auto-close has seen the batch's pointers for good. Kept until
        // now, a retry of a pass that died after its issues part (which already cut the queue)
        // spares what that batch found again instead of closing it as verified green.
        if issues_done {
            self.remove_durably(&self.refound_path())?;
        }

        for t in &applied.changed {
            if *t == Target::State(MERGED_HEAD_REL.into()) {
                continue;
            }
            report.changed.push(target_name(t));
        }
        if cut.cut {
            report.changed.push("raw.md".into());
        }
        if let Some(why) = cut.skipped {
            report
                .notes
                .push(format!("raw.md not truncated: {why}; nothing was lost, its entries stay"));
            report.absorbed = 0;
        }
        report.decisions = result.doc.count(Section::Decisions);
        report.lessons = result.doc.count(Section::Lessons);
        report.promoted = result.identity_appends.len();
        // Named one by one up to a point: a first pass over a big raw.md can append hundreds.
        for (role, section, statement) in result.identity_appends.iter().take(NOTES_SHOWN) {
            report.notes.push(format!(
                "identity/{role}.md {}: {statement}",
                section.heading().trim_start_matches("## ")
            ));
        }
        if result.identity_appends.len() > NOTES_SHOWN {
            report.notes.push(format!(
                "… and {} more identity entries",
                result.identity_appends.len() - NOTES_SHOWN
            ));
        }
        Ok(report)
    }

    /// Triage and stale auto-close (§3.3, §3.5), with the caller holding the pass lock.
    fn issues_part(
        &self,
        trigger: Trigger,
        now: Timestamp,
        date: &str,
        now_iso: &str,
        report: &mut PassReport,
    ) -> Result<()> {
        let counts = self.triage_locked(now)?;
        report.new_issues = counts.merged;
        report.deduped = counts.deduped;
        if counts.skipped > 0 {
            report.notes.push(format!(
                "{} pending-issues line(s) held no issue record (not JSON, or no title or \
                 severity): skipped, and kept in {PENDING_SKIPPED_REL}",
                counts.skipped
            ));
        }
        if counts.merged + counts.deduped > 0 {
            report.changed.push("issues.json".into());
            report.changed.push("pending-issues.jsonl".into());
        }
        let features = FeatureStatuses::parse(&read_or_empty(&self.features_path())?);
        let mut issues = self.load_issues()?;
        let round = format!("TRIGGER={} {date}", trigger.as_str());
        let refound = self.refound_pointers()?;
        report.auto_closed = auto_close(&mut issues, &features, &refound, &round, now_iso);
        if report.auto_closed > 0
            && write_if_changed(&self.issues_path(), issues.to_json().as_bytes())?
            && !report.changed.iter().any(|c| c == "issues.json")
        {
            report.changed.push("issues.json".into());
        }
        // The batch's pointers stay until the whole pass is done (`run_pass`): a pass that
        // dies before then is retried with this auto-close's view of what just came back.
        Ok(())
    }

    /// Asks the LLM judge (if any) about the entries the rules are least sure of, before the
    /// pass takes its lock. Verdicts are keyed by the entry's bytes.
    fn consult_judge(&self, notes: &mut Vec<String>) -> Result<HashMap<[u8; 32], Verdict>> {
        let Some(judge) = &self.options.judge else { return Ok(HashMap::new()) };
        let path = self.raw_path();
        let Ok(file) = crate::fsio::open_regular(&path) else { return Ok(HashMap::new()) };
        let len = file.metadata().map_err(|e| Error::io(&path, e))?.len();
        let mut inputs = Vec::new();
        let mut keys = Vec::new();
        for e in EntryReader::new(BufReader::with_capacity(READ_BUFFER, &file), len) {
            let e = e.map_err(|err| Error::io(&path, err))?;
            let Some(line) = e.line() else { continue };
            let Some(verdict) = uncertain(line) else { continue };
            let rules = match verdict {
                Verdict::Keep(c) => c.section.name().to_string(),
                Verdict::Absorb(_) => "absorb".to_string(),
            };
            inputs.push(JudgeInput {
                n: inputs.len() + 1,
                role: line.role.clone(),
                feature: line.feature.clone(),
                text: line.text.clone(),
                rules,
            });
            keys.push(entry_key(&e));
            if inputs.len() >= self.options.judge_max {
                break;
            }
        }
        if inputs.is_empty() {
            return Ok(HashMap::new());
        }
        let (verdicts, problems) = consult(judge.as_ref(), &inputs);
        notes.extend(problems);
        notes.push(format!("LLM judge: {} of {} entries judged", verdicts.len(), inputs.len()));
        Ok(verdicts.into_iter().map(|(n, v)| (keys[n - 1], v)).collect())
    }

    /// Completes or rolls back a pass or triage that a crash interrupted (`redo.rs`).
    pub(crate) fn recover(&self) -> Result<Vec<String>> {
        let mut notes = Vec::new();
        let path = self.pass_journal_path();
        match Journal::load(&path) {
            Ok(None) => {}
            Ok(Some(j)) => {
                match j.phase {
                    Phase::Archiving => {
                        if let Some(mark) = &j.archive {
                            mark.rollback(&self.archive_dir())?;
                        }
                        notes.push(format!(
                            "recovered: pass {} was interrupted before its commit and rolled back",
                            j.id
                        ));
                    }
                    Phase::Committed => {
                        let raw_lock = self.raw_lock_path();
                        let timeout = self.options.lock_timeout;
                        j.apply_files(self.roots())?;
                        j.apply_cut(self.roots(), &|| Ok(Box::new(lock(&raw_lock, timeout)?)))?;
                        notes.push(format!(
                            "recovered: pass {} was interrupted after its commit and completed",
                            j.id
                        ));
                    }
                }
                self.remove_durably(&path)?;
            }
            Err(e) => {
                // Journals are written atomically, so an unreadable one was never a commit.
                let aside = path.with_extension("json.unreadable");
                std::fs::rename(&path, &aside).map_err(|err| Error::io(&path, err))?;
                notes.push(format!(
                    "set aside an unreadable pass journal ({e}) as {}",
                    aside.display()
                ));
            }
        }
        notes.extend(self.recover_triage()?);
        notes.extend(self.remove_dead_temps());
        Ok(notes)
    }

    /// Removes what a killed pass or triage left beside the files it writes: temp files of
    /// atomic writes whose writer is gone (the identity folder is shared, so a live writer's
    /// are left alone) and a half-written cut of raw.md, which only a pass holding this state's
    /// lock — the caller — makes. Best effort: a file that cannot be removed is only untidy.
    fn remove_dead_temps(&self) -> Vec<String> {
        let cuts_of = |log: &Path| -> Vec<PathBuf> {
            let name = log.file_name().map_or("log".into(), |n| n.to_string_lossy());
            let prefix = format!(".{name}.cut-");
            std::fs::read_dir(crate::fsio::parent_of(log))
                .into_iter()
                .flatten()
                .filter_map(|e| e.ok())
                .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
                .map(|e| e.path())
                .collect()
        };
        let mut cuts = cuts_of(&self.raw_path());
        // The queue is cut by a triage, which holds the queue's lock rather than this state's:
        // its half-written cuts are only removed while no triage runs.
        let queue_lock =
            curator_store::acquire_lock_now(&self.pending_lock_path(), self.options.lock_timeout);
        if queue_lock.is_ok() {
            cuts.extend(cuts_of(&self.pending_path()));
        }
        let dirs =
            [self.state.clone(), self.memory_dir(), self.archive_dir(), self.identity.clone()];
        let temps = dirs.iter().flat_map(|d| curator_store::dead_writer_temps(d));
        let mut notes = Vec::new();
        for path in cuts.into_iter().chain(temps).collect::<Vec<_>>() {
            if std::fs::remove_file(&path).is_ok() {
                notes.push(format!(
                    "recovered: removed {}, left by a killed writer",
                    path.display()
                ));
            }
        }
        notes
    }

    pub(crate) fn roots(&self) -> Roots<'_> {
        Roots { state: &self.state, identity: &self.identity }
    }

    /// Removes `path` (a journal, a consumed marker) and syncs its folder; a missing file is fine.
    pub(crate) fn remove_durably(&self, path: &std::path::Path) -> Result<()> {
        match std::fs::remove_file(path) {
            Ok(()) => crate::fsio::sync_dir(crate::fsio::parent_of(path)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(Error::io(path, e)),
        }
    }

    /// Reads a file a pass may rewrite. Bytes that are not UTF-8 (a cp1252 paste) read as
    /// U+FFFD and are written back so; the original is kept first in
    /// `memory/archive/originals/<label>.<sha256 prefix>` (named by its content, so a retried
    /// pass writes it once), as raw.md's entries are archived byte for byte.
    fn read_keeping_original(&self, path: &Path, label: &str) -> Result<String> {
        let bytes = crate::fsio::read_bytes_or_empty(path)?;
        if let Ok(text) = std::str::from_utf8(&bytes) {
            return Ok(text.to_owned());
        }
        use sha2::Digest as _;
        let digest = hex(&sha2::Sha256::digest(&bytes));
        let dir = self.archive_dir().join("originals");
        let kept = dir.join(format!("{label}.{}", &digest[..16]));
        if !kept.exists() {
            std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
            curator_store::atomic_write(&kept, &bytes)?;
        }
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// Loads every `*.md` of the identity directory; `for_rewrite` (a pass) keeps the
    /// original of a file that is not UTF-8 ([`Self::read_keeping_original`]).
    pub(crate) fn load_identities(&self, for_rewrite: bool) -> Result<crate::merge::Identities> {
        let mut ids = crate::merge::Identities::new();
        let Ok(dir) = std::fs::read_dir(&self.identity) else { return Ok(ids) };
        for e in dir.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(role) = name.strip_suffix(".md").filter(|r| is_safe_role(r)) {
                let text = if for_rewrite {
                    self.read_keeping_original(&e.path(), &format!("identity-{name}"))?
                } else {
                    read_or_empty(&e.path())?
                };
                ids.insert(role.to_string(), IdentityFile::parse(role, &text));
            }
        }
        Ok(ids)
    }

    fn mission(&self, now: Timestamp) -> Result<String> {
        if let Some(m) = &self.options.mission {
            return check_mission(m, "--mission").map(str::to_owned);
        }
        let path = self.memory_dir().join(".mission");
        let known = read_or_empty(&path)?;
        if !known.trim().is_empty() {
            return check_mission(known.trim(), &path.display().to_string()).map(str::to_owned);
        }
        // The project folder's name may hold anything: what a mission id cannot is replaced.
        let slug: String = self
            .slug()
            .unwrap_or_else(|| "harness".into())
            .chars()
            .map(|c| if mission_char(c) { c } else { '-' })
            .take(90)
            .collect();
        let mission = format!("{}@{}", slug.trim(), iso_seconds(now));
        write_if_changed(&path, format!("{mission}\n").as_bytes())?;
        Ok(mission)
    }
}

/// A mission id is written into identity entries (`(shop@1, shop@2)`) that every role's
/// preamble shows: one line of at most 120 characters, without control characters or the
/// list's own delimiters `(`, `)` and `,`, so it can never add a line, a section or a mission
/// of its own.
fn mission_char(c: char) -> bool {
    !c.is_control() && !"(),".contains(c)
}

fn check_mission<'a>(mission: &'a str, source: &str) -> Result<&'a str> {
    if mission.is_empty()
        || mission.chars().count() > 120
        || mission != mission.trim()
        || !mission.chars().all(mission_char)
    {
        return Err(Error::invalid(
            "mission",
            format!(
                "{:?} (from {source}) must be one line of 1-120 characters without control \
                 characters, '(', ')' or ','",
                curator_core::excerpt(mission)
            ),
        ));
    }
    Ok(mission)
}

fn target_name(t: &Target) -> String {
    match t {
        Target::State(rel) => rel.trim_start_matches("memory/").to_string(),
        Target::Identity(name) => format!("identity/{name}"),
    }
}

fn entry_record(pass: &str, e: &RawEntry, r: &crate::merge::Resolved) -> ArchiveRecord {
    let line = e.line();
    ArchiveRecord {
        pass: pass.to_string(),
        kind: RecordKind::Entry,
        disposition: r.disposition,
        to: r.to.clone(),
        item: r.item.clone(),
        reason: r.reason.clone().or_else(|| {
            matches!(e.kind, EntryKind::NearFormat(_))
                .then(|| "near-format line read leniently".to_string())
        }),
        at: line.map(|l| l.timestamp.clone()),
        role: line.map(|l| l.role.clone()),
        feature: line.and_then(|l| l.feature.clone()),
        trick: line.is_some_and(|l| l.trick),
        from: None,
        text: e.flat_text(),
        archive: None,
        offset: None,
        len: None,
    }
}
