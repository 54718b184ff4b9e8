//! Journal entries as before/after line diffs, so a reviewer sees what a change did to the
//! observation rather than a one-line summary of it (issue 15 item 5).
//!
//! The journal keeps the file's exact text before and after each change (what `undo` restores),
//! so the diff is of the file as it was on disk: frontmatter and body, byte for byte. Entries
//! written before the journal kept file texts, and ablation notes that changed no file, carry
//! only the §5.7 snapshots; those are diffed as one `field: value` line per field instead.
//! Unchanged runs of lines are cut to [`CONTEXT`] lines around each change. The result is plain
//! data rendered by askama (escaped), so a hostile observation text stays text.

use curator_core::ObservationSnapshot;
use curator_store::JournalEntry;
use similar::{ChangeTag, TextDiff};

/// Unchanged lines kept before and after each changed line.
const CONTEXT: usize = 2;

/// One line of a diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DiffLine {
    /// `add`, `del`, `same`, or `gap` (unchanged lines left out).
    pub(crate) kind: &'static str,
    pub(crate) text: String,
}

/// What an entry changed, line by line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EntryDiff {
    /// `file` when the file texts were diffed, `fields` when only the snapshots were.
    pub(crate) source: &'static str,
    pub(crate) lines: Vec<DiffLine>,
    pub(crate) added: usize,
    pub(crate) removed: usize,
}

/// The diff of one journal entry.
pub(crate) fn entry_diff(e: &JournalEntry) -> EntryDiff {
    if e.before_file.is_some() || e.after_file.is_some() {
        let before = e.before_file.as_deref().unwrap_or("");
        let after = e.after_file.as_deref().unwrap_or("");
        return line_diff("file", before, after);
    }
    let before = e.before.as_ref().map(fields_text).unwrap_or_default();
    let after = e.after.as_ref().map(fields_text).unwrap_or_default();
    line_diff("fields", &before, &after)
}

/// A snapshot as one `field: value` line per field (content lines indented under it).
fn fields_text(s: &ObservationSnapshot) -> String {
    let mut text = format!(
        "title: {}\ntrust: {}\ncreated: {}\nlast_confirmed: {}\nconfirmed_count: {}\n\
         contradicted_count: {}\nsource_test: {}\n",
        s.title,
        s.trust,
        s.created,
        s.last_confirmed,
        s.confirmed_count,
        s.contradicted_count,
        s.source_test
    );
    if let Some(position) = s.position {
        text.push_str(&format!("position: {position}\n"));
    }
    text.push_str("content:\n");
    for line in s.content.lines() {
        text.push_str("  ");
        text.push_str(line);
        text.push('\n');
    }
    text
}

fn line_diff(source: &'static str, before: &str, after: &str) -> EntryDiff {
    let diff = TextDiff::from_lines(before, after);
    let mut out = EntryDiff { source, lines: Vec::new(), added: 0, removed: 0 };
    for (i, group) in diff.grouped_ops(CONTEXT).iter().enumerate() {
        if i > 0 {
            out.lines.push(DiffLine { kind: "gap", text: "…".to_owned() });
        }
        for op in group {
            for change in diff.iter_changes(op) {
                let kind = match change.tag() {
                    ChangeTag::Insert => {
                        out.added += 1;
                        "add"
                    }
                    ChangeTag::Delete => {
                        out.removed += 1;
                        "del"
                    }
                    ChangeTag::Equal => "same",
                };
                let text = change.value().trim_end_matches(['\n', '\r']).to_owned();
                out.lines.push(DiffLine { kind, text });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(d: &EntryDiff) -> Vec<(&str, &str)> {
        d.lines.iter().map(|l| (l.kind, l.text.as_str())).collect()
    }

    #[test]
    fn a_changed_line_shows_as_removed_then_added_with_context() {
        let before = "---\nid: obs_x\ntrust: 0.8\ncontradicted_count: 0\n---\nbody\n";
        let after = "---\nid: obs_x\ntrust: 0.7\ncontradicted_count: 1\n---\nbody\n";
        let d = line_diff("file", before, after);
        assert_eq!((d.added, d.removed), (2, 2));
        assert_eq!(
            kinds(&d),
            [
                ("same", "---"),
                ("same", "id: obs_x"),
                ("del", "trust: 0.8"),
                ("del", "contradicted_count: 0"),
                ("add", "trust: 0.7"),
                ("add", "contradicted_count: 1"),
                ("same", "---"),
                ("same", "body"),
            ]
        );
    }

    #[test]
    fn far_apart_changes_are_separated_by_a_gap() {
        let before: String = (0..20).map(|i| format!("line {i}\n")).collect();
        let after = before.replace("line 1\n", "line one\n").replace("line 18\n", "line x\n");
        let d = line_diff("file", &before, &after);
        assert_eq!(d.lines.iter().filter(|l| l.kind == "gap").count(), 1);
        assert!(d.lines.len() < 20, "unchanged lines far from a change are left out");
    }

    #[test]
    fn creation_and_deletion_are_all_added_or_all_removed() {
        let created = line_diff("file", "", "a\nb\n");
        assert_eq!((created.added, created.removed), (2, 0));
        let deleted = line_diff("file", "a\nb", "");
        assert_eq!((deleted.added, deleted.removed), (0, 2));
        assert_eq!(line_diff("file", "same\n", "same\n").added, 0);
    }

    #[test]
    fn entries_without_file_texts_diff_their_snapshots() {
        let snap = ObservationSnapshot {
            id: "obs_x".into(),
            title: "T".into(),
            content: "one\ntwo".into(),
            trust: 0.5,
            created: "c".into(),
            last_confirmed: "l".into(),
            confirmed_count: 1,
            contradicted_count: 0,
            source_test: "t".into(),
            position: None,
            suite_snapshot: None,
        };
        let mut after = snap.clone();
        after.trust = 0.55;
        let entry: JournalEntry = serde_json::from_value(serde_json::json!({
            "time": "2026-01-01T00:00:00.000Z", "action": "confirm", "tier": "products",
            "scope": "p", "id": "obs_x", "reasoning": "r",
            "before": snap, "after": after,
        }))
        .unwrap();
        let d = entry_diff(&entry);
        assert_eq!(d.source, "fields");
        assert!(kinds(&d).contains(&("del", "trust: 0.5")));
        assert!(kinds(&d).contains(&("add", "trust: 0.55")));
    }
}
