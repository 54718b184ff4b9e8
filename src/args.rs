//! Flag definitions. The doc comments are the `--help` text.
//!
//! Parsing only validates what the user typed (types, ranges, required pairs); it opens no file and
//! reads no config, so a usage error is always exit 2 and never depends on the disk.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// curator — memory for autonomous agents that has to earn its place.
///
/// Observations are markdown files with trust scores in product / suite / test tiers, compatible
/// with agent-qa's memory directory. The memory root is taken from --root, else $CURATOR_ROOT,
/// else `services.memory.dir` of the config file, else ./agent-qa-memory.
#[derive(Debug, Parser)]
#[command(name = "curator", version, about, long_about, propagate_version = true, args_override_self = true)]
pub(crate) struct Cli {
    #[command(flatten)]
    pub(crate) global: GlobalArgs,
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// Flags every command accepts.
#[derive(Debug, Args)]
pub(crate) struct GlobalArgs {
    /// Memory root directory (holds products/, suites/, tests/).
    #[arg(long, global = true, env = "CURATOR_ROOT", value_name = "DIR")]
    pub(crate) root: Option<PathBuf>,
    /// agent-qa config file (default: ./agent-qa.config.yaml when it exists).
    #[arg(long, global = true, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    /// Print one JSON document on stdout instead of text.
    #[arg(long, global = true)]
    pub(crate) json: bool,
    /// More diagnostics on stderr (-v info, -vv debug).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub(crate) verbose: u8,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Create the memory root with its products/, suites/ and tests/ folders.
    Init,
    /// Write a new observation (scanned and validated); prints its id.
    Add(AddArgs),
    /// Show one observation.
    Show(IdArg),
    /// List observations, optionally by tier and scope.
    List(ListArgs),
    /// Delete one observation (journaled).
    Rm(RmArgs),
    /// Check every file under the root; print each problem; exit 3 when there is any.
    Lint,
    /// Harness memory: raw.md, MEMORY.md, summary.md, identity files and issue triage.
    Harness(crate::cmd::harness::HarnessArgs),
}

/// `curator add`.
#[derive(Debug, Args)]
pub(crate) struct AddArgs {
    /// Tier: product(s), suite(s) or test(s).
    #[arg(long, value_name = "TIER")]
    pub(crate) tier: String,
    /// Scope folder: the product, the suite id or the test id.
    #[arg(long, value_name = "SCOPE")]
    pub(crate) scope: String,
    /// Title: a context-first fact headline.
    #[arg(long)]
    pub(crate) title: String,
    /// Test id (or name) this observation was learned from.
    #[arg(long, value_name = "ID")]
    pub(crate) source_test: String,
    /// Initial trust in [0, 1].
    #[arg(long, default_value_t = 0.5)]
    pub(crate) trust: f64,
    /// Suite observations: the child test's 0-based position (requires --suite-tests).
    #[arg(long, requires = "suite_tests")]
    pub(crate) position: Option<u64>,
    /// Suite observations: JSON file with the suite's tests, `[{"test":…,"id":…}, …]`.
    #[arg(long, value_name = "FILE", requires = "position")]
    pub(crate) suite_tests: Option<PathBuf>,
    /// The body (markdown); `-` or nothing reads it from stdin.
    #[arg(value_name = "BODY")]
    pub(crate) body: Option<String>,
}

/// A command that takes one observation id.
#[derive(Debug, Args)]
pub(crate) struct IdArg {
    /// Observation id (obs_…).
    pub(crate) id: String,
}

/// `curator list`.
#[derive(Debug, Args)]
pub(crate) struct ListArgs {
    /// Only this tier: product(s), suite(s) or test(s).
    #[arg(long, value_name = "TIER")]
    pub(crate) tier: Option<String>,
    /// Only this scope folder (needs --tier).
    #[arg(long, value_name = "SCOPE", requires = "tier")]
    pub(crate) scope: Option<String>,
}

/// `curator rm`.
#[derive(Debug, Args)]
pub(crate) struct RmArgs {
    /// Observation id (obs_…).
    pub(crate) id: String,
    /// Why it is removed (kept in the journal).
    #[arg(long, default_value = "removed with curator rm")]
    pub(crate) reason: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(argv: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("curator").chain(argv.iter().copied()))
    }

    #[test]
    fn definitions_are_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }

    #[test]
    fn position_and_suite_tests_come_together() {
        let base = ["add", "--tier", "suite", "--scope", "s", "--title", "t", "--source-test", "x"];
        let mut alone = base.to_vec();
        alone.extend(["--position", "1"]);
        assert!(parse(&alone).is_err());
        let mut both = alone.clone();
        both.extend(["--suite-tests", "tests.json"]);
        assert!(parse(&both).is_ok());
    }

    #[test]
    fn scope_filter_needs_a_tier() {
        assert!(parse(&["list", "--scope", "acme"]).is_err());
        assert!(parse(&["list", "--tier", "product", "--scope", "acme"]).is_ok());
    }
}
