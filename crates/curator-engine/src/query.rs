//! One step's memory: scoped query, injection block and run bookkeeping (agent-qa-memory §3–§4).
//!
//! This is what `curator query`, the HTTP API and the MCP tools call, over any [`Store`]. It
//! always answers from the observations as they are now: the file store refreshes its on-disk
//! index for the folders the step reads (an in-RAM index when that index cannot be used at
//! all), curator-pg searches its tables. `min_trust` and `max_injections` are honoured (agent-qa
//! ignores its config, §11.1).
//!
//! A name that is not a usable folder name (`../x`, `a/b`, empty) is not a reason to fail the
//! step: agent-qa skips that folder and serves the others, and a memory query never fails a
//! step (§1.8, §3.2). [`QueryOptions::lenient`] does the same, and the answer carries a warning
//! per skipped name ([`QueryOutcome::warnings`]), which the CLI prints on stderr and the HTTP
//! and MCP answers include (issue 13 item 5).

use std::path::Path;
use std::time::Duration;

use curator_core::render::{Injected, render_memory_context};
use curator_core::{ScopeError, ScopeName, SnapshotEntry};
use curator_store::index::{
    DEFAULT_KEEP_RATIO, DEFAULT_MIN_RELEVANCE, Hit, IndexError, QueryMode, SearchRequest,
};
use curator_store::{FileStore, FileStoreOptions, RunSession, Store};
use serde::{Deserialize, Serialize};

use crate::probation::ProbationOptions;
use crate::scopes::{SuiteContext, step_selectors};
use crate::session::{SessionError, record_injection_in, validate_harness_run_id};

/// agent-qa's effective `minTrust` (§2).
pub const DEFAULT_MIN_TRUST: f64 = 0.3;
/// agent-qa's effective `maxInjections` (§2).
pub const DEFAULT_MAX_INJECTIONS: usize = 3;

/// Everything one step's query needs.
#[derive(Debug, Clone)]
pub struct QueryOptions {
    /// `products/<product>`; `None` when the name given could not be a folder (skipped).
    pub product: Option<ScopeName>,
    /// `tests/<test>`; `None` when the name given could not be a folder (skipped).
    pub test: Option<ScopeName>,
    pub suite: Option<SuiteContext>,
    /// The step instruction as the planner sees it.
    pub text: String,
    pub min_trust: f64,
    pub max_injections: usize,
    pub mode: QueryMode,
    /// Terms mode relevance floor (share of the query's IDF weight a hit must contain).
    pub min_relevance: f64,
    /// When set, the injected ids are recorded for this run and step (§3.4).
    pub run: Option<RunStep>,
    /// What was skipped and why; returned with the answer.
    pub warnings: Vec<String>,
    /// Probation injections for steps of a recorded run (issue 18); `None` (the library's
    /// default) never injects below minTrust or from the review queue.
    pub probation: Option<ProbationOptions>,
    /// A reading of [`monotonic_now`] after which this answer must not record the run's step:
    /// the process that asked a `curator serve` for it stopped waiting and answers (and records)
    /// the step itself. `None`: record whenever the answer is made.
    pub record_before: Option<Duration>,
}

/// The system-wide monotonic clock (`CLOCK_MONOTONIC`): the same for every process of the
/// machine, and never stepped with the wall clock, so a query process and its server agree on
/// a deadline.
pub fn monotonic_now() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    Duration::new(u64::try_from(t.tv_sec).unwrap_or(0), u32::try_from(t.tv_nsec).unwrap_or(0))
}

/// A step of a run, for the run session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunStep {
    pub run_id: String,
    /// 0-based step index.
    pub step: u64,
}

impl QueryOptions {
    /// Options with agent-qa's defaults; `product` and `test` must be valid scope names.
    pub fn new(product: &str, test: &str, text: impl Into<String>) -> Result<Self, QueryError> {
        let product = ScopeName::new(product).map_err(|e| QueryError::Scope("product", e))?;
        let test = ScopeName::new(test).map_err(|e| QueryError::Scope("test", e))?;
        Ok(Self::with_names(Some(product), Some(test), text.into(), Vec::new()))
    }

    /// Options with agent-qa's defaults, skipping (with a warning) a `product` or `test` that
    /// cannot be a folder name, as agent-qa skips such a folder.
    pub fn lenient(product: &str, test: &str, text: impl Into<String>) -> Self {
        let mut warnings = Vec::new();
        let product = usable("product", product, &mut warnings);
        let test = usable("test", test, &mut warnings);
        Self::with_names(product, test, text.into(), warnings)
    }

