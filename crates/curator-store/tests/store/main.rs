//! curator-store's integration tests, one target (one link step) with a module per concern.

/// Shared helpers: temp roots, observation texts, worker processes.
mod util;

/// Reading, writing, listing, the id index and the journal through the `Store` trait.
mod file_store;

/// The bad-input table of issue 2: each file is a clear error or a listed problem, never a panic.
mod bad_input;

/// Several processes at once: lock contention, SIGKILLed holders and writers.
mod processes;
