//! Probation: memory below minTrust, and proposals waiting for review, are injected again now
//! and then, so the outcome of real runs can vindicate or condemn them (issue 18 item 3;
//! fixes agent-qa-memory §11.13, where an observation below minTrust is never injected again
//! and can never earn its trust back nor sink to deletion).
//!
//! Bounds: only steps of a recorded run (`--run/--step`) take part; a step is chosen with
//! probability `rate`; **at most one step of a run** gets a probation injection (a later query
//! for the same step — a retry — may replace it), and under the evidence policy none when a
//! newcomer already took the run's one trial (`trial.rs`); the observation must match the step
//! as any injection does (same scopes, suite rules and relevance floor, any trust); it is injected
//! after the step's ordinary memory, in agent-qa's `<memory-context>` format with its own trust
//! shown; and the run session records it as the step's probation. The curator then treats it as
//! injected: a passed step confirms it (rules provider), a failure the evidence pins on it
//! contradicts it, so helpful memory climbs back over minTrust and misleading memory sinks to
//! 0 and is deleted, as agent-qa deletes.
//!
//! Every draw is a hash of the run id, the step and the candidate id (FNV-1a), so a given run
//! makes the same choices on every machine and in every test.

use curator_core::config::{BlamePolicy, ReviewMode};
use curator_store::index::{Hit, SearchRequest};
use curator_store::{RunSession, Store};

/// Which observations may be injected on probation, and how often.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ProbationOptions {
    /// Served observations below minTrust (the evidence policy).
    pub below_min_trust: bool,
    /// Proposals in the review queue (`review: auto`).
    pub pending: bool,
    /// The chance in `[0, 1]` that a step of a run is considered.
    pub rate: f64,
    /// Newcomers share the run's one trial with probation (the evidence policy; `trial.rs`).
    #[serde(default)]
    pub newcomers: bool,
}

impl ProbationOptions {
    /// What `curator.policy`, `curator.review` and `curator.probationRate` ask for; `None`
    /// when nothing is eligible (agent-qa policy with review off or manual, or rate 0).
    pub fn from_config(policy: BlamePolicy, review: ReviewMode, rate: f64) -> Option<Self> {
        let options = ProbationOptions {
            below_min_trust: policy == BlamePolicy::Evidence,
            pending: review == ReviewMode::Auto,
            rate,
            newcomers: policy == BlamePolicy::Evidence,
        };
        let draws = rate > 0.0 && (options.below_min_trust || options.pending);
        (draws || options.newcomers).then_some(options)
    }
}

/// How many below-minTrust matches a probation draw considers at most.
const MAX_CANDIDATES: usize = 50;

/// FNV-1a 64 of `parts`, separated by a zero byte.
fn hash(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            // A zero byte between parts: XOR with 0, then the multiply.
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        for b in *part {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    // FNV's low bits mix poorly: finish with splitmix64's avalanche.
    h = (h ^ (h >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    h ^ (h >> 31)
}

/// A uniform number in `[0, 1)` for `step` of `run_id`.
pub fn draw(run_id: &str, step: u64) -> f64 {
    (hash(&[run_id.as_bytes(), &step.to_le_bytes()]) >> 11) as f64 / (1u64 << 53) as f64
}

/// The probation injection for `step` of `run_id`, if this step gets one, and whether it is a
/// queued proposal: `hits` are the step's ordinary injections (never chosen again), `req` its
/// search, `session` what the run recorded so far.
pub(crate) fn choose(
    store: &dyn Store,
    req: &SearchRequest,
    hits: &[Hit],
    session: Option<&RunSession>,
    run_id: &str,
    step: u64,
    options: &ProbationOptions,
) -> curator_store::Result<Option<(Hit, bool)>> {
    if draw(run_id, step) >= options.rate || req.max_results == 0 {
        return Ok(None);
    }
    if session.is_some_and(|s| s.probation.keys().any(|s| *s != step)) {
        return Ok(None); // this run already had its probation injection
    }
    // Any trust, and no comparison with the step's best hit: a candidate is low by definition.
    let any_trust = SearchRequest {
        min_trust: 0.0,
        max_results: MAX_CANDIDATES,
        keep_ratio: 0.0,
        ..req.clone()
    };
    let mut candidates: Vec<(Hit, bool)> = Vec::new();
    if options.below_min_trust {
        let low = store.search(&any_trust)?.into_iter().filter(|h| h.trust < req.min_trust);
        candidates.extend(low.map(|h| (h, false)));
    }
    if options.pending {
        match store.search_pending(&any_trust) {
            Ok(found) => candidates.extend(found.into_iter().map(|h| (h, true))),
            Err(curator_store::Error::Unsupported { .. }) => {}
            Err(e) => return Err(e),
        }
    }
    candidates.retain(|(c, _)| !hits.iter().any(|h| h.id == c.id));
    // The candidate closest to being trusted goes first (a proposal, then memory just below
    // minTrust, which one more pass brings back); ties are drawn.
    let key = |c: &Hit| hash(&[run_id.as_bytes(), &step.to_le_bytes(), c.id.as_bytes()]);
    Ok(candidates.into_iter().min_by(|a, b| {
        b.0.trust.total_cmp(&a.0.trust).then(key(&a.0).cmp(&key(&b.0))).then(a.0.id.cmp(&b.0.id))
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_are_stable_and_spread() {
        assert_eq!(draw("r_1", 0), draw("r_1", 0));
        assert_ne!(draw("r_1", 0), draw("r_1", 1));
        let below: usize = (0..10_000).filter(|i| draw(&format!("r_{i}"), 2) < 0.2).count();
        assert!((1800..2200).contains(&below), "{below}");
    }

    #[test]
    fn options_follow_the_config() {
        use BlamePolicy::*;
        use ReviewMode::*;
        assert_eq!(ProbationOptions::from_config(AgentQa, Off, 0.2), None);
        assert_eq!(ProbationOptions::from_config(AgentQa, Manual, 0.2), None);
        assert_eq!(ProbationOptions::from_config(AgentQa, Auto, 0.0), None);
        // The evidence policy always tries newcomers one per run, probation or not.
        let o = ProbationOptions::from_config(Evidence, Auto, 0.0).unwrap();
        assert!(o.newcomers && o.rate == 0.0);
        let o = ProbationOptions::from_config(AgentQa, Auto, 0.2).unwrap();
        assert!(o.pending && !o.below_min_trust && !o.newcomers);
        let o = ProbationOptions::from_config(Evidence, Off, 0.5).unwrap();
        assert!(!o.pending && o.below_min_trust && o.rate == 0.5);
    }
}
