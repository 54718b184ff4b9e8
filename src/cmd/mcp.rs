//! `curator mcp [--state-dir DIR] [--identity DIR]`: the MCP server on stdin/stdout over the
//! resolved memory root (issue 6 item 3; ARCHITECTURE "an agent that speaks MCP").
//!
//! stdout belongs to the protocol from the first byte, so this command prints nothing there
//! (diagnostics and tracing go to stderr, as everywhere in the binary). It serves until the
//! client closes stdin, then exits 0. The engine settings are the config's, exactly as
//! `curator serve` uses them ([`server_state`]), so a tool call and an API call over one root
//! behave the same.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context as _, Result};
use clap::Args;
use curator_core::config::QueryMode as ConfigQueryMode;
use curator_engine::breaker::BreakerConfig;
use curator_harness::{Harness, HarnessOptions};
use curator_server::mcp::{McpOptions, McpServer, serve_stdio};
use curator_server::{AppState, EngineSettings, ServerOptions};
use curator_store::index::QueryMode;

use crate::context::Context;

/// `curator mcp`.
#[derive(Debug, Args)]
pub(crate) struct McpArgs {
    /// Harness state directory the harness tools use when a call names no `state_dir`.
    #[arg(long, value_name = "DIR", alias = "harness-state")]
    pub(crate) state_dir: Option<PathBuf>,
    /// Cross-mission identity directory [default: $CURATOR_IDENTITY, else ~/.curator/identity].
    #[arg(long, value_name = "DIR", env = "CURATOR_IDENTITY")]
    pub(crate) identity: Option<PathBuf>,
    /// Let `review_pending` approve or reject proposed memory (without it, the tool is listed
    /// but refuses with review_not_allowed). Only for a person's MCP client: an agent must not
    /// approve its own proposals (the review gate of issue 18).
    #[arg(long)]
    pub(crate) allow_review: bool,
}

pub(crate) fn run(ctx: &Context, args: &McpArgs) -> Result<ExitCode> {
    let identity = crate::context::identity_dir(args.identity.as_deref())?;
    let harness = args
        .state_dir
        .as_ref()
        .map(|dir| Harness::open(dir, identity.clone(), HarnessOptions::default()));
    let state = server_state(ctx, harness)?;
    let options = McpOptions {
        allow_state_dir: true,
        identity_dir: Some(identity),
        allow_review: args.allow_review,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(serve_stdio(McpServer::new(state, options)))?;
    Ok(ExitCode::SUCCESS)
}

/// The server state over the context's root with the config's engine settings (shared by
/// `curator mcp` and `curator serve`).
pub(crate) fn server_state(ctx: &Context, harness: Option<Harness>) -> Result<AppState> {
    let (store, root) = ctx.shared_store()?;
    let options =
        ServerOptions { harness, engine: engine_settings(ctx), ..ServerOptions::default() };
    Ok(AppState::with_store(store, root, options))
}

/// The config's `minTrust`, `maxInjections`, `queryMode`, trust deltas, breaker and ablation
/// settings (agent-qa's defaults where the config has none).
pub(crate) fn engine_settings(ctx: &Context) -> EngineSettings {
    let m = &ctx.config.memory;
    EngineSettings {
        min_trust: m.min_trust,
        max_injections: m.max_injections,
        mode: match ctx.config.curator.query_mode {
            ConfigQueryMode::Terms => QueryMode::Terms,
            ConfigQueryMode::Phrase => QueryMode::Phrase,
        },
        deltas: super::curate::deltas(ctx),
        breaker: BreakerConfig {
            enabled: m.circuit_breaker_enabled,
            window_size: m.circuit_breaker_window_size,
            baseline_size: m.circuit_breaker_baseline_size,
            threshold: m.circuit_breaker_threshold,
        },
        ablation_enabled: m.ablation_enabled,
        unknown_keys: super::curate::unknown_keys(ctx),
        policy: ctx.config.curator.policy,
        review: ctx.config.curator.review,
        probation_rate: ctx.config.curator.probation_rate,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn context(yaml: &str) -> Context {
        let dir = std::env::temp_dir();
        let config = curator_core::config::Config::from_yaml_str(yaml, &dir).unwrap();
        Context { root: dir, config, json: false, store: crate::context::StoreChoice::Files }
    }

    #[test]
    fn engine_settings_follow_the_config_and_default_to_agent_qa() {
        let defaults = engine_settings(&context(""));
        assert_eq!((defaults.min_trust, defaults.max_injections), (0.3, 3));
        assert_eq!(defaults.mode, QueryMode::Terms);
        assert!(defaults.ablation_enabled && defaults.breaker.enabled);
        let yaml = "services:\n  memory:\n    minTrust: 0.6\n    maxInjections: 5\n    ablationEnabled: false\ncurator:\n  queryMode: phrase\n";
        let set = engine_settings(&context(yaml));
        assert_eq!((set.min_trust, set.max_injections), (0.6, 5));
        assert_eq!(set.mode, QueryMode::Phrase);
        assert!(!set.ablation_enabled);
    }
}
