//! The harness tools (issue 6 item 3: "append a harness raw entry, get harness context for a
//! role"; harness-curator §1.1, §2.1; issue 16: run a pass, trace an entry), over
//! `curator_harness::Harness`. A pass requested here never waits for one already running: the
//! call fails at once with `curator_busy`, naming the lock's holder.
//!
//! Which state directory a call acts on is a security decision, not a convenience: over stdio
//! (`curator mcp`, the agent runs as the same user on the same machine) a call may name its own
//! `state_dir`; over HTTP only the server's configured harness is used, so a remote client can
//! never choose where the server appends. The append itself is the harness crate's: scanned,
//! one canonical line, under the raw.md lock; the curator role may never append (§1 L1).

use std::path::{Path, PathBuf};

use curator_harness::{Harness, HarnessOptions, NewIssue, Trigger};

use super::schema::{
    HarnessAppendInput, HarnessAppendOutput, HarnessContextInput, HarnessContextOutput,
    HarnessCurateInput, HarnessCurateOutput, HarnessIssueInput, HarnessIssueOutput,
    HarnessTraceHit, HarnessTraceInput, HarnessTraceOutput,
};
use super::tools::ToolContext;
use crate::error::ApiError;

/// `harness_append`: one canonical raw.md line, scanned and written under the raw lock.
pub(crate) fn harness_append(
    ctx: &ToolContext,
    input: HarnessAppendInput,
) -> Result<HarnessAppendOutput, ApiError> {
    with_harness(ctx, input.state_dir.as_deref(), |h| {
        let trick = input.trick.unwrap_or(false);
        let line = h.append(
            &input.role,
            input.feature.as_deref(),
            trick,
            &input.text,
            curator_core::time::now(),
        )?;
        Ok(HarnessAppendOutput { line, raw_path: h.raw_path().display().to_string() })
    })
}

/// `harness_context`: the memory preamble of `role`'s prompt (harness-curator §1.1).
pub(crate) fn harness_context(
    ctx: &ToolContext,
    input: HarnessContextInput,
) -> Result<HarnessContextOutput, ApiError> {
    with_harness(ctx, input.state_dir.as_deref(), |h| {
        Ok(HarnessContextOutput { context: h.context(&input.role)?, role: input.role.clone() })
    })
}

/// `harness_issue`: one JSON line in pending-issues.jsonl, scanned and appended under its lock
/// (`curator harness issue`); the next triage merges it into issues.json.
pub(crate) fn harness_issue(
    ctx: &ToolContext,
    input: HarnessIssueInput,
) -> Result<HarnessIssueOutput, ApiError> {
    with_harness(ctx, input.state_dir.as_deref(), |h| {
        let issue = NewIssue {
            title: input.title.clone(),
            severity: input.severity.clone(),
            found_during: input.found_during.clone(),
            evidence: input.evidence.clone(),
            repro: input.repro.clone(),
            suggested_fix: input.suggested_fix.clone(),
            code_pointer: input.code_pointer.clone(),
            found_at: None,
            source: input.source.clone(),
        };
        h.file_issue(&issue, curator_core::time::now())?;
        Ok(HarnessIssueOutput {
            title: input.title.clone(),
            pending_path: h.pending_path().display().to_string(),
        })
    })
}

/// `harness_curate`: one curator pass, refused at once while another runs.
pub(crate) fn harness_curate(
    ctx: &ToolContext,
    input: HarnessCurateInput,
) -> Result<HarnessCurateOutput, ApiError> {
    let trigger = match input.trigger.as_deref() {
        None => Trigger::Manual,
        Some(t) => Trigger::parse(t).ok_or_else(|| {
            ApiError::bad_request(format!(
                "trigger must be done, escalate, manual or periodic, got {t:?}"
            ))
        })?,
    };
    with_harness(ctx, input.state_dir.as_deref(), |h| {
        let report = h.curate_at_once(trigger, curator_core::time::now())?;
        Ok(HarnessCurateOutput {
            line: report.line(),
            trigger: trigger.as_str().to_owned(),
            partial: report.is_partial(),
            issues_error: report.issues_error.clone(),
            dispositions: report
                .dispositions
                .entries
                .iter()
                .map(|(d, n)| (d.as_str().to_owned(), *n))
                .collect(),
            notes: report.notes,
            changed: report.changed,
        })
    })
}

