//! `curator undo RUN_ID`: revert one run's changes, or refuse naming the file changed since.

use std::process::ExitCode;

use anyhow::Result;

use crate::args::UndoArgs;
use crate::context::Context;
use crate::output;

pub(crate) fn run(ctx: &Context, args: &UndoArgs) -> Result<ExitCode> {
    let store = ctx.store()?;
    let report = curator_engine::undo::undo(store.as_ref(), &args.run_id)?;
    if ctx.json {
        output::print_json(&report)?;
    } else if report.already_applied {
        // A retried undo (the first one's answer was lost): what it asked for stands.
        crate::output::note!(
            "curator: run {} was already undone by {}; nothing changed",
            report.run_id,
            report.undo_run_id
        );
    } else {
        let mut text = format!(
            "reverted {} change(s) of run {}, generation {} (journaled as {})\n",
            report.reverted.len(),
            report.run_id,
            report.generation,
            report.undo_run_id
        );
        for r in &report.reverted {
            text.push_str(&format!("  {:<9} {}\n", r.action.as_str().to_owned(), r.file));
        }
        output::print_text(&text)?;
    }
    Ok(ExitCode::SUCCESS)
}
