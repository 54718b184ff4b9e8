//! `summary.md`: re-derived from MEMORY.md every pass, hard-capped (harness-curator §5).
//!
//! Invariant: the rendered text has at most 40 physical lines (title and blank lines included) and
//! at most 800 estimated tokens (ceil(chars / 4)); the writer re-checks both after rendering and
//! the pass fails (previous summary kept) if they cannot be met. Lines are chosen round-robin by
//! priority — Lessons, then Avoid, then Decisions each round — so Decisions give way first.

use crate::error::{Error, Result};
use crate::fsio::{estimated_tokens, physical_lines};
use crate::memory_md::{Item, MemoryDoc, Section};

use crate::bounds::{SUMMARY_MAX_LINES, SUMMARY_MAX_TOKENS};
/// One summary line never exceeds this many characters (compressed to one line, §5 step 1).
const MAX_LINE_CHARS: usize = 200;

const IMPERATIVE: &[&str] = &["do not", "don't", "always", "never", "must", "avoid"];

fn is_imperative(s: &str) -> bool {
    let l = s.to_lowercase();
    IMPERATIVE.iter().any(|w| l.contains(w))
}

fn one_line(s: &str) -> String {
    let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if s.chars().count() <= MAX_LINE_CHARS {
        return s;
    }
    let cut: String = s.chars().take(MAX_LINE_CHARS - 1).collect();
    format!("{}…", cut.trim_end())
}

fn with_fids(statement: &str, fids: &[String]) -> String {
    let missing: Vec<&String> = fids.iter().filter(|f| !statement.contains(f.as_str())).collect();
    if missing.is_empty() {
        format!("- {statement}")
    } else {
        format!(
            "- {statement} ({})",
            missing.iter().map(|f| f.as_str()).collect::<Vec<_>>().join(", ")
        )
    }
}

/// One line naming its features: [`with_fids`] in [`one_line`], but when the cut would drop a
/// feature id the statement is cut instead, so every Lessons and Avoid line keeps the ids that
/// tie it to its evidence (§5 rule 3, "each containing at least one feature id").
fn fid_line(statement: &str, fids: &[String]) -> String {
    let line = one_line(&with_fids(statement, fids));
    if fids.iter().all(|f| line.contains(f.as_str())) {
        return line;
    }
    // Name as many ids as fit in half a line (there is always room for the first).
    let mut tail = String::new();
    for f in fids {
        let next = if tail.is_empty() { f.clone() } else { format!("{tail}, {f}") };
        if !tail.is_empty() && next.chars().count() > MAX_LINE_CHARS / 2 {
            break;
        }
        tail = next;
    }
    let tail = format!(" ({tail})");
    let room = MAX_LINE_CHARS.saturating_sub(tail.chars().count() + "- …".chars().count());
    let words = statement.split_whitespace().collect::<Vec<_>>().join(" ");
    let cut: String = words.chars().take(room).collect();
    format!("- {}…{tail}", cut.trim_end())
}

/// Numeric order of a feature id's last number, for "recency of newest evidence".
fn newest_fid(fids: &[String]) -> u64 {
    fids.iter()
        .filter_map(|f| f.rsplit('-').next().and_then(|n| n.parse::<u64>().ok()))
        .max()
        .unwrap_or(0)
}

fn rank_lessons(items: &[Item]) -> Vec<String> {
    let mut ranked: Vec<(usize, &Item)> =
        items.iter().filter(|i| !i.is_note()).enumerate().collect();
    ranked.sort_by(|(ai, a), (bi, b)| {
        let (af, bf) = (a.all_fids(), b.all_fids());
        // §5 step 1: (a) sightings, (b) recency — the item's date, the only date an item
        // carries (the day it was first seen) — (c) imperative or negative phrasing; then the
        // newest feature number and the file order, so the ranking is total.
        b.sightings()
            .cmp(&a.sightings())
            .then(b.date.cmp(&a.date))
            .then(is_imperative(&b.statement).cmp(&is_imperative(&a.statement)))
            .then(newest_fid(&bf).cmp(&newest_fid(&af)))
            .then(ai.cmp(bi))
    });
    ranked.into_iter().map(|(_, i)| fid_line(&i.statement, &i.all_fids())).collect()
}

