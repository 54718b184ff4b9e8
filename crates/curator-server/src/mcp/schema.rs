//! The MCP tools' inputs and outputs, with the JSON Schemas clients see in `tools/list`
//! (issue 6 item 3: "each with a JSON schema, structured output").
//!
//! Inputs are deserialized strictly (`deny_unknown_fields`: a misspelt optional key is an error
//! the agent can read and fix, never a silently ignored filter). The run record and the
//! decisions are taken as JSON and validated by the engine itself, which names the failing
//! field by its JSON path; their schemas here are documentation for the agent, and the
//! decisions schema is the engine's own ([`Decisions::json_schema`]), so the two cannot drift.
//!
//! Outputs are mirrors of the engine's types (MemoryLog, snapshots, injections) that derive a
//! schema. A result is built by passing the engine's JSON through its mirror
//! ([`mirror`]), which refuses unknown or missing fields: if the engine's shape ever changes,
//! the tool reports an error (and the unit tests fail) instead of sending structured content
//! that contradicts the advertised output schema.

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::ApiError;

/// Query mode: `terms` (tokenized any-term match, the default) or `phrase` (agent-qa exactly).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Mode {
    Terms,
    Phrase,
}

/// One test of a suite, in suite order.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SuiteTest {
    /// The child test's file, e.g. `tests/checkout/01-add-to-cart.yaml`.
    pub(crate) test: String,
    /// The child test's id (`t_…`).
    pub(crate) id: String,
}

/// `query_memory`: the memory one agent step gets.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct QueryMemoryInput {
    /// The product (scope folder under products/).
    pub(crate) product: String,
    /// The test id (`t_…`, scope folder under tests/).
    pub(crate) test: String,
    /// The step instruction as the agent sees it (`step` is a deprecated alias).
    #[serde(alias = "step")]
    pub(crate) step_text: String,
    /// The suite id (`s_…`) when the test runs inside a suite.
    #[serde(default)]
    pub(crate) suite: Option<String>,
    /// The suite's tests in order (with `position`: reads the suite memory learned at this
    /// position).
    #[serde(default)]
    pub(crate) suite_tests: Option<Vec<SuiteTest>>,
    /// This test's 0-based position in `suite_tests`.
    #[serde(default)]
    pub(crate) position: Option<u64>,
    /// Record the injection for this run (with `step_index`), so `record_run` knows what the
    /// step was given.
    #[serde(default)]
    pub(crate) run_id: Option<String>,
    /// The 0-based index of the step in the run (with `run_id`).
    #[serde(default)]
    pub(crate) step_index: Option<u64>,
    /// `terms` (default) or `phrase`.
    #[serde(default)]
    pub(crate) mode: Option<Mode>,
    /// Only inject observations with at least this trust (default: the config's minTrust).
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub(crate) min_trust: Option<f64>,
    /// Inject at most this many observations (default: the config's maxInjections).
    #[serde(default)]
    pub(crate) max_injections: Option<usize>,
}

/// One injected observation.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct InjectedOut {
    pub(crate) id: String,
    pub(crate) title: String,
    pub(crate) content: String,
    pub(crate) trust: f64,
    /// Relevance × trust, higher is better.
    pub(crate) score: f64,
    /// `products`, `suites` or `tests`.
    pub(crate) tier: String,
    pub(crate) scope: String,
    /// Injected on probation: below minTrust, or a proposal waiting for review (at most one per
    /// run).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) probation: bool,
    /// A proposal from the review queue.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) pending: bool,
}

/// What `query_memory` answers: the same `observations` and `formatted` as `curator query
/// --json`, plus what was recorded.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct QueryMemoryOutput {
    /// The injected observations, best first.
    pub(crate) observations: Vec<InjectedOut>,
    /// The exact `<memory-context>` block to put in the step prompt; null when nothing matched.
    pub(crate) formatted: Option<String>,
    /// The run the injection was recorded for, if any.
    pub(crate) run_id: Option<String>,
    /// The step index the injection was recorded at, if any.
    pub(crate) step_index: Option<u64>,
    /// Whether the injection was recorded in the run session.
    pub(crate) recorded: bool,
    /// True when the circuit breaker of the run or suite is tripped: nothing is injected.
    pub(crate) breaker_tripped: bool,
    /// What the query skipped and why (a product, test or suite name that cannot be a folder
    /// is skipped, as agent-qa skips it, and the other folders are served); empty when nothing
    /// was.
    pub(crate) warnings: Vec<String>,
}

