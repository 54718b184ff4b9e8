//! Requests a client may retry, applied once.
//!
//! A write sent over a network (or by a harness that restarts a step) may arrive twice: the
//! client timed out, or crashed after the write and before it read the answer. Curation runs
//! carry their own run id and are applied once by [`crate::runs`]; the single writes a person
//! or an agent makes (`curator add`, the API's create / edit / confirm / deprecate / delete, a
//! proposal to the review queue) take an **idempotency key** instead. The change is journaled
//! under run id `req-<key>`, so a retry finds, in the same transaction and under the same lock,
//! the application that key already made and answers with it rather than writing again.
//!
//! Keys share one namespace across the CLI and the API: a key names a request, whatever path it
//! came by. A key that made one kind of change and is sent with another is refused
//! (the caller compares the standing change with the request), never silently answered with the wrong change. Undo works as for
//! any run: `curator undo req-<key>`; after an undo the key is free again, as a run's id is.

use curator_store::{JournalEntry, Transaction};

use crate::runs::RunApplications;

/// Prefix of the run ids that idempotency keys name.
pub const KEYED_RUN_PREFIX: &str = "req-";

/// Longest key, in bytes (the run id `req-<key>` stays well inside a run id's bound).
pub const MAX_KEY_LEN: usize = 120;

/// A client's name for one request: 1–120 characters of `A-Z a-z 0-9 . _ -`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdempotencyKey(String);

/// A key that is not 1–120 characters of `A-Z a-z 0-9 . _ -`.
#[derive(Debug, Clone, thiserror::Error)]
#[error("an idempotency key must be 1-120 characters of A-Z a-z 0-9 . _ -")]
pub struct BadKey;

impl IdempotencyKey {
    pub fn parse(raw: &str) -> Result<Self, BadKey> {
        let ok = (1..=MAX_KEY_LEN).contains(&raw.len())
            && raw.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
        if ok { Ok(IdempotencyKey(raw.to_owned())) } else { Err(BadKey) }
    }

    /// The run id the request's change is journaled under.
    pub fn run_id(&self) -> String {
        format!("{KEYED_RUN_PREFIX}{}", self.0)
    }
}

/// The run id for a request: the key's when it has one, else a fresh one (each request a new
/// change, as a click in the UI is).
pub fn run_id_for(key: Option<&IdempotencyKey>) -> String {
    key.map_or_else(curator_core::generate_run_id, IdempotencyKey::run_id)
}

/// The change a keyed request already made: the first entry of its standing application.
#[derive(Debug, Clone)]
pub struct Earlier {
    pub run_id: String,
    pub entry: JournalEntry,
}

impl Earlier {
    /// What a refusal says when the change is not the one the retried request asks for.
    pub fn describe(&self) -> String {
        format!(
            "the key was used for another change ({:?} of {})",
            self.entry.action, self.entry.id
        )
    }
}

/// Whether `entry` wrote an observation titled `title` with `content` into `tier`/`scope`: the
/// add a retried create or proposal asks for. A key sent again with another body names another
/// request, which is refused rather than answered with the first one's observation.
pub fn adds(entry: &JournalEntry, tier: &str, scope: &str, title: &str, content: &str) -> bool {
    entry.tier == tier
        && entry.scope == scope
        && entry.after.as_ref().is_some_and(|a| a.title == title && a.content == content)
}

/// The standing change `key` already made, read inside the caller's transaction (so a
/// concurrent retry waits for the lock and then sees the first one's change). `None` without
/// a key, and for a key never used or whose change was undone.
pub fn earlier(
    tx: &mut dyn Transaction,
    key: Option<&IdempotencyKey>,
) -> curator_store::Result<Option<Earlier>> {
    let Some(key) = key else { return Ok(None) };
    let run_id = key.run_id();
    let run = RunApplications::load(&mut |f| tx.journal(f), &run_id)?;
    Ok(run
        .standing()
        .and_then(|app| app.entries.first())
        .map(|entry| Earlier { run_id, entry: entry.clone() }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_short_plain_names() {
        assert_eq!(IdempotencyKey::parse("retry-1.a_B").unwrap().run_id(), "req-retry-1.a_B");
        for bad in ["", "a b", "../x", "é", &"k".repeat(MAX_KEY_LEN + 1)] {
            assert!(IdempotencyKey::parse(bad).is_err(), "{bad:?}");
        }
        assert!(IdempotencyKey::parse(&"k".repeat(MAX_KEY_LEN)).is_ok());
        assert!(run_id_for(None) != run_id_for(None), "no key: a fresh run each time");
    }
}
