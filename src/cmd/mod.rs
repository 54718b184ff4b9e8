//! One module per subcommand: each turns its flags into a library request, calls the library and
//! hands the result to `output`. Only `main.rs` turns the outcome into an exit code.

use std::process::ExitCode;

use anyhow::Result;

use crate::args::{Cli, Command};
use crate::context::Context;

mod add;
mod breaker;
pub(crate) mod curate;
mod eval;
mod example;
pub(crate) mod harness;
mod history;
mod init;
mod lint;
mod list;
pub(crate) mod mcp;
pub(crate) mod pg;
mod query;
mod review;
mod rm;
pub(crate) mod serve;
mod show;
mod undo;
mod view;

/// Runs one parsed command line.
pub(crate) fn run(cli: Cli) -> Result<ExitCode> {
    if let Command::Init(args) = &cli.command
        && let Some(dir) = &args.example
    {
        // The example stands alone: no root, config or store of the current directory applies.
        return init::example(dir, cli.global.json);
    }
    let ctx = Context::load(&cli.global)?;
    match cli.command {
        Command::Init(_) => init::run(&ctx),
        Command::Add(args) => add::run(&ctx, &args),
        Command::Show(args) => show::run(&ctx, &args),
        Command::List(args) => list::run(&ctx, &args),
        Command::Rm(args) => rm::run(&ctx, &args),
        Command::Lint => lint::run(&ctx),
        Command::Query(args) => query::run(&ctx, &args),
        Command::Eval(args) => eval::run(&ctx, &args),
        Command::Curate(args) => curate::run(&ctx, &args),
        Command::History(args) => history::run(&ctx, &args),
        Command::Undo(args) => undo::run(&ctx, &args),
        Command::Breaker(args) => breaker::run(&ctx, &args),
        Command::Review(args) => review::run(&ctx, &args),
        Command::Harness(args) => harness::run(&args, &ctx),
        Command::Mcp(args) => mcp::run(&ctx, &args),
        Command::Serve(args) => serve::run(&ctx, &args),
        Command::Import(args) => pg::import(&ctx, &args),
        Command::Export(args) => pg::export(&ctx, &args),
        Command::Migrate(args) => pg::migrate(&ctx, &args),
    }
}
