//! The harness page (issue 6 item 4, issue 15 item 5): layers against their bounds, the tail of
//! raw.md, the archive's dispositions a page at a time (what was promoted, merged, kept,
//! absorbed or dropped, where each entry went and why), the issues with their human actions
//! (acknowledge, close, reopen), and the triage and curate triggers.
//!
//! Every action is a form posting to a UI route that calls the same function as the JSON API
//! (`routes::harness`) and redirects back with a flash, so a reload never repeats it; a refusal
//! (a pass running, an unknown issue, a transition §3.4 does not give a person) is a page naming
//! the reason. Everything is links, buttons and a select: usable from the keyboard alone.

use askama::Template;
use axum::extract::rejection::FormRejection;
use axum::extract::{Form, Path, State};
use axum::response::Response;
use curator_harness::{ArchivePage, ArchiveRecord, Disposition, RawTail, Status};
use serde::Deserialize;

use super::{UiQuery, done, error_page, flash, render};
use crate::error::ApiError;
use crate::routes::harness::{self as api_harness, ArchiveQuery, HarnessView};
use crate::state::{AppState, blocking};

/// Archive records shown per page.
const PAGE: usize = 25;

/// `GET /harness`: the flash of a redirect, and where the archive pane is.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct HarnessQuery {
    done: Option<String>,
    disposition: Option<String>,
    offset: Option<usize>,
}

struct IssueRow {
    id: String,
    title: String,
    severity: &'static str,
    status: &'static str,
    attempts: u32,
    last_note: String,
    /// Which buttons apply (§3.4 human transitions that change something).
    can_acknowledge: bool,
    can_close: bool,
    can_reopen: bool,
}

struct RecordRow {
    at: String,
    who: String,
    disposition: &'static str,
    /// Where it went (targets, the item it became), or where an item was removed from.
    place: String,
    reason: String,
    text: String,
}

fn record_row(r: ArchiveRecord) -> RecordRow {
    let who = [r.role.as_deref(), r.feature.as_deref(), r.trick.then_some("TRICK")]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ");
    let mut place = r.to.join(", ");
    if let Some(item) = r.item.filter(|i| !i.is_empty()) {
        place.push_str(if place.is_empty() { "" } else { " · " });
        place.push_str("as “");
        place.push_str(&item);
        place.push('”');
    }
    if let Some(from) = r.from {
        place.push_str(if place.is_empty() { "" } else { " · " });
        place.push_str("from ");
        place.push_str(&from);
    }
    RecordRow {
        at: r.at.unwrap_or_default(),
        who,
        disposition: r.disposition.as_str(),
        place,
        reason: r.reason.unwrap_or_default(),
        text: r.text,
    }
}

