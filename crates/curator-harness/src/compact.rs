//! MEMORY.md compaction: the stale test and the drop order that meets the bound
//! (harness-curator §6; issue 16 item 3).
//!
//! Invariant: nothing is deleted silently, and a pass always meets MEMORY.md's bound. An item is
//! dropped only when it is stale (a project path that no longer exists, a feature id features.json
//! no longer lists) or when the bound forces it, in [`DROP_ORDER`]: first the spec's four tiers —
//! Context items without evidence → History of passed features → single-evidence Lessons →
//! superseded Decisions — and, where the spec would give up (before issue 16 the pass then failed
//! on every later pass and raw.md was never truncated), four more: any Context → any History →
//! Lessons with the fewest sightings → Decisions. Oldest first within a tier. Every dropped item
//! goes to the archive with its reason (`archive.rs`).

use crate::codebase::ProjectIndex;
use crate::issues::FeatureStatuses;
use crate::memory_md::{Item, Section};

/// One step of the drop order.
#[derive(Debug)]
pub(crate) struct Tier {
    /// The section it drops from.
    pub(crate) section: Section,
    /// Which items of the section qualify.
    pub(crate) pick: fn(&Item, &FeatureStatuses) -> bool,
    /// Fewest sightings first (then oldest), instead of oldest first.
    pub(crate) by_evidence: bool,
    /// The reason written to the archive.
    pub(crate) reason: &'static str,
}

fn any(_: &Item, _: &FeatureStatuses) -> bool {
    true
}

fn no_evidence(i: &Item, _: &FeatureStatuses) -> bool {
    i.all_fids().is_empty()
}

fn of_passed_features(i: &Item, f: &FeatureStatuses) -> bool {
    let fids = i.all_fids();
    !fids.is_empty() && fids.iter().all(|id| f.is_passed(id))
}

fn single_evidence(i: &Item, _: &FeatureStatuses) -> bool {
    i.sightings() <= 1
}

fn superseded(i: &Item, _: &FeatureStatuses) -> bool {
    i.render().to_lowercase().contains("superseded")
}

/// The order in which items go when MEMORY.md is over its bound.
pub(crate) const DROP_ORDER: [Tier; 8] = [
    Tier {
        section: Section::Context,
        pick: no_evidence,
        by_evidence: false,
        reason: "over the MEMORY.md bound: Context item without evidence",
    },
    Tier {
        section: Section::History,
        pick: of_passed_features,
        by_evidence: false,
        reason: "over the MEMORY.md bound: History of a passed feature",
    },
    Tier {
        section: Section::Lessons,
        pick: single_evidence,
        by_evidence: false,
        reason: "over the MEMORY.md bound: Lesson with one evidence case",
    },
    Tier {
        section: Section::Decisions,
        pick: superseded,
        by_evidence: false,
        reason: "over the MEMORY.md bound: superseded Decision",
    },
    Tier {
        section: Section::Context,
        pick: any,
        by_evidence: false,
        reason: "over the MEMORY.md bound: oldest Context",
    },
    Tier {
        section: Section::History,
        pick: any,
        by_evidence: false,
        reason: "over the MEMORY.md bound: oldest History",
    },
    Tier {
        section: Section::Lessons,
        pick: any,
        by_evidence: true,
        reason: "over the MEMORY.md bound: Lesson with the fewest sightings",
    },
    Tier {
        section: Section::Decisions,
        pick: any,
        by_evidence: false,
        reason: "over the MEMORY.md bound: oldest Decision",
    },
];

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
