//! The review list and the create form (issue 15 item 5).
//!
//! `/observations` is one flat table of observations a reviewer can sort (by trust, recency,
//! contradictions) and narrow (low trust, contradicted, a tier, a text) with plain links and a
//! GET form, so every view has a URL, works without JavaScript and survives a reload. It shows
//! [`PAGE_SIZE`] rows at a time, with pager links that keep the sort and the filters, so every
//! observation of a large root can be reached. The overview (`/`) stays the by-scope map; this
//! page answers "what should I look at first".
//!
//! `/observations/new` writes an observation through [`ops::create`], the function behind
//! `POST /api/v1/observations`: the same scope-name rules, the same scanner, the same journal
//! entry under a fresh run id. A refused form is shown again with its values and the reason.

use askama::Template;
use axum::extract::{Form, State};
use axum::response::{IntoResponse, Response};
use curator_core::Tier;
use curator_store::{ListFilter, StoredObservation};
use serde::Deserialize;

use super::{PAGE_SIZE, Pager, UiQuery, done, error_page, render};
use crate::error::ApiError;
use crate::ops::{self, NewObservation};
use crate::state::{AppState, blocking};

/// How the list is ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sort {
    /// Lowest trust first: what the curator believes least.
    Trust,
    /// Most recently confirmed (or created) first.
    Recency,
    /// Most contradicted first.
    Contradictions,
}

impl Sort {
    const ALL: [(Sort, &'static str, &'static str); 3] = [
        (Sort::Trust, "trust", "lowest trust first"),
        (Sort::Recency, "recency", "most recently confirmed first"),
        (Sort::Contradictions, "contradictions", "most contradicted first"),
    ];

    fn parse(raw: &str) -> Result<Sort, ApiError> {
        Sort::ALL.iter().find(|(_, name, _)| *name == raw).map(|(s, _, _)| *s).ok_or_else(|| {
            ApiError::bad_request(format!(
                "unknown sort {raw:?}: use trust, recency or contradictions"
            ))
        })
    }
}

/// Which observations the list keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Show {
    All,
    /// Below the injection floor (trust < 0.3): stored but never injected.
    Low,
    /// Contradicted at least once.
    Contradicted,
}

impl Show {
    const ALL: [(Show, &'static str, &'static str); 3] = [
        (Show::All, "all", "all"),
        (Show::Low, "low", "below 0.3 trust (not injected)"),
        (Show::Contradicted, "contradicted", "contradicted at least once"),
    ];

    fn parse(raw: &str) -> Result<Show, ApiError> {
        Show::ALL.iter().find(|(_, name, _)| *name == raw).map(|(s, _, _)| *s).ok_or_else(|| {
            ApiError::bad_request(format!("unknown filter {raw:?}: use all, low or contradicted"))
        })
    }

    fn keeps(self, s: &StoredObservation) -> bool {
        match self {
            Show::All => true,
            Show::Low => s.observation.trust < 0.3,
            Show::Contradicted => s.observation.contradicted_count > 0,
        }
    }
}

/// `/observations?sort=…&show=…&tier=…&q=…&page=…`.
#[derive(Debug, Default, Clone, Deserialize)]
pub(crate) struct ListParams {
    #[serde(default)]
    sort: String,
    #[serde(default)]
    show: String,
    #[serde(default)]
    tier: String,
    #[serde(default)]
    q: String,
    /// From 1; 0 or absent is the first page.
    #[serde(default)]
    page: usize,
}

