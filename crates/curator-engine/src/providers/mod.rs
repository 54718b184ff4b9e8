//! Decision providers: who decides what a passed run teaches (ARCHITECTURE.md, "Decision
//! providers").
//!
//! A provider reads the run and the observations of the run's product, suite and test, and
//! answers with agent-qa's decisions (§5.3). It never touches the store: the curator applies the
//! answer afterwards under the lock, re-validating every id, so a slow provider (an LLM) never
//! holds the lock and a wrong one cannot reach outside the run's scopes.
//!
//! - [`ExplicitProvider`]: decisions given by the harness, a person or an agent (file, stdin,
//!   API, MCP).
//! - [`RulesProvider`]: the embedded default, no LLM: confirm what helped, add what the agent
//!   flagged with `MEMO:`.
//! - [`LlmProvider`]: an OpenAI-compatible chat-completions endpoint with structured output.

mod explicit;
mod llm;
mod prompt;
mod rules;

use curator_store::StoredObservation;

use crate::curate::{Decision, RunRecord, TokenUsage};

pub use explicit::ExplicitProvider;
pub use llm::{LlmConfig, LlmProvider};
pub use prompt::{CuratorPrompt, build_prompt};
pub use rules::RulesProvider;

/// What a provider sees.
#[derive(Debug, Clone, Copy)]
pub struct CuratorInput<'a> {
    /// The run, with injected ids filled in.
    pub record: &'a RunRecord,
    /// Every served observation of the run's product, suite and test, in tier order.
    pub existing: &'a [StoredObservation],
}

/// A provider's answer.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ProviderAnswer {
    pub decisions: Vec<Decision>,
    /// Tokens spent, when the provider is an LLM that reports them.
    pub token_usage: Option<TokenUsage>,
}

/// Why a provider gave no answer; the run changes nothing (agent-qa returns the log at once).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProviderError {
    /// The call failed or the answer broke the schema (agent-qa: `LLM call failed: <msg>`).
    #[error("LLM call failed: {0}")]
    CallFailed(String),
    /// The model answered with nothing (agent-qa: `LLM returned empty response`).
    #[error("LLM returned empty response")]
    Empty,
    /// The provider is not configured (missing model, key variable unset...).
    #[error("LLM provider misconfigured: {0}")]
    Config(String),
}

/// Decides the A.U.D.N. decisions of one passed run.
pub trait DecisionProvider: std::fmt::Debug {
    /// A short name for the MemoryLog (`explicit`, `rules`, `llm`).
    fn name(&self) -> &'static str;

    /// The decisions for `input`.
    fn decide(&self, input: &CuratorInput<'_>) -> Result<ProviderAnswer, ProviderError>;

    /// Whether this provider's adds are *proposals* of an agent or a model, which wait in the
    /// review queue unless `curator.review` is off (issue 18), rather than decisions a person
    /// or a harness made explicitly. Proposals unless a provider says otherwise.
    fn proposes(&self) -> bool {
        true
    }
}
