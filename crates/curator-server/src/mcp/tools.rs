//! What each MCP tool does (issue 6 item 3): plain functions over the server's [`AppState`],
//! free of rmcp, so the stdio server, `/mcp` and the unit tests below call the very same code.
//!
//! Every tool goes through the functions the JSON API and the CLI use: the query is
//! `curator_engine::query` with the run session and breaker rules of the run-session route;
//! `record_run` and `propose_decisions` are `curator_engine::curate::curate` (the store's lock,
//! scanner, atomic writes and journal, one run id per call); reads are the API's listing and
//! `Store::get`. The harness tools live in [`super::harness`]. Nothing is cached here.
//!
//! A tool's failure is an [`ApiError`] (a stable code and the library's sentence naming the
//! field and rule); the catalog turns it into an `isError` result the agent can read.

use std::path::PathBuf;

use curator_core::{ScopeName, SnapshotEntry, Tier};
use curator_engine::breaker::Breaker;
use curator_engine::curate::{
    Decisions, MemoryLog, RunRecord, RunRecordError, UnknownKeys, content_run_id, curate,
};
use curator_engine::providers::{DecisionProvider, ExplicitProvider, RulesProvider};
use curator_engine::review;
use curator_engine::session::{record_injection_in, validate_run_id};
use curator_engine::{QueryOutcome, RunStep};
use curator_store::{ListFilter, Place, Store};
use serde_json::{Value, json};

use super::schema::{
    GetObservationInput, ListObservationsInput, ListPendingInput, MemoryLogOut, Mode,
    ObservationDetailOut, ObservationPage, PendingOut, ProposeDecisionsInput, Provider,
    QueryMemoryInput, QueryMemoryOutput, RecordRunInput, ReviewDecision, ReviewOutcomeOut,
    ReviewPendingInput, mirror,
};
use crate::error::ApiError;
use crate::routes::observations::{ListParams, list_page};
use crate::routes::pending;
use crate::routes::query::{QueryRequest, run_query};
use crate::state::AppState;

/// How the MCP surface is set up besides the state.
#[derive(Debug, Clone, Default)]
pub struct McpOptions {
    /// Whether a tool call may name a harness `state_dir` of its own. True for `curator mcp`
    /// (the agent runs as the same user, on the same machine); false over HTTP, where a remote
    /// client must not choose where the server writes, so only the configured harness is used.
    pub allow_state_dir: bool,
    /// The cross-mission identity directory for a `state_dir` named in a call (default: the
    /// configured harness's).
    pub identity_dir: Option<PathBuf>,
    /// Whether `review_pending` may approve or reject proposals (issue 18). Off by default:
    /// the review gate exists so that an agent cannot promote its own proposals, so only a
    /// person's MCP client (`curator mcp --allow-review`, `curator serve --mcp-review`) gets it.
    pub allow_review: bool,
}

/// What one tool call runs against.
#[derive(Debug, Clone)]
pub(crate) struct ToolContext {
    pub(crate) state: AppState,
    pub(crate) options: McpOptions,
}

/// `query_memory`: the step's observations and `<memory-context>` block, recorded for the run
/// when `run_id` and `step_index` are given. A tripped breaker (of the run or its suite, §9)
/// injects nothing and records the empty injection, as the run-session route does.
pub(crate) fn query_memory(
    ctx: &ToolContext,
    input: QueryMemoryInput,
) -> Result<QueryMemoryOutput, ApiError> {
    let state = &ctx.state;
    let run = match (input.run_id, input.step_index) {
        (Some(run_id), Some(step)) => {
            validate_run_id(&run_id)?;
            Some(RunStep { run_id, step })
        }
        (None, None) => None,
        _ => return Err(ApiError::bad_request("run_id and step_index come together")),
    };
    let request = QueryRequest {
        product: input.product,
        test: input.test,
        step_text: input.step_text,
        suite: input.suite.clone(),
        suite_tests: input.suite_tests.map(|tests| {
            tests.into_iter().map(|t| SnapshotEntry { test: t.test, id: t.id }).collect()
        }),
        position: input.position,
        min_trust: input.min_trust,
        max_injections: input.max_injections,
        mode: input.mode.map(|m| match m {
            Mode::Terms => "terms".to_owned(),
            Mode::Phrase => "phrase".to_owned(),
        }),
    };
    let tripped = match &run {
        Some(run) => breaker_tripped(state.store(), &run.run_id, input.suite.as_deref())?,
        None => false,
    };
    let outcome = if tripped {
        let run =
            run.as_ref().ok_or_else(|| ApiError::internal("a tripped breaker needs a run"))?;
        // Refuse a bad request exactly as an untripped query would, then inject nothing.
        request.options(state, None)?;
        record_injection_in(state.store(), &run.run_id, run.step, &[])?;
        QueryOutcome::default()
    } else {
        run_query(state, &request, run.clone())?
    };
    let out: QueryMemoryOutput = mirror(
        "query outcome",
        json!({
            "observations": outcome.observations,
            "formatted": outcome.formatted,
            "run_id": run.as_ref().map(|r| r.run_id.clone()),
            "step_index": run.as_ref().map(|r| r.step),
            "recorded": run.is_some(),
            "breaker_tripped": tripped,
            "warnings": outcome.warnings,
        }),
    )?;
    Ok(out)
}

