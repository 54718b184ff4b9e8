//! Observation changes a person or a harness asks for over HTTP: create, edit, confirm,
//! deprecate, delete (issue 6 item 2; agent-qa-memory §5.4 trust rules).
//!
//! The JSON API and the web UI's forms both call these functions, so a button in the browser
//! and a `curl` do exactly the same thing. Each change runs in one [`Store::transact`]: the
//! root's `.curator.lock` is held, the observation is re-read under it (a change made by another
//! process since the page was loaded is what gets confirmed or edited, never a stale copy), the
//! store's `put` runs the scanner, the codec and the atomic write, and one journal line is
//! appended. Every change is journaled under a fresh run id that the response returns, so
//! `POST /api/v1/runs/{run_id}/undo` reverts a person's edit like a curator run.
//!
//! Confirm and deprecate use the curator's arithmetic (`curator_core::trust`): confirm raises
//! trust by the confirm delta (capped at 1) and bumps `confirmed_count` and `last_confirmed`;
//! deprecate lowers it by the contradict delta and bumps `contradicted_count`, deleting the file
//! when trust would reach 0 (§5.4).

use axum::http::{HeaderMap, StatusCode};
use curator_core::trust::{self, Contradiction};
use curator_core::{Observation, ObservationId, ScopeName, SnapshotEntry, SuitePlacement, Tier};
use curator_engine::once::{self, IdempotencyKey};
use curator_store::{Action, JournalEntry, StoredObservation, Transaction};

use crate::error::ApiError;
use crate::state::AppState;

/// What a new observation needs.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct NewObservation {
    pub(crate) tier: String,
    pub(crate) scope: String,
    pub(crate) title: String,
    pub(crate) content: String,
    pub(crate) source_test: String,
    #[serde(default)]
    pub(crate) trust: Option<f64>,
    /// Suite observations: the child test's position (with `suite_tests`).
    #[serde(default)]
    pub(crate) position: Option<u64>,
    /// Suite observations: the suite's tests when the fact was learned.
    #[serde(default)]
    pub(crate) suite_tests: Option<Vec<SnapshotEntry>>,
    #[serde(default)]
    pub(crate) reasoning: Option<String>,
}

/// An edit: any of title, content, trust.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Edit {
    #[serde(default)]
    pub(crate) title: Option<String>,
    #[serde(default)]
    pub(crate) content: Option<String>,
    #[serde(default)]
    pub(crate) trust: Option<f64>,
    #[serde(default)]
    pub(crate) reasoning: Option<String>,
}

/// The request's `Idempotency-Key` (`curator_engine::once`): with one, the change is journaled
/// under `req-<key>` and a retry is answered with the change the key already made; without one
/// each request is a new change under a fresh run id, as a click in the UI is.
#[derive(Debug, Clone, Default)]
pub(crate) struct Once(Option<IdempotencyKey>);

impl Once {
    /// Reads `Idempotency-Key`; 400 when it is not 1–120 characters of `A-Z a-z 0-9 . _ -`.
    pub(crate) fn from_headers(headers: &HeaderMap) -> Result<Once, ApiError> {
        let Some(value) = headers.get("idempotency-key") else { return Ok(Once(None)) };
        let key = value.to_str().ok().and_then(|k| IdempotencyKey::parse(k).ok());
        match key {
            Some(k) => Ok(Once(Some(k))),
            None => Err(ApiError::bad_request(
                "Idempotency-Key must be 1-120 characters of A-Z a-z 0-9 . _ -",
            )),
        }
    }

    pub(crate) fn key(&self) -> Option<&IdempotencyKey> {
        self.0.as_ref()
    }

    /// The key a web UI form carried (`form_key`, one per rendered page) for its `action`: a
    /// second submit of the same form (a double click, a resubmit while the lock was busy) is
    /// answered with the change the first made. A form without one is a change each time.
    pub(crate) fn of_form(form_key: &str, action: &str) -> Once {
        let key = form_key.trim();
        if key.is_empty() {
            return Once(None);
        }
        Once(IdempotencyKey::parse(&format!("{key}-{action}")).ok())
    }

    fn run_id(&self) -> String {
        once::run_id_for(self.key())
    }

