//! curator-pg against a real PostgreSQL (a throwaway cluster or `CURATOR_TEST_PG_URL`).
//!
//! parity: the same test bodies on the file store and PgStore; engine: the same query blocks
//! and curator runs through curator-engine on both; concurrency: writers with their
//! own pools; migrations: idempotent, newer schema refused; transfer: import/export byte-exact;
//! search: scopes, suite rules, modes, limits.

mod concurrency;
mod engine;
mod migrations;
mod parity;
mod search;
mod state;
mod transfer;
mod trust;
mod util;
