//! Applying A.U.D.N. decisions of a passed run (agent-qa-memory §5.4).
//!
//! Runs inside the store's transaction, so the lock is held and every id is re-validated against
//! the files as they are *now*: a decision made from a listing taken before the lock (the LLM
//! call never holds it) cannot touch an observation that was deleted or moved meanwhile. Each
//! decision succeeds or fails alone; a failure is one line in the MemoryLog's `errors` with
//! agent-qa's wording and changes nothing. Unlike agent-qa, an observation must belong to this
//! run's product, suite or test (or have been injected into the run) to be confirmed or
//! deprecated (§11.6), and a legacy 6-word id is rewritten under its own id (§11.3).
//!
//! When the decisions are proposals of an agent or a model and review is on (issue 18), an add
//! is written to the review queue instead of its tier folder; a confirm or deprecate of a
//! queued observation changes nothing (its probation record is what the review weighs).

use std::collections::HashSet;

use curator_core::similarity::{DUPLICATE_THRESHOLD, observation_similarity};
use curator_core::trust::{self, Contradiction, TrustDeltas};
use curator_core::{Observation, ObservationId, ScopeName, SuitePlacement, Tier};
use curator_store::{Action, StoredObservation, Transaction};

use super::decisions::{Decision, DecisionScope};
use super::memory_log::{MemoryDelta, MemoryLog};
use super::run_record::RunRecord;

/// What every decision of one run shares.
#[derive(Debug)]
pub(crate) struct ApplyContext<'a> {
    pub(crate) record: &'a RunRecord,
    pub(crate) deltas: TrustDeltas,
    /// One ISO timestamp for the whole run (§5.4 "taken once").
    pub(crate) now: &'a str,
    /// Injected ids ∪ ids of the observations listed for the run before the lock.
    pub(crate) known: &'a HashSet<String>,
    /// Adds go to the review queue (proposals with review on).
    pub(crate) queue_adds: bool,
    /// Apply an `update` or `deprecate` of an id the document already named again, as agent-qa
    /// does (`curator.policy: agent-qa`); otherwise one run moves an observation's trust once
    /// per kind of decision, however often a model repeats it.
    pub(crate) repeats_count: bool,
}

impl ApplyContext<'_> {
    /// Whether `(tier, scope)` is one of this run's three scopes.
    fn owns(&self, tier: Tier, scope: &ScopeName) -> bool {
        let r = self.record;
        match tier {
            Tier::Products => *scope == r.product,
            Tier::Tests => *scope == r.test.id,
            Tier::Suites => r.suite.as_ref().is_some_and(|s| *scope == s.id),
        }
    }

    fn injected(&self, id: &str) -> bool {
        self.record.steps.iter().any(|s| s.injected_ids().iter().any(|i| i == id))
    }
}

/// Applies `decisions` in order; every outcome lands in `log`.
pub(crate) fn apply_decisions(
    tx: &mut dyn Transaction,
    ctx: &ApplyContext<'_>,
    decisions: &[Decision],
    log: &mut MemoryLog,
) {
    let mut seen: HashSet<(&str, &str)> = HashSet::new();
    for decision in decisions {
        let repeated = match decision {
            Decision::Update { observation_id, .. } => !seen.insert(("update", observation_id)),
            Decision::Deprecate { observation_id, .. } => {
                !seen.insert(("deprecate", observation_id))
            }
            Decision::Add { .. } | Decision::Noop { .. } => false,
        };
        if repeated && !ctx.repeats_count {
            tracing::debug!(?decision, "a decision the document already made; applied once");
            continue;
        }
        let outcome = match decision {
            Decision::Add { title, content, scope, reasoning } => {
                add(tx, ctx, title, content, *scope, reasoning, log)
            }
            Decision::Update { observation_id, reasoning } => {
                locate(tx, ctx, observation_id, "update").and_then(|found| match found {
                    Some(stored) => confirm(tx, stored, &ctx.deltas, ctx.now, reasoning, log)
                        .map_err(|e| processing("update", e)),
                    None => Ok(()),
                })
            }
            Decision::Deprecate { observation_id, reasoning } => {
                locate(tx, ctx, observation_id, "deprecate").and_then(|found| match found {
                    Some(stored) => contradict(tx, stored, &ctx.deltas, reasoning, log)
                        .map_err(|e| processing("deprecate", e)),
                    None => Ok(()),
                })
            }
            Decision::Noop { .. } => Ok(()),
        };
        match outcome {
            Ok(()) => {}
            Err(Skip::Logged(message)) => log.errors.push(message),
            Err(Skip::Stop(message, cause)) => log.skip(message, &cause),
        }
    }
}

