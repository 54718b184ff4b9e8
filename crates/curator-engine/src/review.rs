//! The review gate for new memory (issue 18 item 4; ARCHITECTURE.md "Evidence and review live
//! beside the memory, not in it").
//!
//! What an agent or a model proposes on its own — a `MEMO:` the rules provider turns into an
//! add, an LLM's add, an MCP or HTTP proposal — is written to the review queue
//! (`<root>/.curator/pending/` for the file store, a table for PostgreSQL) instead of its tier
//! folder, so neither curator's ordinary query nor agent-qa (which never lists `.curator/`)
//! injects it. It leaves the queue in one of two ways, each journaled and undoable:
//!
//! * **approve**: the file moves to its tier folder unchanged (two journal entries, one per
//!   place, so `undo` moves it back);
//! * **reject**: the file is removed (its text stays in the journal, so `undo` restores it).
//!
//! A person decides through `curator review`, the API, MCP or the UI's review queue; with
//! `curator.review: auto` the curator also approves a proposal after [`AUTO_APPROVE_PASSES`]
//! probation injections into passed steps leave its record clean, and rejects one the blame
//! rules implicate in a failure (see `curate`). What a person or a harness decides explicitly
//! (`curate --decisions`, `curator add`, the API's create) never waits here.

use curator_core::config::ReviewMode;
use curator_core::similarity::{DUPLICATE_THRESHOLD, observation_similarity};
use curator_core::{Observation, ObservationId, ScopeName, Tier};
use curator_store::{Action, ListFilter, Listing, Store, StoredObservation, Transaction};
use serde::Serialize;

use crate::once::{self, IdempotencyKey};

/// Probation injections into passed steps after which `review: auto` approves a proposal whose
/// record stays clean.
pub const AUTO_APPROVE_PASSES: u64 = 3;

/// `P(misleading)` below which a proposal's record counts as clean for auto approval.
pub(crate) const AUTO_APPROVE_BELOW: f64 = 0.2;

/// What a review action did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReviewOutcome {
    /// The run id the change was journaled under (`curator undo` takes it).
    pub run_id: String,
    /// `approve`, `reject` or `propose`.
    pub action: Action,
    pub id: String,
    /// `products`, `suites` or `tests`.
    pub tier: String,
    pub scope: String,
    /// Where the observation is now: `memory` (approved, or written directly with review off),
    /// `pending` (proposed) or `None` (rejected).
    pub place: Option<curator_store::Place>,
    /// The same decision was already taken (a retried approve or reject, a proposal retried
    /// with its idempotency key, or one that says what a waiting proposal says): nothing
    /// changed, and `run_id` is the run that took it.
    /// Always present, as in every other write's answer.
    pub already_applied: bool,
}

/// Why a review action changed nothing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReviewError {
    /// The queue holds no observation with this id.
    #[error("observation {id} is not waiting for review")]
    NotPending { id: String },
    /// A retried request's idempotency key already names another kind of change.
    #[error("{reason}")]
    KeyReused { reason: String },
    #[error(transparent)]
    Store(#[from] curator_store::Error),
}

/// The review queue, filtered as [`Store::list`] filters memory.
pub fn pending(store: &dyn Store, filter: &ListFilter) -> Result<Listing, ReviewError> {
    Ok(store.list_pending(filter)?)
}

/// The whole review queue, with the files it refuses; empty for a store that keeps no queue
/// (what `lint` checks beside memory).
pub fn queue_or_empty(store: &dyn Store) -> curator_store::Result<Listing> {
    match store.list_pending(&ListFilter::default()) {
        Err(curator_store::Error::Unsupported { .. }) => Ok(Listing::default()),
        other => other,
    }
}

/// Approves the pending observation `id`: it enters its tier folder, unchanged.
pub fn approve(
    store: &dyn Store,
    id: &ObservationId,
    reasoning: &str,
) -> Result<ReviewOutcome, ReviewError> {
    decide(store, id, reasoning, Action::Approve)
}

/// Rejects the pending observation `id`: it leaves the queue (the journal keeps its text).
pub fn reject(
    store: &dyn Store,
    id: &ObservationId,
    reasoning: &str,
) -> Result<ReviewOutcome, ReviewError> {
    decide(store, id, reasoning, Action::Reject)
}

