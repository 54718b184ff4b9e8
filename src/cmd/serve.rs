//! `curator serve [--listen ADDR] [--token-env VAR] [--state-dir DIR]`: the JSON API, the web
//! UI and MCP over HTTP in one process (issue 6 item 1).
//!
//! Binds 127.0.0.1:7878 unless told otherwise and refuses an address that is not loopback unless
//! a bearer token is configured; the token is read from the environment variable named by
//! `--token-env`, never from the command line, where other users of the machine could read it
//! in the process list. It serves until SIGINT or SIGTERM, then finishes the requests in flight
//! (a write that has started is completed and journaled) and exits 0. The engine settings are
//! the config's, shared with `curator mcp`. With a file store it also answers fresh `curator
//! query` processes of the root over `<root>/.curator/query.sock` (curator-engine's
//! `query_socket`), from its inotify-fresh index. Every HTTP request must name the listen
//! address, `localhost` or a name of `curator.serve.allowedHosts` as its `Host` (DNS rebinding
//! guard).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context as _, Result, bail};
use clap::Args;
use curator_engine::query_socket::{QueryListener, socket_path};
use curator_harness::{Harness, HarnessOptions};
use curator_server::{AppState, Server, ServerOptions, shutdown_signal};

use crate::context::{Context, StoreChoice};

/// `curator serve`.
#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    /// Address to listen on; a non-loopback address needs a token (--token-env). Requests must
    /// name this address, localhost or a name listed in the config's
    /// `curator.serve.allowedHosts` as their Host.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:7878")]
    pub(crate) listen: SocketAddr,
    /// Environment variable holding the bearer token every request must then carry
    /// (`Authorization: Bearer <token>`).
    #[arg(long, value_name = "VAR")]
    pub(crate) token_env: Option<String>,
    /// Harness state directory to show in the UI and serve under /api/v1/harness.
    #[arg(long, value_name = "DIR", alias = "harness-state")]
    pub(crate) state_dir: Option<PathBuf>,
    /// Cross-mission identity directory [default: $CURATOR_IDENTITY, else ~/.curator/identity].
    #[arg(long, value_name = "DIR", env = "CURATOR_IDENTITY")]
    pub(crate) identity: Option<PathBuf>,
    /// Let /mcp approve or reject proposed memory (`review_pending`). Off by default so that an
    /// agent connected to /mcp cannot approve its own proposals; the UI and the API review
    /// either way.
    #[arg(long)]
    pub(crate) mcp_review: bool,
    /// Largest request body in bytes (413 above it). The default takes any run record the CLI
    /// and MCP over stdio take.
    #[arg(long, value_name = "BYTES", default_value_t = curator_server::DEFAULT_BODY_LIMIT,
          value_parser = positive_bytes)]
    pub(crate) max_body: usize,
}

fn positive_bytes(raw: &str) -> Result<usize, String> {
    match raw.parse::<usize>() {
        Ok(0) => Err("must be at least 1".to_owned()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

/// The token named by `--token-env`, which must be set and non-empty.
fn token(var: Option<&str>) -> Result<Option<String>> {
    let Some(var) = var else { return Ok(None) };
    match std::env::var(var) {
        Ok(value) if !value.trim().is_empty() => Ok(Some(value.trim().to_owned())),
        Ok(_) => bail!("--token-env {var}: the variable is empty"),
        Err(_) => bail!("--token-env {var}: the variable is not set (or not UTF-8)"),
    }
}

/// The server state: the shared engine settings plus this command's token and harness; and, for
/// a file store, the listener that answers fresh `curator query` processes of this root.
fn state(ctx: &Context, args: &ServeArgs) -> Result<(AppState, Option<QueryListener>)> {
    let harness = match &args.state_dir {
        Some(dir) => {
            let identity = crate::context::identity_dir(args.identity.as_deref())?;
            Some(Harness::open(dir, identity, HarnessOptions::default()))
        }
        None => None,
    };
    let token = token(args.token_env.as_deref())?;
    let (store, root) = ctx.shared_store()?;
    let options = ServerOptions {
        token,
        harness,
        engine: super::mcp::engine_settings(ctx),
        allowed_hosts: ctx.config.curator.serve.allowed_hosts.clone(),
        mcp_review: args.mcp_review,
        body_limit: args.max_body,
    };
    // The socket is a fast path for fresh `curator query` processes, which answer by
    // themselves without it: a socket that cannot be made (a folder in its place, a root the
    // server cannot write) is a warning, not a reason not to serve.
    let listener = match ctx.store {
        StoreChoice::Files => match QueryListener::start(&root, Arc::clone(&store)) {
            Ok(listener) => listener,
            Err(e) => {
                crate::output::note!(
                    "warning: cannot listen on {} ({e}); fresh `curator query` processes will \
                     answer by themselves",
                    socket_path(&root).display()
                );
                None
            }
        },
        StoreChoice::Postgres(_) => None,
    };
    Ok((AppState::with_store(store, root, options), listener))
}

pub(crate) fn run(ctx: &Context, args: &ServeArgs) -> Result<ExitCode> {
    let (state, listener) = state(ctx, args)?;
    let store = ctx.describe_store();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async {
        let server = Server::bind(args.listen, state).await?;
        let addr = server.local_addr()?;
        // Before the lines that say the server is up, so a SIGTERM right after them is handled.
        let stop = shutdown_signal();
        crate::output::note!("curator serve: http://{addr}/ ({store}); Ctrl-C stops");
        if ctx.json {
            // One line a script reads to learn where the server listens (with --listen
            // 127.0.0.1:0 the port is the kernel's choice); stdout is flushed at its newline.
            let started = serde_json::json!({
                "url": format!("http://{addr}/"),
                "store": store,
                "query_socket": listener.as_ref().map(|l| l.path().display().to_string()),
            });
            // A reader gone already is no reason not to serve.
            let _ = crate::output::print_text(&format!("{started}\n"));
        }
        match &listener {
            Some(l) => {
                crate::output::note!(
                    "curator serve: answering `curator query` on {}",
                    l.path().display()
                )
            }
            None if ctx.store == StoreChoice::Files => crate::output::note!(
                "curator serve: another server answers `curator query` for this root (or its \
                 socket path is too long)"
            ),
            None => {}
        }
        if ctx.store == StoreChoice::Files
            && std::fs::symlink_metadata(&ctx.root).is_ok_and(|m| m.file_type().is_symlink())
        {
            // The store and its watches hold the folder the link named at start; a deploy that
            // re-points the link is not followed until a restart (a fresh `curator query`
            // follows it at once), so say so rather than serve the old folder unannounced.
            let target = std::fs::canonicalize(&ctx.root).unwrap_or_else(|_| ctx.root.clone());
            crate::output::note!(
                "curator serve: the memory root {} is a symlink to {}; this server serves {} \
                 until it restarts, even if the link is re-pointed",
                ctx.root.display(),
                target.display(),
                target.display()
            );
        }
        server.run(stop).await
    })?;
    // Dropping the runtime waits for blocking store work still running, so no write is cut.
    drop(runtime);
    drop(listener);
    crate::output::note!("curator serve: stopped");
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_comes_from_a_set_non_empty_variable() {
        assert_eq!(token(None).unwrap(), None);
        let err = token(Some("CURATOR_TEST_TOKEN_THAT_IS_NOT_SET")).unwrap_err();
        assert!(err.to_string().contains("not set"), "{err}");
        // PATH is set in every test environment and is not empty.
        assert!(token(Some("PATH")).unwrap().is_some());
    }
}
