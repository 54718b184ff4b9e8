//! `curator history ID`: every journaled change of one observation, oldest first.
//!
//! An id that is neither in the journal nor in memory is an error (exit 1), not an empty
//! history: a mistyped id must not look like an observation nobody ever changed.

use std::process::ExitCode;

use anyhow::{Result, bail};
use curator_core::ObservationId;

use crate::args::IdArg;
use crate::context::Context;
use crate::output;

pub(crate) fn run(ctx: &Context, args: &IdArg) -> Result<ExitCode> {
    let id = ObservationId::parse(&args.id)?;
    let store = ctx.store()?;
    let entries = curator_engine::undo::history(store.as_ref(), id.as_str())?;
    if entries.is_empty() {
        match store.get(&id) {
            Err(curator_store::Error::NotFound { .. }) => bail!(
                "no observation {id} and no journal entry for it (`curator list` shows the ids)"
            ),
            Err(e) => return Err(e.into()),
            Ok(_) => {}
        }
    }
    if ctx.json {
        output::print_json(&entries)?;
        return Ok(ExitCode::SUCCESS);
    }
    if entries.is_empty() {
        // A note, not data: stdout stays empty, as `list` prints nothing for no observations.
        crate::output::note!("curator: no journal entries for {id}");
        return Ok(ExitCode::SUCCESS);
    }
    let mut text = String::new();
    for e in &entries {
        let trust = |s: &Option<curator_core::ObservationSnapshot>| {
            s.as_ref().map_or("-".to_owned(), |s| s.trust.to_string())
        };
        text.push_str(&format!(
            "{}  {:<9}  {}/{}  trust {} -> {}  run {}  {}\n",
            e.time,
            e.action.as_str().to_owned(),
            e.tier,
            e.scope,
            trust(&e.before),
            trust(&e.after),
            e.run_id.as_deref().unwrap_or("-"),
            output::ellipsize(&e.reasoning, 80),
        ));
    }
    output::print_text(&text)?;
    Ok(ExitCode::SUCCESS)
}
