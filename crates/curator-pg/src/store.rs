//! `PgStore`: the [`Store`] trait over one PostgreSQL database (issue 7 items 1-3).
//!
//! Many processes on many machines share one database. Where the file store serializes every
//! writer on one lock file, this store relies on PostgreSQL: a [`Store::transact`] call is one
//! SQL transaction (READ COMMITTED), every row it reads is locked `FOR UPDATE` until it ends,
//! and its journal rows commit with its changes, so either all of a curator run is visible or
//! none of it. Deadlocks and serialization failures roll the transaction back and run `body`
//! again (at most [`PgOptions::max_attempts`] times, with jittered backoff).
//!
//! The trait is blocking; the store owns a small tokio runtime and blocks on it. **Callers in
//! async code must call it from `tokio::task::spawn_blocking`** (curator-server does): blocking
//! an async worker stalls every other task on it. A call made from inside a runtime anyway is
//! run on a helper thread instead of panicking, and logged.

use std::future::Future;
use std::time::Duration;

use curator_store::index::{Hit, SearchRequest};
use curator_store::{
    Error, JournalEntry, JournalFilter, ListFilter, Listing, Result, RunSession, Store, Transaction,
};
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use tokio_postgres::error::SqlState;

use crate::error::PgError;
use crate::migrate::{self, MIGRATIONS, MigrationsStatus};
use crate::row::refused;
use crate::sql;
use crate::transaction::{Aborted, PgTransaction};
use crate::watch::{Connections, WatchedConnect};

/// Settings of a [`PgStore`].
#[derive(Debug, Clone)]
pub struct PgOptions {
    /// Connections kept open by this process.
    pub pool_size: usize,
    /// Apply pending migrations on open (the default). When `false`, a database that is not
    /// at [`crate::SCHEMA_VERSION`] can still be inspected with
    /// [`PgStore::migrations_status`] and migrated with [`PgStore::migrate`].
    pub migrate: bool,
    /// How often a transaction is tried before a deadlock or serialization failure is returned.
    pub max_attempts: u32,
    /// Longest wait for a new connection or a free one from the pool.
    pub timeout: Duration,
    /// Longest wait of a transaction for a lock another session holds (a row, or a run's
    /// advisory lock): PostgreSQL's `lock_timeout`, set per transaction. When it passes, the
    /// transaction rolls back and `transact` returns [`Error::LockTimeout`], as the file store
    /// does when its writer lock is not taken in time (`curatorLockTimeout`). `None` waits as
    /// long as the holder holds it.
    pub lock_timeout: Option<Duration>,
    /// Longest any one call waits for the server to answer before every connection of the
    /// store is closed and the call fails as unavailable (`watch.rs`): a server that keeps its
    /// connections but never answers would hold it for ever. `None`: twice `lock_timeout` plus
    /// 5 s, the longest a healthy server may keep a call waiting on a lock (agent-qa's 2·T),
    /// or 10 minutes without a lock timeout. Migrations are not bounded by it.
    pub stall_limit: Option<Duration>,
}

impl PgOptions {
    /// [`Self::stall_limit`] as it applies.
    pub fn stall_limit(&self) -> Duration {
        self.stall_limit.unwrap_or_else(|| match self.lock_timeout {
            Some(lock) => lock.saturating_mul(2) + Duration::from_secs(5),
            None => Duration::from_secs(600),
        })
    }
}

impl Default for PgOptions {
    fn default() -> Self {
        PgOptions {
            pool_size: 4,
            migrate: true,
            max_attempts: 10,
            timeout: Duration::from_secs(30),
            lock_timeout: Some(curator_store::LockOptions::DEFAULT_TIMEOUT),
            stall_limit: None,
        }
    }
}

/// The tokio runtime the blocking API runs on; shut down without waiting when dropped, so
/// dropping a store inside async code does not panic.
struct Runtime(Option<tokio::runtime::Runtime>);

impl Drop for Runtime {
    fn drop(&mut self) {
        if let Some(rt) = self.0.take() {
            rt.shutdown_background();
        }
    }
}

/// Observations, journal, run sessions, run records and breaker state in one PostgreSQL
/// database.
pub struct PgStore {
    pool: Pool,
    /// Every connection the pool opened, to close them all when the server stops answering.
    connections: Connections,
    // Declared after `pool` so connections are dropped before the runtime that drives them.
    runtime: Runtime,
    target: String,
    options: PgOptions,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore").field("target", &self.target).finish_non_exhaustive()
    }
}

