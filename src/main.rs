//! `curator`: the command-line surface of the curator memory engine.
//!
//! The binary is thin on purpose (as ripgrep's `core` crate is): it parses flags, turns them into
//! requests to the library crates, prints the result as text or `--json`, and decides the exit
//! code in exactly one place — 0 ok, 1 error, 2 usage, 3 lint problems found, 75 nothing done
//! for now (a lock held), try again.

use std::process::ExitCode;

mod args;
mod cmd;
mod context;
mod output;

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args_os().map(|a| a.to_string_lossy().into_owned()).collect();
    let args = match args::parse_from(std::env::args_os()) {
        Ok((args, matches)) => {
            let warnings = args::deprecation_warnings(&argv, &matches);
            for warning in warnings.into_iter().chain(args::ignored_flag_warnings(&matches)) {
                crate::output::note!("{warning}");
            }
            args
        }
        Err(err) => {
            // clap prints help/version to stdout (exit 0) and usage errors to stderr (exit 2).
            let code = if err.use_stderr() { 2 } else { 0 };
            let _ = err.print();
            // `--json` promises one JSON document on stdout, usage errors included.
            if err.use_stderr() && argv.iter().skip(1).any(|a| a == "--json") {
                let message = err.render().to_string();
                let message = message.trim().trim_start_matches("error: ");
                let _ = output::print_json(&serde_json::json!({
                    "error": { "message": message, "code": "usage", "kind": "usage" }
                }));
            }
            return ExitCode::from(code);
        }
    };
    init_tracing(args.global.verbose);
    let json = args.global.json;
    match cmd::run(args) {
        Ok(code) => code,
        // A reader that stopped early (`curator --json list | head`): nothing left to say.
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            let message = error_chain(&err);
            crate::output::note!("error: {message}");
            if json {
                // `--json` promises one JSON document on stdout: a script parsing it gets the
                // error too, instead of a decode error on empty output, with the code the HTTP
                // API gives the same error (`not_found`, `invalid_id`, `lock_timeout`…).
                let mut error = serde_json::json!({ "message": message });
                if let Some(code) = curator_server::code_of(err.chain()) {
                    error["code"] = code.into();
                }
                let _ = output::print_json(&serde_json::json!({ "error": error }));
            }
            ExitCode::from(if is_lock_timeout(&err) { cmd::curate::UNAPPLIED_EXIT } else { 1 })
        }
    }
}

/// Whether `err` is stdout's reader having gone away.
fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
            || cause.downcast_ref::<serde_json::Error>().and_then(|e| e.io_error_kind())
                == Some(std::io::ErrorKind::BrokenPipe)
    })
}

/// A write that could not take the lock in time changed nothing: exit 75 ("try again"), as
/// `curate` does, so a harness retries `add`, `rm`, `undo` and `review` the same way; so does a
/// harness triage refused because a pass holds the pass lock, and any command whose PostgreSQL
/// server could not be reached.
fn is_lock_timeout(err: &anyhow::Error) -> bool {
    use curator_engine::QueryError;
    use curator_engine::breaker::BreakerError;
    use curator_engine::review::ReviewError;
    use curator_engine::session::SessionError;
    use curator_engine::undo::UndoError;
    use curator_store::Error;
    // The library errors that wrap a store error transparently: the store error is no link of
    // the chain of its own, so each wrapper is asked for it.
    fn session(e: &SessionError) -> Option<&Error> {
        match e {
            SessionError::Store(e) => Some(e),
            _ => None,
        }
    }
    err.chain().any(|cause| {
        let store = cause
            .downcast_ref::<Error>()
            .or_else(|| match cause.downcast_ref::<ReviewError>() {
                Some(ReviewError::Store(e)) => Some(e),
                _ => None,
            })
            .or_else(|| match cause.downcast_ref::<UndoError>() {
                Some(UndoError::Store(e)) => Some(e),
                _ => None,
            })
            .or_else(|| match cause.downcast_ref::<QueryError>() {
                Some(QueryError::Store(e)) => Some(e),
                Some(QueryError::Session(e)) => session(e),
                _ => None,
            })
            .or_else(|| cause.downcast_ref::<SessionError>().and_then(session))
            .or_else(|| match cause.downcast_ref::<BreakerError>() {
                Some(BreakerError::Store(e)) => Some(e),
                _ => None,
            });
        matches!(store, Some(Error::LockTimeout { .. }))
            || store.is_some_and(curator_pg::is_unavailable)
            || cause.downcast_ref::<curator_pg::PgError>().is_some_and(|e| e.is_retryable())
            || matches!(
                cause.downcast_ref::<curator_harness::Error>(),
                Some(curator_harness::Error::Busy { .. })
            )
    })
}

/// The error and its causes on one line. Library errors often print their source inside their
/// own message already, so a cause whose text is already shown is not repeated.
fn error_chain(err: &anyhow::Error) -> String {
    let mut message = err.to_string();
    for cause in err.chain().skip(1) {
        let cause = cause.to_string();
        if !message.contains(&cause) {
            message.push_str(": ");
            message.push_str(&cause);
        }
    }
    message
}

fn init_tracing(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "info",
        _ => "debug",
    };
    // tantivy warns about what it skips (a token too long to index) in words meant for its
    // developers; curator says what matters itself, so its warnings wait for -v.
    let default =
        if verbose == 0 { format!("{default},tantivy=error") } else { default.to_owned() };
    let filter = tracing_subscriber::EnvFilter::try_from_env("CURATOR_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    // Colours only for a person at a terminal: a harness reading stderr from a pipe gets text.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(ansi)
        .try_init();
}
