//! `curator harness`: the harness memory of shared/spec/harness-curator.md from the command line.
//!
//! Exit codes say what happened (issue 16): 0 ok; 1 the command failed (a refused append, a
//! state directory that does not exist, a pass that could not run — `CURATOR error: …` on
//! stderr); 4 a *partial* pass: memory was curated but the issues part failed (a broken
//! issues.json, left as it was; `CURATOR partial: …` on stderr). The harness's supervisor decides
//! what a failure means for the mission (§8.1: it never blocks DONE/ESCALATE); the CLI only reports
//! truthfully. `--strict` is still accepted and changes nothing (failures exit non-zero anyway).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Args, Subcommand, ValueEnum};
use curator_harness::{Harness, HarnessOptions, LlmConfig, LlmJudge, NewIssue, Timestamp, Trigger};
use serde_json::json;

use crate::args::parse_nonempty;
use crate::context::Context;
use crate::output::{print_json, print_text};

/// Exit code of a partial pass: memory curated, the issues part failed.
pub(crate) const EXIT_PARTIAL: u8 = 4;

/// Harness memory: raw.md log, MEMORY.md, summary.md, identity files and the issue queue.
#[derive(Debug, Args)]
pub(crate) struct HarnessArgs {
    /// Harness state directory (holds memory/, issues.json, pending-issues.jsonl, features.json).
    #[arg(long, value_name = "DIR", default_value = ".harness", alias = "state")]
    pub(crate) state_dir: PathBuf,
    /// Cross-mission identity directory [default: $CURATOR_IDENTITY, else ~/.curator/identity].
    #[arg(long, value_name = "DIR", env = "CURATOR_IDENTITY")]
    pub(crate) identity: Option<PathBuf>,
    /// Project directory for path and staleness tests [default: the state directory's parent].
    #[arg(long, value_name = "DIR")]
    pub(crate) project: Option<PathBuf>,
    /// Mission id for the cross-mission ledger [default: memory/.mission, created on first pass].
    #[arg(long, value_name = "ID")]
    pub(crate) mission: Option<String>,
    #[command(subcommand)]
    pub(crate) command: HarnessCommand,
}

/// The harness subcommands.
#[derive(Debug, Subcommand)]
pub(crate) enum HarnessCommand {
    /// Append one observation to raw.md: `[<ts>] <role> <feature|-> <TRICK|->: <text>`.
    Append(AppendArgs),
    /// File a pending issue (one JSON line in pending-issues.jsonl) for the next triage.
    Issue(IssueArgs),
    /// Merge pending issues into issues.json (dedupe, attempts, ids); prints `ISSUES +N new, M
    /// deduped`, or {ok, merged, deduped} with --json.
    Triage,
    /// Run a full curator pass and print its one `CURATED …` line (exit 4: partial; 75: another
    /// pass is running, nothing was done).
    Curate(CurateArgs),
    /// Print the memory preamble for a role's prompt (discipline reminder, identity, summary).
    Context(RoleArg),
    /// Show each layer against its bounds, the archive's dispositions and the issue counts.
    Status,
    /// Find where an entry went: raw.md, the archive (with its disposition), MEMORY.md, identity.
    Trace(TraceArgs),
}

/// `curator harness trace`.
#[derive(Debug, Args)]
pub(crate) struct TraceArgs {
    /// Text to look for (case-insensitive), e.g. a word of the entry. Exits 1 when nothing
    /// holds it, as grep does.
    pub(crate) text: String,
}

/// `curator harness append`.
#[derive(Debug, Args)]
pub(crate) struct AppendArgs {
    /// The authoring role (worker, validator, planner, …).
    #[arg(long, value_parser = parse_nonempty)]
    pub(crate) role: String,
    /// The feature in scope (F-023); omit for none.
    #[arg(long, value_name = "ID")]
    pub(crate) feature: Option<String>,
    /// Flag a reusable pattern for promotion (tag TRICK).
    #[arg(long)]
    pub(crate) trick: bool,
    /// The one-line observation.
    pub(crate) text: String,
}

/// `curator harness issue`.
#[derive(Debug, Args)]
pub(crate) struct IssueArgs {
    /// One-line title (`BLOCKED: …` for a blocked worker).
    #[arg(long, allow_hyphen_values = true, value_parser = parse_nonempty)]
    pub(crate) title: String,
    /// How bad it is: critical | major | minor | nit.
    #[arg(long, value_parser = parse_severity)]
    pub(crate) severity: String,
    /// The feature being validated.
    #[arg(long, value_name = "ID", value_parser = parse_nonempty)]
    pub(crate) found_during: String,
    /// Where: `path:line`.
    #[arg(long, value_name = "PATH:LINE")]
    pub(crate) code_pointer: Option<String>,
    /// What was observed.
    #[arg(long, allow_hyphen_values = true)]
    pub(crate) evidence: Option<String>,
    /// How to reproduce.
    #[arg(long, allow_hyphen_values = true)]
    pub(crate) repro: Option<String>,
    /// A suggested fix.
    #[arg(long, allow_hyphen_values = true)]
    pub(crate) suggested_fix: Option<String>,
    /// The filing role [default: validator]. Triage files every new issue as `source:
    /// "validator"`, as the reference does, and keeps another role as `filedBy`.
    #[arg(long, value_name = "ROLE")]
    pub(crate) source: Option<String>,
}

