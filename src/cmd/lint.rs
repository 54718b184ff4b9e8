//! `curator lint`: check every file under the root and report each problem with its path.
//!
//! Readers skip a file that cannot be served (agent-qa does so silently, §1.4); lint is where
//! every skipped file shows up, so no memory disappears without a trace. Exit 3 when any.

use std::process::ExitCode;

use anyhow::Result;
use curator_store::ListFilter;
use serde::Serialize;

use crate::context::Context;
use crate::output;

/// Exit code when lint finds problems.
const EXIT_PROBLEMS: u8 = 3;

#[derive(Debug, Serialize)]
struct LintReport {
    observations: usize,
    problems: Vec<ProblemView>,
}

#[derive(Debug, Serialize)]
struct ProblemView {
    path: String,
    reason: String,
}

pub(crate) fn run(ctx: &Context) -> Result<ExitCode> {
    let store = ctx.store()?;
    let listing = store.list(&ListFilter::default())?;
    let report = LintReport {
        observations: listing.observations.len(),
        problems: listing
            .problems
            .iter()
            .map(|p| ProblemView { path: p.path.display().to_string(), reason: p.kind.to_string() })
            .collect(),
    };
    if ctx.json {
        output::print_json(&report)?;
    } else {
        let mut text = String::new();
        for problem in &report.problems {
            text.push_str(&format!("{}: {}\n", problem.path, problem.reason));
        }
        output::print_text(&text)?;
        eprintln!(
            "{} observation(s) ok, {} problem(s)",
            report.observations,
            report.problems.len()
        );
    }
    Ok(if report.problems.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(EXIT_PROBLEMS) })
}
