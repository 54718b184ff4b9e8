//! The optional LLM rewrite step and the validation its output must pass (harness-curator §9).
//!
//! curator-harness builds no LLM client: a caller plugs one in through [`MemoryRewriter`] (the
//! OpenAI-compatible client lives elsewhere). The rewriter sees the deterministic result and may
//! return better wording; [`validate_rewrite`] then holds it to the same rules the deterministic
//! writer meets — four MEMORY.md headings in order, Decisions with a why, Lessons with evidence
//! that exists, every bound, no invented feature ids, nothing removed from identity except by
//! merging — and on any problem the pass keeps the deterministic files and reports why.

use std::collections::{BTreeMap, BTreeSet};

use crate::codebase::feature_ids;
use crate::compact::MEMORY_MAX_LINES;
use crate::fsio::{estimated_tokens, physical_lines};
use crate::identity::{IDENTITY_MAX_LINES, IdentityFile, IdentitySection};
use crate::lemma::Lemma;
use crate::memory_md::{MemoryDoc, Section};
use crate::summary::{SUMMARY_MAX_LINES, SUMMARY_MAX_TOKENS};

/// What the rewriter is given: the pass's deterministic output and its inputs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RewriteInput {
    /// raw.md as snapshotted by the pass.
    pub raw: String,
    /// The deterministic MEMORY.md.
    pub memory_md: String,
    /// The deterministic summary.md.
    pub summary_md: String,
    /// issues.json after triage and auto-close.
    pub issues_json: String,
    /// features.json.
    pub features_json: String,
    /// Identity files after this pass's appends, by role.
    pub identities: BTreeMap<String, String>,
}

/// What a rewriter returns; `None` / absent keeps the deterministic text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RewriteOutput {
    /// Replacement MEMORY.md.
    pub memory_md: Option<String>,
    /// Replacement summary.md.
    pub summary_md: Option<String>,
    /// Replacement identity files, by role.
    pub identities: BTreeMap<String, String>,
}

/// An LLM (or any other) rewrite step. Runs as a fresh-context `curator` invocation restricted to
/// the memory and identity files; its error is reported and the deterministic files are kept.
pub trait MemoryRewriter: std::fmt::Debug {
    /// Returns improved files, or a message saying why it could not.
    fn rewrite(&self, input: &RewriteInput) -> Result<RewriteOutput, String>;
}

/// Feature ids the rewrite may cite: those present in any input.
pub fn known_fids(input: &RewriteInput) -> BTreeSet<String> {
    let mut all = String::new();
    for s in
        [&input.raw, &input.memory_md, &input.summary_md, &input.issues_json, &input.features_json]
    {
        all.push_str(s);
        all.push('\n');
    }
    for s in input.identities.values() {
        all.push_str(s);
    }
    feature_ids(&all).into_iter().collect()
}

/// Every problem with `out`; empty means it may be written.
pub fn validate_rewrite(input: &RewriteInput, out: &RewriteOutput) -> Vec<String> {
    let known = known_fids(input);
    let mut problems = Vec::new();
    let invented = |text: &str, file: &str, problems: &mut Vec<String>| {
        for f in feature_ids(text) {
            if !known.contains(&f) {
                problems
                    .push(format!("{file}: feature id {f} appears in no input (invented fact)"));
            }
        }
    };
    if let Some(m) = &out.memory_md {
        let headings: Vec<&str> =
            m.lines().filter(|l| l.starts_with("## ")).map(str::trim_end).collect();
        let expected: Vec<&str> = Section::ALL.iter().map(|s| s.heading()).collect();
        if headings != expected {
            problems
                .push(format!("MEMORY.md: headings {headings:?}, expected exactly {expected:?}"));
        }
        let lines = physical_lines(m);
        if lines > MEMORY_MAX_LINES {
            problems.push(format!("MEMORY.md: {lines} lines > {MEMORY_MAX_LINES}"));
        }
        let doc = MemoryDoc::parse(m);
        for d in doc.items(Section::Decisions) {
            if d.why.is_none() {
                problems.push(format!("MEMORY.md: Decision without `— why:`: {}", d.statement));
            }
        }
        for l in doc.items(Section::Lessons) {
            if l.evidence.is_empty() {
                problems
                    .push(format!("MEMORY.md: Lesson without `(evidence: …)`: {}", l.statement));
            }
        }
        invented(m, "MEMORY.md", &mut problems);
    }
    if let Some(s) = &out.summary_md {
        if !s.starts_with("# Harness memory (curated ") {
            problems
                .push("summary.md: first line must be `# Harness memory (curated <date>)`".into());
        }
        let (lines, tokens) = (physical_lines(s), estimated_tokens(s));
        if lines > SUMMARY_MAX_LINES || tokens > SUMMARY_MAX_TOKENS {
            problems.push(format!(
                "summary.md: {lines} lines / ~{tokens} tokens (max {SUMMARY_MAX_LINES} / {SUMMARY_MAX_TOKENS})"
            ));
        }
        invented(s, "summary.md", &mut problems);
    }
    for (role, text) in &out.identities {
        let file = format!("identity/{role}.md");
        let Some(before) = input.identities.get(role) else {
            problems
                .push(format!("{file}: the rewrite may only touch identity files the pass wrote"));
            continue;
        };
        let (old, new) = (IdentityFile::parse(role, before), IdentityFile::parse(role, text));
        for section in IdentitySection::ALL {
            let kept = new.entries(section);
            for e in old.entries(section) {
                let lemma = Lemma::new(&e.statement);
                if !kept.iter().any(|k| Lemma::new(&k.statement).same_as(&lemma)) {
                    problems
                        .push(format!("{file}: entry removed without merging: {}", e.statement));
                }
            }
        }
        let lines = physical_lines(text);
        if lines > IDENTITY_MAX_LINES && lines > physical_lines(before) {
            problems.push(format!("{file}: {lines} lines > {IDENTITY_MAX_LINES}"));
        }
        invented(text, &file, &mut problems);
    }
    problems
}
