//! `curator import`, `curator export`, `curator migrate`: moving a memory between a directory and
//! PostgreSQL, and the database's schema (issue 7 items 1 and 5).
//!
//! Import and export are idempotent and byte-exact (curator-pg's `transfer`); a file or row that
//! is not transferred is printed with its path and reason and makes the command exit 3, like
//! `lint`, so a script notices. Progress goes to stderr, one line per batch, so stdout stays
//! the result (text or `--json`). The database URL may carry a password: it is never printed.

use std::process::ExitCode;

use anyhow::{Context as _, Result};
use clap::Args;
use curator_pg::{PgOptions, PgStore, Progress, TransferReport, export_dir, import_dir};
use serde_json::json;

use crate::context::Context;
use crate::output::{print_json, print_text};

/// Where the PostgreSQL store is.
#[derive(Debug, Args)]
pub(crate) struct DatabaseArgs {
    /// PostgreSQL connection string (postgres://user@host:port/db).
    #[arg(long, value_name = "URL", env = "CURATOR_DATABASE_URL", hide_env_values = true)]
    pub(crate) database: String,
}

/// `curator migrate`.
#[derive(Debug, Args)]
pub(crate) struct MigrateArgs {
    #[command(flatten)]
    pub(crate) db: DatabaseArgs,
    /// Only show applied and pending migrations; change nothing.
    #[arg(long)]
    pub(crate) status: bool,
}

fn open(db: &DatabaseArgs, migrate: bool) -> Result<PgStore> {
    PgStore::connect(&db.database, PgOptions { migrate, ..PgOptions::default() })
        .context("opening the PostgreSQL store")
}

fn progress(verb: &'static str) -> impl FnMut(Progress) {
    move |p: Progress| eprintln!("{verb} {}/{}", p.done, p.total)
}

fn report(ctx: &Context, verb: &str, target: &str, r: &TransferReport) -> Result<ExitCode> {
    if ctx.json {
        let problems: Vec<_> = r
            .problems
            .iter()
            .map(|p| json!({ "path": p.path.display().to_string(), "reason": p.kind.to_string() }))
            .collect();
        print_json(&json!({
            "target": target,
            "added": r.added,
            "updated": r.updated,
            "unchanged": r.unchanged,
            "problems": problems,
        }))?;
    } else {
        let mut text = format!(
            "{verb} {target}: {} added, {} updated, {} unchanged\n",
            r.added, r.updated, r.unchanged
        );
        for p in &r.problems {
            text.push_str(&format!("not transferred: {p}\n"));
        }
        print_text(&text)?;
    }
    Ok(if r.problems.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(3) })
}

/// `curator import --database URL`: the memory root into PostgreSQL.
pub(crate) fn import(ctx: &Context, args: &DatabaseArgs) -> Result<ExitCode> {
    let store = open(args, true)?;
    let r = import_dir(&store, &ctx.root, &mut progress("imported"))
        .with_context(|| format!("importing {}", ctx.root.display()))?;
    report(ctx, "imported into", store.target(), &r)
}

/// `curator export --database URL`: PostgreSQL into the memory root.
pub(crate) fn export(ctx: &Context, args: &DatabaseArgs) -> Result<ExitCode> {
    let store = open(args, true)?;
    let r = export_dir(&store, &ctx.root, &mut progress("exported"))
        .with_context(|| format!("exporting to {}", ctx.root.display()))?;
    report(ctx, "exported from", store.target(), &r)
}

/// `curator migrate [--status] --database URL`.
pub(crate) fn migrate(ctx: &Context, args: &MigrateArgs) -> Result<ExitCode> {
    let store = open(&args.db, false)?;
    let applied = if args.status { Vec::new() } else { store.migrate()? };
    let status = store.migrations_status()?;
    if ctx.json {
        let migrations: Vec<_> = status
            .migrations
            .iter()
            .map(|m| json!({ "version": m.version, "name": m.name, "applied_at": m.applied_at }))
            .collect();
        print_json(&json!({
            "target": store.target(),
            "database_version": status.database_version,
            "binary_version": status.binary_version,
            "applied_now": applied,
            "migrations": migrations,
        }))?;
    } else {
        let mut text = format!(
            "{}: schema version {} (this curator: {})\n",
            store.target(),
            status.database_version,
            status.binary_version
        );
        for m in &status.migrations {
            let state = match &m.applied_at {
                Some(at) if applied.contains(&m.version) => format!("applied now ({at})"),
                Some(at) => format!("applied {at}"),
                None => "pending".to_owned(),
            };
            text.push_str(&format!("{:04} {}: {state}\n", m.version, m.name));
        }
        print_text(&text)?;
    }
    Ok(ExitCode::SUCCESS)
}
