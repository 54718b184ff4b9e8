//! Tiers and scope names: where an observation lives (agent-qa-memory §1.1, §1.8).
//!
//! agent-qa's guards let `..`, `/` and the empty string through in places (§1.8, §11.8); a scope
//! name here is checked once, when it is made, and every path built from it stays one folder
//! below its tier folder.
//!
//! Two rules. [`ScopeName::new`] is what a name must be to address a folder at all: it is used
//! for names read from disk and for queries, so memory agent-qa wrote stays readable.
//! [`ScopeName::writable`] is the one rule every write path applies to a name it is given (the
//! CLI, the HTTP API and UI, MCP, the run records of `curate`): on top of the first, no
//! invisible or bidi control character (U+202E can make `evil` look like `live`), no leading
//! or trailing whitespace, no percent-encoded `.`, `/` or `\` (`%2e%2e%2f` is `../` to
//! anything that decodes it). `lint` reports existing folders that break it (issue 13 item 5).

use std::fmt;
use std::str::FromStr;

/// One of the three tier folders under a memory root.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Tier {
    /// `products/<product>`: facts about a whole product.
    Products,
    /// `suites/<suiteId>`: facts about a suite, optionally tied to a position and snapshot.
    Suites,
    /// `tests/<testId>`: facts about one test.
    Tests,
}

impl Tier {
    /// All tiers in the order agent-qa searches them.
    pub const ALL: [Tier; 3] = [Tier::Products, Tier::Suites, Tier::Tests];

    /// The folder name under the root (`products`, `suites`, `tests`); also the MemoryLog `tier`.
    pub fn dir_name(self) -> &'static str {
        match self {
            Tier::Products => "products",
            Tier::Suites => "suites",
            Tier::Tests => "tests",
        }
    }

    /// The decision scope word for this tier (`product`, `suite`, `test`).
    pub fn scope_word(self) -> &'static str {
        match self {
            Tier::Products => "product",
            Tier::Suites => "suite",
            Tier::Tests => "test",
        }
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.dir_name())
    }
}

impl FromStr for Tier {
    type Err = ScopeError;

    /// Accepts the folder name or the decision word: `products`/`product`, and so on.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "products" | "product" => Ok(Tier::Products),
            "suites" | "suite" => Ok(Tier::Suites),
            "tests" | "test" => Ok(Tier::Tests),
            other => Err(ScopeError::UnknownTier(crate::excerpt(other))),
        }
    }
}

/// Why a tier or scope name was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ScopeError {
    /// Not one of products/suites/tests (or product/suite/test).
    #[error("unknown tier {0:?}: expected products, suites or tests")]
    UnknownTier(String),
    /// The empty string would address the tier folder itself.
    #[error("scope name is empty")]
    Empty,
    /// `.` or `..` would leave the scope folder.
    #[error("scope name {0:?} is a relative path component")]
    DotComponent(String),
    /// A separator would create or reach nested folders the index never reads.
    #[error("scope name {0:?} contains a path separator")]
    Separator(String),
    /// NUL or another control character.
    #[error("scope name {0:?} contains a control character")]
    ControlChar(String),
    /// Longer than a file name may be.
    #[error("scope name is longer than {max} bytes", max = ScopeName::MAX_LEN)]
    TooLong,
    /// An invisible or bidi control character (write rule).
    #[error(
        "scope name {name:?} contains U+{code:04X}, an invisible or bidi control character",
        code = u32::from(*.found)
    )]
    Invisible {
        /// The name.
        name: String,
        /// The first such character.
        found: char,
    },
    /// Whitespace at the start or the end (write rule).
    #[error("scope name {0:?} starts or ends with whitespace")]
    OuterWhitespace(String),
    /// `%2e`, `%2f` or `%5c` in any case (write rule).
    #[error("scope name {0:?} contains a percent-encoded '.', '/' or '\\'")]
    PercentEncoded(String),
}

/// A validated scope folder name: a product, a suite id (or name) or a test id.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ScopeName(String);

impl ScopeName {
    /// Longest accepted name in bytes (a file name limit on common file systems).
    pub const MAX_LEN: usize = 255;

    /// Checks `name` against the rules stricter than §1.8: not empty, not `.`/`..`, no `/`, `\`,
    /// NUL or other control characters, at most [`ScopeName::MAX_LEN`] bytes.
    pub fn new(name: impl Into<String>) -> Result<Self, ScopeError> {
        let name = name.into();
        if name.is_empty() {
            return Err(ScopeError::Empty);
        }
        // Length first, so that the errors below, which repeat the name, repeat a short one.
        if name.len() > Self::MAX_LEN {
            return Err(ScopeError::TooLong);
        }
        if name == "." || name == ".." {
            return Err(ScopeError::DotComponent(name));
        }
        if name.contains(['/', '\\']) {
            return Err(ScopeError::Separator(name));
        }
        if name.chars().any(char::is_control) {
            return Err(ScopeError::ControlChar(name));
        }
        Ok(ScopeName(name))
    }

