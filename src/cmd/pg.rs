//! `curator import`, `curator export`, `curator migrate`: moving a memory between a directory and
//! PostgreSQL, and the database's schema (issue 7 items 1 and 5).
//!
//! Import and export are idempotent and byte-exact (curator-pg's `transfer`); a file or row that
//! is not transferred is printed with its path and reason and makes the command exit 3, like
//! `lint`, so a script notices. Progress goes to stderr so stdout stays the result (text or
//! `--json`): a progress bar when stderr is a terminal, one plain line per batch otherwise (a
//! CI log gets no cursor codes). The database is `--database`, else the selected store
//! (`--store` / `$CURATOR_STORE` / `curator.store`) when that is PostgreSQL. A URL may carry a
//! password: it is never printed.

use std::io::IsTerminal;
use std::process::ExitCode;

use anyhow::{Context as _, Result, bail};
use clap::Args;
use curator_pg::{PgStore, Progress, TransferReport, export_dir, import_dir};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;

use crate::context::{Context, StoreChoice};
use crate::output::{print_json, print_text};

/// Where the PostgreSQL store is.
#[derive(Debug, Args)]
pub(crate) struct DatabaseArgs {
    /// PostgreSQL connection string (postgres://user@host:port/db) [default: the --store URL].
    #[arg(long, value_name = "URL", env = "CURATOR_DATABASE_URL", hide_env_values = true)]
    pub(crate) database: Option<String>,
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

fn open(ctx: &Context, db: &DatabaseArgs, migrate: bool) -> Result<PgStore> {
    let url = match (&db.database, &ctx.store) {
        (Some(url), _) => url,
        (None, StoreChoice::Postgres(url)) => url,
        (None, StoreChoice::Files) => bail!(
            "no PostgreSQL database: pass --database URL or --store URL (or set \
             $CURATOR_DATABASE_URL / $CURATOR_STORE)"
        ),
    };
    ctx.pg_store(url, migrate)
}

/// Reports transfer progress on stderr: a bar on a terminal, plain lines elsewhere — the first,
/// then at most one every [`PLAIN_EVERY`], and the last, so a CI log gets a heartbeat, not a
/// line per batch (250 lines for 50,000 observations).
struct Reporter {
    verb: &'static str,
    bar: Option<ProgressBar>,
    last_line: Option<std::time::Instant>,
}

/// Least time between two plain progress lines.
const PLAIN_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

impl Reporter {
    fn new(verb: &'static str) -> Self {
        Self::with_terminal(verb, std::io::stderr().is_terminal())
    }

    fn with_terminal(verb: &'static str, terminal: bool) -> Self {
        let bar = terminal.then(|| {
            let bar = ProgressBar::new(0);
            let style = ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} ({eta})")
                .map(|s| s.progress_chars("=> "))
                .unwrap_or_else(|_| ProgressStyle::default_bar());
            bar.set_style(style);
            bar.set_message(verb);
            bar
        });
        Reporter { verb, bar, last_line: None }
    }

    /// The plain line for `p` (what a non-terminal stderr gets).
    fn line(&self, p: Progress) -> String {
        format!("{} {}/{}", self.verb, p.done, p.total)
    }

    fn report(&mut self, p: Progress) {
        match &self.bar {
            Some(bar) => {
                bar.set_length(p.total as u64);
                bar.set_position(p.done as u64);
            }
            None => {
                let due = self.last_line.is_none_or(|at| at.elapsed() >= PLAIN_EVERY);
                if due || p.done == p.total {
                    crate::output::note!("{}", self.line(p));
                    self.last_line = Some(std::time::Instant::now());
                }
            }
        }
    }

    fn finish(self) {
        if let Some(bar) = self.bar {
            bar.finish_and_clear();
        }
    }
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
            "journal_entries": r.journal,
            "proposals": r.pending,
            "removed": r.removed,
            "problems": problems,
        }))?;
    } else {
        let mut text = format!(
            "{verb} {target}: {} added, {} updated, {} unchanged",
            r.added, r.updated, r.unchanged
        );
        if r.removed > 0 {
            text.push_str(&format!(", {} removed (deleted in the database)", r.removed));
        }
        if r.journal + r.pending > 0 {
            text.push_str(&format!(
                "; {} journal entries, {} proposals for review",
                r.journal, r.pending
            ));
        }
        text.push('\n');
        for p in &r.problems {
            text.push_str(&format!("not transferred: {p}\n"));
        }
        print_text(&text)?;
    }
    Ok(if r.problems.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(3) })
}

/// `curator import --database URL`: the memory root into PostgreSQL.
pub(crate) fn import(ctx: &Context, args: &DatabaseArgs) -> Result<ExitCode> {
    let store = open(ctx, args, true)?;
    let mut reporter = Reporter::new("imported");
    let r = import_dir(&store, &ctx.root, &mut |p| reporter.report(p));
    reporter.finish();
    let r = r.with_context(|| format!("importing {}", ctx.root.display()))?;
    report(ctx, "imported into", store.target(), &r)
}

/// `curator export --database URL`: PostgreSQL into the memory root.
pub(crate) fn export(ctx: &Context, args: &DatabaseArgs) -> Result<ExitCode> {
    let store = open(ctx, args, true)?;
    let mut reporter = Reporter::new("exported");
    let r = export_dir(&store, &ctx.root, &mut |p| reporter.report(p));
    reporter.finish();
    let r = r.with_context(|| format!("exporting to {}", ctx.root.display()))?;
    report(ctx, "exported from", store.target(), &r)
}

/// `curator migrate [--status] --database URL`.
pub(crate) fn migrate(ctx: &Context, args: &MigrateArgs) -> Result<ExitCode> {
    let store = open(ctx, &args.db, false)?;
    if !args.status {
        // A migration that recomputes every row takes about a minute per 100k rows: say what
        // is being done before the wait, not after it.
        let pending: Vec<String> = store
            .migrations_status()?
            .pending()
            .map(|m| format!("{:04} {}", m.version, m.name))
            .collect();
        if !pending.is_empty() {
            crate::output::note!("curator: applying {} to {}", pending.join(", "), store.target());
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_is_a_bar_on_a_terminal_and_plain_lines_elsewhere() {
        let plain = Reporter::with_terminal("imported", false);
        assert!(plain.bar.is_none());
        assert_eq!(plain.line(Progress { done: 200, total: 412 }), "imported 200/412");
        let mut plain = plain;
        plain.report(Progress { done: 200, total: 412 });
        let first = plain.last_line.expect("the first line is printed");
        plain.report(Progress { done: 400, total: 412 });
        assert_eq!(plain.last_line, Some(first), "not another line within {PLAIN_EVERY:?}");
        std::thread::sleep(std::time::Duration::from_millis(2));
        plain.report(Progress { done: 412, total: 412 });
        assert_ne!(plain.last_line, Some(first), "the last line is always printed");
        let mut bar = Reporter::with_terminal("imported", true);
        bar.report(Progress { done: 200, total: 412 });
        let b = bar.bar.as_ref().unwrap();
        assert_eq!((b.position(), b.length()), (200, Some(412)));
        bar.finish();
    }
}
