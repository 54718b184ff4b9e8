//! The UI's other pages: the query playground, curator runs with their MemoryLogs and lint
//! (issue 6 item 4; the harness page is `harness.rs`).
//!
//! Curator runs are read from the journal grouped by run id (the journal is the record of every
//! change, so a run made by the CLI, the API or agent-qa's curator through curator shows up the
//! same way); a run's page lists its changes as a MemoryLog does and offers `undo`.

use std::collections::BTreeSet;

use askama::Template;
use axum::extract::{Path, State};
use axum::response::Response;
use curator_core::Tier;
use curator_engine::curate::{KeptRun, KeptStep, load_kept_run};
use curator_engine::session::{load_session_in, validate_run_id};
use curator_store::{JournalFilter, ListFilter};
use serde::Deserialize;

use super::diff::{EntryDiff, entry_diff};
use super::{PAGE_SIZE, Pager, UiQuery, done, error_page, flash, render};
use crate::error::ApiError;
use crate::routes::lint::{LintProblem, report};
use crate::routes::query::{QueryRequest, run_query};
use crate::routes::runs::summaries;
use crate::state::{AppState, blocking};

/// The playground's form, echoed back into the page.
#[derive(Debug, Default, Clone, Deserialize)]
pub(crate) struct QueryForm {
    #[serde(default)]
    product: String,
    #[serde(default)]
    test: String,
    #[serde(default)]
    suite: String,
    #[serde(default)]
    text: String,
    #[serde(default)]
    min_trust: String,
    #[serde(default)]
    max_injections: String,
    #[serde(default)]
    mode: String,
}

struct Hit {
    id: String,
    title: String,
    place: String,
    trust: String,
    score: String,
}

#[derive(Template)]
#[template(path = "query.html")]
struct QueryPage {
    nav: &'static str,
    flash: Option<String>,
    form: QueryForm,
    products: Vec<String>,
    tests: Vec<String>,
    suites: Vec<String>,
    ran: bool,
    error: Option<String>,
    /// Names the query skipped, and why.
    warnings: Vec<String>,
    formatted: Option<String>,
    hits: Vec<Hit>,
}

fn number<T: std::str::FromStr>(field: &str, raw: &str) -> Result<Option<T>, ApiError> {
    match raw.trim() {
        "" => Ok(None),
        t => t
            .parse()
            .map(Some)
            .map_err(|_| ApiError::bad_request(format!("{field} must be a number, got {t:?}"))),
    }
}

fn to_request(form: &QueryForm) -> Result<QueryRequest, ApiError> {
    Ok(QueryRequest {
        product: form.product.trim().to_owned(),
        test: form.test.trim().to_owned(),
        step_text: form.text.clone(),
        suite: Some(form.suite.trim().to_owned()).filter(|s| !s.is_empty()),
        suite_tests: None,
        position: None,
        min_trust: number("min trust", &form.min_trust)?,
        max_injections: number("max injections", &form.max_injections)?,
        mode: Some(form.mode.clone()).filter(|m| !m.is_empty()),
    })
}

fn query_page(state: &AppState, mut form: QueryForm) -> Result<QueryPage, ApiError> {
    // The scope names for the form's suggestions: folder names, no file read.
    let listing = state.store().list_page(&ListFilter::default(), 0, 0)?;
    let scopes = |tier: Tier| -> Vec<String> {
        let set: BTreeSet<String> = listing
            .scopes
            .iter()
            .filter(|(t, ..)| *t == tier)
            .map(|(_, scope, _)| scope.to_string())
            .collect();
        set.into_iter().collect()
    };
    let engine = state.engine();
    let ran = !form.text.trim().is_empty();
    let mut page = QueryPage {
        nav: "query",
        flash: None,
        products: scopes(Tier::Products),
        tests: scopes(Tier::Tests),
        suites: scopes(Tier::Suites),
        ran,
        error: None,
        warnings: Vec::new(),
        formatted: None,
        hits: Vec::new(),
        form: form.clone(),
    };
    if ran {
        match to_request(&form).and_then(|r| run_query(state, &r, None)) {
            Ok(outcome) => {
                page.warnings = outcome.warnings;
                page.formatted = outcome.formatted;
                page.hits = outcome
                    .observations
                    .into_iter()
                    .map(|o| Hit {
                        place: format!("{}/{}", o.tier, o.scope),
                        trust: o.trust.to_string(),
                        score: format!("{:.3}", o.score),
                        id: o.id,
                        title: o.title,
                    })
                    .collect();
            }
            Err(e) => {
                page.ran = false;
                page.error = Some(e.message().to_owned());
            }
        }
    }
    if form.min_trust.is_empty() {
        form.min_trust = engine.min_trust.to_string();
    }
    if form.max_injections.is_empty() {
        form.max_injections = engine.max_injections.to_string();
    }
    if form.mode.is_empty() {
        form.mode = "terms".to_owned();
    }
    page.form = form;
    Ok(page)
}

