//! The review queue page (issue 18 item 4): proposals an agent or a model made, waiting for a
//! person, each with its probation record and Approve / Reject buttons that call the same
//! functions as `POST /api/v1/pending/{id}/approve|reject` and `curator review`.

use askama::Template;
use axum::extract::{Form, Path, State};
use axum::response::Response;
use curator_core::config::ReviewMode;
use curator_store::evidence::Evidence;

use super::pages::{PageParams, ReasonForm, non_empty};
use super::{UiQuery, done, error_page, flash, render};
use crate::error::ApiError;
use crate::routes::pending;
use crate::state::{AppState, blocking};

struct Pending {
    id: String,
    title: String,
    content: String,
    tier: &'static str,
    scope: String,
    source_test: String,
    evidence: Evidence,
}

#[derive(Template)]
#[template(path = "review.html")]
struct ReviewPage {
    nav: &'static str,
    flash: Option<String>,
    mode: &'static str,
    problems: usize,
    pending: Vec<Pending>,
}

fn review_page(state: &AppState, params: &PageParams) -> Result<ReviewPage, ApiError> {
    let (queue, problems) = pending::queue(state)?;
    Ok(ReviewPage {
        nav: "review",
        flash: flash(params.done.as_deref(), params.run.as_deref()),
        mode: match state.engine().review {
            ReviewMode::Off => "off (proposals go straight to memory)",
            ReviewMode::Auto => "auto (a person, or three passed probation injections, approve)",
            ReviewMode::Manual => "manual (only a person approves)",
        },
        problems,
        pending: queue
            .into_iter()
            .map(|v| Pending {
                id: v.observation.fields.id.clone(),
                title: v.observation.fields.title.clone(),
                content: v.observation.fields.content.clone(),
                tier: v.observation.tier,
                scope: v.observation.scope.clone(),
                source_test: v.observation.fields.source_test.clone(),
                evidence: v.evidence,
            })
            .collect(),
    })
}

pub(crate) async fn page(
    State(state): State<AppState>,
    UiQuery(params): UiQuery<PageParams>,
) -> Response {
    match blocking(&state, move |s| review_page(&s, &params)).await {
        Ok(page) => render(&page),
        Err(e) => error_page(&e, "/review"),
    }
}

async fn decide(state: AppState, id: String, form: ReasonForm, approve: bool) -> Response {
    let result = blocking(&state, move |s| {
        let what = if approve { "approved" } else { "rejected" };
        let reason = non_empty(form.reasoning).unwrap_or_else(|| format!("{what} in the web UI"));
        pending::decide(&s, &id, approve, Some(reason))
    })
    .await;
    match result {
        Ok(outcome) => {
            let what = if approve { "approved" } else { "rejected" };
            done("/review", what, Some(&outcome.run_id))
        }
        Err(e) => error_page(&e, "/review"),
    }
}

pub(crate) async fn approve(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Form(form): Form<ReasonForm>,
) -> Response {
    decide(state, id, form, true).await
}

pub(crate) async fn reject(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Form(form): Form<ReasonForm>,
) -> Response {
    decide(state, id, form, false).await
}
