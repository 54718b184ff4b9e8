//! The curator: turns one finished run into memory changes (agent-qa-memory §5, §8;
//! ARCHITECTURE.md "Decision providers", "Ablation means something"; issue 18).
//!
//! Which path runs is decided by the run record and `curator.policy`:
//!
//! | record | evidence policy (default) | agent-qa policy |
//! |---|---|---|
//! | `status: passed` | decisions applied (§5.4), suite cleanup (§5.6) | same |
//! | failed / cancelled, no ablation | first failed step's injections contradicted (§5.5) | same |
//! | failed, `ablation.status: passed` | suspects at or before the failure judged by their records (`blame.rs`) | §5.5 |
//! | failed, `ablation.status: failed` | nothing contradicted; exoneration journaled | §5.5 |
//!
//! Every run first records its outcome evidence, once per run id (a retried curate counts
//! nothing twice), and the rules read the records as they stood before the run. Adds that an
//! agent or a model proposed (rules `MEMO:`, LLM) go to the review queue unless
//! `curator.review` is off; with `review: auto` the run then rejects proposals it implicated and
//! approves those whose probation record is clean (`gate.rs`).
//!
//! Invariants: the provider is asked before the lock is taken and never while it is held; every
//! change happens inside one store transaction (one lock, one journal run id, one index commit);
//! ids are re-validated against the files under the lock; one `now` serves the whole run. A
//! per-decision failure is a line in the MemoryLog's `errors` and changes nothing; only a failure
//! of the run as a whole (provider, lock, store) is an `Err`, and then nothing was written.
//!
//! **Exactly once** (issue 13 item 2): a run is identified by its `run_id`, or, without one, by
//! a hash of its canonical content ([`RunRecord::content_run_id`]), so a retried record is the
//! same run. Inside the transaction, before anything is changed, the run's journal decides (see
//! [`crate::runs`]): when an application of the run stands, nothing is changed and the log says
//! `already_applied`; after `undo` the run is applied again as the next generation. The same
//! check runs before the provider is asked, so a retry costs no LLM call.

mod ablation;
mod apply;
mod blame;
mod decisions;
mod evidence;
mod failure;
mod gate;
mod kept_run;
mod memory_log;
mod run_identity;
mod run_record;
mod suite_cleanup;
mod unknown_keys;

use std::collections::HashSet;
use std::time::Instant;

use curator_core::trust::TrustDeltas;
use curator_core::{Tier, time::iso_millis};
use curator_store::{ListFilter, Store, StoredObservation};

pub use curator_core::config::{BlamePolicy, ReviewMode};
pub use decisions::{Decision, DecisionScope, Decisions, DecisionsError};
pub use evidence::EvidenceStatus;
pub use kept_run::{KeptRun, KeptStep, load_kept_run};
pub use memory_log::{CurateCase, MemoryDelta, MemoryLog, TokenUsage};
pub use run_identity::content_run_id;
pub use run_record::{
    AblationStatus, RunRecord, RunRecordError, RunStatus, StepRecord, SuiteInfo, TestInfo,
};
pub use unknown_keys::UnknownKeys;

use crate::providers::{CuratorInput, DecisionProvider, ProviderError};
use crate::runs::RunApplications;

/// Settings of one curator run.
#[derive(Debug, Clone)]
pub struct CurateOptions {
    /// Trust deltas (the config's effective values; 0.05 / 0.10 by default).
    pub deltas: TrustDeltas,
    /// The run's single `now`; the current time when `None`.
    pub now: Option<jiff::Timestamp>,
    /// `ablationEnabled` (default true): when false an ablation result in the record is
    /// ignored and a failed run takes the §5.5 path.
    pub ablation_enabled: bool,
    /// `curator.policy`: how a failure the ablation rerun blamed on memory is blamed.
    pub policy: BlamePolicy,
    /// `curator.review`: whether proposed adds wait in the review queue.
    pub review: ReviewMode,
    /// `minTrust`: a suspect the evidence condemns is contradicted until its trust is below
    /// it, so it is no longer injected (default 0.3).
    pub min_trust: f64,
}

impl Default for CurateOptions {
    fn default() -> Self {
        CurateOptions {
            deltas: TrustDeltas::default(),
            now: None,
            ablation_enabled: true,
            policy: BlamePolicy::default(),
            review: ReviewMode::default(),
            min_trust: curator_core::config::MemoryConfig::default().min_trust,
        }
    }
}