pub(crate) async fn query(
    State(state): State<AppState>,
    UiQuery(form): UiQuery<QueryForm>,
) -> Response {
    match blocking(&state, move |s| query_page(&s, form)).await {
        Ok(page) => render(&page),
        Err(e) => error_page(&e, "/query"),
    }
}

/// `?done=…&run=…` after a redirect, and the page of a list (from 1).
#[derive(Debug, Default, Deserialize)]
pub(crate) struct Flash {
    done: Option<String>,
    run: Option<String>,
    page: Option<usize>,
}

struct RunRow {
    run_id: String,
    /// The run's reported outcome, when its record was kept.
    outcome: Option<String>,
    actions: String,
    first: String,
    last: String,
}

#[derive(Template)]
#[template(path = "runs.html")]
struct RunsPage {
    nav: &'static str,
    flash: Option<String>,
    runs: Vec<RunRow>,
    pager: Pager,
}

pub(crate) async fn runs(State(state): State<AppState>, UiQuery(f): UiQuery<Flash>) -> Response {
    let page = f.page.unwrap_or(1).max(1);
    let result = blocking(&state, move |s| {
        let all = crate::routes::runs::all_summaries(s.store())?;
        let total = all.len();
        let runs: Vec<RunRow> = all
            .into_iter()
            .skip(Pager::offset(page))
            .take(PAGE_SIZE)
            .map(|r| RunRow {
                actions: r
                    .actions
                    .iter()
                    .map(|(a, n)| format!("{n} {a}"))
                    .collect::<Vec<_>>()
                    .join(", "),
                outcome: load_kept_run(s.store(), &r.run_id).ok().flatten().map(|k| k.status),
                run_id: r.run_id,
                first: r.first,
                last: r.last,
            })
            .collect();
        let pager = Pager::new("/runs", page, total, runs.len(), &[]);
        Ok((runs, pager))
    })
    .await;
    match result {
        Ok((runs, pager)) => render(&RunsPage {
            nav: "runs",
            flash: flash(f.done.as_deref(), f.run.as_deref()),
            runs,
            pager,
        }),
        Err(e) => error_page(&e, "/"),
    }
}

struct DeltaRow {
    action: String,
    id: String,
    title: String,
    place: String,
    change: String,
    reasoning: String,
    diff: EntryDiff,
}

#[derive(Template)]
#[template(path = "run.html")]
struct RunPage {
    nav: &'static str,
    flash: Option<String>,
    run_id: String,
    counts: Vec<(String, usize)>,
    deltas: Vec<DeltaRow>,
    injections: Vec<(u64, Vec<String>)>,
    /// What the run reported, when the store kept it.
    report: Option<KeptRun>,
    /// Why there is no report (none kept, a store that keeps none, an unreadable file).
    no_report: &'static str,
    /// The first failed step (0-based index), the one a failed run's rule blames.
    failed: Option<FailedStep>,
}

/// The failed step, named by its 0-based index (the `--step` / `step_index` a harness used)
/// and, for people, by its ordinal.
struct FailedStep {
    index: usize,
    ordinal: String,
    step: KeptStep,
}

/// `1st`, `2nd`, `3rd`, `4th`, … `11th`, `12th`, `13th`, `21st`.
fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// Why a run page shows no record when none was kept.
const NOT_KEPT: &str = "No run record was kept for this run: it was curated before curator kept \
     run records, or its changes were made by a person or an undo.";

