//! curator-pg: the PostgreSQL store, for fleets of machines sharing one memory (issue 7).
//!
//! The file store stays the embedded default; [`PgStore`] implements the same
//! [`curator_store::Store`] trait over one database, so the engine, the CLI and the server work
//! unchanged. Each observation row keeps the exact agent-qa file text as its truth (export is
//! byte-exact; unknown frontmatter keys survive); a `transact` call is one SQL transaction with
//! row locks instead of a lock file; the schema is migrated by versioned migrations embedded in
//! the binary.
//!
//! The API is blocking. From async code call it inside `tokio::task::spawn_blocking`.

mod error;
mod evidence;
mod migrate;
mod row;
mod search;
mod sql;
mod state;
mod store;
pub mod testing;
mod transaction;
mod transfer;
mod watch;

pub use error::{PgError, Result};
pub use migrate::{MigrationStatus, MigrationsStatus, SCHEMA_VERSION};
pub use store::{COMMITTING, PgOptions, PgStore, is_unavailable, target_of};
pub use transfer::{Progress, TransferReport, export_dir, import_dir};
