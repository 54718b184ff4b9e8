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

use std::collections::BTreeMap;

use curator_store::Result;

use crate::store::PgStore;

/// A run's steps as stored: step → (injected ids, the probation id among them).
pub(crate) type Steps = BTreeMap<u64, (Vec<String>, Option<String>)>;

impl PgStore {
    /// Records that `ids` were injected into `step` of `run_id`, `probation` among them on
    /// probation (replacing an earlier attempt of the step; an empty `ids` removes the step's
    /// entry).
    pub(crate) fn put_injection(
        &self,
        run_id: &str,
        step: u64,
        ids: &[String],
        probation: Option<&str>,
    ) -> Result<()> {
        // Every step index `bigint` holds, so no two steps share a row.
        curator_store::check_step_index(step)?;
        let step_i = i64::try_from(step).unwrap_or(i64::MAX);
        let client = self.client()?;
        // A step that injected nothing keeps a row with no ids: the session still exists, as
        // the file store's session file does, and the run page still finds it.
        let done = self.block_on(async {
            client
                .execute(
                    "INSERT INTO run_steps (run_id, step, injected, probation)
                     VALUES ($1, $2, $3, $4)
                     ON CONFLICT (run_id, step)
                     DO UPDATE SET injected = EXCLUDED.injected,
                         probation = EXCLUDED.probation, updated_at = now()",
                    &[&run_id, &step_i, &ids, &probation],
                )
                .await
        });
        done.map(drop).map_err(|e| Self::db_error(format!("recording run {run_id} step {step}"), e))
    }

    /// Step → (injected ids, probation id) of `run_id`, with an empty list for a step whose
    /// last query injected nothing; `None` when nothing was ever recorded for the run.
    pub(crate) fn session_steps(&self, run_id: &str) -> Result<Option<Steps>> {
        let client = self.client()?;
        let rows = self
            .block_on(client.query(
                "SELECT step, injected, probation FROM run_steps WHERE run_id = $1 ORDER BY step",
                &[&run_id],
            ))
            .map_err(|e| Self::db_error(format!("reading run {run_id}"), e))?;
        if rows.is_empty() {
            return Ok(None);
        }
        Ok(Some(
            rows.iter()
                .map(|r| (u64::try_from(r.get::<_, i64>(0)).unwrap_or(0), (r.get(1), r.get(2))))
                .collect(),
        ))
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
