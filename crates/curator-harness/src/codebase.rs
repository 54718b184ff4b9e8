//! Codebase-specific vs generalisable text (harness-curator §4.4), and the stale test of §6.
//!
//! A statement is codebase-specific when it names something only this project has: a path whose
//! first segment is a top-level entry of the project or that glob-matches a tracked file, a file
//! name that exists in the repo, the project slug, a feature id or an issue id. The project's file
//! list comes from `git ls-files` when the project is a git work tree, else from a bounded
//! directory walk, so the answer follows what the repository really holds. A code pointer
//! (`src/a.ts:42`, `a.ts:42:7`, `src/a.ts#L42`) names its file: it is codebase-specific when the
//! file exists and never stale because of its line number (issue 16).

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use std::sync::LazyLock;

use regex::Regex;

static FEATURE_ID: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\bF-[A-Za-z0-9][A-Za-z0-9-]*").expect("static regex"));
static ISSUE_ID: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\bI-[A-Za-z0-9]+\b").expect("static regex"));

/// Directories a walk never enters (build output, VCS data, the harness's own state).
const SKIP_DIRS: &[&str] = &[".git", "target", "node_modules", ".harness", ".curator"];
/// A walk stops after this many files: enough to answer "does it exist", bounded on huge trees.
const WALK_LIMIT: usize = 50_000;

/// What the project holds, for the §4.4 and §6 tests.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProjectIndex {
    /// Tracked file paths, `/`-separated, relative to the project root.
    pub files: BTreeSet<String>,
    /// First path segments of the tracked files.
    pub top_level: BTreeSet<String>,
    /// Base names of the tracked files.
    pub file_names: BTreeSet<String>,
    /// The project slug (lowercase), if known.
    pub slug: Option<String>,
}

impl ProjectIndex {
    /// Builds the index from a list of relative paths.
    pub fn from_files<I, S>(files: I, slug: Option<&str>) -> ProjectIndex
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut index = ProjectIndex {
            slug: slug.map(str::to_lowercase).filter(|s| !s.is_empty()),
            ..Default::default()
        };
        for f in files {
            let f = f.as_ref().trim().trim_start_matches("./");
            if f.is_empty() {
                continue;
            }
            if let Some(first) = f.split('/').next() {
                index.top_level.insert(first.to_string());
            }
            if let Some(name) = f.rsplit('/').next() {
                index.file_names.insert(name.to_string());
            }
            index.files.insert(f.to_string());
        }
        index
    }

    /// Lists the project at `root`: `git ls-files` in a git work tree, else a directory walk.
    pub fn scan(root: &Path, slug: Option<&str>) -> ProjectIndex {
        if root.join(".git").exists() {
            let out = Command::new("git").arg("-C").arg(root).arg("ls-files").output();
            if let Some(out) = out.ok().filter(|o| o.status.success()) {
                let text = String::from_utf8_lossy(&out.stdout);
                return ProjectIndex::from_files(text.lines(), slug);
            }
        }
        let mut files = Vec::new();
        walk(root, "", &mut files);
        ProjectIndex::from_files(files, slug)
    }

    /// Whether the project has no files at all (then nothing can be judged stale by path).
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// The §4.4 test.
    pub fn is_codebase_specific(&self, text: &str) -> bool {
        if FEATURE_ID.is_match(text) || ISSUE_ID.is_match(text) {
            return true;
        }
        let lower = text.to_lowercase();
        if let Some(slug) = &self.slug
            && words(&lower).any(|w| w == slug.as_str())
        {
            return true;
        }
        candidate_tokens(text).any(|t| self.names_project_file(t))
    }

    fn names_project_file(&self, token: &str) -> bool {
        if token.contains('/') {
            let first = token.split('/').next().unwrap_or("");
            return self.top_level.contains(first) || self.glob_matches(token);
        }
        has_extension(token) && self.file_names.contains(token)
    }

    /// Whether a tracked file matches `pattern`; a pattern without glob characters is a plain
    /// lookup (no scan of the file list per token: a pass reads hundreds of thousands of entries).
    fn glob_matches(&self, pattern: &str) -> bool {
        if !pattern.contains(['*', '?']) {
            return self.files.contains(pattern);
        }
        self.files.iter().any(|f| glob(pattern.as_bytes(), f.as_bytes()))
    }

    /// The §6 stale test for paths: a path whose first segment is a top-level entry but that no
    /// tracked file matches any more. Other tokens say nothing about staleness.
    pub fn stale_path(&self, text: &str) -> Option<String> {
        if self.is_empty() {
            return None;
        }
        candidate_tokens(text)
            .filter(|t| t.contains('/'))
            .find(|t| {
                let first = t.split('/').next().unwrap_or("");
                let t = t.trim_end_matches('/');
                self.top_level.contains(first)
                    && !self.files.contains(t)
                    && !self.glob_matches(t)
                    && !self.files.iter().any(|f| f.starts_with(&format!("{t}/")))
            })
            .map(str::to_string)
    }
}

