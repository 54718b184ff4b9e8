//! `/api/v1/runs`: run sessions and curator runs (agent-qa-memory §3.4, §5; issue 6 item 2).
//!
//! A harness starts a run, asks for memory once per step (the injected ids are recorded in the
//! run session, `<root>/.curator/runs/<run_id>.json`, as `curator query --run-id --step-index` does),
//! then finishes the run with its run record: steps without an `injected` list take the
//! session's ids, the curator applies the decisions (explicit when the body carries them, the
//! rules provider otherwise) and the answer is the MemoryLog. Every change is journaled under
//! the run id, which is how `GET /runs` lists curator runs and `POST /runs/{id}/undo` reverts one.
//! Finishing a run is idempotent (issue 13): a harness that retries a call whose answer it lost
//! gets `200` with `already_applied: true`, and nothing changes twice.
//!
//! A step query honours the circuit breaker (§9): when the breaker of the run or of its suite is
//! tripped, nothing is injected and the step's recorded injection is cleared.

use std::collections::BTreeMap;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Json};
use curator_engine::breaker::Breaker;
use curator_engine::curate::{Decisions, MemoryLog, RunRecord, UnknownKeys, curate};
use curator_engine::providers::{DecisionProvider, ExplicitProvider, RulesProvider};
use curator_engine::session::{load_session_in, record_injection_in, validate_run_id};
use curator_engine::{QueryOutcome, RunStep};
use curator_store::{JournalEntry, JournalFilter};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::ApiRoutes;
use super::query::{QueryRequest, run_query};
use crate::error::ApiError;
use crate::extract::{ApiJson, MaybeJson};
use crate::state::{AppState, blocking};

pub(crate) fn router() -> ApiRoutes {
    ApiRoutes::new()
        .get("/runs", list)
        .post("/runs", start)
        .get("/runs/{run_id}", show)
        .post("/runs/{run_id}/steps/{step_index}/query", step_query)
        .post("/runs/{run_id}/finish", finish)
        .post("/runs/{run_id}/undo", undo)
}

/// One curator run as the journal shows it.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct RunSummary {
    pub(crate) run_id: String,
    pub(crate) first: String,
    pub(crate) last: String,
    pub(crate) changes: usize,
    /// Changes per action (`add`, `confirm`, `deprecate`, `delete`, `edit`, `undo`, ...).
    pub(crate) actions: BTreeMap<String, usize>,
    /// How many times the run was applied (one transaction each; > 1 after undo and curate
    /// again, issue 13).
    pub(crate) generations: usize,
}

/// Groups journal entries by run id, newest run first. Entries without a run id (older CLI
/// writes) are not a run and are left out.
pub(crate) fn summaries(entries: &[JournalEntry]) -> Vec<RunSummary> {
    let mut runs = Summaries::default();
    for e in entries {
        runs.add(&curator_store::JournalHead {
            time: &e.time,
            run_id: e.run_id.as_deref(),
            action: e.action.as_str(),
            txn: e.txn.as_deref(),
        });
    }
    runs.finish()
}

/// Every run of the store, newest first, from the journal's entry heads: the journal's texts
/// are never held (the file store reads each line for its head alone), so the runs page of a
/// long history costs memory in proportion to its runs, not to its journal.
pub(crate) fn all_summaries(
    store: &dyn curator_store::Store,
) -> curator_store::Result<Vec<RunSummary>> {
    let mut runs = Summaries::default();
    store.journal_heads(&mut |head| runs.add(head))?;
    Ok(runs.finish())
}

/// Runs being summarized, in any order of their entries: the first and last times are the
/// earliest and the latest, the generations the distinct transactions.
#[derive(Default)]
struct Summaries {
    runs: Vec<RunSummary>,
    index: std::collections::HashMap<String, usize>,
    txns: Vec<std::collections::HashSet<String>>,
}

impl Summaries {
    fn add(&mut self, head: &curator_store::JournalHead<'_>) {
        let Some(run_id) = head.run_id else { return };
        let i = match self.index.get(run_id) {
            Some(&i) => i,
            None => {
                self.runs.push(RunSummary {
                    run_id: run_id.to_owned(),
                    first: head.time.to_owned(),
                    last: head.time.to_owned(),
                    changes: 0,
                    actions: BTreeMap::new(),
                    generations: 0,
                });
                self.txns.push(std::collections::HashSet::new());
                self.index.insert(run_id.to_owned(), self.runs.len() - 1);
                self.runs.len() - 1
            }
        };
        let txn = head.txn.unwrap_or(curator_store::LEGACY_TXN);
        if self.txns[i].insert(txn.to_owned()) {
            self.runs[i].generations += 1;
        }
        let run = &mut self.runs[i];
        if head.time < run.first.as_str() {
            head.time.clone_into(&mut run.first);
        }
        if head.time > run.last.as_str() {
            head.time.clone_into(&mut run.last);
        }
        run.changes += 1;
        *run.actions.entry(head.action.to_owned()).or_default() += 1;
    }

    fn finish(self) -> Vec<RunSummary> {
        let mut runs = self.runs;
        runs.sort_by(|a, b| b.last.cmp(&a.last));
        runs
    }
}