/// Why a curator run changed nothing at all.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CurateError {
    /// The decision provider gave no usable answer.
    #[error(transparent)]
    Provider(#[from] ProviderError),
    /// Listing the run's observations, taking the lock or writing failed as a whole.
    #[error("Curator error: {0}")]
    Store(#[from] curator_store::Error),
    /// The run id was applied from a record with another verdict (another status, ablation
    /// or step outcome): a run id names one run, so this record is not applied, and says so,
    /// rather than being answered "already applied" while its verdict is lost.
    #[error(
        "run {run_id} was applied from a record that reported {applied}; this record reports \
         {sent}: not applied (a run id names one run: `curator undo {run_id}` first to apply \
         another verdict)"
    )]
    Conflict { run_id: String, applied: String, sent: String },
    /// Taking the lock or writing failed after an LLM answered: nothing was applied, but the
    /// tokens of the answer were spent (the MemoryLog of the unapplied run reports them).
    #[error("Curator error: {source}")]
    AfterAnswer { source: Box<curator_store::Error>, token_usage: TokenUsage },
}

impl CurateError {
    /// The tokens an LLM spent on a run that was not applied.
    pub fn spent(&self) -> Option<TokenUsage> {
        match self {
            CurateError::AfterAnswer { token_usage, .. } => Some(*token_usage),
            _ => None,
        }
    }

    /// The same error without the spent tokens: a store error is [`CurateError::Store`].
    pub fn into_cause(self) -> CurateError {
        match self {
            CurateError::AfterAnswer { source, .. } => CurateError::Store(*source),
            other => other,
        }
    }
}

/// Which path (§5) a run takes: its status, and the ablation rerun's when ablation is enabled.
pub fn curate_case(record: &RunRecord, options: &CurateOptions) -> CurateCase {
    match (record.status, record.ablation.filter(|_| options.ablation_enabled)) {
        (RunStatus::Passed, _) => CurateCase::Passed,
        (_, Some(AblationStatus::Passed)) => CurateCase::AblationPassed,
        (_, Some(AblationStatus::Failed)) => CurateCase::AblationFailed,
        (_, None) => CurateCase::Failed,
    }
}

/// agent-qa's error when the curator lock could not be taken in time (§6).
pub const LOCK_TIMEOUT_ERROR: &str = "Curator error: Lock acquisition timed out";

/// The log agent-qa returns when the curator could not run: runCurator never throws (§5.1,
/// §5.4), so `error` ([`LOCK_TIMEOUT_ERROR`], or a [`ProviderError`]'s text) is in the log and
/// nothing changed. The run was not applied; a later `curate` of the same run applies it once.
pub fn unapplied_log(record: &RunRecord, options: &CurateOptions, error: &str) -> MemoryLog {
    let run_id = record.journal_run_id();
    let mut log = MemoryLog::new(run_id, curate_case(record, options));
    log.errors.push(error.to_owned());
    log
}

