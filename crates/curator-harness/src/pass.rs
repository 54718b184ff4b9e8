//! One curator pass, in the order of harness-curator §8.2, and its one output line.
//!
//! Order: triage → stale auto-close → read raw/MEMORY/features → merge and promote → render
//! summary → write MEMORY.md and summary.md → truncate raw.md → identity appends and compaction →
//! the `CURATED …` line. The whole pass holds `$STATE/memory/.curator.lock`. Failure semantics
//! (§8.1, §10.21): a bound that cannot be met or a write that fails returns an error before raw.md
//! is touched, so nothing is absorbed that was not stored; triage and auto-close results already
//! saved stay saved (they are complete, valid steps). Callers on the DONE/ESCALATE path log the
//! error and carry on — a failing pass never blocks the mission.

use std::collections::BTreeMap;

use jiff::Timestamp;

use crate::codebase::ProjectIndex;
use crate::compact::{MEMORY_MAX_LINES, drop_stale, enforce_bound};
use crate::error::{Error, Result};
use crate::fsio::{
    append_line, lock, physical_lines, read_bytes_or_empty, read_or_empty, write_if_changed,
};
use crate::harness::Harness;
use crate::identity::{IdentityFile, IdentitySection};
use crate::issues::{FeatureStatuses, auto_close};
use crate::ledger::Ledger;
use crate::memory_md::{MemoryDoc, Section};
use crate::promote::{Identities, MergeContext, merge};
use crate::raw::{iso_date, iso_seconds, segment};
use crate::rewrite::{RewriteInput, validate_rewrite};
use crate::summary;
use crate::truncate;

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

/// Points in a pass where a test may act (e.g. append to raw.md between snapshot and truncation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PassStage {
    /// raw.md has been snapshotted; MEMORY.md and summary.md are written; truncation is next.
    BeforeTruncate,
}

/// The result of a pass; [`PassReport::line`] is the §8.2 output line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PassReport {
    /// Decision items in MEMORY.md after the pass.
    pub decisions: usize,
    /// Lesson items in MEMORY.md after the pass.
    pub lessons: usize,
    /// Raw entries absorbed (§2.3 step 5).
    pub absorbed: usize,
    /// New issues from triage.
    pub new_issues: usize,
    /// Pending records deduped.
    pub deduped: usize,
    /// Issues auto-closed.
    pub auto_closed: usize,
    /// Identity entries appended.
    pub promoted: usize,
    /// Everything else worth saying: drops, compactions, overflows, skipped steps.
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
}

fn is_safe_role(role: &str) -> bool {
    !role.is_empty() && role.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
}

impl Harness {
    /// Runs a full pass.
    pub fn curate(&self, trigger: Trigger, now: Timestamp) -> Result<PassReport> {
        self.curate_with(trigger, now, &mut |_| {})
    }

