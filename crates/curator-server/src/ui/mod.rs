//! The web UI: server-rendered HTML for a person reviewing what the agents learned (issue 6
//! item 4).
//!
//! No build step and nothing fetched from elsewhere: askama templates compiled into the binary,
//! one stylesheet and one small script embedded with rust-embed. Every page is plain HTML that
//! works without JavaScript; the script only reloads the page when the files on disk change
//! (polling `/api/v1/changes`). Buttons are forms posting to UI routes, which call the same
//! functions as the JSON API ([`crate::ops`], the engine) and answer with a 303 redirect back to
//! the page, so a reload never repeats a change. askama escapes every value in `.html`
//! templates, so observation text, file names and journal reasons are shown, never executed.

mod assets;
mod diff;
mod harness;
mod list;
mod pages;
mod review;
mod tools;

use askama::Template;
use axum::Router;
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::{get, post};

use crate::error::ApiError;
use crate::state::AppState;

/// A page's query parameters; a malformed one (`?page=abc`) is the UI's HTML error page, as
/// every other refusal a person sees, not axum's plain-text rejection.
pub(crate) struct UiQuery<T>(pub(crate) T);

impl<T: serde::de::DeserializeOwned + Send> axum::extract::FromRequestParts<AppState>
    for UiQuery<T>
{
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        _: &AppState,
    ) -> Result<Self, Response> {
        let query = parts.uri.query().unwrap_or("");
        crate::extract::serde_urlencoded_like(query)
            .map(UiQuery)
            .map_err(|e| error_page(&e, parts.uri.path()))
    }
}

pub(crate) fn router() -> Router<AppState> {
    Router::new()
        .route("/", get(pages::overview))
        .route("/observations", get(list::list))
        .route("/observations/new", get(list::new_form).post(list::create))
        .route("/observations/{id}", get(pages::observation))
        .route("/observations/{id}/edit", post(pages::edit))
        .route("/observations/{id}/confirm", post(pages::confirm))
        .route("/observations/{id}/deprecate", post(pages::deprecate))
        .route("/observations/{id}/delete", post(pages::delete))
        .route("/query", get(tools::query))
        .route("/runs", get(tools::runs))
        .route("/runs/{run_id}", get(tools::run))
        .route("/runs/{run_id}/undo", post(tools::undo))
        .route("/review", get(review::page))
        .route("/review/{id}/approve", post(review::approve))
        .route("/review/{id}/reject", post(review::reject))
        .route("/lint", get(tools::lint))
        .route("/harness", get(harness::page))
        .route("/harness/triage", post(harness::triage))
        .route("/harness/curate", post(harness::curate))
        .route("/harness/issues/{id}/status", post(harness::issue_status))
        .route("/static/{*path}", get(assets::serve))
}

/// Renders a template, or a plain 500 naming the template error.
pub(crate) fn render(template: &impl Template) -> Response {
    match template.render() {
        Ok(html) => Html(html).into_response(),
        Err(e) => {
            tracing::error!("rendering a page: {e}");
            (StatusCode::INTERNAL_SERVER_ERROR, "the page could not be rendered").into_response()
        }
    }
}

/// A page that says what went wrong, with the status of the error.
#[derive(Template)]
#[template(path = "message.html")]
struct MessagePage<'a> {
    nav: &'static str,
    flash: Option<String>,
    heading: &'a str,
    message: &'a str,
    back: &'a str,
}

/// The HTML answer to a failed UI action or page.
pub(crate) fn error_page(err: &ApiError, back: &str) -> Response {
    let heading = match err.status().as_u16() {
        404 => "Not found",
        400..=499 => "Refused",
        _ => "Error",
    };
    let page = MessagePage { nav: "", flash: None, heading, message: err.message(), back };
    (err.status(), render(&page)).into_response()
}

/// The UI's 404 for a path no route serves.
pub(crate) fn not_found_page(path: &str) -> Response {
    error_page(&ApiError::not_found(format!("no page at {path}")), "/")
}

/// After a change: back to `to`, with a flash naming the change and its run id.
pub(crate) fn done(to: &str, what: &str, run_id: Option<&str>) -> Response {
    let mut target = format!("{to}?done={what}");
    if let Some(run) = run_id {
        target.push_str("&run=");
        target.push_str(run);
    }
    Redirect::to(&target).into_response()
}

/// The flash shown after a redirect from [`done`]. Only known words become text; the run id is
/// checked to be a run id, so a crafted link cannot put arbitrary words on the page.
pub(crate) fn flash(done: Option<&str>, run: Option<&str>) -> Option<String> {
    let what = match done? {
        "created" => "Created",
        "edited" => "Saved",
        "unchanged" => "Nothing to save: the observation already holds these values",
        "confirmed" => "Confirmed",
        "deprecated" => "Deprecated",
        "deleted" => "Deleted",
        "undone" => "Run undone",
        "already-undone" => "That run was already undone; nothing changed",
        "approved" => "Approved into memory",
        "rejected" => "Rejected from the review queue",
        "triaged" => "Pending issues triaged",
        "curated" => "Curator pass finished",
        "issue-acknowledged" => "Issue acknowledged",
        "issue-closed" => "Issue closed",
        "issue-reopened" => "Issue reopened",
        "issue-changed" => "Issue status changed",
        _ => return None,
    };
    match run.filter(|r| curator_engine::session::validate_run_id(r).is_ok()) {
        Some(run) => Some(format!("{what}. Journaled as run {run}: undo it from Curator runs.")),
        None => Some(format!("{what}.")),
    }
}