/// Runs the curator for `record` (injected ids already filled in) against `store`.
///
/// `provider` is asked only for a passed run that was not applied yet. The returned log carries
/// the run id every change was journaled under (the record's, else one derived from its
/// content), and says when the run had already been applied (then nothing changed).
pub fn curate(
    store: &dyn Store,
    record: &RunRecord,
    provider: &dyn DecisionProvider,
    options: &CurateOptions,
) -> Result<MemoryLog, CurateError> {
    let started = Instant::now();
    let run_id = record.journal_run_id();
    let now = iso_millis(options.now.unwrap_or_else(curator_core::time::now));
    let deltas = options.deltas;
    let ablation = record.ablation.filter(|_| options.ablation_enabled);
    let case = curate_case(record, options);
    let auto_review = options.review == ReviewMode::Auto;
    let mut log = MemoryLog::new(run_id.clone(), case);
    let finish = |mut log: MemoryLog| {
        log.curator_duration = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        Ok(log)
    };
    // A retry is answered before the provider is asked; the check under the lock decides. It
    // leaves the record kept by the application that stands: a record sent again under the
    // same run id, with other content, must not replace what the UI shows for that run.
    if let Some(standing) = already_applied(&mut |f| store.journal(f), &run_id, &mut log)? {
        same_verdict(&standing, &evidence::run_evidence(record, &run_id, &now, ablation))?;
        return finish(log);
    }
    // agent-qa believes the list as sent (an injected id is always known, §11.6): kept as
    // is under its policy. Looked up only for a run not applied yet: a retry reads nothing.
    let owned = match options.policy {
        BlamePolicy::AgentQa => None,
        BlamePolicy::Evidence => own_injections(store, record, &mut log)?,
    };
    let record = owned.as_ref().unwrap_or(record);
    let run = evidence::run_evidence(record, &run_id, &now, ablation);
    // What the run reported is kept before it is applied, so even a run that changes nothing
    // is on record.
    kept_run::keep(store, record, &run_id, &now)?;
    let queue_adds = provider.proposes() && options.review != ReviewMode::Off;
    let answer = if case == CurateCase::Passed {
        let existing = run_observations(store, record)?;
        let answer = provider.decide(&CuratorInput { record, existing: &existing })?;
        log.provider = Some(provider.name().to_owned());
        log.token_usage = answer.token_usage;
        let known: HashSet<String> = record
            .all_injected()
            .into_iter()
            .chain(existing.iter().map(|o| o.observation.id.as_str().to_owned()))
            .collect();
        Some((answer, known))
    } else {
        None
    };
    let before = log.clone();
    let spent = log.token_usage;
    let mut conflict = None;
    let applied = store.transact(Some(&run_id), &mut |tx| {
        // A database store may run the body again after a serialization failure: start each
        // attempt from the log as it was, so no delta is counted twice.
        log = before.clone();
        if let Some(standing) = already_applied(&mut |f| tx.journal(f), &run_id, &mut log)? {
            conflict = same_verdict(&standing, &run).err();
            return Ok(());
        }
        // Recorded in this transaction, so it stands or falls with the run's application:
        // once per application, and `undo` retracts it with the rest.
        let (book, status) = evidence::record(tx, &run)?;
        log.evidence = Some(status);
        match (case, options.policy) {
            (CurateCase::Passed, _) => {
                let Some((answer, known)) = &answer else { return Ok(()) };
                let repeats_count = options.policy == BlamePolicy::AgentQa;
                let ctx = apply::ApplyContext {
                    record,
                    deltas,
                    now: &now,
                    known,
                    queue_adds,
                    repeats_count,
                };
                apply::apply_decisions(tx, &ctx, &answer.decisions, &mut log);
                if let Some(suite) = &record.suite {
                    suite_cleanup::clean_stale_suite(tx, suite, &mut log);
                }
            }
            (CurateCase::AblationPassed, BlamePolicy::Evidence) => {
                log.exonerated = ablation::blame_suspects(
                    tx,
                    record,
                    &book,
                    &deltas,
                    options.min_trust,
                    auto_review,
                    &mut log,
                );
            }
            (CurateCase::AblationFailed, BlamePolicy::Evidence) => {
                log.exonerated = ablation::exonerate(tx, record, &mut log);
            }
            // §5.5, and §8 as agent-qa applies it: the first failed step's injections.
            (_, policy) => {
                let ids = failure::first_failed_step_ids(record, policy);
                failure::contradict_ids(tx, &ids, &deltas, &failure::failure_reasoning, &mut log);
                if auto_review {
                    gate::reject_failed_step(tx, record, &mut log);
                }
            }
        }
        if auto_review {
            gate::approve_clean(tx, record, &book, &mut log);
        }
        // The store failed under one of the changes: none of the run stands, so a retry
        // applies it whole instead of answering "already applied" without that change.
        match log.stop.take() {
            Some(reason) => Err(curator_store::Error::Aborted { reason }),
            None => Ok(()),
        }
    });
    if let Some(conflict) = conflict {
        return Err(conflict);
    }
    if let Err(source) = applied {
        return Err(match spent {
            Some(token_usage) => CurateError::AfterAnswer { source: Box::new(source), token_usage },
            None => CurateError::Store(source),
        });
    }
    let journaled = log.evidence == Some(EvidenceStatus::Recorded);
    if !log.already_applied && !journaled && log.is_empty() && log.exonerated == 0 {
        // Nothing was journaled by this call: no application of the run exists.
        log.generation = None;
    }
    finish(log)
}

