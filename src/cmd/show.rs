//! `curator show ID`.

use std::process::ExitCode;

use anyhow::Result;
use curator_core::ObservationId;

use crate::args::IdArg;
use crate::cmd::view::{ObservationView, render_text};
use crate::context::Context;
use crate::output;

pub(crate) fn run(ctx: &Context, args: &IdArg) -> Result<ExitCode> {
    let id = ObservationId::parse(&args.id)?;
    let store = ctx.store()?;
    let stored = store.get(&id)?;
    if ctx.json {
        output::print_json(&ObservationView::from(&stored))?;
    } else {
        output::print_text(&render_text(&stored))?;
    }
    Ok(ExitCode::SUCCESS)
}
