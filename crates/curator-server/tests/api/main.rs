//! The JSON API, one request at a time through `oneshot` (no socket): every route, and the bad
//! input each must answer with the right status, code and message (issue 6 "Must show").

#[path = "../common/mod.rs"]
mod common;
mod engine;
mod harness_review;
mod hosts;
mod observations;
mod review;
mod surface;
