//! Outcome evidence: what each finished run showed about the memory it injected (issue 18 item
//! 1; ARCHITECTURE.md "Evidence and review live beside the memory, not in it").
//!
//! Trust is one number that agent-qa's arithmetic moves by fixed steps; it cannot say *why* an
//! observation stands where it does. Evidence keeps the facts behind it, per observation: how
//! often it was injected into a step that passed, into the step that failed, into a passed step
//! of a run that failed later, how ablation reruns judged those failures, and how its probation
//! injections went. Per test it keeps the baseline those rates are weighed against.
//!
//! A store records one [`RunEvidence`] per run id, **once**, inside the transaction that
//! applies the run (issue 13's exactly-once curate): it counts when that transaction commits,
//! never when it rolls back, and `undo` of the run's application retracts it with the rest
//! (undoing the undo records it again). Recording a run id whose evidence counts is a no-op, so
//! a retried curate never counts a run twice. What is recorded are the run's facts (step
//! statuses, injected and probation ids, the ablation result), not conclusions; the tally below
//! turns them into counters, so every store counts alike. Evidence lives beside the memory (the
//! journal `<root>/.curator/journal.jsonl` for the file store, tables for PostgreSQL), never in
//! the agent-qa files, which stay byte-compatible.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::store::Action;

/// One step of a run, as evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepEvidence {
    /// The step's status (`passed` and `failed` carry meaning; others are not counted).
    pub status: String,
    /// Ids injected into the step (the probation id among them), each counted once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub injected: Vec<String>,
    /// The id injected on probation into this step, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probation: Option<String>,
}

/// What one finished run showed: the unit a store records once per `run_id`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunEvidence {
    pub run_id: String,
    /// ISO time the run was curated.
    pub time: String,
    /// The test id (the baseline's key).
    pub test: String,
    /// `passed`, `failed` or `cancelled`.
    pub status: String,
    /// The ablation rerun's status (`passed` / `failed`) when the run had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ablation: Option<String>,
    pub steps: Vec<StepEvidence>,
}

/// The counters of one observation. "Doomed" injections are those followed by a failure in the
/// same run: into the failed step itself, or into a passed step before it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Evidence {
    /// Runs it was injected into.
    pub runs: u64,
    /// Injections into steps that passed, with no failure later in the run.
    pub passed: u64,
    /// Injections into a step that failed.
    pub failed: u64,
    /// Injections into a passed step of a run that failed later.
    pub before_failure: u64,
    /// Of those, injections into the step right before the failed one (where memory that
    /// misleads a step but shows only in the next one is found).
    pub just_before: u64,
    /// Failed runs whose rerun without memory passed, while it was injected at or before the
    /// failure (memory proven the cause; whether *this* observation was blamed is the policy's
    /// call, in the journal).
    pub ablation_blamed: u64,
    /// Failed runs whose rerun without memory failed too (memory not the cause).
    pub ablation_cleared: u64,
    /// Probation injections into a step that passed with no failure later.
    pub probation_passed: u64,
    /// Probation injections followed by a failure in the run.
    pub probation_failed: u64,
}

impl Evidence {
    /// Injections with a counted outcome.
    pub fn injections(&self) -> u64 {
        self.passed + self.failed + self.before_failure
    }

    /// Injections followed by a failure in the same run.
    pub fn doomed(&self) -> u64 {
        self.failed + self.before_failure
    }

    /// Whether nothing was ever counted.
    pub fn is_empty(&self) -> bool {
        *self == Evidence::default()
    }

    fn add(&mut self, o: &Evidence) {
        self.runs += o.runs;
        self.passed += o.passed;
        self.failed += o.failed;
        self.before_failure += o.before_failure;
        self.just_before += o.just_before;
        self.ablation_blamed += o.ablation_blamed;
        self.ablation_cleared += o.ablation_cleared;
        self.probation_passed += o.probation_passed;
        self.probation_failed += o.probation_failed;
    }

    /// These counters without `o`'s (saturating): the record before one run.
    pub fn minus(&self, o: &Evidence) -> Evidence {
        Evidence {
            runs: self.runs.saturating_sub(o.runs),
            passed: self.passed.saturating_sub(o.passed),
            failed: self.failed.saturating_sub(o.failed),
            before_failure: self.before_failure.saturating_sub(o.before_failure),
            just_before: self.just_before.saturating_sub(o.just_before),
            ablation_blamed: self.ablation_blamed.saturating_sub(o.ablation_blamed),
            ablation_cleared: self.ablation_cleared.saturating_sub(o.ablation_cleared),
            probation_passed: self.probation_passed.saturating_sub(o.probation_passed),
            probation_failed: self.probation_failed.saturating_sub(o.probation_failed),
        }
    }
}