/// `host:port/dbname` of a config: how the database is named in messages (no password).
fn describe(config: &tokio_postgres::Config) -> String {
    let host = match config.get_hosts().first() {
        Some(tokio_postgres::config::Host::Tcp(h)) => h.clone(),
        Some(tokio_postgres::config::Host::Unix(p)) => p.display().to_string(),
        None => "localhost".to_owned(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let db = config.get_dbname().or(config.get_user()).unwrap_or("postgres");
    format!("{host}:{port}/{db}")
}

/// `host:port/dbname` of the connection string `url`, for messages: never the password.
pub fn target_of(url: &str) -> Result<String, PgError> {
    let config: tokio_postgres::Config =
        url.parse().map_err(|e: tokio_postgres::Error| PgError::Config(e.to_string()))?;
    Ok(describe(&config))
}

/// What a lost answer to COMMIT is reported as: whether the change stands is unknown.
pub const COMMITTING: &str = "committing (the change may or may not stand: retry with the same \
     run id or idempotency key, which applies it at most once)";

/// `config` with every wait bounded that the driver leaves open, and named.
///
/// * A database host that vanishes (a partition, a machine that died) sends no reset, and the
///   kernel retransmits for about 15 minutes while every command waits: TCP keepalives notice
///   an idle connection's peer is gone, `tcp_user_timeout` a busy one's (TCP only).
/// * Every lock wait of every statement is bounded by `lock_timeout`, not only those of
///   [`Store::transact`] (which sets it per transaction): an import, a run session's step or a
///   breaker behind a row another session holds (a client gone mid-transaction) gives up
///   after `curatorLockTimeout` as a curate does, instead of waiting for ever.
///
/// A server that keeps the connection but never answers (stopped, wedged) is not bounded
/// here: its kernel still acknowledges every byte.
fn bounded(mut config: tokio_postgres::Config, options: &PgOptions) -> tokio_postgres::Config {
    // So an operator tells curator's sessions apart in pg_stat_activity (the URL may name one).
    if config.get_application_name().is_none() {
        config.application_name("curator");
    }
    config
        .keepalives(true)
        .keepalives_idle(Duration::from_secs(30))
        .keepalives_interval(Duration::from_secs(5))
        .keepalives_retries(3)
        .tcp_user_timeout(Duration::from_secs(60));
    if let Some(limit) = options.lock_timeout {
        let set = format!("-c lock_timeout={}ms", limit.as_millis().max(1));
        let all = match config.get_options() {
            Some(given) if !given.trim().is_empty() => format!("{given} {set}"),
            _ => set,
        };
        config.options(all);
    }
    config
}

impl PgStore {
    /// Opens the database at `url` (`postgres://user@host:port/db` or `host=… dbname=…`),
    /// checks that it is reachable, refuses a schema newer than this binary, and applies pending
    /// migrations unless `options.migrate` is off.
    pub fn connect(url: &str, options: PgOptions) -> Result<Self, PgError> {
        let config: tokio_postgres::Config =
            url.parse().map_err(|e: tokio_postgres::Error| PgError::Config(e.to_string()))?;
        // The driver would try localhost:5432 and then say the host is missing; say it first.
        if config.get_hosts().is_empty() && config.get_hostaddrs().is_empty() {
            return Err(PgError::Config(
                "the URL names no host (no local socket is assumed): write \
                 postgres://user@host:port/database, or add ?host=/run/postgresql for a Unix socket"
                    .to_owned(),
            ));
        }
        let target = describe(&config);
        let config = bounded(config, &options);
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("curator-pg")
            .enable_all()
            .build()
            .map_err(PgError::Runtime)?;
        let connections = Connections::default();
        let manager = Manager::from_connect(
            config,
            WatchedConnect(connections.clone()),
            ManagerConfig { recycling_method: RecyclingMethod::Fast },
        );
        let pool = Pool::builder(manager)
            .max_size(options.pool_size.max(1))
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .create_timeout(Some(options.timeout))
            .wait_timeout(Some(options.timeout))
            .build()
            .map_err(|e| PgError::Config(e.to_string()))?;
        let store = PgStore { pool, connections, runtime: Runtime(Some(runtime)), target, options };
        // Read first: a database already at this binary's schema is not written to at all, so
        // a read-only one (a standby, `default_transaction_read_only`) still serves reads.
        let status = store.migrations_status()?;
        if store.options.migrate && status.migrations.iter().any(|m| m.applied_at.is_none()) {
            store.migrate()?;
        }
        Ok(store)
    }

    /// `host:port/dbname`: the database this store uses.
    pub fn target(&self) -> &str {
        &self.target
    }

    /// The options the store was opened with.
    pub fn options(&self) -> &PgOptions {
        &self.options
    }

    /// Applies pending migrations (idempotent); returns the versions applied now. Not bounded
    /// by the stall limit: a backfill over a large database may take long.
    pub fn migrate(&self) -> Result<Vec<i32>, PgError> {
        let mut client = self.connection()?;
        self.block_on_unbounded(migrate::apply(&mut client, &self.target, MIGRATIONS))
    }

    /// Every migration, applied or pending, with the database's and this binary's versions.
    /// Refuses a database newer than this binary.
    pub fn migrations_status(&self) -> Result<MigrationsStatus, PgError> {
        let client = self.connection()?;
        self.block_on(migrate::status(&client, &self.target, MIGRATIONS))
    }

    /// The row version of `id` (1 when inserted, +1 on every write), `None` without a row.
    pub fn row_version(&self, id: &curator_core::ObservationId) -> Result<Option<i64>> {
        let client = self.client()?;
        let row = self
            .block_on(sql::by_id(&client, sql::Table::Observations, id.as_str(), false))
            .map_err(|e| Self::db_error(format!("reading {id}"), e))?;
        Ok(row.map(|r| r.version))
    }

    /// The served rows of `table` matching `filter`, and the ones that cannot be served.
    fn listing(&self, table: sql::Table, filter: &ListFilter) -> Result<Listing> {
        let client = self.client()?;
        let tier = filter.tier.map(|t| t.dir_name());
        let scope = filter.scope.as_ref().map(|s| s.as_str());
        let rows = self
            .block_on(sql::all_rows(&client, table, tier, scope))
            .map_err(|e| Self::db_error(format!("listing {}", table.name()), e))?;
        let mut listing = Listing::default();
        for row in rows {
            match row.into_stored() {
                Ok(stored) => listing.observations.push(stored),
                Err(problem) => listing.problems.push(problem),
            }
        }
        Ok(listing)
    }

    /// The row of `id` in `table`, `None` when there is none.
    fn row(
        &self,
        table: sql::Table,
        id: &curator_core::ObservationId,
    ) -> Result<Option<curator_store::StoredObservation>> {
        let client = self.client()?;
        let row = self
            .block_on(sql::by_id(&client, table, id.as_str(), false))
            .map_err(|e| Self::db_error(format!("reading {id}"), e))?;
        row.map(|r| r.into_stored().map_err(refused)).transpose()
    }

    /// Every row as stored, in tier, scope, id order (export reads the exact texts).
    pub(crate) fn raw_rows(&self) -> Result<Vec<crate::row::RawRow>> {
        let client = self.client()?;
        self.block_on(sql::all_rows(&client, sql::Table::Observations, None, None))
            .map_err(|e| Self::db_error("listing observations", e))
    }

    /// Runs raw SQL: only for tests that must put the database in a state the API refuses to
    /// create (a newer schema version, an edited migration). Panics on failure.
    #[doc(hidden)]
    pub fn execute_for_tests(&self, sql: &str) {
        let client = self.client().expect("connection");
        self.block_on(client.batch_execute(sql)).expect("test SQL");
    }

    fn connection(&self) -> Result<deadpool_postgres::Client, PgError> {
        self.block_on(self.pool.get())
            .map_err(|e| PgError::Connect { target: self.target.clone(), source: Box::new(e) })
    }

    /// A pooled connection, for the trait's operations.
    pub(crate) fn client(&self) -> Result<deadpool_postgres::Client> {
        self.block_on(self.pool.get()).map_err(|e| Error::Database {
            what: format!("getting a connection to {}", self.target),
            source: Box::new(e),
        })
    }

    /// Runs `fut` to completion on the store's runtime. When the server has not answered it
    /// within the stall limit, every connection of the store is closed, which fails the call
    /// (a database call: its connection is gone) instead of waiting for ever (`watch.rs`).
    pub(crate) fn block_on<F>(&self, fut: F) -> F::Output
    where
        F: Future + Send,
        F::Output: Send,
    {
        let limit = self.options.stall_limit();
        let connections = &self.connections;
        let target = &self.target;
        self.block_on_unbounded(async move {
            let mut fut = std::pin::pin!(fut);
            if let Ok(out) = tokio::time::timeout(limit, fut.as_mut()).await {
                return out;
            }
            let closed = connections.close_all();
            tracing::error!(
                "{target} did not answer for {limit:?}: closed this process's {closed} \
                 connection(s) to it"
            );
            fut.await
        })
    }

    /// [`Self::block_on`] without the stall limit.
    fn block_on_unbounded<F>(&self, fut: F) -> F::Output
    where
        F: Future + Send,
        F::Output: Send,
    {
        let Some(rt) = self.runtime.0.as_ref() else {
            unreachable!("the runtime is only taken when the store is dropped")
        };
        if tokio::runtime::Handle::try_current().is_ok() {
            // Blocking inside a runtime would panic; a helper thread blocks instead. The
            // server lands here on every request although it calls from `spawn_blocking`
            // (those threads carry the runtime's context too), so this is not a warning.
            tracing::debug!("PgStore called inside a tokio runtime: blocking on a helper thread");
            return std::thread::scope(|s| match s.spawn(|| rt.block_on(fut)).join() {
                Ok(out) => out,
                Err(panic) => std::panic::resume_unwind(panic),
            });
        }
        rt.block_on(fut)
    }

    /// [`migrate::guard_schema`] for a write transaction of this store: a database another
    /// machine's newer curator migrated since this process connected is refused, naming the
    /// remedy, instead of receiving rows shaped for the old schema.
    pub(crate) fn guard_schema(&self, tx: &deadpool_postgres::Transaction<'_>) -> Result<()> {
        let newer = self
            .block_on(migrate::guard_schema(tx))
            .map_err(|e| Self::db_error("checking the schema version", e))?;
        match newer {
            None => Ok(()),
            Some((found, supported)) => Err(Error::Database {
                what: "writing".into(),
                source: Box::new(PgError::SchemaTooNew {
                    target: format!("{} (migrated while this process ran)", self.target),
                    found,
                    supported,
                }),
            }),
        }
    }

    /// Wraps a driver error of operation `what`.
    pub(crate) fn db_error(what: impl Into<String>, e: tokio_postgres::Error) -> Error {
        Error::Database { what: what.into(), source: Box::new(e) }
    }

    /// One attempt of [`Store::transact`].
    fn attempt(
        &self,
        run_id: Option<&str>,
        body: &mut dyn FnMut(&mut dyn Transaction) -> Result<()>,
    ) -> Result<()> {
        let mut client = self.client()?;
        let tx = self
            .block_on(client.transaction())
            .map_err(|e| Self::db_error("starting a transaction", e))?;
        if let Some(limit) = self.options.lock_timeout {
            // SET LOCAL ends with the transaction, so a pooled connection keeps no setting.
            let set = format!("SET LOCAL lock_timeout = '{}ms'", limit.as_millis().max(1));
            self.block_on(tx.batch_execute(&set))
                .map_err(|e| Self::db_error("setting the lock timeout", e))?;
        }
        self.guard_schema(&tx)?;
        let mut ptx = PgTransaction::new(self, tx, run_id);
        let result = ptx.lock_run().and_then(|()| body(&mut ptx));
        let (tx, aborted) = ptx.finish();
        if let Some(aborted) = aborted {
            let _ = self.block_on(tx.rollback());
            if aborted.lock_timeout {
                return Err(Error::LockTimeout {
                    path: format!("{} (a row or run lock another session holds)", self.target)
                        .into(),
                    holder: None,
                    waited: self.options.lock_timeout.unwrap_or_default(),
                });
            }
            return Err(aborted.into_error());
        }
        match result {
            Err(e) => {
                if let Err(rb) = self.block_on(tx.rollback()) {
                    tracing::warn!("rolling back after a failed transaction: {rb}");
                }
                Err(e)
            }
            // The answer to COMMIT lost: the change may stand. Said so, because a caller
            // that retries without a run id or an idempotency key applies it again.
            Ok(()) => self.block_on(tx.commit()).map_err(|e| Self::db_error(COMMITTING, e)),
        }
    }
}

/// Whether `err` is a conflict that a fresh attempt of the whole transaction can get past.
pub(crate) fn is_retryable(err: &Error) -> bool {
    let Error::Database { source, .. } = err else { return false };
    if let Some(aborted) = source.downcast_ref::<Aborted>() {
        return aborted.retryable;
    }
    source.downcast_ref::<tokio_postgres::Error>().is_some_and(is_conflict)
}

/// Whether `err` says the database could not be reached or went away mid-way (a dropped or
/// refused connection, a server shutting down or refusing connections, no free connection in
/// time), so that nothing was applied *for now* and the same call may succeed later — the
/// failures a harness retries, as it retries a lock timeout. A commit whose answer was lost is
/// among them; a retried `curate` then finds its run applied, once.
pub fn is_unavailable(err: &Error) -> bool {
    let Error::Database { source, .. } = err else { return false };
    if let Some(aborted) = source.downcast_ref::<Aborted>() {
        return aborted.unavailable;
    }
    if let Some(e) = source.downcast_ref::<tokio_postgres::Error>() {
        return driver_unavailable(e);
    }
    match source.downcast_ref::<deadpool_postgres::PoolError>() {
        Some(deadpool_postgres::PoolError::Backend(e)) => driver_unavailable(e),
        Some(deadpool_postgres::PoolError::Timeout(_)) => true,
        _ => false,
    }
}

/// A driver error with its causes: the driver's own text is only its kind (`db error`, `error
/// communicating with the server`), the server's message or the I/O error is its source.
pub(crate) fn driver_message(e: &tokio_postgres::Error) -> String {
    use std::error::Error as _;
    let mut message = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        message.push_str(": ");
        message.push_str(&c.to_string());
        cause = c.source();
    }
    message
}

/// A driver error of an unreachable or departing server: a closed connection or an I/O
/// failure, connection exceptions (class 08), `admin_shutdown`, `crash_shutdown`,
/// `cannot_connect_now` and `too_many_connections`.
pub(crate) fn driver_unavailable(e: &tokio_postgres::Error) -> bool {
    use std::error::Error as _;
    match e.code() {
        None => e.is_closed() || e.source().is_some_and(|s| s.is::<std::io::Error>()),
        Some(c) => {
            c.code().starts_with("08")
                || [
                    SqlState::ADMIN_SHUTDOWN,
                    SqlState::CRASH_SHUTDOWN,
                    SqlState::CANNOT_CONNECT_NOW,
                    SqlState::TOO_MANY_CONNECTIONS,
                    // A lock wait outside `transact` that outlasted the session's lock_timeout
                    // (see `bounded`): nothing was done, and a retry may get the lock.
                    SqlState::LOCK_NOT_AVAILABLE,
                ]
                .contains(c)
        }
    }
}

/// Deadlock or serialization failure.
pub(crate) fn is_conflict(e: &tokio_postgres::Error) -> bool {
    e.code().is_some_and(|c| {
        *c == SqlState::T_R_DEADLOCK_DETECTED || *c == SqlState::T_R_SERIALIZATION_FAILURE
    })
}

/// Backoff before attempt `n + 1`: exponential from 5 ms, capped at 400 ms, with jitter so
/// that the processes of one conflict do not collide again in step.
fn backoff(n: u32) -> Duration {
    let base = 5u64.saturating_mul(1 << n.min(7)).min(400);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::from(d.subsec_nanos()));
    Duration::from_millis(base / 2 + nanos % (base / 2 + 1))
}

