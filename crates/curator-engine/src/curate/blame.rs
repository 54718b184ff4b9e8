//! Selective blame: which of the observations injected at or before a failure the evidence
//! implicates, once an ablation rerun has proven that memory caused it (issue 18 item 2;
//! agent-qa-memory §8, §11.4–§11.5).
//!
//! agent-qa blames the first failed step's injections whatever the rerun showed; curator used
//! to blame everything injected when the rerun passed, which also drags down the helpful
//! observations that happened to be injected into the same run. Here each suspect is weighed by
//! its own record against the test's baseline, with a small explicit model:
//!
//! * the baseline is the test's own record: of its steps, the share that failed, the share
//!   that passed right before the failed step, and the share that passed earlier in a run that
//!   failed later, smoothed toward 10 %, 10 % and 10 % while few steps are on record. (Steps
//!   without memory would be the cleaner comparison on paper, but an injection shares its step
//!   with the other memory injected there; against steps without memory, a helpful observation
//!   that keeps company with a misleading one looks guilty.)
//! * a harmless observation's injections end like those steps; a misleading one misleads the
//!   agent [`MISLEAD_RATE`] of the times it is injected, failing that step or the next one
//!   (half each), and otherwise ends like a harmless one. Every observation starts as misleading
//!   with probability [`PRIOR_MISLEADING`];
//! * its record turns that prior into `P(misleading)` by Bayes' rule: a step that failed with
//!   it, or failed right after it, counts against it; a pass, or a pass long before a later
//!   failure (it had its chance to mislead and did not), counts for it;
//! * this run adds one more outcome per suspect — the failed step, or a passed step before it
//!   — and this failure says "at least one suspect misled, unless the rerun passed by luck"
//!   ([`RERUN_FLUKE`]); conditioning on both gives each suspect's share of the blame. A suspect
//!   injected into the failed step itself carries more of it than one injected earlier.
//!
//! A suspect is **blamed** when, given all that, it more likely misled than not (share at
//! least [`BLAME_SHARE`]): a lone suspect with no record is blamed, as agent-qa would blame it;
//! so are two newcomers in the failed step, since one of them must have done it; one with a
//! strong passing record is spared; and next to a suspect whose record already condemns it, a
//! newcomer is spared. A blamed suspect is contradicted once, or, when a failure had followed
//! it before and its own record with this failure makes it likely misleading ([`SINK_AT`]), it
//! **sinks**: it is contradicted until one more passed step would not make it injectable again
//! (trust + the confirm delta below minTrust). That is the weight of the evidence, applied with
//! agent-qa's arithmetic (each contradiction is one `trustContradictDelta`): memory that misled
//! twice is no longer injected whatever trust it had earned in between (0.5 → 0.4 → 0.2, and
//! 0.6 → 0.5 → 0.4 → 0.3 → 0.2, with the default deltas), and only probation can bring it
//! back, one passed injection at a time. Every verdict comes with the sentence the journal
//! keeps.
//!
//! The constants were chosen on the policy simulation's tuning seeds and are reported on its
//! held-out seeds (`tests/curate_policy_sim.rs`, BENCHMARKS.md).

use curator_store::evidence::{Baseline, Evidence};

/// The chance an observation misleads before anything is known about it.
pub(crate) const PRIOR_MISLEADING: f64 = 0.2;

/// How often a misleading observation misleads the agent when it is injected.
pub(crate) const MISLEAD_RATE: f64 = 0.7;

/// The chance an ablation rerun passes although memory did not cause the failure (a transient
/// failure that did not repeat).
pub(crate) const RERUN_FLUKE: f64 = 0.1;

/// `P(misleading)` with this failure from which a repeat suspect sinks below minTrust.
///
/// Chosen on the policy simulation's tuning seeds (default policy, `tests/curate_policy_sim.rs`
/// `tuning`), as (median failed runs a misleading observation causes before it is no longer
/// injected, misleading never disarmed, most helpful not injectable at once): 0.4 → (2.0,
/// 0/70, 4); 0.45 → (2.0, 1/70, 4); 0.5 → (2.0, 1/70, 5); 0.55 → (3.0, 1/70, 4); 0.6 → (3.0,
/// 0/70, 3); the rule it replaces (contradicted twice from 0.5) gave (3.0, 1/70, 3). Also
/// tried there and not kept: sinking only a suspect the failure singles out (its share of the
/// blame at least 0.6–0.9: median 2.0–3.0, most lost at once 2–4, no better together),
/// sinking only to just below minTrust (one pass re-arms: at 0.5, 2 of 70 misleading left
/// armed, 5 lost at once), and re-arming on a clean probation record (no change: 4 lost at
/// once). Sinking at most one suspect per failure (the one that alone caused it with
/// probability at least 0.5, under a single-cause model) gave (2.0, 0/70, 3) there, but the
/// held-out seeds disagreed: 301–310 (3.0, 1/100, 4) against this rule's (2.0, 1/100, 6), and
/// 201–210 (3.0, 0/100, 2) against (2.0, 0/100, 4): it trades the median for fewer lost at
/// once, and was not kept (BENCHMARKS.md).
pub(crate) const SINK_AT: f64 = 0.4;

