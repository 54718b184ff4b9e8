//! `curator undo RUN_ID`: revert one run's changes, or refuse naming the file changed since.

use std::process::ExitCode;

use anyhow::Result;
use curator_engine::undo::UndoError;

use crate::args::UndoArgs;
use crate::context::Context;
use crate::output;

pub(crate) fn run(ctx: &Context, args: &UndoArgs) -> Result<ExitCode> {
    let store = ctx.store()?;
    let report = match curator_engine::undo::undo(store.as_ref(), &args.run_id) {
        Ok(report) => report,
        // A retried undo (the first one's answer was lost): what it asked for stands, so it
        // succeeds and says so, as a retried curate or review does.
        Err(UndoError::AlreadyUndone { run_id, undo_run_id }) => {
            if ctx.json {
                output::print_json(&serde_json::json!({
                    "run_id": run_id,
                    "undo_run_id": undo_run_id,
                    "reverted": [],
                    "already_applied": true,
                }))?;
            } else {
                eprintln!(
                    "curator: run {run_id} was already undone by {undo_run_id}; nothing changed"
                );
            }
            return Ok(ExitCode::SUCCESS);
        }
        Err(e) => return Err(e.into()),
    };
    if ctx.json {
        output::print_json(&report)?;
    } else {
        let mut text = format!(
            "reverted {} change(s) of run {}, generation {} (journaled as {})\n",
            report.reverted.len(),
            report.run_id,
            report.generation,
            report.undo_run_id
        );
        for r in &report.reverted {
            text.push_str(&format!(
                "  {:<9} {}\n",
                format!("{:?}", r.action).to_lowercase(),
                r.file
            ));
        }
        output::print_text(&text)?;
    }
    Ok(ExitCode::SUCCESS)
}