/// A severity as the harness's writers take it (`Severity::parse_strict`), refused before
/// anything is read.
fn parse_severity(raw: &str) -> Result<String, String> {
    curator_harness::Severity::parse_strict(raw)
        .map(|s| s.as_str().to_owned())
        .ok_or_else(|| "must be one of critical|major|minor|nit".to_owned())
}

/// What fired the pass.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum TriggerArg {
    /// The mission finished.
    Done,
    /// The orchestrator escalated.
    Escalate,
    /// A person asked.
    Manual,
    /// Every N iterations.
    Periodic,
}

/// `curator harness curate`.
#[derive(Debug, Args)]
pub(crate) struct CurateArgs {
    /// What fired the pass.
    #[arg(long, value_enum, default_value = "manual")]
    pub(crate) trigger: TriggerArg,
    /// Accepted for older scripts; a failed pass exits 1 and a partial one 4 anyway.
    #[arg(long, hide = true)]
    pub(crate) strict: bool,
    /// Let the LLM of the config's `curator.llm` block judge the entries the rules are least
    /// sure of (at most --llm-max per pass); without it the rules err on keeping.
    #[arg(long)]
    pub(crate) llm: bool,
    /// Entries the LLM judges per pass at most.
    #[arg(long, value_name = "N", default_value_t = curator_harness::JUDGE_MAX_ENTRIES, requires = "llm")]
    pub(crate) llm_max: usize,
}

/// A command that takes a role.
#[derive(Debug, Args)]
pub(crate) struct RoleArg {
    /// The role whose prompt gets the preamble.
    #[arg(long, value_parser = parse_nonempty)]
    pub(crate) role: String,
}

fn open(args: &HarnessArgs, ctx: &Context) -> Result<Harness> {
    let mut options = HarnessOptions {
        project_dir: args.project.clone(),
        mission: args.mission.clone(),
        ..HarnessOptions::default()
    };
    if let HarnessCommand::Curate(c) = &args.command
        && c.llm
    {
        let judge = LlmJudge::new(llm_config(ctx)).map_err(anyhow::Error::msg)?;
        options.judge = Some(Box::new(judge));
        options.judge_max = c.llm_max;
    }
    let identity = match crate::context::identity_dir(args.identity.as_deref()) {
        Ok(dir) => dir,
        // An agent's entry or issue touches raw.md or the pending queue only: a CI runner
        // without $HOME (env -i, a systemd unit) must not lose it for want of an identity
        // folder it never reads. Every other command needs one.
        Err(_) if matches!(args.command, HarnessCommand::Append(_) | HarnessCommand::Issue(_)) => {
            PathBuf::new()
        }
        Err(e) => return Err(e),
    };
    Ok(Harness::open(&args.state_dir, identity, options))
}

/// The config's `curator.llm` block, as `curator curate --llm` reads it.
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

