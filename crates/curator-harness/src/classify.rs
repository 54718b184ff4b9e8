//! Which MEMORY.md section a non-TRICK raw entry belongs to (harness-curator §6, §4.5).
//!
//! The original curator judged this with an LLM; the deterministic core uses the writer's explicit
//! prefix when there is one (`DECISION:`, `CONTEXT:`, `HISTORY:`, `LESSON:`, `AVOID:`,
//! `CONVENTION:` …) and otherwise a small keyword test. Entries that carry no lesson — "verified
//! via …", progress notes, monitor blocks — are absorbed without creating an item, as §6 says of
//! validator verifications. A Decision without a rationale is refused as a Decision ("never 'we use
//! X' without rationale") and kept as Context instead. The optional LLM rewrite step
//! (`rewrite.rs`) is where finer judgement belongs.

use std::sync::LazyLock;

use regex::Regex;

use crate::memory_md::Section;

/// What a raw entry becomes in MEMORY.md.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Classified {
    /// Target section.
    pub section: Section,
    /// The statement (prefix removed).
    pub statement: String,
    /// The rationale, for Decisions.
    pub why: Option<String>,
    /// Whether it is a tool/command convention a role forgot (§4.5).
    pub convention: bool,
}

static PREFIX: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^(decision|decided|context|fact|note|history|failure|failed|fail|escalated|escalate|blocked|lesson|avoid|gotcha|convention)\s*:\s*(.*)$")
        .expect("static regex")
});
static ESCALATION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(escalat\w*|gave up|giving up|blocked)\b").expect("static regex")
});
static DECISION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\b(decided|decision|chose|chosen|switched to|going with|we use|standardi[sz]ed on)\b",
    )
    .expect("static regex")
});
static WHY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\s*(?: — why:| -- why:|\bwhy:|\bbecause\b|\bsince\b|\bso that\b)\s*")
        .expect("static regex")
});
static LESSON: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(always|never|do not|don't|must|should|avoid|instead|prefer|requires?|needs? to|make sure|remember to|forgot|gotcha|careful|works only|only works)\b")
        .expect("static regex")
});
static CONVENTION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)\b(forgot|forgets|remember to)\b").expect("static regex"));
static FAILURE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(failed|fails|failing|failure|crash\w*|timed out|reverted|rolled back|regress\w*)\b")
        .expect("static regex")
});

fn split_why(text: &str) -> (String, Option<String>) {
    match WHY.find(text) {
        Some(m) if m.start() > 0 => {
            let why = text[m.end()..].trim().trim_end_matches('.').to_string();
            let statement = text[..m.start()].trim().trim_end_matches([',', ';']).to_string();
            (statement, (!why.is_empty()).then_some(why))
        }
        _ => (text.trim().to_string(), None),
    }
}

fn decision_or_context(text: &str) -> Classified {
    let (statement, why) = split_why(text);
    let section = if why.is_some() { Section::Decisions } else { Section::Context };
    let statement = if why.is_some() { statement } else { text.trim().to_string() };
    Classified { section, statement, why, convention: false }
}

fn plain(section: Section, text: &str) -> Classified {
    Classified {
        section,
        statement: text.trim().to_string(),
        why: None,
        convention: CONVENTION.is_match(text),
    }
}

/// Classifies one non-TRICK entry's text; `None` = absorbed without an item.
pub fn classify(text: &str) -> Option<Classified> {
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    if let Some(c) = PREFIX.captures(text) {
        let body = c[2].trim();
        if body.is_empty() {
            return None;
        }
        return Some(match c[1].to_ascii_lowercase().as_str() {
            "decision" | "decided" => decision_or_context(body),
            "context" | "fact" | "note" => plain(Section::Context, body),
            "history" | "failure" | "failed" | "fail" | "escalated" | "escalate" | "blocked" => {
                plain(Section::History, text)
            }
            "convention" => Classified { convention: true, ..plain(Section::Lessons, body) },
            _ => plain(Section::Lessons, body),
        });
    }
    if ESCALATION.is_match(text) {
        return Some(plain(Section::History, text));
    }
    if DECISION.is_match(text) {
        return Some(decision_or_context(text));
    }
    if LESSON.is_match(text) {
        return Some(plain(Section::Lessons, text));
    }
    if FAILURE.is_match(text) {
        return Some(plain(Section::History, text));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section(t: &str) -> Option<Section> {
        classify(t).map(|c| c.section)
    }

    #[test]
    fn prefixes_win_then_keywords() {
        assert_eq!(section("F-023 verified via curl + DB row inspection"), None);
        assert_eq!(section("LESSON: seed before e2e"), Some(Section::Lessons));
        assert_eq!(
            section("escalated after 5 worker attempts: flaky auth"),
            Some(Section::History)
        );
        assert_eq!(section("never mock the DB in integration tests"), Some(Section::Lessons));
        assert_eq!(section("e2e suite failed on the login page"), Some(Section::History));
        let d = classify("decided to use pnpm because workspaces need it").unwrap();
        assert_eq!((d.section, d.why.as_deref()), (Section::Decisions, Some("workspaces need it")));
        assert_eq!(d.statement, "decided to use pnpm");
        // A decision with no rationale is not a Decision.
        assert_eq!(section("DECISION: we use pnpm"), Some(Section::Context));
        assert!(classify("worker forgot to run `pnpm db:push` before tests").unwrap().convention);
    }
}
