//! Where a raw entry goes in MEMORY.md, keeping by default (harness-curator §6, §4.5; issue 16
//! item 2).
//!
//! The original curator judged this with an LLM and lost whatever it did not understand. The
//! deterministic core errs the other way: every entry becomes an item unless it is *pure progress*
//! ("implemented X", "started Y", "done") or a validator's bare "verified via …" (§6), and those
//! are absorbed with the reason written to the archive. The section comes from the writer's
//! explicit prefix when there is one (`DECISION:`, `CONTEXT:`, `LESSON:`, …), then from a small
//! keyword test, and otherwise from the author's role: debugger → Lessons, validator → History
//! (MEMORY.md's failures section), planner → Decisions (with a why) or Context, everyone else →
//! Lessons. A Decision without a rationale is kept as Context ("never 'we use X' without
//! rationale"). The optional LLM judge (`judge.rs`) refines these verdicts.

use std::sync::LazyLock;

use regex::Regex;

use crate::memory_md::Section;

/// The roles that have identity files (§1).
pub(crate) const KNOWN_ROLES: &[&str] = &[
    "architect",
    "crosscheck",
    "curator",
    "debugger",
    "documenter",
    "orchestrator",
    "planner",
    "plan-reviewer",
    "product",
    "ui-qa",
    "validator",
    "worker",
];

/// What a raw entry becomes in MEMORY.md.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Classified {
    /// Target section.
    pub section: Section,
    /// The statement (prefix removed).
    pub statement: String,
    /// The rationale, for Decisions.
    pub why: Option<String>,
    /// Whether it is a tool/command convention somebody forgot (§4.5).
    pub convention: bool,
    /// How the section was chosen.
    pub rule: Rule,
}

/// How a verdict was reached (the archive and `trace` say it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// The writer's explicit prefix (`DECISION:` …).
    Prefix,
    /// A keyword in the text.
    Keyword,
    /// No keyword: the author role's default section.
    RoleDefault,
    /// The LLM judge.
    Llm,
}

/// The classifier's verdict on one entry's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Becomes (or feeds) a MEMORY.md item.
    Keep(Classified),
    /// Carries no lesson; absorbed with this reason.
    Absorb(&'static str),
}

/// Why an entry carrying no lesson was absorbed.
pub(crate) const PROGRESS: &str = "progress chatter";
/// Why a bare validator verification was absorbed (§6).
pub(crate) const VERIFICATION: &str = "verification without a lesson";

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
    Regex::new(r"(?i)\b(always|never|do not|don't|must|should|avoid|instead|prefer|requires?|needs? to|make sure|remember to|forgot|forgets|forgetting|gotcha|careful|works only|only works|root cause|lazily|workaround)\b")
        .expect("static regex")
});
static CONVENTION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(forgot|forgets|forgetting|remember to)\b").expect("static regex")
});
static FAILURE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(failed|fails|failing|failure|crash\w*|timed out|times out|reverted|rolled back|regress\w*)\b")
        .expect("static regex")
});
/// An entry that reports progress: a progress verb first (after an optional feature or issue id),
/// or a short phrase ending in a progress participle.
static PROGRESS_VERB: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^(?:(?:F|I)-[\w-]+[:,]?\s+)?(?:implemented|implementing|started|starting|start|finished|finishing|done|completed|complete|working on|work in progress|wip|continuing|continued|resumed|resuming|picked up|picking up|committed|pushed|added|adding|created|creating|wrote|writing)\b")
        .expect("static regex")
});
static PROGRESS_TAIL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:done|implemented|finished|completed|started|rewritten|written|added|created|committed|pushed)\.?$")
        .expect("static regex")
});
/// Words that turn a progress note into something worth keeping.
static LESSON_SIGNAL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(because|since|so that|but|however|although|though|must|should|never|always|needs?|requires?|instead|avoid|don't|do not|can't|cannot|won't|fail\w*|broke\w*|bug\w*|errors?|crash\w*|root cause|gotcha|careful|turns? out|turned out|learned|trick|workaround|why|only|without|unless|otherwise|flaky|slow\w*|time[sd]? out|timeout|wrong|missing|instead)\b|[;:—]")
        .expect("static regex")
});
static VERIFIED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^(?:(?:F|I)-[\w-]+[:,]?\s+)?(?:verified|passes|passed|green)(?:\s+(?:via|with|by|using)\b[^,;:]*)?\.?$")
        .expect("static regex")
});

/// Words of a progress note at most: a long note probably says more than "done".
const PROGRESS_MAX_WORDS: usize = 12;

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

fn decision_or_context(text: &str, rule: Rule) -> Classified {
    let (statement, why) = split_why(text);
    let section = if why.is_some() { Section::Decisions } else { Section::Context };
    let statement = if why.is_some() { statement } else { text.trim().to_string() };
    Classified { section, statement, why, convention: false, rule }
}

fn plain(section: Section, text: &str, rule: Rule) -> Classified {
    Classified {
        section,
        statement: text.trim().to_string(),
        why: None,
        convention: CONVENTION.is_match(text),
        rule,
    }
}

/// Whether `text` is pure progress: a progress verb (or participle at the end of a short phrase)
/// and nothing that reads like a reason, a warning or a failure.
pub fn is_progress(text: &str) -> bool {
    let text = text.trim();
    let words = text.split_whitespace().count();
    if words == 0 || words > PROGRESS_MAX_WORDS || LESSON_SIGNAL.is_match(text) {
        return false;
    }
    PROGRESS_VERB.is_match(text) || (words <= 8 && PROGRESS_TAIL.is_match(text))
}

