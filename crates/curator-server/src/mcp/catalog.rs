//! The tool catalog: names, descriptions, schemas and hints clients see in `tools/list`, and
//! the dispatch of a `tools/call` to [`super::tools`] (issue 6 item 3).
//!
//! Error policy (MCP "tool execution errors"): anything wrong with a call the tool itself can
//! explain — arguments that do not parse, a field that breaks a rule, an unknown id, a lock held
//! elsewhere — is an `isError: true` result whose text is `<code>: <message>` and whose
//! structured content is `{"error": {"code", "message"}}`, so the agent reads it and can fix
//! the call. Only a tool name that does not exist is a protocol error.

use std::sync::Arc;

use rmcp::handler::server::tool::{schema_for_input, schema_for_output};
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::journal::{
    ObservationHistoryInput, ObservationHistoryOutput, UndoRunInput, UndoRunOutput,
};
use super::schema::{
    GetObservationInput, HarnessAppendInput, HarnessAppendOutput, HarnessContextInput,
    HarnessContextOutput, HarnessCurateInput, HarnessCurateOutput, HarnessIssueInput,
    HarnessIssueOutput, HarnessTraceInput, HarnessTraceOutput, ListObservationsInput,
    ListPendingInput, MemoryLogOut, ObservationDetailOut, ObservationPage, PendingOut,
    ProposeDecisionsInput, QueryMemoryInput, QueryMemoryOutput, RecordRunInput, ReviewOutcomeOut,
    ReviewPendingInput,
};
use super::tools::{self, ToolContext};
use super::{harness, journal};
use crate::error::ApiError;

/// The tool names, in the order `tools/list` gives them.
pub(crate) const TOOL_NAMES: [&str; 14] = [
    "query_memory",
    "record_run",
    "propose_decisions",
    "list_observations",
    "get_observation",
    "observation_history",
    "undo_run",
    "list_pending",
    "review_pending",
    "harness_append",
    "harness_issue",
    "harness_context",
    "harness_curate",
    "harness_trace",
];

/// Kind of effect, for the client's annotations.
#[derive(Debug, Clone, Copy)]
enum Effect {
    /// Reads only.
    Read,
    /// Writes memory; may lower trust or delete (curator rules).
    Write,
    /// Only appends.
    Append,
}

fn tool<I: JsonSchema + 'static, O: JsonSchema + 'static>(
    name: &'static str,
    title: &str,
    description: &'static str,
    effect: Effect,
) -> Tool {
    let input: Arc<JsonObject> = schema_for_input::<I>()
        .unwrap_or_else(|e| unreachable!("tool {name}: its input type is a struct: {e}"));
    let annotations = match effect {
        Effect::Read => ToolAnnotations::with_title(title).read_only(true).open_world(false),
        Effect::Write => {
            ToolAnnotations::with_title(title).read_only(false).destructive(true).open_world(false)
        }
        Effect::Append => {
            ToolAnnotations::with_title(title).read_only(false).destructive(false).open_world(false)
        }
    };
    Tool::new(name, description, input)
        .with_title(title)
        .with_raw_output_schema(schema_for_output::<O>())
        .with_annotations(annotations)
}

