//! curator-store: where observations live and how they change safely.
//!
//! Files are the source of truth; everything under `<root>/.curator/` (journal, index, run
//! sessions, outcome evidence, the review queue) is derived or auxiliary, and deleting it loses no observation. Every mutation goes
//! through a [`Transaction`] that holds agent-qa's `.curator.lock`, journals each change *before*
//! its file changes, writes atomically, and commits (or rolls back) before the lock is released;
//! a crash at any point is resolved by the next writer (`file_store/recovery.rs`).

/// A named point where the `failpoints` feature lets a test stop a write (the `fail` crate's
/// `fail_point!`); compiled to nothing otherwise.
#[cfg(feature = "failpoints")]
macro_rules! fault_point {
    ($name:literal) => {
        fail::fail_point!($name)
    };
    ($name:literal, $on_return:expr) => {
        fail::fail_point!($name, $on_return)
    };
}
#[cfg(not(feature = "failpoints"))]
macro_rules! fault_point {
    ($name:literal) => {};
    ($name:literal, $on_return:expr) => {};
}
pub(crate) use fault_point;

mod atomic;
mod error;
pub mod evidence;
mod file_store;
pub mod index;
mod journal;
mod lock;
mod regular;
mod run_state;
mod store;

pub use atomic::{atomic_write, dead_writer_temps};
pub use error::{Error, Result};
pub use file_store::{FileStore, FileStoreOptions};
pub use journal::{
    JournalEntry, JournalFilter, JournalHead, JournalPage, LEGACY_TXN, new_transaction_id,
};
pub use lock::{LockGuard, LockHolder, LockOptions, acquire_lock, acquire_lock_now};
pub use regular::{
    MAX_STATE_FILE, open_regular, open_regular_with, read_regular, read_regular_to_string,
};
pub use run_state::{
    IMPORT_RUN_ID, MAX_RUN_ID_LEN, MAX_STEP_INDEX, RunSession, check_step_index, is_valid_run_id,
};
pub use store::{
    Action, ListFilter, Listing, ListingPage, Place, Problem, ProblemKind, Recovered, StepRecord,
    Store, StoredObservation, Transaction, checked_file_text,
};
