//! curator-store: where observations live and how they change safely.
//!
//! Files are the source of truth; everything under `<root>/.curator/` (journal, index, run
//! sessions) is derived or auxiliary, and deleting it loses no observation. Every mutation goes
//! through a [`Transaction`] that holds agent-qa's `.curator.lock`, writes atomically and appends
//! one journal line per change before the lock is released.

mod atomic;
mod error;
mod file_store;
pub mod index;
mod journal;
mod lock;
mod run_state;
mod store;

pub use atomic::atomic_write;
pub use error::{Error, Result};
pub use file_store::{FileStore, FileStoreOptions};
pub use journal::{JournalEntry, JournalFilter};
pub use lock::{LockGuard, LockHolder, LockOptions, acquire_lock};
pub use run_state::{MAX_RUN_ID_LEN, RunSession, is_valid_run_id};
pub use store::{
    Action, ListFilter, Listing, Problem, ProblemKind, Store, StoredObservation, Transaction,
    checked_file_text,
};
