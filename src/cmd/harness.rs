//! `curator harness`: the harness memory of shared/spec/harness-curator.md from the command line.
//!
//! Exit codes: 0 ok; 1 for a refused or failed `append`, `issue`, `triage`, `context` or `status`
//! (the caller asked for something that did not happen: it must know). `curate` is different:
//! it runs on the harness's DONE/ESCALATE path, which a curator failure must never block (§8.1),
//! so a failed pass prints `CURATOR error: …` on stderr and still exits 0 — unless `--strict`
//! asks for exit 1 (for CI and tests). Nothing the pass already saved (triage results) is undone.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Args, Subcommand, ValueEnum};
use curator_harness::{Harness, HarnessOptions, NewIssue, Timestamp, Trigger};
use serde_json::json;

use crate::output::{print_json, print_text};

/// Harness memory: raw.md log, MEMORY.md, summary.md, identity files and the issue queue.
#[derive(Debug, Args)]
pub(crate) struct HarnessArgs {
    /// Harness state directory (holds memory/, issues.json, pending-issues.jsonl, features.json).
    #[arg(long, value_name = "DIR", default_value = ".harness")]
    pub(crate) state: PathBuf,
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
    /// Merge pending issues into issues.json (dedupe, attempts, ids); prints {ok, merged, deduped}.
    Triage,
    /// Run a full curator pass and print its one `CURATED …` line.
    Curate(CurateArgs),
    /// Print the memory preamble for a role's prompt (discipline reminder, identity, summary).
    Context(RoleArg),
    /// Show each layer's size against its bound, and the issue counts.
    Status,
}

/// `curator harness append`.
#[derive(Debug, Args)]
pub(crate) struct AppendArgs {
    /// The authoring role (worker, validator, planner, …).
    #[arg(long)]
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
    #[arg(long)]
    pub(crate) title: String,
    /// critical | major | minor | nit.
    #[arg(long)]
    pub(crate) severity: String,
    /// The feature being validated.
    #[arg(long, value_name = "ID")]
    pub(crate) found_during: String,
    /// Where: `path:line`.
    #[arg(long, value_name = "PATH:LINE")]
    pub(crate) code_pointer: Option<String>,
    /// What was observed.
    #[arg(long)]
    pub(crate) evidence: Option<String>,
    /// How to reproduce.
    #[arg(long)]
    pub(crate) repro: Option<String>,
    /// A suggested fix.
    #[arg(long)]
    pub(crate) suggested_fix: Option<String>,
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
    /// Exit 1 when the pass fails (default: exit 0 with `CURATOR error: …` on stderr, so the
    /// harness's DONE/ESCALATE path is never blocked).
    #[arg(long)]
    pub(crate) strict: bool,
}

/// A command that takes a role.
#[derive(Debug, Args)]
pub(crate) struct RoleArg {
    /// The role whose prompt gets the preamble.
    #[arg(long)]
    pub(crate) role: String,
}

fn open(args: &HarnessArgs) -> Result<Harness> {
    let options = HarnessOptions {
        project_dir: args.project.clone(),
        mission: args.mission.clone(),
        ..HarnessOptions::default()
    };
    Ok(Harness::open(&args.state, crate::context::identity_dir(args.identity.as_deref())?, options))
}

/// Runs `curator harness …`.
pub(crate) fn run(args: &HarnessArgs, json: bool) -> Result<ExitCode> {
    let harness = open(args)?;
    let now = Timestamp::now();
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
            };
            harness.file_issue(&issue, now)?;
            if json {
                print_json(&json!({ "ok": true }))?;
            }
        }
        HarnessCommand::Triage => {
            let r = harness.triage(now)?;
            if json {
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
    }
    Ok(ExitCode::SUCCESS)
}

fn curate(harness: &Harness, args: &CurateArgs, now: Timestamp, json: bool) -> Result<ExitCode> {
    let trigger = match args.trigger {
        TriggerArg::Done => Trigger::Done,
        TriggerArg::Escalate => Trigger::Escalate,
        TriggerArg::Manual => Trigger::Manual,
        TriggerArg::Periodic => Trigger::Periodic,
    };
    match harness.curate(trigger, now) {
        Ok(report) => {
            for note in &report.notes {
                eprintln!("{note}");
            }
            if json {
                print_json(&json!({
                    "ok": true,
                    "line": report.line(),
                    "decisions": report.decisions,
                    "lessons": report.lessons,
                    "absorbed": report.absorbed,
                    "newIssues": report.new_issues,
                    "deduped": report.deduped,
                    "autoClosed": report.auto_closed,
                    "promoted": report.promoted,
                    "notes": report.notes,
                    "changed": report.changed,
                }))?;
            } else {
                print_text(&format!("{}\n", report.line()))?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(err) => {
            eprintln!("CURATOR error: {err}");
            if json {
                print_json(&json!({ "ok": false, "error": err.to_string() }))?;
            }
            Ok(if args.strict { ExitCode::from(1) } else { ExitCode::SUCCESS })
        }
    }
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
            "--state",
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
        assert_eq!(w.args.state, PathBuf::from("s"));
        match w.args.command {
            HarnessCommand::Append(a) => {
                assert!(a.trick && a.feature.as_deref() == Some("F-1") && a.text == "text")
            }
            other => panic!("{other:?}"),
        }
        let w = Wrap::try_parse_from(["x", "curate", "--trigger", "escalate", "--strict"]).unwrap();
        assert_eq!(w.args.state, PathBuf::from(".harness"));
        assert!(matches!(
            w.args.command,
            HarnessCommand::Curate(CurateArgs { trigger: TriggerArg::Escalate, strict: true })
        ));
        assert!(Wrap::try_parse_from(["x", "curate", "--trigger", "sometimes"]).is_err());
    }
}
