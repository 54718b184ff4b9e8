//! A running `curator serve` answers fresh `curator query` processes over a unix socket
//! (issue 14 item 4).
//!
//! A fresh process has no index of its own in memory: before it can answer it must `stat` every
//! file of the step's folders to see what changed (~60 ms at 10,000 observations in one folder
//! on two cores). A server already holds an index kept fresh by inotify, so the process sends
//! it the step — every option already resolved from its own flags and config — and prints the
//! answer. The server runs exactly the engine call the process would have run
//! ([`query_in`] after the circuit breaker check), on the same files, so the answer is the
//! same either way.
//!
//! Invariants:
//!
//! * **One server per root.** `<root>/.curator/query.lock` is locked (`flock`, released by the
//!   kernel when the process dies) for the listener's whole life; only its holder binds
//!   `<root>/.curator/query.sock`, so a socket file found by a server that holds the lock is a
//!   dead server's leftover and is replaced.
//! * **Never a wrong or a foreign answer.** The client speaks only to a socket file its own user
//!   owns, served by a process of its own user (`SO_PEERCRED`), which answers for the same
//!   canonical root and was started from the same `curator` executable (so the same ranking);
//!   the server answers only its own user. Anything else — no socket, a dead server, another
//!   root, another build, a server error, a timeout, a malformed reply — makes the client answer
//!   by itself, as if no server ran, which gives every error its usual message and exit code.
//! * **Bounded.** One request line of at most [`MAX_REQUEST_BYTES`], read and write timeouts,
//!   at most [`MAX_CONNECTIONS`] connections in flight (the others are closed, and their
//!   clients answer by themselves).

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::MetadataExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use curator_core::{ScopeName, SnapshotEntry};
use curator_store::Store;
use curator_store::index::QueryMode;
use serde::{Deserialize, Serialize};

use crate::breaker::Breaker;
use crate::probation::ProbationOptions;
use crate::query::{QueryOptions, QueryOutcome, RunStep, query_in};
use crate::scopes::SuiteContext;

/// The socket, under the root's `.curator/` folder.
pub const SOCKET_FILE: &str = "query.sock";
/// Held (`flock`) by the one listener of a root.
const LOCK_FILE: &str = "query.lock";
/// Bumped whenever a request or reply field changes meaning.
const PROTOCOL: u32 = 1;
/// Largest request line a server reads (a step is at most 1 MiB, `curator query`'s limit).
const MAX_REQUEST_BYTES: u64 = 4 << 20;
/// Largest reply a client reads.
const MAX_REPLY_BYTES: u64 = 64 << 20;
/// How long a client waits for its answer before answering by itself. A query on a warm index
/// takes milliseconds; a refresh after a big change takes as long for the client as for the
/// server, so waiting longer gains nothing, while a server that hangs (stopped, deadlocked,
/// swapped out) must not hold every query of a test run for long. Answering by itself twice
/// is harmless: a step's run-session entry is replaced, not added.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(2);
/// How long a server waits for a request line or for the client to take the reply.
const SERVER_TIMEOUT: Duration = Duration::from_secs(5);
/// Connections answered at once; more are closed at once.
const MAX_CONNECTIONS: usize = 32;
/// `sun_path` holds 108 bytes with its terminating NUL on Linux.
const MAX_SOCKET_PATH: usize = 107;

/// The socket of `root`.
pub fn socket_path(root: &Path) -> PathBuf {
    root.join(".curator").join(SOCKET_FILE)
}

/// One step, as `curator query` resolved it from its flags and config.
#[derive(Debug, Serialize, Deserialize)]
struct Request {
    protocol: u32,
    /// The client's executable (see [`build_id`]).
    build: String,
    /// The client's canonical memory root.
    root: PathBuf,
    /// `None`: the name given could not be a folder and is skipped (see `warnings`).
    product: Option<String>,
    test: Option<String>,
    suite: Option<WireSuite>,
    text: String,
    min_trust: f64,
    max_injections: usize,
    phrase: bool,
    min_relevance: f64,
    run: Option<(String, u64)>,
    /// Probation injections for the run's step (issue 18), resolved from the client's config.
    #[serde(default)]
    probation: Option<ProbationOptions>,
    /// The circuit breaker to honour, when the client's config enables breakers.
    breaker: Option<String>,
    /// The client's deadline on the machine's monotonic clock (ns): past it, the client answers
    /// the step itself, so the server must not record the step any more.
    #[serde(default)]
    record_before_ns: Option<u64>,
    /// What the client skipped while resolving its options (returned with the answer).
    warnings: Vec<String>,
}

