//! The journal tools (issue 15 item 4): an observation's history and undoing a run, the MCP
//! face of `curator history ID` / `GET /observations/{id}/history` and `curator undo RUN_ID` /
//! `POST /runs/{run_id}/undo`, calling the same functions so the three surfaces agree.
//!
//! History is read-only and refuses an id that is neither journaled nor stored (`not_found`), so
//! a mistyped id never looks like an untouched observation. Undo reverts the newest standing
//! application of a run only when every file is still as the run left it; otherwise it refuses,
//! names the file, and changes nothing (the engine's rule, `crate::undo`).

use curator_engine::undo::UndoReport;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::schema::{SnapshotOut, mirror};
use super::tools::ToolContext;
use crate::error::ApiError;
use crate::ops;
use crate::routes::observations::history_of;

/// `observation_history`: one observation's journal.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ObservationHistoryInput {
    /// The observation id (`obs_…`).
    pub(crate) id: String,
}

/// One journaled change of an observation.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct HistoryEntryOut {
    /// When the change was made (ISO 8601, UTC).
    pub(crate) time: String,
    /// The run that made it (`undo_run` takes it); null for a change made outside a run.
    pub(crate) run_id: Option<String>,
    /// `add`, `confirm`, `deprecate`, `delete`, `edit`, `undo`, `exonerate`, ...
    pub(crate) action: String,
    /// `products`, `suites` or `tests`.
    pub(crate) tier: String,
    pub(crate) scope: String,
    /// Why (a step is named by its 0-based index, as `step_index`).
    pub(crate) reasoning: String,
    /// The observation before the change; null when it was added.
    pub(crate) before: Option<SnapshotOut>,
    /// The observation after the change; null when it was deleted.
    pub(crate) after: Option<SnapshotOut>,
}

/// What `observation_history` answers.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ObservationHistoryOutput {
    pub(crate) id: String,
    /// Every change, oldest first.
    pub(crate) entries: Vec<HistoryEntryOut>,
}

/// `undo_run`: revert one run's changes.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct UndoRunInput {
    /// The run id whose changes to revert (the `run_id` of its MemoryLog).
    pub(crate) run_id: String,
}

/// One reverted change.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RevertedOut {
    /// The action that was reverted.
    pub(crate) action: String,
    /// The file, relative to the memory root.
    pub(crate) file: String,
}

/// What `undo_run` did.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct UndoRunOutput {
    pub(crate) run_id: String,
    /// The run id the reverting changes were journaled under (`undo-<run_id>`; undoing it
    /// re-applies the changes).
    pub(crate) undo_run_id: String,
    /// Which application of the run was reverted (1 the first).
    pub(crate) generation: u32,
    /// The reverted changes, newest first.
    pub(crate) reverted: Vec<RevertedOut>,
    /// Runs whose outcome evidence the undo reverted (issue 18): the run's own, which stops
    /// counting, or (undoing an undo) the one that counts again. Absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) evidence: Vec<String>,
    /// The run was already undone (a retry): nothing changed and `reverted` is empty.
    pub(crate) already_applied: bool,
}

/// `observation_history`: the journal of one observation, oldest first.
pub(crate) fn observation_history(
    ctx: &ToolContext,
    input: ObservationHistoryInput,
) -> Result<ObservationHistoryOutput, ApiError> {
    let id = ops::parse_id(&input.id)?;
    let entries = history_of(&ctx.state, &id)?
        .into_iter()
        .map(|e| {
            mirror(
                "journal entry",
                json!({
                    "time": e.time, "run_id": e.run_id, "action": e.action, "tier": e.tier,
                    "scope": e.scope, "reasoning": e.reasoning, "before": e.before,
                    "after": e.after,
                }),
            )
        })
        .collect::<Result<_, _>>()?;
    Ok(ObservationHistoryOutput { id: id.to_string(), entries })
}

