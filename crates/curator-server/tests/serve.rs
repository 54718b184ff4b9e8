//! The real server on a socket: bind 127.0.0.1:0, answer over TCP, refuse a public address
//! without a token, and shut down gracefully, finishing a write that is waiting for the lock.

mod common;

use std::net::SocketAddr;
use std::time::Duration;

use common::*;
use curator_server::{ServeError, Server, ServerOptions};
use curator_store::{FileStore, FileStoreOptions, LockOptions, acquire_lock};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// One HTTP/1.1 request over a fresh connection; returns the status code and the body.
async fn http(addr: SocketAddr, method: &str, path: &str) -> (u16, String) {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    let status = response[9..12].parse().unwrap();
    let body = response.split_once("\r\n\r\n").map(|(_, b)| b.to_owned()).unwrap_or_default();
    (status, body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serves_on_a_socket_and_finishes_an_inflight_write_on_shutdown() {
    let f = Fixture::new();
    let store = FileStore::open(
        &f.root,
        FileStoreOptions { lock_timeout: Duration::from_secs(20), ..FileStoreOptions::default() },
    )
    .unwrap();
    let state = curator_server::AppState::new(store, ServerOptions::default());
    let server = Server::bind("127.0.0.1:0".parse().unwrap(), state).await.unwrap();
    let addr = server.local_addr().unwrap();
    assert_ne!(addr.port(), 0);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(server.run(async {
        let _ = stopped.await;
    }));

    let (status, body) = http(addr, "GET", "/api/v1/observations?limit=1").await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("\"total\":19"), "{body}");

    // Another writer holds the lock, so the confirm below waits inside the server.
    let lock_path = f.root.join(".curator.lock");
    let guard = acquire_lock(&lock_path, &LockOptions { timeout: Duration::from_secs(5) }).unwrap();
    let confirm_path = format!("/api/v1/observations/{CART_BADGE}/confirm");
    let confirm = tokio::spawn(async move { http(addr, "POST", &confirm_path).await });
    tokio::time::sleep(Duration::from_millis(500)).await;
    stop.send(()).unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!running.is_finished(), "the server waits for the request in flight");
    guard.release().unwrap();

    let (status, body) =
        tokio::time::timeout(Duration::from_secs(20), confirm).await.unwrap().unwrap();
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("\"trust\":0.85"), "{body}");
    tokio::time::timeout(Duration::from_secs(20), running).await.unwrap().unwrap().unwrap();
    let text = std::fs::read_to_string(f.product_file(CART_BADGE)).unwrap();
    assert!(text.contains("trust: 0.85"), "the write landed before exit: {text}");
    let journal = std::fs::read_to_string(f.root.join(".curator/journal.jsonl")).unwrap();
    assert!(journal.contains("\"action\":\"confirm\""), "and was journaled: {journal}");
    assert!(tokio::net::TcpStream::connect(addr).await.is_err(), "the port is closed");
}

#[tokio::test]
async fn a_public_address_needs_a_token() {
    let f = Fixture::new();
    let err = Server::bind("0.0.0.0:0".parse().unwrap(), f.state(ServerOptions::default()))
        .await
        .unwrap_err();
    assert!(matches!(err, ServeError::NeedsToken { .. }), "{err}");
    assert!(err.to_string().contains("--token-env"), "{err}");
    let with_token = ServerOptions { token: Some("t0ken".into()), ..ServerOptions::default() };
    curator_server::check_listen("0.0.0.0:7878".parse().unwrap(), &f.state(with_token)).unwrap();
    curator_server::check_listen("[::1]:7878".parse().unwrap(), &f.state(ServerOptions::default()))
        .unwrap();
}

/// A server of the fixture's root with default options, bound to a free loopback port.
async fn bound(f: &Fixture) -> Server {
    Server::bind("127.0.0.1:0".parse().unwrap(), f.state(ServerOptions::default())).await.unwrap()
}

/// A client that sends half a request is disconnected once the header-read timeout passes,
/// so such clients cannot hold every connection the server has; others are served meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_half_sent_request_is_dropped_after_the_header_timeout() {
    let f = Fixture::new();
    let server = bound(&f).await.client_timeout(Duration::from_millis(300));
    let addr = server.local_addr().unwrap();
    let running = tokio::spawn(server.run(std::future::pending()));
    let mut slow = tokio::net::TcpStream::connect(addr).await.unwrap();
    slow.write_all(format!("GET /api/v1/observations HTTP/1.1\r\nHost: {addr}\r\n").as_bytes())
        .await
        .unwrap();
    let (status, _) = http(addr, "GET", "/api/v1/observations?limit=1").await;
    assert_eq!(status, 200, "another client is served while one dawdles");
    let mut rest = Vec::new();
    let closed = tokio::time::timeout(Duration::from_secs(5), slow.read_to_end(&mut rest)).await;
    assert!(closed.is_ok(), "the half-sent request's connection was closed by the server");
    running.abort();
}

/// A client that stops sending its body is answered (and its connection let go) once the body
/// has been silent for the client timeout; one that keeps sending slowly is not cut.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_body_that_stops_is_dropped_and_a_slow_one_is_not() {
    let f = Fixture::new();
    let server = bound(&f).await.client_timeout(Duration::from_millis(400));
    let addr = server.local_addr().unwrap();
    let running = tokio::spawn(server.run(std::future::pending()));
    let head = |len: usize| {
        format!(
            "POST /api/v1/query HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {len}\r\nConnection: close\r\n\r\n"
        )
    };
    let mut stalled = tokio::net::TcpStream::connect(addr).await.unwrap();
    stalled.write_all(format!("{}{{\"product\":", head(100)).as_bytes()).await.unwrap();
    let mut answer = String::new();
    let read = tokio::time::timeout(Duration::from_secs(5), stalled.read_to_string(&mut answer));
    assert!(read.await.is_ok(), "the stalled body's request ended");
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    // A body sent a few bytes at a time, each within the timeout, is read whole.
    let body = json!({"product": "acme-shop", "test": "t", "step_text": "Open the order history"})
        .to_string();
    let mut slow = tokio::net::TcpStream::connect(addr).await.unwrap();
    slow.write_all(head(body.len()).as_bytes()).await.unwrap();
    for chunk in body.as_bytes().chunks(body.len() / 4 + 1) {
        tokio::time::sleep(Duration::from_millis(200)).await;
        slow.write_all(chunk).await.unwrap();
    }
    let mut answer = String::new();
    slow.read_to_string(&mut answer).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    running.abort();
}

/// Shutdown does not wait for ever on a client that stopped reading or sending: after the
/// grace period its connection is dropped and the server returns.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_drops_a_stuck_connection_after_the_grace_period() {
    let f = Fixture::new();
    let server = bound(&f).await.shutdown_grace(Duration::from_millis(300));
    let addr = server.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(server.run(async {
        let _ = stopped.await;
    }));
    // Headers sent, the body (of its announced length) never comes.
    let mut stuck = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST /api/v1/query HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{"
    );
    stuck.write_all(head.as_bytes()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    stop.send(()).unwrap();
    let returned = tokio::time::timeout(Duration::from_secs(10), running).await;
    assert!(returned.is_ok(), "the server returned though a client was stuck");
    drop(stuck);
}