/// Runs `curator harness …`.
pub(crate) fn run(args: &HarnessArgs, ctx: &Context) -> Result<ExitCode> {
    let json = ctx.json;
    let harness = open(args, ctx)?;
    let now = curator_core::time::now();
    match &args.command {
        HarnessCommand::Append(a) => {
            let line = harness.append(&a.role, a.feature.as_deref(), a.trick, &a.text, now)?;
            if json {
                print_json(&json!({ "line": line }))?;
            }
        }
        HarnessCommand::Issue(a) => {
            let issue = NewIssue {
                title: a.title.clone(),
                severity: a.severity.clone(),
                found_during: a.found_during.clone(),
                evidence: a.evidence.clone(),
                repro: a.repro.clone(),
                suggested_fix: a.suggested_fix.clone(),
                code_pointer: a.code_pointer.clone(),
                found_at: None,
                source: a.source.clone(),
            };
            harness.file_issue(&issue, now)?;
            if json {
                print_json(&json!({ "ok": true }))?;
            }
        }
        HarnessCommand::Triage => {
            let r = harness.triage(now)?;
            if r.skipped > 0 {
                crate::output::note!(
                    "curator: {} pending-issues line(s) held no issue record (not JSON, or no \
                     title or severity): skipped, and kept in memory/archive/pending-skipped.jsonl",
                    r.skipped
                );
            }
            if json {
                // The spec's exact answer (§3.3); the skipped lines are the note above.
                print_json(&json!({ "ok": true, "merged": r.merged, "deduped": r.deduped }))?;
            } else {
                print_text(&format!("ISSUES +{} new, {} deduped\n", r.merged, r.deduped))?;
            }
        }
        HarnessCommand::Curate(a) => return curate(&harness, a, now, json),
        HarnessCommand::Context(a) => {
            let text = harness.context(&a.role)?;
            if json {
                print_json(&json!({ "role": a.role, "context": text }))?;
            } else {
                print_text(&text)?;
            }
        }
        HarnessCommand::Status => {
            let status = harness.status()?;
            if json {
                print_json(&status)?;
            } else {
                print_text(&status.render())?;
            }
        }
        HarnessCommand::Trace(a) => {
            let report = harness.trace(&a.text)?;
            if json {
                print_json(&report)?;
            } else {
                print_text(&report.render())?;
            }
            if report.hits.is_empty() {
                return Ok(ExitCode::from(1));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn curate(harness: &Harness, args: &CurateArgs, now: Timestamp, json: bool) -> Result<ExitCode> {
    let _ = args.strict;
    let trigger = match args.trigger {
        TriggerArg::Done => Trigger::Done,
        TriggerArg::Escalate => Trigger::Escalate,
        TriggerArg::Manual => Trigger::Manual,
        TriggerArg::Periodic => Trigger::Periodic,
    };
    let report = match harness.curate(trigger, now) {
        Ok(report) => report,
        Err(err) => {
            crate::output::note!("CURATOR error: {err}");
            if json {
                // The error object every `--json` command prints, beside the pass's own keys.
                let error = json!({ "message": err.to_string() });
                print_json(&json!({ "ok": false, "partial": false, "error": error }))?;
            }
            // Another pass holds the lock: nothing ran, and running it later is the remedy.
            let busy = matches!(err, curator_harness::Error::Busy { .. });
            return Ok(ExitCode::from(if busy { crate::cmd::curate::UNAPPLIED_EXIT } else { 1 }));
        }
    };
    for note in &report.notes {
        crate::output::note!("{note}");
    }
    if let Some(e) = &report.issues_error {
        crate::output::note!(
            "CURATOR partial: the issues part failed (issues.json left as it was): {e}"
        );
    }
    if json {
        print_json(&json!({
            "ok": !report.is_partial(),
            "partial": report.is_partial(),
            "line": report.line(),
            "decisions": report.decisions,
            "lessons": report.lessons,
            "absorbed": report.absorbed,
            "newIssues": report.new_issues,
            "deduped": report.deduped,
            "autoClosed": report.auto_closed,
            "promoted": report.promoted,
            "dispositions": report.dispositions,
            "issuesError": report.issues_error,
            "notes": report.notes,
            "changed": report.changed,
        }))?;
    } else {
        print_text(&format!("{}\n", report.line()))?;
    }
    Ok(if report.is_partial() { ExitCode::from(EXIT_PARTIAL) } else { ExitCode::SUCCESS })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Wrap {
        #[command(flatten)]
        args: HarnessArgs,
    }

    #[test]
    fn flags_parse_into_requests() {
        let w = Wrap::try_parse_from([
            "x",
            "--state-dir",
            "s",
            "append",
            "--role",
            "worker",
            "--feature",
            "F-1",
            "--trick",
            "text",
        ])
        .unwrap();
        assert_eq!(w.args.state_dir, PathBuf::from("s"));
        let old = Wrap::try_parse_from(["x", "--state", "s", "status"]).unwrap();
        assert_eq!(old.args.state_dir, PathBuf::from("s"), "the old spelling is a hidden alias");
        match w.args.command {
            HarnessCommand::Append(a) => {
                assert!(a.trick && a.feature.as_deref() == Some("F-1") && a.text == "text")
            }
            other => panic!("{other:?}"),
        }
        let w = Wrap::try_parse_from(["x", "curate", "--trigger", "escalate", "--strict"]).unwrap();
        assert_eq!(w.args.state_dir, PathBuf::from(".harness"));
        assert!(matches!(
            w.args.command,
            HarnessCommand::Curate(CurateArgs {
                trigger: TriggerArg::Escalate,
                strict: true,
                llm: false,
                ..
            })
        ));
        let w = Wrap::try_parse_from(["x", "curate", "--llm", "--llm-max", "7"]).unwrap();
        assert!(matches!(
            w.args.command,
            HarnessCommand::Curate(CurateArgs { llm: true, llm_max: 7, .. })
        ));
        assert!(
            Wrap::try_parse_from(["x", "curate", "--llm-max", "7"]).is_err(),
            "--llm-max needs --llm"
        );
        let w = Wrap::try_parse_from([
            "x",
            "issue",
            "--title",
            "t",
            "--severity",
            "nit",
            "--found-during",
            "F-1",
            "--source",
            "worker",
        ])
        .unwrap();
        assert!(
            matches!(w.args.command, HarnessCommand::Issue(IssueArgs { source: Some(ref s), .. }) if s == "worker")
        );
        let w = Wrap::try_parse_from(["x", "trace", "STRIPE"]).unwrap();
        assert!(
            matches!(w.args.command, HarnessCommand::Trace(TraceArgs { ref text }) if text == "STRIPE")
        );
        assert!(Wrap::try_parse_from(["x", "curate", "--trigger", "sometimes"]).is_err());
    }
}
