//! Raw → MEMORY.md merge and promotion to identity (harness-curator §4.2, §4.4, §4.5, §6).
//!
//! Worker TRICK entries are clustered into lemmas (§4.3); a lemma that names the codebase (§4.4)
//! or was seen by fewer than two distinct features stays in MEMORY.md `## Lessons` with its
//! evidence ids — that is the cross-pass carry — and a general lemma seen by ≥ 2 distinct features
//! (raw sightings ∪ carried evidence) goes to `identity/worker.md`. Other entries are classified
//! (`classify.rs`) and upserted by lemma, so a sighting already in MEMORY.md only adds evidence.
//! Every test consults what is already written, which makes a second pass over the same input a
//! no-op.

use std::collections::{BTreeMap, BTreeSet};

use crate::classify::classify;
use crate::codebase::ProjectIndex;
use crate::identity::{IdentityEntry, IdentityFile, IdentitySection};
use crate::ledger::{Ledger, LedgerKind, LedgerRecord, mission_free};
use crate::lemma::{Lemma, cluster};
use crate::memory_md::{Item, MemoryDoc, Section};
use crate::raw::{Entry, RawLine};

/// The roles that have identity files (§1).
pub(crate) const KNOWN_ROLES: &[&str] = &[
    "architect",
    "crosscheck",
    "curator",
    "debugger",
    "documenter",
    "orchestrator",
    "planner",
    "plan-reviewer",
    "product",
    "ui-qa",
    "validator",
    "worker",
];

/// What the merge decided, for truncation and the output line.
#[derive(Debug, Default)]
pub(crate) struct MergeOutcome {
    /// Indices (into the snapshot's entries) of TRICK entries promoted this pass (§2.3 step 2).
    pub(crate) promoted_entries: BTreeSet<usize>,
    /// Identity entries appended, as `(role, section, statement)`.
    pub(crate) identity_appends: Vec<(String, IdentitySection, String)>,
}

/// Context the merge needs besides the documents.
#[derive(Debug)]
pub(crate) struct MergeContext<'a> {
    /// The project file list and slug.
    pub(crate) project: &'a ProjectIndex,
    /// `YYYY-MM-DD` of this pass.
    pub(crate) date: &'a str,
    /// Mission id.
    pub(crate) mission: &'a str,
}

fn upsert(
    doc: &mut MemoryDoc,
    section: Section,
    statement: &str,
    why: Option<&str>,
    fids: &[String],
    date: &str,
) -> usize {
    let lemma = Lemma::new(statement);
    let items = doc.items_mut(section);
    match items.iter().position(|i| Lemma::new(&i.statement).same_as(&lemma)) {
        Some(n) => {
            items[n].add_evidence(fids);
            n
        }
        None => {
            items.push(Item::new(date, statement, why, fids.to_vec()));
            items.len() - 1
        }
    }
}

fn push_unique(v: &mut Vec<String>, s: &str) {
    if !v.iter().any(|x| x == s) {
        v.push(s.to_string());
    }
}

/// Identity files by role, loaded by the caller for every role that may receive an entry.
pub(crate) type Identities = BTreeMap<String, IdentityFile>;

fn append_identity(
    ids: &mut Identities,
    out: &mut MergeOutcome,
    role: &str,
    section: IdentitySection,
    entry: IdentityEntry,
) {
    let file = ids.entry(role.to_string()).or_insert_with(|| IdentityFile::seed(role));
    if file.has_lemma(section, &entry.statement) {
        return;
    }
    out.identity_appends.push((role.to_string(), section, entry.statement.clone()));
    file.append(section, &entry);
}