    /// Runs a full pass, calling `hook` at each [`PassStage`].
    pub fn curate_with(
        &self,
        trigger: Trigger,
        now: Timestamp,
        hook: &mut dyn FnMut(PassStage),
    ) -> Result<PassReport> {
        let _pass = lock(&self.curator_lock_path(), self.options.lock_timeout)?;
        let mut report = PassReport::default();
        let (date, now_iso) = (iso_date(now), iso_seconds(now));

        // 1–2. Triage, then stale auto-close against this pass's batch.
        let (counts, batch) = self.triage_locked(now)?;
        report.new_issues = counts.merged;
        report.deduped = counts.deduped;
        let features = FeatureStatuses::parse(&read_or_empty(&self.features_path())?);
        let mut issues = self.load_issues()?;
        let round = format!("TRIGGER={} {date}", trigger.as_str());
        report.auto_closed = auto_close(&mut issues, &features, &batch, &round, &now_iso);
        if report.auto_closed > 0
            && write_if_changed(&self.issues_path(), issues.to_json().as_bytes())?
        {
            report.changed.push("issues.json".into());
        }
        if counts.merged + counts.deduped > 0 {
            push_unique(&mut report.changed, "issues.json");
            report.changed.push("pending-issues.jsonl".into());
        }

        // 3. Read the layers. raw.md is a byte snapshot: offset N marks what this pass absorbs.
        let snapshot_bytes = read_bytes_or_empty(&self.raw_path())?;
        let snapshot = String::from_utf8_lossy(&snapshot_bytes).into_owned();
        let entries = segment(&snapshot);
        let memory_before = read_or_empty(&self.memory_path())?;
        let mut doc = MemoryDoc::parse(&memory_before);
        let project = ProjectIndex::scan(&self.project_dir(), self.slug().as_deref());
        let mut ids = self.load_identities()?;
        let ids_before: BTreeMap<String, String> =
            ids.iter().map(|(r, f)| (r.clone(), f.render())).collect();
        let mut ledger = Ledger::parse(&read_or_empty(&self.ledger_path())?);
        let mission = self.mission(now)?;

        // 4. Merge raw into MEMORY.md and decide promotions; drop stale; enforce the bound.
        let cx = MergeContext { project: &project, date: &date, mission: &mission };
        let outcome = merge(&entries, &mut doc, &mut ids, &mut ledger, &cx);
        report.notes.extend(drop_stale(&mut doc, &project, &features));
        report.notes.extend(enforce_bound(&mut doc, &features)?);

        // 5. Re-derive summary.md; verify both files before anything is written.
        let mut memory_text = doc.render();
        let mut summary_text = summary::render(&doc, &date)?;
        if let Some(rewriter) = &self.options.rewriter {
            let input = RewriteInput {
                raw: snapshot.clone(),
                memory_md: memory_text.clone(),
                summary_md: summary_text.clone(),
                issues_json: issues.to_json(),
                features_json: read_or_empty(&self.features_path())?,
                identities: ids.iter().map(|(r, f)| (r.clone(), f.render())).collect(),
            };
            match rewriter.rewrite(&input) {
                Err(e) => {
                    report.notes.push(format!("LLM rewrite failed, deterministic files kept: {e}"))
                }
                Ok(out) => {
                    let problems = validate_rewrite(&input, &out);
                    if problems.is_empty() {
                        memory_text = out.memory_md.unwrap_or(memory_text);
                        summary_text = out.summary_md.unwrap_or(summary_text);
                        for (role, text) in out.identities {
                            ids.insert(role.clone(), IdentityFile::parse(&role, &text));
                        }
                    } else {
                        report.notes.push(format!("{}", Error::Rewrite { problems }));
                    }
                }
            }
        }
        let memory_lines = physical_lines(&memory_text);
        if memory_lines > MEMORY_MAX_LINES {
            return Err(Error::Bound {
                file: "MEMORY.md",
                rule: format!("{memory_lines} lines > {MEMORY_MAX_LINES}"),
            });
        }
        summary::check(&summary_text)?;
        if write_if_changed(&self.memory_path(), memory_text.as_bytes())? {
            report.changed.push("MEMORY.md".into());
        }
        let summary_before = read_or_empty(&self.summary_path())?;
        let summary_same = !summary_before.is_empty()
            && summary::body(&summary_before) == summary::body(&summary_text);
        if !summary_same && write_if_changed(&self.summary_path(), summary_text.as_bytes())? {
            report.changed.push("summary.md".into());
        }
        // Checked after writing too: what is on disk is what the bounds were verified on.
        let on_disk = read_or_empty(&self.summary_path())?;
        summary::check(&on_disk)?;
        let final_doc = MemoryDoc::parse(&read_or_empty(&self.memory_path())?);
        report.decisions = final_doc.count(Section::Decisions);
        report.lessons = final_doc.count(Section::Lessons);

        // 6. Truncate raw.md: retained tail of the snapshot + everything appended since.
        hook(PassStage::BeforeTruncate);
        let plan = truncate::plan(&snapshot, &entries, &outcome.promoted_entries);
        {
            let _raw = lock(&self.memory_dir().join(".raw.lock"), self.options.lock_timeout)?;
            let current = read_bytes_or_empty(&self.raw_path())?;
            match truncate::rewrite(&current, &snapshot_bytes, &plan) {
                Some(next) => {
                    report.absorbed = plan.absorbed;
                    if !current.is_empty() && write_if_changed(&self.raw_path(), &next)? {
                        report.changed.push("raw.md".into());
                    }
                }
                None => report.notes.push(
                    "raw.md changed under the pass (not by an append); truncation skipped".into(),
                ),
            }
        }

        // 7. Identity appends and compaction; ledger.
        report.promoted = outcome.identity_appends.len();
        for (role, file) in ids.iter_mut() {
            let before = ids_before.get(role).cloned().unwrap_or_default();
            if file.render() == before {
                continue;
            }
            if !is_safe_role(role) {
                report
                    .notes
                    .push(format!("identity role {role:?} is not a safe file name; not written"));
                continue;
            }
            match file.compact_if_needed() {
                Ok(true) => report.notes.push(format!("IDENTITY compacted {role}")),
                Ok(false) => {}
                Err(lines) => report
                    .notes
                    .push(format!("IDENTITY compaction-overflow {role} ({lines} lines)")),
            }
            if write_if_changed(&self.identity_path(role), file.render().as_bytes())? {
                report.changed.push(format!("identity/{role}.md"));
            }
        }
        let added = ledger.added_lines();
        if !added.is_empty() {
            append_line(&self.ledger_path(), added.trim_end_matches('\n'))?;
        }
        for (role, section, statement) in &outcome.identity_appends {
            report
                .notes
                .push(format!("identity/{role}.md {}: {statement}", section_name(*section)));
        }
        Ok(report)
    }

    /// Loads every `*.md` of the identity directory.
    pub(crate) fn load_identities(&self) -> Result<Identities> {
        let mut ids = Identities::new();
        let Ok(dir) = std::fs::read_dir(&self.identity) else { return Ok(ids) };
        for e in dir.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(role) = name.strip_suffix(".md").filter(|r| is_safe_role(r)) {
                let text = read_or_empty(&e.path())?;
                ids.insert(role.to_string(), IdentityFile::parse(role, &text));
            }
        }
        Ok(ids)
    }

    fn mission(&self, now: Timestamp) -> Result<String> {
        if let Some(m) = &self.options.mission {
            return Ok(m.clone());
        }
        let path = self.memory_dir().join(".mission");
        let known = read_or_empty(&path)?;
        if !known.trim().is_empty() {
            return Ok(known.trim().to_string());
        }
        let mission =
            format!("{}@{}", self.slug().unwrap_or_else(|| "harness".into()), iso_seconds(now));
        write_if_changed(&path, format!("{mission}\n").as_bytes())?;
        Ok(mission)
    }
}

fn push_unique(v: &mut Vec<String>, s: &str) {
    if !v.iter().any(|x| x == s) {
        v.push(s.to_string());
    }
}

fn section_name(s: IdentitySection) -> &'static str {
    s.heading().trim_start_matches("## ")
}
