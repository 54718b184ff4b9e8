//! Outcome evidence in the database (issue 18 item 1): `evidence_runs` holds one row per
//! recorded run id — inserting it is the exactly-once check — and `evidence` / `evidence_tests`
//! hold the counters, raised by additive upserts in the same transaction, so two curators
//! recording different runs at once never lose an increment and a retried run adds nothing.
//! `undo` deletes the run's row and subtracts its tally in its own transaction.
//! The counting rules are curator-store's ([`RunEvidence::tally`]), shared with the file store.

use curator_store::evidence::{Baseline, Evidence, EvidenceQuery, EvidenceView, RunEvidence};
use deadpool_postgres::GenericClient;
use tokio_postgres::Error;

const EVIDENCE_COLUMNS: &str = "runs, passed, failed, before_failure, just_before, \
    ablation_blamed, ablation_cleared, probation_passed, probation_failed";
const BASELINE_COLUMNS: &str = "runs, runs_failed, steps, steps_failed, steps_doomed, \
    steps_just_before, bare_steps, bare_failed, bare_doomed, ablation_runs, ablation_failed";

fn i(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn u(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

/// `col = table.col + EXCLUDED.col, …` for every column.
fn additive(table: &str, columns: &str) -> String {
    columns
        .split(", ")
        .map(|c| format!("{c} = {table}.{c} + EXCLUDED.{c}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Records `run` once; `false` when its run id counts already (nothing is added).
pub(crate) async fn record(c: &impl GenericClient, run: &RunEvidence) -> Result<bool, Error> {
    let json = crate::row::json_shown_nul(&serde_json::to_value(run).unwrap_or_default());
    let stmt = c
        .prepare_cached(
            "INSERT INTO evidence_runs (run_id, test, record) VALUES ($1, $2, $3)
             ON CONFLICT (run_id) DO NOTHING",
        )
        .await?;
    if c.execute(&stmt, &[&run.run_id, &run.test, &json]).await? == 0 {
        return Ok(false);
    }
    add_tally(c, run, 1).await?;
    Ok(true)
}

/// Stops counting `run` (undo of its application); `false` when it did not count.
pub(crate) async fn retract(c: &impl GenericClient, run: &RunEvidence) -> Result<bool, Error> {
    let stmt = c.prepare_cached("DELETE FROM evidence_runs WHERE run_id = $1").await?;
    if c.execute(&stmt, &[&run.run_id]).await? == 0 {
        return Ok(false);
    }
    add_tally(c, run, -1).await?;
    Ok(true)
}

/// Adds `sign` × `run`'s tally to the counters (additive upserts: concurrent runs never lose
/// an increment).
async fn add_tally(c: &impl GenericClient, run: &RunEvidence, sign: i64) -> Result<(), Error> {
    let n = |v: u64| i(v).saturating_mul(sign);
    let tally = run.tally();
    let stmt = c
        .prepare_cached(&format!(
            "INSERT INTO evidence (id, {EVIDENCE_COLUMNS})
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
             ON CONFLICT (id) DO UPDATE SET {}",
            additive("evidence", EVIDENCE_COLUMNS)
        ))
        .await?;
    for (id, e) in &tally.observations {
        c.execute(
            &stmt,
            &[
                id,
                &n(e.runs),
                &n(e.passed),
                &n(e.failed),
                &n(e.before_failure),
                &n(e.just_before),
                &n(e.ablation_blamed),
                &n(e.ablation_cleared),
                &n(e.probation_passed),
                &n(e.probation_failed),
            ],
        )
        .await?;
    }
    let b = tally.baseline;
    let stmt = c
        .prepare_cached(&format!(
            "INSERT INTO evidence_tests (test, {BASELINE_COLUMNS})
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
             ON CONFLICT (test) DO UPDATE SET {}",
            additive("evidence_tests", BASELINE_COLUMNS)
        ))
        .await?;
    c.execute(
        &stmt,
        &[
            &run.test,
            &n(b.runs),
            &n(b.runs_failed),
            &n(b.steps),
            &n(b.steps_failed),
            &n(b.steps_doomed),
            &n(b.steps_just_before),
            &n(b.bare_steps),
            &n(b.bare_failed),
            &n(b.bare_doomed),
            &n(b.ablation_runs),
            &n(b.ablation_failed),
        ],
    )
    .await?;
    Ok(())
}

/// The counters asked for (zeros for what was never recorded).
pub(crate) async fn read(
    c: &impl GenericClient,
    query: &EvidenceQuery,
) -> Result<EvidenceView, Error> {
    let mut view = EvidenceView {
        observations: query.ids.iter().map(|id| (id.clone(), Evidence::default())).collect(),
        tests: query.tests.iter().map(|t| (t.clone(), Baseline::default())).collect(),
    };
    if !query.ids.is_empty() {
        let stmt = c
            .prepare_cached(&format!(
                "SELECT id, {EVIDENCE_COLUMNS} FROM evidence WHERE id = ANY($1)"
            ))
            .await?;
        for r in c.query(&stmt, &[&query.ids]).await? {
            let e = Evidence {
                runs: u(r.get(1)),
                passed: u(r.get(2)),
                failed: u(r.get(3)),
                before_failure: u(r.get(4)),
                just_before: u(r.get(5)),
                ablation_blamed: u(r.get(6)),
                ablation_cleared: u(r.get(7)),
                probation_passed: u(r.get(8)),
                probation_failed: u(r.get(9)),
            };
            view.observations.insert(r.get(0), e);
        }
    }
    if !query.tests.is_empty() {
        let stmt = c
            .prepare_cached(&format!(
                "SELECT test, {BASELINE_COLUMNS} FROM evidence_tests WHERE test = ANY($1)"
            ))
            .await?;
        for r in c.query(&stmt, &[&query.tests]).await? {
            let b = Baseline {
                runs: u(r.get(1)),
                runs_failed: u(r.get(2)),
                steps: u(r.get(3)),
                steps_failed: u(r.get(4)),
                steps_doomed: u(r.get(5)),
                steps_just_before: u(r.get(6)),
                bare_steps: u(r.get(7)),
                bare_failed: u(r.get(8)),
                bare_doomed: u(r.get(9)),
                ablation_runs: u(r.get(10)),
                ablation_failed: u(r.get(11)),
            };
            view.tests.insert(r.get(0), b);
        }
    }
    Ok(view)
}
