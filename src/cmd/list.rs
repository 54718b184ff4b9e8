//! `curator list [--tier T] [--scope S]`.

use std::process::ExitCode;

use anyhow::Result;
use curator_core::ScopeName;
use curator_store::ListFilter;

use crate::args::ListArgs;
use crate::cmd::view::ObservationView;
use crate::context::Context;
use crate::output;

pub(crate) fn run(ctx: &Context, args: &ListArgs) -> Result<ExitCode> {
    let filter = ListFilter {
        tier: args.tier,
        scope: args.scope.as_deref().map(ScopeName::new).transpose()?,
    };
    let store = ctx.store()?;
    let listing = store.list(&filter)?;
    // A scope folder whose name breaks the write rule is reported, but its files are listed.
    let skipped = listing
        .problems
        .iter()
        .filter(|p| !matches!(p.kind, curator_store::ProblemKind::ScopeName(_)))
        .count();
    if skipped > 0 {
        crate::output::note!("warning: {skipped} file(s) skipped; run `curator lint` to see why");
    }
    if ctx.json {
        let views: Vec<ObservationView> =
            listing.observations.iter().map(ObservationView::from).collect();
        output::print_json(&views)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut text = String::new();
    for stored in &listing.observations {
        let obs = &stored.observation;
        text.push_str(&format!(
            "{}  {:>4}  {}/{}  {}\n",
            obs.id,
            curator_core::render::to_fixed_2(obs.trust),
            stored.tier,
            stored.scope,
            output::ellipsize(&obs.title, 60)
        ));
    }
    output::print_text(&text)?;
    Ok(ExitCode::SUCCESS)
}
