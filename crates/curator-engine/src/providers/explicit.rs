//! The explicit provider: decisions somebody else made (a harness, a person, an agent over MCP).
//!
//! It answers with exactly what it was given; validation of the document already happened in
//! [`crate::curate::Decisions::from_json`], and id checks happen when the decisions are applied.

use crate::curate::Decisions;

use super::{CuratorInput, DecisionProvider, ProviderAnswer, ProviderError};

/// Returns fixed decisions.
#[derive(Debug, Clone)]
pub struct ExplicitProvider {
    decisions: Decisions,
}

impl ExplicitProvider {
    /// A provider answering `decisions` for any run.
    pub fn new(decisions: Decisions) -> Self {
        ExplicitProvider { decisions }
    }
}

impl DecisionProvider for ExplicitProvider {
    fn name(&self) -> &'static str {
        "explicit"
    }

    fn decide(&self, _input: &CuratorInput<'_>) -> Result<ProviderAnswer, ProviderError> {
        Ok(ProviderAnswer { decisions: self.decisions.decisions.clone(), token_usage: None })
    }
}
