//! Recording a run's outcome evidence inside the curator's transaction (issue 18 item 1).
//!
//! The run's facts become a [`RunEvidence`], recorded under the writer lock before any decision
//! that reads evidence, once per run id. The blame and review rules then read the records
//! *before* this run (what the suspects had earned when the run started) and *with* it, both
//! computed from the store's counters minus this run's own tally: whether this attempt appended
//! the run or a crashed earlier attempt did, the numbers — and therefore the decisions — are
//! the same.

use curator_store::evidence::{
    Baseline, Evidence, EvidenceQuery, EvidenceView, RunEvidence, StepEvidence, Tally,
};
use curator_store::{Error, Transaction};
use serde::{Deserialize, Serialize};

use super::run_record::{AblationStatus, RunRecord, RunStatus};

/// What happened to a run's evidence (`evidence` of the MemoryLog).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EvidenceStatus {
    /// Recorded now.
    Recorded,
    /// This run id was already recorded (a retried curate): nothing counted again.
    AlreadyRecorded,
    /// The store keeps no evidence; decisions used no record.
    Unsupported,
}

/// The facts of `record` as evidence (`ablation` as the curator uses it).
pub(crate) fn run_evidence(
    record: &RunRecord,
    run_id: &str,
    now: &str,
    ablation: Option<AblationStatus>,
) -> RunEvidence {
    let word = |s: &str| s.to_owned();
    RunEvidence {
        run_id: run_id.to_owned(),
        time: now.to_owned(),
        test: record.test.id.as_str().to_owned(),
        status: word(match record.status {
            RunStatus::Passed => "passed",
            RunStatus::Failed => "failed",
            RunStatus::Cancelled => "cancelled",
        }),
        ablation: ablation.map(|a| {
            word(match a {
                AblationStatus::Passed => "passed",
                AblationStatus::Failed => "failed",
            })
        }),
        steps: record
            .steps
            .iter()
            .map(|s| StepEvidence {
                status: s.status.clone(),
                injected: s.injected_ids().to_vec(),
                probation: s.probation.clone(),
            })
            .collect(),
    }
}

/// The records the rules of one run read.
#[derive(Debug, Clone, Default)]
pub(crate) struct RunBook {
    view: EvidenceView,
    tally: Tally,
    test: String,
}

impl RunBook {
    /// The record of `id` with this run.
    pub(crate) fn with_run(&self, id: &str) -> Evidence {
        let stored = self.view.of(id);
        let own = self.tally.observations.get(id).copied().unwrap_or_default();
        // A store without evidence has recorded nothing: this run is all there is.
        if stored.is_empty() { own } else { stored }
    }

    /// The record of `id` before this run.
    pub(crate) fn prior(&self, id: &str) -> Evidence {
        let own = self.tally.observations.get(id).copied().unwrap_or_default();
        self.view.of(id).minus(&own)
    }

    /// The test's baseline before this run.
    pub(crate) fn prior_baseline(&self) -> Baseline {
        self.view.baseline(&self.test).minus(&self.tally.baseline)
    }
}

/// Records `run` (once per run id) and reads the records of its observations and its test.
pub(crate) fn record(
    tx: &mut dyn Transaction,
    run: &RunEvidence,
) -> curator_store::Result<(RunBook, EvidenceStatus)> {
    let tally = run.tally();
    let query = EvidenceQuery {
        ids: tally.observations.keys().cloned().collect(),
        tests: vec![run.test.clone()],
    };
    let status = match tx.record_evidence(run) {
        Ok(true) => EvidenceStatus::Recorded,
        Ok(false) => EvidenceStatus::AlreadyRecorded,
        Err(Error::Unsupported { .. }) => {
            let book = RunBook { view: EvidenceView::default(), tally, test: run.test.clone() };
            return Ok((book, EvidenceStatus::Unsupported));
        }
        Err(e) => return Err(e),
    };
    let view = tx.evidence(&query)?;
    Ok((RunBook { view, tally, test: run.test.clone() }, status))
}