/// Which decision provider `record_run` uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Provider {
    /// No LLM: confirm what was injected into passed steps, add what the agent flagged with
    /// `MEMO:` in a step's notes.
    Rules,
    /// Apply the `decisions` given with the call.
    Explicit,
}

/// `record_run`: a finished run's record, curated.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RecordRunInput {
    /// The run record (`run` is a deprecated alias).
    #[serde(alias = "run")]
    #[schemars(schema_with = "run_record_schema")]
    pub(crate) run_record: Value,
    /// `rules` (default without `decisions`) or `explicit` (default with `decisions`).
    #[serde(default)]
    pub(crate) provider: Option<Provider>,
    /// A.U.D.N. decisions to apply (explicit provider; only used for a passed run).
    #[serde(default)]
    #[schemars(schema_with = "decisions_schema")]
    pub(crate) decisions: Option<Value>,
}

/// `propose_decisions`: add / confirm / deprecate outside a run.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ProposeDecisionsInput {
    /// The product the decisions are about.
    pub(crate) product: String,
    /// The test id the knowledge comes from (the `source_test` of added observations).
    pub(crate) test: String,
    /// The suite, when suite-scoped observations are added or changed. Stale suite memory
    /// (learned for a test that is no longer at its position) is cleaned, as after a run.
    #[serde(default)]
    pub(crate) suite: Option<SuiteIn>,
    /// The decisions, agent-qa's schema.
    #[schemars(schema_with = "decisions_schema")]
    pub(crate) decisions: Value,
    /// The run id the changes are journaled under (default: a fresh `r_…` id).
    #[serde(default)]
    pub(crate) run_id: Option<String>,
}

/// A suite as a run record gives it.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SuiteIn {
    /// The suite id (`s_…`).
    pub(crate) id: String,
    /// The suite's tests, in order.
    pub(crate) tests: Vec<SuiteTest>,
    /// The 0-based position of `test` in `tests`.
    pub(crate) position: u64,
}

/// An observation's fields, as agent-qa's memory log snapshots them.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SnapshotOut {
    pub(crate) id: String,
    pub(crate) title: String,
    pub(crate) content: String,
    pub(crate) trust: f64,
    pub(crate) created: String,
    pub(crate) last_confirmed: String,
    pub(crate) confirmed_count: u64,
    pub(crate) contradicted_count: u64,
    pub(crate) source_test: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) position: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) suite_snapshot: Option<Vec<SuiteTest>>,
}

/// One change of a curator run.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DeltaOut {
    /// `add`, `confirm`, `deprecate`, `delete`, or for the review queue `propose`, `approve`,
    /// `reject`.
    pub(crate) action: String,
    pub(crate) tier: String,
    pub(crate) scope: String,
    #[serde(rename = "observationId")]
    pub(crate) observation_id: String,
    pub(crate) reasoning: String,
    pub(crate) before: Option<SnapshotOut>,
    pub(crate) after: Option<SnapshotOut>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<String>,
}

/// Tokens an LLM provider spent.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct TokenUsageOut {
    pub(crate) prompt_tokens: u64,
    pub(crate) completion_tokens: u64,
    pub(crate) total_tokens: u64,
}

