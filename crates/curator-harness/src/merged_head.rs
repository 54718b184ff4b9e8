//! Which entries at the head of raw.md a committed pass has already merged.
//!
//! §2.3 keeps the last 10 entries in raw.md after a pass, so the next pass reads them again.
//! Merging is idempotent for almost everything (same-lemma items, listed evidence ids), but not
//! for evidence beyond the [`EVIDENCE_MAX`](crate::memory_md) ids an item lists: those are
//! counted as `+N more`, and an id that was counted there and is seen again cannot be told from a
//! new one. Re-merging the retained entries then grew `+N more` on every pass with no new input,
//! and that count ranks the summary and the drop order.
//!
//! So a pass records, in the same journal as MEMORY.md (one commit), the keys of the entries it
//! leaves at the head of raw.md. The next pass replays an entry as already merged only while
//! raw.md still begins with exactly those entries, in that order: a hand edit, or a cut that was
//! skipped, makes the prefix differ and the pass merges everything again, as before — never
//! losing an entry, at worst counting a retained one again.

use serde::{Deserialize, Serialize};

use crate::raw::hex;

/// Relative to the state directory.
pub(crate) const MERGED_HEAD_REL: &str = "memory/.merged.json";

/// The keys (SHA-256 of each entry's bytes) of raw.md's first entries, already merged.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct MergedHead {
    entries: Vec<String>,
}

impl MergedHead {
    /// Reads the record; anything unreadable is no record (everything is merged again).
    pub(crate) fn parse(text: &str) -> MergedHead {
        serde_json::from_str(text).unwrap_or_default()
    }

    /// The record of `keys`, in raw.md order.
    pub(crate) fn of(keys: impl IntoIterator<Item = [u8; 32]>) -> MergedHead {
        MergedHead { entries: keys.into_iter().map(|k| hex(&k)).collect() }
    }

    pub(crate) fn render(&self) -> String {
        serde_json::to_string(self).expect("merged head serializes") + "\n"
    }

    /// A matcher over raw.md's entries in file order.
    pub(crate) fn matcher(&self) -> HeadMatcher<'_> {
        HeadMatcher { head: self, next: 0, broken: false }
    }
}

/// Walks raw.md's entries against the record.
#[derive(Debug)]
pub(crate) struct HeadMatcher<'a> {
    head: &'a MergedHead,
    next: usize,
    broken: bool,
}

impl HeadMatcher<'_> {
    /// Whether the record may still match the next entry: false once past it or broken, when
    /// [`HeadMatcher::already_merged`] can only answer false.
    pub(crate) fn matching(&self) -> bool {
        !self.broken && self.next < self.head.entries.len()
    }

    /// Whether the next entry of raw.md, with key `key`, was merged by a committed pass: true
    /// while every entry so far matched the record, in order.
    pub(crate) fn already_merged(&mut self, key: &[u8; 32]) -> bool {
        if self.broken {
            return false;
        }
        match self.head.entries.get(self.next) {
            Some(k) if *k == hex(key) => {
                self.next += 1;
                true
            }
            _ => {
                self.broken = true;
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(b: u8) -> [u8; 32] {
        [b; 32]
    }

    #[test]
    fn only_an_unbroken_prefix_in_order_counts_as_merged() {
        let head = MergedHead::of([key(1), key(2)]);
        let mut m = head.matcher();
        assert!(m.already_merged(&key(1)));
        assert!(m.already_merged(&key(2)));
        assert!(!m.matching(), "past the record nothing can match");
        assert!(!m.already_merged(&key(3)), "past the record");

        let mut m = head.matcher();
        assert!(!m.already_merged(&key(2)), "out of order");
        assert!(!m.already_merged(&key(2)), "a broken prefix stays broken");
        assert!(!m.matching());
    }

    #[test]
    fn the_record_round_trips_and_garbage_is_no_record() {
        let head = MergedHead::of([key(7)]);
        assert_eq!(MergedHead::parse(&head.render()), head);
        assert_eq!(MergedHead::parse("{not json"), MergedHead::default());
        assert!(!MergedHead::parse("").matcher().already_merged(&key(7)));
    }
}
