//! Flag definitions. The doc comments are the `--help` text.
//!
//! Parsing only validates what the user typed (types, ranges, required pairs); it opens no file and
//! reads no config, so a usage error is always exit 2 and never depends on the disk.

use std::path::PathBuf;

use clap::{ArgMatches, Args, CommandFactory, FromArgMatches, Parser, Subcommand};
use curator_core::Tier;
use curator_engine::once::IdempotencyKey;

/// curator — memory for autonomous agents that has to earn its place.
///
/// Observations are markdown files with trust scores in product / suite / test tiers, compatible
/// with agent-qa's memory directory. The memory root is taken from --root, else $CURATOR_ROOT,
/// else `services.memory.dir` of the config file, else ./agent-qa-memory.
#[derive(Debug, Parser)]
#[command(
    name = "curator",
    version,
    about,
    long_about,
    propagate_version = true,
    args_override_self = true
)]
pub(crate) struct Cli {
    #[command(flatten)]
    pub(crate) global: GlobalArgs,
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// Parses a command line: [`Cli`] with `--root` and `--store` hidden from every `harness`
/// help, where they do not apply (clap propagates global flags to every subcommand).
pub(crate) fn parse_from(
    argv: impl IntoIterator<Item = std::ffi::OsString>,
) -> Result<(Cli, ArgMatches), clap::Error> {
    let mut command = Cli::command();
    // An empty variable (`CURATOR_ROOT= curator …`, a CI template left blank) means "not set",
    // as it does for most tools; clap would read it as a value and refuse it as empty.
    for (id, var) in [("root", "CURATOR_ROOT"), ("store", "CURATOR_STORE")] {
        if std::env::var_os(var).is_some_and(|v| v.is_empty()) {
            command = command.mut_arg(id, |a| a.env(None));
        }
    }
    // clap copies a global flag into a subcommand only when the subcommand has no flag of that
    // id: a hidden copy in `harness` is therefore what its subcommands inherit.
    let hidden: Vec<clap::Arg> = command
        .get_arguments()
        .filter(|a| matches!(a.get_id().as_str(), "root" | "store"))
        .map(|a| a.clone().hide(true))
        .collect();
    let command = command.mut_subcommand("harness", |h| h.args(hidden));
    let matches = command.try_get_matches_from(argv)?;
    Ok((Cli::from_arg_matches(&matches)?, matches))
}

/// A warning for each global flag typed on the command line that the command ignores: the
/// harness keeps its state in --state-dir and `init --example` writes DIR, so a wrapper passing
/// `--root` to every command still works, but is told its --root did nothing there.
pub(crate) fn ignored_flag_warnings(matches: &ArgMatches) -> Vec<String> {
    let command = match matches.subcommand() {
        Some(("harness", _)) => "`harness` (its files live in --state-dir)",
        Some(("init", init)) if init.get_one::<PathBuf>("example").is_some() => {
            "`init --example` (it writes the workspace DIR)"
        }
        _ => return Vec::new(),
    };
    ["root", "store"]
        .into_iter()
        .filter(|id| matches.value_source(id) == Some(clap::parser::ValueSource::CommandLine))
        .map(|id| format!("warning: --{id} does not apply to {command}; ignored"))
        .collect()
}

/// Old spellings accepted for one release (issue 15): `(subcommand, old flag, new flag)`.
const DEPRECATED_FLAGS: [(&str, &str, &str); 6] = [
    ("query", "--run", "--run-id"),
    ("query", "--step", "--step-index"),
    ("curate", "--run", "--run-record"),
    ("harness", "--state", "--state-dir"),
    ("serve", "--harness-state", "--state-dir"),
    ("mcp", "--harness-state", "--state-dir"),
];

/// A warning for each deprecated spelling `argv` uses (clap's hidden aliases accept them
/// silently). Only tokens before `--` are flags.
pub(crate) fn deprecation_warnings(argv: &[String], matches: &ArgMatches) -> Vec<String> {
    let Some(command) = matches.subcommand_name() else { return Vec::new() };
    let flags = argv.iter().take_while(|a| *a != "--");
    let mut warnings = Vec::new();
    for token in flags {
        for (sub, old, new) in DEPRECATED_FLAGS {
            let used = token == old || token.strip_prefix(old).is_some_and(|r| r.starts_with('='));
            if sub == command && used {
                warnings.push(format!(
                    "warning: `{command} {old}` is deprecated and will be removed in the next release; use {new}"
                ));
            }
        }
    }
    warnings
}

/// Flags every command accepts, listed under their own heading in every `--help` (`--root`
/// and `--store` are hidden in `harness`, which keeps its state in `--state-dir`).
#[derive(Debug, Args)]
#[command(next_help_heading = "Global options")]
pub(crate) struct GlobalArgs {
    /// Memory root directory (holds products/, suites/, tests/).
    #[arg(long, global = true, env = "CURATOR_ROOT", value_name = "DIR")]
    pub(crate) root: Option<PathBuf>,
    /// agent-qa config file (default: ./agent-qa.config.yaml when it exists).
    #[arg(long, global = true, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    /// Where observations, run sessions and breakers live: `postgres://user@host:port/db` for a
    /// shared PostgreSQL database, or `file` for the memory root [default: `curator.store` of
    /// the config, else the memory root].
    #[arg(long, global = true, env = "CURATOR_STORE", value_name = "URL", hide_env_values = true)]
    pub(crate) store: Option<String>,
    /// Print one JSON document on stdout instead of text (on an error: {"error": {"message",
    /// "code"}}, the code as the HTTP API names the error)
    #[arg(long, global = true)]
    pub(crate) json: bool,
    /// More diagnostics on stderr (-v info, -vv debug).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub(crate) verbose: u8,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Create the memory root with its products/, suites/ and tests/ folders; with --example DIR,
    /// write the example workspace instead.
    #[command(after_help = "Example:\n  $ curator init --example ws\n  $ cd ws && curator lint\n")]
    Init(InitArgs),
    /// Write a new observation (scanned and validated); prints its id.
    #[command(
        after_help = "Examples, in the workspace `curator init --example ws` writes (cd ws first):\n  $ curator add --tier product --scope acme-shop --source-test t_orders \\\n      --title \"Orders: export is a CSV\" \"The Export button downloads orders.csv.\"\n"
    )]
    Add(AddArgs),
    /// Show one observation.
    #[command(
        after_help = "Examples, in the workspace `curator init --example ws` writes (cd ws first):\n  $ curator show obs_plum-iris-marsh-maple-ruby-planet-violet-atlas-pine-mesa\n"
    )]
    Show(IdArg),
    /// List observations, optionally by tier and scope.
    #[command(
        after_help = "Examples, in the workspace `curator init --example ws` writes (cd ws first):\n  $ curator list --tier product --scope acme-shop\n  $ curator --json list --tier test\n"
    )]
    List(ListArgs),
    /// Delete one observation (journaled).
    #[command(
        after_help = "Examples, in the workspace `curator init --example ws` writes (cd ws first):\n  $ curator rm obs_plum-iris-marsh-maple-ruby-planet-violet-atlas-pine-mesa\n"
    )]
    Rm(RmArgs),
    /// Check every file under the root; print each problem; exit 3 when there is any.
    #[command(
        after_help = "Examples, in the workspace `curator init --example ws` writes (cd ws first):\n  $ curator lint\n"
    )]
    Lint,
    /// Print the <memory-context> block one agent step would get (nothing if no memory matches).
    #[command(
        after_help = "Examples, in the workspace `curator init --example ws` writes (cd ws first):\n  $ T=t_lake-mint-harbor-kelp-river-moss-glade-cedar-iris-camel\n  $ curator query --product acme-shop --test $T \"Open the order history\"\n  $ curator query --product acme-shop --test $T --run-id r2 --step-index 0 \"Order history\"\n"
    )]
    Query(QueryArgs),
    /// Measure retrieval quality on a labelled query set: recall@k, MRR, nDCG@10, irrelevant injections.
    Eval(EvalArgs),
    /// Apply the curator to a finished run: A.U.D.N. decisions, failed-run and ablation rules.
    #[command(
        after_help = "Examples, in the workspace `curator init --example ws` writes (cd ws first):\n  $ curator curate runs/failed.json\n  $ curator --json curate runs/passed.json\n"
    )]
    Curate(CurateArgs),
    /// Show the journal of one observation (every change, oldest first).
    #[command(
        after_help = "Examples, in the workspace `curator init --example ws` writes (cd ws first):\n  $ curator curate runs/failed.json\n  $ curator history obs_plum-iris-marsh-maple-ruby-planet-violet-atlas-pine-mesa\n"
    )]
    History(IdArg),
    /// Revert every change one curator run made, if the files are still as it left them.
    #[command(
        after_help = "Examples, in the workspace `curator init --example ws` writes (cd ws first):\n  $ curator curate runs/failed.json\n  $ curator undo r2\n"
    )]
    Undo(UndoArgs),
    /// The circuit breaker of a run session or suite: status, record an outcome, reset.
    Breaker(BreakerArgs),
    /// The review queue: new memory an agent or a model proposed waits here until approved.
    #[command(
        after_help = "Examples, in the workspace `curator init --example ws` writes (cd ws first):\n  $ curator curate runs/passed.json\n  $ curator review list\n"
    )]
    Review(ReviewArgs),
    /// Harness memory: raw.md, MEMORY.md, summary.md, identity files and issue triage.
    Harness(crate::cmd::harness::HarnessArgs),
    /// Serve MCP on stdin/stdout: memory tools for an agent (query, record a run, propose
    /// decisions, read observations, harness log and context).
    Mcp(crate::cmd::mcp::McpArgs),
    /// Serve the HTTP JSON API, the web UI and MCP over HTTP (127.0.0.1:7878 by default).
    Serve(crate::cmd::serve::ServeArgs),
    /// Move the memory root into PostgreSQL: its journal (history, applied runs, evidence), its
    /// observations and its review queue (idempotent, byte-exact; exit 3 if a file is refused).
    Import(crate::cmd::pg::DatabaseArgs),
    /// Write every observation in PostgreSQL to the memory root, and remove the files of
    /// observations the database deleted (idempotent, byte-exact; exit 3 if a file of the root
    /// is not in the database: reported, left in place).
    Export(crate::cmd::pg::DatabaseArgs),
    /// Apply pending PostgreSQL schema migrations, or show them with --status.
    Migrate(crate::cmd::pg::MigrateArgs),
}