/// The counters of one test: what its steps do with and without memory.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Baseline {
    pub runs: u64,
    pub runs_failed: u64,
    /// Steps with a counted outcome.
    pub steps: u64,
    /// Steps that failed.
    pub steps_failed: u64,
    /// Steps that failed or passed before a failure of their run.
    pub steps_doomed: u64,
    /// Passed steps right before the failed step of their run.
    pub steps_just_before: u64,
    /// Steps into which nothing was injected (the test without memory), how many of them
    /// failed, and how many failed or passed before a failure.
    pub bare_steps: u64,
    pub bare_failed: u64,
    pub bare_doomed: u64,
    /// Ablation reruns (runs without memory) and how many failed.
    pub ablation_runs: u64,
    pub ablation_failed: u64,
}

impl Baseline {
    fn add(&mut self, o: &Baseline) {
        self.runs += o.runs;
        self.runs_failed += o.runs_failed;
        self.steps += o.steps;
        self.steps_failed += o.steps_failed;
        self.steps_doomed += o.steps_doomed;
        self.steps_just_before += o.steps_just_before;
        self.bare_steps += o.bare_steps;
        self.bare_failed += o.bare_failed;
        self.bare_doomed += o.bare_doomed;
        self.ablation_runs += o.ablation_runs;
        self.ablation_failed += o.ablation_failed;
    }

    /// These counters without `o`'s (saturating).
    pub fn minus(&self, o: &Baseline) -> Baseline {
        Baseline {
            runs: self.runs.saturating_sub(o.runs),
            runs_failed: self.runs_failed.saturating_sub(o.runs_failed),
            steps: self.steps.saturating_sub(o.steps),
            steps_failed: self.steps_failed.saturating_sub(o.steps_failed),
            steps_doomed: self.steps_doomed.saturating_sub(o.steps_doomed),
            steps_just_before: self.steps_just_before.saturating_sub(o.steps_just_before),
            bare_steps: self.bare_steps.saturating_sub(o.bare_steps),
            bare_failed: self.bare_failed.saturating_sub(o.bare_failed),
            bare_doomed: self.bare_doomed.saturating_sub(o.bare_doomed),
            ablation_runs: self.ablation_runs.saturating_sub(o.ablation_runs),
            ablation_failed: self.ablation_failed.saturating_sub(o.ablation_failed),
        }
    }
}

/// One run's contribution to the counters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    pub observations: BTreeMap<String, Evidence>,
    pub baseline: Baseline,
}

/// How a counted step ended, for the memory injected into it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StepOutcome {
    Passed,
    Failed,
    BeforeFailure,
}

impl RunEvidence {
    /// The index of the step where the run failed: its first failed step, or one past the last
    /// step for a failed run none of whose steps failed (a failure after the steps, such as a
    /// teardown); `None` for a run without failure.
    pub fn failure_at(&self) -> Option<usize> {
        match self.steps.iter().position(|s| s.status == "failed") {
            Some(i) => Some(i),
            None if self.status == "failed" => Some(self.steps.len()),
            None => None,
        }
    }

    fn outcome(&self, i: usize, failure_at: Option<usize>) -> Option<StepOutcome> {
        match self.steps[i].status.as_str() {
            "failed" => Some(StepOutcome::Failed),
            "passed" if failure_at.is_some_and(|f| i < f) => Some(StepOutcome::BeforeFailure),
            "passed" => Some(StepOutcome::Passed),
            _ => None,
        }
    }