fn decisions(items: &[Item]) -> Vec<String> {
    let mut live: Vec<(usize, &Item)> = items
        .iter()
        .filter(|i| !i.is_note())
        .enumerate()
        .filter(|(_, i)| !i.render().to_lowercase().contains("superseded"))
        .collect();
    live.sort_by(|(ai, a), (bi, b)| b.date.cmp(&a.date).then(bi.cmp(ai)));
    live.into_iter()
        .map(|(_, i)| match &i.why {
            Some(w) => one_line(&format!("- {} — {w}", i.statement)),
            None => one_line(&format!("- {}", i.statement)),
        })
        .collect()
}

fn avoid(doc: &MemoryDoc) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut history: Vec<&Item> =
        doc.items(Section::History).iter().filter(|i| !i.is_note()).collect();
    history.reverse(); // newest first
    for i in history {
        let fids = i.all_fids();
        if !fids.is_empty() {
            out.push(fid_line(&i.statement, &fids));
        }
    }
    for i in doc.items(Section::Lessons).iter().filter(|i| !i.is_note()) {
        let fids = i.all_fids();
        if i.sightings() >= 2 && is_imperative(&i.statement) {
            out.push(fid_line(&i.statement, &fids));
        }
    }
    out
}

fn render_parts(date: &str, lessons: &[String], decisions: &[String], avoid: &[String]) -> String {
    let mut s = format!("# Harness memory (curated {date})\n");
    for (heading, lines) in
        [("## Lessons", lessons), ("## Decisions (current)", decisions), ("## Avoid", avoid)]
    {
        if lines.is_empty() {
            continue;
        }
        s.push('\n');
        s.push_str(heading);
        s.push('\n');
        for l in lines {
            s.push_str(l);
            s.push('\n');
        }
    }
    s
}

fn fits(text: &str) -> bool {
    physical_lines(text) <= SUMMARY_MAX_LINES && estimated_tokens(text) <= SUMMARY_MAX_TOKENS
}

/// Renders summary.md for `doc`, dated `date` (`YYYY-MM-DD`), and verifies both bounds.
pub(crate) fn render(doc: &MemoryDoc, date: &str) -> Result<String> {
    let pools = [
        rank_lessons(doc.items(Section::Lessons)),
        avoid(doc),
        decisions(doc.items(Section::Decisions)),
    ];
    let mut taken = [0usize; 3];
    let mut open = [true; 3];
    // Lessons (0) and Avoid (1) come before Decisions (2) in every round.
    while open.iter().any(|o| *o) {
        for k in 0..3 {
            if !open[k] {
                continue;
            }
            if taken[k] >= pools[k].len() {
                open[k] = false;
                continue;
            }
            let mut trial = taken;
            trial[k] += 1;
            let text = render_parts(
                date,
                &pools[0][..trial[0]],
                &pools[2][..trial[2]],
                &pools[1][..trial[1]],
            );
            if fits(&text) {
                taken = trial;
            } else {
                open[k] = false;
            }
        }
    }
    let text =
        render_parts(date, &pools[0][..taken[0]], &pools[2][..taken[2]], &pools[1][..taken[1]]);
    check(&text)?;
    Ok(text)
}

/// The post-render check of §5 step 5.
pub(crate) fn check(text: &str) -> Result<()> {
    let (lines, tokens) = (physical_lines(text), estimated_tokens(text));
    if lines > SUMMARY_MAX_LINES || tokens > SUMMARY_MAX_TOKENS {
        return Err(Error::Bound {
            file: "summary.md",
            rule: format!(
                "{lines} lines (max {SUMMARY_MAX_LINES}), ~{tokens} tokens (max {SUMMARY_MAX_TOKENS})"
            ),
        });
    }
    Ok(())
}