fn breaker_tripped(store: &dyn Store, run_id: &str, suite: Option<&str>) -> Result<bool, ApiError> {
    if Breaker::is_tripped_in(store, run_id)? {
        return Ok(true);
    }
    match suite {
        // A suite name that cannot be a folder is skipped by the query; it has no breaker.
        Some(suite) => match Breaker::is_tripped_in(store, suite) {
            Err(curator_engine::breaker::BreakerError::BadKey { .. }) => Ok(false),
            tripped => Ok(tripped?),
        },
        None => Ok(false),
    }
}

/// `record_run`: validates the record, fills each step's missing `injected` list from the run
/// session `query_memory` recorded, runs the curator and returns the MemoryLog.
pub(crate) fn record_run(
    ctx: &ToolContext,
    input: RecordRunInput,
) -> Result<MemoryLogOut, ApiError> {
    let state = &ctx.state;
    let mut record = RunRecord::from_value_with(&input.run_record, state.engine().unknown_keys)?;
    curator_engine::session::fill_from_session(state.store(), &mut record)?;
    if !ctx.options.allow_review {
        // Without review over MCP, the client is taken for the agent: its record is its own
        // word. Its probation results would otherwise approve its own proposals (three
        // query_memory + record_run pairs did, audit 9), and re-sending a run a person undid
        // would re-apply what that person reverted.
        for step in &mut record.steps {
            step.probation = None;
        }
        refuse_undone_run(state, &record.journal_run_id())?;
    }
    let provider: Box<dyn DecisionProvider> = match (input.provider, input.decisions) {
        // An agent's own decisions: its adds are proposals that wait for review.
        (None | Some(Provider::Explicit), Some(decisions)) => Box::new(ExplicitProvider::proposal(
            decisions_of(&decisions, state.engine().unknown_keys)?,
        )),
        (Some(Provider::Explicit), None) => {
            return Err(ApiError::bad_request("provider \"explicit\" needs decisions"));
        }
        (Some(Provider::Rules), Some(_)) => {
            return Err(ApiError::bad_request(
                "decisions are applied by the explicit provider only: drop provider, or set it to \"explicit\"",
            ));
        }
        (None | Some(Provider::Rules), None) => Box::new(RulesProvider::default()),
    };
    run_curator(state, &record, provider.as_ref())
}

/// A run whose applications were all undone is re-applied by a person (`curator curate`), not
/// by the agent whose run it was.
fn refuse_undone_run(state: &AppState, run_id: &str) -> Result<(), ApiError> {
    let runs =
        curator_engine::runs::RunApplications::load(&mut |f| state.store().journal(f), run_id)
            .map_err(ApiError::from)?;
    if !runs.applications.is_empty() && runs.standing().is_none() {
        return Err(ApiError::new(
            axum::http::StatusCode::FORBIDDEN,
            "run_undone",
            format!(
                "run {run_id} was undone; over MCP without review it is not applied again: a \
                 person re-applies it with `curator curate` or the HTTP API"
            ),
        ));
    }
    Ok(())
}