    /// What this run adds to the counters of its observations and its test.
    pub fn tally(&self) -> Tally {
        let mut t = Tally::default();
        let failure_at = self.failure_at();
        let mut seen_in_run = BTreeSet::new();
        let mut implicated = BTreeSet::new();
        for (i, step) in self.steps.iter().enumerate() {
            let outcome = self.outcome(i, failure_at);
            let mut ids: Vec<&String> = Vec::new();
            for id in &step.injected {
                if !ids.contains(&id) {
                    ids.push(id);
                }
            }
            if let Some(outcome) = outcome {
                t.baseline.steps += 1;
                let failed = outcome == StepOutcome::Failed;
                let doomed = outcome != StepOutcome::Passed;
                let just_before =
                    outcome == StepOutcome::BeforeFailure && failure_at == Some(i + 1);
                t.baseline.steps_failed += u64::from(failed);
                t.baseline.steps_doomed += u64::from(doomed);
                t.baseline.steps_just_before += u64::from(just_before);
                if ids.is_empty() {
                    t.baseline.bare_steps += 1;
                    t.baseline.bare_failed += u64::from(failed);
                    t.baseline.bare_doomed += u64::from(doomed);
                }
                for id in &ids {
                    let e = t.observations.entry((*id).clone()).or_default();
                    match outcome {
                        StepOutcome::Passed => e.passed += 1,
                        StepOutcome::Failed => e.failed += 1,
                        StepOutcome::BeforeFailure => {
                            e.before_failure += 1;
                            e.just_before += u64::from(just_before);
                        }
                    }
                }
                if let Some(p) = &step.probation {
                    let e = t.observations.entry(p.clone()).or_default();
                    match outcome {
                        StepOutcome::Passed => e.probation_passed += 1,
                        StepOutcome::Failed | StepOutcome::BeforeFailure => {
                            e.probation_failed += 1;
                        }
                    }
                }
            }
            for id in ids {
                if seen_in_run.insert(id.clone()) {
                    t.observations.entry(id.clone()).or_default().runs += 1;
                }
                if failure_at.is_some_and(|f| i <= f) {
                    implicated.insert(id.clone());
                }
            }
        }
        t.baseline.runs = 1;
        t.baseline.runs_failed = u64::from(self.status == "failed");
        if self.status == "failed"
            && let Some(ablation) = self.ablation.as_deref()
        {
            t.baseline.ablation_runs = 1;
            t.baseline.ablation_failed = u64::from(ablation == "failed");
            for id in implicated {
                let e = t.observations.entry(id).or_default();
                match ablation {
                    "passed" => e.ablation_blamed += 1,
                    _ => e.ablation_cleared += 1,
                }
            }
        }
        t
    }
}

/// Which evidence to read: observations by id and tests by id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EvidenceQuery {
    pub ids: Vec<String>,
    pub tests: Vec<String>,
}

/// The evidence asked for: every asked id and test, zero counters when nothing was recorded.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EvidenceView {
    pub observations: BTreeMap<String, Evidence>,
    pub tests: BTreeMap<String, Baseline>,
}

impl EvidenceView {
    /// The record of `id` (zeros when none).
    pub fn of(&self, id: &str) -> Evidence {
        self.observations.get(id).copied().unwrap_or_default()
    }

    /// The baseline of `test` (zeros when none).
    pub fn baseline(&self, test: &str) -> Baseline {
        self.tests.get(test).copied().unwrap_or_default()
    }
}

/// Every run whose evidence counts, folded into counters: how a store that keeps runs in its
/// journal (the file store) answers [`EvidenceQuery`]s.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EvidenceBook {
    /// Run ids that count (the exactly-once check).
    pub runs: BTreeSet<String>,
    pub observations: BTreeMap<String, Evidence>,
    pub tests: BTreeMap<String, Baseline>,
}

impl EvidenceBook {
    /// Whether `run_id`'s evidence counts.
    pub fn contains(&self, run_id: &str) -> bool {
        self.runs.contains(run_id)
    }

    /// Folds `run` in; `false` (nothing counted) when its run id already counts.
    pub fn add(&mut self, run: &RunEvidence) -> bool {
        if !self.runs.insert(run.run_id.clone()) {
            return false;
        }
        let tally = run.tally();
        for (id, e) in &tally.observations {
            self.observations.entry(id.clone()).or_default().add(e);
        }
        self.tests.entry(run.test.clone()).or_default().add(&tally.baseline);
        true
    }

    /// Takes `run` out again; `false` (nothing changed) when it did not count.
    pub fn retract(&mut self, run: &RunEvidence) -> bool {
        if !self.runs.remove(&run.run_id) {
            return false;
        }
        let tally = run.tally();
        for (id, e) in &tally.observations {
            if let Some(have) = self.observations.get_mut(id) {
                *have = have.minus(e);
            }
        }
        if let Some(have) = self.tests.get_mut(&run.test) {
            *have = have.minus(&tally.baseline);
        }
        true
    }

    /// Applies one journaled evidence change: [`Action::Evidence`] adds, [`Action::Retract`]
    /// takes out; other actions change nothing. Returns whether anything changed.
    pub fn apply(&mut self, action: Action, run: &RunEvidence) -> bool {
        match action {
            Action::Evidence => self.add(run),
            Action::Retract => self.retract(run),
            _ => false,
        }
    }