#[derive(Debug, Serialize, Deserialize)]
struct WireSuite {
    id: String,
    tests: Option<Vec<SnapshotEntry>>,
    position: Option<u64>,
}

/// The server's reply: an answer, or why it did not answer.
#[derive(Debug, Serialize, Deserialize)]
struct Reply {
    protocol: u32,
    root: PathBuf,
    #[serde(default)]
    answer: Option<Answer>,
    #[serde(default)]
    refused: Option<String>,
}

/// What the server found for the step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    pub outcome: QueryOutcome,
    /// The breaker named in the request is tripped, so nothing was injected.
    pub breaker_tripped: bool,
}

/// Why the client answers by itself (for its debug log).
#[derive(Debug, thiserror::Error)]
pub enum NoServer {
    #[error("no server socket at {0}")]
    Absent(PathBuf),
    #[error("the socket path {0} is too long for a unix socket")]
    PathTooLong(PathBuf),
    #[error("{0} is not owned by this user")]
    ForeignSocket(PathBuf),
    #[error("cannot reach the server: {0}")]
    Io(#[from] std::io::Error),
    #[error("the server refused: {0}")]
    Refused(String),
    #[error("the server's reply is malformed: {0}")]
    Malformed(String),
}

/// Identifies the running executable (device, inode, size, mtime): a server started from
/// another build could rank differently. `None` when it cannot be known, and then no socket is
/// used at all.
fn build_id() -> Option<String> {
    let exe = std::env::current_exe().ok()?;
    let m = std::fs::metadata(exe).ok()?;
    Some(format!(
        "{}:{}:{}:{}:{}.{}",
        env!("CARGO_PKG_VERSION"),
        m.dev(),
        m.ino(),
        m.size(),
        m.mtime(),
        m.mtime_nsec()
    ))
}

fn uid() -> u32 {
    rustix::process::getuid().as_raw()
}

fn peer_uid(stream: &UnixStream) -> std::io::Result<u32> {
    Ok(rustix::net::sockopt::socket_peercred(stream)?.uid.as_raw())
}

/// Connects to the server's socket, giving up after [`CLIENT_TIMEOUT`]: a server that is
/// stopped (Ctrl-Z) no longer accepts, and once its backlog is full a plain `connect` would
/// block the query for ever instead of letting it answer by itself.
fn connect(path: &Path) -> std::io::Result<UnixStream> {
    let socket = socket2::Socket::new(socket2::Domain::UNIX, socket2::Type::STREAM, None)?;
    socket.connect_timeout(&socket2::SockAddr::unix(path)?, CLIENT_TIMEOUT)?;
    Ok(socket.into())
}

/// Asks the server of `root`, if one runs, to answer the step; `breaker` is the circuit breaker
/// to honour (`None`: none, or breakers disabled).
pub fn ask(root: &Path, opts: &QueryOptions, breaker: Option<&str>) -> Result<Answer, NoServer> {
    let path = socket_path(root);
    let meta = std::fs::metadata(&path).map_err(|_| NoServer::Absent(path.clone()))?;
    if path.as_os_str().len() > MAX_SOCKET_PATH {
        return Err(NoServer::PathTooLong(path));
    }
    if meta.uid() != uid() {
        return Err(NoServer::ForeignSocket(path));
    }
    let build = build_id().ok_or_else(|| NoServer::Refused("unknown executable".into()))?;
    // Taken before any wait starts: this process answers by itself no sooner than this, so a
    // server that records the step only before it is never the last to record it.
    let deadline = crate::query::monotonic_now() + CLIENT_TIMEOUT;
    let root = std::fs::canonicalize(root)?;
    let stream = connect(&path)?;
    if peer_uid(&stream)? != uid() {
        return Err(NoServer::ForeignSocket(path));
    }
    stream.set_read_timeout(Some(CLIENT_TIMEOUT))?;
    stream.set_write_timeout(Some(CLIENT_TIMEOUT))?;
    let request = Request {
        protocol: PROTOCOL,
        build,
        root: root.clone(),
        product: opts.product.as_ref().map(|p| p.as_str().to_owned()),
        test: opts.test.as_ref().map(|t| t.as_str().to_owned()),
        suite: opts.suite.as_ref().map(|s| WireSuite {
            id: s.id.as_str().to_owned(),
            tests: s.tests.clone(),
            position: s.position,
        }),
        text: opts.text.clone(),
        min_trust: opts.min_trust,
        max_injections: opts.max_injections,
        phrase: opts.mode == QueryMode::Phrase,
        min_relevance: opts.min_relevance,
        run: opts.run.as_ref().map(|r| (r.run_id.clone(), r.step)),
        probation: opts.probation,
        breaker: breaker.map(str::to_owned),
        warnings: opts.warnings.clone(),
        record_before_ns: u64::try_from(deadline.as_nanos()).ok(),
    };
    let mut line = serde_json::to_vec(&request).map_err(|e| NoServer::Malformed(e.to_string()))?;
    line.push(b'\n');
    (&stream).write_all(&line)?;
    let mut text = String::new();
    BufReader::new(&stream).take(MAX_REPLY_BYTES).read_line(&mut text)?;
    let reply: Reply =
        serde_json::from_str(&text).map_err(|e| NoServer::Malformed(e.to_string()))?;
    if reply.protocol != PROTOCOL || reply.root != root {
        return Err(NoServer::Refused(format!("a server for {}", reply.root.display())));
    }
    match (reply.answer, reply.refused) {
        (Some(answer), None) => Ok(answer),
        (_, Some(why)) => Err(NoServer::Refused(why)),
        (None, None) => Err(NoServer::Malformed("neither answer nor refusal".into())),
    }
}

/// The listener of one root: answers until dropped, then removes its socket.
#[derive(Debug)]
pub struct QueryListener {
    path: PathBuf,
    /// The bound socket file's inode, so only our own file is removed.
    inode: u64,
    stop: Arc<AtomicBool>,
    /// The listening socket itself (a second descriptor of it), shut down to wake the accept
    /// loop: connecting to the path cannot, once the socket file is removed or the root
    /// renamed, and the server would then never stop.
    wake: UnixListener,
    thread: Option<JoinHandle<()>>,
    /// Holds the root's listener lock (`flock`) until dropped.
    _lock: File,
}

impl QueryListener {
    /// Starts answering fresh `curator query` processes for `root` from `store` (the file store
    /// of `root`, whose index watches its folders). `Ok(None)` when another listener already
    /// answers for this root or the socket path is too long; the server then simply does not
    /// serve the socket.
    pub fn start(root: &Path, store: Arc<dyn Store>) -> std::io::Result<Option<QueryListener>> {
        let root = std::fs::canonicalize(root)?;
        let dir = root.join(".curator");
        std::fs::create_dir_all(&dir)?;
        let path = dir.join(SOCKET_FILE);
        if path.as_os_str().len() > MAX_SOCKET_PATH {
            tracing::warn!(path = %path.display(), "socket path too long; fresh queries will not use this server");
            return Ok(None);
        }
        let build = build_id().ok_or_else(|| std::io::Error::other("unknown executable"))?;
        let lock =
            File::options().create(true).truncate(false).write(true).open(dir.join(LOCK_FILE))?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => return Ok(None),
            Err(std::fs::TryLockError::Error(e)) => return Err(e),
        }
        // We hold the lock, so a socket file here is a dead listener's.
        match std::fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        let listener = UnixListener::bind(&path)?;
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o600))?;
        let inode = std::fs::metadata(&path)?.ino();
        let wake = listener.try_clone()?;
        let stop = Arc::new(AtomicBool::new(false));
        let server = Server { store, root, build, in_flight: Arc::new(AtomicUsize::new(0)) };
        let thread = {
            let stop = Arc::clone(&stop);
            std::thread::Builder::new()
                .name("curator-query-socket".into())
                .spawn(move || server.accept_loop(&listener, &stop))?
        };
        Ok(Some(QueryListener { path, inode, stop, wake, thread: Some(thread), _lock: lock }))
    }

    /// Where it listens.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for QueryListener {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag: a shut-down listening socket fails the
        // blocked accept (EINVAL), wherever its file now is.
        let _ = rustix::net::shutdown(&self.wake, rustix::net::Shutdown::Both);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        if std::fs::metadata(&self.path).is_ok_and(|m| m.ino() == self.inode) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// What the accept loop and its connection threads share.