    pub(crate) fn with_names(
        product: Option<ScopeName>,
        test: Option<ScopeName>,
        text: String,
        warnings: Vec<String>,
    ) -> Self {
        QueryOptions {
            product,
            test,
            suite: None,
            text,
            min_trust: DEFAULT_MIN_TRUST,
            max_injections: DEFAULT_MAX_INJECTIONS,
            mode: QueryMode::default(),
            min_relevance: DEFAULT_MIN_RELEVANCE,
            run: None,
            warnings,
            probation: None,
            record_before: None,
        }
    }

    /// Sets the suite the step runs in, agent-qa's way: a suite id that cannot be a folder name
    /// is skipped with a warning; a position one past the last test (or more) is kept, with a
    /// warning, since it can only match observations filed under that same position.
    pub fn set_suite(
        &mut self,
        id: &str,
        tests: Option<Vec<SnapshotEntry>>,
        position: Option<u64>,
    ) {
        if let (Some(tests), Some(position)) = (&tests, position)
            && position >= tests.len() as u64
        {
            self.warnings.push(format!(
                "suite position {position} is past the last of the suite's {} test(s); agent-qa \
                 accepts it, and only suite observations filed under that position match",
                tests.len()
            ));
        }
        self.suite =
            usable("suite", id, &mut self.warnings).map(|id| SuiteContext { id, tests, position });
    }
}

/// `name` as a scope name, or `None` with a warning saying why it is skipped: a name that
/// cannot be a folder, or one agent-qa's path check skips (any `..` in it, §1.8), so a step
/// reads the folders agent-qa would read.
fn usable(what: &str, name: &str, warnings: &mut Vec<String>) -> Option<ScopeName> {
    let refused = match ScopeName::new(name) {
        Ok(_) if name.contains("..") => {
            format!("scope name {name:?} contains \"..\", which agent-qa's path check refuses")
        }
        Ok(scope) => return Some(scope),
        Err(e) => e.to_string(),
    };
    warnings.push(format!("invalid {what} name skipped: {refused}; the other folders are served"));
    None
}

/// One injected observation, as `curator query --json` prints it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InjectedObservation {
    pub id: String,
    pub title: String,
    pub content: String,
    pub trust: f64,
    /// Relevance × trust, higher is better (phrase mode: −bm25 × trust).
    pub score: f64,
    /// `products`, `suites` or `tests`.
    pub tier: String,
    pub scope: String,
    /// Injected on probation (below minTrust, or waiting for review): issue 18.
    /// Absent when false, so a reader must default it (the query socket reads it back).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub probation: bool,
    /// A proposal from the review queue (injected on probation).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pending: bool,
}

/// The answer for one step: `formatted` is the §4 block, `None` when nothing is injected.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct QueryOutcome {
    pub observations: Vec<InjectedObservation>,
    pub formatted: Option<String>,
    /// What the query skipped and why (an invalid scope name, a suite position past the
    /// suite); empty when nothing was.
    #[serde(default)]
    pub warnings: Vec<String>,
}