    /// The change a keyed request already made, if one stands; 409 when the key named another
    /// request (another observation or another kind of change).
    fn earlier(
        &self,
        tx: &mut dyn Transaction,
        fits: &dyn Fn(&JournalEntry) -> bool,
    ) -> Result<Option<Changed>, ApiError> {
        let Some(earlier) = once::earlier(tx, self.key())? else { return Ok(None) };
        let entry = &earlier.entry;
        if !fits(entry) {
            return Err(key_reused(&earlier.describe()));
        }
        let id = parse_id(&entry.id)?;
        let after = tx.get(&id)?;
        let (tier, scope) = match &after {
            Some(s) => (s.tier, s.scope.clone()),
            None => (
                entry
                    .tier
                    .parse()
                    .map_err(|_| ApiError::internal("journal entry with a bad tier"))?,
                ScopeName::new(entry.scope.clone())
                    .map_err(|_| ApiError::internal("journal entry with a bad scope"))?,
            ),
        };
        Ok(Some(Changed {
            run_id: earlier.run_id.clone(),
            action: entry.action,
            tier,
            scope,
            id,
            after,
            replayed: true,
            unchanged: false,
        }))
    }
}

/// 409 `idempotency_key_reused`: the key already names another change.
pub(crate) fn key_reused(reason: &str) -> ApiError {
    ApiError::new(
        StatusCode::CONFLICT,
        "idempotency_key_reused",
        format!("Idempotency-Key: {reason}"),
    )
}

/// What a change did: the run id it was journaled under and the observation after it
/// (`None` when it was deleted).
#[derive(Debug, Clone)]
pub(crate) struct Changed {
    pub(crate) run_id: String,
    pub(crate) action: Action,
    pub(crate) tier: Tier,
    pub(crate) scope: ScopeName,
    pub(crate) id: ObservationId,
    pub(crate) after: Option<StoredObservation>,
    /// The request's idempotency key had already made this change; nothing was applied now.
    pub(crate) replayed: bool,
    /// The observation already held what the request asked for: nothing was written or
    /// journaled (an edit saved without changing a field).
    pub(crate) unchanged: bool,
}

fn check_trust(trust: f64) -> Result<f64, ApiError> {
    if trust.is_finite() && (0.0..=1.0).contains(&trust) {
        Ok(trust)
    } else {
        Err(ApiError::bad_request(format!("trust must be a number in [0, 1], got {trust}")))
    }
}

/// [`check_text`] for a title, which is also one line.
fn check_title(title: &str) -> Result<String, ApiError> {
    let title = check_text("title", title)?;
    match curator_core::title_line_violation(&title) {
        Some(rule) => Err(ApiError::bad_request(format!("title {rule}"))),
        None => Ok(title),
    }
}

fn check_text(field: &str, text: &str) -> Result<String, ApiError> {
    let text = text.replace("\r\n", "\n");
    if text.trim().is_empty() {
        return Err(ApiError::bad_request(format!("{field} must not be empty")));
    }
    Ok(text)
}

/// Parses an id from a path segment (400 `invalid_id` for a malformed one).
pub(crate) fn parse_id(raw: &str) -> Result<ObservationId, ApiError> {
    Ok(ObservationId::parse(raw)?)
}

/// A new observation's fields, checked.
#[derive(Debug, Clone)]
pub(crate) struct CheckedNew {
    pub(crate) tier: Tier,
    pub(crate) scope: ScopeName,
    pub(crate) title: String,
    pub(crate) content: String,
    pub(crate) trust: f64,
    pub(crate) suite: Option<SuitePlacement>,
}

/// Checks what a new observation needs (shared by create and the review queue's proposals).
pub(crate) fn check_new(new: &NewObservation) -> Result<CheckedNew, ApiError> {
    let tier: Tier = new.tier.parse()?;
    let scope = ScopeName::writable(new.scope.as_str())?;
    let title = check_title(&new.title)?;
    let content = check_text("content", &new.content)?;
    let trust = check_trust(new.trust.unwrap_or(trust::INITIAL_TRUST))?;
    if new.source_test.trim().is_empty() {
        return Err(ApiError::bad_request("source_test must not be empty"));
    }
    let suite = match (new.position, &new.suite_tests) {
        (None, None) => None,
        (Some(position), Some(suite_snapshot)) if !suite_snapshot.is_empty() => {
            Some(SuitePlacement { position, suite_snapshot: suite_snapshot.clone() })
        }
        (Some(_), Some(_)) => return Err(ApiError::bad_request("suite_tests must not be empty")),
        _ => return Err(ApiError::bad_request("position and suite_tests come together")),
    };
    if suite.is_some() && tier != Tier::Suites {
        return Err(ApiError::bad_request("position/suite_tests only apply to the suites tier"));
    }
    Ok(CheckedNew { tier, scope, title, content, trust, suite })
}

