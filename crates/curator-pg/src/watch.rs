//! A database that stops answering: the store keeps a handle on every connection it opened, so
//! a call that waited too long can close them.
//!
//! tokio-postgres bounds the TCP connect and nothing after it. A server that keeps its
//! connections but never answers (a stopped or wedged process, a proxy that swallows replies)
//! holds every call on them for ever: its kernel still acknowledges every byte, so neither TCP
//! keepalives nor `tcp_user_timeout` notice. What ends such a call is closing its connection:
//! the driver then fails every request waiting on it ("connection closed"), which the store
//! reports as unavailable (exit 75, HTTP 503), and the pool replaces a closed connection on its
//! next checkout. A stalled call does not say which connection it waits on, so the store closes
//! all of its own: a server that left one request unanswered is not trusted with the others.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::task::{AbortHandle, JoinHandle};
use tokio_postgres::{Client, Config, NoTls};

/// The connection tasks of one store.
#[derive(Debug, Default, Clone)]
pub(crate) struct Connections(Arc<Mutex<Vec<AbortHandle>>>);

impl Connections {
    /// Closes every connection still open; returns how many there were.
    pub(crate) fn close_all(&self) -> usize {
        let mut tasks = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let open = tasks.iter().filter(|t| !t.is_finished()).count();
        for task in tasks.drain(..) {
            task.abort();
        }
        open
    }

    fn keep(&self, task: AbortHandle) {
        let mut tasks = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        tasks.retain(|t| !t.is_finished());
        tasks.push(task);
    }
}

/// deadpool's connect, with each connection's task kept in [`Connections`].
pub(crate) struct WatchedConnect(pub(crate) Connections);

type Connected = Result<(Client, JoinHandle<()>), tokio_postgres::Error>;

impl deadpool_postgres::Connect for WatchedConnect {
    fn connect(&self, config: &Config) -> Pin<Box<dyn Future<Output = Connected> + Send + '_>> {
        let config = config.clone();
        Box::pin(async move {
            let (client, connection) = config.connect(NoTls).await?;
            let task = tokio::spawn(async move {
                if let Err(e) = connection.await {
                    tracing::debug!("PostgreSQL connection ended: {e}");
                }
            });
            self.0.keep(task.abort_handle());
            Ok((client, task))
        })
    }
}
