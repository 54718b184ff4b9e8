//! Trust arithmetic of the curator (agent-qa-memory §5.4, §5.5).
//!
//! Every trust value the curator writes goes through [`round3`], which reproduces JavaScript's
//! `Math.round(x * 1000) / 1000` (ties toward +∞), so a file confirmed or contradicted by curator
//! carries the same number agent-qa would have written: `0.3 − 0.1` becomes `0.2`, not
//! `0.19999999999999998`. Results stay inside `[0, 1]`; a contradiction that leaves less than
//! [`DELETE_BELOW`] deletes the observation instead of writing trust 0.
//!
//! The deltas default to the values of agent-qa's config schema (0.05 / 0.10) whether or not the
//! config block exists; agent-qa's code fallbacks (0.02 / 0.05, §11.2) are not reproduced, so the
//! same memory root learns at the same speed with or without a config file.

/// Trust of a freshly added observation (§5.4 add).
pub const INITIAL_TRUST: f64 = 0.5;

/// A contradiction that leaves trust below this deletes the file (§5.4 deprecate).
pub const DELETE_BELOW: f64 = 1e-9;

/// Default confirm delta (`services.memory.trustConfirmDelta` schema default).
pub const DEFAULT_CONFIRM_DELTA: f64 = 0.05;

/// Default contradict delta (`services.memory.trustContradictDelta` schema default).
pub const DEFAULT_CONTRADICT_DELTA: f64 = 0.10;

/// How far one confirmation raises and one contradiction lowers trust.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrustDeltas {
    /// Added by a confirmation (update decision).
    pub confirm: f64,
    /// Subtracted by a contradiction (deprecate decision or failed run).
    pub contradict: f64,
}

impl Default for TrustDeltas {
    fn default() -> Self {
        TrustDeltas { confirm: DEFAULT_CONFIRM_DELTA, contradict: DEFAULT_CONTRADICT_DELTA }
    }
}

/// What a contradiction does to an observation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Contradiction {
    /// Rewrite with this trust and `contradicted_count + 1`.
    Lowered(f64),
    /// Trust reached zero: delete the file.
    Deleted,
}

/// JavaScript `Math.round(x * 1000) / 1000`: nearest thousandth, exact ties toward +∞.
///
/// `Math.round` is `floor(x + 0.5)` except that it never rounds a value just below a half up
/// (`x + 0.5` can round up in binary), which is why the fraction is compared instead.
pub fn round3(x: f64) -> f64 {
    js_round(x * 1000.0) / 1000.0
}

/// JavaScript `Math.round`: nearest integer, exact ties toward +∞; non-finite values unchanged.
pub fn js_round(x: f64) -> f64 {
    if !x.is_finite() {
        return x;
    }
    let floor = x.floor();
    // `x - floor` is exact for every finite double, so the tie test is exact too.
    if x - floor >= 0.5 { floor + 1.0 } else { floor }
}

/// Trust after one confirmation: `round3(min(1, trust + delta))`.
pub fn confirm(trust: f64, deltas: &TrustDeltas) -> f64 {
    round3((trust + deltas.confirm).min(1.0))
}

/// Trust after one contradiction: `round3(max(0, trust − delta))`, or [`Contradiction::Deleted`]
/// when that is below [`DELETE_BELOW`].
pub fn contradict(trust: f64, deltas: &TrustDeltas) -> Contradiction {
    let next = round3((trust - deltas.contradict).max(0.0));
    if next < DELETE_BELOW { Contradiction::Deleted } else { Contradiction::Lowered(next) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round3_matches_javascript() {
        assert_eq!(0.3 - 0.1, 0.19999999999999998);
        assert_eq!(round3(0.3 - 0.1), 0.2);
        assert_eq!(round3(0.5 + 0.05), 0.55);
        assert_eq!(round3(0.0005), 0.001, "ties go up");
        assert_eq!(round3(-0.0005), -0.0, "negative ties go toward +inf");
        assert_eq!(js_round(2.5), 3.0);
        assert_eq!(js_round(-2.5), -2.0);
        assert_eq!(js_round(0.49999999999999994), 0.0, "floor(x + 0.5) would give 1");
        assert!(round3(f64::NAN).is_nan());
    }

    #[test]
    fn confirm_from_half_with_defaults_climbs_by_five_hundredths_and_caps_at_one() {
        let d = TrustDeltas::default();
        let mut t = INITIAL_TRUST;
        let mut seen = Vec::new();
        for _ in 0..12 {
            t = confirm(t, &d);
            seen.push(t);
        }
        assert_eq!(
            seen,
            [0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1.0, 1.0, 1.0],
            "exact three-decimal values, capped at 1"
        );
    }

    #[test]
    fn five_contradictions_from_half_delete_with_defaults() {
        let d = TrustDeltas::default();
        let mut t = INITIAL_TRUST;
        let mut seen = Vec::new();
        while let Contradiction::Lowered(next) = contradict(t, &d) {
            seen.push(next);
            t = next;
        }
        assert_eq!(seen, [0.4, 0.3, 0.2, 0.1], "the fifth contradiction deletes");
    }

    #[test]
    fn agent_qa_fallback_deltas_still_compute_like_javascript() {
        let d = TrustDeltas { confirm: 0.02, contradict: 0.05 };
        assert_eq!(confirm(0.5, &d), 0.52);
        let mut t = 0.5;
        let mut steps = 0;
        while let Contradiction::Lowered(next) = contradict(t, &d) {
            t = next;
            steps += 1;
        }
        assert_eq!(steps + 1, 10, "ten contradictions to deletion");
    }

    #[test]
    fn contradiction_floors_at_zero_and_deletes_tiny_trust() {
        let d = TrustDeltas::default();
        assert_eq!(contradict(0.05, &d), Contradiction::Deleted);
        assert_eq!(contradict(0.0, &d), Contradiction::Deleted);
        assert_eq!(contradict(0.1004, &d), Contradiction::Deleted, "0.0004 rounds to 0");
        assert_eq!(contradict(0.1006, &d), Contradiction::Lowered(0.001));
        assert_eq!(confirm(0.99, &d), 1.0);
    }
}
