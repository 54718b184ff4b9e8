//! Test helpers: a fresh memory root per test and a `curator` command bound to it.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::atomic::{AtomicUsize, Ordering};

static COUNTER: AtomicUsize = AtomicUsize::new(0);

/// A fresh temporary directory holding a memory root at `root()`, removed on drop.
#[derive(Debug)]
pub(crate) struct Dir {
    tmp: tempfile::TempDir,
}

impl Dir {
    /// A new directory named after the test, with an initialized memory root inside.
    pub(crate) fn new(name: &str) -> Dir {
        let n = COUNTER.fetch_add(1, Ordering::SeqCst);
        let tmp = tempfile::Builder::new()
            .prefix(&format!("curator-test-{name}-{n}-"))
            .tempdir()
            .expect("create temp dir");
        let dir = Dir { tmp };
        for tier in ["products", "suites", "tests"] {
            std::fs::create_dir_all(dir.root().join(tier)).expect("create tier dir");
        }
        dir
    }

    /// The directory that holds the memory root (and anything else a test needs).
    pub(crate) fn path(&self) -> &Path {
        self.tmp.path()
    }

    /// The memory root.
    pub(crate) fn root(&self) -> PathBuf {
        self.tmp.path().join("memory")
    }

    /// Writes `contents` to `rel` under the memory root, creating folders.
    pub(crate) fn write(&self, rel: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.root().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).expect("create parent");
        std::fs::write(&path, contents).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
        path
    }

    /// Reads a file under the memory root.
    pub(crate) fn read(&self, rel: &str) -> String {
        let path = self.root().join(rel);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
    }

    /// `curator --root <root> <args>`, run in this directory (`harness`, which has no use for
    /// a root and warns about one, gets none).
    pub(crate) fn curator(&self, args: &[&str]) -> TestCommand {
        let mut cmd = assert_cmd::Command::cargo_bin("curator").expect("curator binary");
        cmd.current_dir(self.path()).env_remove("CURATOR_ROOT");
        if args.first() != Some(&"harness") {
            cmd.arg("--root").arg(self.root());
        }
        cmd.args(args);
        TestCommand { cmd }
    }
}

/// A prepared `curator` invocation.
#[derive(Debug)]
pub(crate) struct TestCommand {
    pub(crate) cmd: assert_cmd::Command,
}

impl TestCommand {
    pub(crate) fn stdin(mut self, input: impl Into<Vec<u8>>) -> Self {
        self.cmd.write_stdin(input.into());
        self
    }

    pub(crate) fn output(mut self) -> Output {
        self.cmd.output().expect("run curator")
    }

    /// Runs, asserts exit 0 and returns stdout.
    pub(crate) fn stdout(self) -> String {
        let out = self.output();
        assert!(
            out.status.success(),
            "curator failed with {:?}\nstdout:\n{}\nstderr:\n{}",
            out.status.code(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("stdout is UTF-8")
    }

    /// Runs, asserts the exit code and returns (stdout, stderr).
    pub(crate) fn expect_code(self, code: i32) -> (String, String) {
        let out = self.output();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(
            out.status.code(),
            Some(code),
            "unexpected exit code\nstdout:\n{stdout}\nstderr:\n{stderr}"
        );
        (stdout, stderr)
    }
}

/// The lock file a live holder `pid` writes, stamped a minute ahead: a lock is taken as abandoned
/// once its stamp is older than twice `curatorLockTimeout`, which with the tests' 1 s timeout a
/// loaded CI machine reached before the curator under test had given up (a flaky pass of a
/// lock-timeout test); a stamp from the future is never old.
pub(crate) fn live_lock(pid: u32) -> String {
    let ahead = curator_harness::Timestamp::now() + std::time::Duration::from_secs(60);
    format!("{{\"pid\":{pid},\"timestamp\":\"{}\"}}", ahead.strftime("%Y-%m-%dT%H:%M:%S%.3fZ"))
}

/// A canonical observation file as agent-qa writes it.
pub(crate) fn observation_file(id: &str, title: &str, trust: &str, body: &str) -> String {
    format!(
        "---\nid: {id}\ntitle: {title}\ntrust: {trust}\ncreated: 2026-04-10T12:00:00.000Z\n\
         last_confirmed: 2026-04-10T12:00:00.000Z\nconfirmed_count: 0\ncontradicted_count: 0\n\
         source_test: t_lack-auto-quit-dow-boat-urus-zip-van-oak-elm\n---\n{body}\n"
    )
}

/// Ten-word canonical ids for fixtures.
pub(crate) const ID_A: &str = "obs_amber-basin-cedar-delta-ember-fable-gamma-haven-iris-jolly";
pub(crate) const ID_B: &str = "obs_kayak-lemon-mango-noble-olive-pearl-quartz-raven-solar-tulip";
pub(crate) const ID_C: &str = "obs_umber-vivid-willow-xenon-yodel-zebra-acorn-bloom-coral-dune";

/// A `curator … serve --listen 127.0.0.1:0` child and the address it listens on; killed on
/// drop.
#[derive(Debug)]
pub(crate) struct Served {
    pub(crate) child: std::process::Child,
    pub(crate) addr: String,
}

impl Served {
    /// Spawns `cmd` (a `curator` command ending in `serve --listen 127.0.0.1:0`) and waits for
    /// the line that says where it listens.
    pub(crate) fn start(mut cmd: std::process::Command) -> Served {
        use std::io::BufRead;
        let mut child = cmd
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn curator serve");
        let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
        let first = lines.next().expect("serve says where it listens").unwrap();
        let addr = first
            .split("http://")
            .nth(1)
            .and_then(|rest| rest.split('/').next())
            .unwrap_or_else(|| panic!("no address in {first:?}"))
            .to_owned();
        std::thread::spawn(move || lines.for_each(drop));
        Served { child, addr }
    }

    /// One request; (status, JSON body). `None` when the connection failed or broke.
    pub(crate) fn try_call(
        &self,
        method: &str,
        path: &str,
        body: Option<&serde_json::Value>,
    ) -> Option<(u16, serde_json::Value)> {
        http_call(&self.addr, method, path, body)
    }

    /// One request that must get an answer.
    pub(crate) fn call(
        &self,
        method: &str,
        path: &str,
        body: Option<&serde_json::Value>,
    ) -> (u16, serde_json::Value) {
        self.try_call(method, path, body).unwrap_or_else(|| panic!("{method} {path}: no answer"))
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One HTTP/1.1 request to `addr`; (status, JSON body). `None` when the connection failed or
/// broke (the server was killed meanwhile).
pub(crate) fn http_call(
    addr: &str,
    method: &str,
    path: &str,
    body: Option<&serde_json::Value>,
) -> Option<(u16, serde_json::Value)> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).ok()?;
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .ok()?;
    let mut response = String::new();
    s.read_to_string(&mut response).ok()?;
    let (head, body) = response.split_once("\r\n\r\n")?;
    let status = head.split_whitespace().nth(1).and_then(|s| s.parse().ok())?;
    Some((status, serde_json::from_str(body).unwrap_or(serde_json::Value::Null)))
}

/// Every folder and file under `dir`, depth first (a folder after what it holds).
pub(crate) fn tree(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(tree(&path));
        }
        out.push(path);
    }
    out
}
