//! Triage: the deterministic merge of pending findings into issues.json (harness-curator §3.3).
//!
//! Reproduced exactly: dedupe against the FIRST live issue (newest first) sharing the exact code
//! pointer or a title token Jaccard ≥ 0.85; a duplicate bumps attempts, gains a note and may only
//! raise severity; a new issue goes to the front, so a later record of the same batch can dedupe
//! against it. The pointer comparison stays exact on purpose (spec §10.10): `a.ts:23` and
//! `a.ts:35` are different pointers.

use std::collections::BTreeSet;

use super::pending::PendingIssue;
use serde_json::{Map, Value};

use super::store::{Issue, IssueFile, Note, Status};

/// What one triage did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TriageCounts {
    /// New issues created.
    pub merged: usize,
    /// Pending records folded into an existing issue.
    pub deduped: usize,
    /// Queue lines that hold no record (§3.1 skips them), kept in the archive.
    pub skipped: usize,
}

/// Title tokens: lowercase, split on `[^a-z0-9]+`, tokens longer than 2.
pub fn title_tokens(s: &str) -> BTreeSet<String> {
    s.to_lowercase()
        .split(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit()))
        .filter(|t| t.len() > 2)
        .map(str::to_string)
        .collect()
}

/// |A∩B| / |A∪B|, and 0 when either set is empty.
pub fn jaccard(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f64 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let inter = a.intersection(b).count();
    inter as f64 / (a.len() + b.len() - inter) as f64
}

fn same_pointer(p: Option<&str>, e: Option<&str>) -> bool {
    matches!((p, e), (Some(p), Some(e)) if p == e)
}

/// Longest piece of a duplicate's fields kept on the note.
const NOTE_FIELD_MAX: usize = 1000;

/// The note a duplicate leaves on the issue it folds into. Its `by` and `text` are §3.3's,
/// exactly; what the duplicate brought (a different title, evidence, repro, fix, pointer, the
/// role that filed it) is kept beside them under `resurfaced`, so merging never drops the new
/// finding's evidence (issue 16) and a reader of the spec's three keys sees the spec's note.
fn resurfaced_note(p: &PendingIssue, existing_title: &str, now: &str) -> Note {
    let text = format!("Resurfaced during {}", p.found_during.as_deref().unwrap_or("validation"));
    let fields = [
        ("title", Some(&p.title).filter(|t| t.as_str() != existing_title)),
        ("evidence", p.evidence.as_ref()),
        ("repro", p.repro.as_ref()),
        ("suggestedFix", p.suggested_fix.as_ref()),
        ("codePointer", p.code_pointer.as_ref()),
        ("source", p.source.as_ref()),
    ];
    let mut brought = Map::new();
    for (name, value) in fields {
        if let Some(v) = value.filter(|v| !v.trim().is_empty()) {
            let v = crate::bounds::cap_chars(v.trim(), NOTE_FIELD_MAX);
            brought.insert(name.to_string(), Value::String(v));
        }
    }
    let mut extra = Map::new();
    if !brought.is_empty() {
        extra.insert("resurfaced".to_string(), Value::Object(brought));
    }
    Note { ts: now.to_string(), by: "validator".to_string(), text, extra }
}

/// Whether two title token sets reach §3.3's Jaccard 0.85. Sets whose sizes alone keep them
/// under it (|A∩B| ≤ min, |A∪B| ≥ max) are not intersected.
fn similar(a: &BTreeSet<String>, b: &BTreeSet<String>) -> bool {
    let (small, large) = if a.len() <= b.len() { (a.len(), b.len()) } else { (b.len(), a.len()) };
    small > 0 && small as f64 >= 0.85 * large as f64 && jaccard(a, b) >= 0.85
}

/// Merges `pending` (file order) into `file`; `now` stamps notes.
///
/// Each title is tokenized once, and the new issues are kept apart (searched newest first,
/// before the file's) until the end, where they go to the front: tokenizing every issue again
/// for every record, and inserting at the front of the list, made a batch of 2,000 findings take
/// 17 s while writers of new findings waited on the queue's lock.
pub fn triage(file: &mut IssueFile, pending: &[PendingIssue], now: &str) -> TriageCounts {
    let mut counts = TriageCounts::default();
    let tokens: Vec<BTreeSet<String>> =
        file.issues.iter().map(|e| title_tokens(&e.title)).collect();
    // New issues of this batch, oldest first, with their title tokens.
    let mut fresh: Vec<(Issue, BTreeSet<String>)> = Vec::new();
    for p in pending {
        let ptok = title_tokens(&p.title);
        let p_pointer = p.code_pointer.as_deref().filter(|s| !s.is_empty());
        let is_dup = |e: &Issue, etok: &BTreeSet<String>| {
            e.status.is_live()
                && (same_pointer(p_pointer, e.code_pointer.as_deref().filter(|s| !s.is_empty()))
                    || similar(&ptok, etok))
        };
        let dup = match fresh.iter().rposition(|(e, t)| is_dup(e, t)) {
            Some(i) => Some(&mut fresh[i].0),
            None => file.issues.iter_mut().zip(&tokens).find(|(e, t)| is_dup(e, t)).map(|(e, _)| e),
        };
        if let Some(dup) = dup {
            dup.attempts += 1;
            dup.notes.push(resurfaced_note(p, &dup.title, now));
            if p.severity > dup.severity {
                dup.severity = p.severity;
            }
            counts.deduped += 1;
        } else {
            let id = file.allocate_id();
            let issue = Issue {
                id,
                title: p.title.clone(),
                severity: p.severity,
                // §3.3 files every new issue as the validator's; the role that filed it, when
                // another, is kept beside it.
                source: "validator".to_string(),
                found_at: p.found_at.clone(),
                found_during: p.found_during.clone(),
                status: Status::Open,
                repro: p.repro.clone(),
                evidence: p.evidence.clone(),
                suggested_fix: p.suggested_fix.clone(),
                code_pointer: p.code_pointer.clone(),
                linked_feature_id: None,
                attempts: 0,
                notes: Vec::new(),
                extra: p
                    .source
                    .as_ref()
                    .filter(|s| s.as_str() != "validator")
                    .map(|s| Map::from_iter([("filedBy".to_string(), Value::String(s.clone()))]))
                    .unwrap_or_default(),
            };
            fresh.push((issue, ptok));
            counts.merged += 1;
        }
    }
    let mut issues: Vec<Issue> = fresh.into_iter().rev().map(|(issue, _)| issue).collect();
    issues.append(&mut file.issues);
    file.issues = issues;
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jaccard_edges() {
        let a = title_tokens("Login button is broken on Safari");
        assert_eq!(a.len(), 4, "{a:?}"); // 'is' and 'on' are too short
        assert_eq!(jaccard(&a, &BTreeSet::new()), 0.0);
        assert_eq!(jaccard(&a, &a), 1.0);
    }
}