/// `undo_run`: the engine's undo of the run's newest standing application.
pub(crate) fn undo_run(ctx: &ToolContext, input: UndoRunInput) -> Result<UndoRunOutput, ApiError> {
    // Undoing reverts a person's decisions as readily as a run's (a reject, an `rm`): it is a
    // review decision, refused where review is (audit 9: an agent undid a person's reject and
    // its rejected text was back on probation).
    if !ctx.options.allow_review {
        return Err(ApiError::new(
            axum::http::StatusCode::FORBIDDEN,
            "review_not_allowed",
            "undo over MCP is off, as review is: an agent must not revert a person's decisions; \
             a person undoes with `curator undo`, the web UI, the HTTP API, or an MCP server \
             started with `curator mcp --allow-review` / `curator serve --mcp-review`",
        ));
    }
    let report: UndoReport = curator_engine::undo::undo(ctx.state.store(), &input.run_id)?;
    mirror("undo report", &report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::schema::RecordRunInput;
    use crate::mcp::tools::record_run;
    use crate::mcp::tools::tests::fixture;

    const CART_BADGE: &str = "obs_noble-poppy-winter-dingo-hazel-storm-bloom-orbit-coral-sage";
    const TEST_ID: &str = "t_lake-mint-harbor-kelp-river-moss-glade-cedar-iris-camel";

    #[test]
    fn history_and_undo_of_a_recorded_run_and_their_refusals() {
        let f = fixture(false);
        let run = json!({
            "run_id": "r_mcp-undo",
            "product": "acme-shop",
            "test": {"id": TEST_ID, "name": "cart"},
            "status": "passed",
            "steps": [{"name": "open", "status": "passed"},
                      {"name": "add to cart", "status": "passed", "injected": [CART_BADGE]}]
        });
        let input = RecordRunInput { run_record: run.clone(), provider: None, decisions: None };
        assert_eq!(record_run(&f.ctx, input).unwrap().confirmed, 1);
        let history =
            observation_history(&f.ctx, ObservationHistoryInput { id: CART_BADGE.into() }).unwrap();
        let last = history.entries.last().unwrap();
        assert_eq!((last.action.as_str(), last.run_id.as_deref()), ("confirm", Some("r_mcp-undo")));
        assert_eq!(last.reasoning, "Injected into step 1 (add to cart), which passed");
        // An agent's MCP client (no review) may not undo: a run and a person's reject or `rm`
        // are undone alike (audit 9).
        let refused = undo_run(&f.ctx, UndoRunInput { run_id: "r_mcp-undo".into() }).unwrap_err();
        assert_eq!((refused.code(), refused.status().as_u16()), ("review_not_allowed", 403));
        let mut person = f.ctx.clone();
        person.options.allow_review = true;
        let undone = undo_run(&person, UndoRunInput { run_id: "r_mcp-undo".into() }).unwrap();
        assert_eq!((undone.generation, undone.reverted.len()), (1, 1));
        assert_eq!(undone.reverted[0].action, "confirm");
        assert_eq!(undone.evidence, ["r_mcp-undo"], "the run's evidence is taken out with it");
        assert!(!undone.already_applied);
        let again = undo_run(&person, UndoRunInput { run_id: "r_mcp-undo".into() }).unwrap();
        assert!(again.already_applied && again.reverted.is_empty(), "{again:?}");
        // The agent sending the undone run again does not re-apply what the person reverted.
        let mut agent = person.clone();
        agent.options.allow_review = false;
        let resent = RecordRunInput { run_record: run.clone(), provider: None, decisions: None };
        let err = record_run(&agent, resent).unwrap_err();
        assert_eq!((err.code(), err.status().as_u16()), ("run_undone", 403));
        assert_eq!(again.generation, 1);
        let bad = undo_run(&person, UndoRunInput { run_id: "../../x".into() }).unwrap_err();
        assert_eq!((bad.code(), bad.status().as_u16()), ("invalid_run_id", 400));
        // Refused as the CLI and HTTP refuse it, not trimmed into another run's id.
        let padded = undo_run(&person, UndoRunInput { run_id: " r_mcp-undo ".into() }).unwrap_err();
        assert_eq!(padded.code(), "invalid_run_id");
        let unknown = undo_run(&person, UndoRunInput { run_id: "r_never".into() }).unwrap_err();
        assert_eq!(unknown.code(), "unknown_run");
        let missing = "obs_lake-lake-lake-lake-lake-lake-lake-lake-lake-lake";
        let err = observation_history(&f.ctx, ObservationHistoryInput { id: missing.into() })
            .unwrap_err();
        assert_eq!(err.code(), "not_found");
        let err = observation_history(&f.ctx, ObservationHistoryInput { id: "../../x".into() })
            .unwrap_err();
        assert_eq!(err.code(), "invalid_id");
    }
}
