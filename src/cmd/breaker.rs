//! `curator breaker status|record|reset KEY`: the persisted circuit breaker of a run session or
//! suite (agent-qa-memory §9), so separate CLI calls behave like one agent-qa process.

use std::process::ExitCode;

use anyhow::Result;
use curator_engine::breaker::{Breaker, BreakerConfig, BreakerState, RunOutcome};

use crate::args::{BreakerAction, BreakerArgs};
use crate::context::Context;
use crate::output;

pub(crate) fn run(ctx: &Context, args: &BreakerArgs) -> Result<ExitCode> {
    let config = breaker_config(ctx);
    let store = ctx.store()?;
    let store = store.as_ref();
    let mut already_applied = false;
    let (key, state, tripped_now) = match &args.action {
        BreakerAction::Status { key } => (key, Breaker::load_in(store, key)?, false),
        BreakerAction::Record { key, outcome, memory, run_id } => {
            let outcome = RunOutcome { with_memory: memory == "with", passed: outcome == "passed" };
            let (state, tripped_now) = match run_id {
                Some(run_id) => {
                    let (state, tripped, already) =
                        Breaker::record_run_in(store, key, run_id, &[outcome], &config)?;
                    already_applied = already;
                    (state, tripped)
                }
                None => Breaker::record_in(store, key, outcome, &config)?,
            };
            (key, state, tripped_now)
        }
        BreakerAction::Reset { key } => (key, Breaker::reset_in(store, key)?, false),
    };
    if already_applied {
        crate::output::note!("curator: this run's outcome was already recorded; nothing changed");
    }
    if tripped_now {
        crate::output::note!(
            "  Memory: circuit breaker tripped -- disabling memory injection for remaining tests"
        );
    }
    if ctx.json {
        let mut report = state.report(key, &config, tripped_now);
        if matches!(args.action, BreakerAction::Record { .. }) {
            report["already_applied"] = already_applied.into();
        }
        output::print_json(&report)?;
    } else {
        output::print_text(&text(key, &state, &config))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The breaker settings of the config (`services.memory.circuitBreaker*`).
pub(crate) fn breaker_config(ctx: &Context) -> BreakerConfig {
    let m = &ctx.config.memory;
    BreakerConfig {
        enabled: m.circuit_breaker_enabled,
        window_size: m.circuit_breaker_window_size,
        baseline_size: m.circuit_breaker_baseline_size,
        threshold: m.circuit_breaker_threshold,
    }
}

fn text(key: &str, state: &BreakerState, config: &BreakerConfig) -> String {
    let r = state.rates();
    let pct = |x: Option<f64>| x.map_or("-".to_owned(), |x| format!("{:.0}%", x * 100.0));
    format!(
        "breaker {key}: {}{}\n  with memory: {} run(s), {} failed ({})\n  baseline:    {} run(s), {} failed ({})\n  window {}/{}, baseline size {}, threshold {}\n",
        if state.tripped { "TRIPPED" } else { "closed" },
        if config.enabled { "" } else { " (disabled in config)" },
        r.with_memory,
        r.with_memory_failed,
        pct(r.memory_failure_rate()),
        r.baseline,
        r.baseline_failed,
        pct(r.baseline_failure_rate()),
        state.window.len(),
        config.window_size,
        config.baseline_size,
        config.threshold,
    )
}
