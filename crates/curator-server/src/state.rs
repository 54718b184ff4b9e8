//! What every handler shares: the store, the engine settings and the optional bearer token
//! (issue 6 item 1; STYLE §5 "state.rs").
//!
//! The state is an `Arc`, cloned per request; it holds no cache of observations (only the
//! change counter of live refresh, which watches files and never answers for them), so every
//! request answers from the files as they are now (ARCHITECTURE "files are the source of
//! truth"), exactly like a CLI call. The store is blocking, so handlers reach it through
//! [`blocking`], which runs the closure on tokio's blocking pool: a write that has started is
//! finished even if its client goes away or the server is shutting down.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use curator_core::config::{BlamePolicy, DEFAULT_PROBATION_RATE, ReviewMode};
use curator_core::trust::TrustDeltas;
use curator_engine::breaker::BreakerConfig;
use curator_engine::curate::CurateOptions;
use curator_engine::probation::ProbationOptions;
use curator_engine::query::{DEFAULT_MAX_INJECTIONS, DEFAULT_MIN_TRUST};
use curator_harness::Harness;
use curator_store::index::QueryMode;
use curator_store::{FileStore, Store};

use crate::error::ApiError;
use crate::live::LiveWatch;

/// Default largest request body: 16 MiB, the largest line MCP over stdio reads, so a run record
/// one surface takes (a long run's steps with their observations) every surface takes. An
/// observation's own file stays capped at 1 MiB by the codec, whatever the body's size.
pub const DEFAULT_BODY_LIMIT: usize = 16 << 20;

/// The engine settings in effect (the config's values; agent-qa's defaults without one).
#[derive(Debug, Clone)]
pub struct EngineSettings {
    /// Default `minTrust` of a query when the request gives none.
    pub min_trust: f64,
    /// Default `maxInjections` of a query when the request gives none.
    pub max_injections: usize,
    /// Default query mode.
    pub mode: QueryMode,
    /// Trust deltas of confirm / deprecate (API, UI and curator alike).
    pub deltas: TrustDeltas,
    /// The circuit breaker settings.
    pub breaker: BreakerConfig,
    /// `ablationEnabled`: whether a run record's ablation result is used (default true).
    pub ablation_enabled: bool,
    /// `curator.unknownKeys`: what a key a run record or decisions document does not define
    /// does (default: an error naming the nearest known key).
    pub unknown_keys: curator_engine::curate::UnknownKeys,
    /// `curator.policy`: how failures the ablation rerun blamed on memory are blamed.
    pub policy: BlamePolicy,
    /// `curator.review`: whether proposed memory waits in the review queue.
    pub review: ReviewMode,
    /// `curator.probationRate`: the chance a step of a recorded run gets a probation injection.
    pub probation_rate: f64,
}

impl EngineSettings {
    /// The curator's options for one run.
    pub fn curate_options(&self) -> CurateOptions {
        CurateOptions {
            deltas: self.deltas,
            now: None,
            ablation_enabled: self.ablation_enabled,
            policy: self.policy,
            review: self.review,
            min_trust: self.min_trust,
        }
    }

    /// Probation injections for the steps of recorded runs.
    pub fn probation(&self) -> Option<ProbationOptions> {
        ProbationOptions::from_config(self.policy, self.review, self.probation_rate)
    }
}

impl Default for EngineSettings {
    fn default() -> Self {
        EngineSettings {
            min_trust: DEFAULT_MIN_TRUST,
            max_injections: DEFAULT_MAX_INJECTIONS,
            mode: QueryMode::default(),
            deltas: TrustDeltas::default(),
            breaker: BreakerConfig::default(),
            ablation_enabled: true,
            unknown_keys: curator_engine::curate::UnknownKeys::Reject,
            policy: BlamePolicy::default(),
            review: ReviewMode::default(),
            probation_rate: DEFAULT_PROBATION_RATE,
        }
    }
}

/// How the server is set up, besides the store.
#[derive(Debug, Default)]
pub struct ServerOptions {
    /// When set, every request must carry `Authorization: Bearer <token>`; required to listen
    /// on a non-loopback address.
    pub token: Option<String>,
    /// The harness state directory to show and act on, when there is one.
    pub harness: Option<Harness>,
    /// Engine settings.
    pub engine: EngineSettings,
    /// Largest request body in bytes; 0 means [`DEFAULT_BODY_LIMIT`].
    pub body_limit: usize,
    /// Host names answered besides the listen address and `localhost`
    /// (`curator.serve.allowedHosts`): every request naming another `Host` is refused.
    pub allowed_hosts: Vec<String>,
    /// Whether `/mcp` offers `review_pending` (approve / reject proposals); off by default, so
    /// an agent on `/mcp` cannot approve its own proposals.
    pub mcp_review: bool,
}

