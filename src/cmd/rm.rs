//! `curator rm ID`: delete one observation under the lock, journaled.

use std::process::ExitCode;

use anyhow::Result;
use curator_core::ObservationId;
use curator_store::Action;

use crate::args::RmArgs;
use crate::context::Context;
use crate::output;

pub(crate) fn run(ctx: &Context, args: &RmArgs) -> Result<ExitCode> {
    let id = ObservationId::parse(&args.id)?;
    let store = ctx.store()?;
    let stored = store.get(&id)?;
    store.transact(None, &mut |tx| {
        tx.delete(stored.tier, &stored.scope, &id, Action::Delete, &args.reason)
    })?;
    if ctx.json {
        output::print_json(&serde_json::json!({
            "deleted": id.as_str(),
            "tier": stored.tier.dir_name(),
            "scope": stored.scope.as_str(),
        }))?;
    } else {
        output::print_text(&format!("deleted {id} ({}/{})\n", stored.tier, stored.scope))?;
    }
    Ok(ExitCode::SUCCESS)
}
