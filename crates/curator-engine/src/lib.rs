//! curator-engine: behavioral memory as a service to a harness.
//!
//! The engine ties the model (curator-core) to a store (curator-store): a scoped query that
//! injects memory into one agent step, run sessions that remember what was injected, and the
//! curator that turns a run's outcome into add / confirm / deprecate decisions.

pub mod breaker;
pub mod curate;
pub mod eval;
pub mod once;
pub mod probation;
pub mod providers;
pub mod query;
#[cfg(unix)]
pub mod query_socket;
pub mod review;
pub mod runs;
pub mod scopes;
pub mod session;
mod trial;
pub mod undo;

pub use query::{
    InjectedObservation, QueryError, QueryOptions, QueryOutcome, RunStep, query, query_in,
};
pub use scopes::SuiteContext;