/// The share of the blame (`P(misleading)` given every record and this failure) at which a
/// suspect is contradicted.
pub(crate) const BLAME_SHARE: f64 = 0.5;

/// The baseline used while the test has few steps on record, and how many steps it weighs.
const PRIOR_FAILED: f64 = 0.1;
const PRIOR_JUST_BEFORE: f64 = 0.1;
const PRIOR_STEPS: f64 = 20.0;

/// How a step into which an observation was injected ends, for a harmless and for a
/// misleading observation, in one test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Model {
    /// Harmless: the step fails.
    pub(crate) failed: f64,
    /// Harmless: the step passes and the next one fails.
    pub(crate) just_before: f64,
}

impl Model {
    pub(crate) fn for_baseline(baseline: &Baseline) -> Model {
        let n = baseline.steps as f64 + PRIOR_STEPS;
        let failed = (baseline.steps_failed as f64 + PRIOR_FAILED * PRIOR_STEPS) / n;
        let just_before = (baseline.steps_just_before as f64 + PRIOR_JUST_BEFORE * PRIOR_STEPS) / n;
        let failed = failed.clamp(0.01, 0.9);
        Model { failed, just_before: just_before.clamp(0.01, 0.98 - failed) }
    }

    /// How much likelier an injection ending in a failed step is for a misleading observation.
    fn lr_failed(&self) -> f64 {
        (MISLEAD_RATE / 2.0 + (1.0 - MISLEAD_RATE) * self.failed) / self.failed
    }

    /// The same for a passed step right before the failed one.
    fn lr_just_before(&self) -> f64 {
        (MISLEAD_RATE / 2.0 + (1.0 - MISLEAD_RATE) * self.just_before) / self.just_before
    }

    /// `P(misleading)` of an observation with record `e`.
    pub(crate) fn p_misleading(&self, e: &Evidence) -> f64 {
        let just_before = e.just_before.min(e.before_failure);
        let cleared = e.passed + (e.before_failure - just_before);
        let log_lr = e.failed as f64 * self.lr_failed().ln()
            + just_before as f64 * self.lr_just_before().ln()
            + cleared as f64 * (1.0 - MISLEAD_RATE).ln();
        let prior_odds = PRIOR_MISLEADING / (1.0 - PRIOR_MISLEADING);
        let odds = prior_odds * log_lr.exp();
        if odds.is_infinite() { 1.0 } else { odds / (1.0 + odds) }
    }
}

/// One observation injected at or before a failure.
#[derive(Debug, Clone)]
pub(crate) struct Suspect {
    pub(crate) id: String,
    /// Its record before this run.
    pub(crate) prior: Evidence,
    /// How close to the failure it was injected: into the failed step itself, into the step
    /// right before it, or only earlier.
    pub(crate) closest: Closest,
}

/// Where a suspect's injection closest to the failure was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Closest {
    Earlier,
    JustBefore,
    FailedStep,
}

impl Suspect {
    /// Its record with this failure counted once, as its closest injection.
    fn with_failure(&self) -> Evidence {
        let mut e = self.prior;
        match self.closest {
            Closest::FailedStep => e.failed += 1,
            Closest::JustBefore => {
                e.before_failure += 1;
                e.just_before += 1;
            }
            Closest::Earlier => e.before_failure += 1,
        }
        e
    }
}

/// What the evidence says about one suspect.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Verdict {
    pub(crate) id: String,
    pub(crate) blamed: bool,
    /// When blamed: contradicted until one passed step would not make it injectable again,
    /// because its own record condemns it (else contradicted once).
    pub(crate) sink: bool,
    /// Its share of the blame for this failure.
    pub(crate) share: f64,
    /// The sentence for the journal.
    pub(crate) why: String,
}

fn pct(x: f64) -> String {
    format!("{:.0} %", x * 100.0)
}

