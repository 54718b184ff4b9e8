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

    /// `curator --root <root> <args>`, run in this directory.
    pub(crate) fn curator(&self, args: &[&str]) -> TestCommand {
        let mut cmd = assert_cmd::Command::cargo_bin("curator").expect("curator binary");
        cmd.current_dir(self.path()).env_remove("CURATOR_ROOT").arg("--root").arg(self.root());
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