/// Writes a new observation; the id is generated under the lock.
pub(crate) fn create(
    state: &AppState,
    new: NewObservation,
    once: &Once,
) -> Result<Changed, ApiError> {
    let CheckedNew { tier, scope, title, content, trust, suite } = check_new(&new)?;
    let reasoning = new.reasoning.unwrap_or_else(|| "added over the HTTP API".to_owned());
    let now = curator_core::time::now_iso();
    let run_id = once.run_id();
    let mut outcome: Option<Result<Changed, ApiError>> = None;
    state.store().transact(Some(&run_id), &mut |tx| {
        let same = |e: &JournalEntry| {
            e.action == Action::Add
                && once::adds(e, tier.dir_name(), scope.as_str(), &title, &content)
        };
        if let Some(done) = once.earlier(tx, &same).transpose() {
            outcome = Some(done);
            return Ok(());
        }
        // A fresh id neither memory nor the review queue holds, checked under the lock.
        let id = curator_engine::review::fresh_id(tx)?;
        let observation = Observation {
            id: id.clone(),
            title: title.clone(),
            content: content.clone(),
            trust,
            created: now.clone(),
            last_confirmed: now.clone(),
            confirmed_count: 0,
            contradicted_count: 0,
            source_test: new.source_test.clone(),
            suite: suite.clone(),
            extra: Default::default(),
        };
        tx.put(tier, &scope, &observation, Action::Add, &reasoning)?;
        let after = StoredObservation { tier, scope: scope.clone(), observation };
        outcome = Some(Ok(Changed {
            run_id: run_id.clone(),
            action: Action::Add,
            tier,
            scope: scope.clone(),
            id,
            after: Some(after),
            replayed: false,
            unchanged: false,
        }));
        Ok(())
    })?;
    outcome.unwrap_or_else(|| Err(ApiError::internal("the store wrote no observation")))
}

/// The one-observation change every mutation below shares: read fresh under the lock, decide,
/// write or delete.
///
/// `made` says whether a journaled change is the one this request makes (its kind, and for an
/// edit its values): a retry with the request's key is answered with it, any other change
/// under that key is 409.
fn change(
    state: &AppState,
    id: &ObservationId,
    once: &Once,
    made: &dyn Fn(&JournalEntry) -> bool,
    decide: &dyn Fn(&Observation) -> Result<Decided, ApiError>,
) -> Result<Changed, ApiError> {
    let run_id = once.run_id();
    let mut outcome: Option<Result<Changed, ApiError>> = None;
    state.store().transact(Some(&run_id), &mut |tx| {
        let same = |e: &JournalEntry| e.id == id.as_str() && made(e);
        if let Some(done) = once.earlier(tx, &same).transpose() {
            outcome = Some(done);
            return Ok(());
        }
        let Some(stored) = tx.get(id)? else {
            return Err(curator_store::Error::NotFound { id: id.to_string() });
        };
        let (tier, scope) = (stored.tier, stored.scope.clone());
        let mut unchanged = false;
        let result = match decide(&stored.observation) {
            Err(e) => Err(e),
            Ok(Decided::Keep) => {
                unchanged = true;
                Ok(Some(stored))
            }
            Ok(Decided::Write(after, action, reasoning)) => {
                tx.put(tier, &scope, &after, action, &reasoning)?;
                let after = StoredObservation { tier, scope: scope.clone(), observation: *after };
                Ok(Some(after))
            }
            Ok(Decided::Delete(reasoning)) => {
                tx.delete(tier, &scope, id, Action::Delete, &reasoning)?;
                Ok(None)
            }
        };
        outcome = Some(result.map(|after| Changed {
            run_id: run_id.clone(),
            action: after.as_ref().map_or(Action::Delete, |_| Action::Edit),
            tier,
            scope,
            id: id.clone(),
            after,
            replayed: false,
            unchanged,
        }));
        Ok(())
    })?;
    outcome.unwrap_or_else(|| Err(ApiError::internal("the change did not run")))
}

enum Decided {
    Write(Box<Observation>, Action, String),
    Delete(String),
    /// Nothing to change: no write, no journal entry.
    Keep,
}

/// What an observation's editable state was when a form showed it: a fingerprint of its title,
/// content, trust and counts. An edit sent with one is refused (409 `changed_since`) when the
/// observation has changed since, so a stale page never writes old values back.
pub(crate) fn version(o: &Observation) -> String {
    curator_engine::curate::content_run_id(&serde_json::json!([
        o.title,
        o.content,
        o.trust,
        o.confirmed_count,
        o.contradicted_count,
        o.last_confirmed
    ]))
}

