//! `read_secrets`: a reading command whose argument is a secret file (agent-qa-memory §7, §11.10).
//!
//! agent-qa's `cat\s+[^\n]*(\.env|credentials|\.netrc|\.pgpass)` fires on "bobcat credentials page
//! title" and "cat the log file, then open credentials". Here the command must start a shell word
//! and one of its first four arguments must be a *path* naming a secret; a bare English word
//! "credentials" is not a path.

use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

/// A reading command at the start of a shell word: line start, whitespace, `;`, `|`, `&`, `(`
/// (`$(cat …)`) or a backtick (markdown code spans, command substitution).
static COMMAND: LazyLock<Regex> = LazyLock::new(|| Regex::new(GATE).expect("static regex"));

/// The command pattern; every secret read contains a match of it (see `persona::GATE`).
pub(super) const GATE: &str =
    r"(?:^|[\s;|&(`])(?:sudo\s+)?(cat|less|more|head|tail|bat|nl|tac|strings|base64|xxd|od)\s";

/// A shell word of the argument list (`<` is a redirection, not part of a path).
static TOKEN: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"[^\s<]+").expect("static regex"));

/// How many non-option arguments are looked at; prose after a command word ("cat the log file
/// and check .env") reaches a secret only after more words than a real command line has.
const MAX_ARGS: usize = 4;

/// Basenames that are secret files.
const SECRET_NAMES: &[&str] = &[
    ".env",
    ".netrc",
    "_netrc",
    ".pgpass",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
];

/// The first secret read in `text` (the matching copy), as a byte range.
pub(super) fn find(text: &str) -> Option<Range<usize>> {
    for caps in COMMAND.captures_iter(text) {
        let cmd = caps.get(1)?;
        let args_start = caps.get(0)?.end();
        let rest = &text[args_start..];
        // The command's arguments end at a shell separator or the end of the line.
        let args_end = rest.find([';', '|', '&', ')', '`', '>', '\n']).unwrap_or(rest.len());
        let mut seen = 0;
        for token in TOKEN.find_iter(&rest[..args_end]) {
            if token.as_str().starts_with('-') {
                continue;
            }
            if is_secret_path(token.as_str()) {
                return Some(cmd.start()..args_start + token.end());
            }
            seen += 1;
            if seen == MAX_ARGS {
                break;
            }
        }
    }
    None
}

/// Whether a command argument names a secret file.
fn is_secret_path(token: &str) -> bool {
    let path = token
        .trim_matches(|c: char| matches!(c, '"' | '\'' | '(' | ')' | ','))
        .trim_end_matches(['.', ':', '!', '?']);
    let base = path.rsplit(['/', '\\']).next().unwrap_or(path);
    // A named variant of a dotenv, netrc or pgpass file (`prod.env`, `backup.pgpass`) is one
    // too: agent-qa's pattern reads them as secrets, and nothing else has those suffixes.
    let suffixed =
        [".env", ".netrc", ".pgpass"].iter().any(|s| base.len() > s.len() && base.ends_with(s));
    SECRET_NAMES.contains(&base)
        || suffixed
        || base.starts_with(".env.")
        || path.ends_with("/etc/shadow")
        || (path.contains("credentials") && path.contains(['/', '\\', '~', '.', '$']))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_paths() {
        for p in [
            ".env",
            "./.env",
            "/srv/app/.env.local",
            "~/.aws/credentials",
            "$HOME/.aws/credentials",
            "credentials.json",
            "\"/home/x/.netrc\"",
            "~/.pgpass.",
            "/etc/shadow",
            "~/.ssh/id_ed25519",
            "prod.env",
            "/srv/secrets.env",
            "backup.pgpass",
            "my.netrc",
        ] {
            assert!(is_secret_path(p), "{p}");
        }
        for p in [
            "credentials",
            "the",
            "log",
            ".envrc-docs",
            "environment.md",
            "file",
            "dev.environment",
        ] {
            assert!(!is_secret_path(p), "{p}");
        }
    }

    #[test]
    fn command_must_start_a_word_and_be_near_the_path() {
        assert_eq!(find("cat .env"), Some(0..8));
        assert_eq!(find("x; cat -n .env"), Some(3..14));
        assert_eq!(find("bobcat .env"), None);
        assert_eq!(find("cat the log file and check .env"), None);
        assert_eq!(find("cat notes.txt | grep .env"), None);
        assert_eq!(find("cat a b c .env"), Some(0..14));
        assert_eq!(find("cat \u{e9}\u{e9} .env"), Some(0..13));
    }
}