fn run_page(state: &AppState, run_id: String, f: &Flash) -> Result<RunPage, ApiError> {
    validate_run_id(&run_id)?;
    let entries =
        state.store().journal(&JournalFilter { id: None, run_id: Some(run_id.clone()) })?;
    let session = load_session_in(state.store(), &run_id)?;
    let (report, no_report) = match load_kept_run(state.store(), &run_id) {
        Ok(Some(kept)) => (Some(kept), ""),
        Ok(None) => (None, NOT_KEPT),
        Err(curator_store::Error::Unsupported { .. }) => {
            (None, "This store does not keep run records.")
        }
        Err(e) => {
            tracing::warn!("reading the record of run {run_id}: {e}");
            (None, "This run's kept record cannot be read (see the server log).")
        }
    };
    if entries.is_empty() && session.is_none() && report.is_none() {
        return Err(ApiError::not_found(format!(
            "run {run_id} has no session, no record and no journal entry"
        )));
    }
    let counts = summaries(&entries)
        .into_iter()
        .next()
        .map(|s| s.actions.into_iter().collect())
        .unwrap_or_default();
    // The run's outcome evidence (issue 18) is journaled with it but changes no observation:
    // the counters count it, the MemoryLog table lists observation changes only.
    let deltas = entries
        .iter()
        .filter(|e| e.evidence.is_none())
        .map(|e| {
            let snap = e.after.as_ref().or(e.before.as_ref());
            let trust = |s: Option<&curator_core::ObservationSnapshot>| {
                s.map_or("–".to_owned(), |s| s.trust.to_string())
            };
            DeltaRow {
                action: e.action.as_str().to_owned(),
                id: e.id.clone(),
                title: snap.map_or_else(|| e.id.clone(), |s| s.title.clone()),
                place: format!("{}/{}", e.tier, e.scope),
                change: format!("{} → {}", trust(e.before.as_ref()), trust(e.after.as_ref())),
                reasoning: e.reasoning.clone(),
                diff: entry_diff(e),
            }
        })
        .collect();
    let injections = session.map(|s| s.injected.into_iter().collect()).unwrap_or_default();
    let failed = report.as_ref().and_then(KeptRun::first_failed).map(|(index, step)| FailedStep {
        index,
        ordinal: ordinal(index + 1),
        step: step.clone(),
    });
    Ok(RunPage {
        nav: "runs",
        flash: flash(f.done.as_deref(), f.run.as_deref()),
        run_id,
        counts,
        deltas,
        injections,
        report,
        no_report,
        failed,
    })
}

pub(crate) async fn run(
    State(state): State<AppState>,
    Path(run_id): Path<String>,
    UiQuery(f): UiQuery<Flash>,
) -> Response {
    match blocking(&state, move |s| run_page(&s, run_id, &f)).await {
        Ok(page) => render(&page),
        Err(e) => error_page(&e, "/runs"),
    }
}

pub(crate) async fn undo(State(state): State<AppState>, Path(run_id): Path<String>) -> Response {
    let back = format!("/runs/{run_id}");
    match blocking(&state, move |s| Ok(curator_engine::undo::undo(s.store(), &run_id)?)).await {
        Ok(report) => {
            let what = if report.already_applied { "already-undone" } else { "undone" };
            done(&format!("/runs/{}", report.undo_run_id), what, Some(&report.undo_run_id))
        }
        Err(e) => error_page(&e, &back),
    }
}

#[derive(Template)]
#[template(path = "lint.html")]
struct LintPage {
    nav: &'static str,
    flash: Option<String>,
    observations: usize,
    refused: usize,
    problems: Vec<LintProblem>,
    pager: Pager,
}

pub(crate) async fn lint(State(state): State<AppState>, UiQuery(f): UiQuery<Flash>) -> Response {
    let page = f.page.unwrap_or(1).max(1);
    match blocking(&state, |s| report(&s)).await {
        Ok(r) => {
            let refused = r.problems.len();
            let problems: Vec<LintProblem> =
                r.problems.into_iter().skip(Pager::offset(page)).take(PAGE_SIZE).collect();
            let pager = Pager::new("/lint", page, refused, problems.len(), &[]);
            render(&LintPage {
                nav: "lint",
                flash: None,
                observations: r.observations,
                refused,
                problems,
                pager,
            })
        }
        Err(e) => error_page(&e, "/"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinals_read_as_english() {
        let got: Vec<String> = [1, 2, 3, 4, 11, 12, 13, 21, 22, 101, 111].map(ordinal).to_vec();
        assert_eq!(
            got,
            ["1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st", "111th"]
        );
    }
}
