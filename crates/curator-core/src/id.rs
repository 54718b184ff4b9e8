//! Observation ids (agent-qa-memory §1.7).
//!
//! STUB: shapes and signatures are fixed; the helper owning ids fills in the word list and the
//! generator.

use std::fmt;

/// The shape of a valid observation id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdShape {
    /// `obs_` + 10 words: what agent-qa and curator write.
    Canonical,
    /// `obs_` + 6 words: readable; curator may rewrite under the same id (agent-qa cannot).
    Legacy,
}

/// Why a string is not an observation id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "Observation ID must be obs_ followed by either 10 canonical words or a legacy 6-word body (got {0:?})"
)]
pub struct IdError(pub String);

/// A validated observation id (canonical or legacy shape).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObservationId(String);

impl ObservationId {
    /// Validates the shape (§1.7 regexes); no word-list membership check, as agent-qa.
    pub fn parse(s: &str) -> Result<Self, IdError> {
        let _ = s;
        unimplemented!("id parsing")
    }

    /// Which shape this id has.
    pub fn shape(&self) -> IdShape {
        unimplemented!("id shape")
    }

    /// A fresh canonical id: 10 words from the 4,096-word list, chosen with a CSPRNG, unbiased.
    pub fn generate() -> Self {
        unimplemented!("id generation")
    }

    /// The id text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ObservationId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