/// `harness_trace`: where an entry went.
pub(crate) fn harness_trace(
    ctx: &ToolContext,
    input: HarnessTraceInput,
) -> Result<HarnessTraceOutput, ApiError> {
    with_harness(ctx, input.state_dir.as_deref(), |h| {
        let report = h.trace(&input.text)?;
        let hits = report
            .hits
            .into_iter()
            .map(|hit| {
                let r = hit.record.as_ref();
                HarnessTraceHit {
                    place: hit.place,
                    text: hit.text,
                    disposition: r.map(|r| r.disposition.as_str().to_owned()),
                    to: r.map(|r| r.to.clone()).unwrap_or_default(),
                    item: r.and_then(|r| r.item.clone()),
                    reason: r.and_then(|r| r.reason.clone()),
                    still_there: hit.still_there,
                }
            })
            .collect();
        Ok(HarnessTraceOutput { query: report.query, hits, truncated: report.truncated })
    })
}

/// Runs `work` on the harness a call names: its own `state_dir` where that is allowed, else
/// the configured harness.
fn with_harness<T>(
    ctx: &ToolContext,
    state_dir: Option<&str>,
    work: impl FnOnce(&Harness) -> Result<T, ApiError>,
) -> Result<T, ApiError> {
    let configured = ctx.state.harness();
    let Some(dir) = state_dir.filter(|d| !d.trim().is_empty()) else {
        if ctx.options.allow_state_dir && ctx.state.harness().is_none() {
            return Err(ApiError::new(
                axum::http::StatusCode::NOT_FOUND,
                "harness_not_configured",
                "no harness state directory is configured: pass state_dir in the call, or start \
                 with --state-dir DIR",
            ));
        }
        return work(ctx.state.require_harness()?);
    };
    let dir = PathBuf::from(dir);
    if configured.is_some_and(|h| same_dir(h.state_dir(), &dir)) {
        return work(ctx.state.require_harness()?);
    }
    if !ctx.options.allow_state_dir {
        return Err(ApiError::new(
            axum::http::StatusCode::FORBIDDEN,
            "state_dir_not_allowed",
            format!(
                "state_dir {} is not accepted here: over HTTP only the server's configured harness state directory is used",
                dir.display()
            ),
        ));
    }
    let identity = ctx
        .options
        .identity_dir
        .clone()
        .or_else(|| configured.map(|h| h.identity_dir().to_path_buf()))
        .ok_or_else(|| {
            ApiError::bad_request(
                "no identity directory is configured for a state_dir given in the call",
            )
        })?;
    work(&Harness::open(dir, identity, HarnessOptions::default()))
}

fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::tools::tests::fixture;

    #[test]
    fn harness_tools_append_and_read_context_where_a_state_dir_is_allowed() {
        let f = fixture(true);
        let state_dir = f.state_dir.display().to_string();
        let out = harness_append(
            &f.ctx,
            HarnessAppendInput {
                state_dir: Some(state_dir.clone()),
                role: "worker".into(),
                feature: Some("F-001".into()),
                trick: Some(true),
                text: "run the migrations before the seed script".into(),
            },
        )
        .unwrap();
        assert!(out.line.contains("worker F-001 TRICK: run the migrations"), "{}", out.line);
        let raw = std::fs::read_to_string(&out.raw_path).unwrap();
        assert!(raw.contains(&out.line));
        let input = HarnessContextInput { role: "worker".into(), state_dir: Some(state_dir) };
        let ctx = harness_context(&f.ctx, input).unwrap();
        assert_eq!(ctx.role, "worker");
        assert!(!ctx.context.is_empty());
        let input = HarnessAppendInput {
            state_dir: Some(f.state_dir.display().to_string()),
            role: "curator".into(),
            feature: None,
            trick: None,
            text: "x".into(),
        };
        assert_eq!(harness_append(&f.ctx, input).unwrap_err().code(), "bad_request");
    }

    #[test]
    fn a_pass_requested_during_a_pass_is_refused_at_once_naming_the_holder() {
        let f = fixture(true);
        let state_dir = f.state_dir.display().to_string();
        let append = |text: &str| HarnessAppendInput {
            state_dir: Some(state_dir.clone()),
            role: "debugger".into(),
            feature: Some("F-031".into()),
            trick: None,
            text: text.into(),
        };
        harness_append(&f.ctx, append("the webhook reads STRIPE_SECRET at import time")).unwrap();
        // Another process's pass holds the lock.
        let lock = f.state_dir.join("memory/.curator.lock");
        let held = curator_store::acquire_lock(&lock, &Default::default()).unwrap();
        let started = std::time::Instant::now();
        let input =
            HarnessCurateInput { trigger: Some("done".into()), state_dir: Some(state_dir.clone()) };
        let err = harness_curate(&f.ctx, input).unwrap_err();
        assert!(started.elapsed() < std::time::Duration::from_secs(2), "refused at once");
        assert_eq!((err.status().as_u16(), err.code()), (409, "curator_busy"));
        assert!(
            err.message().contains(&format!("pid {}", std::process::id())),
            "{}",
            err.message()
        );
        drop(held);
        let input = HarnessCurateInput { trigger: None, state_dir: Some(state_dir.clone()) };
        let out = harness_curate(&f.ctx, input).unwrap();
        assert!(out.line.starts_with("CURATED "), "{}", out.line);
        assert!(!out.partial);
        let trace = harness_trace(
            &f.ctx,
            HarnessTraceInput { text: "stripe_secret".into(), state_dir: Some(state_dir) },
        )
        .unwrap();
        assert!(!trace.hits.is_empty(), "{trace:?}");
        assert!(trace.hits.iter().any(|h| h.place == "raw.md"), "{trace:?}");
        assert!(trace.hits.iter().any(|h| h.place.starts_with("MEMORY.md")), "{trace:?}");
    }

    #[test]
    fn harness_issue_files_a_pending_issue_that_triage_merges_and_refuses_bad_ones() {
        let f = fixture(true);
        let state_dir = f.state_dir.display().to_string();
        let issue = |severity: &str| HarnessIssueInput {
            state_dir: Some(state_dir.clone()),
            title: "Sandbox unreachable".into(),
            severity: severity.into(),
            found_during: "F-031".into(),
            code_pointer: Some("src/net.rs:12".into()),
            evidence: None,
            repro: None,
            suggested_fix: None,
            source: Some("worker".into()),
        };
        let out = harness_issue(&f.ctx, issue("major")).unwrap();
        let pending = std::fs::read_to_string(&out.pending_path).unwrap();
        assert!(pending.contains("Sandbox unreachable") && pending.contains("\"worker\""));
        assert!(harness_issue(&f.ctx, issue("apocalyptic")).is_err(), "severity is checked");
        let h = Harness::open(&f.state_dir, f.state_dir.join("id"), HarnessOptions::default());
        assert_eq!(h.triage(curator_core::time::now()).unwrap().merged, 1);
    }

    #[test]
    fn harness_tools_refuse_a_state_dir_over_http_and_need_a_configured_harness() {
        let f = fixture(false);
        let input = HarnessContextInput {
            role: "worker".into(),
            state_dir: Some(f.state_dir.display().to_string()),
        };
        assert_eq!(harness_context(&f.ctx, input).unwrap_err().code(), "state_dir_not_allowed");
        assert!(!f.state_dir.exists(), "nothing may be created in a refused state_dir");
        let input = HarnessContextInput { role: "worker".into(), state_dir: None };
        let err = harness_context(&f.ctx, input).unwrap_err();
        assert_eq!(err.code(), "harness_not_configured");
        assert!(!err.message().contains("state_dir"), "over HTTP a call cannot name one");
        // On stdio a call may name its state directory: the error says so.
        let f = fixture(true);
        let input = HarnessContextInput { role: "worker".into(), state_dir: None };
        let err = harness_context(&f.ctx, input).unwrap_err();
        assert_eq!(err.code(), "harness_not_configured");
        assert!(err.message().contains("pass state_dir"), "{}", err.message());
    }
}