/// Why one decision changed nothing.
enum Skip {
    /// The content refuses it (agent-qa's wording): one line of the log's errors.
    Logged(String),
    /// The store failed under it: [`MemoryLog::skip`] decides, by the cause.
    Stop(String, Box<curator_store::Error>),
}

impl From<String> for Skip {
    fn from(message: String) -> Self {
        Skip::Logged(message)
    }
}

fn processing(action: &str, e: curator_store::Error) -> Skip {
    Skip::Stop(format!("Decision processing error ({action}): {}", cause(&e)), Box::new(e))
}

/// A change's failure as agent-qa words it: the scanner's refusal of a rewrite is its
/// `Security scan blocked: <pattern>` (§5.9); any other cause is the store's own message.
pub(crate) fn cause(e: &curator_store::Error) -> String {
    match e {
        curator_store::Error::Unsafe { rule, .. } => format!("Security scan blocked: {rule}"),
        e => e.to_string(),
    }
}

/// The known-id check, then a fresh read under the lock (§5.4 update/deprecate preamble).
/// `Ok(None)` for an observation waiting in the review queue: nothing to change.
fn locate(
    tx: &mut dyn Transaction,
    ctx: &ApplyContext<'_>,
    raw_id: &str,
    action: &str,
) -> Result<Option<StoredObservation>, Skip> {
    let unknown = || Skip::Logged(format!("Unknown observation ID for {action}: {raw_id}"));
    let not_found = || format!("Observation file not found for {action}: {raw_id}");
    if !ctx.known.contains(raw_id) {
        return Err(unknown());
    }
    // Known (injected) but no observation id: agent-qa looks for its file and finds none.
    let id = ObservationId::parse(raw_id).map_err(|_| Skip::Logged(not_found()))?;
    // Parsed, not scanned: agent-qa contradicts memory its scanner blocks too, down to its
    // deletion; only a rewrite is scanned (`put`).
    let stored = match tx.get_parsed(&id) {
        Ok(Some(stored)) => stored,
        Ok(None) => {
            return match crate::review::queued(tx, &id) {
                Ok(Some(_)) => Ok(None),
                _ => Err(not_found().into()),
            };
        }
        Err(e) => {
            // agent-qa's wording exactly (§5.4); the cause goes to the diagnostics.
            tracing::warn!(id = %raw_id, error = %e, "observation to {action} could not be read");
            let message = format!("Failed to parse observation for {action}: {raw_id}");
            return Err(Skip::Stop(message, Box::new(e)));
        }
    };
    if !ctx.owns(stored.tier, &stored.scope) && !ctx.injected(raw_id) {
        // Known before the lock but moved out of this run's scopes since: not ours to change.
        return Err(unknown());
    }
    Ok(Some(stored))
}

/// The rule named when an add's title holds a line break.
const TITLE_LINE_BREAK: &str = "title_line_break";