fn decide(
    store: &dyn Store,
    id: &ObservationId,
    reasoning: &str,
    action: Action,
) -> Result<ReviewOutcome, ReviewError> {
    let run_id = curator_core::generate_run_id();
    let mut outcome: Option<Result<ReviewOutcome, ReviewError>> = None;
    store.transact(Some(&run_id), &mut |tx| {
        let Some(stored) = tx.pending_get(id)? else {
            // A retry of the decision that took it out of the queue is answered, not refused:
            // a harness that lost the first answer must not see a failure, even when a run
            // confirmed the approved observation since. What counts is the id's last change of
            // the queue (a proposal, an approve or reject, an undo of one), not its last entry.
            let filter = curator_store::JournalFilter { id: Some(id.to_string()), run_id: None };
            let last = tx.journal(&filter)?.into_iter().rfind(|e| {
                e.place == curator_store::Place::Pending
                    || matches!(e.action, Action::Approve | Action::Reject)
            });
            outcome = Some(match last.filter(|e| e.action == action) {
                Some(e) => Ok(ReviewOutcome {
                    run_id: e.run_id.unwrap_or_default(),
                    action,
                    id: id.to_string(),
                    tier: e.tier,
                    scope: e.scope,
                    place: (action == Action::Approve).then_some(curator_store::Place::Memory),
                    already_applied: true,
                }),
                None => Err(ReviewError::NotPending { id: id.to_string() }),
            });
            return Ok(());
        };
        let place = if action == Action::Approve {
            approve_in(tx, &stored, reasoning)?;
            Some(curator_store::Place::Memory)
        } else {
            reject_in(tx, &stored, reasoning)?;
            None
        };
        outcome = Some(Ok(ReviewOutcome {
            run_id: run_id.clone(),
            action,
            id: id.to_string(),
            tier: stored.tier.dir_name().to_owned(),
            scope: stored.scope.as_str().to_owned(),
            place,
            already_applied: false,
        }));
        Ok(())
    })?;
    match outcome.unwrap_or_else(|| Err(ReviewError::NotPending { id: id.to_string() })) {
        Err(ReviewError::NotPending { id: raw }) => Err(unreadable_in_queue(store, id)
            .map_or(ReviewError::NotPending { id: raw }, ReviewError::Store)),
        other => other,
    }
}

/// The queue's file for `id` when it is there but cannot be read (a FIFO, no permission, a
/// file that does not parse): named with its reason, rather than "not waiting for review",
/// which sent a person looking for a proposal that was in the queue all along (audit 9).
fn unreadable_in_queue(store: &dyn Store, id: &ObservationId) -> Option<curator_store::Error> {
    let listing = store.list_pending(&ListFilter::default()).ok()?;
    let problem = listing.problems.into_iter().find(|p| {
        p.path.file_stem().is_some_and(|stem| stem == std::ffi::OsStr::new(id.as_str()))
    })?;
    Some(curator_store::Error::Refused { path: problem.path, kind: problem.kind })
}

/// Writes a new observation that an agent proposed: into the review queue unless `review` is
/// off, then straight into its tier folder (journaled as an add, as agent-qa would). With an
/// idempotency `key`, a retry of a proposal already written answers with it
/// (`already_applied`, `place` where it is now) instead of writing a second one.
///
/// A proposal that says what one already waiting in the same tier and scope says (word-set
/// similarity at [`DUPLICATE_THRESHOLD`], the rule curate applies to a repeated `MEMO:`) is
/// answered with the waiting one, `already_applied`, and writes nothing: one fact is one
/// proposal, reviewed and tried on probation once. Sent again and again, a planted fact would
/// otherwise fill the queue and draw one auto-approval lottery per copy.
pub fn propose(
    store: &dyn Store,
    tier: Tier,
    scope: &ScopeName,
    observation: Observation,
    reasoning: &str,
    review: ReviewMode,
    key: Option<&IdempotencyKey>,
) -> Result<ReviewOutcome, ReviewError> {
    let run_id = once::run_id_for(key);
    let mut outcome: Option<Result<ReviewOutcome, ReviewError>> = None;
    store.transact(Some(&run_id), &mut |tx| {
        if let Some(earlier) = once::earlier(tx, key)? {
            let e = &earlier.entry;
            let same = matches!(e.action, Action::Propose | Action::Add)
                && once::adds(
                    e,
                    tier.dir_name(),
                    scope.as_str(),
                    &observation.title,
                    &observation.content,
                );
            outcome = Some(if same {
                replayed_proposal(tx, &earlier)
            } else {
                Err(ReviewError::KeyReused { reason: earlier.describe() })
            });
            return Ok(());
        }
        if review != ReviewMode::Off
            && let Some(id) = waiting_alike(tx, tier, scope, &observation)?
        {
            outcome = Some(Ok(waiting_proposal(tx, &id, tier, scope)?));
            return Ok(());
        }
        let mut observation = observation.clone();
        observation.id = fresh_id(tx)?;
        let (action, place) = if review == ReviewMode::Off {
            tx.put(tier, scope, &observation, Action::Add, reasoning)?;
            (Action::Add, curator_store::Place::Memory)
        } else {
            tx.pending_put(tier, scope, &observation, Action::Propose, reasoning)?;
            (Action::Propose, curator_store::Place::Pending)
        };
        outcome = Some(Ok(ReviewOutcome {
            run_id: run_id.clone(),
            action,
            id: observation.id.to_string(),
            tier: tier.dir_name().to_owned(),
            scope: scope.as_str().to_owned(),
            place: Some(place),
            already_applied: false,
        }));
        Ok(())
    })?;
    outcome.unwrap_or_else(|| Err(curator_store::Error::NotFound { id: "(new)".into() }.into()))
}