    /// The asked part.
    pub fn view(&self, query: &EvidenceQuery) -> EvidenceView {
        EvidenceView {
            observations: query
                .ids
                .iter()
                .map(|id| (id.clone(), self.observations.get(id).copied().unwrap_or_default()))
                .collect(),
            tests: query
                .tests
                .iter()
                .map(|t| (t.clone(), self.tests.get(t).copied().unwrap_or_default()))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(status: &str, injected: &[&str], probation: Option<&str>) -> StepEvidence {
        StepEvidence {
            status: status.into(),
            injected: injected.iter().map(|s| (*s).to_owned()).collect(),
            probation: probation.map(Into::into),
        }
    }

    fn run(
        id: &str,
        status: &str,
        ablation: Option<&str>,
        steps: Vec<StepEvidence>,
    ) -> RunEvidence {
        RunEvidence {
            run_id: id.into(),
            time: "2026-04-10T12:00:00.000Z".into(),
            test: "t_x".into(),
            status: status.into(),
            ablation: ablation.map(Into::into),
            steps,
        }
    }

    #[test]
    fn a_failed_run_counts_failed_before_failure_and_ablation_per_observation() {
        let r = run(
            "r1",
            "failed",
            Some("passed"),
            vec![
                step("passed", &["a", "b", "a"], None),
                step("failed", &["b", "p"], Some("p")),
                step("skipped", &["c"], None),
            ],
        );
        let t = r.tally();
        let a = t.observations["a"];
        assert_eq!((a.runs, a.before_failure, a.failed, a.passed), (1, 1, 0, 0), "counted once");
        let b = t.observations["b"];
        assert_eq!((b.runs, b.before_failure, b.failed), (1, 1, 1));
        assert_eq!((b.ablation_blamed, a.ablation_blamed), (1, 1), "once per run");
        let p = t.observations["p"];
        assert_eq!((p.failed, p.probation_failed, p.ablation_blamed), (1, 1, 1));
        let c = t.observations["c"];
        assert_eq!((c.runs, c.injections(), c.ablation_blamed), (1, 0, 0), "after the failure");
        assert_eq!((t.baseline.steps, t.baseline.steps_doomed, t.baseline.bare_steps), (2, 2, 0));
        assert_eq!((t.baseline.ablation_runs, t.baseline.ablation_failed), (1, 0));
    }

    #[test]
    fn a_passed_run_counts_passes_and_probation_passes() {
        let r = run(
            "r1",
            "passed",
            None,
            vec![step("passed", &["a", "p"], Some("p")), step("passed", &[], None)],
        );
        let t = r.tally();
        assert_eq!(t.observations["a"].passed, 1);
        assert_eq!(t.observations["p"].probation_passed, 1);
        assert_eq!((t.baseline.steps, t.baseline.steps_doomed, t.baseline.bare_steps), (2, 0, 1));
        assert_eq!(t.baseline.runs_failed, 0);
    }

    #[test]
    fn a_failure_after_the_last_step_dooms_every_step_and_ablation_failed_clears() {
        let r = run("r1", "failed", Some("failed"), vec![step("passed", &["a"], None)]);
        let t = r.tally();
        assert_eq!(t.observations["a"].before_failure, 1);
        assert_eq!(
            (t.observations["a"].ablation_cleared, t.observations["a"].ablation_blamed),
            (1, 0)
        );
    }

    #[test]
    fn a_book_counts_each_run_id_once() {
        let mut book = EvidenceBook::default();
        let r = run("r1", "passed", None, vec![step("passed", &["a"], None)]);
        assert!(book.add(&r));
        assert!(!book.add(&r), "a retried run is not counted again");
        let view = book
            .view(&EvidenceQuery { ids: vec!["a".into(), "z".into()], tests: vec!["t_x".into()] });
        assert_eq!(view.of("a").passed, 1);
        assert!(view.of("z").is_empty());
        assert_eq!(view.baseline("t_x").runs, 1);
        assert_eq!(view.of("a").minus(&r.tally().observations["a"]), Evidence::default());
        assert!(book.retract(&r), "undo takes it out");
        assert!(!book.retract(&r));
        let view = book.view(&EvidenceQuery { ids: vec!["a".into()], tests: vec!["t_x".into()] });
        assert!(view.of("a").is_empty() && view.baseline("t_x") == Baseline::default());
        assert!(book.apply(Action::Evidence, &r), "recorded again after the undo");
    }
}
