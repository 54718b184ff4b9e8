//! raw.md truncation to the last 10 entries (harness-curator §2.3).
//!
//! Invariant: nothing appended during a pass is lost. The pass works on a snapshot (the first N
//! bytes); the rewrite, under the raw.md lock, is `retained entries of the snapshot` + `every byte
//! after offset N`. If the file no longer starts with the snapshot (a human rewrote it meanwhile)
//! the truncation is skipped rather than guessed. Retained entries keep their exact bytes.

use std::collections::BTreeSet;

use crate::raw::Entry;

/// How many entries raw.md keeps (§2.3).
pub const RAW_KEEP_ENTRIES: usize = 10;

/// The planned rewrite of the snapshot part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TruncationPlan {
    /// Text of the retained entries, newline-terminated.
    pub(crate) retained: String,
    /// How many entries that keeps.
    pub(crate) kept: usize,
    /// Entries in snapshot − entries retained (the output line's `raw` count).
    pub(crate) absorbed: usize,
}

/// Keeps the last [`RAW_KEEP_ENTRIES`] entries of `snapshot`, minus TRICK entries promoted this
/// pass, without backfilling older entries.
pub(crate) fn plan(
    snapshot: &str,
    entries: &[Entry],
    promoted: &BTreeSet<usize>,
) -> TruncationPlan {
    let first = entries.len().saturating_sub(RAW_KEEP_ENTRIES);
    let mut retained = String::new();
    let mut kept = 0;
    for (n, e) in entries.iter().enumerate().skip(first) {
        if promoted.contains(&n) {
            continue;
        }
        retained.push_str(&snapshot[e.span.clone()]);
        if !retained.ends_with('\n') {
            retained.push('\n');
        }
        kept += 1;
    }
    TruncationPlan { retained, kept, absorbed: entries.len() - kept }
}

/// The new file content given the current bytes, or `None` when the file no longer starts with
/// the snapshot (then truncation is skipped).
pub(crate) fn rewrite(current: &[u8], snapshot: &[u8], plan: &TruncationPlan) -> Option<Vec<u8>> {
    let tail = current.strip_prefix(snapshot)?;
    let mut out = plan.retained.as_bytes().to_vec();
    out.extend_from_slice(tail);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::raw::segment;

    #[test]
    fn keeps_last_ten_minus_promoted_without_backfill() {
        let text: String = (0..14)
            .map(|n| format!("[2026-01-01T00:00:{n:02}Z] worker F-{n} -: note {n}\n"))
            .collect();
        let entries = segment(&text);
        let promoted: BTreeSet<usize> = [12, 1].into();
        let p = plan(&text, &entries, &promoted);
        assert_eq!(p.kept, 9);
        assert_eq!(p.absorbed, 5);
        assert!(p.retained.starts_with("[2026-01-01T00:00:04Z]"));
        assert!(!p.retained.contains("note 12"));
        let current = format!("{text}[2026-01-01T00:01:00Z] worker F-9 -: late\n");
        let out = rewrite(current.as_bytes(), text.as_bytes(), &p).unwrap();
        assert!(String::from_utf8(out).unwrap().ends_with("late\n"));
        assert!(rewrite(b"someone rewrote it", text.as_bytes(), &p).is_none());
    }
}