/// The MemoryLog of one curator run (agent-qa's MemoryLog plus `run_id`, `case`, `provider`).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct MemoryLogOut {
    /// The journal run id (`undo` takes it).
    pub(crate) run_id: String,
    /// `passed`, `failed`, `ablation_passed` or `ablation_failed`.
    pub(crate) case: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) provider: Option<String>,
    pub(crate) added: u64,
    pub(crate) confirmed: u64,
    pub(crate) deprecated: u64,
    pub(crate) deleted: u64,
    /// Adds written to the review queue instead of memory (issue 18).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub(crate) proposed: u64,
    /// Proposals approved into memory by this run (auto review).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub(crate) approved: u64,
    /// Proposals rejected from the queue by this run (auto review).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub(crate) rejected: u64,
    pub(crate) deltas: Vec<DeltaOut>,
    /// Decisions that could not be applied, one line each (they changed nothing).
    pub(crate) errors: Vec<String>,
    #[serde(rename = "curatorDuration")]
    pub(crate) curator_duration: u64,
    #[serde(rename = "tokenUsage", default, skip_serializing_if = "Option::is_none")]
    pub(crate) token_usage: Option<TokenUsageOut>,
    /// True when this run had already been applied: nothing changed, so a retried call is
    /// harmless.
    pub(crate) already_applied: bool,
    /// Which application of the run the journal holds (1 the first; n + 1 when recorded again
    /// after an undo); absent when the run journaled nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) generation: Option<u32>,
    /// `recorded`, `already_recorded` (a retried run: nothing counted twice) or `unsupported`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) evidence: Option<String>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// An observation's outcome evidence (issue 18).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct EvidenceOut {
    /// Runs it was injected into.
    pub(crate) runs: u64,
    /// Injections into passed steps with no failure later in the run.
    pub(crate) passed: u64,
    /// Injections into a failed step.
    pub(crate) failed: u64,
    /// Injections into a passed step of a run that failed later.
    pub(crate) before_failure: u64,
    /// Of those, into the step right before the failed one.
    pub(crate) just_before: u64,
    /// Failed runs whose rerun without memory passed (memory proven the cause).
    pub(crate) ablation_blamed: u64,
    /// Failed runs whose rerun without memory failed too.
    pub(crate) ablation_cleared: u64,
    /// Probation injections into a passed step.
    pub(crate) probation_passed: u64,
    /// Probation injections followed by a failure.
    pub(crate) probation_failed: u64,
}

/// One observation with where it lives and its evidence.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ObservationDetailOut {
    /// `products`, `suites` or `tests`.
    pub(crate) tier: String,
    pub(crate) scope: String,
    #[serde(flatten)]
    pub(crate) fields: SnapshotOut,
    /// `memory`, or `pending` while it waits for review.
    pub(crate) place: String,
    pub(crate) evidence: EvidenceOut,
}

/// `list_pending`: which part of the review queue.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListPendingInput {
    /// `products`, `suites` or `tests` (singular accepted).
    #[serde(default)]
    pub(crate) tier: Option<String>,
    /// One scope folder.
    #[serde(default)]
    pub(crate) scope: Option<String>,
}

/// The review queue.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct PendingOut {
    pub(crate) total: usize,
    /// Queued files that cannot be read.
    pub(crate) problems: usize,
    pub(crate) pending: Vec<ObservationDetailOut>,
}

/// `review_pending`: approve or reject a proposal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ReviewDecision {
    Approve,
    Reject,
}

/// `review_pending`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReviewPendingInput {
    /// The proposal's id (`obs_…`).
    pub(crate) id: String,
    /// `approve` (it enters its tier folder unchanged) or `reject` (it leaves the queue).
    pub(crate) decision: ReviewDecision,
    /// Why (kept in the journal).
    #[serde(default)]
    pub(crate) reasoning: Option<String>,
}

/// What a review decision did.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReviewOutcomeOut {
    /// The run id it was journaled under (`undo` reverts it).
    pub(crate) run_id: String,
    /// `approve` or `reject`.
    pub(crate) action: String,
    pub(crate) id: String,
    pub(crate) tier: String,
    pub(crate) scope: String,
    /// `memory` after an approval, null after a rejection.
    pub(crate) place: Option<String>,
    /// The same decision was already taken (a retry): nothing changed, and `run_id` is the run
    /// that took it. Always present.
    #[serde(default)]
    pub(crate) already_applied: bool,
}

/// `list_observations`: filters and paging.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListObservationsInput {
    /// `products`, `suites` or `tests` (singular accepted).
    #[serde(default)]
    pub(crate) tier: Option<String>,
    /// One scope folder: a product, a suite id or a test id.
    #[serde(default)]
    pub(crate) scope: Option<String>,
    /// Only observations with at least this trust.
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub(crate) min_trust: Option<f64>,
    /// Case-insensitive text the title or content must contain.
    #[serde(default)]
    pub(crate) text: Option<String>,
    /// Skip this many (paging).
    #[serde(default)]
    pub(crate) offset: Option<usize>,
    /// At most this many (1..=1000, default 100).
    #[serde(default)]
    pub(crate) limit: Option<usize>,
}

/// An observation and where it lives.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ObservationOut {
    /// `products`, `suites` or `tests`.
    pub(crate) tier: String,
    pub(crate) scope: String,
    #[serde(flatten)]
    pub(crate) fields: SnapshotOut,
}