/// Why a query could not be answered.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum QueryError {
    /// A product, test or suite name is not a valid scope name.
    #[error("invalid {0} name: {1}")]
    Scope(&'static str, #[source] ScopeError),
    /// `min_trust` outside `[0, 1]` or not a number.
    #[error("min trust must be a number in [0, 1], got {0}")]
    MinTrust(f64),
    /// The memory folders could not be read.
    #[error(transparent)]
    Index(#[from] IndexError),
    /// The run session could not be recorded.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// The store could not search (a database store's errors, a missing memory root).
    #[error(transparent)]
    Store(curator_store::Error),
}

/// Answers one step from the file store at `root`: [`query_in`] that store.
pub fn query(root: &Path, opts: &QueryOptions) -> Result<QueryOutcome, QueryError> {
    let store = FileStore::open(root, FileStoreOptions::default()).map_err(QueryError::Store)?;
    query_in(&store, opts)
}

/// Answers one step: search the step's scopes in `store`, render the block, record the run.
pub fn query_in(store: &dyn Store, opts: &QueryOptions) -> Result<QueryOutcome, QueryError> {
    if !(0.0..=1.0).contains(&opts.min_trust) {
        return Err(QueryError::MinTrust(opts.min_trust));
    }
    if let Some(run) = &opts.run {
        // Refuse a bad run id or step before doing any work, not after the search.
        validate_harness_run_id(&run.run_id)?;
        if run.step > curator_store::MAX_STEP_INDEX {
            return Err(SessionError::InvalidStep(run.step).into());
        }
    }
    let scopes = step_selectors(opts.product.as_ref(), opts.test.as_ref(), opts.suite.as_ref());
    if scopes.is_empty() {
        // Every name was skipped: nothing to read, nothing injected (and recorded as such).
        if let Some(run) = &opts.run {
            record_injection_in(store, &run.run_id, run.step, &[])?;
        }
        return Ok(QueryOutcome { warnings: opts.warnings.clone(), ..QueryOutcome::default() });
    }
    let req = SearchRequest {
        scopes,
        text: opts.text.clone(),
        mode: opts.mode,
        min_trust: opts.min_trust,
        max_results: opts.max_injections,
        min_relevance: opts.min_relevance,
        keep_ratio: DEFAULT_KEEP_RATIO,
    };
    let store_error = |e| match e {
        curator_store::Error::Index(e) => QueryError::Index(e),
        e => QueryError::Store(e),
    };
    // More candidates than the cap when newcomers wait for the run's one trial, so a newcomer
    // held back leaves room for the next match.
    let newcomers = opts.run.is_some() && opts.probation.is_some_and(|p| p.newcomers);
    let ranked = if newcomers {
        let wide = SearchRequest { max_results: req.max_results.saturating_mul(3), ..req.clone() };
        store.search(&wide).map_err(store_error)?
    } else {
        store.search(&req).map_err(store_error)?
    };
    let Some(run) = &opts.run else {
        let mut outcome = outcome(ranked);
        outcome.warnings.clone_from(&opts.warnings);
        return Ok(outcome);
    };
    // What the run's other steps were given decides the trial slot and probation, and this
    // step's record is written with no other step of the run recorded in between.
    let mut decided: Option<StepInjection> = None;
    let mut deciding_failed = false;
    let recorded = store.update_step(&run.run_id, run.step, &mut |session| {
        // Checked under the run's lock: a client that gave up records its own answer after
        // the deadline under the same lock, so it is the last to record the step.
        if opts.record_before.is_some_and(|deadline| monotonic_now() >= deadline) {
            return Err(curator_store::Error::Aborted {
                reason: "the query process stopped waiting for this answer and answers the \
                         step itself"
                    .to_owned(),
            });
        }
        let step = decide_step(store, &req, ranked.clone(), session, run, opts.probation.as_ref());
        let (hits, probation) = step.inspect_err(|_| deciding_failed = true)?;
        let record = curator_store::StepRecord {
            ids: hits.iter().map(|h| h.id.clone()).collect(),
            probation: probation.as_ref().map(|(id, _)| id.clone()),
        };
        decided = Some((hits, probation));
        Ok(record)
    });
    match recorded {
        Err(e) if deciding_failed => return Err(store_error(e)),
        Err(e) => return Err(QueryError::Session(SessionError::Store(e))),
        Ok(()) => {}
    }
    let (hits, probation) = decided.unwrap_or_default();
    let mut outcome = outcome(hits);
    outcome.warnings.clone_from(&opts.warnings);
    if let (Some(last), Some((_, pending))) = (outcome.observations.last_mut(), &probation) {
        last.probation = true;
        last.pending = *pending;
    }
    Ok(outcome)
}

/// What a step injects, in order, and the id injected on probation with whether it is a queued
/// proposal.
type StepInjection = (Vec<Hit>, Option<(String, bool)>);

/// What `step` of `run` injects, given what the run's other steps were given (`session`): the
/// ranked matches under the evidence policy's one trial per run, then a probation injection
/// when the run's slot is still free (with whether it is a queued proposal).
fn decide_step(
    store: &dyn Store,
    req: &SearchRequest,
    ranked: Vec<Hit>,
    session: Option<&RunSession>,
    run: &RunStep,
    probation: Option<&ProbationOptions>,
) -> curator_store::Result<StepInjection> {
    let Some(options) = probation else { return Ok((ranked, None)) };
    let (mut hits, slot_taken) = if options.newcomers {
        let admitted = crate::trial::admit(store, ranked, session, run.step, req.max_results)?;
        (admitted.hits, admitted.slot_taken)
    } else {
        (ranked, false)
    };
    if slot_taken {
        return Ok((hits, None));
    }
    let chosen =
        crate::probation::choose(store, req, &hits, session, &run.run_id, run.step, options)?;
    let probation = chosen.as_ref().map(|(hit, pending)| (hit.id.clone(), *pending));
    hits.extend(chosen.map(|(hit, _)| hit));
    Ok((hits, probation))
}

/// The injection for `hits`, in order.
pub fn outcome(hits: Vec<Hit>) -> QueryOutcome {
    let items: Vec<Injected<'_>> = hits
        .iter()
        .map(|h| Injected { title: &h.title, content: &h.content, trust: h.trust })
        .collect();
    let formatted = render_memory_context(&items);
    let observations = hits
        .into_iter()
        .map(|h| InjectedObservation {
            id: h.id,
            title: h.title,
            content: h.content,
            trust: h.trust,
            score: h.score,
            tier: h.tier.dir_name().to_owned(),
            scope: h.scope.as_str().to_owned(),
            probation: false,
            pending: false,
        })
        .collect();
    QueryOutcome { observations, formatted, warnings: Vec::new() }
}
