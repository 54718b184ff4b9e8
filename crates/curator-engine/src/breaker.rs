//! The circuit breaker (agent-qa-memory §9), persisted per key in the store.
//!
//! agent-qa keeps the breaker in one process; a harness driving curator through separate CLI
//! calls (or a fleet of machines) needs the same behaviour across processes, so each key (a run
//! session or a suite) is a window kept by the store — the file store as
//! `<root>/.curator/breaker/<key>.json` changed under its own lock file, curator-pg as a row
//! changed under its row lock — and no concurrent outcome is ever lost. Semantics are
//! agent-qa's: `record` appends an outcome and drops the oldest beyond `window_size`; unless
//! already tripped, with at least `baseline_size` runs with memory *and* without, the breaker
//! trips when the failure rate with memory exceeds the rate without by more than `threshold`
//! (strictly). A trip lasts until `reset` (agent-qa has no reset: §11.18); while tripped, `query`
//! injects nothing for that key.

use std::path::{Path, PathBuf};

use curator_core::ScopeName;
use curator_store::{FileStore, FileStoreOptions, Store};
use serde::{Deserialize, Serialize};

/// `services.memory.circuitBreaker*` (agent-qa-memory §2).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BreakerConfig {
    /// `circuitBreakerEnabled` (default true): when false, `record` keeps nothing and nothing trips.
    pub enabled: bool,
    /// `circuitBreakerWindowSize` (default 20, ≥ 5).
    pub window_size: usize,
    /// `circuitBreakerBaselineSize` (default 3, ≥ 2).
    pub baseline_size: usize,
    /// `circuitBreakerThreshold` (default 0.15, in [0, 1]).
    pub threshold: f64,
}

impl Default for BreakerConfig {
    fn default() -> Self {
        BreakerConfig { enabled: true, window_size: 20, baseline_size: 3, threshold: 0.15 }
    }
}

/// One finished run as the breaker sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunOutcome {
    /// Whether memory was injected into any step.
    pub with_memory: bool,
    pub passed: bool,
}

/// The persisted state of one key.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct BreakerState {
    pub window: Vec<RunOutcome>,
    pub tripped: bool,
    /// When it tripped (ISO time), for `breaker status`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tripped_at: Option<String>,
    /// The ids of the newest runs recorded by `curate --breaker` (at most [`RECENT_RUNS`]), so
    /// a retried curate records a run's outcomes once: a curate killed after its run was
    /// applied and before its breaker write records them on the retry, and a retry after both
    /// records nothing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runs: Vec<String>,
    /// Keys this version does not know, kept on rewrite: a breaker a newer curator wrote must
    /// not lose what it added (an older one dropping `runs` counted a retried run twice).
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

/// How many recorded run ids a breaker remembers: far more runs than a harness retries across
/// (a retry follows its failed attempt), in a file read by every query with a breaker.
pub const RECENT_RUNS: usize = 256;

/// Failure rates of the two groups of the window.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BreakerRates {
    pub with_memory: usize,
    pub with_memory_failed: usize,
    pub baseline: usize,
    pub baseline_failed: usize,
}

impl BreakerRates {
    fn rate(failed: usize, n: usize) -> Option<f64> {
        (n > 0).then(|| failed as f64 / n as f64)
    }

    /// Failure rate of runs with memory.
    pub fn memory_failure_rate(&self) -> Option<f64> {
        Self::rate(self.with_memory_failed, self.with_memory)
    }

    /// Failure rate of runs without memory (the baseline).
    pub fn baseline_failure_rate(&self) -> Option<f64> {
        Self::rate(self.baseline_failed, self.baseline)
    }
}

impl BreakerState {
    /// Appends `outcome`, keeps the newest `window_size`, then evaluates; true when this record
    /// tripped the breaker.
    pub fn record(&mut self, outcome: RunOutcome, config: &BreakerConfig, now: &str) -> bool {
        self.window.push(outcome);
        let excess = self.window.len().saturating_sub(config.window_size);
        self.window.drain(..excess);
        if self.tripped {
            return false;
        }
        let r = self.rates();
        if r.baseline < config.baseline_size || r.with_memory < config.baseline_size {
            return false;
        }
        let (Some(fm), Some(fb)) = (r.memory_failure_rate(), r.baseline_failure_rate()) else {
            return false;
        };
        if fm - fb > config.threshold {
            self.tripped = true;
            self.tripped_at = Some(now.to_owned());
            return true;
        }
        false
    }