fn add(
    tx: &mut dyn Transaction,
    ctx: &ApplyContext<'_>,
    title: &str,
    content: &str,
    scope: DecisionScope,
    reasoning: &str,
    log: &mut MemoryLog,
) -> Result<(), Skip> {
    // A title is one line (audit 9: a break writes prompt lines outside the item in
    // `<memory-context>`). Refused like an unsafe text, this decision alone: the others of the
    // document stand, as they do when the scanner blocks one add.
    if curator_core::title_line_violation(title).is_some() {
        return Err(format!("Security scan blocked add: {TITLE_LINE_BREAK}").into());
    }
    let r = ctx.record;
    let suite = r.suite.as_ref();
    // §5.4: suite scope without a suite falls back to product.
    let (tier, scope_name, placement) = match (scope, suite) {
        (DecisionScope::Suite, Some(s)) => (
            Tier::Suites,
            s.id.clone(),
            Some(SuitePlacement { position: s.position, suite_snapshot: s.tests.clone() }),
        ),
        (DecisionScope::Product | DecisionScope::Suite, _) => {
            (Tier::Products, r.product.clone(), None)
        }
        (DecisionScope::Test, _) => (Tier::Tests, r.test.id.clone(), None),
    };
    // One proposal per fact: the one already waiting — queued before this run, by a run or a
    // proposal curated at the same time, or by an earlier decision of this list — is reviewed
    // (or tried on probation) as it is, as a MEMO repeating an earlier one of its run is
    // dropped. The scope's queue is read under the lock of the write that would follow.
    let same = |title: &str, text: &str| {
        observation_similarity(content, title, text) >= DUPLICATE_THRESHOLD
    };
    if ctx.queue_adds {
        let waiting =
            crate::review::waiting_in(tx, tier, &scope_name).map_err(|e| processing("add", e))?;
        // The transaction sees its own writes: an earlier decision's proposal is in `waiting`.
        if waiting.iter().any(|q| same(&q.observation.title, &q.observation.content)) {
            return Ok(());
        }
    }
    let id = crate::review::fresh_id(tx).map_err(|e| processing("add", e))?;
    let observation = Observation {
        id,
        title: title.to_owned(),
        content: content.to_owned(),
        trust: trust::INITIAL_TRUST,
        created: ctx.now.to_owned(),
        last_confirmed: ctx.now.to_owned(),
        confirmed_count: 0,
        contradicted_count: 0,
        source_test: r.test.id.as_str().to_owned(),
        suite: placement,
        extra: Default::default(),
    };
    let action = if ctx.queue_adds { Action::Propose } else { Action::Add };
    let written = if ctx.queue_adds {
        tx.pending_put(tier, &scope_name, &observation, action, reasoning)
    } else {
        tx.put(tier, &scope_name, &observation, action, reasoning)
    };
    match written {
        Ok(()) => {}
        Err(curator_store::Error::Unsafe { rule, .. }) => {
            return Err(format!("Security scan blocked add: {rule}").into());
        }
        Err(e) => return Err(processing("add", e)),
    }
    log.push(
        MemoryDelta {
            action,
            tier: tier.dir_name().to_owned(),
            scope: scope_name.as_str().to_owned(),
            observation_id: observation.id.as_str().to_owned(),
            reasoning: reasoning.to_owned(),
            before: None,
            after: Some(observation.snapshot()),
            error: None,
        },
        false,
    );
    Ok(())
}

/// Confirms `stored`: trust up by the confirm delta (capped at 1), `last_confirmed = now`,
/// `confirmed_count + 1`.
pub(crate) fn confirm(
    tx: &mut dyn Transaction,
    stored: StoredObservation,
    deltas: &TrustDeltas,
    now: &str,
    reasoning: &str,
    log: &mut MemoryLog,
) -> curator_store::Result<()> {
    let before = stored.observation;
    let mut after = before.clone();
    after.trust = trust::confirm(before.trust, deltas);
    after.last_confirmed = now.to_owned();
    after.confirmed_count += 1;
    tx.put(stored.tier, &stored.scope, &after, Action::Confirm, reasoning)?;
    log.push(
        delta(Action::Confirm, stored.tier, &stored.scope, &before, Some(&after), reasoning),
        false,
    );
    Ok(())
}

/// Contradicts `stored`: trust down by the contradict delta; below 1e-9 the file is deleted
/// (counted as deprecated *and* deleted), else `contradicted_count + 1`.
pub(crate) fn contradict(
    tx: &mut dyn Transaction,
    stored: StoredObservation,
    deltas: &TrustDeltas,
    reasoning: &str,
    log: &mut MemoryLog,
) -> curator_store::Result<()> {
    let before = stored.observation;
    match trust::contradict(before.trust, deltas) {
        Contradiction::Deleted => {
            tx.delete(stored.tier, &stored.scope, &before.id, Action::Delete, reasoning)?;
            log.push(
                delta(Action::Delete, stored.tier, &stored.scope, &before, None, reasoning),
                true,
            );
        }
        Contradiction::Lowered(next) => {
            let mut after = before.clone();
            after.trust = next;
            after.contradicted_count += 1;
            tx.put(stored.tier, &stored.scope, &after, Action::Deprecate, reasoning)?;
            log.push(
                delta(
                    Action::Deprecate,
                    stored.tier,
                    &stored.scope,
                    &before,
                    Some(&after),
                    reasoning,
                ),
                false,
            );
        }
    }
    Ok(())
}

pub(crate) fn delta(
    action: Action,
    tier: Tier,
    scope: &ScopeName,
    before: &Observation,
    after: Option<&Observation>,
    reasoning: &str,
) -> MemoryDelta {
    MemoryDelta {
        action,
        tier: tier.dir_name().to_owned(),
        scope: scope.as_str().to_owned(),
        observation_id: before.id.as_str().to_owned(),
        reasoning: reasoning.to_owned(),
        before: Some(before.snapshot()),
        after: after.map(Observation::snapshot),
        error: None,
    }
}