impl ListParams {
    /// The sort and the filters, which every link of the list keeps (not the page).
    fn view(&self) -> [(&'static str, &str); 4] {
        [("sort", &self.sort), ("show", &self.show), ("tier", &self.tier), ("q", &self.q)]
    }

    /// This list's URL with one parameter replaced; empty parameters are left out.
    fn href_with(&self, key: &str, value: &str) -> String {
        let pairs: Vec<(&str, &str)> = self
            .view()
            .into_iter()
            .map(|(k, v)| if k == key { (k, value) } else { (k, v) })
            .filter(|(_, v)| !v.is_empty())
            .collect();
        let query = serde_urlencoded::to_string(&pairs).unwrap_or_default();
        if query.is_empty() { "/observations".to_owned() } else { format!("/observations?{query}") }
    }
}

/// A link that switches the list to one sort or filter; `current` marks the one in force.
struct Choice {
    label: &'static str,
    href: String,
    current: bool,
}

struct ListRow {
    id: String,
    title: String,
    tier: &'static str,
    scope: String,
    trust: String,
    confirmed: u64,
    contradicted: u64,
    last_confirmed: String,
}

#[derive(Template)]
#[template(path = "list.html")]
struct ListPage {
    nav: &'static str,
    flash: Option<String>,
    matching: usize,
    stored: usize,
    sort_label: &'static str,
    sorts: Vec<Choice>,
    shows: Vec<Choice>,
    tier_options: Vec<(&'static str, bool)>,
    sort: String,
    show: String,
    q: String,
    rows: Vec<ListRow>,
    pager: Pager,
}

/// The newer of the two times an observation carries (ISO strings compare as times).
fn recency(s: &StoredObservation) -> &str {
    let o = &s.observation;
    if o.last_confirmed >= o.created { &o.last_confirmed } else { &o.created }
}

fn list_page(state: &AppState, params: ListParams) -> Result<ListPage, ApiError> {
    let sort = match params.sort.as_str() {
        "" => Sort::Trust,
        raw => Sort::parse(raw)?,
    };
    let show = match params.show.as_str() {
        "" => Show::All,
        raw => Show::parse(raw)?,
    };
    let tier = Some(params.tier.as_str()).filter(|t| !t.is_empty()).map(str::parse::<Tier>);
    let tier = tier.transpose()?;
    let listing = state.store().list(&ListFilter { tier, scope: None })?;
    let stored = listing.observations.len();
    let needle = params.q.trim().to_lowercase();
    let mut kept: Vec<&StoredObservation> = listing
        .observations
        .iter()
        .filter(|s| show.keeps(s))
        .filter(|s| {
            needle.is_empty()
                || s.observation.title.to_lowercase().contains(&needle)
                || s.observation.content.to_lowercase().contains(&needle)
        })
        .collect();
    // Ties keep the store's (tier, scope, id) order: sort_by is stable.
    match sort {
        Sort::Trust => kept.sort_by(|a, b| a.observation.trust.total_cmp(&b.observation.trust)),
        Sort::Recency => kept.sort_by(|a, b| recency(b).cmp(recency(a))),
        Sort::Contradictions => kept.sort_by(|a, b| {
            b.observation
                .contradicted_count
                .cmp(&a.observation.contradicted_count)
                .then(a.observation.trust.total_cmp(&b.observation.trust))
        }),
    }
    let matching = kept.len();
    let page = params.page.max(1);
    let rows: Vec<ListRow> = kept
        .into_iter()
        .skip(Pager::offset(page))
        .take(PAGE_SIZE)
        .map(|s| ListRow {
            id: s.observation.id.to_string(),
            title: s.observation.title.clone(),
            tier: s.tier.dir_name(),
            scope: s.scope.to_string(),
            trust: s.observation.trust.to_string(),
            confirmed: s.observation.confirmed_count,
            contradicted: s.observation.contradicted_count,
            last_confirmed: recency(s).to_owned(),
        })
        .collect();
    let sort_name = Sort::ALL.iter().find(|(s, _, _)| *s == sort).map_or("trust", |c| c.1);
    let show_name = Show::ALL.iter().find(|(s, _, _)| *s == show).map_or("all", |c| c.1);
    let pager = Pager::new("/observations", page, matching, rows.len(), &params.view());
    Ok(ListPage {
        nav: "list",
        flash: None,
        matching,
        stored,
        sort_label: Sort::ALL.iter().find(|(s, _, _)| *s == sort).map_or("", |c| c.2),
        sorts: Sort::ALL
            .iter()
            .map(|(s, name, label)| Choice {
                label,
                href: params.href_with("sort", name),
                current: *s == sort,
            })
            .collect(),
        shows: Show::ALL
            .iter()
            .map(|(s, name, label)| Choice {
                label,
                href: params.href_with("show", if *s == Show::All { "" } else { name }),
                current: *s == show,
            })
            .collect(),
        tier_options: Tier::ALL.iter().map(|t| (t.dir_name(), Some(*t) == tier)).collect(),
        sort: sort_name.to_owned(),
        show: show_name.to_owned(),
        q: params.q,
        rows,
        pager,
    })
}

pub(crate) async fn list(
    State(state): State<AppState>,
    UiQuery(params): UiQuery<ListParams>,
) -> Response {
    match blocking(&state, move |s| list_page(&s, params)).await {
        Ok(page) => render(&page),
        Err(e) => error_page(&e, "/observations"),
    }
}

/// The create form's fields, echoed back when the form is refused.
#[derive(Debug, Default, Clone, Deserialize)]
pub(crate) struct CreateForm {
    #[serde(default)]
    tier: String,
    #[serde(default)]
    scope: String,
    #[serde(default)]
    title: String,
    #[serde(default)]
    content: String,
    #[serde(default)]
    source_test: String,
    #[serde(default)]
    trust: String,
    #[serde(default)]
    reasoning: String,
    /// The page's key ([`ops::Once::of_form`]): a second submit creates nothing more.
    #[serde(default)]
    form_key: String,
}

#[derive(Template)]
#[template(path = "create.html")]
struct CreatePage {
    nav: &'static str,
    flash: Option<String>,
    error: Option<String>,
    form: CreateForm,
    tiers: Vec<(&'static str, &'static str, bool)>,
    scopes: Vec<String>,
}

fn create_page(
    state: &AppState,
    form: CreateForm,
    error: Option<String>,
) -> Result<CreatePage, ApiError> {
    let listing = state.store().list(&ListFilter::default())?;
    let mut scopes: Vec<String> =
        listing.observations.iter().map(|s| s.scope.to_string()).collect();
    scopes.sort();
    scopes.dedup();
    let tiers = [
        ("products", "product: true for every test of the product"),
        ("suites", "suite: true within one suite"),
        ("tests", "test: true for one test"),
    ]
    .into_iter()
    .map(|(name, label)| (name, label, form.tier == name))
    .collect();
    let mut form = form;
    if form.form_key.trim().is_empty() {
        form.form_key = curator_core::generate_run_id();
    }
    Ok(CreatePage { nav: "new", flash: None, error, form, tiers, scopes })
}

pub(crate) async fn new_form(State(state): State<AppState>) -> Response {
    match blocking(&state, |s| create_page(&s, CreateForm::default(), None)).await {
        Ok(page) => render(&page),
        Err(e) => error_page(&e, "/"),
    }
}

fn to_new(form: &CreateForm) -> Result<NewObservation, ApiError> {
    let trust = match form.trust.trim() {
        "" => None,
        t => Some(t.parse::<f64>().map_err(|_| {
            ApiError::bad_request(format!("trust must be a number in [0, 1], got {t:?}"))
        })?),
    };
    let reasoning = form.reasoning.trim();
    Ok(NewObservation {
        tier: form.tier.clone(),
        scope: form.scope.trim().to_owned(),
        title: form.title.clone(),
        content: form.content.clone(),
        source_test: form.source_test.trim().to_owned(),
        trust,
        position: None,
        suite_tests: None,
        reasoning: Some(if reasoning.is_empty() {
            "added in the web UI".to_owned()
        } else {
            reasoning.to_owned()
        }),
    })
}

pub(crate) async fn create(
    State(state): State<AppState>,
    Form(form): Form<CreateForm>,
) -> Response {
    let result = blocking(&state, move |s| {
        let once = ops::Once::of_form(&form.form_key, "create");
        let outcome = to_new(&form).and_then(|new| ops::create(&s, new, &once));
        match outcome {
            Ok(changed) => Ok(Ok(changed)),
            // A refusal shows the form again, filled in, with the reason and the error's status.
            Err(e) if e.status().is_client_error() => {
                let page = create_page(&s, form, Some(e.message().to_owned()))?;
                Ok(Err((e.status(), page)))
            }
            Err(e) => Err(e),
        }
    })
    .await;
    match result {
        Ok(Ok(changed)) => {
            done(&format!("/observations/{}", changed.id), "created", Some(&changed.run_id))
        }
        Ok(Err((status, page))) => (status, render(&page)).into_response(),
        Err(e) => error_page(&e, "/observations/new"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_keep_the_other_parameters_and_encode_them() {
        let p = ListParams {
            sort: "recency".into(),
            show: String::new(),
            tier: "tests".into(),
            q: "a b&c".into(),
            page: 3,
        };
        // A new sort or filter starts again at the first page.
        assert_eq!(
            p.href_with("show", "low"),
            "/observations?sort=recency&show=low&tier=tests&q=a+b%26c"
        );
        assert_eq!(ListParams::default().href_with("sort", ""), "/observations");
    }

    #[test]
    fn unknown_sorts_and_filters_are_refused_by_name() {
        assert_eq!(Sort::parse("contradictions").unwrap(), Sort::Contradictions);
        assert!(Sort::parse("size").unwrap_err().message().contains("size"));
        assert!(Show::parse("<b>").unwrap_err().message().contains("use all, low"));
    }

    #[test]
    fn a_blank_trust_is_the_default_and_a_word_is_refused() {
        let form = CreateForm { tier: "tests".into(), trust: " ".into(), ..Default::default() };
        assert_eq!(to_new(&form).unwrap().trust, None);
        let bad = CreateForm { trust: "high".into(), ..form };
        assert!(to_new(&bad).unwrap_err().message().contains("\"high\""));
    }
}