    /// The breaker as `curator breaker status --json` and `/api/v1/breaker/{key}` show it:
    /// settings, whether (and when) it tripped, and both failure rates of the window.
    pub fn report(
        &self,
        key: &str,
        config: &BreakerConfig,
        tripped_now: bool,
    ) -> serde_json::Value {
        let rates = self.rates();
        serde_json::json!({
            "key": key,
            "enabled": config.enabled,
            "tripped": self.tripped,
            "tripped_now": tripped_now,
            "tripped_at": self.tripped_at,
            "window": self.window.len(),
            "window_size": config.window_size,
            "baseline_size": config.baseline_size,
            "threshold": config.threshold,
            "with_memory": {"runs": rates.with_memory, "failed": rates.with_memory_failed,
                            "failure_rate": rates.memory_failure_rate()},
            "baseline": {"runs": rates.baseline, "failed": rates.baseline_failed,
                         "failure_rate": rates.baseline_failure_rate()},
        })
    }

    /// Counts of the window.
    pub fn rates(&self) -> BreakerRates {
        let (m, b): (Vec<&RunOutcome>, Vec<&RunOutcome>) =
            self.window.iter().partition(|o| o.with_memory);
        BreakerRates {
            with_memory: m.len(),
            with_memory_failed: m.iter().filter(|o| !o.passed).count(),
            baseline: b.len(),
            baseline_failed: b.iter().filter(|o| !o.passed).count(),
        }
    }
}

/// What went wrong reading or writing a breaker.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BreakerError {
    /// The key cannot name a file.
    #[error("breaker key {key:?} is not usable as a file name: {reason}")]
    BadKey { key: String, reason: String },
    /// The run id an outcome is recorded under cannot be a run id.
    #[error(
        "invalid run id {0:?}: use 1-{max} characters from A-Z a-z 0-9 . _ -, not starting with '.'",
        max = curator_store::MAX_RUN_ID_LEN
    )]
    BadRunId(String),
    /// The stored window is JSON but not a breaker state.
    #[error("breaker state {key}: {reason}")]
    Corrupt { key: String, reason: String },
    #[error(transparent)]
    Store(#[from] curator_store::Error),
}

/// The breakers of one store.
#[derive(Debug, Clone, Copy)]
pub struct Breaker;

impl Breaker {
    /// `<root>/.curator/breaker/<key>.json` (the file store's layout).
    pub fn state_path(root: &Path, key: &str) -> Result<PathBuf, BreakerError> {
        Self::check_key(key)?;
        Ok(root.join(".curator").join("breaker").join(format!("{key}.json")))
    }

    fn check_key(key: &str) -> Result<(), BreakerError> {
        let bad = |reason: String| BreakerError::BadKey { key: key.to_owned(), reason };
        ScopeName::new(key).map_err(|e| bad(e.to_string()))?;
        if key.starts_with('.') {
            return Err(bad("must not start with '.'".into()));
        }
        Ok(())
    }

    /// The state of `key` in `store`; the empty state when nothing was recorded.
    pub fn load_in(store: &dyn Store, key: &str) -> Result<BreakerState, BreakerError> {
        Self::check_key(key)?;
        match store.load_breaker(key)? {
            None => Ok(BreakerState::default()),
            Some(value) => parse(key, value),
        }
    }

    /// Whether `key` is tripped (the check `query` makes before injecting).
    pub fn is_tripped_in(store: &dyn Store, key: &str) -> Result<bool, BreakerError> {
        Ok(Self::load_in(store, key)?.tripped)
    }

    /// Records one outcome for `key` with no concurrent writer of the key in between; returns
    /// the new state and whether this record tripped it. Disabled: nothing is recorded.
    pub fn record_in(
        store: &dyn Store,
        key: &str,
        outcome: RunOutcome,
        config: &BreakerConfig,
    ) -> Result<(BreakerState, bool), BreakerError> {
        if !config.enabled {
            return Ok((Self::load_in(store, key)?, false));
        }
        Self::update(store, key, |state| {
            let now = curator_core::time::now_iso();
            state.record(outcome, config, &now)
        })
    }

