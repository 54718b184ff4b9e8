//! `curator add`: write one new observation, scanned and validated, under the lock.

use std::io::Read;
use std::process::ExitCode;

use anyhow::{Context as _, Result, bail};
use curator_core::{Observation, ObservationId, ScopeName, SnapshotEntry, SuitePlacement, Tier};
use curator_engine::once;
use curator_store::Action;

use crate::args::AddArgs;
use crate::context::Context;
use crate::output;

/// Largest body accepted from stdin or the command line.
const MAX_BODY_BYTES: usize = 1 << 20;

pub(crate) fn run(ctx: &Context, args: &AddArgs) -> Result<ExitCode> {
    let tier = args.tier;
    let scope = ScopeName::writable(args.scope.as_str())?;
    let suite = suite_placement(args)?;
    if suite.is_some() && tier != Tier::Suites {
        bail!("--position/--suite-tests only apply to the suites tier");
    }
    let content = read_body(args.body.as_deref())?;
    let now = curator_core::time::now_iso();
    let store = ctx.store()?;
    let key = args.idempotency_key.as_ref();
    let run_id = once::run_id_for(key);
    let mut written: Option<(ObservationId, bool)> = None;
    let mut reused: Option<String> = None;
    store.transact(Some(&run_id), &mut |tx| {
        if let Some(earlier) = once::earlier(tx, key)? {
            let e = &earlier.entry;
            let same = e.action == Action::Add
                && once::adds(e, tier.dir_name(), scope.as_str(), &args.title, &content);
            if let (true, Ok(id)) = (same, ObservationId::parse(&e.id)) {
                written = Some((id, true));
                return Ok(());
            }
            reused = Some(earlier.describe());
            return Ok(());
        }
        // A fresh id never overwrites an existing file (agent-qa does not check, §1.7).
        let mut id = ObservationId::generate();
        while tx.get(&id)?.is_some() {
            id = ObservationId::generate();
        }
        let observation = Observation {
            id: id.clone(),
            title: args.title.clone(),
            content: content.clone(),
            trust: args.trust,
            created: now.clone(),
            last_confirmed: now.clone(),
            confirmed_count: 0,
            contradicted_count: 0,
            source_test: args.source_test.clone(),
            suite: suite.clone(),
            extra: Default::default(),
        };
        tx.put(tier, &scope, &observation, Action::Add, "added with curator add")?;
        written = Some((id, false));
        Ok(())
    })?;
    if let Some(reason) = reused {
        bail!("--idempotency-key: {reason}; use a new key for a new observation");
    }
    let (id, already_applied) = written.context("the store wrote no observation")?;
    if ctx.json {
        let mut out = serde_json::json!({
            "id": id.as_str(),
            "tier": tier.dir_name(),
            "scope": scope.as_str(),
            "run_id": run_id,
        });
        if already_applied {
            out["already_applied"] = true.into();
        }
        output::print_json(&out)?;
    } else {
        output::print_text(&format!("{id}\n"))?;
    }
    if already_applied {
        crate::output::note!("curator: run {run_id} already added {id}; nothing written");
    }
    Ok(ExitCode::SUCCESS)
}

fn suite_placement(args: &AddArgs) -> Result<Option<SuitePlacement>> {
    let (Some(position), Some(path)) = (args.position, &args.suite_tests) else {
        return Ok(None);
    };
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading --suite-tests file {}", path.display()))?;
    let suite_snapshot: Vec<SnapshotEntry> = serde_json::from_str(&text).with_context(|| {
        format!("--suite-tests file {}: expected [{{\"test\":…,\"id\":…}}, …]", path.display())
    })?;
    if suite_snapshot.is_empty() {
        bail!("--suite-tests file {} lists no tests", path.display());
    }
    Ok(Some(SuitePlacement { position, suite_snapshot }))
}

fn read_body(arg: Option<&str>) -> Result<String> {
    let body = match arg {
        Some(text) if text != "-" => text.to_owned(),
        _ => {
            let mut buf = Vec::new();
            std::io::stdin()
                .take(MAX_BODY_BYTES as u64 + 1)
                .read_to_end(&mut buf)
                .context("reading the body from stdin")?;
            String::from_utf8(buf).context("the body on stdin is not UTF-8")?
        }
    };
    if body.len() > MAX_BODY_BYTES {
        bail!("the body is larger than {MAX_BODY_BYTES} bytes");
    }
    // The body is kept byte for byte, trailing newlines included, as agent-qa's writer keeps
    // its content (the file's own final newline comes on top, §1.6; issue 13 item 5). Only
    // `\r\n` becomes `\n`, which is what reading the file back gives anyway (§1.4 rule 3).
    let body = body.replace("\r\n", "\n");
    if body.trim().is_empty() {
        bail!("the body is empty: give it as an argument or on stdin");
    }
    Ok(body)
}
