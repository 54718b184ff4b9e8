//! `curator eval`: retrieval quality on a labelled query set (ARCHITECTURE.md, eval set).
//!
//! Each query runs exactly as `curator query` would (same scopes, trust floor and injection cap
//! from the config), without recording a run, and the injected ids are scored against the labels.

use std::process::ExitCode;

use anyhow::Result;
use curator_engine::eval::{EvalQuery, EvalReport, evaluate, load_queries};
use curator_engine::{QueryOptions, SuiteContext};
use curator_store::Store;
use curator_store::index::QueryMode;

use crate::args::{EvalArgs, ModeArg};
use crate::context::Context;
use crate::output;

pub(crate) fn run(ctx: &Context, args: &EvalArgs) -> Result<ExitCode> {
    let store = ctx.store()?;
    let queries = load_queries(&args.queries)?;
    let modes: &[(ModeArg, &str)] = match args.mode {
        Some(ModeArg::Terms) => &[(ModeArg::Terms, "terms")],
        Some(ModeArg::Phrase) => &[(ModeArg::Phrase, "phrase")],
        None => &[(ModeArg::Terms, "terms"), (ModeArg::Phrase, "phrase")],
    };
    let mut report = EvalReport { modes: Vec::new() };
    for &(mode, name) in modes {
        let mode = match mode {
            ModeArg::Terms => QueryMode::Terms,
            ModeArg::Phrase => QueryMode::Phrase,
        };
        report
            .modes
            .push(evaluate(name, &queries, args.k, |q| run_one(ctx, store.as_ref(), q, mode))?);
    }
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

fn run_one(
    ctx: &Context,
    store: &dyn Store,
    q: &EvalQuery,
    mode: QueryMode,
) -> Result<Vec<String>> {
    let mut opts = QueryOptions::new(q.product.as_str(), q.test.as_str(), q.query.clone())?;
    opts.min_trust = ctx.config.memory.min_trust;
    opts.max_injections = ctx.config.memory.max_injections;
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
