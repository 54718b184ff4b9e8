//! curator-pg against a real PostgreSQL (a throwaway cluster or `CURATOR_TEST_PG_URL`).
//!
//! parity: the same test bodies on the file store and PgStore; concurrency: writers with their
//! own pools; migrations: idempotent, newer schema refused; transfer: import/export byte-exact;
//! search: scopes, suite rules, modes, limits.

mod concurrency;
mod migrations;
mod parity;
mod search;
mod state;
mod transfer;
mod util;
