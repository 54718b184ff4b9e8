//! `curator lint`: check every file under the root and report each problem with its path.
//!
//! Readers skip a file that cannot be served (agent-qa does so silently, §1.4); lint is where
//! every skipped file shows up, so no memory disappears without a trace. Exit 3 when any.
//!
//! First, lint does what the next writer would (issue 13): a transaction a dead writer left
//! open is rolled back under the lock and its temp files removed, each step printed; what a
//! crash left that recovery does not own (a temp of a dead writer elsewhere, an unreadable
//! journal line) is a problem like any other.

use std::process::ExitCode;

use anyhow::Result;
use curator_store::{ListFilter, Recovered};
use serde::Serialize;

use crate::context::{Context, StoreChoice};
use crate::output;

/// Exit code when lint finds problems.
const EXIT_PROBLEMS: u8 = 3;

#[derive(Debug, Serialize)]
struct LintReport {
    observations: usize,
    /// Proposals waiting in the review queue that can be read (its unreadable files are
    /// problems like any other).
    pending: usize,
    problems: Vec<ProblemView>,
    /// What lint resolved before checking (a dead writer's open transaction, its temps).
    recovered: Vec<Recovered>,
}

#[derive(Debug, Serialize)]
struct ProblemView {
    path: String,
    reason: String,
}

pub(crate) fn run(ctx: &Context) -> Result<ExitCode> {
    let store = ctx.store()?;
    let mut problems = Vec::new();
    let recovered = match store.recover() {
        Ok(recovered) => recovered,
        Err(e) => {
            let path = "journal".to_owned();
            problems.push(ProblemView {
                path,
                reason: format!("an interrupted transaction could not be resolved: {e}"),
            });
            Vec::new()
        }
    };
    let listing = store.list(&ListFilter::default())?;
    // The queue too: a proposal that cannot be read is never reviewed nor tried on probation.
    let queue = curator_engine::review::queue_or_empty(store.as_ref())?;
    problems.extend(
        listing.problems.iter().chain(&queue.problems).map(|p| ProblemView {
            path: p.path.display().to_string(),
            reason: p.kind.to_string(),
        }),
    );
    // Every line read and none kept: the journal of a long history is not held in memory.
    if let Err(e) = store.check_journal() {
        problems.push(ProblemView { path: "journal".to_owned(), reason: e.to_string() });
    }
    let report = LintReport {
        observations: listing.observations.len(),
        pending: queue.observations.len(),
        problems,
        recovered,
    };
    if ctx.json {
        output::print_json(&report)?;
    } else {
        for r in &report.recovered {
            crate::output::note!("curator: recovered: {r}");
        }
        let mut text = String::new();
        for problem in &report.problems {
            text.push_str(&format!("{}: {}\n", problem.path, problem.reason));
        }
        output::print_text(&text)?;
        crate::output::note!(
            "{} observation(s) ok, {} waiting for review, {} problem(s)",
            report.observations,
            report.pending,
            report.problems.len()
        );
        // An empty root is a fine memory (agent-qa creates the tiers on its first write), but
        // a root with none of them is more often a wrong --root than a new one.
        let tiers = ["products", "suites", "tests"];
        if matches!(ctx.store, StoreChoice::Files)
            && !tiers.iter().any(|t| ctx.root.join(t).is_dir())
        {
            crate::output::note!(
                "curator: {} holds no products/, suites/ or tests/ folder: is --root the memory \
                 root? (`curator init` creates them)",
                ctx.root.display()
            );
        }
    }
    Ok(if report.problems.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(EXIT_PROBLEMS) })
}
