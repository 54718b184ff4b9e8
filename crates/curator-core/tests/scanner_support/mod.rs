//! What the scanner's corpus tests share: the fixture escapes, agent-qa's original §7 scanner as
//! the baseline, the train/held-out split, and curator's own benign QA observations.
//!
//! # The split
//!
//! A text is *held out* when the FNV-1a 64-bit hash of its UTF-8 bytes is odd, *train* when it
//! is even. The rule depends on nothing but the text, so it is stable across corpus versions,
//! sources and machines, and a text cannot move between halves. Patterns are tuned on what the
//! train half misses or wrongly blocks (the tests print only train cases); the figures that judge
//! the scanner are the held-out half's.

#![allow(dead_code)] // each test binary uses its own part

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use curator_core::codec::parse_observation;
use regex::Regex;

/// The fixture directory (`tests/fixtures/scanner`).
pub(crate) fn fixture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/scanner").join(name);
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Decodes the corpus escapes: `\n`, `\t`, `\\`, `\u{XXXX}`.
pub(crate) fn unescape(line: &str, lineno: usize) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('\\') => out.push('\\'),
            Some('u') => {
                let rest: String = chars.by_ref().take_while(|&c| c != '}').collect();
                let hex = rest
                    .strip_prefix('{')
                    .unwrap_or_else(|| panic!("line {lineno}: \\u must be \\u{{XXXX}}"));
                let cp = u32::from_str_radix(hex, 16)
                    .ok()
                    .and_then(char::from_u32)
                    .unwrap_or_else(|| panic!("line {lineno}: bad code point {hex:?}"));
                out.push(cp);
            }
            other => panic!("line {lineno}: unknown escape \\{other:?}"),
        }
    }
    out
}

/// The corpus lines that are cases, with their 1-based line numbers.
pub(crate) fn cases(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'))
}

/// Whether `text` belongs to the held-out half (see the module doc).
pub(crate) fn held_out(text: &str) -> bool {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash & 1 == 1
}

/// agent-qa's scanner exactly as §7 quotes it (JS `i` flag, `\w` ASCII), for comparison.
pub(crate) fn agent_qa_rule(text: &str) -> Option<String> {
    static RULES: LazyLock<Vec<(&str, Regex)>> = LazyLock::new(|| {
        [
            ("prompt_injection", r"ignore\s+(previous|all|above|prior)\s+instructions"),
            ("role_hijack", r"you\s+are\s+now\s+"),
            ("deception", r"do\s+not\s+tell\s+the\s+user"),
            ("sys_override", r"system\s+prompt\s+override"),
            ("rule_bypass", r"disregard\s+(your|all|any)\s+(instructions|rules)"),
            (
                "restriction_bypass",
                r"act\s+as\s+(if|though)\s+you\s+(have\s+no|don't\s+have)\s+(restrictions|limits)",
            ),
            ("exfil_curl", r"curl\s+[^\n]*\$\{?[A-Za-z0-9_]*(KEY|TOKEN|SECRET|PASSWORD)"),
            ("exfil_wget", r"wget\s+[^\n]*\$\{?[A-Za-z0-9_]*(KEY|TOKEN|SECRET|PASSWORD)"),
            ("read_secrets", r"cat\s+[^\n]*(\.env|credentials|\.netrc|\.pgpass)"),
            ("ssh_backdoor", r"authorized_keys"),
            ("ssh_access", r"\$HOME/\.ssh|~/\.ssh"),
        ]
        .into_iter()
        .map(|(id, p)| (id, Regex::new(&format!("(?i){p}")).unwrap()))
        .collect()
    });
    if let Some((id, _)) = RULES.iter().find(|(_, r)| r.is_match(text)) {
        return Some((*id).to_owned());
    }
    let invisible =
        [0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E];
    text.chars()
        .find(|c| invisible.contains(&u32::from(*c)))
        .map(|c| format!("invisible_unicode_U+{:04X}", u32::from(c)))
}

/// One benign QA observation: where it comes from and the text the scanner sees.
pub(crate) struct Benign {
    pub(crate) origin: String,
    pub(crate) text: String,
}

/// curator's own benign QA observations: `benign.txt`, and every observation of the example
/// memory root and of the eval sets (dev, train, held-out: written for retrieval by other
/// engineers, so independent of the scanner), title and content joined as `scan_observation`
/// joins them.
pub(crate) fn qa_benign() -> Vec<Benign> {
    let mut out: Vec<Benign> = cases(&fixture("benign.txt"))
        .map(|(n, l)| Benign { origin: format!("benign.txt:{n}"), text: unescape(l, n) })
        .collect();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for root in
        ["examples/agent-qa-memory", "eval/dev/memory", "eval/train/memory", "eval/holdout/memory"]
    {
        let before = out.len();
        for path in observation_files(&repo.join(root)) {
            let text = fs::read_to_string(&path).unwrap();
            let stem = path.file_stem().unwrap().to_str().unwrap();
            let obs = parse_observation(&text, stem)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let joined = match (obs.title.is_empty(), obs.content.is_empty()) {
                (false, false) => format!("{}\n{}", obs.title, obs.content),
                (false, true) => obs.title.clone(),
                (true, _) => obs.content.clone(),
            };
            let rel = path.strip_prefix(&repo).unwrap_or(&path).display().to_string();
            out.push(Benign { origin: rel, text: joined });
        }
        assert!(out.len() > before, "{root}: no observations found");
    }
    out
}

/// Every `obs_*.md` below `dir`, sorted.
fn observation_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                if name != ".curator" {
                    stack.push(path);
                }
            } else if name.starts_with("obs_") && name.ends_with(".md") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// A short one-line form of a text for reports.
pub(crate) fn short(text: &str) -> String {
    let one_line: String = text.chars().map(|c| if c == '\n' { '⏎' } else { c }).collect();
    match one_line.char_indices().nth(140) {
        Some((i, _)) => format!("{}…", &one_line[..i]),
        None => one_line,
    }
}
