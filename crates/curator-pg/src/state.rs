//! Run sessions, kept run records and circuit-breaker state in the database
//! (agent-qa-memory §3.4, §9; issue 15's run page).
//!
//! With the file store these live under `<root>/.curator/runs/` and `.curator/breaker/`; a
//! fleet sharing one database needs them shared too, because the query that injected memory
//! and the curate call that blames it may run on different machines. The rules are the file
//! versions': a step's later query replaces its entry, a query that injected nothing removes
//! it. Breaker windows are opaque JSON owned by curator-engine (this crate sits below it);
//! [`PgStore::change_breaker`] changes one under a row lock, so concurrent runs recording
//! outcomes never lose one.

use curator_store::{Result, RunSession, StepRecord};

use crate::store::PgStore;

/// The rows of one run's session, by step.
const SESSION_ROWS: &str =
    "SELECT step, injected, probation FROM run_steps WHERE run_id = $1 ORDER BY step";

/// How often a step's record is decided again because another step of its run was recorded
/// in between (each attempt follows one more record of the run).
const MAX_SESSION_ATTEMPTS: usize = 64;

impl PgStore {
    /// Records that `ids` were injected into `step` of `run_id`, `probation` among them on
    /// probation (replacing an earlier attempt of the step).
    pub(crate) fn put_injection(
        &self,
        run_id: &str,
        step: u64,
        ids: &[String],
        probation: Option<&str>,
    ) -> Result<()> {
        let record = StepRecord { ids: ids.to_vec(), probation: probation.map(str::to_owned) };
        self.update_session_step(run_id, step, &mut |_| Ok(record.clone()))
    }

    /// Reads the run's session, asks `decide` and writes its answer for `step`, so that no
    /// other step's record comes in between: the write happens in a transaction holding the
    /// run's session lock (an advisory lock) only if the session is still what `decide` saw,
    /// and otherwise `decide` is asked again. `decide` reads the store itself, so it runs with
    /// no connection held (holding one while it asks the pool for another could exhaust the
    /// pool). A step that injected nothing keeps a row with no ids when it had one (the session
    /// still exists, as the file store's file does), and adds none when it had none.
    pub(crate) fn update_session_step(
        &self,
        run_id: &str,
        step: u64,
        decide: &mut dyn FnMut(Option<&RunSession>) -> Result<StepRecord>,
    ) -> Result<()> {
        // Every step index `bigint` holds, so no two steps share a row.
        curator_store::check_step_index(step)?;
        let step_i = i64::try_from(step).unwrap_or(i64::MAX);
        let what = || format!("recording run {run_id} step {step}");
        for _ in 0..MAX_SESSION_ATTEMPTS {
            let seen = self.session(run_id)?;
            let record = decide(seen.as_ref())?;
            let mut client = self.client()?;
            let tx = self.block_on(client.transaction()).map_err(|e| Self::db_error(what(), e))?;
            self.guard_schema(&tx)?;
            let rows = self
                .block_on(async {
                    tx.execute(
                        "SELECT pg_advisory_xact_lock(hashtext('run-session:' || $1))",
                        &[&run_id],
                    )
                    .await?;
                    tx.query(SESSION_ROWS, &[&run_id]).await
                })
                .map_err(|e| Self::db_error(what(), e))?;
            if session_of(run_id, &rows) != seen {
                continue; // another step was recorded meanwhile: decide again (rolled back)
            }
            let written = self.block_on(async {
                if record.ids.is_empty() {
                    tx.execute(
                        "UPDATE run_steps SET injected = '{}', probation = NULL, updated_at = now()
                         WHERE run_id = $1 AND step = $2",
                        &[&run_id, &step_i],
                    )
                    .await?;
                } else {
                    tx.execute(
                        "INSERT INTO run_steps (run_id, step, injected, probation)
                         VALUES ($1, $2, $3, $4)
                         ON CONFLICT (run_id, step)
                         DO UPDATE SET injected = EXCLUDED.injected,
                             probation = EXCLUDED.probation, updated_at = now()",
                        &[&run_id, &step_i, &record.ids, &record.probation],
                    )
                    .await?;
                }
                tx.commit().await
            });
            return written.map_err(|e| Self::db_error(what(), e));
        }
        Err(curator_store::Error::Aborted {
            reason: format!(
                "run {run_id} step {step}: the run's other steps kept changing its session                  ({MAX_SESSION_ATTEMPTS} attempts)"
            ),
        })
    }

