//! Timing samples and the markdown the benchmark prints (issue 3, "Must show": ratios, p50/p99).
//!
//! Invariant: every figure printed comes from a measured sample set; percentiles are nearest-rank
//! over the sorted samples, so p99 of 640 samples is the 634th smallest, never an interpolation.

use std::fmt::Write as _;
use std::time::Duration;

/// A set of durations.
#[derive(Debug, Clone, Default)]
pub(crate) struct Samples(Vec<Duration>);

impl Samples {
    pub(crate) fn push(&mut self, d: Duration) {
        self.0.push(d);
    }

    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    /// Nearest-rank percentile, `q` in `(0, 1]`; zero for an empty set.
    pub(crate) fn pct(&self, q: f64) -> Duration {
        if self.0.is_empty() {
            return Duration::ZERO;
        }
        let mut sorted = self.0.clone();
        sorted.sort();
        let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
        sorted[rank - 1]
    }

    pub(crate) fn p50(&self) -> Duration {
        self.pct(0.5)
    }

    pub(crate) fn p99(&self) -> Duration {
        self.pct(0.99)
    }
}

/// `123 µs`, `4.56 ms`, `7.89 s`.
pub(crate) fn fmt_dur(d: Duration) -> String {
    let us = d.as_secs_f64() * 1e6;
    if us < 1000.0 {
        format!("{us:.0} µs")
    } else if us < 1e6 {
        format!("{:.2} ms", us / 1e3)
    } else {
        format!("{:.2} s", us / 1e6)
    }
}

/// `a ÷ b` as `12.3×`, or `–` when either side is missing.
pub(crate) fn ratio(a: Duration, b: Duration) -> String {
    if a.is_zero() || b.is_zero() {
        return "–".to_owned();
    }
    let r = a.as_secs_f64() / b.as_secs_f64();
    if r >= 10.0 { format!("{r:.0}×") } else { format!("{r:.2}×") }
}

/// A markdown table under construction.
#[derive(Debug)]
pub(crate) struct Table {
    out: String,
}

impl Table {
    pub(crate) fn new(header: &[&str]) -> Self {
        let mut out = format!("| {} |\n|", header.join(" | "));
        for _ in header {
            out.push_str("---|");
        }
        out.push('\n');
        Table { out }
    }

    pub(crate) fn row(&mut self, cells: &[String]) {
        let _ = writeln!(self.out, "| {} |", cells.join(" | "));
    }

    pub(crate) fn finish(self) -> String {
        self.out
    }
}
