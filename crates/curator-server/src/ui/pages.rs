//! The observation pages: the overview by product / suite / test with trust bars and counters,
//! and one observation with its body, frontmatter, file, journal timeline and the buttons that
//! edit, confirm, deprecate or delete it (issue 6 item 4).
//!
//! The overview shows one page of [`PAGE_SIZE`] observations at a time, in (tier, scope, id)
//! order (issue 13 item 3: a 20,000-observation root rendered one 8.7 MB page). Without a text
//! filter it reads only the page's files: the counters come from folder names
//! ([`curator_store::Store::list_page`]), so they count observation files, and the trust
//! figures and problems are those of the page (`/lint` reads everything). A text filter reads
//! every file of the chosen tier, since it searches their text.

use askama::Template;
use axum::extract::{Form, Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use curator_core::{ScopeName, Tier};
use curator_store::{JournalEntry, JournalFilter, ListFilter, ListingPage, StoredObservation};
use serde::Deserialize;

use super::diff::{EntryDiff, entry_diff};
use super::{PAGE_SIZE, Pager, UiQuery, done, error_page, flash, render};
use crate::error::ApiError;
use crate::ops::{self, Edit};
use crate::state::{AppState, blocking};

/// `?done=…&run=…` after a redirect, plus the overview's filters and page number (from 1).
#[derive(Debug, Default, Deserialize)]
pub(crate) struct PageParams {
    pub(crate) done: Option<String>,
    pub(crate) run: Option<String>,
    q: Option<String>,
    tier: Option<String>,
    page: Option<usize>,
}

struct Row {
    id: String,
    title: String,
    trust: String,
    confirmed: u64,
    contradicted: u64,
    last_confirmed: String,
}

struct ScopeGroup {
    scope: String,
    /// Observation files of the scope (on every page).
    count: usize,
    /// Of the scope's observations on this page.
    avg_trust: String,
    rows: Vec<Row>,
}

struct TierGroup {
    tier_label: &'static str,
    scopes: Vec<ScopeGroup>,
}

#[derive(Template)]
#[template(path = "overview.html")]
struct Overview {
    nav: &'static str,
    flash: Option<String>,
    root: String,
    total: usize,
    tier_counts: Vec<(&'static str, usize)>,
    scopes: usize,
    pager: Pager,
    avg_trust: String,
    low_trust: usize,
    problems: usize,
    q: String,
    tier_options: Vec<(&'static str, bool)>,
    groups: Vec<TierGroup>,
}

fn mean(trusts: impl Iterator<Item = f64>) -> String {
    let (sum, n) = trusts.fold((0.0, 0usize), |(s, n), t| (s + t, n + 1));
    if n == 0 { "–".to_owned() } else { format!("{:.2}", sum / n as f64) }
}

fn row(s: &StoredObservation) -> Row {
    let o = &s.observation;
    Row {
        id: o.id.to_string(),
        title: o.title.clone(),
        trust: o.trust.to_string(),
        confirmed: o.confirmed_count,
        contradicted: o.contradicted_count,
        last_confirmed: o.last_confirmed.clone(),
    }
}

/// What one overview page shows: the page's observations and problems, the scopes the filter
/// matches with their counts, and the total.
struct Shown {
    total: usize,
    /// Files on this page, served or not.
    on_page: usize,
    scopes: Vec<(Tier, ScopeName, usize)>,
    observations: Vec<StoredObservation>,
    problems: usize,
}

/// The page's observations: only the page's files without a text filter, every file of the
/// tier with one.
fn shown(
    state: &AppState,
    filter: &ListFilter,
    needle: Option<&str>,
    offset: usize,
) -> Result<Shown, ApiError> {
    let Some(needle) = needle else {
        let page = state.store().list_page(filter, offset, PAGE_SIZE)?;
        let problems = page.problems.len();
        return Ok(Shown {
            total: page.total,
            on_page: page.observations.len() + problems,
            scopes: page.scopes,
            observations: page.observations,
            problems,
        });
    };
    let listing = state.store().list(filter)?;
    let matching: Vec<StoredObservation> = listing
        .observations
        .into_iter()
        .filter(|s| {
            s.observation.title.to_lowercase().contains(needle)
                || s.observation.content.to_lowercase().contains(needle)
        })
        .collect();
    let mut page = ListingPage::from_listing(
        curator_store::Listing { observations: matching, problems: Vec::new() },
        offset,
        PAGE_SIZE,
    );
    page.problems = listing.problems;
    Ok(Shown {
        total: page.total,
        on_page: page.observations.len(),
        scopes: page.scopes,
        observations: page.observations,
        problems: page.problems.len(),
    })
}

fn overview_page(state: &AppState, params: PageParams) -> Result<Overview, ApiError> {
    let tier_text = params.tier.clone().unwrap_or_default();
    let tier =
        Some(tier_text.as_str()).filter(|t| !t.is_empty()).map(str::parse::<Tier>).transpose()?;
    let needle = params.q.as_deref().map(|q| q.trim().to_lowercase()).filter(|q| !q.is_empty());
    let page = params.page.unwrap_or(1).max(1);
    let offset = Pager::offset(page);
    let filter = ListFilter { tier, scope: None };
    let shown = shown(state, &filter, needle.as_deref(), offset)?;
    // The counters of every tier: from this walk when it covered them all, else from a walk
    // of folder names (no file is read).
    let all_scopes = if tier.is_none() || needle.is_some() {
        shown.scopes.clone()
    } else {
        state.store().list_page(&ListFilter::default(), 0, 0)?.scopes
    };
    let count = |t: Tier| all_scopes.iter().filter(|(tier, ..)| *tier == t).map(|(.., n)| n).sum();
    let scope_count: std::collections::HashMap<(Tier, &str), usize> =
        shown.scopes.iter().map(|(t, s, n)| ((*t, s.as_str()), *n)).collect();
    // Within a scope, the page's rows by trust, highest first (the page itself is cut in
    // (tier, scope, id) order, so every page can be found without reading the others).
    let mut on_page: Vec<&StoredObservation> = shown.observations.iter().collect();
    on_page.sort_by(|a, b| {
        (a.tier, a.scope.as_str())
            .cmp(&(b.tier, b.scope.as_str()))
            .then(b.observation.trust.total_cmp(&a.observation.trust))
    });
    let mut groups: Vec<TierGroup> = Vec::new();
    for s in on_page {
        let label = match s.tier {
            Tier::Products => "Products",
            Tier::Suites => "Suites",
            Tier::Tests => "Tests",
        };
        if groups.last().is_none_or(|g| g.tier_label != label) {
            groups.push(TierGroup { tier_label: label, scopes: Vec::new() });
        }
        let Some(g) = groups.last_mut() else { continue };
        if g.scopes.last().is_none_or(|group| group.scope != s.scope.as_str()) {
            let count = scope_count.get(&(s.tier, s.scope.as_str())).copied().unwrap_or(0);
            let avg_trust = mean(
                shown
                    .observations
                    .iter()
                    .filter(|o| o.tier == s.tier && o.scope == s.scope)
                    .map(|o| o.observation.trust),
            );
            let scope = s.scope.to_string();
            g.scopes.push(ScopeGroup { scope, count, avg_trust, rows: Vec::new() });
        }
        if let Some(group) = g.scopes.last_mut() {
            group.rows.push(row(s));
        }
    }
    let q = params.q.unwrap_or_default();
    let pager =
        Pager::new("/", page, shown.total, shown.on_page, &[("q", &q), ("tier", &tier_text)]);
    Ok(Overview {
        nav: "observations",
        flash: flash(params.done.as_deref(), params.run.as_deref()),
        root: state.root().display().to_string(),
        total: shown.total,
        tier_counts: vec![
            ("product-tier observations", count(Tier::Products)),
            ("suite-tier observations", count(Tier::Suites)),
            ("test-tier observations", count(Tier::Tests)),
        ],
        scopes: shown.scopes.len(),
        pager,
        avg_trust: mean(shown.observations.iter().map(|s| s.observation.trust)),
        low_trust: shown.observations.iter().filter(|s| s.observation.trust < 0.3).count(),
        problems: shown.problems,
        q,
        tier_options: Tier::ALL.iter().map(|t| (t.dir_name(), Some(*t) == tier)).collect(),
        groups,
    })
}

pub(crate) async fn overview(
    State(state): State<AppState>,
    UiQuery(params): UiQuery<PageParams>,
) -> Response {
    match blocking(&state, move |s| overview_page(&s, params)).await {
        Ok(page) => render(&page),
        Err(e) => error_page(&e, "/"),
    }
}

struct TimelineItem {
    time: String,
    action: String,
    run_id: Option<String>,
    change: String,
    reasoning: String,
    diff: EntryDiff,
}

/// One line saying what an entry changed.
fn describe(e: &JournalEntry) -> String {
    match (&e.before, &e.after) {
        (None, Some(a)) => format!("created with trust {}", a.trust),
        (Some(b), None) => format!("deleted (trust was {})", b.trust),
        (Some(b), Some(a)) => {
            let mut parts = Vec::new();
            if b.trust != a.trust {
                parts.push(format!("trust {} → {}", b.trust, a.trust));
            }
            if b.title != a.title {
                parts.push("title changed".to_owned());
            }
            if b.content != a.content {
                parts.push("content changed".to_owned());
            }
            if parts.is_empty() { "no field changed".to_owned() } else { parts.join(", ") }
        }
        (None, None) => "file restored or removed".to_owned(),
    }
}

fn timeline(entries: Vec<JournalEntry>) -> Vec<TimelineItem> {
    entries
        .into_iter()
        .rev()
        .map(|e| TimelineItem {
            change: describe(&e),
            diff: entry_diff(&e),
            action: e.action.as_str().to_owned(),
            time: e.time,
            run_id: e.run_id,
            reasoning: e.reasoning,
        })
        .collect()
}

#[derive(Template)]
#[template(path = "observation.html")]
struct ObservationPage {
    nav: &'static str,
    flash: Option<String>,
    id: String,
    tier: &'static str,
    scope: String,
    title: String,
    content: String,
    trust: String,
    confirmed: u64,
    contradicted: u64,
    fields: Vec<(&'static str, String)>,
    path: String,
    file_text: String,
    timeline: Vec<TimelineItem>,
    evidence: curator_store::evidence::Evidence,
    /// One key per rendered page: each form sends it, so a second submit of it is one change.
    form_key: String,
    /// [`ops::version`] of the observation shown, which the edit form sends back.
    version: String,
    /// What the edit form holds: the observation's values, or what a refused edit sent.
    form_title: String,
    form_content: String,
    form_trust: String,
    form_reasoning: String,
    /// Why the last edit was refused (the form keeps what was typed).
    error: Option<String>,
}

/// A refused edit: what was typed, and why it was refused.
type Refused<'a> = (&'a EditForm, &'a str);

fn observation_page(
    state: &AppState,
    raw_id: &str,
    params: &PageParams,
    refused: Option<Refused<'_>>,
) -> Result<ObservationPage, ApiError> {
    let id = ops::parse_id(raw_id)?;
    let stored = state.store().get(&id)?;
    let place = curator_store::Place::Memory;
    let evidence =
        crate::routes::pending::with_evidence(state, std::slice::from_ref(&stored), place)?
            .remove(0)
            .evidence;
    let entries =
        state.store().journal(&JournalFilter { id: Some(id.to_string()), run_id: None })?;
    let o = &stored.observation;
    let rel = format!("{}/{}/{}.md", stored.tier.dir_name(), stored.scope, id);
    // The id was parsed and the scope came from the store, so this stays under the root.
    let file_text = curator_store::read_regular_to_string(
        &state.root().join(&rel),
        curator_store::MAX_STATE_FILE,
    )
    .unwrap_or_else(|e| format!("(cannot read the file: {e})"));
    let mut fields = vec![
        ("id", o.id.to_string()),
        ("trust", o.trust.to_string()),
        ("created", o.created.clone()),
        ("last_confirmed", o.last_confirmed.clone()),
        ("confirmed_count", o.confirmed_count.to_string()),
        ("contradicted_count", o.contradicted_count.to_string()),
        ("source_test", o.source_test.clone()),
    ];
    if let Some(suite) = &o.suite {
        fields.push(("position", suite.position.to_string()));
        let tests: Vec<String> =
            suite.suite_snapshot.iter().map(|e| format!("{} ({})", e.test, e.id)).collect();
        fields.push(("suite_snapshot", tests.join(", ")));
    }
    Ok(ObservationPage {
        nav: "observations",
        flash: flash(params.done.as_deref(), params.run.as_deref()),
        id: id.to_string(),
        tier: stored.tier.dir_name(),
        scope: stored.scope.to_string(),
        title: o.title.clone(),
        content: o.content.clone(),
        trust: o.trust.to_string(),
        confirmed: o.confirmed_count,
        contradicted: o.contradicted_count,
        fields,
        path: rel,
        file_text,
        timeline: timeline(entries),
        evidence,
        form_key: curator_core::generate_run_id(),
        version: ops::version(o),
        form_title: refused.map_or_else(|| o.title.clone(), |(f, _)| f.title.clone()),
        form_content: refused.map_or_else(|| o.content.clone(), |(f, _)| f.content.clone()),
        form_trust: refused.map_or_else(|| o.trust.to_string(), |(f, _)| f.trust.clone()),
        form_reasoning: refused.map(|(f, _)| f.reasoning.clone()).unwrap_or_default(),
        error: refused.map(|(_, why)| why.to_owned()),
    })
}

pub(crate) async fn observation(
    State(state): State<AppState>,
    Path(id): Path<String>,
    UiQuery(params): UiQuery<PageParams>,
) -> Response {
    match blocking(&state, move |s| observation_page(&s, &id, &params, None)).await {
        Ok(page) => render(&page),
        Err(e) => error_page(&e, "/"),
    }
}

/// The fields of the edit form (all strings: an empty one means "unchanged").
#[derive(Debug, Default, Clone, Deserialize)]
pub(crate) struct EditForm {
    #[serde(default)]
    title: String,
    #[serde(default)]
    content: String,
    #[serde(default)]
    trust: String,
    #[serde(default)]
    reasoning: String,
    /// The page's key ([`ops::Once::of_form`]).
    #[serde(default)]
    form_key: String,
    /// The [`ops::version`] the page showed: saving refuses if the observation changed since.
    #[serde(default)]
    version: String,
}

/// The reason field of the confirm / deprecate / delete forms, and the page's key.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct ReasonForm {
    #[serde(default)]
    pub(crate) reasoning: String,
    #[serde(default)]
    pub(crate) form_key: String,
}

pub(crate) fn non_empty(s: String) -> Option<String> {
    if s.trim().is_empty() { None } else { Some(s) }
}

fn parse_edit(form: &EditForm) -> Result<Edit, ApiError> {
    let trust = match form.trust.trim() {
        "" => None,
        t => Some(t.parse::<f64>().map_err(|_| {
            ApiError::bad_request(format!("trust must be a number in [0, 1], got {t:?}"))
        })?),
    };
    Ok(Edit {
        title: non_empty(form.title.clone()),
        content: non_empty(form.content.clone()),
        trust,
        reasoning: non_empty(form.reasoning.clone()),
    })
}

pub(crate) async fn edit(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Form(form): Form<EditForm>,
) -> Response {
    let page = format!("/observations/{id}");
    let result = blocking(&state, move |s| {
        let parsed = ops::parse_id(&id)?;
        let once = ops::Once::of_form(&form.form_key, "edit");
        let seen = non_empty(form.version.clone());
        match parse_edit(&form).and_then(|e| ops::edit(&s, &parsed, e, &once, seen.as_deref())) {
            Ok(changed) => Ok(Ok(changed)),
            // Refused (stale, empty, out of range): the page again, current values above and
            // what was typed in the form, so nothing typed is lost.
            Err(e) if e.status().is_client_error() && e.status() != StatusCode::NOT_FOUND => {
                let shown =
                    observation_page(&s, &id, &PageParams::default(), Some((&form, e.message())))?;
                Ok(Err((e.status(), shown)))
            }
            Err(e) => Err(e),
        }
    })
    .await;
    match result {
        // Nothing changed, nothing journaled: there is no run to offer to undo.
        Ok(Ok(changed)) if changed.unchanged => done(&page, "unchanged", None),
        Ok(Ok(changed)) => done(&page, "edited", Some(&changed.run_id)),
        Ok(Err((status, shown))) => (status, render(&shown)).into_response(),
        Err(e) => error_page(&e, &page),
    }
}

/// Which one-click action a form asked for.
#[derive(Debug, Clone, Copy)]
enum Click {
    Confirm,
    Deprecate,
    Delete,
}

async fn click(state: AppState, id: String, form: ReasonForm, click: Click) -> Response {
    let page = format!("/observations/{id}");
    let result = blocking(&state, move |s| {
        let id = ops::parse_id(&id)?;
        let reason = non_empty(form.reasoning);
        match click {
            Click::Confirm => {
                ops::confirm(&s, &id, reason, &ops::Once::of_form(&form.form_key, "confirm"))
            }
            Click::Deprecate => {
                ops::deprecate(&s, &id, reason, &ops::Once::of_form(&form.form_key, "deprecate"))
            }
            Click::Delete => {
                ops::delete(&s, &id, reason, &ops::Once::of_form(&form.form_key, "delete"))
            }
        }
    })
    .await;
    match result {
        // A deprecation that reached trust 0 deleted the file: there is no page to go back to.
        Ok(changed) if changed.after.is_none() => done("/", "deleted", Some(&changed.run_id)),
        Ok(changed) => {
            let what = match click {
                Click::Confirm => "confirmed",
                Click::Deprecate => "deprecated",
                Click::Delete => "deleted",
            };
            done(&page, what, Some(&changed.run_id))
        }
        Err(e) => error_page(&e, &page),
    }
}

pub(crate) async fn confirm(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Form(form): Form<ReasonForm>,
) -> Response {
    click(state, id, form, Click::Confirm).await
}

pub(crate) async fn deprecate(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Form(form): Form<ReasonForm>,
) -> Response {
    click(state, id, form, Click::Deprecate).await
}

pub(crate) async fn delete(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Form(form): Form<ReasonForm>,
) -> Response {
    click(state, id, form, Click::Delete).await
}
