//! `curator init`: create the memory root's tier folders (idempotent, like agent-qa's
//! `ensureMemoryDirs`).

use std::process::ExitCode;

use anyhow::{Context as _, Result};
use curator_store::FileStore;

use crate::context::Context;
use crate::output;

pub(crate) fn run(ctx: &Context) -> Result<ExitCode> {
    FileStore::init(&ctx.root)
        .with_context(|| format!("initializing memory root {}", ctx.root.display()))?;
    if ctx.json {
        output::print_json(&serde_json::json!({ "root": ctx.root }))?;
    } else {
        output::print_text(&format!("initialized memory root {}\n", ctx.root.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}