impl Store for PgStore {
    fn list(&self, filter: &ListFilter) -> Result<Listing> {
        self.listing(sql::Table::Observations, filter)
    }

    fn get(&self, id: &curator_core::ObservationId) -> Result<curator_store::StoredObservation> {
        self.row(sql::Table::Observations, id)?
            .ok_or_else(|| Error::NotFound { id: id.to_string() })
    }

    fn transact(
        &self,
        run_id: Option<&str>,
        body: &mut dyn FnMut(&mut dyn Transaction) -> Result<()>,
    ) -> Result<()> {
        let mut n = 0;
        loop {
            n += 1;
            match self.attempt(run_id, body) {
                Err(e) if n < self.options.max_attempts && is_retryable(&e) => {
                    tracing::debug!(attempt = n, "transaction conflict, retrying: {e}");
                    std::thread::sleep(backoff(n));
                }
                other => return other,
            }
        }
    }

    fn journal(&self, filter: &JournalFilter) -> Result<Vec<JournalEntry>> {
        let client = self.client()?;
        let read = self
            .block_on(sql::read_journal(&client, filter))
            .map_err(|e| Self::db_error("reading the journal", e))?;
        read.map_err(|(seq, reason)| Error::Journal {
            path: format!("{}#journal", self.target).into(),
            line: usize::try_from(seq).unwrap_or(usize::MAX),
            reason,
        })
    }
    fn search(&self, req: &SearchRequest) -> Result<Vec<Hit>> {
        self.search_rows(sql::Table::Observations, req)
    }