/// A proposal waiting in `tier`/`scope` that says what `observation` says, read in the
/// transaction that would queue it (so two alike sent at once queue one).
fn waiting_alike(
    tx: &mut dyn Transaction,
    tier: Tier,
    scope: &ScopeName,
    observation: &Observation,
) -> curator_store::Result<Option<ObservationId>> {
    let waiting = waiting_in(tx, tier, scope)?;
    let said = format!("{} {}", observation.title, observation.content);
    Ok(waiting
        .into_iter()
        .find(|q| {
            let o = &q.observation;
            observation_similarity(&said, &o.title, &o.content) >= DUPLICATE_THRESHOLD
        })
        .map(|q| q.observation.id))
}

/// The answer for a proposal that one already waiting says: that one, under the run that
/// queued it.
fn waiting_proposal(
    tx: &mut dyn Transaction,
    id: &ObservationId,
    tier: Tier,
    scope: &ScopeName,
) -> curator_store::Result<ReviewOutcome> {
    let filter = curator_store::JournalFilter { id: Some(id.to_string()), run_id: None };
    let queued_by = tx
        .journal(&filter)?
        .into_iter()
        .rfind(|e| e.place == curator_store::Place::Pending)
        .and_then(|e| e.run_id);
    Ok(ReviewOutcome {
        run_id: queued_by.unwrap_or_default(),
        action: Action::Propose,
        id: id.to_string(),
        tier: tier.dir_name().to_owned(),
        scope: scope.as_str().to_owned(),
        place: Some(curator_store::Place::Pending),
        already_applied: true,
    })
}

/// The proposal a retried request already wrote, where it is now (approved, still queued, or
/// rejected).
fn replayed_proposal(
    tx: &mut dyn Transaction,
    earlier: &once::Earlier,
) -> Result<ReviewOutcome, ReviewError> {
    let entry = &earlier.entry;
    let place = match ObservationId::parse(&entry.id) {
        Ok(id) if tx.get(&id)?.is_some() => Some(curator_store::Place::Memory),
        Ok(id) if queued(tx, &id)?.is_some() => Some(curator_store::Place::Pending),
        _ => None,
    };
    Ok(ReviewOutcome {
        run_id: earlier.run_id.clone(),
        action: entry.action,
        id: entry.id.clone(),
        tier: entry.tier.clone(),
        scope: entry.scope.clone(),
        place,
        already_applied: true,
    })
}

/// A new canonical id that neither memory nor the queue holds.
pub fn fresh_id(tx: &mut dyn Transaction) -> curator_store::Result<ObservationId> {
    loop {
        let id = ObservationId::generate();
        if tx.get(&id)?.is_none() && queued(tx, &id)?.is_none() {
            return Ok(id);
        }
    }
}

/// The proposals waiting in `tier`/`scope`, read in `tx` ([`Transaction::pending_list_scope`]:
/// no other writer queues there before `tx` ends); none when the store keeps no queue.
pub(crate) fn waiting_in(
    tx: &mut dyn Transaction,
    tier: Tier,
    scope: &ScopeName,
) -> curator_store::Result<Vec<StoredObservation>> {
    match tx.pending_list_scope(tier, scope) {
        Err(curator_store::Error::Unsupported { .. }) => Ok(Vec::new()),
        other => other,
    }
}

/// The queued observation `id`; `None` also when the store keeps no queue.
pub(crate) fn queued(
    tx: &mut dyn Transaction,
    id: &ObservationId,
) -> curator_store::Result<Option<StoredObservation>> {
    match tx.pending_get(id) {
        Err(curator_store::Error::Unsupported { .. }) => Ok(None),
        other => other,
    }
}

/// Moves `stored` from the queue to its tier folder (scanned again on the way). A served copy
/// already in place (an approval that an older curator, which wrote memory first, left
/// half-done) is kept: only the queued copy is removed then.
pub(crate) fn approve_in(
    tx: &mut dyn Transaction,
    stored: &StoredObservation,
    reasoning: &str,
) -> curator_store::Result<()> {
    let o = &stored.observation;
    // Out of the queue first, into memory second: a writer killed between the two leaves the
    // proposal in neither place until the next writer rolls the transaction back, never in
    // both, where readers (agent-qa among them) would serve it unapproved.
    tx.pending_restore(stored.tier, &stored.scope, &o.id, None, Action::Approve, reasoning)?;
    match tx.get(&o.id)? {
        Some(served) if served.tier == stored.tier && served.scope == stored.scope => Ok(()),
        _ => tx.put(stored.tier, &stored.scope, o, Action::Approve, reasoning),
    }
}

/// Removes `stored` from the queue.
pub(crate) fn reject_in(
    tx: &mut dyn Transaction,
    stored: &StoredObservation,
    reasoning: &str,
) -> curator_store::Result<()> {
    let o = &stored.observation;
    tx.pending_restore(stored.tier, &stored.scope, &o.id, None, Action::Reject, reasoning)
}
