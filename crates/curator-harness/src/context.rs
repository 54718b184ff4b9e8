//! The memory part of a role's prompt preamble (harness-curator §1.1 items 3–5).
//!
//! Order is cache-stable first: the memory-discipline reminder (not for the curator), the role's
//! identity (only if non-empty; the curator does get its own), then summary.md last because it
//! changes most (skipped for the curator — a feedback loop — and when absent or empty). Sections
//! are separated by a `---` line. The role prompt and the volatile runtime context stay the
//! supervisor's job.

/// The memory-discipline reminder given to every role but the curator (§1.1 item 3, §2.1).
pub(crate) fn discipline_reminder(role: &str) -> String {
    format!(
        "## Memory discipline\n\
         When you learn something generalizable, append ONE line to raw.md \
         (`curator harness append --role {role} [--feature F-…] [--trick] TEXT`), which writes \
         `[<ISO-8601-timestamp>] {role} <feature_id-or-dash> <TRICK|->: <one-line observation>`. \
         Flag reusable patterns with TRICK. Do not dump logs, do not duplicate an existing line, \
         and skip silently if nothing is generalizable.\n"
    )
}

/// Builds the preamble from the identity and summary texts (either may be empty).
pub(crate) fn render(role: &str, identity: &str, summary: &str) -> String {
    let curator = role == "curator";
    let mut parts: Vec<String> = Vec::new();
    if !curator {
        parts.push(discipline_reminder(role));
    }
    if !identity.trim().is_empty() {
        parts.push(format!(
            "## Your identity (cross-mission memory for the {role} role)\n\n{}",
            ensure_newline(identity)
        ));
    }
    if !curator && !summary.trim().is_empty() {
        parts.push(format!(
            "## Memory (curated from prior iterations of this run)\n\n{}",
            ensure_newline(summary)
        ));
    }
    parts.join("\n---\n\n")
}

fn ensure_newline(s: &str) -> String {
    if s.ends_with('\n') { s.to_string() } else { format!("{s}\n") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn curator_gets_identity_but_no_summary_or_reminder() {
        let c = render("curator", "# IDENTITY — curator\n", "# Harness memory\n");
        assert!(c.starts_with("## Your identity (cross-mission memory for the curator role)"));
        assert!(!c.contains("Memory (curated") && !c.contains("Memory discipline"));
        let w = render("worker", "", "# Harness memory\n");
        assert!(!w.contains("Your identity"));
        let parts: Vec<&str> = w.split("\n---\n").collect();
        assert_eq!(parts.len(), 2);
        assert!(parts[1].contains("## Memory (curated from prior iterations of this run)"));
    }
}