/// The shared state of one server: cheap to clone.
#[derive(Debug, Clone)]
pub struct AppState {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    store: Arc<dyn Store>,
    root: PathBuf,
    options: ServerOptions,
    /// The change counter behind live refresh (a watch of the files, not of observations).
    live: LiveWatch,
    /// Store work running at once ([`blocking`]): a burst of requests queues here instead of
    /// growing the blocking pool to hundreds of threads, each holding a listing in memory.
    workers: Arc<tokio::sync::Semaphore>,
}

/// How many requests do store work at once: enough for a fleet's reads to overlap a write
/// waiting for the lock, few enough that a burst cannot take gigabytes.
const MAX_WORKERS: usize = 32;

impl AppState {
    /// State over a file store (the root is the store's canonical root).
    pub fn new(store: FileStore, options: ServerOptions) -> Self {
        let root = store.root().to_path_buf();
        Self::with_store(Arc::new(store), root, options)
    }

    /// State over any store (curator-pg for a shared database). Queries, run sessions and
    /// breakers go through the store; `root` is the memory root the UI shows and watches for
    /// live refresh (with a database store nothing there changes, so refresh is manual).
    pub fn with_store(store: Arc<dyn Store>, root: PathBuf, mut options: ServerOptions) -> Self {
        if options.body_limit == 0 {
            options.body_limit = DEFAULT_BODY_LIMIT;
        }
        let workers = Arc::new(tokio::sync::Semaphore::new(MAX_WORKERS));
        AppState {
            inner: Arc::new(Inner { store, root, options, live: LiveWatch::new(), workers }),
        }
    }

    /// The store.
    pub fn store(&self) -> &dyn Store {
        self.inner.store.as_ref()
    }

    /// The memory root.
    pub fn root(&self) -> &Path {
        &self.inner.root
    }

    /// The bearer token, if one is required.
    pub fn token(&self) -> Option<&str> {
        self.inner.options.token.as_deref()
    }

    /// The harness, if configured.
    pub fn harness(&self) -> Option<&Harness> {
        self.inner.options.harness.as_ref()
    }

    /// The harness, or the 404 that says none is configured.
    pub(crate) fn require_harness(&self) -> Result<&Harness, ApiError> {
        self.harness().ok_or_else(|| {
            ApiError::new(
                axum::http::StatusCode::NOT_FOUND,
                "harness_not_configured",
                "no harness state directory is configured (start with --state-dir DIR)",
            )
        })
    }

    /// Engine settings.
    pub fn engine(&self) -> &EngineSettings {
        &self.inner.options.engine
    }

    /// Largest accepted request body.
    pub fn body_limit(&self) -> usize {
        self.inner.options.body_limit
    }

    /// The change counter behind `/api/v1/changes`.
    pub(crate) fn live(&self) -> &LiveWatch {
        &self.inner.live
    }

    /// Host names answered besides the listen address and `localhost`.
    pub fn allowed_hosts(&self) -> &[String] {
        &self.inner.options.allowed_hosts
    }

    /// Whether `/mcp` may approve or reject proposals.
    pub fn mcp_review(&self) -> bool {
        self.inner.options.mcp_review
    }
}

/// Runs blocking store or engine work on the blocking pool and returns its result.
pub(crate) async fn blocking<T, F>(state: &AppState, work: F) -> Result<T, ApiError>
where
    T: Send + 'static,
    F: FnOnce(AppState) -> Result<T, ApiError> + Send + 'static,
{
    let state = state.clone();
    // The semaphore is never closed, so a permit always comes; it is held until the work ends,
    // even if the request is dropped meanwhile.
    let permit = Arc::clone(&state.inner.workers).acquire_owned().await;
    match tokio::task::spawn_blocking(move || {
        let _permit = permit;
        work(state)
    })
    .await
    {
        Ok(result) => result,
        Err(join) => Err(ApiError::internal(format!("the request's worker failed: {join}"))),
    }
}