/// Merges the snapshot's entries into `doc` and the identity files.
pub(crate) fn merge(
    entries: &[Entry],
    doc: &mut MemoryDoc,
    ids: &mut Identities,
    ledger: &mut Ledger,
    cx: &MergeContext<'_>,
) -> MergeOutcome {
    let mut out = MergeOutcome::default();
    let lines: Vec<(usize, &RawLine)> =
        entries.iter().enumerate().filter_map(|(n, e)| e.line().map(|l| (n, l))).collect();

    promote_tricks(&lines, doc, ids, &mut out, cx);

    // Non-TRICK entries (and TRICKs from other roles, which are ordinary Lessons, §4.2).
    let mut lesson_roles: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut conventions: Vec<(String, String, String)> = Vec::new(); // role, statement, invocation
    for &(n, line) in &lines {
        if line.trick && line.role == "worker" {
            continue;
        }
        let c = if line.trick {
            Some(crate::classify::Classified {
                section: Section::Lessons,
                statement: line.text.trim().to_string(),
                why: None,
                convention: false,
            })
        } else {
            classify(&line.text)
        };
        let Some(c) = c else { continue };
        if line.trick {
            out.promoted_entries.insert(n);
        }
        let mut fids: Vec<String> = line.feature.iter().cloned().collect();
        let mut c = c;
        if c.section == Section::Lessons {
            // §6: a Lesson carries evidence. A role with no feature in scope may still name the
            // features it learned from; with none at all the statement is kept as Context.
            for f in crate::codebase::feature_ids(&c.statement) {
                push_unique(&mut fids, &f);
            }
            if fids.is_empty() {
                c.section = Section::Context;
            }
        }
        let mut statement = c.statement.clone();
        if c.section == Section::History
            && let Some(f) = line.feature.as_deref().filter(|f| !statement.contains(f))
        {
            statement = format!("{f}: {statement}");
        }
        let at = upsert(doc, c.section, &statement, c.why.as_deref(), &fids, cx.date);
        let kind = match c.section {
            Section::History => Some(LedgerKind::Failure),
            Section::Lessons if c.convention => Some(LedgerKind::Convention),
            Section::Lessons => Some(LedgerKind::Lesson),
            _ => None,
        };
        if c.section == Section::Lessons {
            let key = doc.items(Section::Lessons)[at].statement.clone();
            push_unique(lesson_roles.entry(key).or_default(), &line.role);
        }
        if c.convention {
            let invocation = line.feature.clone().unwrap_or_else(|| line.timestamp.clone());
            conventions.push((line.role.clone(), statement.clone(), invocation));
        }
        if let Some(kind) = kind {
            ledger.note(LedgerRecord {
                role: line.role.clone(),
                kind,
                lemma: mission_free(&statement),
                mission: cx.mission.to_string(),
                date: cx.date.to_string(),
                evidence: fids,
            });
        }
    }

    promote_conventions(&conventions, ids, ledger, &mut out, cx);
    promote_failures(ledger, ids, &mut out, cx);
    // A forgotten convention belongs in Context shortcuts only, not also in Patterns.
    let convention_lemmas: Vec<Lemma> = conventions.iter().map(|c| Lemma::new(&c.1)).collect();
    promote_general_lessons(doc, &lesson_roles, &convention_lemmas, ids, &mut out, cx);
    out
}

/// §4.2: worker TRICK lemmas.
fn promote_tricks(
    lines: &[(usize, &RawLine)],
    doc: &mut MemoryDoc,
    ids: &mut Identities,
    out: &mut MergeOutcome,
    cx: &MergeContext<'_>,
) {
    let tricks: Vec<(usize, &RawLine)> =
        lines.iter().copied().filter(|(_, l)| l.trick && l.role == "worker").collect();
    let lemmas: Vec<Lemma> = tricks.iter().map(|(_, l)| Lemma::new(&l.text)).collect();
    for members in cluster(&lemmas) {
        let carried = doc
            .items(Section::Lessons)
            .iter()
            .position(|i| members.iter().any(|&m| Lemma::new(&i.statement).same_as(&lemmas[m])));
        // Carried evidence first (it is older), then this pass's sightings; the most specific
        // (longest) wording among all of them names the lemma.
        let mut fids: Vec<String> = Vec::new();
        let mut wordings: Vec<&str> = Vec::new();
        if let Some(n) = carried {
            let item = &doc.items(Section::Lessons)[n];
            fids.extend(item.evidence.iter().cloned());
            wordings.push(item.statement.as_str());
        }
        for &m in &members {
            if let Some(f) = &tricks[m].1.feature {
                push_unique(&mut fids, f);
            }
            wordings.push(tricks[m].1.text.trim());
        }
        let statement =
            wordings.iter().copied().max_by_key(|t| t.len()).unwrap_or_default().to_string();
        let specific = members.iter().any(|&m| cx.project.is_codebase_specific(&tricks[m].1.text));
        if specific || fids.len() < 2 {
            match carried {
                Some(n) => {
                    doc.items_mut(Section::Lessons)[n].add_evidence(&fids);
                }
                None => {
                    doc.items_mut(Section::Lessons).push(Item::new(cx.date, &statement, None, fids))
                }
            }
        } else {
            let entry = IdentityEntry {
                date: cx.date.to_string(),
                statement: sentence(&statement),
                evidence: fids,
                missions: vec![cx.mission.to_string()],
                reconfirmed: None,
            };
            append_identity(ids, out, "worker", IdentitySection::Patterns, entry);
            // The candidate has graduated: MEMORY.md no longer carries it (§4.2).
            if let Some(n) = carried {
                doc.items_mut(Section::Lessons).remove(n);
            }
        }
        out.promoted_entries.extend(members.iter().map(|&m| tricks[m].0));
    }
}