/// `propose_decisions`: the decisions applied as the curator applies a passed run's, to the
/// product, suite and test named (ids must belong to those scopes).
pub(crate) fn propose_decisions(
    ctx: &ToolContext,
    input: ProposeDecisionsInput,
) -> Result<MemoryLogOut, ApiError> {
    let decisions = decisions_of(&input.decisions, ctx.state.engine().unknown_keys)?;
    let mut run = json!({
        "product": input.product,
        "test": {"id": input.test, "name": input.test},
        "status": "passed",
        "steps": [],
    });
    if let Some(suite) = &input.suite {
        run["suite"] = serde_json::to_value(suite)
            .map_err(|e| ApiError::internal(format!("encoding the suite: {e}")))?;
    }
    match &input.run_id {
        Some(run_id) => run["run_id"] = json!(run_id),
        // The decisions are this call's content: the same proposal sent twice is one run, a
        // different one another (issue 13: exactly once).
        None => {
            run["run_id"] =
                json!(content_run_id(&json!({"run": run, "decisions": input.decisions})))
        }
    }
    // The record is built from this call's fields, so its errors are named after them.
    let record = RunRecord::from_value(&run).map_err(|RunRecordError { field, rule }| {
        let field = match field.as_str() {
            "test.id" => "test".to_owned(),
            other => other.to_owned(),
        };
        ApiError::new(
            axum::http::StatusCode::BAD_REQUEST,
            "invalid_arguments",
            format!("propose_decisions: {field}: {rule}"),
        )
    })?;
    run_curator(&ctx.state, &record, &ExplicitProvider::proposal(decisions))
}

/// Validates a decisions array with the engine's own rules (`decisions[2].observationId`).
fn decisions_of(decisions: &Value, unknown: UnknownKeys) -> Result<Decisions, ApiError> {
    Ok(Decisions::from_value_with(&json!({ "decisions": decisions }), unknown)?)
}

fn run_curator(
    state: &AppState,
    record: &RunRecord,
    provider: &dyn DecisionProvider,
) -> Result<MemoryLogOut, ApiError> {
    let log: MemoryLog = curate(state.store(), record, provider, &state.engine().curate_options())?;
    mirror("MemoryLog", &log)
}

/// `list_observations`: the API's listing (same filters, order and paging).
pub(crate) fn list_observations(
    ctx: &ToolContext,
    input: ListObservationsInput,
) -> Result<ObservationPage, ApiError> {
    let params = ListParams {
        tier: input.tier,
        scope: input.scope,
        min_trust: input.min_trust,
        q: input.text,
        offset: input.offset,
        limit: input.limit,
    };
    mirror("observation page", list_page(&ctx.state, &params)?)
}

/// `get_observation`: one observation as the files hold it now (served, or waiting for
/// review), with its outcome evidence.
pub(crate) fn get_observation(
    ctx: &ToolContext,
    input: GetObservationInput,
) -> Result<ObservationDetailOut, ApiError> {
    mirror("observation", pending::find(&ctx.state, &input.id)?)
}

/// `list_pending`: the review queue with each proposal's probation record.
pub(crate) fn list_pending(
    ctx: &ToolContext,
    input: ListPendingInput,
) -> Result<PendingOut, ApiError> {
    let filter = ListFilter {
        tier: input.tier.as_deref().map(str::parse::<Tier>).transpose()?,
        scope: input.scope.as_deref().map(ScopeName::new).transpose()?,
    };
    let listing = review::pending(ctx.state.store(), &filter).map_err(pending::review_error)?;
    let views = pending::with_evidence(&ctx.state, &listing.observations, Place::Pending)?;
    mirror(
        "review queue",
        json!({ "total": views.len(), "problems": listing.problems.len(), "pending": views }),
    )
}

