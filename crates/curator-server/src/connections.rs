//! The connection loop of `curator serve`: hyper HTTP/1 connections, each in a task of its own,
//! with a header-read timeout.
//!
//! Why not `axum::serve`: it sets no timer, so hyper's header-read timeout never fires and a
//! client that sends half a request holds its connection (and a file descriptor) for ever; a
//! thousand such clients locked every other client out, a token in front of the API
//! notwithstanding (the token is read from the headers they never finish). Here a client must
//! finish a request's headers within [`HEADER_READ_TIMEOUT`], which also closes idle keep-alive
//! connections after that long; a request whose headers arrived is not limited (a long MCP
//! stream, a large body at its own pace).
//!
//! Shutdown: when `shutdown` resolves the listener is closed, every connection is asked to
//! finish the request it is serving and close, and the loop returns once all have.

use std::future::Future;
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::task::JoinSet;

/// How long a client has to send a request's headers (and how long an idle keep-alive
/// connection stays open).
pub(crate) const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// Serves `app` on `listener` until `shutdown` resolves, then drains the connections.
pub(crate) async fn serve(
    listener: TcpListener,
    app: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
    header_timeout: Duration,
) -> std::io::Result<()> {
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let mut connections = JoinSet::new();
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
                tracing::warn!("accepting a connection failed: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let service = TowerToHyperService::new(app.clone());
        let mut stopped = stopped.clone();
        connections.spawn(async move {
            let connection = http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(header_timeout)
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
    while connections.join_next().await.is_some() {}
    Ok(())
}