/// `curator init`.
#[derive(Debug, Args)]
pub(crate) struct InitArgs {
    /// Write the example workspace into DIR instead: agent-qa.config.yaml, the memory root
    /// agent-qa-memory/ and the run records runs/*.json that README's "A run, end to end" uses.
    /// DIR may exist; nothing in it is ever overwritten (the command refuses first). --root and
    /// --store do not apply.
    #[arg(long, value_name = "DIR")]
    pub(crate) example: Option<PathBuf>,
}

/// `curator add`.
#[derive(Debug, Args)]
pub(crate) struct AddArgs {
    /// Tier: product(s), suite(s) or test(s).
    #[arg(long, value_name = "TIER", value_parser = parse_tier)]
    pub(crate) tier: Tier,
    /// Scope folder: the product, the suite id or the test id.
    #[arg(long, value_name = "SCOPE", value_parser = parse_nonempty)]
    pub(crate) scope: String,
    /// Title: a context-first fact headline (may start with `-`: `--title "- item"`).
    #[arg(long, allow_hyphen_values = true, value_parser = parse_title)]
    pub(crate) title: String,
    /// Test id (or name) this observation was learned from.
    #[arg(long, value_name = "ID", value_parser = parse_nonempty)]
    pub(crate) source_test: String,
    /// Initial trust in [0, 1].
    #[arg(long, default_value_t = 0.5, value_parser = parse_unit_interval)]
    pub(crate) trust: f64,
    /// Suite observations: the child test's 0-based position (requires --suite-tests).
    #[arg(long, requires = "suite_tests")]
    pub(crate) position: Option<u64>,
    /// Suite observations: JSON file with the suite's tests, `[{"test":…,"id":…}, …]`.
    #[arg(long, value_name = "FILE", requires = "position")]
    pub(crate) suite_tests: Option<PathBuf>,
    /// Names this request so a retry writes nothing new: the add is journaled under run id
    /// `req-KEY`, and running the command again with the same key prints the observation it
    /// wrote (1-120 characters of A-Z a-z 0-9 . _ -; the same keys as the API's
    /// Idempotency-Key header).
    #[arg(long, value_name = "KEY", value_parser = parse_key)]
    pub(crate) idempotency_key: Option<IdempotencyKey>,
    /// The body (markdown); `-` or nothing reads it from stdin.
    #[arg(value_name = "BODY")]
    pub(crate) body: Option<String>,
}

