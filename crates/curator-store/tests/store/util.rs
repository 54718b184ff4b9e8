use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use curator_core::codec::parse_observation;
use curator_core::{Observation, ObservationId, ScopeName, Tier};
use curator_store::{Action, FileStore, FileStoreOptions, Store};

/// A fresh memory root (created with `init`) and a store opened on it.
pub(crate) fn new_store() -> (tempfile::TempDir, FileStore) {
    let dir = tempfile::tempdir().unwrap();
    FileStore::init(dir.path()).unwrap();
    let store = open(dir.path());
    (dir, store)
}

pub(crate) fn open(root: &Path) -> FileStore {
    let options = FileStoreOptions { lock_timeout: Duration::from_secs(30), ..Default::default() };
    FileStore::open(root, options).unwrap()
}

pub(crate) fn scope(name: &str) -> ScopeName {
    ScopeName::new(name).unwrap()
}

/// The text of a valid base observation as agent-qa writes it.
pub(crate) fn text(id: &str, title: &str, body: &str, confirmed: u64) -> String {
    format!(
        "---\nid: {id}\ntitle: {title}\ntrust: 0.5\ncreated: 2026-04-10T12:00:00.000Z\n\
         last_confirmed: 2026-04-10T12:00:00.000Z\nconfirmed_count: {confirmed}\n\
         contradicted_count: 0\nsource_test: t_x\n---\n{body}\n"
    )
}

/// A valid observation with a fresh id.
pub(crate) fn observation(title: &str, body: &str) -> Observation {
    let id = ObservationId::generate();
    parse_observation(&text(id.as_str(), title, body, 0), id.as_str()).unwrap()
}

/// Writes `obs` through a transaction.
pub(crate) fn put(store: &FileStore, tier: Tier, scope_name: &str, obs: &Observation) {
    store
        .transact(Some("r_test"), &mut |tx| {
            tx.put(tier, &scope(scope_name), obs, Action::Add, "test setup")
        })
        .unwrap();
}

/// Writes raw bytes where an observation file would be, bypassing the store.
pub(crate) fn write_raw(root: &Path, rel: &str, bytes: &[u8]) -> PathBuf {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, bytes).unwrap();
    path
}

/// Env var naming the worker role a spawned test binary should play.
pub(crate) const ROLE: &str = "CURATOR_STORE_TEST_ROLE";
/// Env var naming the memory root a worker uses.
pub(crate) const ROOT: &str = "CURATOR_STORE_TEST_ROOT";

/// Runs this very test binary as a worker: only the named `#[ignore]` test runs, and it acts
/// because the role variable is set.
pub(crate) fn spawn_worker(test: &str, role: &str, root: &Path, extra: &[(&str, String)]) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--ignored", "--nocapture", "--test-threads=1"])
        .env(ROLE, role)
        .env(ROOT, root)
        .envs(extra.iter().map(|(k, v)| (*k, v.as_str())))
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap()
}

/// The role this process was started for, if it is a worker for `role`.
pub(crate) fn worker_root(role: &str) -> Option<PathBuf> {
    (std::env::var(ROLE).ok()? == role).then(|| PathBuf::from(std::env::var_os(ROOT).unwrap()))
}

/// Waits until `path` exists (a worker's "ready" signal).
pub(crate) fn wait_for(path: &Path, within: Duration) {
    let deadline = std::time::Instant::now() + within;
    while !path.exists() {
        assert!(std::time::Instant::now() < deadline, "{} never appeared", path.display());
        std::thread::sleep(Duration::from_millis(5));
    }
}
