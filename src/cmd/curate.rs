//! `curator curate RUN_RECORD [--decisions DEC.json | --llm | --rules]`: apply the curator to
//! one finished run and print agent-qa's summary line, or the MemoryLog with `--json`.
//!
//! The text output names what the next command needs: the run id (for `undo`) and the id of
//! every observation the run changed (for `show` and `history`), one line each.

use std::io::Read;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context as _, Result, bail};
use curator_core::trust::TrustDeltas;
use curator_engine::breaker::{Breaker, RunOutcome};
use curator_engine::curate::{
    AblationStatus, CurateCase, CurateError, Decisions, LOCK_TIMEOUT_ERROR, MemoryLog, RunRecord,
    RunStatus, UnknownKeys, curate, curate_case, unapplied_log,
};
use curator_engine::providers::{
    DecisionProvider, ExplicitProvider, LlmConfig, LlmProvider, ProviderError, RulesProvider,
};
use curator_store::Store;

use crate::args::CurateArgs;
use crate::context::Context;
use crate::output;

/// Largest run record or decisions document read.
const MAX_INPUT_BYTES: u64 = 16 << 20;

/// Exit code of a `curate` that could not run now (`EX_TEMPFAIL`): the curator lock was not taken
/// in time, or the LLM call failed. Nothing was applied, and trying again later is the remedy.
pub(crate) const UNAPPLIED_EXIT: u8 = 75;

pub(crate) fn run(ctx: &Context, args: &CurateArgs) -> Result<ExitCode> {
    let run_record = args.run_record();
    if is_stdin(run_record) && args.decisions.as_deref().is_some_and(is_stdin) {
        bail!("the run record and --decisions cannot both read stdin");
    }
    let unknown = unknown_keys(ctx);
    let text = read_input(run_record)?;
    let mut record = RunRecord::from_json_with(&text, unknown)
        .with_context(|| format!("in run record {}", run_record.display()))?;
    // agent-qa has no memory provider at all when `enabled: false` (§2).
    if !ctx.config.memory.enabled {
        return skipped(ctx, "services.memory.enabled is false in the config; nothing curated");
    }
    let store = ctx.store()?;
    let store = store.as_ref();
    curator_engine::session::fill_from_session(store, &mut record).with_context(|| {
        format!("reading the run session of {}", record.run_id.as_deref().unwrap_or("the run"))
    })?;
    let options = ctx.curate_options();
    // `curatorEnabled: false` skips the curator (§5.1) but not the ablation path, which penalizes
    // a failure a rerun without memory proved memory caused before the curator would run (§8).
    // The breaker still records the finished test and its rerun (§9), and the rerun's verdict
    // is still printed (§8 step 5).
    let case = curate_case(&record, &options);
    if !ctx.config.memory.curator_enabled && case != CurateCase::AblationPassed {
        if case == CurateCase::AblationFailed && !ctx.json {
            output::print_text("  Memory: ablation retry also failed -- memory not the cause\n")?;
        }
        if let Some(key) = &args.breaker {
            record_breaker(ctx, store, key, &record.journal_run_id(), &record)?;
        }
        return skipped(
            ctx,
            "services.memory.curatorEnabled is false in the config; nothing curated (only a \
             failure an ablation rerun blames on memory is)",
        );
    }
    let provider: Box<dyn DecisionProvider> = match &args.decisions {
        Some(path) => {
            let text = read_input(path)?;
            let decisions = Decisions::from_json_with(&text, unknown)
                .with_context(|| format!("in decisions file {}", path.display()))?;
            Box::new(ExplicitProvider::new(decisions))
        }
        // Only a passed run asks the LLM (§5.1, §5.5): a failed run is penalized by the rules
        // even when the LLM's settings are incomplete, as in agent-qa.
        None if args.llm && case == CurateCase::Passed => {
            Box::new(LlmProvider::new(llm_config(ctx))?)
        }
        None => Box::new(RulesProvider::default()),
    };
    // agent-qa answers with a MemoryLog holding the error when the lock times out or the LLM
    // fails (§5.3, §5.4, §6). Nothing was applied, so the exit code asks for a retry, which
    // applies the run once.
    let result = curate(store, &record, provider.as_ref(), &options);
    let spent = result.as_ref().err().and_then(CurateError::spent);
    let (mut log, unapplied) = match result.map_err(CurateError::into_cause) {
        Ok(log) => (log, None),
        Err(CurateError::Store(e @ curator_store::Error::LockTimeout { .. })) => {
            (unapplied_log(&record, &options, LOCK_TIMEOUT_ERROR), Some(e.to_string()))
        }
        // A database that could not be reached or went away (nothing stands for now, or a
        // lost commit answer, which the retry reports as already applied), or a store that
        // failed under a change (an I/O error, an unreadable file): the run was rolled back.
        Err(CurateError::Store(e)) if curator_pg::is_unavailable(&e) || e.is_environmental() => {
            let error = format!("Curator error: {e}");
            (unapplied_log(&record, &options, &error), Some(e.to_string()))
        }
        Err(CurateError::Provider(e @ (ProviderError::CallFailed(_) | ProviderError::Empty))) => {
            let error = e.to_string();
            (unapplied_log(&record, &options, &error), Some(error))
        }
        Err(e) => return Err(e.into()),
    };
    if unapplied.is_some() && spent.is_some() {
        // The LLM answered before the lock timed out: its tokens were spent all the same.
        log.token_usage = spent;
    }
    // The breaker counts each run once by its id, so a retry records what a curate killed
    // between applying the run and recording it left out, and nothing more.
    if let Some(key) = args.breaker.as_ref().filter(|_| unapplied.is_none()) {
        record_breaker(ctx, store, key, &log.run_id, &record)?;
    }
    if ctx.json {
        output::print_json(&log)?;
    } else {
        output::print_text(&format!("{}{}", log.summary(), change_lines(&log)))?;
    }
    if let Some(e) = unapplied {
        if e.contains(curator_pg::COMMITTING) {
            crate::output::note!("curator: {e}; curate run {} again", log.run_id);
        } else {
            crate::output::note!(
                "curator: {e}; run {} was not applied, curate it again",
                log.run_id
            );
        }
        return Ok(ExitCode::from(UNAPPLIED_EXIT));
    }
    if !ctx.json {
        crate::output::note!("{}", outcome_note(&log));
    }
    Ok(ExitCode::SUCCESS)
}