/// `curator query`.
#[derive(Debug, Args)]
pub(crate) struct QueryArgs {
    /// The product under test: `products/<product>` is searched.
    #[arg(long)]
    pub(crate) product: String,
    /// The test id (or name): `tests/<test>` is searched.
    #[arg(long)]
    pub(crate) test: String,
    /// The suite id (or name) when the step runs as a suite child: `suites/<suite>` is searched.
    #[arg(long)]
    pub(crate) suite: Option<String>,
    /// JSON file with the suite's tests now, `[{"test":…,"id":…}, …]`; with --position, positioned
    /// suite observations whose snapshot matches are seen.
    #[arg(long, value_name = "FILE", requires = "suite")]
    pub(crate) suite_tests: Option<PathBuf>,
    /// The child test's 0-based position in the suite.
    #[arg(long, requires = "suite")]
    pub(crate) position: Option<u64>,
    /// Record the injected ids for this run (with --step-index), so `curate` finds them later.
    #[arg(long, value_name = "RUN_ID", requires = "step_index", alias = "run", value_parser = parse_harness_run_id)]
    pub(crate) run_id: Option<String>,
    /// The 0-based step index within the run (with --run-id).
    #[arg(long, value_name = "N", requires = "run_id", alias = "step", value_parser = parse_step_index)]
    pub(crate) step_index: Option<u64>,
    /// Only inject observations with at least this trust (default: config minTrust, 0.3).
    #[arg(long, value_name = "F", value_parser = parse_unit_interval)]
    pub(crate) min_trust: Option<f64>,
    /// Inject at most this many observations (default: config maxInjections, 3).
    #[arg(long, value_name = "N")]
    pub(crate) max_injections: Option<usize>,
    /// `terms` (default: any relevant word, with a relevance floor) or `phrase` (agent-qa exactly).
    #[arg(long, value_enum)]
    pub(crate) mode: Option<ModeArg>,
    /// Circuit-breaker key to honour (default: the suite id when --suite is given). While that
    /// breaker is tripped nothing is injected.
    #[arg(long, value_name = "KEY")]
    pub(crate) breaker: Option<String>,
    /// The step instruction as the planner sees it; `-` reads it from stdin.
    #[arg(value_name = "STEP_TEXT", required_unless_present = "step_text")]
    pub(crate) text: Option<String>,
    /// The step text as a flag, for scripts that name every argument (same as STEP_TEXT).
    #[arg(long, value_name = "TEXT", conflicts_with = "text", allow_hyphen_values = true)]
    pub(crate) step_text: Option<String>,
}