    /// Records the outcomes of run `run_id` for `key` in one change (an ablation rerun's, then
    /// the run's own), once per run id: when the breaker already holds the run, nothing is
    /// recorded and the third value is `true`. Returns the new state and whether this record
    /// tripped it. Disabled: nothing is recorded.
    pub fn record_run_in(
        store: &dyn Store,
        key: &str,
        run_id: &str,
        outcomes: &[RunOutcome],
        config: &BreakerConfig,
    ) -> Result<(BreakerState, bool, bool), BreakerError> {
        if !curator_store::is_valid_run_id(run_id) {
            return Err(BreakerError::BadRunId(curator_core::excerpt(run_id)));
        }
        if !config.enabled {
            return Ok((Self::load_in(store, key)?, false, false));
        }
        let (state, (tripped, already)) = Self::update(store, key, |state| {
            if state.runs.iter().any(|r| r == run_id) {
                return (false, true);
            }
            let now = curator_core::time::now_iso();
            let mut tripped = false;
            for outcome in outcomes {
                tripped |= state.record(*outcome, config, &now);
            }
            state.runs.push(run_id.to_owned());
            let excess = state.runs.len().saturating_sub(RECENT_RUNS);
            state.runs.drain(..excess);
            (tripped, false)
        })?;
        Ok((state, tripped, already))
    }

    /// Forgets every outcome of `key` and un-trips it.
    pub fn reset_in(store: &dyn Store, key: &str) -> Result<BreakerState, BreakerError> {
        Self::update(store, key, |state| {
            *state = BreakerState::default();
        })
        .map(|(state, ())| state)
    }

    /// [`Breaker::load_in`] the file store at `root`.
    pub fn load(root: &Path, key: &str) -> Result<BreakerState, BreakerError> {
        Self::load_in(&file_store(root)?, key)
    }

    /// [`Breaker::is_tripped_in`] the file store at `root`.
    pub fn is_tripped(root: &Path, key: &str) -> Result<bool, BreakerError> {
        Self::is_tripped_in(&file_store(root)?, key)
    }

    /// [`Breaker::record_in`] the file store at `root`.
    pub fn record(
        root: &Path,
        key: &str,
        outcome: RunOutcome,
        config: &BreakerConfig,
    ) -> Result<(BreakerState, bool), BreakerError> {
        Self::record_in(&file_store(root)?, key, outcome, config)
    }

    /// [`Breaker::reset_in`] the file store at `root`.
    pub fn reset(root: &Path, key: &str) -> Result<BreakerState, BreakerError> {
        Self::reset_in(&file_store(root)?, key)
    }

    fn update<T>(
        store: &dyn Store,
        key: &str,
        change: impl FnOnce(&mut BreakerState) -> T,
    ) -> Result<(BreakerState, T), BreakerError> {
        Self::check_key(key)?;
        let mut change = Some(change);
        let mut out = None;
        let mut failure = None;
        let next = store.update_breaker(key, &mut |current| {
            let parsed = match &current {
                None => Ok(BreakerState::default()),
                Some(value) => parse(key, value.clone()),
            };
            match parsed {
                Err(e) => {
                    // Written back unchanged; the error is reported once the update is over.
                    failure = Some(e);
                    current.unwrap_or(serde_json::Value::Null)
                }
                Ok(mut state) => {
                    if let Some(change) = change.take() {
                        out = Some(change(&mut state));
                    }
                    serde_json::to_value(&state).expect("a breaker state always serializes")
                }
            }
        })?;
        if let Some(e) = failure {
            return Err(e);
        }
        let Some(out) = out else {
            unreachable!("update_breaker calls `change` exactly once when it succeeds")
        };
        Ok((parse(key, next)?, out))
    }
}

fn parse(key: &str, value: serde_json::Value) -> Result<BreakerState, BreakerError> {
    serde_json::from_value(value)
        .map_err(|e| BreakerError::Corrupt { key: key.to_owned(), reason: e.to_string() })
}

fn file_store(root: &Path) -> Result<FileStore, BreakerError> {
    Ok(FileStore::open(root, FileStoreOptions::default())?)
}

#[cfg(test)]
mod tests {
    use super::*;

    const M_PASS: RunOutcome = RunOutcome { with_memory: true, passed: true };
    const M_FAIL: RunOutcome = RunOutcome { with_memory: true, passed: false };
    const B_PASS: RunOutcome = RunOutcome { with_memory: false, passed: true };
    const B_FAIL: RunOutcome = RunOutcome { with_memory: false, passed: false };