    /// A name a write may create a folder for: [`ScopeName::new`]'s rule plus the write rule
    /// (no invisible or bidi control character, no outer whitespace, no percent-encoded
    /// separator). Every write path takes its names through this.
    pub fn writable(name: impl Into<String>) -> Result<Self, ScopeError> {
        let scope = Self::new(name)?;
        match scope.write_rule_violation() {
            Some(e) => Err(e),
            None => Ok(scope),
        }
    }

    /// The part of the write rule this (readable) name breaks, if any; `lint` reports it for
    /// a folder that exists.
    pub fn write_rule_violation(&self) -> Option<ScopeError> {
        let name = &self.0;
        if let Some(found) = name.chars().find(|c| is_invisible(*c)) {
            return Some(ScopeError::Invisible { name: name.clone(), found });
        }
        if name.starts_with(char::is_whitespace) || name.ends_with(char::is_whitespace) {
            return Some(ScopeError::OuterWhitespace(name.clone()));
        }
        let lower = name.to_ascii_lowercase();
        if ["%2e", "%2f", "%5c"].iter().any(|encoded| lower.contains(encoded)) {
            return Some(ScopeError::PercentEncoded(name.clone()));
        }
        None
    }

    /// The folder name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Characters that render as nothing or reorder what is around them: bidi embeddings,
/// overrides, isolates and marks, zero-width characters, the soft hyphen, invisible operators,
/// deprecated format controls and tag characters. (Control characters are refused by
/// [`ScopeName::new`] already.)
fn is_invisible(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'
            | '\u{061C}'
            | '\u{180E}'
            | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{206F}'
            | '\u{FEFF}'
            | '\u{E0000}'..='\u{E007F}'
    )
}

impl fmt::Display for ScopeName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromStr for ScopeName {
    type Err = ScopeError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ScopeName::new(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scope_names_that_would_leave_their_folder_are_refused() {
        for bad in ["", ".", "..", "a/b", "../x", "a\\b", "a\0b", "a\nb", "tab\there"] {
            assert!(ScopeName::new(bad).is_err(), "{bad:?} accepted");
        }
        assert_eq!(ScopeName::new("x".repeat(256)), Err(ScopeError::TooLong));
    }

    #[test]
    fn ordinary_names_are_kept_verbatim() {
        for good in ["acme-web", "t_lack-auto-quit", "Checkout suite", "..hidden", "a..b", "Ünï"]
        {
            assert_eq!(ScopeName::new(good).unwrap().as_str(), good);
        }
    }

    #[test]
    fn the_write_rule_refuses_invisible_padded_and_encoded_names() {
        let bidi =
            ["live\u{202E}", "a\u{202A}b", "x\u{2066}y", "\u{2069}", "a\u{200B}b", "a\u{FEFF}"];
        for bad in bidi {
            let err = ScopeName::writable(bad).unwrap_err();
            assert!(matches!(err, ScopeError::Invisible { .. }), "{bad:?}: {err}");
            assert!(ScopeName::new(bad).is_ok(), "{bad:?} stays readable");
        }
        for bad in [" shop", "shop ", "\u{a0}shop", "shop\u{3000}"] {
            assert!(
                matches!(ScopeName::writable(bad), Err(ScopeError::OuterWhitespace(_))),
                "{bad:?}"
            );
        }
        for bad in ["%2e%2e%2f", "a%2Fb", "%5Cx", "x%2E", "%2e%2e%5c%2e%2e"] {
            assert!(
                matches!(ScopeName::writable(bad), Err(ScopeError::PercentEncoded(_))),
                "{bad:?}"
            );
        }
        for bad in ["../x", "a/b", "", "a\0b"] {
            assert!(ScopeName::writable(bad).is_err(), "{bad:?}");
        }
        for good in ["acme-web", "Checkout suite", "Ünï", "50%", "a%20b", "t_lack-auto-quit"] {
            assert_eq!(ScopeName::writable(good).unwrap().as_str(), good);
        }
        let msg = ScopeName::writable("evil\u{202E}").unwrap_err().to_string();
        assert!(msg.contains("U+202E"), "{msg}");
    }

    #[test]
    fn tiers_parse_from_folder_and_decision_words() {
        assert_eq!("product".parse::<Tier>().unwrap(), Tier::Products);
        assert_eq!("suites".parse::<Tier>().unwrap(), Tier::Suites);
        assert!("test ".parse::<Tier>().is_err());
    }
}