    fn record_injection(&self, run_id: &str, step: u64, ids: &[String]) -> Result<()> {
        self.put_injection(run_id, step, ids, None)
    }

    fn record_step(
        &self,
        run_id: &str,
        step: u64,
        ids: &[String],
        probation: Option<&str>,
    ) -> Result<()> {
        self.put_injection(run_id, step, ids, probation)
    }

    fn load_session(&self, run_id: &str) -> Result<Option<RunSession>> {
        self.session(run_id)
    }

    fn update_step(
        &self,
        run_id: &str,
        step: u64,
        decide: &mut dyn FnMut(Option<&RunSession>) -> Result<curator_store::StepRecord>,
    ) -> Result<()> {
        self.update_session_step(run_id, step, decide)
    }

    fn list_pending(&self, filter: &ListFilter) -> Result<Listing> {
        self.listing(sql::Table::Pending, filter)
    }

    fn get_pending(
        &self,
        id: &curator_core::ObservationId,
    ) -> Result<Option<curator_store::StoredObservation>> {
        self.row(sql::Table::Pending, id)
    }

    fn search_pending(&self, req: &SearchRequest) -> Result<Vec<Hit>> {
        self.search_rows(sql::Table::Pending, req)
    }

    fn evidence(
        &self,
        query: &curator_store::evidence::EvidenceQuery,
    ) -> Result<curator_store::evidence::EvidenceView> {
        let client = self.client()?;
        self.block_on(crate::evidence::read(&client, query))
            .map_err(|e| Self::db_error("reading outcome evidence", e))
    }

