//! Suite stale cleanup (agent-qa-memory §5.6): after a passed suite child's decisions, under the
//! same lock, every suite observation whose snapshot differs from the suite's tests now is deleted.
//!
//! Snapshots are compared as data (ordered lists of `{test, id}`), not as JSON text, so key order
//! in a hand-edited file cannot make a current observation look stale (§11.11). Position is not
//! compared: observations for other positions of an unchanged suite survive. Suite-folder
//! observations without a snapshot (no `position`) are never cleaned, as in agent-qa. Like
//! agent-qa's cleanup, it reads every file that parses, including one the scanner blocks: a
//! stale observation is deleted whatever its text.

use curator_core::{SnapshotEntry, Tier};
use curator_store::{Action, Transaction};

use super::apply::delta;
use super::memory_log::MemoryLog;
use super::run_record::SuiteInfo;

/// Deletes the stale observations of `suite`; counts them as `deleted` only.
pub(crate) fn clean_stale_suite(tx: &mut dyn Transaction, suite: &SuiteInfo, log: &mut MemoryLog) {
    // A shared database store may run curators for the same suite at once; the file store's
    // root lock already serializes them and this is a no-op there.
    if let Err(e) = tx.lock_suite(&suite.id) {
        log.errors.push(format!("Suite stale scan error: {e}"));
        return;
    }
    let listed = match tx.list_scope_parsed(Tier::Suites, &suite.id) {
        Ok(listed) => listed,
        Err(e) => {
            log.errors.push(format!("Suite stale scan error: {e}"));
            return;
        }
    };
    let reasoning = format!("Suite snapshot changed for suite {}", suite.id);
    for stored in listed {
        let Some(placement) = &stored.observation.suite else { continue };
        if is_current(&placement.suite_snapshot, &suite.tests) {
            continue;
        }
        let obs = &stored.observation;
        match tx.delete(Tier::Suites, &stored.scope, &obs.id, Action::Delete, &reasoning) {
            Ok(()) => log.push(
                delta(Action::Delete, Tier::Suites, &stored.scope, obs, None, &reasoning),
                false,
            ),
            Err(e) => log.errors.push(format!("Suite stale cleanup error: {e}")),
        }
    }
}

fn is_current(snapshot: &[SnapshotEntry], tests: &[SnapshotEntry]) -> bool {
    snapshot == tests
}