    fn feed(outcomes: &[RunOutcome], config: &BreakerConfig) -> (BreakerState, Vec<bool>) {
        let mut s = BreakerState::default();
        let trips = outcomes.iter().map(|o| s.record(*o, config, "t")).collect();
        (s, trips)
    }

    #[test]
    fn needs_baseline_size_runs_in_both_groups() {
        let c = BreakerConfig::default();
        let (s, _) = feed(&[M_FAIL, M_FAIL, M_FAIL, M_FAIL, B_PASS, B_PASS], &c);
        assert!(!s.tripped, "two baseline runs are fewer than 3");
        let (s, trips) = feed(&[M_FAIL, M_FAIL, M_FAIL, B_PASS, B_PASS, B_PASS], &c);
        assert!(s.tripped);
        assert_eq!(
            trips,
            [false, false, false, false, false, true],
            "trips on the record that completes the baseline"
        );
        let (s, _) = feed(&[B_PASS, B_PASS, B_PASS, M_FAIL, M_FAIL], &c);
        assert!(!s.tripped, "two memory runs are fewer than 3");
    }

    #[test]
    fn trips_only_when_the_gap_strictly_exceeds_the_threshold() {
        let c = BreakerConfig { threshold: 0.25, ..BreakerConfig::default() };
        // fM = 1/4, fB = 0: the gap equals the threshold exactly (both exact in binary).
        let (s, _) = feed(&[M_FAIL, M_PASS, M_PASS, M_PASS, B_PASS, B_PASS, B_PASS], &c);
        assert!(!s.tripped);
        let (s, _) = feed(&[M_FAIL, M_FAIL, M_PASS, M_PASS, B_PASS, B_PASS, B_PASS], &c);
        assert!(s.tripped, "0.5 > 0.25");
        let c = BreakerConfig::default();
        // Memory fails as often as the baseline: no trip.
        let (s, _) = feed(&[M_FAIL, M_FAIL, M_PASS, B_FAIL, B_FAIL, B_PASS], &c);
        assert!(!s.tripped);
        // Memory fails less than the baseline: no trip (negative gap).
        let (s, _) = feed(&[M_PASS, M_PASS, M_PASS, B_FAIL, B_FAIL, B_FAIL], &c);
        assert!(!s.tripped);
    }

    #[test]
    fn window_drops_the_oldest_runs() {
        let runs = [M_FAIL, M_FAIL, M_PASS, M_PASS, M_PASS, B_PASS, B_PASS];
        let wide = BreakerConfig { baseline_size: 2, ..BreakerConfig::default() };
        assert!(feed(&runs, &wide).0.tripped, "with every run kept, 2/5 memory failures trip");
        let narrow = BreakerConfig { window_size: 5, ..wide };
        let (s, _) = feed(&runs, &narrow);
        assert_eq!(s.window, [M_PASS, M_PASS, M_PASS, B_PASS, B_PASS], "the two failures slid out");
        assert!(!s.tripped);
    }

    #[test]
    fn a_trip_is_permanent_until_reset() {
        let c = BreakerConfig::default();
        let mut outcomes = vec![M_FAIL, M_FAIL, M_FAIL, B_PASS, B_PASS, B_PASS];
        outcomes.extend(std::iter::repeat_n(M_PASS, 30));
        let (s, trips) = feed(&outcomes, &c);
        assert!(s.tripped, "later good runs do not un-trip");
        assert_eq!(trips.iter().filter(|t| **t).count(), 1);
        assert_eq!(s.rates().with_memory_failed, 0, "the failures slid out, the trip stays");
    }