/// Classifies one entry's text written by `role`.
pub fn classify(role: &str, text: &str) -> Verdict {
    let text = text.trim();
    if text.is_empty() {
        return Verdict::Absorb(PROGRESS);
    }
    if let Some(c) = PREFIX.is_match(text).then(|| PREFIX.captures(text)).flatten() {
        let body = c[2].trim();
        if body.is_empty() {
            return Verdict::Absorb(PROGRESS);
        }
        return Verdict::Keep(match c[1].to_ascii_lowercase().as_str() {
            "decision" | "decided" => decision_or_context(body, Rule::Prefix),
            "context" | "fact" | "note" => plain(Section::Context, body, Rule::Prefix),
            "history" | "failure" | "failed" | "fail" | "escalated" | "escalate" | "blocked" => {
                plain(Section::History, text, Rule::Prefix)
            }
            "convention" => {
                Classified { convention: true, ..plain(Section::Lessons, body, Rule::Prefix) }
            }
            _ => plain(Section::Lessons, body, Rule::Prefix),
        });
    }
    if VERIFIED.is_match(text) && !LESSON_SIGNAL.is_match(text) {
        return Verdict::Absorb(VERIFICATION);
    }
    if is_progress(text) {
        return Verdict::Absorb(PROGRESS);
    }
    if ESCALATION.is_match(text) {
        return Verdict::Keep(plain(Section::History, text, Rule::Keyword));
    }
    if DECISION.is_match(text) {
        return Verdict::Keep(decision_or_context(text, Rule::Keyword));
    }
    if LESSON.is_match(text) {
        return Verdict::Keep(plain(Section::Lessons, text, Rule::Keyword));
    }
    if FAILURE.is_match(text) {
        return Verdict::Keep(plain(Section::History, text, Rule::Keyword));
    }
    Verdict::Keep(role_default(role, text))
}

/// The section of an entry with no keyword, by its author's role (issue 16 item 2).
pub fn role_default(role: &str, text: &str) -> Classified {
    match role {
        "validator" => plain(Section::History, text, Rule::RoleDefault),
        "planner" => decision_or_context(text, Rule::RoleDefault),
        _ => plain(Section::Lessons, text, Rule::RoleDefault),
    }
}

/// The role that forgot a convention: a known role named before the "forgot" word ("the worker
/// forgot …", "validators keep forgetting …"), else `None` (then the author forgot it).
pub fn forgetter(text: &str) -> Option<String> {
    let m = CONVENTION.find(text)?;
    let before = text[..m.start()].to_lowercase();
    before.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-')).rev().find_map(|w| {
        let w = w.strip_suffix('s').filter(|s| KNOWN_ROLES.contains(s)).unwrap_or(w);
        KNOWN_ROLES.contains(&w).then(|| w.to_string())
    })
}

/// Whether a statement is a forgotten-convention lesson.
pub(crate) fn is_convention(text: &str) -> bool {
    CONVENTION.is_match(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section(role: &str, t: &str) -> Option<Section> {
        match classify(role, t) {
            Verdict::Keep(c) => Some(c.section),
            Verdict::Absorb(_) => None,
        }
    }

    #[test]
    fn prefixes_win_then_keywords_then_the_role() {
        assert_eq!(section("validator", "F-023 verified via curl + DB row inspection"), None);
        assert_eq!(section("worker", "LESSON: seed before e2e"), Some(Section::Lessons));
        assert_eq!(
            section("orchestrator", "escalated after 5 worker attempts: flaky auth"),
            Some(Section::History)
        );
        assert_eq!(
            section("worker", "never mock the DB in integration tests"),
            Some(Section::Lessons)
        );
        assert_eq!(section("worker", "e2e suite failed on the login page"), Some(Section::History));
        let Verdict::Keep(d) =
            classify("architect", "decided to use pnpm because workspaces need it")
        else {
            panic!()
        };
        assert_eq!((d.section, d.why.as_deref()), (Section::Decisions, Some("workspaces need it")));
        assert_eq!(d.statement, "decided to use pnpm");
        // A decision with no rationale is not a Decision.
        assert_eq!(section("architect", "DECISION: we use pnpm"), Some(Section::Context));
        // Prose without any keyword is kept, by role.
        let prose = "CI needs pgcrypto on the test database";
        assert_eq!(section("validator", prose), Some(Section::History));
        assert_eq!(
            section("debugger", "the webhook handler reads STRIPE_SECRET at import time"),
            Some(Section::Lessons)
        );
        assert_eq!(section("planner", "checkout ships after search"), Some(Section::Context));
        assert_eq!(
            section("worker", "the cart total is computed client side"),
            Some(Section::Lessons)
        );
    }

    #[test]
    fn only_pure_progress_is_absorbed() {
        for chatter in [
            "Implemented endpoint 7",
            "started F-031 checkout",
            "done",
            "F-012 done",
            "working on the payment API",
            "README section on seeding rewritten",
        ] {
            assert_eq!(classify("worker", chatter), Verdict::Absorb(PROGRESS), "{chatter}");
        }
        for kept in [
            "Implemented endpoint 7 but the ORM needs explicit transactions",
            "done; the seed must run first",
            "started over because the lockfile was stale",
            "F-004 verified via curl, refund path untested",
        ] {
            assert!(matches!(classify("worker", kept), Verdict::Keep(_)), "{kept}");
        }
    }

    #[test]
    fn the_forgetter_is_the_role_named_before_forgot() {
        assert_eq!(
            forgetter("the worker forgot to run pnpm db:generate").as_deref(),
            Some("worker")
        );
        assert_eq!(forgetter("validators keep forgetting the seed").as_deref(), Some("validator"));
        assert_eq!(forgetter("forgot to run the migration"), None);
        assert!(is_convention("remember to restart the dev server"));
    }
}