/// Everything after the title line: two summaries with the same body say the same thing, so a
/// pass that would only change the date leaves the file alone (idempotency).
pub(crate) fn body(text: &str) -> &str {
    text.split_once('\n').map_or("", |(_, rest)| rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_by_evidence_then_imperative() {
        let mut doc = MemoryDoc::default();
        let l = doc.items_mut(Section::Lessons);
        l.push(Item::new("2026-01-01", "one sighting", None, vec!["F-1".into()]));
        l.push(Item::new("2026-01-01", "never skip seeds", None, vec!["F-1".into(), "F-2".into()]));
        l.push(Item::new("2026-01-01", "two sightings", None, vec!["F-1".into(), "F-2".into()]));
        let text = render(&doc, "2026-01-02").unwrap();
        let lessons: Vec<&str> = text.lines().filter(|l| l.starts_with("- ")).collect();
        assert_eq!(lessons[0], "- never skip seeds (F-1, F-2)");
        assert_eq!(lessons[1], "- two sightings (F-1, F-2)");
        assert!(text.contains("## Avoid\n- never skip seeds (F-1, F-2)\n"), "{text}");
        assert!(!text.contains("## Decisions"));
    }

    #[test]
    fn free_text_a_person_wrote_in_a_section_is_kept_but_never_summarized() {
        let doc = MemoryDoc::parse(
            "# MEMORY\n\n## Decisions\n\n## Context\n\n## History\n### F-002 notes\n\
             - [2026-04-04] F-002 escalated after 3 attempts\n\n## Lessons\n\
             - [2026-04-01] Never retry the search webhook twice (evidence: F-001)\n\
             See the runbook for details.\n",
        );
        assert_eq!((doc.count(Section::Lessons), doc.count(Section::History)), (1, 1));
        assert!(doc.render().contains("### F-002 notes\n") && doc.render().contains("runbook"));
        let text = render(&doc, "2026-04-06").unwrap();
        assert!(!text.contains("runbook") && !text.contains("###"), "{text}");
        assert!(text.contains("## Avoid\n- F-002 escalated after 3 attempts\n"), "{text}");
    }

    #[test]
    fn a_long_line_is_cut_in_its_statement_never_in_its_feature_ids() {
        let mut doc = MemoryDoc::default();
        let long =
            "the sandbox network kept dropping the websocket during the long suite ".repeat(4);
        let statement = format!("{long}so F-003 escalated");
        doc.items_mut(Section::History).push(Item::new("2026-04-05", &statement, None, vec![]));
        let text = render(&doc, "2026-04-06").unwrap();
        let avoid: Vec<&str> = text
            .split("## Avoid\n")
            .nth(1)
            .unwrap()
            .lines()
            .filter(|l| l.starts_with("- "))
            .collect();
        assert_eq!(avoid.len(), 1, "{text}");
        assert!(avoid[0].ends_with("… (F-003)"), "{}", avoid[0]);
        assert!(avoid[0].chars().count() <= MAX_LINE_CHARS, "{}", avoid[0].chars().count());
        let many: Vec<String> = (1..=60).map(|n| format!("F-{n:03}")).collect();
        let line = fid_line(&long, &many);
        assert!(line.chars().count() <= MAX_LINE_CHARS && line.contains("(F-001, "), "{line}");
    }

    #[test]
    fn on_a_date_tie_imperative_phrasing_outranks_a_later_feature() {
        let mut doc = MemoryDoc::default();
        let l = doc.items_mut(Section::Lessons);
        let yaml = "the yaml loader keeps trailing spaces";
        l.push(Item::new("2026-04-05", yaml, None, vec!["F-009".into()]));
        let never = "never call the payments API twice";
        l.push(Item::new("2026-04-05", never, None, vec!["F-006".into()]));
        let text = render(&doc, "2026-04-06").unwrap();
        let lessons: Vec<&str> = text.lines().filter(|l| l.starts_with("- ")).collect();
        assert_eq!(lessons[0], "- never call the payments API twice (F-006)", "{text}");
    }
}
