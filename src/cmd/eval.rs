//! `curator eval`: retrieval quality on a labelled query set (issues 3 and 14; eval/README.md).
//!
//! Each query runs exactly as `curator query` would (same scopes, trust floor and mode), without
//! recording a run, once at the configured injection cap (what the irrelevant-injection figures
//! count) and once with the cap raised to `max(--k, 10)` (recall@k, MRR@10, nDCG@10). A plain
//! BM25 baseline (stemmed, title + body, no rules) runs on the same set and is printed last, so
//! every report is a side-by-side comparison.

use std::process::ExitCode;

use anyhow::Result;
use curator_engine::eval::{
    EvalDepth, EvalQuery, EvalReport, baseline_ids, evaluate, load_queries,
};
use curator_engine::{QueryOptions, SuiteContext};
use curator_store::Store;
use curator_store::index::QueryMode;

use crate::args::{EvalArgs, ModeArg};
use crate::context::Context;
use crate::output;

/// The name of the baseline's rows in the report.
const BASELINE: &str = "bm25";

pub(crate) fn run(ctx: &Context, args: &EvalArgs) -> Result<ExitCode> {
    let store = ctx.store()?;
    let queries = load_queries(&args.queries)?;
    warn_unknown_relevant(store.as_ref(), &queries);
    let modes: &[(QueryMode, &str)] = match args.mode {
        Some(ModeArg::Terms) => &[(QueryMode::Terms, "terms")],
        Some(ModeArg::Phrase) => &[(QueryMode::Phrase, "phrase")],
        None => &[(QueryMode::Terms, "terms"), (QueryMode::Phrase, "phrase")],
    };
    let depth = EvalDepth { k: usize::from(args.k), cap: ctx.config.memory.max_injections };
    let min_trust = ctx.config.memory.min_trust;
    let mut report = EvalReport { modes: Vec::new() };
    for &(mode, name) in modes {
        let run = |q: &EvalQuery, limit| run_one(ctx, store.as_ref(), q, mode, limit);
        report.modes.push(evaluate(name, &queries, depth, run)?);
    }
    let baseline = |q: &EvalQuery, limit| baseline_ids(store.as_ref(), q, min_trust, limit);
    report.modes.push(evaluate(BASELINE, &queries, depth, baseline)?);
    if ctx.json {
        output::print_json(&report)?;
    } else {
        let mut text = report.to_string();
        if args.details {
            for mode in &report.modes {
                text.push_str(&format!("\n== {} ==\n", mode.mode));
                for q in &mode.queries {
                    text.push_str(&format!(
                        "line {}: {}\n  returned {:?}\n  missed {:?}  irrelevant {:?}\n",
                        q.line, q.query, q.returned, q.missed, q.irrelevant
                    ));
                }
            }
        }
        output::print_text(&text)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// A `relevant` id no observation of the root has (a typo, memory moved since the set was
/// labelled) can only be missed: said once per id on stderr, so it does not pass as a miss of
/// the scorer.
fn warn_unknown_relevant(store: &dyn Store, queries: &[EvalQuery]) {
    // One listing, not a lookup per id: a file store finds an id by walking its folders.
    let Ok(listing) = store.list(&curator_store::ListFilter::default()) else { return };
    let known: std::collections::HashSet<&str> =
        listing.observations.iter().map(|o| o.observation.id.as_str()).collect();
    let mut warned = std::collections::HashSet::new();
    for q in queries {
        for id in &q.relevant {
            if !known.contains(id.as_str()) && warned.insert(id.clone()) {
                crate::output::note!(
                    "warning: line {}: relevant id {id} is no observation of this root; it counts as missed",
                    q.line
                );
            }
        }
    }
}

fn run_one(
    ctx: &Context,
    store: &dyn Store,
    q: &EvalQuery,
    mode: QueryMode,
    limit: usize,
) -> Result<Vec<String>> {
    let mut opts = QueryOptions::new(q.product.as_str(), q.test.as_str(), q.query.clone())?;
    opts.min_trust = ctx.config.memory.min_trust;
    opts.max_injections = limit;
    opts.mode = mode;
    if let Some(suite) = &q.suite {
        opts.suite = Some(SuiteContext {
            id: suite.id.clone(),
            tests: Some(suite.tests.clone()),
            position: Some(suite.position),
        });
    }
    let outcome = curator_engine::query_in(store, &opts)?;
    Ok(outcome.observations.into_iter().map(|o| o.id).collect())
}
