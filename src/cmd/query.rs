//! `curator query`: the memory one agent step gets (agent-qa-memory §3–§4).
//!
//! Prints the `<memory-context>` block exactly as the planner receives it, or nothing when no
//! memory matches. With `--run-id/--step-index` the injected ids are recorded for `curate`. While the
//! step's circuit breaker is tripped nothing is injected, and stderr (and `--json`) say why.
//! When a `curator serve` runs for the root, it answers (same answer, without this process
//! checking every file of the step's folders); otherwise this process answers by itself.
//! A product, test or suite name that cannot be a folder is skipped with a warning on stderr
//! (and in `--json`'s `warnings`), the other folders are served and the exit code is 0: agent-qa
//! skips such a folder, and a memory query never fails a step (issue 13 item 5).

use std::io::Read;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context as _, Result};
use curator_core::SnapshotEntry;
use curator_core::config::QueryMode as ConfigMode;
use curator_engine::breaker::Breaker;
use curator_engine::{QueryOptions, QueryOutcome, RunStep};
use curator_store::index::QueryMode;
use serde::Serialize;

use crate::args::{ModeArg, QueryArgs};
use crate::context::{Context, StoreChoice};
use crate::output;

/// Largest step text accepted on stdin.
const MAX_STEP_BYTES: u64 = 1 << 20;

#[derive(Debug, Serialize)]
struct QueryJson<'a> {
    #[serde(flatten)]
    outcome: &'a QueryOutcome,
    /// Present (true) only when a tripped circuit breaker suppressed the injection.
    #[serde(skip_serializing_if = "Option::is_none")]
    breaker_tripped: Option<bool>,
}

pub(crate) fn run(ctx: &Context, args: &QueryArgs) -> Result<ExitCode> {
    let opts = options(ctx, args)?;
    if !ctx.config.memory.enabled {
        // agent-qa has no memory provider at all with `enabled: false` (§2): nothing injected.
        crate::output::note!(
            "curator: services.memory.enabled is false in the config; nothing injected"
        );
        let outcome = QueryOutcome { warnings: opts.warnings.clone(), ..QueryOutcome::default() };
        return print(ctx, &opts, &outcome, None);
    }
    // A skipped suite name has no breaker of its own.
    let breaker_key =
        args.breaker.clone().or_else(|| opts.suite.as_ref().map(|s| s.id.to_string()));
    let honoured = breaker_key.as_deref().filter(|_| ctx.config.memory.circuit_breaker_enabled);
    if let Some((outcome, tripped)) = ask_server(ctx, &opts, honoured) {
        return print(ctx, &opts, &outcome, tripped.then_some(honoured.unwrap_or_default()));
    }
    let store = ctx.store()?;
    let tripped = match honoured {
        Some(key) => Breaker::is_tripped_in(store.as_ref(), key)?,
        None => false,
    };
    let outcome = if tripped {
        QueryOutcome { warnings: opts.warnings.clone(), ..QueryOutcome::default() }
    } else {
        curator_engine::query_in(store.as_ref(), &opts)?
    };
    print(ctx, &opts, &outcome, tripped.then_some(honoured.unwrap_or_default()))
}

/// The answer of a `curator serve` running for this root (`query_socket.rs`), if one does: it
/// holds an inotify-fresh index, so this process need not check every file itself. `None` (and
/// the caller answers by itself) when none runs or it cannot answer.
fn ask_server(
    ctx: &Context,
    opts: &QueryOptions,
    breaker: Option<&str>,
) -> Option<(QueryOutcome, bool)> {
    if ctx.store != StoreChoice::Files {
        return None;
    }
    match curator_engine::query_socket::ask(&ctx.root, opts, breaker) {
        Ok(answer) => {
            tracing::debug!("answered by the curator serve of this root");
            Some((answer.outcome, answer.breaker_tripped))
        }
        Err(why) => {
            tracing::debug!("answering without a server: {why}");
            None
        }
    }
}

/// Prints the injection of the step `opts` asked about; `tripped` names the breaker that
/// suppressed it.
fn print(
    ctx: &Context,
    opts: &QueryOptions,
    outcome: &QueryOutcome,
    tripped: Option<&str>,
) -> Result<ExitCode> {
    if let Some(key) = tripped {
        crate::output::note!(
            "curator: circuit breaker {key:?} is tripped -- injecting no memory for this step"
        );
    }
    for warning in &outcome.warnings {
        crate::output::note!("curator: warning: {warning}");
    }
    if ctx.json {
        output::print_json(&QueryJson {
            outcome,
            breaker_tripped: tripped.is_some().then_some(true),
        })?;
    } else {
        if let Some(block) = &outcome.formatted {
            // The block has no trailing newline of its own (§4); the terminal gets one.
            output::print_text(&format!("{block}\n"))?;
        }
        // stdout is exactly what the planner gets; the ids `show`/`history` take go to stderr.
        for o in &outcome.observations {
            crate::output::note!(
                "curator: injected {}  {}/{}  trust {}",
                o.id,
                o.tier,
                o.scope,
                curator_core::render::to_fixed_2(o.trust)
            );
        }
        if let (Some(RunStep { run_id, step }), None) = (&opts.run, tripped) {
            if outcome.observations.is_empty() {
                // The session drops the step's entry: no earlier attempt is blamed for it.
                crate::output::note!(
                    "curator: nothing injected into run {run_id}, step index {step}"
                );
            } else {
                crate::output::note!(
                    "curator: recorded for run {run_id}, step index {step}; `curator curate` reads it"
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Turns flags plus config into the engine's request; no I/O beyond reading the named files.
fn options(ctx: &Context, args: &QueryArgs) -> Result<QueryOptions> {
    let text = match args.step_text() {
        "-" => read_stdin()?,
        text => text.to_owned(),
    };
    let mut opts = QueryOptions::lenient(&args.product, &args.test, text);
    let memory = &ctx.config.memory;
    opts.min_trust = args.min_trust.unwrap_or(memory.min_trust);
    opts.max_injections = args.max_injections.unwrap_or(memory.max_injections);
    opts.mode = match args.mode {
        Some(ModeArg::Terms) => QueryMode::Terms,
        Some(ModeArg::Phrase) => QueryMode::Phrase,
        None => match ctx.config.curator.query_mode {
            ConfigMode::Terms => QueryMode::Terms,
            ConfigMode::Phrase => QueryMode::Phrase,
        },
    };
    if let Some(suite) = &args.suite {
        let tests = args.suite_tests.as_deref().map(read_suite_tests).transpose()?;
        opts.set_suite(suite, tests, args.position);
    }
    if let (Some(run_id), Some(step)) = (&args.run_id, args.step_index) {
        opts.run = Some(RunStep { run_id: run_id.clone(), step });
        opts.probation = ctx.probation();
    }
    Ok(opts)
}

fn read_suite_tests(path: &Path) -> Result<Vec<SnapshotEntry>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading --suite-tests file {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| {
        format!("--suite-tests file {}: expected [{{\"test\":…,\"id\":…}}, …]", path.display())
    })
}

fn read_stdin() -> Result<String> {
    let mut text = String::new();
    std::io::stdin()
        .take(MAX_STEP_BYTES)
        .read_to_string(&mut text)
        .context("reading the step text from stdin")?;
    Ok(text)
}
