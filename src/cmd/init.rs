//! `curator init`: create the memory root's tier folders (idempotent, like agent-qa's
//! `ensureMemoryDirs`); with a PostgreSQL store, bring its schema up to date instead. With
//! `--example DIR`, write the example workspace (see `example.rs`).

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context as _, Result};
use curator_store::FileStore;

use crate::context::{Context, StoreChoice};
use crate::output;

pub(crate) fn run(ctx: &Context) -> Result<ExitCode> {
    if let StoreChoice::Postgres(url) = &ctx.store {
        let store = ctx.pg_store(url, true)?;
        if ctx.json {
            output::print_json(&serde_json::json!({ "database": store.target() }))?;
        } else {
            output::print_text(&format!("initialized PostgreSQL store {}\n", store.target()))?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    FileStore::init(&ctx.root)
        .with_context(|| format!("initializing memory root {}", ctx.root.display()))?;
    if ctx.json {
        output::print_json(&serde_json::json!({ "root": ctx.root }))?;
    } else {
        output::print_text(&format!("initialized memory root {}\n", ctx.root.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `curator init --example DIR`.
pub(crate) fn example(dir: &Path, json: bool) -> Result<ExitCode> {
    let written = super::example::write(dir)
        .with_context(|| format!("writing the example workspace into {}", dir.display()))?;
    if json {
        output::print_json(&written)?;
        return Ok(ExitCode::SUCCESS);
    }
    let runs: Vec<String> = written
        .runs
        .iter()
        .filter_map(|r| r.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    output::print_text(&format!(
        "wrote the example workspace into {}: agent-qa.config.yaml, agent-qa-memory/ ({} \
         observations), runs/ ({})\n",
        dir.display(),
        written.observations,
        runs.join(", ")
    ))?;
    Ok(ExitCode::SUCCESS)
}
