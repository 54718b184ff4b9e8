//! MCP: the tools an agent needs, over stdio (`curator mcp`) and streamable HTTP (`/mcp` on
//! `curator serve`) (issue 6 item 3; ARCHITECTURE "Who uses it": an agent that speaks MCP).
//!
//! rmcp (pinned to `=3.9.0`, whose API changes between releases) is named only inside this
//! module: [`tools`] is plain Rust over [`AppState`], [`catalog`] describes the tools and turns
//! results and errors into MCP results, and this file implements rmcp's `ServerHandler` and the
//! two transports. The server introduces itself as `curator` with the crate's version.
//!
//! HTTP mode is **stateless**: every POST to `/mcp` is answered on its own with a JSON body
//! (no `Mcp-Session-Id`, no SSE stream), because the tools keep nothing between calls — run
//! sessions live in `<root>/.curator/runs/`, as for the CLI and the JSON API — so there is no
//! server memory a session could protect, and a restart of `curator serve` loses nothing. The
//! `/mcp` route sits behind the server's own guards (the `Host` guard against DNS rebinding,
//! bearer token, body limit, same-origin writes), which apply to every route alike; rmcp's own
//! Host list is turned off so that one rule, with the configured names, decides for all.
//!
//! Tool work touches files and takes the store lock, so it runs on tokio's blocking pool: a
//! write that has started finishes even when the client goes away.

mod catalog;
mod harness;
mod journal;
mod schema;
mod tools;

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};

pub use tools::McpOptions;

use crate::error::ApiError;
use crate::state::AppState;

/// The name the server gives in `initialize` (`serverInfo.name`).
pub const SERVER_NAME: &str = "curator";

/// The `instructions` of `initialize`: what the tools are for and in which order to use them.
pub const INSTRUCTIONS: &str = "curator is trust-scored memory for agent runs (agent-qa's \
memory directory). Before each step call query_memory with the product, test and step_text; \
prepend its `formatted` <memory-context> block (if any) to the step prompt, and pass run_id and \
step_index so the injection is recorded. When the run ends call record_run with the run record: \
observations that helped a passed run gain trust, those the evidence blames for a failure lose \
it. Use propose_decisions to propose a fact worth remembering (it waits in the review queue \
until approved) or to confirm/deprecate one explicitly; list_observations, get_observation, \
observation_history and list_pending read memory without changing it; undo_run reverts one \
run's changes. For a coding-agent harness, harness_append logs one observation line, \
harness_issue files an issue for triage, harness_context gives a role's prompt preamble, \
harness_curate runs a curator pass and harness_trace says where an entry went.";

/// The MCP server over one memory root: cheap to clone (the state is an `Arc`).
#[derive(Debug, Clone)]
pub struct McpServer {
    ctx: tools::ToolContext,
}

impl McpServer {
    /// A server over `state` (the same state `curator serve` builds).
    pub fn new(state: AppState, options: McpOptions) -> Self {
        McpServer { ctx: tools::ToolContext { state, options } }
    }

    /// The names of the tools served, in `tools/list` order.
    pub fn tool_names() -> &'static [&'static str] {
        &catalog::TOOL_NAMES
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        let implementation = Implementation::new(SERVER_NAME, env!("CARGO_PKG_VERSION"))
            .with_title("curator memory")
            .with_description(
                "A memory engine for autonomous agent harnesses: curated, trust-scored memory.",
            );
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(implementation)
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(catalog::tools()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        catalog::tools().into_iter().find(|t| t.name == name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        if !catalog::TOOL_NAMES.contains(&name.as_str()) {
            // Not a call a tool could explain: the client asked for something that is not here.
            return Err(ErrorData::invalid_params(
                format!("unknown tool {name:?}; the tools are {}", catalog::TOOL_NAMES.join(", ")),
                None,
            ));
        }
        let arguments = request.arguments.unwrap_or_default();
        let ctx = self.ctx.clone();
        let worker = tokio::task::spawn_blocking(move || catalog::call(&ctx, &name, arguments));
        let result = match worker.await {
            Ok(Some(result)) => result,
            Ok(None) => return Err(ErrorData::invalid_params("unknown tool", None)),
            Err(join) => catalog::tool_error(&ApiError::internal(format!(
                "the tool's worker failed: {join}"
            ))),
        };
        Ok(result.into())
    }
}

/// Why the stdio server stopped with an error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpServeError {
    /// The client's `initialize` never completed (stdin closed, bad first message).
    #[error("MCP session did not start: {0}")]
    Initialize(String),
    /// The session's task failed.
    #[error("MCP session failed: {0}")]
    Session(String),
}

/// Serves MCP on this process's stdin/stdout until the client closes stdin. Nothing else may
/// write to stdout meanwhile (logs go to stderr).
pub async fn serve_stdio(server: McpServer) -> Result<(), McpServeError> {
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| McpServeError::Initialize(e.to_string()))?;
    running.waiting().await.map_err(|e| McpServeError::Session(e.to_string()))?;
    Ok(())
}

/// The tower service mounted at `/mcp` (stateless streamable HTTP, JSON responses).
pub(crate) fn http_service(
    state: &AppState,
) -> StreamableHttpService<McpServer, NeverSessionManager> {
    let options = McpOptions { allow_review: state.mcp_review(), ..McpOptions::default() };
    let server = McpServer::new(state.clone(), options);
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None)
        .with_max_request_body_bytes(state.body_limit())
        .disable_allowed_hosts();
    StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(NeverSessionManager::default()),
        config,
    )
}