    /// The session of `run_id` as recorded; `None` when nothing ever was.
    pub(crate) fn session(&self, run_id: &str) -> Result<Option<RunSession>> {
        let client = self.client()?;
        let rows = self
            .block_on(client.query(SESSION_ROWS, &[&run_id]))
            .map_err(|e| Self::db_error(format!("reading run {run_id}"), e))?;
        Ok(session_of(run_id, &rows))
    }

    /// Keeps `record` under `run_id`, replacing what was kept before.
    pub(crate) fn keep_run_row(&self, run_id: &str, record: &serde_json::Value) -> Result<()> {
        let client = self.client()?;
        // A step's error or observation copied from a page can hold a NUL, which jsonb refuses.
        let record = crate::row::json_shown_nul(record);
        self.block_on(client.execute(
            "INSERT INTO run_records (run_id, record) VALUES ($1, $2)
             ON CONFLICT (run_id) DO UPDATE SET record = EXCLUDED.record, kept_at = now()",
            &[&run_id, &record],
        ))
        .map_err(|e| Self::db_error(format!("keeping run record {run_id}"), e))?;
        Ok(())
    }

    /// What [`Self::keep_run_row`] kept for `run_id`.
    pub(crate) fn run_row(&self, run_id: &str) -> Result<Option<serde_json::Value>> {
        let client = self.client()?;
        let row = self
            .block_on(
                client.query_opt("SELECT record FROM run_records WHERE run_id = $1", &[&run_id]),
            )
            .map_err(|e| Self::db_error(format!("reading run record {run_id}"), e))?;
        Ok(row.map(|r| r.get::<_, serde_json::Value>(0)))
    }

    /// The breaker window stored under `key`, if any.
    pub(crate) fn breaker_row(&self, key: &str) -> Result<Option<serde_json::Value>> {
        let client = self.client()?;
        let row = self
            .block_on(client.query_opt("SELECT state FROM breaker_state WHERE key = $1", &[&key]))
            .map_err(|e| Self::db_error(format!("reading breaker {key}"), e))?;
        Ok(row.map(|r| r.get::<_, serde_json::Value>(0)).filter(|v| !v.is_null()))
    }

    /// Replaces the window under `key` with what `change` makes of the current one (`None`
    /// when there is none yet), holding the row's lock throughout; returns the new window.
    pub(crate) fn change_breaker(
        &self,
        key: &str,
        change: &mut dyn FnMut(Option<serde_json::Value>) -> serde_json::Value,
    ) -> Result<serde_json::Value> {
        let mut client = self.client()?;
        let what = || format!("updating breaker {key}");
        let tx = self.block_on(client.transaction()).map_err(|e| Self::db_error(what(), e))?;
        self.guard_schema(&tx)?;
        let current = self
            .block_on(async {
                tx.execute(
                    "INSERT INTO breaker_state (key, state) VALUES ($1, 'null') ON CONFLICT (key) DO NOTHING",
                    &[&key],
                )
                .await?;
                tx.query_one("SELECT state FROM breaker_state WHERE key = $1 FOR UPDATE", &[&key]).await
            })
            .map_err(|e| Self::db_error(what(), e))?;
        let current: serde_json::Value = current.get(0);
        let next = change(Some(current).filter(|v| !v.is_null()));
        self.block_on(async {
            tx.execute(
                "UPDATE breaker_state SET state = $2, updated_at = now() WHERE key = $1",
                &[&key, &next],
            )
            .await?;
            tx.commit().await
        })
        .map_err(|e| Self::db_error(what(), e))?;
        Ok(next)
    }
}

/// The session the rows of `run_steps` of `run_id` make; a step row with no ids (its last
/// query injected nothing) keeps the session but has no entry, as in the file store.
fn session_of(run_id: &str, rows: &[tokio_postgres::Row]) -> Option<RunSession> {
    if rows.is_empty() {
        return None;
    }
    let mut session = RunSession { run_id: run_id.to_owned(), ..RunSession::default() };
    for row in rows {
        let step = u64::try_from(row.get::<_, i64>(0)).unwrap_or(0);
        let ids: Vec<String> = row.get(1);
        let probation: Option<String> = row.get(2);
        if ids.is_empty() {
            continue;
        }
        session.injected.insert(step, ids);
        if let Some(p) = probation {
            session.probation.insert(step, p);
        }
    }
    Some(session)
}
