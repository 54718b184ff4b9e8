//! Binding and running the server (issue 6 item 1: loopback by default, a token to go further,
//! graceful shutdown).
//!
//! Refusal rule: an address that is not loopback is refused unless a bearer token is configured,
//! because without one anybody who can reach the port could rewrite memory. Shutdown: when the
//! `shutdown` future resolves the listener stops accepting, and the server waits for the
//! requests in flight; their store work runs on tokio's blocking pool, which the runtime also
//! waits for, so a write that has started is finished and journaled before the process exits.

use std::future::Future;
use std::net::SocketAddr;

use crate::state::AppState;

/// Why the server could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// A non-loopback address without a token.
    #[error(
        "refusing to listen on {addr}: it is not a loopback address and no bearer token is configured (use --token-env VAR, or listen on 127.0.0.1)"
    )]
    NeedsToken { addr: SocketAddr },
    /// The address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind { addr: SocketAddr, source: std::io::Error },
    /// Accepting or serving failed.
    #[error("server error: {0}")]
    Io(#[from] std::io::Error),
}

/// Checks the loopback-or-token rule.
pub fn check_listen(addr: SocketAddr, state: &AppState) -> Result<(), ServeError> {
    if addr.ip().is_loopback() || state.token().is_some() {
        Ok(())
    } else {
        Err(ServeError::NeedsToken { addr })
    }
}

/// A bound server, not yet serving: [`Server::local_addr`] tells the port when binding `:0`.
#[derive(Debug)]
pub struct Server {
    listener: tokio::net::TcpListener,
    state: AppState,
    timeouts: crate::connections::Timeouts,
}

impl Server {
    /// Checks the address rule and binds.
    pub async fn bind(addr: SocketAddr, state: AppState) -> Result<Server, ServeError> {
        check_listen(addr, &state)?;
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|source| ServeError::Bind { addr, source })?;
        Ok(Server { listener, state, timeouts: Default::default() })
    }

    /// How long the server waits on a client (30 s by default): for a request's headers, on
    /// an idle keep-alive connection, and between two bytes of a request body.
    pub fn client_timeout(mut self, timeout: std::time::Duration) -> Server {
        self.timeouts.client = timeout;
        self
    }

    /// How long shutdown waits for connections to finish their requests (10 s by default)
    /// before it drops them; store work already started is finished either way.
    pub fn shutdown_grace(mut self, grace: std::time::Duration) -> Server {
        self.timeouts.shutdown_grace = grace;
        self
    }

    /// The address actually bound.
    pub fn local_addr(&self) -> Result<SocketAddr, ServeError> {
        Ok(self.listener.local_addr()?)
    }

    /// Serves until `shutdown` resolves, then finishes the requests in flight.
    pub async fn run(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), ServeError> {
        let listen = self.listener.local_addr()?;
        let app = crate::app_on(self.state, listen);
        crate::connections::serve(self.listener, app, shutdown, self.timeouts).await?;
        Ok(())
    }
}

/// Binds `listen` and serves until `shutdown` resolves.
pub async fn serve(
    listen: SocketAddr,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    Server::bind(listen, state).await?.run(shutdown).await
}

/// Resolves on SIGINT (Ctrl-C) or SIGTERM.
///
/// The handlers are installed by this call, not when the future is first polled: a caller that
/// says it is ready (a log line a supervisor or test waits for) after calling this cannot be hit
/// by a SIGTERM that the default action turns into an abrupt exit, cutting requests in flight.
/// Call it inside the tokio runtime.
pub fn shutdown_signal() -> impl Future<Output = ()> + Send + 'static {
    #[cfg(unix)]
    let listen = |kind: tokio::signal::unix::SignalKind, name: &'static str| {
        let stream = tokio::signal::unix::signal(kind);
        async move {
            match stream {
                Ok(mut s) => {
                    s.recv().await;
                }
                Err(e) => {
                    tracing::warn!("cannot listen for {name}: {e}");
                    std::future::pending::<()>().await;
                }
            }
        }
    };
    #[cfg(unix)]
    let (ctrl_c, term) = (
        listen(tokio::signal::unix::SignalKind::interrupt(), "Ctrl-C"),
        listen(tokio::signal::unix::SignalKind::terminate(), "SIGTERM"),
    );
    #[cfg(not(unix))]
    let (ctrl_c, term) = (
        async {
            if let Err(e) = tokio::signal::ctrl_c().await {
                tracing::warn!("cannot listen for Ctrl-C: {e}");
                std::future::pending::<()>().await;
            }
        },
        std::future::pending::<()>(),
    );
    async move {
        tokio::select! {
            () = ctrl_c => {},
            () = term => {},
        }
        tracing::info!("shutting down: finishing requests in flight");
    }
}