#[derive(Clone)]
struct Server {
    store: Arc<dyn Store>,
    root: PathBuf,
    build: String,
    in_flight: Arc<AtomicUsize>,
}

impl Server {
    fn accept_loop(&self, listener: &UnixListener, stop: &AtomicBool) {
        for stream in listener.incoming() {
            if stop.load(Ordering::SeqCst) {
                return;
            }
            let Ok(stream) = stream else { continue };
            if self.in_flight.fetch_add(1, Ordering::SeqCst) >= MAX_CONNECTIONS {
                self.in_flight.fetch_sub(1, Ordering::SeqCst);
                continue;
            }
            let server = self.clone();
            let spawned = std::thread::Builder::new().spawn(move || {
                if let Err(e) = server.handle(&stream) {
                    tracing::debug!(error = %e, "query socket connection");
                }
                server.in_flight.fetch_sub(1, Ordering::SeqCst);
            });
            if spawned.is_err() {
                self.in_flight.fetch_sub(1, Ordering::SeqCst);
            }
        }
    }

    fn handle(&self, stream: &UnixStream) -> std::io::Result<()> {
        if peer_uid(stream)? != uid() {
            return Ok(());
        }
        stream.set_read_timeout(Some(SERVER_TIMEOUT))?;
        stream.set_write_timeout(Some(SERVER_TIMEOUT))?;
        let mut text = String::new();
        BufReader::new(stream).take(MAX_REQUEST_BYTES).read_line(&mut text)?;
        let reply = match serde_json::from_str::<Request>(&text) {
            Ok(request) => self.reply(request),
            Err(e) => self.refuse(format!("malformed request: {e}")),
        };
        let mut line = serde_json::to_vec(&reply).map_err(std::io::Error::other)?;
        line.push(b'\n');
        let mut stream = stream;
        stream.write_all(&line)
    }

