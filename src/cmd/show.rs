//! `curator show ID`: one observation, served or waiting for review, with its outcome
//! evidence (issue 18).

use std::process::ExitCode;

use anyhow::Result;
use curator_core::ObservationId;
use curator_store::Place;
use curator_store::evidence::Evidence;
use serde::Serialize;

use crate::args::IdArg;
use crate::cmd::view::{ObservationView, render_text};
use crate::context::Context;
use crate::output;

/// `show --json`: where the observation lives, its fields, and its record.
#[derive(Debug, Serialize)]
struct ShowView {
    #[serde(flatten)]
    observation: ObservationView,
    /// `memory`, or `pending` while it waits for review.
    place: Place,
    evidence: Evidence,
}

pub(crate) fn run(ctx: &Context, args: &IdArg) -> Result<ExitCode> {
    let id = ObservationId::parse(&args.id)?;
    let store = ctx.store()?;
    let (stored, place) = match store.get(&id) {
        Ok(stored) => (stored, Place::Memory),
        Err(curator_store::Error::NotFound { .. }) => match store.get_pending(&id) {
            Ok(Some(stored)) => (stored, Place::Pending),
            Ok(None) | Err(curator_store::Error::Unsupported { .. }) => {
                return Err(curator_store::Error::NotFound { id: id.to_string() }.into());
            }
            Err(e) => return Err(e.into()),
        },
        Err(e) => return Err(e.into()),
    };
    let evidence =
        crate::cmd::review::evidence_of(store.as_ref(), std::slice::from_ref(&stored))?.remove(0);
    if ctx.json {
        let observation = ObservationView::from(&stored);
        output::print_json(&ShowView { observation, place, evidence })?;
    } else {
        // Header lines, a blank line, the body: extra lines go at the end of the header.
        let text = render_text(&stored);
        let (header, body) = text.split_once("\n\n").unwrap_or((&text, ""));
        let mut extra = String::new();
        if place == Place::Pending {
            extra.push_str("waiting for review: `curator review approve|reject ID`\n");
        }
        if !evidence.is_empty() {
            extra.push_str(&format!(
                "evidence: injected into {} run(s): {} passed, {} failed, {} before a failure; \
                 ablation blamed {}, cleared {}; probation {} passed, {} failed\n",
                evidence.runs,
                evidence.passed,
                evidence.failed,
                evidence.before_failure,
                evidence.ablation_blamed,
                evidence.ablation_cleared,
                evidence.probation_passed,
                evidence.probation_failed
            ));
        }
        output::print_text(&output::terminal_safe(&format!("{header}\n{extra}\n{body}")))?;
    }
    Ok(ExitCode::SUCCESS)
}