    /// The journal's last sequence number: every change of memory, the review queue and the
    /// evidence appends a journal row in the transaction that makes it, on whichever machine.
    fn change_stamp(&self) -> Result<Option<String>> {
        let client = self.client()?;
        let seq: i64 = self
            .block_on(client.query_one("SELECT coalesce(max(seq), 0) FROM journal", &[]))
            .map_err(|e| Self::db_error("reading the journal's last change", e))?
            .get(0);
        Ok(Some(seq.to_string()))
    }

    fn keep_run_record(&self, run_id: &str, record: &serde_json::Value) -> Result<()> {
        self.keep_run_row(run_id, record)
    }

    fn load_run_record(&self, run_id: &str) -> Result<Option<serde_json::Value>> {
        self.run_row(run_id)
    }

    fn load_breaker(&self, key: &str) -> Result<Option<serde_json::Value>> {
        self.breaker_row(key)
    }

    fn update_breaker(
        &self,
        key: &str,
        change: &mut dyn FnMut(Option<serde_json::Value>) -> serde_json::Value,
    ) -> Result<serde_json::Value> {
        self.change_breaker(key, change)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_target_names_no_password() {
        let c: tokio_postgres::Config =
            "postgres://alice:secret@db.example:6543/memory".parse().unwrap();
        assert_eq!(describe(&c), "db.example:6543/memory");
    }

    #[test]
    fn backoff_grows_and_stays_bounded() {
        for n in 0..40 {
            let d = backoff(n);
            assert!(d <= Duration::from_millis(400), "{n}: {d:?}");
        }
        assert!(backoff(1) <= Duration::from_millis(10));
        assert!(backoff(7) >= Duration::from_millis(200));
    }

    #[test]
    fn only_conflicts_are_retried() {
        assert!(!is_retryable(&Error::NotFound { id: "obs_a".into() }));
        let aborted = |retryable| Error::Database {
            what: "x".into(),
            source: Box::new(Aborted {
                retryable,
                lock_timeout: false,
                unavailable: false,
                message: "m".into(),
            }),
        };
        assert!(is_retryable(&aborted(true)));
        assert!(!is_retryable(&aborted(false)));
    }
}