/// One page of observations, sorted by tier, scope and id.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ObservationPage {
    /// How many match the filters: without `text` or `min_trust`, the observation files
    /// (served or not); with either, the matching observations.
    pub(crate) total: usize,
    pub(crate) offset: usize,
    pub(crate) limit: usize,
    pub(crate) observations: Vec<ObservationOut>,
    /// Files found under the root but not served (`curator lint` says why).
    pub(crate) problems: usize,
    /// The offset of the next page; null on the last. A page may hold fewer than `limit`
    /// observations when files on it are not served: page by this, not by the rows received.
    pub(crate) next_offset: Option<usize>,
}

/// `get_observation`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GetObservationInput {
    /// The observation id (`obs_…`).
    pub(crate) id: String,
}

/// `harness_append`: one line for the harness's raw.md.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct HarnessAppendInput {
    /// The harness state directory (stdio only; over HTTP the server's configured one is used).
    #[serde(default)]
    pub(crate) state_dir: Option<String>,
    /// The authoring role (worker, validator, planner, …; never `curator`).
    pub(crate) role: String,
    /// The feature in scope, e.g. `F-023`.
    #[serde(default)]
    pub(crate) feature: Option<String>,
    /// Flag a reusable pattern for promotion (tag TRICK).
    #[serde(default)]
    pub(crate) trick: Option<bool>,
    /// The one-line observation.
    pub(crate) text: String,
}

/// What `harness_append` wrote.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct HarnessAppendOutput {
    /// The line appended to raw.md.
    pub(crate) line: String,
    /// The raw.md file.
    pub(crate) raw_path: String,
}

/// `harness_context`: the memory preamble of a role's prompt.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct HarnessContextInput {
    /// The role whose prompt gets the preamble (`[A-Za-z0-9-]+`).
    pub(crate) role: String,
    /// The harness state directory (stdio only; over HTTP the server's configured one is used).
    #[serde(default)]
    pub(crate) state_dir: Option<String>,
}

/// The preamble.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct HarnessContextOutput {
    pub(crate) role: String,
    /// Discipline reminder, the role's identity file and summary.md, ready to prepend.
    pub(crate) context: String,
}

/// `harness_curate`: a curator pass over the harness memory.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct HarnessCurateInput {
    /// `manual` (default), `done`, `escalate` or `periodic`.
    #[serde(default)]
    pub(crate) trigger: Option<String>,
    /// The harness state directory (stdio only; over HTTP the server's configured one is used).
    #[serde(default)]
    pub(crate) state_dir: Option<String>,
}

/// What a pass did.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct HarnessCurateOutput {
    /// The one `CURATED …` line.
    pub(crate) line: String,
    pub(crate) trigger: String,
    /// The issues part failed (issues.json left as it was); memory was still curated.
    pub(crate) partial: bool,
    /// Why the issues part failed.
    pub(crate) issues_error: Option<String>,
    /// Archive records this pass wrote, per disposition (promoted, merged, kept, absorbed,
    /// dropped), for raw.md entries.
    pub(crate) dispositions: std::collections::BTreeMap<String, u64>,
    /// Drops, near-format lines, compactions, identity appends.
    pub(crate) notes: Vec<String>,
    /// Files whose bytes changed.
    pub(crate) changed: Vec<String>,
}

/// `harness_issue`: one pending issue for the next triage (harness-curator §3.3).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct HarnessIssueInput {
    /// The harness state directory (stdio only; over HTTP the server's configured one is used).
    #[serde(default)]
    pub(crate) state_dir: Option<String>,
    /// One-line title (`BLOCKED: …` for a blocked worker).
    pub(crate) title: String,
    /// `critical`, `major`, `minor` or `nit`.
    pub(crate) severity: String,
    /// The feature being worked on or validated, e.g. `F-023`.
    pub(crate) found_during: String,
    /// Where: `path:line`.
    #[serde(default)]
    pub(crate) code_pointer: Option<String>,
    /// What was observed.
    #[serde(default)]
    pub(crate) evidence: Option<String>,
    /// How to reproduce.
    #[serde(default)]
    pub(crate) repro: Option<String>,
    /// A suggested fix.
    #[serde(default)]
    pub(crate) suggested_fix: Option<String>,
    /// The filing role, the issue's `source` (default `validator`).
    #[serde(default)]
    pub(crate) source: Option<String>,
}

