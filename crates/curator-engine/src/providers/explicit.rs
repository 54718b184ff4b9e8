//! The explicit provider: decisions somebody else made (a harness, a person, an agent over MCP).
//!
//! It answers with exactly what it was given; validation of the document already happened in
//! [`crate::curate::Decisions::from_json`], and id checks happen when the decisions are applied.
//! Decisions of a person or a harness ([`ExplicitProvider::new`]) apply directly, as in
//! agent-qa; those an agent proposes on its own ([`ExplicitProvider::proposal`], MCP) add to
//! the review queue like any other proposal (issue 18).

use crate::curate::Decisions;

use super::{CuratorInput, DecisionProvider, ProviderAnswer, ProviderError};

/// Returns fixed decisions.
#[derive(Debug, Clone)]
pub struct ExplicitProvider {
    decisions: Decisions,
    proposed: bool,
}

impl ExplicitProvider {
    /// A provider answering `decisions` that a person or a harness made explicitly.
    pub fn new(decisions: Decisions) -> Self {
        ExplicitProvider { decisions, proposed: false }
    }

    /// A provider answering `decisions` an agent proposed on its own (its adds wait for
    /// review).
    pub fn proposal(decisions: Decisions) -> Self {
        ExplicitProvider { decisions, proposed: true }
    }
}

impl DecisionProvider for ExplicitProvider {
    fn name(&self) -> &'static str {
        "explicit"
    }

    fn decide(&self, _input: &CuratorInput<'_>) -> Result<ProviderAnswer, ProviderError> {
        Ok(ProviderAnswer { decisions: self.decisions.decisions.clone(), token_usage: None })
    }

    fn proposes(&self) -> bool {
        self.proposed
    }
}
