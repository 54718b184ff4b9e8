//! curator-core: the model of behavioral memory and the rules that need no I/O.
//!
//! Everything here is pure: an observation, its id, where it lives (tier and scope), the agent-qa
//! frontmatter codec, the security scanner, the trust arithmetic and the `<memory-context>`
//! renderer. Storage, indexing and the curator live in other crates so that the facts of the
//! agent-qa spec (`shared/spec/agent-qa-memory.md`) can be tested here without touching a disk.

pub mod codec;
pub mod config;
mod excerpt;
pub mod fts;
mod id;
pub mod js_date;
mod observation;
pub mod render;
pub mod scanner;
mod scope;
pub mod similarity;
pub mod time;
pub mod trust;
mod unicode61;

pub use excerpt::excerpt;
pub use id::{
    IdCollision, IdError, IdShape, ObservationId, generate_run_id, is_canonical_hook_id,
    is_canonical_run_id, is_canonical_suite_id, is_canonical_test_id, with_seeded_ids,
};
pub use observation::{
    Observation, ObservationSnapshot, SnapshotEntry, SuitePlacement, title_line_violation,
};
pub use scope::{ScopeError, ScopeName, Tier};