/// The archive pane: counts, the filter, one page and the links around it.
struct ArchivePane {
    /// `(disposition, entries, items)` for every disposition.
    counts: Vec<(&'static str, u64, u64)>,
    filter: String,
    total: u64,
    first: u64,
    last: u64,
    rows: Vec<RecordRow>,
    newer: Option<String>,
    older: Option<String>,
}

fn page_link(filter: &str, offset: usize) -> String {
    let mut link = format!("/harness?offset={offset}");
    if !filter.is_empty() {
        link.push_str("&disposition=");
        link.push_str(filter);
    }
    link.push_str("#archive");
    link
}

fn archive_pane(view: &HarnessView, page: ArchivePage) -> ArchivePane {
    let d = &view.status.dispositions;
    let counts = Disposition::ALL
        .into_iter()
        .map(|x| {
            (
                x.as_str(),
                d.entries.get(&x).copied().unwrap_or(0),
                d.items.get(&x).copied().unwrap_or(0),
            )
        })
        .collect();
    let filter = page.disposition.map_or("", Disposition::as_str).to_owned();
    let shown = page.records.len() as u64;
    let first = if shown == 0 { 0 } else { page.offset as u64 + 1 };
    // Past the end (an old link after records moved, or a typed offset): back to the last page.
    let last_page = page.total.saturating_sub(1) as usize / PAGE * PAGE;
    let newer = (page.offset > 0)
        .then(|| page_link(&filter, page.offset.saturating_sub(PAGE).min(last_page)));
    let older = (page.offset as u64 + shown < page.total)
        .then(|| page_link(&filter, page.offset + page.limit));
    ArchivePane {
        counts,
        total: page.total,
        first,
        last: page.offset as u64 + shown,
        rows: page.records.into_iter().map(record_row).collect(),
        filter,
        newer,
        older,
    }
}

#[derive(Template)]
#[template(path = "harness.html")]
struct HarnessPage {
    nav: &'static str,
    flash: Option<String>,
    harness: Option<HarnessView>,
    issues: Vec<IssueRow>,
    raw: Option<RawTail>,
    archive: Option<ArchivePane>,
}

fn harness_page(
    state: &AppState,
    flash: Option<String>,
    q: &HarnessQuery,
) -> Result<HarnessPage, ApiError> {
    let Some(h) = state.harness() else {
        return Ok(HarnessPage {
            nav: "harness",
            flash,
            harness: None,
            issues: Vec::new(),
            raw: None,
            archive: None,
        });
    };
    let issues = h
        .load_issues()?
        .issues
        .into_iter()
        .map(|i| IssueRow {
            can_acknowledge: i.status == Status::Open,
            can_close: i.status.is_live(),
            can_reopen: !i.status.is_live(),
            last_note: i
                .notes
                .last()
                .map(|n| format!("{} {}: {}", n.ts, n.by, n.text))
                .unwrap_or_default(),
            id: i.id,
            title: i.title,
            severity: i.severity.as_str(),
            status: i.status.as_str(),
            attempts: i.attempts,
        })
        .collect();
    let view = api_harness::view(state)?;
    let page = api_harness::archive_page(
        state,
        &ArchiveQuery { disposition: q.disposition.clone(), offset: q.offset, limit: Some(PAGE) },
    )?;
    let raw = h.raw_tail(api_harness::RAW_TAIL_DEFAULT)?;
    Ok(HarnessPage {
        nav: "harness",
        flash,
        archive: Some(archive_pane(&view, page)),
        harness: Some(view),
        issues,
        raw: Some(raw),
    })
}

/// A query string or form the page's own links and buttons never send (a hand-typed offset, a
/// crafted post) gets the page's refusal, not a bare extractor message.
fn bad_input(what: &str, detail: String) -> Response {
    error_page(&ApiError::bad_request(format!("invalid {what}: {detail}")), "/harness")
}

pub(crate) async fn page(
    State(state): State<AppState>,
    UiQuery(q): UiQuery<HarnessQuery>,
) -> Response {
    let message = flash(q.done.as_deref(), None);
    match blocking(&state, move |s| harness_page(&s, message, &q)).await {
        Ok(page) => render(&page),
        Err(e) => error_page(&e, "/harness"),
    }
}

pub(crate) async fn triage(State(state): State<AppState>) -> Response {
    match blocking(&state, |s| api_harness::run_triage(&s)).await {
        Ok(_) => done("/harness", "triaged", None),
        Err(e) => error_page(&e, "/harness"),
    }
}

pub(crate) async fn curate(State(state): State<AppState>) -> Response {
    match blocking(&state, |s| api_harness::run_curate(&s, None)).await {
        Ok(_) => done("/harness", "curated", None),
        Err(e) => error_page(&e, "/harness"),
    }
}

/// An issue button's form: the status it sets and an optional note.
#[derive(Debug, Deserialize)]
pub(crate) struct StatusForm {
    status: String,
    #[serde(default)]
    note: Option<String>,
}

pub(crate) async fn issue_status(
    State(state): State<AppState>,
    Path(id): Path<String>,
    form: Result<Form<StatusForm>, FormRejection>,
) -> Response {
    let form = match form {
        Ok(Form(form)) => form,
        Err(e) => return bad_input("form", e.body_text()),
    };
    let what = match form.status.as_str() {
        "acknowledged" => "issue-acknowledged",
        "closed" => "issue-closed",
        "open" => "issue-reopened",
        _ => "issue-changed",
    };
    let result = blocking(&state, move |s| {
        api_harness::set_issue_status(&s, &id, &form.status, form.note.as_deref(), None)
    })
    .await;
    match result {
        Ok(_) => done("/harness", what, None),
        Err(e) => error_page(&e, "/harness"),
    }
}