fn sentence(s: &str) -> String {
    let s = s.trim();
    if s.ends_with(['.', '!', '?']) { s.to_string() } else { format!("{s}.") }
}

/// §4.5: a convention lemma forgotten by ≥ 2 distinct invocations of one role in this mission, or
/// in ≥ 2 missions per the ledger → that role's `## Context shortcuts`.
fn promote_conventions(
    conventions: &[(String, String, String)],
    ids: &mut Identities,
    ledger: &Ledger,
    out: &mut MergeOutcome,
    cx: &MergeContext<'_>,
) {
    let roles: BTreeSet<&str> = conventions.iter().map(|(r, _, _)| r.as_str()).collect();
    for role in roles {
        let of_role: Vec<&(String, String, String)> =
            conventions.iter().filter(|c| c.0 == role).collect();
        let lemmas: Vec<Lemma> = of_role.iter().map(|c| Lemma::new(&c.1)).collect();
        for members in cluster(&lemmas) {
            let invocations: BTreeSet<&str> =
                members.iter().map(|&m| of_role[m].2.as_str()).collect();
            let statement = mission_free(&of_role[members[0]].1);
            let missions = ledger.missions(role, LedgerKind::Convention, &statement);
            if invocations.len() >= 2 || missions.len() >= 2 {
                let entry = IdentityEntry {
                    date: cx.date.to_string(),
                    statement: sentence(&statement),
                    evidence: Vec::new(),
                    missions: Vec::new(),
                    reconfirmed: None,
                };
                append_identity(ids, out, role, IdentitySection::Shortcuts, entry);
            }
        }
    }
}

/// §4.5: a failure lemma recorded in ≥ 2 distinct missions → `## Failures I've seen`.
fn promote_failures(
    ledger: &Ledger,
    ids: &mut Identities,
    out: &mut MergeOutcome,
    cx: &MergeContext<'_>,
) {
    let fresh: Vec<LedgerRecord> = ledger
        .records
        .iter()
        .chain(ledger.added.iter())
        .filter(|r| r.kind == LedgerKind::Failure && r.mission == cx.mission)
        .cloned()
        .collect();
    for r in fresh {
        let missions = ledger.missions(&r.role, LedgerKind::Failure, &r.lemma);
        if missions.len() >= 2 {
            let entry = IdentityEntry {
                date: cx.date.to_string(),
                statement: sentence(&r.lemma),
                evidence: Vec::new(),
                missions,
                reconfirmed: None,
            };
            // Missions only render after evidence; keep them visible as the evidence itself.
            let entry =
                IdentityEntry { evidence: entry.missions.clone(), missions: Vec::new(), ..entry };
            append_identity(ids, out, &r.role, IdentitySection::Failures, entry);
        }
    }
}

/// §4.5 rule (d): a Lesson with no codebase-specific token and evidence from ≥ 2 distinct
/// features → `## Patterns I've learned` of the role(s) that wrote it (or that it names).
fn promote_general_lessons(
    doc: &MemoryDoc,
    lesson_roles: &BTreeMap<String, Vec<String>>,
    conventions: &[Lemma],
    ids: &mut Identities,
    out: &mut MergeOutcome,
    cx: &MergeContext<'_>,
) {
    for item in doc.items(Section::Lessons) {
        let fids = item.all_fids();
        if fids.len() < 2 || cx.project.is_codebase_specific(&item.statement) {
            continue;
        }
        let lemma = Lemma::new(&item.statement);
        if conventions.iter().any(|c| c.same_as(&lemma)) {
            continue;
        }
        let mut roles = lesson_roles.get(&item.statement).cloned().unwrap_or_default();
        if roles.is_empty() {
            let lower = item.statement.to_lowercase();
            roles = KNOWN_ROLES
                .iter()
                .filter(|r| {
                    lower.split(|c: char| !(c.is_alphanumeric() || c == '-')).any(|w| w == **r)
                })
                .map(|r| r.to_string())
                .collect();
        }
        for role in roles {
            let entry = IdentityEntry {
                date: cx.date.to_string(),
                statement: sentence(&item.statement),
                evidence: fids.clone(),
                missions: vec![cx.mission.to_string()],
                reconfirmed: None,
            };
            append_identity(ids, out, &role, IdentitySection::Patterns, entry);
        }
    }
}