/// Edits title, content and/or trust; with `seen`, only if the observation is still at that
/// [`version`].
pub(crate) fn edit(
    state: &AppState,
    id: &ObservationId,
    edit: Edit,
    once: &Once,
    seen: Option<&str>,
) -> Result<Changed, ApiError> {
    if edit.title.is_none() && edit.content.is_none() && edit.trust.is_none() {
        return Err(ApiError::bad_request("an edit needs at least one of title, content, trust"));
    }
    let title = edit.title.as_deref().map(check_title).transpose()?;
    let content = edit.content.as_deref().map(|c| check_text("content", c)).transpose()?;
    let trust = edit.trust.map(check_trust).transpose()?;
    let reasoning = edit.reasoning.unwrap_or_else(|| "edited by a person".to_owned());
    let made = |e: &JournalEntry| {
        e.action == Action::Edit
            && e.after.as_ref().is_some_and(|a| {
                title.as_ref().is_none_or(|t| a.title == *t)
                    && content.as_ref().is_none_or(|c| a.content == *c)
                    && trust.is_none_or(|t| a.trust == t)
            })
    };
    let mut changed = change(state, id, once, &made, &|before| {
        if seen.is_some_and(|v| v != version(before)) {
            return Err(ApiError::new(
                StatusCode::CONFLICT,
                "changed_since",
                "this observation changed after the page was loaded (another run or person \
                 confirmed, deprecated or edited it); nothing was saved. Its current values are \
                 shown above; your text is kept in the form below.",
            ));
        }
        let mut after = before.clone();
        if let Some(t) = &title {
            after.title.clone_from(t);
        }
        if let Some(c) = &content {
            after.content.clone_from(c);
        }
        if let Some(t) = trust {
            after.trust = t;
        }
        if after == *before {
            return Ok(Decided::Keep);
        }
        Ok(Decided::Write(Box::new(after), Action::Edit, reasoning.clone()))
    })?;
    if !changed.replayed {
        changed.action = Action::Edit;
    }
    Ok(changed)
}

/// Confirms: trust up by the confirm delta, `confirmed_count + 1`, `last_confirmed = now`.
pub(crate) fn confirm(
    state: &AppState,
    id: &ObservationId,
    reasoning: Option<String>,
    once: &Once,
) -> Result<Changed, ApiError> {
    let deltas = state.engine().deltas;
    let now = curator_core::time::now_iso();
    let reasoning = reasoning.unwrap_or_else(|| "confirmed by a person".to_owned());
    let made = |e: &JournalEntry| e.action == Action::Confirm;
    let mut changed = change(state, id, once, &made, &|before| {
        let mut after = before.clone();
        after.trust = trust::confirm(before.trust, &deltas);
        after.confirmed_count += 1;
        after.last_confirmed.clone_from(&now);
        Ok(Decided::Write(Box::new(after), Action::Confirm, reasoning.clone()))
    })?;
    if !changed.replayed {
        changed.action = Action::Confirm;
    }
    Ok(changed)
}

/// Deprecates: trust down by the contradict delta, `contradicted_count + 1`; deleted at 0.
pub(crate) fn deprecate(
    state: &AppState,
    id: &ObservationId,
    reasoning: Option<String>,
    once: &Once,
) -> Result<Changed, ApiError> {
    let deltas = state.engine().deltas;
    let reasoning = reasoning.unwrap_or_else(|| "deprecated by a person".to_owned());
    // A deprecation to trust 0 deletes the file (journaled as a delete).
    let made = |e: &JournalEntry| matches!(e.action, Action::Deprecate | Action::Delete);
    let mut changed = change(state, id, once, &made, &|before| {
        Ok(match trust::contradict(before.trust, &deltas) {
            Contradiction::Deleted => Decided::Delete(reasoning.clone()),
            Contradiction::Lowered(next) => {
                let mut after = before.clone();
                after.trust = next;
                after.contradicted_count += 1;
                Decided::Write(Box::new(after), Action::Deprecate, reasoning.clone())
            }
        })
    })?;
    if changed.after.is_some() && !changed.replayed {
        changed.action = Action::Deprecate;
    }
    Ok(changed)
}

/// Deletes the observation.
pub(crate) fn delete(
    state: &AppState,
    id: &ObservationId,
    reasoning: Option<String>,
    once: &Once,
) -> Result<Changed, ApiError> {
    let reasoning = reasoning.unwrap_or_else(|| "deleted by a person".to_owned());
    let made = |e: &JournalEntry| e.action == Action::Delete;
    change(state, id, once, &made, &|_| Ok(Decided::Delete(reasoning.clone())))
}