/// A run the config says not to curate: said on stderr, and with `--json` as the one document
/// on stdout (`{"curated": false, "reason": …}`), so a script is not left with nothing to read.
fn skipped(ctx: &Context, reason: &str) -> Result<ExitCode> {
    crate::output::note!("curator: {reason}");
    if ctx.json {
        output::print_json(&serde_json::json!({ "curated": false, "reason": reason }))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// One line per observation the run changed, with the id `show` and `history` take.
fn change_lines(log: &MemoryLog) -> String {
    let trust = |s: &Option<curator_core::ObservationSnapshot>| {
        s.as_ref().map_or("-".to_owned(), |s| curator_core::render::to_fixed_2(s.trust))
    };
    let mut out = String::new();
    for d in log.deltas.iter().filter(|d| d.error.is_none()) {
        let action = serde_json::to_value(d.action)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        out.push_str(&format!(
            "  {action:<9} {}  {}/{}  trust {} -> {}\n",
            d.observation_id,
            d.tier,
            d.scope,
            trust(&d.before),
            trust(&d.after)
        ));
    }
    out
}

/// The stderr line after the summary: which run, and `undo` only when there is something to
/// revert (issue 13: a retried or empty run suggests nothing).
fn outcome_note(log: &MemoryLog) -> String {
    let generation = log.generation.map_or(String::new(), |g| format!(", generation {g}"));
    if log.already_applied {
        format!("curator: run {}{generation} was already applied; nothing changed", log.run_id)
    } else if log.is_empty() {
        format!("curator: run {} ({:?} path) changed no observation", log.run_id, log.case)
    } else {
        format!(
            "curator: run {} ({:?} path{generation}); `curator undo {}` reverts it",
            log.run_id, log.case, log.run_id
        )
    }
}

/// Feeds the breaker what agent-qa records per finished test (§9): an ablation rerun first, as
/// a run without memory, then the run itself. A cancelled run is not a pass.
fn record_breaker(
    ctx: &Context,
    store: &dyn Store,
    key: &str,
    run_id: &str,
    record: &RunRecord,
) -> Result<()> {
    let config = crate::cmd::breaker::breaker_config(ctx);
    let mut outcomes = Vec::new();
    // agent-qa reruns a test without memory only with ablation enabled (§8, §9).
    if let Some(ablation) = record.ablation.filter(|_| ctx.config.memory.ablation_enabled) {
        outcomes
            .push(RunOutcome { with_memory: false, passed: ablation == AblationStatus::Passed });
    }
    let with_memory =
        record.steps.iter().any(|s| s.injected.as_ref().is_some_and(|i| !i.is_empty()));
    outcomes.push(RunOutcome { with_memory, passed: record.status == RunStatus::Passed });
    let (_, tripped_now, _) = Breaker::record_run_in(store, key, run_id, &outcomes, &config)?;
    if tripped_now {
        crate::output::note!(
            "  Memory: circuit breaker tripped -- disabling memory injection for remaining tests"
        );
    }
    Ok(())
}

/// What an unknown key in a run record or decisions file does (`curator.unknownKeys`).
pub(crate) fn unknown_keys(ctx: &Context) -> UnknownKeys {
    if ctx.config.curator.ignore_unknown_keys { UnknownKeys::Ignore } else { UnknownKeys::Reject }
}

/// The trust deltas in effect: the config's values, 0.05 / 0.10 when it has none.
pub(crate) fn deltas(ctx: &Context) -> TrustDeltas {
    let m = &ctx.config.memory;
    TrustDeltas { confirm: m.trust_confirm_delta, contradict: m.trust_contradict_delta }
}

/// The LLM settings from the config's `curator.llm` block.
fn llm_config(ctx: &Context) -> LlmConfig {
    let l = &ctx.config.curator.llm;
    LlmConfig {
        base_url: l.base_url.clone(),
        model: l.model.clone(),
        api_key_env: l.api_key_env.clone(),
        timeout: std::time::Duration::from_millis(l.timeout_ms),
        max_retries: l.max_retries,
        backoff: std::time::Duration::from_millis(l.backoff_ms),
        max_observations: l.max_observations,
    }
}

fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == "-"
}

fn read_input(path: &Path) -> Result<String> {
    let mut text = String::new();
    if is_stdin(path) {
        std::io::stdin()
            .take(MAX_INPUT_BYTES)
            .read_to_string(&mut text)
            .context("reading stdin")?;
    } else {
        std::fs::File::open(path)
            .and_then(|f| f.take(MAX_INPUT_BYTES).read_to_string(&mut text))
            .with_context(|| format!("reading {}", path.display()))?;
    }
    Ok(text)
}
