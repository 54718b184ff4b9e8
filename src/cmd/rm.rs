//! `curator rm ID`: delete one observation under the lock, journaled.

use std::process::ExitCode;

use anyhow::Result;
use curator_core::ObservationId;
use curator_store::{Action, JournalFilter, Store};

use crate::args::RmArgs;
use crate::context::Context;
use crate::output;

pub(crate) fn run(ctx: &Context, args: &RmArgs) -> Result<ExitCode> {
    let id = ObservationId::parse(&args.id)?;
    let store = ctx.store()?;
    let stored = match store.get(&id) {
        Ok(stored) => stored,
        Err(e @ curator_store::Error::NotFound { .. }) => {
            return already_deleted(ctx, store.as_ref(), &id).unwrap_or(Err(e.into()));
        }
        Err(e) => return Err(e.into()),
    };
    // Under a run id of its own, as every other write: `undo` restores what it deleted.
    let run_id = curator_core::generate_run_id();
    store.transact(Some(&run_id), &mut |tx| {
        tx.delete(stored.tier, &stored.scope, &id, Action::Delete, &args.reason)
    })?;
    if ctx.json {
        output::print_json(&serde_json::json!({
            "deleted": id.as_str(),
            "tier": stored.tier.dir_name(),
            "scope": stored.scope.as_str(),
            "run_id": run_id,
            "already_applied": false,
        }))?;
    } else {
        output::print_text(&format!("deleted {id} ({}/{})\n", stored.tier, stored.scope))?;
        crate::output::note!(
            "curator: journaled as run {run_id}; `curator undo {run_id}` restores it"
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// A retried `rm` (the first one's answer was lost): when the journal's last change of `id`
/// deleted it, what was asked for stands, so it succeeds and says so. `None` otherwise (an id
/// that never existed stays an error).
fn already_deleted(
    ctx: &Context,
    store: &dyn Store,
    id: &ObservationId,
) -> Option<Result<ExitCode>> {
    let filter = JournalFilter { id: Some(id.as_str().to_owned()), run_id: None };
    let last = store.journal(&filter).ok()?.pop()?;
    if last.after.is_some() {
        return None;
    }
    let run = last.run_id;
    let printed = if ctx.json {
        output::print_json(&serde_json::json!({
            "deleted": id.as_str(),
            "tier": last.tier,
            "scope": last.scope,
            "run_id": run,
            "already_applied": true,
        }))
    } else {
        let by = run.map_or(String::new(), |r| format!(" by run {r}"));
        crate::output::note!("curator: {id} was already deleted{by}; nothing changed");
        Ok(())
    };
    Some(printed.map(|()| ExitCode::SUCCESS))
}