/// `review_pending`: approve or reject a proposal (only when the server allows review here).
pub(crate) fn review_pending(
    ctx: &ToolContext,
    input: ReviewPendingInput,
) -> Result<ReviewOutcomeOut, ApiError> {
    if !ctx.options.allow_review {
        return Err(ApiError::new(
            axum::http::StatusCode::FORBIDDEN,
            "review_not_allowed",
            "review over MCP is off: an agent must not approve its own proposals; a person \
             reviews with `curator review`, the web UI, the HTTP API, or an MCP server started \
             with `curator mcp --allow-review` / `curator serve --mcp-review`",
        ));
    }
    let approve = input.decision == ReviewDecision::Approve;
    let reasoning = input.reasoning.or_else(|| Some("decided over MCP".to_owned()));
    mirror("review outcome", pending::decide(&ctx.state, &input.id, approve, reasoning)?)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::mcp::schema::{ListPendingInput, ReviewDecision, ReviewPendingInput, SuiteIn};
    use crate::state::ServerOptions;
    use curator_engine::session::load_session_in;
    use curator_store::{FileStore, FileStoreOptions};
    use std::path::Path;

    const REVIEWS: &str = "obs_hover-ginger-harbor-echo-citrus-ginger";
    const CART_BADGE: &str = "obs_noble-poppy-winter-dingo-hazel-storm-bloom-orbit-coral-sage";
    const TEST_ID: &str = "t_lake-mint-harbor-kelp-river-moss-glade-cedar-iris-camel";

    /// A temp copy of the example root, and a harness state dir inside the same temp dir.
    pub(in crate::mcp) struct Fixture {
        _dir: tempfile::TempDir,
        pub(in crate::mcp) ctx: ToolContext,
        pub(in crate::mcp) state_dir: PathBuf,
    }

    fn copy_dir(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            let target = to.join(entry.file_name());
            if entry.file_type().unwrap().is_dir() {
                copy_dir(&entry.path(), &target);
            } else {
                std::fs::copy(entry.path(), &target).unwrap();
            }
        }
    }

    pub(in crate::mcp) fn fixture(allow_state_dir: bool) -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("memory");
        let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/agent-qa-memory");
        copy_dir(&example, &root);
        let store = FileStore::open(&root, FileStoreOptions::default()).unwrap();
        let state = AppState::new(store, ServerOptions::default());
        let options = McpOptions {
            allow_state_dir,
            identity_dir: Some(dir.path().join("identity")),
            allow_review: false,
        };
        let state_dir = dir.path().join("project").join(".harness");
        Fixture { _dir: dir, ctx: ToolContext { state, options }, state_dir }
    }

    fn query(product: &str, step: &str) -> QueryMemoryInput {
        serde_json::from_value(json!({"product": product, "test": TEST_ID, "step_text": step}))
            .unwrap()
    }

    fn trust_of(f: &Fixture, id: &str) -> f64 {
        let input = GetObservationInput { id: id.to_owned() };
        get_observation(&f.ctx, input).unwrap().fields.trust
    }

    #[test]
    fn query_memory_gives_the_block_and_records_the_injection_for_the_run() {
        let f = fixture(false);
        let mut input = query("acme-shop", "Check the product reviews widget shows reviews");
        input.run_id = Some("r_mcp-test".into());
        input.step_index = Some(2);
        let out = query_memory(&f.ctx, input).unwrap();
        let ids: Vec<&str> = out.observations.iter().map(|o| o.id.as_str()).collect();
        assert!(ids.contains(&REVIEWS), "{ids:?}");
        let block = out.formatted.as_deref().unwrap();
        assert!(block.starts_with("<memory-context>"), "{block}");
        assert!(block.contains("Product reviews widget is flaky"), "{block}");
        assert!(out.recorded && !out.breaker_tripped);
        let session = load_session_in(f.ctx.state.store(), "r_mcp-test").unwrap().unwrap();
        assert_eq!(session.injected_at(2), ids.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    }

    #[test]
    fn query_memory_without_a_match_has_no_block_and_records_nothing() {
        let f = fixture(false);
        let out = query_memory(&f.ctx, query("acme-shop", "zebra quantum xylophone")).unwrap();
        assert!(out.observations.is_empty() && out.formatted.is_none());
        assert!(!out.recorded && out.run_id.is_none());
    }

    #[test]
    fn query_memory_refuses_half_a_run_and_skips_bad_names() {
        let f = fixture(false);
        let mut input = query("acme-shop", "reviews");
        input.run_id = Some("r_x".into());
        let err = query_memory(&f.ctx, input).unwrap_err();
        assert_eq!(err.code(), "bad_request");
        assert!(err.message().contains("run_id and step_index"), "{err}");
        // A product name that cannot be a folder is skipped with a warning (agent-qa skips the
        // folder; a memory query never fails a step), and the rest is served.
        let out = query_memory(&f.ctx, query("../etc", "reviews")).unwrap();
        assert!(out.warnings[0].contains("invalid product name skipped"), "{:?}", out.warnings);
        assert!(out.formatted.is_none(), "nothing of the product was read");
        let mut input = query("acme-shop", "reviews");
        (input.run_id, input.step_index) = (Some("../../x".into()), Some(0));
        assert_eq!(query_memory(&f.ctx, input).unwrap_err().code(), "invalid_run_id");
    }

    fn passed_run(run_id: &str) -> Value {
        json!({
            "run_id": run_id,
            "product": "acme-shop",
            "test": {"id": TEST_ID, "name": "reviews"},
            "status": "passed",
            "steps": [
                {"name": "open the shop", "status": "passed"},
                {"name": "Check the product reviews widget shows reviews", "status": "passed"}
            ]
        })
    }

    #[test]
    fn a_passed_run_confirms_what_query_memory_injected() {
        let f = fixture(false);
        assert_eq!(trust_of(&f, REVIEWS), 0.5);
        let mut input = query("acme-shop", "Check the product reviews widget shows reviews");
        (input.run_id, input.step_index) = (Some("r_mcp-run".into()), Some(1));
        let injected = query_memory(&f.ctx, input).unwrap().observations;
        let input =
            RecordRunInput { run_record: passed_run("r_mcp-run"), provider: None, decisions: None };
        let log = record_run(&f.ctx, input).unwrap();
        assert_eq!((log.run_id.as_str(), log.case.as_str()), ("r_mcp-run", "passed"));
        assert_eq!(log.provider.as_deref(), Some("rules"));
        assert_eq!(log.confirmed as usize, injected.len(), "{log:?}");
        assert!(log.errors.is_empty(), "{:?}", log.errors);
        assert_eq!(trust_of(&f, REVIEWS), 0.55);
    }

    #[test]
    fn a_run_recorded_twice_is_applied_once() {
        let f = fixture(false);
        let run = || RecordRunInput {
            run_record: passed_run("r_mcp-twice"),
            provider: None,
            decisions: Some(
                json!([{"action": "update", "observationId": REVIEWS, "reasoning": "held"}]),
            ),
        };
        let first = record_run(&f.ctx, run()).unwrap();
        assert_eq!((first.confirmed, first.already_applied, first.generation), (1, false, Some(1)));
        let again = record_run(&f.ctx, run()).unwrap();
        assert_eq!((again.confirmed, again.already_applied, again.generation), (0, true, Some(1)));
        assert_eq!(trust_of(&f, REVIEWS), 0.55);
        // The same proposal without a run id twice is one run; another proposal is another.
        let propose = |reasoning: &str| ProposeDecisionsInput {
            product: "acme-shop".into(),
            test: TEST_ID.into(),
            suite: None,
            decisions: json!([{"action": "update", "observationId": REVIEWS, "reasoning": reasoning}]),
            run_id: None,
        };
        let p1 = propose_decisions(&f.ctx, propose("again")).unwrap();
        let p2 = propose_decisions(&f.ctx, propose("again")).unwrap();
        assert_eq!(p1.run_id, p2.run_id);
        assert!(!p1.already_applied && p2.already_applied);
        assert!(!propose_decisions(&f.ctx, propose("once more")).unwrap().already_applied);
        assert_eq!(trust_of(&f, REVIEWS), 0.65);
    }

    #[test]
    fn record_run_names_the_bad_field_and_the_provider_rules() {
        let f = fixture(false);
        let mut run = passed_run("r_bad");
        run["status"] = json!("won");
        let err =
            record_run(&f.ctx, RecordRunInput { run_record: run, provider: None, decisions: None })
                .unwrap_err();
        assert_eq!(err.code(), "invalid_run_record");
        assert!(err.message().contains("status"), "{err}");
        let input = RecordRunInput {
            run_record: passed_run("r_p"),
            provider: Some(Provider::Explicit),
            decisions: None,
        };
        assert!(record_run(&f.ctx, input).unwrap_err().message().contains("needs decisions"));
        let input = RecordRunInput {
            run_record: passed_run("r_p"),
            provider: Some(Provider::Rules),
            decisions: Some(json!([])),
        };
        assert_eq!(record_run(&f.ctx, input).unwrap_err().code(), "bad_request");
        let input = RecordRunInput {
            run_record: passed_run("r_p"),
            provider: None,
            decisions: Some(json!([{"action": "update"}])),
        };
        let err = record_run(&f.ctx, input).unwrap_err();
        assert_eq!(err.code(), "invalid_decisions");
        assert!(err.message().contains("decisions[0]"), "{err}");
    }

    #[test]
    fn a_failed_run_deprecates_what_was_injected_into_the_failed_step() {
        let f = fixture(false);
        let run = json!({
            "product": "acme-shop",
            "test": {"id": TEST_ID, "name": "cart"},
            "status": "failed",
            "steps": [{"name": "add to cart", "status": "failed", "injected": [CART_BADGE]}]
        });
        let log =
            record_run(&f.ctx, RecordRunInput { run_record: run, provider: None, decisions: None })
                .unwrap();
        assert_eq!((log.case.as_str(), log.deprecated), ("failed", 1));
        assert!((trust_of(&f, CART_BADGE) - 0.7).abs() < 1e-9);
    }

    #[test]
    fn propose_decisions_queues_adds_confirms_and_reports_unknown_ids() {
        let f = fixture(false);
        let input = ProposeDecisionsInput {
            product: "acme-shop".into(),
            test: TEST_ID.into(),
            suite: None,
            decisions: json!([
                {"action": "add", "title": "Wishlist heart fills after a click",
                 "content": "The heart icon turns solid red within 300 ms.", "scope": "product",
                 "reasoning": "seen twice"},
                {"action": "update", "observationId": CART_BADGE, "reasoning": "held again"},
                {"action": "deprecate", "observationId": "obs_not-a-real-one", "reasoning": "?"}
            ]),
            run_id: Some("r_proposal".into()),
        };
        let log = propose_decisions(&f.ctx, input).unwrap();
        assert_eq!(
            (log.added, log.proposed, log.confirmed, log.deprecated),
            (0, 1, 1, 0),
            "{log:?}"
        );
        assert_eq!(log.errors.len(), 1, "{:?}", log.errors);
        assert!(log.errors[0].contains("obs_not-a-real-one"));
        let proposed = log.deltas.iter().find(|d| d.action == "propose").unwrap();
        let id = proposed.observation_id.clone();
        let got = get_observation(&f.ctx, GetObservationInput { id: id.clone() }).unwrap();
        assert_eq!((got.tier.as_str(), got.scope.as_str()), ("products", "acme-shop"));
        assert_eq!((got.place.as_str(), got.fields.source_test.as_str()), ("pending", TEST_ID));
        assert!((trust_of(&f, CART_BADGE) - 0.85).abs() < 1e-9);
        // It waits in the queue; this agent's server may not approve it.
        let queue = list_pending(&f.ctx, ListPendingInput::default()).unwrap();
        assert_eq!(
            queue.pending.iter().map(|p| p.fields.id.clone()).collect::<Vec<_>>(),
            std::slice::from_ref(&id)
        );
        let approve = ReviewPendingInput {
            id: id.clone(),
            decision: ReviewDecision::Approve,
            reasoning: None,
        };
        let err = review_pending(&f.ctx, approve.clone()).unwrap_err();
        assert_eq!(err.code(), "review_not_allowed", "{err}");
        let mut person = f.ctx.clone();
        person.options.allow_review = true;
        let outcome = review_pending(&person, approve.clone()).unwrap();
        assert_eq!(
            (outcome.action.as_str(), outcome.place.as_deref()),
            ("approve", Some("memory"))
        );
        assert_eq!(
            get_observation(&f.ctx, GetObservationInput { id: id.clone() }).unwrap().place,
            "memory"
        );
        // A retried approval answers the one already made.
        let again = review_pending(&person, approve).unwrap();
        assert!(again.already_applied && again.run_id == outcome.run_id, "{again:?}");
        let reject = ReviewPendingInput {
            id: id.clone(),
            decision: ReviewDecision::Reject,
            reasoning: None,
        };
        assert_eq!(review_pending(&person, reject).unwrap_err().code(), "not_found");
        assert!(list_pending(&f.ctx, ListPendingInput::default()).unwrap().pending.is_empty());
    }

    #[test]
    fn get_observation_carries_the_outcome_evidence() {
        let f = fixture(false);
        let run_record = json!({"run_id": "r_ev", "product": "acme-shop",
            "test": {"id": TEST_ID, "name": "cart"}, "status": "passed",
            "steps": [{"name": "add to cart", "status": "passed", "injected": [CART_BADGE]}]});
        record_run(&f.ctx, RecordRunInput { run_record, provider: None, decisions: None }).unwrap();
        let got = get_observation(&f.ctx, GetObservationInput { id: CART_BADGE.into() }).unwrap();
        assert_eq!((got.evidence.runs, got.evidence.passed), (1, 1));
    }

    /// An agent's MCP client (no review) cannot approve its own proposal by recording the runs
    /// that were given it on probation (audit 9: three query_memory + record_run pairs did);
    /// a client that may review, can.
    #[test]
    fn runs_recorded_over_mcp_without_review_approve_no_proposal() {
        let pending_after_three_passes = |allow_review: bool| {
            let mut f = fixture(false);
            f.ctx.options.allow_review = allow_review;
            let propose = ProposeDecisionsInput {
                product: "acme-shop".into(),
                test: TEST_ID.into(),
                suite: None,
                decisions: json!([{"action": "add", "title": "Quetzal banner covers the pay button",
                    "content": "Close the quetzal banner first.", "scope": "product",
                    "reasoning": "seen"}]),
                run_id: Some("r_plant".into()),
            };
            assert_eq!(propose_decisions(&f.ctx, propose).unwrap().proposed, 1);
            for i in 0..3 {
                let run_id = format!("r_self-{i}");
                let mut step = query("acme-shop", "quetzal banner");
                step.run_id = Some(run_id.clone());
                step.step_index = Some(0);
                let shown = query_memory(&f.ctx, step).unwrap();
                assert!(
                    shown.formatted.unwrap_or_default().contains("Quetzal banner"),
                    "on probation"
                );
                let mut run = passed_run(&run_id);
                run["steps"] = json!([{"name": "quetzal banner", "status": "passed"}]);
                let input = RecordRunInput { run_record: run, provider: None, decisions: None };
                record_run(&f.ctx, input).unwrap();
            }
            list_pending(&f.ctx, ListPendingInput::default()).unwrap().pending.len()
        };
        assert_eq!(pending_after_three_passes(false), 1, "still waits for a person");
        assert_eq!(pending_after_three_passes(true), 0, "a reviewer's runs approve it");
    }

    #[test]
    fn propose_decisions_names_its_own_fields() {
        let f = fixture(false);
        let input = ProposeDecisionsInput {
            product: "acme-shop".into(),
            test: "not/a/scope".into(),
            suite: Some(SuiteIn { id: "s_x".into(), tests: vec![], position: 0 }),
            decisions: json!([]),
            run_id: None,
        };
        let err = propose_decisions(&f.ctx, input).unwrap_err();
        assert_eq!(err.code(), "invalid_arguments");
        assert!(err.message().starts_with("propose_decisions: test:"), "{err}");
    }

    #[test]
    fn list_and_get_read_the_files_with_the_api_filters() {
        let f = fixture(false);
        let input = ListObservationsInput {
            tier: Some("product".into()),
            scope: Some("acme-shop".into()),
            min_trust: Some(0.7),
            ..Default::default()
        };
        let page = list_observations(&f.ctx, input).unwrap();
        assert_eq!(page.total, 4, "{page:?}");
        assert!(page.observations.iter().all(|o| o.fields.trust >= 0.7 && o.scope == "acme-shop"));
        let bad = ListObservationsInput { tier: Some("planets".into()), ..Default::default() };
        assert_eq!(list_observations(&f.ctx, bad).unwrap_err().code(), "invalid_scope");
        let got = get_observation(&f.ctx, GetObservationInput { id: CART_BADGE.into() }).unwrap();
        assert_eq!(got.fields.title, "Cart badge updates about one second after Add to cart");
        let missing = "obs_lake-lake-lake-lake-lake-lake-lake-lake-lake-lake";
        let err = get_observation(&f.ctx, GetObservationInput { id: missing.into() }).unwrap_err();
        assert_eq!(err.code(), "not_found");
        let err = get_observation(&f.ctx, GetObservationInput { id: "../x".into() }).unwrap_err();
        assert_eq!(err.code(), "invalid_id");
    }
}
