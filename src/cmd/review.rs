//! `curator review list|approve|reject`: the review queue of proposed memory (issue 18).

use std::process::ExitCode;

use anyhow::Result;
use curator_core::{ObservationId, ScopeName};
use curator_engine::review;
use curator_store::evidence::{Evidence, EvidenceQuery};
use curator_store::{ListFilter, Store, StoredObservation};
use serde::Serialize;

use crate::args::{ReviewAction, ReviewArgs};
use crate::cmd::view::ObservationView;
use crate::context::Context;
use crate::output;

/// One queued proposal as `review list --json` prints it.
#[derive(Debug, Serialize)]
struct PendingView {
    #[serde(flatten)]
    observation: ObservationView,
    /// Its probation record so far.
    evidence: Evidence,
}

/// The record of each of `observations`; a store that keeps no evidence reports zeros.
pub(crate) fn evidence_of(
    store: &dyn Store,
    observations: &[StoredObservation],
) -> Result<Vec<Evidence>> {
    let query = EvidenceQuery {
        ids: observations.iter().map(|o| o.observation.id.to_string()).collect(),
        tests: Vec::new(),
    };
    let view = match store.evidence(&query) {
        Ok(view) => view,
        Err(curator_store::Error::Unsupported { .. }) => Default::default(),
        Err(e) => return Err(e.into()),
    };
    Ok(observations.iter().map(|o| view.of(o.observation.id.as_str())).collect())
}

pub(crate) fn run(ctx: &Context, args: &ReviewArgs) -> Result<ExitCode> {
    let store = ctx.store()?;
    let store = store.as_ref();
    match &args.action {
        ReviewAction::List(list) => {
            let filter = ListFilter {
                tier: list.tier,
                scope: list.scope.as_deref().map(ScopeName::new).transpose()?,
            };
            let listing = review::pending(store, &filter)?;
            if !listing.problems.is_empty() {
                crate::output::note!(
                    "warning: {} queued file(s) cannot be read: {}",
                    listing.problems.len(),
                    listing.problems.iter().map(|p| p.to_string()).collect::<Vec<_>>().join("; ")
                );
            }
            let evidence = evidence_of(store, &listing.observations)?;
            if ctx.json {
                let views: Vec<PendingView> = listing
                    .observations
                    .iter()
                    .zip(evidence)
                    .map(|(o, evidence)| PendingView { observation: o.into(), evidence })
                    .collect();
                output::print_json(&views)?;
                return Ok(ExitCode::SUCCESS);
            }
            if listing.observations.is_empty() {
                crate::output::note!("curator: nothing waits for review");
            }
            let mut text = String::new();
            for (o, e) in listing.observations.iter().zip(evidence) {
                text.push_str(&format!(
                    "{}  {}/{}  probation {} passed, {} failed  {}\n",
                    o.observation.id,
                    o.tier,
                    o.scope,
                    e.probation_passed,
                    e.probation_failed,
                    output::ellipsize(&o.observation.title, 60)
                ));
            }
            output::print_text(&text)?;
        }
        ReviewAction::Approve(d) | ReviewAction::Reject(d) => {
            let id = ObservationId::parse(&d.id)?;
            let approve = matches!(args.action, ReviewAction::Approve(_));
            let outcome = if approve {
                let reason = d.reason.as_deref().unwrap_or("approved with curator review");
                review::approve(store, &id, reason)?
            } else {
                let reason = d.reason.as_deref().unwrap_or("rejected with curator review");
                review::reject(store, &id, reason)?
            };
            if ctx.json {
                output::print_json(&outcome)?;
            } else {
                let what = if approve { "approved into" } else { "rejected from the queue of" };
                let already = if outcome.already_applied { "already " } else { "" };
                output::print_text(&format!(
                    "{} {already}{what} {}/{}\n",
                    outcome.id, outcome.tier, outcome.scope
                ))?;
                crate::output::note!(
                    "curator: journaled as run {}; `curator undo {}` reverts it",
                    outcome.run_id,
                    outcome.run_id
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