/// Items on one page of a UI list (the overview, curator runs, lint).
pub(crate) const PAGE_SIZE: usize = 100;

/// A link to another page of a list.
pub(crate) struct PageLink {
    pub(crate) label: &'static str,
    pub(crate) href: String,
}

/// Where a page sits in its list, and the links to the others.
pub(crate) struct Pager {
    /// 1-based numbers of the first and last item shown (0 and 0 when none is).
    pub(crate) first: usize,
    pub(crate) last: usize,
    pub(crate) total: usize,
    pub(crate) page: usize,
    pub(crate) pages: usize,
    pub(crate) links: Vec<PageLink>,
}

impl Pager {
    /// Page `page` (from 1) of `total` items, `shown` of them on it; links point to `path`
    /// with the `keep` parameters (the filters) and `page`.
    pub(crate) fn new(
        path: &str,
        page: usize,
        total: usize,
        shown: usize,
        keep: &[(&str, &str)],
    ) -> Self {
        let pages = total.div_ceil(PAGE_SIZE).max(1);
        let href = |n: usize| {
            let mut query: Vec<(&str, String)> = vec![("page", n.to_string())];
            query.extend(
                keep.iter().filter(|(_, v)| !v.is_empty()).map(|(k, v)| (*k, (*v).to_owned())),
            );
            format!("{path}?{}", serde_urlencoded::to_string(&query).unwrap_or_default())
        };
        let mut links = Vec::new();
        if page > 1 {
            links.push(PageLink { label: "« first", href: href(1) });
            // Past the last page (a stale link, a hand-typed number), back to the last one.
            links.push(PageLink { label: "‹ previous", href: href((page - 1).min(pages)) });
        }
        if page < pages {
            links.push(PageLink { label: "next ›", href: href(page + 1) });
            links.push(PageLink { label: "last »", href: href(pages) });
        }
        let offset = Self::offset(page);
        Pager {
            first: if shown == 0 { 0 } else { offset + 1 },
            last: if shown == 0 { 0 } else { offset + shown },
            total,
            page,
            pages,
            links,
        }
    }

    /// How many items come before page `page` (from 1).
    pub(crate) fn offset(page: usize) -> usize {
        page.max(1).saturating_sub(1).saturating_mul(PAGE_SIZE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_past_the_last_shows_nothing_and_links_back() {
        let p = Pager::new("/", 99, 324, 0, &[]);
        assert_eq!((p.first, p.last, p.pages), (0, 0, 4));
        let hrefs: Vec<&str> = p.links.iter().map(|l| l.href.as_str()).collect();
        assert_eq!(hrefs, ["/?page=1", "/?page=4"]);
    }

    #[test]
    fn pagers_link_the_other_pages_keeping_the_filters() {
        let p = Pager::new("/", 2, 250, 100, &[("q", "a b&c"), ("tier", "")]);
        assert_eq!((p.first, p.last, p.pages), (101, 200, 3));
        let hrefs: Vec<&str> = p.links.iter().map(|l| l.href.as_str()).collect();
        assert_eq!(
            hrefs,
            [
                "/?page=1&q=a+b%26c",
                "/?page=1&q=a+b%26c",
                "/?page=3&q=a+b%26c",
                "/?page=3&q=a+b%26c"
            ]
        );
        let only = Pager::new("/runs", 1, 5, 5, &[]);
        assert!(only.links.is_empty() && only.pages == 1 && only.last == 5);
        assert_eq!(Pager::new("/", 9, 5, 0, &[]).first, 0);
        assert_eq!(Pager::offset(0), 0);
    }

    #[test]
    fn flashes_only_say_known_things() {
        assert_eq!(flash(Some("confirmed"), None).as_deref(), Some("Confirmed."));
        assert!(flash(Some("confirmed"), Some("r_abc")).unwrap().contains("run r_abc"));
        assert_eq!(flash(Some("<script>"), None), None);
        assert_eq!(flash(Some("deleted"), Some("../x <b>")).as_deref(), Some("Deleted."));
        assert!(has_event_handler("<form onsubmit=\"x\">") && !has_event_handler("<b>on it</b>"));
    }

    /// The Content-Security-Policy allows no inline script, style or event handler: no
    /// template or asset may rely on one.
    #[test]
    fn templates_carry_no_inline_script_or_style() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("templates");
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap().to_lowercase();
            let name = path.display();
            for (i, _) in text.match_indices("<script") {
                let tag = &text[i..i + text[i..].find('>').unwrap()];
                assert!(tag.contains("src="), "{name}: inline <script>");
            }
            assert!(!text.contains("<style"), "{name}: inline <style>");
            assert!(!text.contains("style="), "{name}: style attribute");
            assert!(!text.contains("javascript:"), "{name}: javascript: URL");
            assert!(!has_event_handler(&text), "{name}: inline event handler");
        }
    }

    /// Whether `text` has an attribute like ` onclick=`.
    fn has_event_handler(text: &str) -> bool {
        text.match_indices(" on").chain(text.match_indices("\non")).any(|(i, m)| {
            let rest = &text[i + m.len()..];
            let name_len = rest.bytes().take_while(u8::is_ascii_lowercase).count();
            name_len > 0 && rest[name_len..].trim_start().starts_with('=')
        })
    }
}
