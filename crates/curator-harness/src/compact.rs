//! MEMORY.md compaction: stale drops and the ~200-line bound (harness-curator §6).
//!
//! Invariant: nothing is deleted silently. An item is dropped only when it is stale (a project
//! path that no longer exists, a feature id features.json no longer lists) or when the line bound
//! forces it, in the §6 order: Context items without evidence → History of passed features →
//! single-evidence Lessons (oldest first each) → superseded Decisions. Every drop is reported. If
//! the bound still cannot be met, the caller keeps the previous file.

use crate::codebase::ProjectIndex;
use crate::error::{Error, Result};
use crate::fsio::physical_lines;
use crate::issues::FeatureStatuses;
use crate::memory_md::{Item, MemoryDoc, Section};

/// MEMORY.md's line bound (§6 "~200 lines", enforced as a hard limit on physical lines).
pub const MEMORY_MAX_LINES: usize = 200;

/// Why an item is stale, if it is.
pub(crate) fn stale_reason(
    item: &Item,
    project: &ProjectIndex,
    features: &FeatureStatuses,
) -> Option<String> {
    let text = item.render();
    if let Some(path) = project.stale_path(&text) {
        return Some(format!("path {path} no longer in the project"));
    }
    if features.is_known()
        && let Some(f) = item.all_fids().into_iter().find(|f| !features.contains(f))
    {
        return Some(format!("feature {f} not in features.json"));
    }
    None
}

/// Drops stale items; returns a description of each drop.
pub(crate) fn drop_stale(
    doc: &mut MemoryDoc,
    project: &ProjectIndex,
    features: &FeatureStatuses,
) -> Vec<String> {
    let mut dropped = Vec::new();
    for section in Section::ALL {
        doc.items_mut(section).retain(|item| match stale_reason(item, project, features) {
            Some(why) => {
                dropped.push(format!(
                    "stale {}: {} ({why})",
                    section.heading().trim_start_matches("## "),
                    item.statement
                ));
                false
            }
            None => true,
        });
    }
    dropped
}

fn is_superseded(item: &Item) -> bool {
    item.render().to_lowercase().contains("superseded")
}

/// Indices of `section`'s items matching `pick`, oldest first (undated first, then by date, then
/// by position — items are appended in time order).
fn oldest_first(doc: &MemoryDoc, section: Section, pick: impl Fn(&Item) -> bool) -> Vec<usize> {
    let mut idx: Vec<usize> =
        doc.items(section).iter().enumerate().filter(|(_, i)| pick(i)).map(|(n, _)| n).collect();
    idx.sort_by_key(|&n| (doc.items(section)[n].date.clone(), n));
    idx
}

/// Selects the items of one drop tier.
type Pick<'a> = Box<dyn Fn(&Item) -> bool + 'a>;

/// Drops the weakest items until the rendered file fits [`MEMORY_MAX_LINES`].
pub(crate) fn enforce_bound(
    doc: &mut MemoryDoc,
    features: &FeatureStatuses,
) -> Result<Vec<String>> {
    let mut dropped = Vec::new();
    let tiers: [(Section, Pick<'_>); 4] = [
        (Section::Context, Box::new(|i: &Item| i.all_fids().is_empty())),
        (
            Section::History,
            Box::new(|i: &Item| {
                let f = i.all_fids();
                !f.is_empty() && f.iter().all(|f| features.is_passed(f))
            }),
        ),
        (Section::Lessons, Box::new(|i: &Item| i.all_fids().len() <= 1)),
        (Section::Decisions, Box::new(is_superseded)),
    ];
    for (section, pick) in &tiers {
        while physical_lines(&doc.render()) > MEMORY_MAX_LINES {
            let Some(&n) = oldest_first(doc, *section, pick).first() else { break };
            let item = doc.items_mut(*section).remove(n);
            dropped.push(format!(
                "over {MEMORY_MAX_LINES} lines {}: {}",
                section.heading().trim_start_matches("## "),
                item.statement
            ));
        }
    }
    let lines = physical_lines(&doc.render());
    if lines > MEMORY_MAX_LINES {
        return Err(Error::Bound {
            file: "MEMORY.md",
            rule: format!(
                "{lines} lines > {MEMORY_MAX_LINES} after dropping every droppable item (§6 never drops other items)"
            ),
        });
    }
    Ok(dropped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weakest_go_first() {
        let mut doc = MemoryDoc::default();
        for n in 0..150 {
            doc.items_mut(Section::Decisions).push(Item::new(
                "2026-01-01",
                &format!("d{n}"),
                Some("w"),
                vec![],
            ));
        }
        for n in 0..60 {
            doc.items_mut(Section::Context).push(Item::new(
                "2026-01-01",
                &format!("c{n}"),
                None,
                vec![],
            ));
        }
        let dropped = enforce_bound(&mut doc, &FeatureStatuses::default()).unwrap();
        assert!(physical_lines(&doc.render()) <= MEMORY_MAX_LINES);
        assert_eq!(doc.count(Section::Decisions), 150);
        assert!(dropped.iter().all(|d| d.contains("Context")));
        // Decisions that are not superseded are never dropped: the bound fails instead.
        for n in 150..250 {
            doc.items_mut(Section::Decisions).push(Item::new(
                "2026-01-01",
                &format!("d{n}"),
                Some("w"),
                vec![],
            ));
        }
        assert!(matches!(
            enforce_bound(&mut doc, &FeatureStatuses::default()),
            Err(Error::Bound { .. })
        ));
    }
}
