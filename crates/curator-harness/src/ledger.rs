//! The cross-mission ledger `$ID/.ledger.jsonl` (harness-curator §4.5).
//!
//! MEMORY.md is mission-scoped, so "a failure mode that recurred across missions" needs memory the
//! curator otherwise lacks. Each pass appends one record per (role, kind, lemma, mission) it has
//! not recorded before — so re-running a pass appends nothing — and a lemma seen in two distinct
//! missions qualifies for the role's identity file.

use serde::{Deserialize, Serialize};

use crate::codebase::feature_ids;
use crate::lemma::Lemma;

/// What kind of knowledge a record carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum LedgerKind {
    /// A History failure/escalation.
    Failure,
    /// A forgotten tool/command convention.
    Convention,
    /// A Lesson.
    Lesson,
}

/// One ledger line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct LedgerRecord {
    /// The role it concerns.
    pub(crate) role: String,
    /// The kind.
    pub(crate) kind: LedgerKind,
    /// The statement with feature ids removed (they differ between missions).
    pub(crate) lemma: String,
    /// Mission id (`<slug>@<start>`).
    pub(crate) mission: String,
    /// `YYYY-MM-DD`.
    pub(crate) date: String,
    /// Evidence feature ids.
    #[serde(default)]
    pub(crate) evidence: Vec<String>,
}

/// Strips feature ids and the punctuation they leave, so the same failure in two missions (with
/// different feature numbers) reduces to the same lemma.
pub(crate) fn mission_free(statement: &str) -> String {
    let mut s = statement.to_string();
    for f in feature_ids(statement) {
        s = s.replace(&f, " ");
    }
    s.split_whitespace()
        .filter(|w| !w.chars().all(|c| matches!(c, ':' | '-' | ',' | '—')))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The ledger's records, each with its lemma reduced once (a ledger grows by a few hundred
/// records per mission; every pass compares its items against it).
#[derive(Debug, Clone, Default)]
pub(crate) struct Ledger {
    /// Records already on disk.
    pub(crate) records: Vec<LedgerRecord>,
    /// Records added this pass, to append.
    pub(crate) added: Vec<LedgerRecord>,
    lemmas: Vec<Lemma>,
}

impl Ledger {
    /// Parses the JSONL text; a bad line is skipped (the ledger is advisory).
    pub(crate) fn parse(text: &str) -> Ledger {
        let records: Vec<LedgerRecord> =
            text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
        let lemmas = records.iter().map(|r| Lemma::new(&r.lemma)).collect();
        Ledger { records, added: Vec::new(), lemmas }
    }

    fn all(&self) -> impl Iterator<Item = (&LedgerRecord, &Lemma)> {
        self.records.iter().chain(self.added.iter()).zip(self.lemmas.iter())
    }

    /// Records `r` unless the same role/kind/mission already holds a same-lemma record.
    pub(crate) fn note(&mut self, r: LedgerRecord) {
        let lemma = Lemma::new(&r.lemma);
        let known = self.all().any(|(e, l)| {
            e.role == r.role && e.kind == r.kind && e.mission == r.mission && l.same_as(&lemma)
        });
        if !known {
            self.added.push(r);
            self.lemmas.push(lemma);
        }
    }

    /// Distinct missions in which `role` recorded a same-lemma record of `kind`.
    pub(crate) fn missions(&self, role: &str, kind: LedgerKind, statement: &str) -> Vec<String> {
        let lemma = Lemma::new(statement);
        let mut out: Vec<String> = Vec::new();
        for (e, l) in self.all() {
            if e.role == role && e.kind == kind && !out.contains(&e.mission) && l.same_as(&lemma) {
                out.push(e.mission.clone());
            }
        }
        out
    }

    /// Records (on disk and added) of one mission and kind.
    pub(crate) fn records_of(&self, mission: &str, kind: LedgerKind) -> Vec<LedgerRecord> {
        self.all()
            .map(|(r, _)| r)
            .filter(|r| r.kind == kind && r.mission == mission)
            .cloned()
            .collect()
    }

    /// The JSONL lines to append.
    pub(crate) fn added_lines(&self) -> String {
        self.added
            .iter()
            .map(|r| serde_json::to_string(r).expect("ledger record serializes") + "\n")
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feature_ids_do_not_split_a_lemma_across_missions() {
        assert_eq!(mission_free("F-003: escalated after 5 attempts"), "escalated after 5 attempts");
        let mut l = Ledger::default();
        let rec = |m: &str, s: &str| LedgerRecord {
            role: "worker".into(),
            kind: LedgerKind::Failure,
            lemma: mission_free(s),
            mission: m.into(),
            date: "2026-01-01".into(),
            evidence: vec![],
        };
        l.note(rec("a@1", "F-003: auth tests time out on CI runners"));
        l.note(rec("a@1", "F-004: auth tests time out on CI runners"));
        assert_eq!(l.added.len(), 1);
        l.note(rec("b@2", "F-010: auth tests time out on CI runners"));
        assert_eq!(
            l.missions("worker", LedgerKind::Failure, "auth tests time out on CI runners").len(),
            2
        );
    }
}