/// Judges every suspect of one failure that an ablation rerun blamed on memory.
pub(crate) fn judge(model: &Model, suspects: &[Suspect]) -> Vec<Verdict> {
    // This failure counts once per suspect, however often the run injected it.
    let owns: Vec<f64> = suspects.iter().map(|s| model.p_misleading(&s.with_failure())).collect();
    let none_misled: f64 = owns.iter().map(|p| 1.0 - p).product();
    let evidence_of_failure = (1.0 - none_misled) + none_misled * RERUN_FLUKE;
    suspects
        .iter()
        .zip(&owns)
        .map(|(s, &own)| {
            let share = (own / evidence_of_failure).min(1.0);
            let blamed = share >= BLAME_SHARE;
            // Only on a repeat: one failure alone never sinks.
            let sink = blamed && s.prior.doomed() > 0 && own >= SINK_AT;
            let record = if s.prior.injections() == 0 {
                "no record before this run".to_owned()
            } else {
                format!(
                    "before this run {} of its {} injections were into a failed step and {} \
                     into the step right before one",
                    s.prior.failed,
                    s.prior.injections(),
                    s.prior.just_before
                )
            };
            let decision = match (blamed, sink) {
                (false, _) => "spared".to_owned(),
                (true, false) => "blamed".to_owned(),
                (true, true) => format!(
                    "blamed until no longer injected (with this failure its record makes it \
                     misleading at {})",
                    pct(own)
                ),
            };
            let why = format!(
                "{record}, against the test's steps ({} failed, {} right before a failure): \
                 share of the blame {} → {decision}",
                pct(model.failed),
                pct(model.just_before),
                pct(share)
            );
            Verdict { id: s.id.clone(), blamed, sink, share, why }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(failed: u64, passed: u64) -> Evidence {
        Evidence { failed, passed, runs: failed + passed, ..Evidence::default() }
    }

    fn suspect(id: &str, prior: Evidence) -> Suspect {
        Suspect { id: id.into(), prior, closest: Closest::FailedStep }
    }

    fn model() -> Model {
        Model::for_baseline(&Baseline {
            steps: 80,
            steps_failed: 10,
            steps_just_before: 8,
            ..Baseline::default()
        })
    }

    #[test]
    fn the_baseline_is_smoothed_and_bounded() {
        let m = Model::for_baseline(&Baseline::default());
        assert!((m.failed - 0.1).abs() < 1e-12 && (m.just_before - 0.1).abs() < 1e-12);
        let all = Model::for_baseline(&Baseline {
            steps: 1000,
            steps_failed: 1000,
            steps_just_before: 1000,
            ..Baseline::default()
        });
        assert!(all.failed <= 0.9 && all.just_before >= 0.01);
        assert!((model().failed - 0.12).abs() < 1e-12 && (model().just_before - 0.1).abs() < 1e-12);
    }

    #[test]
    fn a_record_moves_the_prior_both_ways() {
        let m = model();
        assert!((m.p_misleading(&Evidence::default()) - PRIOR_MISLEADING).abs() < 1e-12);
        assert!(m.p_misleading(&rec(2, 0)) > 0.6);
        assert!(m.p_misleading(&rec(1, 3)) < 0.05);
        let long_before = Evidence { before_failure: 2, ..Evidence::default() };
        let just_before = Evidence { before_failure: 2, just_before: 2, ..Evidence::default() };
        assert!(m.p_misleading(&long_before) < PRIOR_MISLEADING, "it had its chance to mislead");
        assert!(m.p_misleading(&just_before) > m.p_misleading(&long_before));
    }

    #[test]
    fn a_lone_newcomer_is_blamed_and_a_lone_strong_record_is_spared() {
        let v = judge(&model(), &[suspect("new", Evidence::default())]);
        assert!(v[0].blamed && !v[0].sink, "a first failure never sinks: {v:?}");
        assert!(v[0].why.contains("no record before this run"), "{}", v[0].why);
        let v = judge(&model(), &[suspect("good", rec(1, 3))]);
        assert!(!v[0].blamed, "{v:?}");
        assert!(v[0].why.contains("1 of its 4 injections") && v[0].why.ends_with("spared"));
    }

    #[test]
    fn a_condemned_suspect_takes_the_blame_from_a_newcomer_and_sinks() {
        let v = judge(&model(), &[suspect("bad", rec(2, 0)), suspect("new", Evidence::default())]);
        assert!(v[0].blamed && v[0].sink, "{v:?}");
        assert!(!v[1].blamed, "{v:?}");
        assert!(v[0].why.contains("blamed until no longer injected"), "{}", v[0].why);
    }

    #[test]
    fn a_repeat_sinks_from_sink_at_and_not_below() {
        // One failure before, and this one in the failed step: P(misleading) with this failure
        // is about 0.72 against this baseline, above SINK_AT.
        let v = judge(&model(), &[suspect("again", rec(1, 0))]);
        assert!(v[0].blamed && v[0].sink, "{v:?}");
        // The same with two passes on record: about 0.19, blamed as the lone suspect, but once.
        let v = judge(&model(), &[suspect("cleared", rec(1, 2))]);
        let p = model().p_misleading(&rec(2, 2));
        assert!(p < SINK_AT, "{p}");
        assert!(v[0].blamed && !v[0].sink, "{v:?}");
    }

    #[test]
    fn two_newcomers_in_the_failed_step_are_both_blamed_once_and_an_earlier_one_is_spared() {
        let new = |id| suspect(id, Evidence::default());
        let v = judge(&model(), &[new("a"), new("b")]);
        assert!(v.iter().all(|v| v.blamed && !v.sink), "{v:?}");
        let early = Suspect { closest: Closest::Earlier, ..new("early") };
        let v = judge(&model(), &[new("a"), early]);
        assert!(v[0].blamed && !v[1].blamed, "{v:?}");
        let v = judge(&model(), &[suspect("good", rec(1, 3)), new("b")]);
        assert!(!v[0].blamed && v[1].blamed, "{v:?}");
    }
}