/// What `harness_issue` filed.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct HarnessIssueOutput {
    /// The title as filed.
    pub(crate) title: String,
    /// The pending-issues file the line was appended to; the next triage or pass merges it
    /// into issues.json.
    pub(crate) pending_path: String,
}

/// `harness_trace`: where an entry went.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct HarnessTraceInput {
    /// Text to look for, case-insensitive (a word or phrase of the entry).
    pub(crate) text: String,
    /// The harness state directory (stdio only; over HTTP the server's configured one is used).
    #[serde(default)]
    pub(crate) state_dir: Option<String>,
}

/// One place the text was found.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct HarnessTraceHit {
    /// `raw.md`, `archive`, `MEMORY.md ## <section>`, `identity/<role>.md`.
    pub(crate) place: String,
    pub(crate) text: String,
    /// For archive hits: promoted, merged, kept, absorbed or dropped.
    pub(crate) disposition: Option<String>,
    /// For archive hits: where its content is now.
    pub(crate) to: Vec<String>,
    /// For archive hits: the item it became part of.
    pub(crate) item: Option<String>,
    /// For archive hits: why (absorbed, dropped, kept verbatim).
    pub(crate) reason: Option<String>,
    /// For promoted or merged entries: whether the item is still in its target.
    pub(crate) still_there: Option<bool>,
}

/// Where the text was found.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct HarnessTraceOutput {
    pub(crate) query: String,
    pub(crate) hits: Vec<HarnessTraceHit>,
    /// More hits existed than were returned.
    pub(crate) truncated: bool,
}

/// Passes the engine's JSON for a value through its mirror type.
pub(crate) fn mirror<M: DeserializeOwned>(
    what: &str,
    value: impl Serialize,
) -> Result<M, ApiError> {
    let json = serde_json::to_value(value)
        .map_err(|e| ApiError::internal(format!("encoding the {what}: {e}")))?;
    serde_json::from_value(json).map_err(|e| {
        ApiError::internal(format!("the {what} does not match the advertised output schema: {e}"))
    })
}

fn run_record_schema(_: &mut SchemaGenerator) -> Schema {
    let step = json_schema!({
        "type": "object",
        "required": ["name", "status"],
        "properties": {
            "name": {"type": "string", "description": "The step instruction."},
            "status": {"type": "string", "description": "\"passed\" or \"failed\" (others carry no meaning)."},
            "observation": {"type": "string", "description": "What the agent saw; a line starting with MEMO: asks the rules provider to remember it."},
            "error": {"type": "string"},
            "reasoning": {"type": "string"},
            "sub_actions": {"type": "integer", "minimum": 0},
            "healing_attempts": {"type": "integer", "minimum": 0},
            "injected": {"type": "array", "items": {"type": "string"},
                         "description": "Ids injected into this step; omit to use what query_memory recorded for run_id."}
        }
    });
    json_schema!({
        "type": "object",
        "description": "A finished run (ARCHITECTURE.md \"Run record\"). Unknown keys are ignored.",
        "required": ["product", "test", "status", "steps"],
        "properties": {
            "run_id": {"type": "string", "description": "The run id used with query_memory (r_… or any safe name)."},
            "product": {"type": "string"},
            "test": {"type": "object", "required": ["id", "name"], "properties": {
                "id": {"type": "string"}, "name": {"type": "string"}, "file": {"type": "string"}}},
            "suite": {"type": "object", "required": ["id", "tests", "position"], "properties": {
                "id": {"type": "string"},
                "tests": {"type": "array", "items": {"type": "object", "required": ["test", "id"],
                          "properties": {"test": {"type": "string"}, "id": {"type": "string"}}}},
                "position": {"type": "integer", "minimum": 0}}},
            "status": {"type": "string", "enum": ["passed", "failed", "cancelled"]},
            "steps": {"type": "array", "items": step},
            "ablation": {"type": "object", "required": ["status"], "properties": {
                "status": {"type": "string", "enum": ["passed", "failed"]}},
                "description": "The rerun without memory of a failed run."}
        }
    })
}

/// The engine's decisions array schema.
fn decisions_schema(_: &mut SchemaGenerator) -> Schema {
    let document = curator_engine::curate::Decisions::json_schema();
    let array = document
        .get("properties")
        .and_then(|p| p.get("decisions"))
        .cloned()
        .unwrap_or_else(|| serde_json::json!({"type": "array"}));
    Schema::try_from(array).unwrap_or_else(|_| json_schema!({"type": "array"}))
}