/// Feature ids mentioned in `text`.
pub fn feature_ids(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for m in FEATURE_ID.find_iter(text) {
        let id = m.as_str().trim_end_matches('-').to_string();
        if !out.contains(&id) {
            out.push(id);
        }
    }
    out
}

fn words(s: &str) -> impl Iterator<Item = &str> {
    s.split(|c: char| !(c.is_alphanumeric() || c == '-' || c == '_')).filter(|w| !w.is_empty())
}

/// Whitespace tokens stripped of quoting, sentence punctuation and a code pointer's line part;
/// URLs excluded.
fn candidate_tokens(text: &str) -> impl Iterator<Item = &str> {
    text.split_whitespace()
        .map(|t| {
            let t = t
                .trim_matches(|c: char| {
                    matches!(c, '`' | '"' | '\'' | '(' | ')' | '[' | ']' | ',' | ';' | ':')
                })
                .trim_end_matches(['.', '!', '?'])
                .trim_start_matches("./");
            strip_line_number(t)
        })
        .filter(|t| !t.is_empty() && !t.contains("://"))
}

/// `path:42`, `path:42:7`, `path#L42` → `path`.
fn strip_line_number(token: &str) -> &str {
    let token = match token.rfind("#L") {
        Some(i) if token[i + 2..].chars().all(|c| c.is_ascii_digit() || c == '-') => &token[..i],
        _ => token,
    };
    let mut t = token;
    for _ in 0..2 {
        match t.rsplit_once(':') {
            Some((head, tail))
                if !head.is_empty()
                    && !tail.is_empty()
                    && tail.chars().all(|c| c.is_ascii_digit()) =>
            {
                t = head;
            }
            _ => break,
        }
    }
    t
}

fn has_extension(token: &str) -> bool {
    match token.rsplit_once('.') {
        Some((stem, ext)) => {
            !stem.is_empty()
                && !ext.is_empty()
                && ext.len() <= 8
                && ext.chars().all(|c| c.is_ascii_alphanumeric())
                && ext.chars().any(|c| c.is_ascii_alphabetic())
        }
        None => false,
    }
}

/// Glob with `*` (within a segment), `**` (across segments) and `?`.
fn glob(p: &[u8], s: &[u8]) -> bool {
    match (p.first(), s.first()) {
        (None, None) => true,
        (Some(b'*'), _) if p.get(1) == Some(&b'*') => {
            let rest = &p[2..];
            let rest = rest.strip_prefix(b"/").unwrap_or(rest);
            (0..=s.len()).any(|i| glob(rest, &s[i..]))
        }
        (Some(b'*'), _) => {
            glob(&p[1..], s) || (s.first().is_some_and(|&c| c != b'/') && glob(p, &s[1..]))
        }
        (Some(b'?'), Some(&c)) if c != b'/' => glob(&p[1..], &s[1..]),
        (Some(a), Some(b)) if a == b => glob(&p[1..], &s[1..]),
        _ => false,
    }
}

fn walk(dir: &Path, prefix: &str, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        if out.len() >= WALK_LIMIT {
            return;
        }
        let name = e.file_name().to_string_lossy().into_owned();
        let rel = if prefix.is_empty() { name.clone() } else { format!("{prefix}/{name}") };
        let Ok(kind) = e.file_type() else { continue };
        if kind.is_dir() {
            if !SKIP_DIRS.contains(&name.as_str()) {
                walk(&e.path(), &rel, out);
            }
        } else {
            out.push(rel);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_semantics() {
        assert!(glob(b"drizzle/*.sql", b"drizzle/0001_init.sql"));
        assert!(!glob(b"drizzle/*.sql", b"drizzle/sub/0001.sql"));
        assert!(glob(b"apps/**/Grid.tsx", b"apps/web/src/Grid.tsx"));
        assert!(glob(b"a?c", b"abc"));
    }

    #[test]
    fn code_pointers_name_their_file() {
        assert_eq!(strip_line_number("src/a.ts:42"), "src/a.ts");
        assert_eq!(strip_line_number("a.ts:42:7"), "a.ts");
        assert_eq!(strip_line_number("src/a.ts#L42"), "src/a.ts");
        assert_eq!(strip_line_number("host:port"), "host:port");
        let p = ProjectIndex::from_files(["src/checkout/webhook.ts"], None);
        assert!(p.is_codebase_specific("src/checkout/webhook.ts:42 reads the secret at import"));
        assert!(p.is_codebase_specific("webhook.ts:42 reads the secret at import"));
        assert_eq!(p.stale_path("src/checkout/webhook.ts:42 reads the secret"), None);
        assert_eq!(
            p.stale_path("src/checkout/gone.ts:42 reads the secret").as_deref(),
            Some("src/checkout/gone.ts")
        );
    }

    #[test]
    fn extensions() {
        assert!(has_extension("Grid.tsx"));
        assert!(!has_extension("3.14"));
        assert!(!has_extension(".env"));
    }

    #[test]
    fn feature_ids_are_collected_once() {
        assert_eq!(feature_ids("F-012 and F-FIX-003, F-012."), ["F-012", "F-FIX-003"]);
    }
}
