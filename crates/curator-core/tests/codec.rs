//! Integration tests of the agent-qa observation codec (agent-qa-memory §1.3–§1.6).
//!
//! One test target, one module per concern:
//! - `parse`: every rule of §1.4 in order and every field rule of §1.5;
//! - `write`: §1.6 quoting, numbers and layout against vectors produced by `yaml` 2.8.4 itself;
//! - `fixtures`: files written by agent-qa's writer, read and rewritten byte for byte;
//! - `props`: property tests (write → parse round trips, arbitrary text never panics);
//! - `robustness`: hostile input (huge bodies, alias bombs, odd unicode).

#[path = "codec/common.rs"]
mod common;
#[path = "codec/fixtures.rs"]
mod fixtures;
#[path = "codec/parse.rs"]
mod parse;
#[path = "codec/props.rs"]
mod props;
#[path = "codec/robustness.rs"]
mod robustness;
#[path = "codec/write.rs"]
mod write;