    fn refuse(&self, why: String) -> Reply {
        Reply { protocol: PROTOCOL, root: self.root.clone(), answer: None, refused: Some(why) }
    }

    fn reply(&self, request: Request) -> Reply {
        if request.protocol != PROTOCOL {
            return self
                .refuse(format!("protocol {} (this server speaks {PROTOCOL})", request.protocol));
        }
        if request.root != self.root {
            return self.refuse("another memory root".into());
        }
        if request.build != self.build {
            return self.refuse("another curator build".into());
        }
        match self.answer(request) {
            Ok(answer) => Reply {
                protocol: PROTOCOL,
                root: self.root.clone(),
                answer: Some(answer),
                refused: None,
            },
            Err(e) => self.refuse(e),
        }
    }

    /// What `curator query` does after resolving its options: the breaker check, then the
    /// query (which records the run when asked).
    fn answer(&self, r: Request) -> Result<Answer, String> {
        // The client skipped (and warned about) any name that cannot be a folder; the names
        // it sends are checked again all the same.
        let scope = |name: Option<String>| {
            name.map(|n| ScopeName::new(&n)).transpose().map_err(|e| e.to_string())
        };
        let mut opts =
            QueryOptions::with_names(scope(r.product)?, scope(r.test)?, r.text, r.warnings);
        opts.suite = r
            .suite
            .map(|s| SuiteContext::new(&s.id, s.tests, s.position))
            .transpose()
            .map_err(|e| e.to_string())?;
        opts.min_trust = r.min_trust;
        opts.max_injections = r.max_injections;
        opts.mode = if r.phrase { QueryMode::Phrase } else { QueryMode::Terms };
        opts.min_relevance = r.min_relevance;
        opts.run = r.run.map(|(run_id, step)| RunStep { run_id, step });
        opts.probation = r.probation;
        opts.record_before = r.record_before_ns.map(Duration::from_nanos);
        let store = self.store.as_ref();
        if let Some(key) = &r.breaker
            && Breaker::is_tripped_in(store, key).map_err(|e| e.to_string())?
        {
            let outcome = QueryOutcome { warnings: opts.warnings, ..QueryOutcome::default() };
            return Ok(Answer { outcome, breaker_tripped: true });
        }
        let outcome = query_in(store, &opts).map_err(|e| e.to_string())?;
        Ok(Answer { outcome, breaker_tripped: false })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use curator_store::{FileStore, FileStoreOptions};

    /// A server that no longer accepts (stopped with Ctrl-Z) and whose backlog is full: the
    /// query's connect gives up after the client timeout instead of blocking for ever.
    #[test]
    fn a_full_backlog_does_not_block_the_connect() {
        use socket2::{Domain, SockAddr, Socket, Type};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("query.sock");
        let addr = SockAddr::unix(&path).unwrap();
        let listener = Socket::new(Domain::UNIX, Type::STREAM, None).unwrap();
        listener.bind(&addr).unwrap();
        listener.listen(0).unwrap();
        let mut waiting = Vec::new();
        for _ in 0..64 {
            let s = Socket::new(Domain::UNIX, Type::STREAM, None).unwrap();
            s.set_nonblocking(true).unwrap();
            if s.connect(&addr).is_err() {
                break;
            }
            waiting.push(s);
        }
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || tx.send(connect(&path).is_err()).unwrap());
        let gave_up = rx.recv_timeout(CLIENT_TIMEOUT * 4).expect("connect returned");
        assert!(gave_up, "nothing accepts: no connection");
        drop((listener, waiting));
    }

