//! The observation pages: the overview by product / suite / test with trust bars and counters,
//! and one observation with its body, frontmatter, file, journal timeline and the buttons that
//! edit, confirm, deprecate or delete it (issue 6 item 4).

use std::collections::BTreeMap;

use askama::Template;
use axum::extract::{Form, Path, Query, State};
use axum::response::Response;
use curator_core::Tier;
use curator_store::{JournalEntry, JournalFilter, ListFilter, StoredObservation};
use serde::Deserialize;

use super::diff::{EntryDiff, entry_diff};
use super::{done, error_page, flash, render};
use crate::error::ApiError;
use crate::ops::{self, Edit};
use crate::state::{AppState, blocking};

/// `?done=…&run=…` after a redirect, plus the overview's filters.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct PageParams {
    done: Option<String>,
    run: Option<String>,
    q: Option<String>,
    tier: Option<String>,
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

fn overview_page(state: &AppState, params: PageParams) -> Result<Overview, ApiError> {
    let tier =
        params.tier.as_deref().filter(|t| !t.is_empty()).map(str::parse::<Tier>).transpose()?;
    let listing = state.store().list(&ListFilter { tier, scope: None })?;
    let needle = params.q.as_deref().map(str::to_lowercase).filter(|q| !q.trim().is_empty());
    let shown: Vec<&StoredObservation> = listing
        .observations
        .iter()
        .filter(|s| {
            needle.as_ref().is_none_or(|n| {
                s.observation.title.to_lowercase().contains(n)
                    || s.observation.content.to_lowercase().contains(n)
            })
        })
        .collect();
    let mut by_place: BTreeMap<(Tier, String), Vec<&StoredObservation>> = BTreeMap::new();
    for s in &shown {
        by_place.entry((s.tier, s.scope.as_str().to_owned())).or_default().push(s);
    }
    let mut groups: Vec<TierGroup> = Vec::new();
    for ((tier, scope), mut items) in by_place {
        items.sort_by(|a, b| b.observation.trust.total_cmp(&a.observation.trust));
        let label = match tier {
            Tier::Products => "Products",
            Tier::Suites => "Suites",
            Tier::Tests => "Tests",
        };
        if groups.last().is_none_or(|g| g.tier_label != label) {
            groups.push(TierGroup { tier_label: label, scopes: Vec::new() });
        }
        let avg_trust = mean(items.iter().map(|s| s.observation.trust));
        let rows = items.into_iter().map(row).collect();
        if let Some(g) = groups.last_mut() {
            g.scopes.push(ScopeGroup { scope, avg_trust, rows });
        }
    }
    let count = |t: Tier| shown.iter().filter(|s| s.tier == t).count();
    Ok(Overview {
        nav: "observations",
        flash: flash(params.done.as_deref(), params.run.as_deref()),
        root: state.root().display().to_string(),
        total: shown.len(),
        tier_counts: vec![
            ("product-tier observations", count(Tier::Products)),
            ("suite-tier observations", count(Tier::Suites)),
            ("test-tier observations", count(Tier::Tests)),
        ],
        avg_trust: mean(shown.iter().map(|s| s.observation.trust)),
        low_trust: shown.iter().filter(|s| s.observation.trust < 0.3).count(),
        problems: listing.problems.len(),
        q: params.q.unwrap_or_default(),
        tier_options: Tier::ALL.iter().map(|t| (t.dir_name(), Some(*t) == tier)).collect(),
        groups,
    })
}

pub(crate) async fn overview(
    State(state): State<AppState>,
    Query(params): Query<PageParams>,
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
            action: serde_json::to_value(e.action)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default(),
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
}

fn observation_page(
    state: &AppState,
    raw_id: &str,
    params: &PageParams,
) -> Result<ObservationPage, ApiError> {
    let id = ops::parse_id(raw_id)?;
    let stored = state.store().get(&id)?;
    let entries =
        state.store().journal(&JournalFilter { id: Some(id.to_string()), run_id: None })?;
    let o = &stored.observation;
    let rel = format!("{}/{}/{}.md", stored.tier.dir_name(), stored.scope, id);
    // The id was parsed and the scope came from the store, so this stays under the root.
    let file_text = std::fs::read_to_string(state.root().join(&rel))
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
    })
}

pub(crate) async fn observation(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(params): Query<PageParams>,
) -> Response {
    match blocking(&state, move |s| observation_page(&s, &id, &params)).await {
        Ok(page) => render(&page),
        Err(e) => error_page(&e, "/"),
    }
}

/// The fields of the edit form (all strings: an empty one means "unchanged").
#[derive(Debug, Default, Deserialize)]
pub(crate) struct EditForm {
    #[serde(default)]
    title: String,
    #[serde(default)]
    content: String,
    #[serde(default)]
    trust: String,
    #[serde(default)]
    reasoning: String,
}

/// The reason field of the confirm / deprecate / delete forms.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct ReasonForm {
    #[serde(default)]
    reasoning: String,
}

fn non_empty(s: String) -> Option<String> {
    if s.trim().is_empty() { None } else { Some(s) }
}

fn parse_edit(form: EditForm) -> Result<Edit, ApiError> {
    let trust = match form.trust.trim() {
        "" => None,
        t => Some(t.parse::<f64>().map_err(|_| {
            ApiError::bad_request(format!("trust must be a number in [0, 1], got {t:?}"))
        })?),
    };
    Ok(Edit {
        title: non_empty(form.title),
        content: non_empty(form.content),
        trust,
        reasoning: non_empty(form.reasoning),
    })
}

pub(crate) async fn edit(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Form(form): Form<EditForm>,
) -> Response {
    let page = format!("/observations/{id}");
    let result = blocking(&state, move |s| {
        let id = ops::parse_id(&id)?;
        ops::edit(&s, &id, parse_edit(form)?)
    })
    .await;
    match result {
        Ok(changed) => done(&page, "edited", Some(&changed.run_id)),
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
            Click::Confirm => ops::confirm(&s, &id, reason),
            Click::Deprecate => ops::deprecate(&s, &id, reason),
            Click::Delete => ops::delete(&s, &id, reason),
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