async fn list(State(state): State<AppState>) -> Result<Json<Value>, ApiError> {
    let runs = blocking(&state, |s| Ok(all_summaries(s.store())?)).await?;
    Ok(Json(json!({ "runs": runs })))
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct StartRun {
    #[serde(default)]
    run_id: Option<String>,
}

async fn start(
    State(_state): State<AppState>,
    MaybeJson(body): MaybeJson<StartRun>,
) -> Result<impl IntoResponse, ApiError> {
    let run_id = body.run_id.unwrap_or_else(curator_core::generate_run_id);
    validate_run_id(&run_id)?;
    // Nothing is written yet: the session file appears with the first step that injects.
    Ok((StatusCode::CREATED, Json(json!({ "run_id": run_id }))))
}

/// A run's session and journal, or 404 when neither exists.
pub(crate) fn run_detail(state: &AppState, run_id: &str) -> Result<Value, ApiError> {
    validate_run_id(run_id)?;
    let session = load_session_in(state.store(), run_id)?;
    let journal =
        state.store().journal(&JournalFilter { id: None, run_id: Some(run_id.to_owned()) })?;
    if session.is_none() && journal.is_empty() {
        return Err(ApiError::not_found(format!(
            "run {run_id} has no session and no journal entry"
        )));
    }
    let summary = summaries(&journal).into_iter().next();
    Ok(json!({ "run_id": run_id, "session": session, "summary": summary, "journal": journal }))
}

async fn show(
    State(state): State<AppState>,
    Path(run_id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    blocking(&state, move |s| run_detail(&s, &run_id)).await.map(Json)
}

/// Whether the breaker of the run or of its suite is tripped.
fn breaker_tripped(state: &AppState, run_id: &str, suite: Option<&str>) -> Result<bool, ApiError> {
    if Breaker::is_tripped_in(state.store(), run_id)? {
        return Ok(true);
    }
    match suite {
        // A suite name that cannot be a folder is skipped by the query; it has no breaker.
        Some(suite) => match Breaker::is_tripped_in(state.store(), suite) {
            Err(curator_engine::breaker::BreakerError::BadKey { .. }) => Ok(false),
            tripped => Ok(tripped?),
        },
        None => Ok(false),
    }
}

async fn step_query(
    State(state): State<AppState>,
    Path((run_id, step)): Path<(String, String)>,
    ApiJson(request): ApiJson<QueryRequest>,
) -> Result<Json<Value>, ApiError> {
    let step: u64 = step.parse().map_err(|_| {
        ApiError::bad_request(format!("step_index must be a 0-based step index, got {step:?}"))
    })?;
    validate_run_id(&run_id)?;
    let body = blocking(&state, move |s| {
        let tripped = breaker_tripped(&s, &run_id, request.suite.as_deref())?;
        let outcome = if tripped {
            // Validate the request as a query would, then inject nothing.
            request.options(&s, None)?;
            record_injection_in(s.store(), &run_id, step, &[])?;
            QueryOutcome::default()
        } else {
            let run = RunStep { run_id: run_id.clone(), step };
            run_query(&s, &request, Some(run))?
        };
        let mut body = serde_json::to_value(&outcome)
            .map_err(|e| ApiError::internal(format!("encoding the outcome: {e}")))?;
        if let Value::Object(map) = &mut body {
            map.insert("run_id".into(), json!(run_id));
            map.insert("step_index".into(), json!(step));
            // The name before issue 15, kept one release for older clients.
            map.insert("step".into(), json!(step));
            map.insert("breaker_tripped".into(), json!(tripped));
        }
        Ok(body)
    })
    .await?;
    Ok(Json(body))
}

/// The end of a run: its record, and optionally explicit decisions.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Finish {
    /// The run record (`record` is a deprecated alias).
    #[serde(alias = "record")]
    run_record: Value,
    #[serde(default)]
    decisions: Option<Value>,
}

/// Validates the record against the run id of the path and fills missing injections.
fn prepare_record(
    state: &AppState,
    run_id: &str,
    value: &Value,
    unknown: UnknownKeys,
) -> Result<RunRecord, ApiError> {
    let mut record = RunRecord::from_value_with(value, unknown)?;
    match &record.run_id {
        Some(id) if id != run_id => {
            return Err(ApiError::bad_request(format!(
                "run_record.run_id {id:?} is not the run of the path, {run_id:?}"
            )));
        }
        Some(_) => {}
        None => record.run_id = Some(run_id.to_owned()),
    }
    curator_engine::session::fill_from_session(state.store(), &mut record)?;
    Ok(record)
}

async fn finish(
    State(state): State<AppState>,
    Path(run_id): Path<String>,
    ApiJson(body): ApiJson<Finish>,
) -> Result<Json<MemoryLog>, ApiError> {
    validate_run_id(&run_id)?;
    let log = blocking(&state, move |s| {
        let unknown = s.engine().unknown_keys;
        let record = prepare_record(&s, &run_id, &body.run_record, unknown)?;
        let provider: Box<dyn DecisionProvider> = match &body.decisions {
            Some(d) => Box::new(ExplicitProvider::new(Decisions::from_value_with(d, unknown)?)),
            None => Box::new(RulesProvider::default()),
        };
        Ok(curate(s.store(), &record, provider.as_ref(), &s.engine().curate_options())?)
    })
    .await?;
    Ok(Json(log))
}

async fn undo(
    State(state): State<AppState>,
    Path(run_id): Path<String>,
) -> Result<Json<curator_engine::undo::UndoReport>, ApiError> {
    blocking(&state, move |s| Ok(curator_engine::undo::undo(s.store(), &run_id)?)).await.map(Json)
}