impl QueryArgs {
    /// The step text, positional or `--step-text` (clap requires exactly one).
    pub(crate) fn step_text(&self) -> &str {
        self.step_text.as_deref().or(self.text.as_deref()).unwrap_or_default()
    }
}

/// Query modes on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ModeArg {
    /// Tokenized, folded, stop words dropped, any-term match with a relevance floor.
    Terms,
    /// agent-qa's behaviour: the whole step as one exact phrase.
    Phrase,
}

/// `curator eval`.
#[derive(Debug, Args)]
pub(crate) struct EvalArgs {
    /// The labelled queries, one JSON object a line (see eval/README.md).
    #[arg(long, value_name = "FILE")]
    pub(crate) queries: PathBuf,
    /// recall@K reads the top K (the injection cap raised to K for the eval); irrelevant
    /// injections are counted at the configured cap (maxInjections).
    #[arg(long, value_name = "K", default_value_t = 3, value_parser = clap::value_parser!(u16).range(1..))]
    pub(crate) k: u16,
    /// Which modes to measure (default: both, terms first); the plain BM25 baseline always runs.
    #[arg(long, value_enum)]
    pub(crate) mode: Option<ModeArg>,
    /// Print every query's returned, missed and irrelevant ids.
    #[arg(long)]
    pub(crate) details: bool,
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
    #[arg(long, value_name = "TIER", value_parser = parse_tier)]
    pub(crate) tier: Option<Tier>,
    /// Only this scope folder (in every tier unless --tier narrows it).
    #[arg(long, value_name = "SCOPE")]
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

/// `curator curate`.
#[derive(Debug, Args)]
#[command(group = clap::ArgGroup::new("provider").args(["decisions", "llm", "rules"]))]
#[command(after_help = "\
Decisions file (--decisions), agent-qa's schema:
  {\"decisions\": [
    {\"action\": \"add\", \"title\": \"…\", \"content\": \"…\", \"scope\": \"product\", \"reasoning\": \"…\"},
    {\"action\": \"update\", \"observationId\": \"obs_…\", \"reasoning\": \"…\"},
    {\"action\": \"deprecate\", \"observationId\": \"obs_…\", \"reasoning\": \"…\"},
    {\"action\": \"noop\", \"reasoning\": \"…\"}]}
  (an add's scope is product, suite or test; every field shown is required)

Exit codes: 0 applied, or already applied (a retry changes nothing); 1 bad input (run record,
decisions, config); 75 nothing applied for now (the curator lock was not taken in time, the LLM
call failed, the database is unreachable, a file a change needed could not be read or written):
curate the same record again, it is applied once.")]
pub(crate) struct CurateArgs {
    /// The run record file (JSON; `-` reads stdin). Steps without `injected` take the ids
    /// recorded by `query --run-id` for the record's `run_id`.
    #[arg(value_name = "RUN_RECORD", required_unless_present = "run_record")]
    pub(crate) run_record_file: Option<PathBuf>,
    /// The run record file, as a flag (same as RUN_RECORD).
    #[arg(long, value_name = "FILE", alias = "run", conflicts_with = "run_record_file")]
    pub(crate) run_record: Option<PathBuf>,
    /// Apply these decisions (agent-qa's decisions JSON; `-` reads stdin).
    #[arg(long, value_name = "DEC.json")]
    pub(crate) decisions: Option<PathBuf>,
    /// Ask the LLM configured in the config's `curator.llm` block.
    #[arg(long)]
    pub(crate) llm: bool,
    /// Decide by rules, no LLM (the default): confirm what was injected into passed steps, add
    /// what the agent flagged with `MEMO:`.
    #[arg(long)]
    pub(crate) rules: bool,
    /// Also record this run in the circuit breaker KEY: the ablation rerun, if any, as a
    /// run without memory, then the run itself, with memory when any step had injections.
    #[arg(long, value_name = "KEY")]
    pub(crate) breaker: Option<String>,
}

impl CurateArgs {
    /// The run record file, positional or `--run-record` (clap requires exactly one).
    pub(crate) fn run_record(&self) -> &std::path::Path {
        self.run_record
            .as_deref()
            .or(self.run_record_file.as_deref())
            .unwrap_or(std::path::Path::new("-"))
    }
}

/// `curator undo`.
#[derive(Debug, Args)]
pub(crate) struct UndoArgs {
    /// The run id whose changes to revert (the `run_id` of its MemoryLog).
    #[arg(value_parser = parse_run_id)]
    pub(crate) run_id: String,
}

/// `curator review`.
///
/// Observations an agent or a model proposes on its own (a `MEMO:` line the rules provider
/// reads, an LLM's add, an MCP or HTTP proposal) wait in the review queue
/// (`<root>/.curator/pending/`, never injected as ordinary memory and never seen by agent-qa)
/// unless `curator.review` is `off`. Approving moves one into its tier folder unchanged;
/// rejecting removes it. Both are journaled under a new run id that `curator undo` reverts.
/// With `curator.review: auto` (the default) the curator also approves a proposal after three
/// probation injections into passed steps.
#[derive(Debug, Args)]
pub(crate) struct ReviewArgs {
    #[command(subcommand)]
    pub(crate) action: ReviewAction,
}

/// What to do with the review queue.
#[derive(Debug, Subcommand)]
pub(crate) enum ReviewAction {
    /// List the proposals waiting for review, with their probation record.
    List(ListArgs),
    /// Approve a proposal: it enters its tier folder unchanged.
    Approve(ReviewDecisionArgs),
    /// Reject a proposal: it leaves the queue (the journal keeps its text).
    Reject(ReviewDecisionArgs),
}

/// `curator review approve|reject`.
#[derive(Debug, Args)]
pub(crate) struct ReviewDecisionArgs {
    /// Observation id (obs_…) of the proposal.
    pub(crate) id: String,
    /// Why (kept in the journal).
    #[arg(long)]
    pub(crate) reason: Option<String>,
}

/// `curator breaker`.
#[derive(Debug, Args)]
pub(crate) struct BreakerArgs {
    #[command(subcommand)]
    pub(crate) action: BreakerAction,
}

/// What to do with a breaker.
#[derive(Debug, Subcommand)]
pub(crate) enum BreakerAction {
    /// Show the window, the failure rates and whether the breaker is tripped.
    Status {
        /// The breaker key: a run session id or a suite id.
        #[arg(value_parser = parse_nonempty)]
        key: String,
    },
    /// Record one finished run and re-evaluate.
    Record {
        /// The breaker key: a run session id or a suite id.
        #[arg(value_parser = parse_nonempty)]
        key: String,
        /// How the run ended.
        #[arg(long, value_parser = ["passed", "failed"])]
        outcome: String,
        /// Whether memory was injected into any step (`with`) or not (`without`: the baseline).
        #[arg(long, value_parser = ["with", "without"])]
        memory: String,
        /// The run this outcome belongs to: a retry with the same id is counted once (the
        /// breaker remembers its newest 256 run ids). Without it every call counts.
        #[arg(long, value_name = "RUN_ID", value_parser = parse_run_id)]
        run_id: Option<String>,
    },
    /// Forget every recorded run and un-trip the breaker.
    Reset {
        /// The breaker key: a run session id or a suite id.
        #[arg(value_parser = parse_nonempty)]
        key: String,
    },
}

/// A value that names something (a title, a scope, a key): not empty.
pub(crate) fn parse_nonempty(raw: &str) -> Result<String, String> {
    if raw.trim().is_empty() { Err("must not be empty".to_owned()) } else { Ok(raw.to_owned()) }
}

/// A title: not empty, and one line (`curator_core::title_line_violation`).
fn parse_title(raw: &str) -> Result<String, String> {
    let title = parse_nonempty(raw)?;
    match curator_core::title_line_violation(&title) {
        Some(rule) => Err(rule.to_owned()),
        None => Ok(title),
    }
}

/// A run id: a plain file name (`A-Z a-z 0-9 . _ -`, not starting with `.`).
fn parse_run_id(raw: &str) -> Result<String, String> {
    curator_engine::session::validate_run_id(raw)
        .map(|()| raw.to_owned())
        .map_err(|e| e.to_string())
}

/// The id of a run a harness runs: a run id that is not one curator journals its own writes
/// under (`req-…`, `undo-…`, `import`).
fn parse_harness_run_id(raw: &str) -> Result<String, String> {
    curator_engine::session::validate_harness_run_id(raw)
        .map(|()| raw.to_owned())
        .map_err(|e| e.to_string())
}

/// A step index every store can key a step by: 0 to 2^53 - 1.
fn parse_step_index(raw: &str) -> Result<u64, String> {
    let step: u64 = raw.trim().parse().map_err(|_| format!("not a step index: {raw}"))?;
    curator_store::check_step_index(step).map(|()| step).map_err(|e| e.to_string())
}

fn parse_key(raw: &str) -> Result<IdempotencyKey, String> {
    IdempotencyKey::parse(raw).map_err(|e| e.to_string())
}

fn parse_tier(raw: &str) -> Result<Tier, String> {
    raw.parse::<Tier>().map_err(|e| e.to_string())
}

/// A trust value: a number in [0, 1] (NaN is not).
fn parse_unit_interval(raw: &str) -> Result<f64, String> {
    match raw.trim().parse::<f64>() {
        Ok(v) if (0.0..=1.0).contains(&v) => Ok(v),
        Ok(_) => Err(format!("must be between 0 and 1, got {raw}")),
        Err(_) => Err(format!("not a number: {raw}")),
    }
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
    fn curate_takes_one_provider_at_most() {
        assert!(parse(&["curate", "--run-record", "r.json"]).is_ok());
        assert!(parse(&["curate", "--run-record", "r.json", "--llm"]).is_ok());
        assert!(parse(&["curate", "--run-record", "r.json", "--llm", "--rules"]).is_err());
        assert!(
            parse(&["curate", "--run-record", "r.json", "--decisions", "d.json", "--rules"])
                .is_err()
        );
        assert!(parse(&["curate", "--decisions", "d.json"]).is_err(), "a run record is required");
    }

    #[test]
    fn one_vocabulary_with_the_old_spellings_as_hidden_aliases() {
        let curate = |argv: &[&str]| match parse(argv).unwrap().command {
            Command::Curate(c) => c.run_record().to_path_buf(),
            other => panic!("{other:?}"),
        };
        assert_eq!(curate(&["curate", "r.json"]), PathBuf::from("r.json"));
        assert_eq!(curate(&["curate", "--run-record", "r.json"]), PathBuf::from("r.json"));
        assert_eq!(curate(&["curate", "--run", "r.json"]), PathBuf::from("r.json"));
        assert!(parse(&["curate", "a.json", "--run-record", "b.json"]).is_err());
        let query = |argv: &[&str]| match parse(argv).unwrap().command {
            Command::Query(q) => (q.run_id.clone(), q.step_index, q.step_text().to_owned()),
            other => panic!("{other:?}"),
        };
        fn with<'a>(extra: &[&'a str]) -> Vec<&'a str> {
            ["query", "--product", "p", "--test", "t"].iter().chain(extra).copied().collect()
        }
        let want = (Some("r1".to_owned()), Some(2), "open the cart".to_owned());
        assert_eq!(query(&with(&["--run-id", "r1", "--step-index", "2", "open the cart"])), want);
        assert_eq!(
            query(&with(&["--run-id", "r1", "--step-index", "2", "--step-text", "open the cart"])),
            want
        );
        assert_eq!(query(&with(&["--run", "r1", "--step", "2", "open the cart"])), want);
        assert!(parse(&with(&[])).is_err(), "the step text is required");
        assert!(parse(&with(&["a", "--step-text", "b"])).is_err(), "one step text");
        assert!(parse(&with(&["--run-id", "r1", "x"])).is_err(), "--run-id needs --step-index");
    }

    #[test]
    fn help_puts_global_flags_apart_and_harness_hides_the_memory_root() {
        let help = |argv: &[&str]| {
            let err = crate::args::parse_from(
                std::iter::once("curator").chain(argv.iter().copied()).map(Into::into),
            )
            .unwrap_err();
            err.render().to_string()
        };
        let query = help(&["query", "--help"]);
        let (own, global) = query.split_once("Global options:").expect("a global heading");
        assert!(own.contains("--run-id") && !own.contains("--root"), "{query}");
        assert!(global.contains("--root") && global.contains("--json"), "{query}");
        assert!(!query.contains("--run ") && !query.contains("--step "), "aliases are hidden");
        for argv in [&["harness", "--help"][..], &["harness", "status", "--help"]] {
            let text = help(argv);
            assert!(!text.contains("--root") && !text.contains("--store"), "{text}");
            assert!(text.contains("--json"), "{text}");
        }
        assert!(help(&["harness", "--help"]).contains("--state-dir"));
    }

    #[test]
    fn breaker_record_needs_outcome_and_memory() {
        assert!(
            parse(&["breaker", "record", "k", "--outcome", "passed", "--memory", "with"]).is_ok()
        );
        assert!(parse(&["breaker", "record", "k", "--outcome", "passed"]).is_err());
        assert!(parse(&["breaker", "record", "k", "--outcome", "ok", "--memory", "with"]).is_err());
        assert!(parse(&["breaker", "status", "k"]).is_ok());
    }

    #[test]
    fn review_takes_a_subcommand_and_an_id() {
        assert!(parse(&["review", "list"]).is_ok());
        assert!(parse(&["review", "list", "--scope", "x"]).is_ok(), "a scope alone, as list");
        assert!(parse(&["review", "approve", "obs_x", "--reason", "checked"]).is_ok());
        assert!(parse(&["review", "reject"]).is_err());
        assert!(parse(&["review"]).is_err());
    }

    #[test]
    fn scope_filter_works_alone_or_with_a_tier() {
        assert!(parse(&["list", "--scope", "acme"]).is_ok());
        assert!(parse(&["list", "--tier", "product", "--scope", "acme"]).is_ok());
    }
}