/// `record` with the injected ids that live outside its scopes dropped (`None`: none do).
///
/// A step's memory comes from the run's product folder, its test folder and a suite folder
/// (the record's suite, or any when it names none): an id another product holds was never
/// injected into this run, and believing the list as sent let a forged record contradict or
/// confirm any observation of the root (audit 9). Each id dropped is one line of the log's
/// errors. An id found nowhere is kept: agent-qa reports it as not found.
fn own_injections(
    store: &dyn Store,
    record: &RunRecord,
    log: &mut MemoryLog,
) -> Result<Option<RunRecord>, CurateError> {
    let owns = |tier: Tier, scope: &curator_core::ScopeName| match tier {
        Tier::Products => *scope == record.product,
        Tier::Tests => *scope == record.test.id,
        Tier::Suites => record.suite.as_ref().is_none_or(|s| *scope == s.id),
    };
    let mut foreign: Vec<(String, String)> = Vec::new();
    for raw in record.all_injected() {
        let Ok(id) = curator_core::ObservationId::parse(&raw) else { continue };
        let place = match store.get(&id) {
            Ok(stored) => Some(stored),
            Err(curator_store::Error::NotFound { .. }) => match store.get_pending(&id) {
                Ok(found) => found,
                Err(curator_store::Error::Unsupported { .. }) => None,
                Err(e) => return Err(CurateError::Store(e)),
            },
            // A file that does not parse or a duplicated id: reported where the change would be.
            Err(e) if !e.is_environmental() => None,
            Err(e) => return Err(CurateError::Store(e)),
        };
        if let Some(stored) = place.filter(|s| !owns(s.tier, &s.scope)) {
            foreign.push((raw, format!("{}/{}", stored.tier.dir_name(), stored.scope)));
        }
    }
    if foreign.is_empty() {
        return Ok(None);
    }
    let mut own = record.clone();
    for step in &mut own.steps {
        if let Some(ids) = &mut step.injected {
            ids.retain(|id| !foreign.iter().any(|(f, _)| f == id));
        }
        if step.probation.as_ref().is_some_and(|p| foreign.iter().any(|(f, _)| f == p)) {
            step.probation = None;
        }
    }
    for (raw, place) in foreign {
        log.errors.push(format!(
            "Injected observation {raw} lives in {place}, outside this run's product, suite and \
             test: ignored"
        ));
    }
    Ok(Some(own))
}

/// A retry must report what the standing application of its run id did: the outcome evidence
/// journaled with that application (run status, ablation, each step's status) against the
/// record's. An application journaled before evidence was kept is not compared.
fn same_verdict(
    standing: &crate::runs::Application,
    sent: &curator_store::evidence::RunEvidence,
) -> Result<(), CurateError> {
    let Some(applied) = standing.entries.iter().find_map(|e| e.evidence.as_ref()) else {
        return Ok(());
    };
    let verdict = |run: &curator_store::evidence::RunEvidence| {
        let steps: Vec<&str> = run.steps.iter().map(|s| s.status.as_str()).collect();
        let ablation =
            run.ablation.as_deref().map(|a| format!(", ablation {a}")).unwrap_or_default();
        format!("{} for test {}{ablation}, steps [{}]", run.status, run.test, steps.join(", "))
    };
    let (applied, sent_verdict) = (verdict(applied), verdict(sent));
    if applied == sent_verdict {
        return Ok(());
    }
    Err(CurateError::Conflict { run_id: sent.run_id.clone(), applied, sent: sent_verdict })
}

/// The application of `run_id` that stands in the journal `read` shows, if any; fills the
/// log's `already_applied` and `generation` either way (the generation this call would write).
fn already_applied(
    read: &mut dyn FnMut(
        &curator_store::JournalFilter,
    ) -> curator_store::Result<Vec<curator_store::JournalEntry>>,
    run_id: &str,
    log: &mut MemoryLog,
) -> curator_store::Result<Option<crate::runs::Application>> {
    let run = RunApplications::load(read, run_id)?;
    match run.standing() {
        Some(app) => {
            log.already_applied = true;
            log.generation = Some(app.generation);
            Ok(Some(app.clone()))
        }
        None => {
            log.generation = Some(run.next_generation());
            Ok(None)
        }
    }
}

/// The run's scopes, in tier order.
fn run_scopes(record: &RunRecord) -> Vec<(Tier, curator_core::ScopeName)> {
    let mut scopes = vec![(Tier::Products, record.product.clone())];
    if let Some(suite) = &record.suite {
        scopes.push((Tier::Suites, suite.id.clone()));
    }
    scopes.push((Tier::Tests, record.test.id.clone()));
    scopes
}

/// Every served observation of the run's product, suite and test, in tier order.
pub fn run_observations(
    store: &dyn Store,
    record: &RunRecord,
) -> Result<Vec<StoredObservation>, curator_store::Error> {
    let mut out = Vec::new();
    for (tier, scope) in run_scopes(record) {
        let listing = store.list(&ListFilter { tier: Some(tier), scope: Some(scope) })?;
        // A scope folder that cannot be read hides every id in it: its decisions would all be
        // "unknown" and lost, so the run waits for a folder that can be read.
        let unreadable_folder = listing.problems.into_iter().find(|p| {
            matches!(p.kind, curator_store::ProblemKind::Unreadable(_)) && p.path.is_dir()
        });
        if let Some(p) = unreadable_folder {
            return Err(curator_store::Error::Refused { path: p.path, kind: p.kind });
        }
        out.extend(listing.observations);
    }
    Ok(out)
}