/// Every tool curator serves.
pub(crate) fn tools() -> Vec<Tool> {
    vec![
        tool::<QueryMemoryInput, QueryMemoryOutput>(
            "query_memory",
            "Query memory for a step",
            "The memory one agent step should get: the trusted observations of the product, \
             suite and test that match the step, best first, and the exact <memory-context> \
             block to prepend to the step prompt (null when nothing matches). Give run_id and \
             step_index to record the injection, so record_run can later confirm or deprecate \
             what the step was given.",
            Effect::Read,
        ),
        tool::<RecordRunInput, MemoryLogOut>(
            "record_run",
            "Record a finished run",
            "Report a finished run and its outcome; the curator updates memory and returns the \
             MemoryLog. A passed run applies decisions (the rules provider confirms what was \
             injected into passed steps and proposes what a step's observation flags with \
             MEMO:; new observations wait in the review queue); a failed run lowers the trust \
             of what the evidence blames for it. Steps without an injected list take what \
             query_memory recorded for run_id. A run is applied once: recording it again (a \
             retry) changes nothing and returns already_applied: true, while a record with \
             another verdict under an applied run_id is refused (run_conflict); a run without \
             run_id is named by its content. Unless this server allows review, the record is \
             the agent's own word: its probation results approve no proposal, and a run a \
             person undid is not applied again (run_undone).",
            Effect::Write,
        ),
        tool::<ProposeDecisionsInput, MemoryLogOut>(
            "propose_decisions",
            "Propose memory decisions",
            "Propose new observations, confirm (update) or deprecate existing ones of a \
             product, suite and test, with agent-qa's decision schema. New observations wait \
             in the review queue until approved (unless the server's review is off). Every \
             decision is scanned and journaled; one that cannot apply is listed in the \
             MemoryLog's errors and changes nothing. The same proposal sent twice (same \
             run_id, or without one the same content) is applied once.",
            Effect::Write,
        ),
        tool::<ListObservationsInput, ObservationPage>(
            "list_observations",
            "List observations",
            "List stored observations, filtered by tier, scope, minimum trust and text, sorted \
             by tier, scope and id, one page at a time.",
            Effect::Read,
        ),
        tool::<GetObservationInput, ObservationDetailOut>(
            "get_observation",
            "Read an observation",
            "One observation by id (served, or waiting for review): title, content, trust, \
             counters, where it lives, and its outcome evidence (injections into passed and \
             failed steps, ablation results, probation results).",
            Effect::Read,
        ),
        tool::<ObservationHistoryInput, ObservationHistoryOutput>(
            "observation_history",
            "History of an observation",
            "Read-only. Every journaled change of one observation, oldest first: when, which \
             run (run_id, the id undo_run takes), the action, the reason and the observation \
             before and after. Changes nothing. An id that is neither journaled nor stored is \
             a not_found error, never an empty history.",
            Effect::Read,
        ),
        tool::<UndoRunInput, UndoRunOutput>(
            "undo_run",
            "Undo a run",
            "Reverts every file change the newest application of run_id made (record_run, \
             propose_decisions, curate), newest first, restoring each observation file byte \
             for byte, and journals the reverts under undo-<run_id>; the run's outcome \
             evidence stops counting (`evidence` names the runs whose evidence was reverted). \
             Retrying it is safe: a run already undone changes nothing and returns \
             already_applied: true. Limits: refused as a \
             whole, changing nothing, when any of those files changed after the run \
             (undo_conflict, naming the file) or when the run is not in the journal \
             (unknown_run); an invalid run id is invalid_run_id. Changes observation files \
             and the journal. Refused (review_not_allowed) unless this server allows review: \
             an undo reverts a person's decisions as readily as a run's.",
            Effect::Write,
        ),
        tool::<ListPendingInput, PendingOut>(
            "list_pending",
            "List proposals waiting for review",
            "The review queue: observations an agent or a model proposed, which are never \
             injected as ordinary memory until approved, each with its probation record.",
            Effect::Read,
        ),
        tool::<ReviewPendingInput, ReviewOutcomeOut>(
            "review_pending",
            "Approve or reject a proposal",
            "Approve a queued proposal (it enters memory unchanged) or reject it (it leaves the \
             queue). Journaled and undoable. Only for a person's client: refused unless the \
             server was started with review over MCP allowed.",
            Effect::Write,
        ),
        tool::<HarnessAppendInput, HarnessAppendOutput>(
            "harness_append",
            "Append a harness observation",
            "Append one line to the harness's raw.md log (role, optional feature, TRICK flag \
             for a reusable pattern). The text is scanned for unsafe content first.",
            Effect::Append,
        ),
        tool::<HarnessIssueInput, HarnessIssueOutput>(
            "harness_issue",
            "File a harness issue",
            "Appends one pending issue (title, severity critical|major|minor|nit, the feature \
             it was found during, optional code pointer, evidence, repro, fix, source role) to \
             the harness's pending-issues.jsonl; the next harness_curate pass (or triage) \
             merges it into issues.json, deduplicating repeats. Changes only that file; the \
             text is scanned for unsafe content first and refused if it fails. Over HTTP only \
             the server's configured state directory is used.",
            Effect::Append,
        ),
        tool::<HarnessContextInput, HarnessContextOutput>(
            "harness_context",
            "Harness context for a role",
            "The memory preamble for a role's prompt: the discipline reminder, the role's \
             identity file and the mission summary.",
            Effect::Read,
        ),
        tool::<HarnessCurateInput, HarnessCurateOutput>(
            "harness_curate",
            "Run a harness curator pass",
            "Distil the harness memory now: triage pending issues, merge raw.md into MEMORY.md \
             and identity files, re-derive summary.md, archive every entry that leaves raw.md \
             with its disposition, and truncate raw.md. Refused at once (curator_busy, naming \
             the holder) while another pass runs. `partial` means the issues part failed and \
             memory was curated anyway.",
            Effect::Write,
        ),
        tool::<HarnessTraceInput, HarnessTraceOutput>(
            "harness_trace",
            "Trace a harness entry",
            "Where did an entry go? Looks for the text in raw.md, the archive (with the entry's \
             disposition: promoted, merged, kept, absorbed or dropped, where to and why), \
             MEMORY.md and the identity files.",
            Effect::Read,
        ),
    ]
}

