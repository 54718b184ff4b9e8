//! The connection loop of `curator serve`: hyper HTTP/1 connections, each in a task of its own,
//! with timeouts on clients and a bounded shutdown.
//!
//! Why not `axum::serve`: it sets no timer, so hyper's header-read timeout never fires and a
//! client that sends half a request holds its connection (and a file descriptor) for ever; a
//! thousand such clients locked every other client out, a token in front of the API
//! notwithstanding (the token is read from the headers they never finish). Here a client must
//! finish a request's headers within [`Timeouts::client`] (30 s), which also closes idle
//! keep-alive connections after that long, and must not leave its body silent for as long. A
//! request that keeps sending (a large body at its own pace) or keeps reading (a long MCP
//! stream) is not limited.
//!
//! Shutdown: when `shutdown` resolves the listener is closed and every connection is asked to
//! finish the request it is serving and close. Connections still open after
//! [`Timeouts::shutdown_grace`] (10 s; a client that stopped sending its body or reading its
//! answer) are dropped. Store work already started is not: it runs on the blocking pool, which
//! the runtime waits for, so a write that has begun is finished and journaled before the
//! process exits.

use std::future::Future;
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::task::JoinSet;
use tower_http::timeout::RequestBodyTimeout;

/// How long the server waits on a client.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timeouts {
    /// For a request's headers (and on an idle keep-alive connection), and between two
    /// bytes of a request body.
    pub(crate) client: Duration,
    /// For connections to finish their requests once shutdown began.
    pub(crate) shutdown_grace: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts { client: Duration::from_secs(30), shutdown_grace: Duration::from_secs(10) }
    }
}

/// Serves `app` on `listener` until `shutdown` resolves, then drains the connections.
pub(crate) async fn serve(
    listener: TcpListener,
    app: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
    timeouts: Timeouts,
) -> std::io::Result<()> {
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let mut connections = JoinSet::new();
    let mut last_warning: Option<tokio::time::Instant> = None;
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => accepted,
        };
        // Finished connections are reaped as new ones come, so the set stays small.
        while connections.try_join_next().is_some() {}
        let stream = match accepted {
            Ok((stream, _)) => stream,
            // Out of file descriptors, a connection reset before it was accepted: the
            // listener is fine; a short pause lets descriptors free up.
            Err(e) => {
                // Once a second at most: out of descriptors, every accept fails until some free.
                if last_warning.is_none_or(|at| at.elapsed() >= Duration::from_secs(1)) {
                    tracing::warn!("accepting a connection failed: {e}");
                    last_warning = Some(tokio::time::Instant::now());
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let app = RequestBodyTimeout::new(app.clone(), timeouts.client);
        let service = TowerToHyperService::new(app);
        let mut stopped = stopped.clone();
        connections.spawn(async move {
            let connection = http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(timeouts.client)
                .serve_connection(TokioIo::new(stream), service)
                .with_upgrades();
            tokio::pin!(connection);
            tokio::select! {
                _ = connection.as_mut() => {}
                _ = stopped.changed() => {
                    connection.as_mut().graceful_shutdown();
                    let _ = connection.await;
                }
            }
        });
    }
    drop(listener);
    let _ = stop.send(true);
    let drained = async { while connections.join_next().await.is_some() {} };
    if tokio::time::timeout(timeouts.shutdown_grace, drained).await.is_err() {
        let grace = timeouts.shutdown_grace;
        tracing::warn!("dropping connections still open {grace:?} after the stop");
        connections.shutdown().await;
    }
    Ok(())
}