    const A: &str = "obs_aa-lamp-lake-moon-reef-sand-tide-wave-wind-yarn";
    const B: &str = "obs_ab-lamp-lake-moon-reef-sand-tide-wave-wind-yarn";

    fn write_obs(root: &Path, id: &str, title: &str) {
        let dir = root.join("products/shop");
        std::fs::create_dir_all(&dir).unwrap();
        let text = format!(
            "---\nid: {id}\ntitle: {title}\ntrust: 0.8\ncreated: 2026-04-10T12:00:00.000Z\n\
             last_confirmed: 2026-04-10T12:00:00.000Z\nconfirmed_count: 0\n\
             contradicted_count: 0\nsource_test: t_a\n---\nSeen in the export dialog.\n"
        );
        std::fs::write(dir.join(format!("{id}.md")), text).unwrap();
    }

    fn store(root: &Path) -> Arc<dyn Store> {
        Arc::new(FileStore::open(root, FileStoreOptions::default()).unwrap())
    }

    fn opts(text: &str) -> QueryOptions {
        QueryOptions::new("shop", "t_a", text).unwrap()
    }

    fn ids(answer: &Answer) -> Vec<&str> {
        answer.outcome.observations.iter().map(|o| o.id.as_str()).collect()
    }

    #[test]
    fn the_listener_answers_as_the_engine_would_and_sees_new_files_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write_obs(root, A, "Export button opens the CSV dialog");
        let listener = QueryListener::start(root, store(root)).unwrap().unwrap();
        assert_eq!(listener.path(), socket_path(&std::fs::canonicalize(root).unwrap()));
        let step = opts("Click the Export button");
        let answer = ask(root, &step, None).unwrap();
        let direct = query_in(store(root).as_ref(), &step).unwrap();
        assert_eq!(answer, Answer { outcome: direct, breaker_tripped: false });
        assert_eq!(ids(&answer), [A]);
        // A file written after the listener started is seen by the very next query.
        write_obs(root, B, "Escape key closes the import wizard");
        let step = opts("Press Escape to close the import wizard");
        let answer = ask(root, &step, None).unwrap();
        assert_eq!(ids(&answer), [B]);
        assert_eq!(answer.outcome, query_in(store(root).as_ref(), &step).unwrap());
        let mut bad = step.clone();
        bad.min_trust = 1.5;
        assert!(matches!(ask(root, &bad, None), Err(NoServer::Refused(_))), "errors are local");
        drop(listener);
        assert!(!socket_path(root).exists(), "the socket is removed on drop");
        assert!(matches!(ask(root, &step, None), Err(NoServer::Absent(_))));
    }

    #[test]
    fn one_listener_per_root_and_a_dead_ones_socket_is_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write_obs(root, A, "Export button opens the CSV dialog");
        let first = QueryListener::start(root, store(root)).unwrap().unwrap();
        assert!(QueryListener::start(root, store(root)).unwrap().is_none(), "the lock is held");
        drop(first);
        // A listener killed without cleaning up leaves its socket file behind.
        drop(UnixListener::bind(socket_path(root)).unwrap());
        assert!(socket_path(root).exists());
        let step = opts("Export button");
        assert!(matches!(ask(root, &step, None), Err(NoServer::Io(_))), "nobody listens");
        let second = QueryListener::start(root, store(root)).unwrap().unwrap();
        assert_eq!(ids(&ask(root, &step, None).unwrap()), [A]);
        drop(second);
    }

    /// `rm .curator/query.sock`, `rm -rf .curator` or a renamed root: the listener still
    /// stops when dropped (it woke its accept by connecting to the path, which then reached
    /// nobody, and `serve` never exited on SIGTERM).
    #[test]
    fn the_listener_stops_when_its_socket_file_is_gone() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("m");
        std::fs::create_dir(&root).unwrap();
        let listener = QueryListener::start(&root, store(&root)).unwrap().unwrap();
        std::fs::remove_file(socket_path(&root)).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            drop(listener);
            tx.send(()).unwrap();
        });
        rx.recv_timeout(Duration::from_secs(10)).expect("the listener stopped");
    }

    #[test]
    fn a_server_of_another_root_is_not_asked_to_answer() {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        write_obs(a.path(), A, "Export button opens the CSV dialog");
        let _listener = QueryListener::start(a.path(), store(a.path())).unwrap().unwrap();
        // Root b's socket path leads to root a's server (a copied or linked `.curator`).
        std::fs::create_dir_all(b.path().join(".curator")).unwrap();
        std::os::unix::fs::symlink(socket_path(a.path()), socket_path(b.path())).unwrap();
        let err = ask(b.path(), &opts("Export button"), None).unwrap_err();
        assert!(matches!(err, NoServer::Refused(_)), "{err}");
    }

    #[test]
    fn a_malformed_request_is_refused_and_the_listener_keeps_serving() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write_obs(root, A, "Export button opens the CSV dialog");
        let _listener = QueryListener::start(root, store(root)).unwrap().unwrap();
        for junk in ["not json\n", "{\"protocol\":1}\n", "\n"] {
            let mut s = UnixStream::connect(socket_path(root)).unwrap();
            s.write_all(junk.as_bytes()).unwrap();
            let mut reply = String::new();
            BufReader::new(&s).read_line(&mut reply).unwrap();
            let reply: Reply = serde_json::from_str(&reply).unwrap();
            assert!(reply.answer.is_none() && reply.refused.is_some(), "{junk:?}");
        }
        // A client that connects and hangs up without a word does no harm either.
        drop(UnixStream::connect(socket_path(root)).unwrap());
        assert_eq!(ids(&ask(root, &opts("Export button"), None).unwrap()), [A]);
    }

    /// A server that answers after its client gave up (stopped, starved) must not record the
    /// step: the client answered and recorded it itself, and the late record would name
    /// observations the agent never saw (audit 8).
    #[test]
    fn an_answer_past_the_clients_deadline_records_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write_obs(root, A, "Export button opens the CSV dialog");
        let store = store(root);
        let mut step = opts("Click the Export button");
        step.run = Some(RunStep { run_id: "r_late".into(), step: 0 });
        step.record_before = Some(crate::query::monotonic_now());
        let late = query_in(store.as_ref(), &step).unwrap_err();
        assert!(late.to_string().contains("stopped waiting"), "{late}");
        assert_eq!(store.load_session("r_late").unwrap(), None, "nothing recorded");
        step.record_before = Some(crate::query::monotonic_now() + Duration::from_secs(60));
        let answered = query_in(store.as_ref(), &step).unwrap();
        assert_eq!(answered.observations.len(), 1);
        let session = store.load_session("r_late").unwrap().unwrap();
        assert_eq!(session.injected.get(&0).map(Vec::len), Some(1));
    }
}