/// Runs tool `name`; `None` when no such tool exists. Blocking: call it off the async runtime.
pub(crate) fn call(ctx: &ToolContext, name: &str, arguments: JsonObject) -> Option<CallToolResult> {
    let result = match name {
        "query_memory" => run(name, arguments, |i| tools::query_memory(ctx, i)),
        "record_run" => run(name, arguments, |i| tools::record_run(ctx, i)),
        "propose_decisions" => run(name, arguments, |i| tools::propose_decisions(ctx, i)),
        "list_observations" => run(name, arguments, |i| tools::list_observations(ctx, i)),
        "get_observation" => run(name, arguments, |i| tools::get_observation(ctx, i)),
        "observation_history" => run(name, arguments, |i| journal::observation_history(ctx, i)),
        "undo_run" => run(name, arguments, |i| journal::undo_run(ctx, i)),
        "harness_issue" => run(name, arguments, |i| harness::harness_issue(ctx, i)),
        "list_pending" => run(name, arguments, |i| tools::list_pending(ctx, i)),
        "review_pending" => run(name, arguments, |i| tools::review_pending(ctx, i)),
        "harness_append" => run(name, arguments, |i| harness::harness_append(ctx, i)),
        "harness_context" => run(name, arguments, |i| harness::harness_context(ctx, i)),
        "harness_curate" => run(name, arguments, |i| harness::harness_curate(ctx, i)),
        "harness_trace" => run(name, arguments, |i| harness::harness_trace(ctx, i)),
        _ => return None,
    };
    Some(match result {
        Ok(value) => CallToolResult::structured(value),
        Err(e) => tool_error(&e),
    })
}

fn run<I: DeserializeOwned, O: Serialize>(
    name: &str,
    arguments: JsonObject,
    work: impl FnOnce(I) -> Result<O, ApiError>,
) -> Result<Value, ApiError> {
    let input: I = serde_json::from_value(Value::Object(arguments)).map_err(|e| {
        ApiError::new(
            axum::http::StatusCode::BAD_REQUEST,
            "invalid_arguments",
            format!("arguments of {name}: {e}"),
        )
    })?;
    let output = work(input)?;
    serde_json::to_value(output)
        .map_err(|e| ApiError::internal(format!("encoding the result of {name}: {e}")))
}

/// The `isError` result for a failed call.
pub(crate) fn tool_error(e: &ApiError) -> CallToolResult {
    let mut result =
        CallToolResult::error(vec![ContentBlock::text(format!("{}: {}", e.code(), e.message()))]);
    result.structured_content = Some(json!({"error": {"code": e.code(), "message": e.message()}}));
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_is_listed_once_with_object_schemas_and_a_description() {
        let tools = tools();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(names, TOOL_NAMES);
        for t in &tools {
            assert_eq!(t.input_schema.get("type"), Some(&json!("object")), "{}", t.name);
            let output = t.output_schema.as_ref().unwrap_or_else(|| panic!("{}", t.name));
            assert_eq!(output.get("type"), Some(&json!("object")), "{}", t.name);
            assert!(t.description.as_ref().is_some_and(|d| d.len() > 40), "{}", t.name);
        }
    }

    #[test]
    fn schemas_carry_required_fields_and_the_engines_decision_schema() {
        let tools = tools();
        let get = |name: &str| tools.iter().find(|t| t.name == name).unwrap();
        let query = get("query_memory");
        let required = query.input_schema.get("required").unwrap();
        for field in ["product", "test", "step_text"] {
            assert!(required.as_array().unwrap().contains(&json!(field)), "{required}");
        }
        let mode = &query.input_schema["properties"]["mode"];
        assert!(mode.to_string().contains("phrase"), "{mode}");
        let propose = get("propose_decisions");
        let decisions = &propose.input_schema["properties"]["decisions"];
        assert_eq!(decisions["type"], json!("array"), "{decisions}");
        assert!(decisions.to_string().contains("observationId"), "{decisions}");
        let record = get("record_run");
        assert!(record.input_schema["properties"]["run_record"].to_string().contains("steps"));
    }

    #[test]
    fn bad_arguments_are_tool_errors_that_say_what_is_wrong() {
        let dir = tempfile::tempdir().unwrap();
        let store =
            curator_store::FileStore::open(dir.path(), curator_store::FileStoreOptions::default())
                .unwrap();
        let state = crate::state::AppState::new(store, crate::state::ServerOptions::default());
        let ctx = ToolContext { state, options: Default::default() };
        let args = json!({"product": "acme-shop", "tset": "t_x", "step_text": "go"});
        let Value::Object(args) = args else { unreachable!() };
        let result = call(&ctx, "query_memory", args).unwrap();
        assert_eq!(result.is_error, Some(true));
        let error = &result.structured_content.unwrap()["error"];
        assert_eq!(error["code"], json!("invalid_arguments"));
        assert!(error["message"].as_str().unwrap().contains("tset"), "{error}");
        assert!(call(&ctx, "no_such_tool", JsonObject::new()).is_none());
    }
}
