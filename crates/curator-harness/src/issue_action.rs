//! A person's actions on issues.json: acknowledge, close, won't fix, reopen (harness-curator
//! §3.4, the "(human)" transitions; issue 15 item 5 "issue close/acknowledge").
//!
//! Invariants:
//! - a change runs under the pass lock and is refused at once ([`Error::Busy`]) while a pass or
//!   triage runs, so it never interleaves with their read-modify-write of issues.json;
//! - issues.json is replaced atomically; every other issue, every unknown key and the
//!   newest-first order are kept as loaded; a broken issues.json is an error and stays as it was;
//! - each change appends one note naming who made it and the transition, so the history says
//!   who closed what;
//! - setting the status an issue already has writes nothing (a retried click or request adds no
//!   second note), so the operation is idempotent.
//!
//! Only the transitions §3.4 gives a person are allowed: `open → acknowledged`, and any status to
//! `open`, `closed` or `wontfix`. `fixing` is set by promotion to an F-FIX feature, never by hand.

use std::time::Duration;

use jiff::Timestamp;

use crate::error::{Error, Result};
use crate::fsio::write_if_changed;
use crate::harness::Harness;
use crate::issues::{Issue, Note, Status};
use crate::raw::iso_seconds;

/// Longest note a person may attach to a change (characters).
pub const ISSUE_NOTE_MAX_CHARS: usize = 2000;

/// What [`Harness::set_issue_status`] did.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct IssueChange {
    /// The issue as saved.
    pub issue: Issue,
    /// The status before.
    pub from: Status,
    /// Whether issues.json changed (false when the issue already had the status).
    pub changed: bool,
}

/// Whether a person may move an issue from `from` to `to` (§3.4).
pub fn human_transition_allowed(from: Status, to: Status) -> bool {
    match to {
        Status::Acknowledged => matches!(from, Status::Open | Status::Acknowledged),
        Status::Open | Status::Closed | Status::Wontfix => true,
        Status::Fixing => from == Status::Fixing,
    }
}

impl Harness {
    /// Sets issue `id`'s status on behalf of `by` (a person's name, `human` by default in the
    /// UI), with an optional note. Unknown ids are [`Error::UnknownIssue`]; a transition §3.4 does
    /// not give a person is [`Error::Invalid`].
    pub fn set_issue_status(
        &self,
        id: &str,
        status: Status,
        by: &str,
        note: Option<&str>,
        now: Timestamp,
    ) -> Result<IssueChange> {
        let by = by.trim();
        if by.is_empty() || by.len() > 64 || by.chars().any(char::is_control) {
            return Err(Error::invalid("by", "1-64 characters, no control characters"));
        }
        let note = note.map(str::trim).filter(|n| !n.is_empty());
        if let Some(n) = note {
            if n.chars().count() > ISSUE_NOTE_MAX_CHARS {
                return Err(Error::invalid(
                    "note",
                    format!("at most {ISSUE_NOTE_MAX_CHARS} characters"),
                ));
            }
            crate::safety::check("note", n)?;
        }
        self.require_state()?;
        let _pass = self.pass_lock(Duration::ZERO)?;
        // A triage or pass a crash interrupted is finished first: its issues.json is the one
        // this change must build on.
        self.recover()?;
        let mut file = self.load_issues()?;
        let Some(issue) = file.issues.iter_mut().find(|i| i.id == id) else {
            return Err(Error::UnknownIssue { id: id.to_owned() });
        };
        let from = issue.status;
        if from == status {
            return Ok(IssueChange { issue: issue.clone(), from, changed: false });
        }
        if !human_transition_allowed(from, status) {
            return Err(Error::invalid(
                "status",
                format!(
                    "{id} is {}: a person may acknowledge only an open issue, and set open, closed or wontfix; fixing comes from promotion",
                    from.as_str()
                ),
            ));
        }
        issue.status = status;
        let mut text = format!("Status {} → {} by {by}", from.as_str(), status.as_str());
        if let Some(n) = note {
            text.push_str(": ");
            text.push_str(n);
        }
        issue.notes.push(Note {
            ts: iso_seconds(now),
            by: by.to_owned(),
            text,
            extra: Default::default(),
        });
        let saved = issue.clone();
        write_if_changed(&self.issues_path(), file.to_json().as_bytes())?;
        Ok(IssueChange { issue: saved, from, changed: true })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn people_get_the_transitions_of_section_3_4() {
        use Status::*;
        assert!(human_transition_allowed(Open, Acknowledged));
        assert!(!human_transition_allowed(Closed, Acknowledged));
        assert!(!human_transition_allowed(Fixing, Acknowledged));
        for from in [Open, Acknowledged, Fixing, Closed, Wontfix] {
            assert!(human_transition_allowed(from, Closed));
            assert!(human_transition_allowed(from, Wontfix));
            assert!(human_transition_allowed(from, Open));
        }
        assert!(!human_transition_allowed(Open, Fixing));
    }
}
