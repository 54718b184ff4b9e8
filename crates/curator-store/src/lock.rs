//! agent-qa's `.curator.lock` protocol (agent-qa-memory §6, fixes of §11.17). STUB.

use std::path::Path;
use std::time::Duration;

/// How long to wait for the lock.
#[derive(Debug, Clone)]
pub struct LockOptions {
    pub timeout: Duration,
}

/// Who holds a lock, as written in the lock file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockHolder {
    pub pid: u32,
    pub timestamp: String,
}

/// Held lock; released (file deleted when it is ours) on drop.
#[derive(Debug)]
pub struct LockGuard {}

/// Acquires the lock file at `path`.
pub fn acquire_lock(path: &Path, options: &LockOptions) -> crate::Result<LockGuard> {
    let _ = (path, options);
    unimplemented!()
}
