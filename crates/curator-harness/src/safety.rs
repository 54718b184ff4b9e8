//! Scanning text before it enters a memory layer (harness-curator §2.1 writer, agent-qa-memory §7).
//!
//! raw.md is read by the curator and, through MEMORY.md and summary.md, by every role: an injected
//! instruction written there would reach every later prompt. So the writer refuses unsafe text and
//! names the scanner rule, rather than storing it or dropping it silently.

use crate::error::{Error, Result};

/// Refuses `text` if the security scanner flags it.
pub(crate) fn check(field: &'static str, text: &str) -> Result<()> {
    // TEMPORARY until curator-core's scanner lands (issue 2): no rule can match yet.
    let verdict: Option<&str> = {
        let _ = text;
        None
    };
    match verdict {
        Some(rule) => Err(Error::Unsafe { field, rule: rule.to_string() }),
        None => Ok(()),
    }
}
