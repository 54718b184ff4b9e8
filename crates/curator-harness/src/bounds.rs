//! Every numeric bound of harness memory, in one place (harness-curator §2.3, §5, §6, §7; issue 16
//! item 3: bounds in lines *and* bytes, evidence lists bounded).
//!
//! The spec's bounds count lines; a line can be arbitrarily long, so each file also has a byte cap
//! and each item a length cap — otherwise a 60-line identity file could hold 82 KB. Every bound is
//! checked after rendering, and a pass that cannot meet one by merging drops the weakest items by
//! the documented order *into the archive* (`archive.rs`) and finishes: a bound never makes a pass
//! fail, and nothing leaves a file without a record.

/// raw.md keeps its last 10 entries after a pass (§2.3).
pub const RAW_KEEP_ENTRIES: usize = 10;

/// MEMORY.md: physical lines, headings included (§6 "~200 lines", enforced).
pub const MEMORY_MAX_LINES: usize = 200;

/// MEMORY.md: bytes.
pub const MEMORY_MAX_BYTES: usize = 32 * 1024;

/// One MEMORY.md or identity statement (with its why): characters. A longer entry is cut with `…`
/// in the item; the whole entry stays in the archive.
pub const ITEM_MAX_CHARS: usize = 300;

/// Evidence feature ids listed on one item; further sightings are counted as `+N more`.
pub const EVIDENCE_MAX: usize = 8;

/// Missions listed on one identity entry.
pub const MISSIONS_MAX: usize = 4;

/// summary.md: physical lines, title and blank lines included (§5).
pub const SUMMARY_MAX_LINES: usize = 40;

/// summary.md: tokens, estimated as ceil(chars / 4) (§5).
pub const SUMMARY_MAX_TOKENS: usize = 800;

/// identity/<role>.md: physical lines; compaction runs above it (§7).
pub const IDENTITY_MAX_LINES: usize = 60;

/// identity/<role>.md: bytes.
pub const IDENTITY_MAX_BYTES: usize = 8 * 1024;

/// Cuts `text` to at most `max` characters, ending in `…` when cut.
pub(crate) fn cap_chars(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.truncate(out.trim_end().len());
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_count_characters_not_bytes() {
        assert_eq!(cap_chars("abc", 3), "abc");
        assert_eq!(cap_chars("abcd", 3), "ab…");
        assert_eq!(cap_chars("éééé", 3).chars().count(), 3);
    }
}