    #[test]
    fn persisted_per_key_across_calls_and_reset() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let c = BreakerConfig::default();
        for o in [M_FAIL, M_FAIL, M_FAIL, B_PASS, B_PASS] {
            Breaker::record(root, "r_run", o, &c).unwrap();
        }
        assert!(!Breaker::is_tripped(root, "r_run").unwrap());
        let (state, tripped_now) = Breaker::record(root, "r_run", B_PASS, &c).unwrap();
        assert!(tripped_now && state.tripped && state.tripped_at.is_some());
        assert!(Breaker::is_tripped(root, "r_run").unwrap());
        assert!(!Breaker::is_tripped(root, "s_other").unwrap(), "keys are independent");
        assert!(root.join(".curator/breaker/r_run.json").is_file());
        Breaker::reset(root, "r_run").unwrap();
        assert!(!Breaker::is_tripped(root, "r_run").unwrap());
        assert_eq!(Breaker::load(root, "r_run").unwrap().window.len(), 0);
    }

    #[test]
    fn disabled_records_nothing_and_bad_keys_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let c = BreakerConfig { enabled: false, ..BreakerConfig::default() };
        let (state, _) = Breaker::record(tmp.path(), "k", M_FAIL, &c).unwrap();
        assert!(state.window.is_empty());
        for bad in ["", "..", "a/b", ".hidden"] {
            assert!(
                matches!(Breaker::is_tripped(tmp.path(), bad), Err(BreakerError::BadKey { .. })),
                "{bad}"
            );
        }
        std::fs::create_dir_all(tmp.path().join(".curator/breaker")).unwrap();
        std::fs::write(tmp.path().join(".curator/breaker/k.json"), "{nope").unwrap();
        let err = Breaker::is_tripped(tmp.path(), "k").unwrap_err();
        assert!(err.to_string().contains("k.json"), "{err}");
        std::fs::write(tmp.path().join(".curator/breaker/k.json"), r#"{"window":3}"#).unwrap();
        let enabled = BreakerConfig::default();
        let err = Breaker::record(tmp.path(), "k", M_FAIL, &enabled).unwrap_err();
        assert!(matches!(err, BreakerError::Corrupt { .. }), "{err}");
        let kept = std::fs::read_to_string(tmp.path().join(".curator/breaker/k.json")).unwrap();
        assert!(kept.contains("\"window\": 3"), "a corrupt window is left as it was: {kept}");
    }

    /// A breaker a newer curator wrote keeps what this version does not know (audit 9: an
    /// older binary rewrote one without its `runs`, and a retried run was counted twice).
    #[test]
    fn keys_a_newer_curator_wrote_survive_a_record() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join(".curator/breaker")).unwrap();
        let newer = r#"{"window":[],"tripped":false,"cooldown":{"until":"2027-01-01"}}"#;
        std::fs::write(tmp.path().join(".curator/breaker/k.json"), newer).unwrap();
        Breaker::record(tmp.path(), "k", M_FAIL, &BreakerConfig::default()).unwrap();
        let kept = Breaker::load(tmp.path(), "k").unwrap();
        assert_eq!(kept.window.len(), 1);
        assert_eq!(kept.extra["cooldown"]["until"], "2027-01-01", "{kept:?}");
    }

    #[test]
    fn concurrent_records_lose_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().to_path_buf();
        let c = BreakerConfig { window_size: 1000, ..BreakerConfig::default() };
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let root = root.clone();
                std::thread::spawn(move || {
                    for _ in 0..10 {
                        Breaker::record(&root, "k", B_PASS, &c).unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(Breaker::load(&root, "k").unwrap().window.len(), 40);
    }

    #[test]
    fn a_run_is_recorded_once_by_its_id_and_old_ids_are_forgotten() {
        let tmp = tempfile::tempdir().unwrap();
        let store = FileStore::open(tmp.path(), FileStoreOptions::default()).unwrap();
        let c = BreakerConfig { window_size: 1000, ..BreakerConfig::default() };
        let run = |id: &str| Breaker::record_run_in(&store, "k", id, &[B_PASS, M_FAIL], &c);
        let (s, _, already) = run("r_1").unwrap();
        assert!(!already && s.window == [B_PASS, M_FAIL] && s.runs == ["r_1"], "{s:?}");
        let (s, _, already) = run("r_1").unwrap();
        assert!(already && s.window.len() == 2, "a retry records nothing: {s:?}");
        for i in 0..RECENT_RUNS {
            run(&format!("r_x{i}")).unwrap();
        }
        let s = Breaker::load_in(&store, "k").unwrap();
        assert_eq!(s.runs.len(), RECENT_RUNS);
        assert!(!s.runs.contains(&"r_1".to_owned()), "the oldest id is dropped");
        // Disabled: nothing is recorded, and nothing is remembered.
        let off = BreakerConfig { enabled: false, ..c };
        let (s, tripped, already) =
            Breaker::record_run_in(&store, "k", "r_2", &[M_FAIL], &off).unwrap();
        assert!(!tripped && !already && !s.runs.contains(&"r_2".to_owned()));
    }
}
