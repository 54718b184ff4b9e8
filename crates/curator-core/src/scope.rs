//! Tiers and scope names: where an observation lives (agent-qa-memory §1.1, §1.8).
//!
//! agent-qa's guards let `..`, `/` and the empty string through in places (§1.8, §11.8); a scope
//! name here is checked once, when it is made, and every path built from it stays one folder
//! below its tier folder.

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
            other => Err(ScopeError::UnknownTier(other.to_owned())),
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
        if name == "." || name == ".." {
            return Err(ScopeError::DotComponent(name));
        }
        if name.contains(['/', '\\']) {
            return Err(ScopeError::Separator(name));
        }
        if name.chars().any(char::is_control) {
            return Err(ScopeError::ControlChar(name));
        }
        if name.len() > Self::MAX_LEN {
            return Err(ScopeError::TooLong);
        }
        Ok(ScopeName(name))
    }

    /// The folder name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
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
    fn tiers_parse_from_folder_and_decision_words() {
        assert_eq!("product".parse::<Tier>().unwrap(), Tier::Products);
        assert_eq!("suites".parse::<Tier>().unwrap(), Tier::Suites);
        assert!("test ".parse::<Tier>().is_err());
    }
}
