//! Shared builders: a valid observation and its file text.

use curator_core::codec::ExtraKeys;
use curator_core::{Observation, ObservationId, SnapshotEntry, SuitePlacement};

pub(crate) const ID: &str = "obs_amber-basin-cedar-delta-ember-fjord-grove-harbor-island-jungle";
pub(crate) const LEGACY_ID: &str = "obs_gale-harp-icon-jazz-kiln-lynx";

/// A valid base observation.
pub(crate) fn observation() -> Observation {
    Observation {
        id: ObservationId::parse(ID).unwrap(),
        title: "Checkout button needs a second click".into(),
        content: "Click **Pay now** twice.".into(),
        trust: 0.5,
        created: "2026-04-10T12:00:00.000Z".into(),
        last_confirmed: "2026-04-12T08:30:15.250Z".into(),
        confirmed_count: 1,
        contradicted_count: 0,
        source_test: "t_lack-auto-quit-dow-boat-urus-mild-pine-rose-tide".into(),
        suite: None,
        extra: ExtraKeys::default(),
    }
}

/// A valid suite observation.
pub(crate) fn suite_observation() -> Observation {
    Observation {
        suite: Some(SuitePlacement {
            position: 1,
            suite_snapshot: vec![
                SnapshotEntry { test: "tests/web/a.yaml".into(), id: "t_a".into() },
                SnapshotEntry { test: "tests/web/b.yaml".into(), id: "t_b".into() },
            ],
        }),
        ..observation()
    }
}

/// The frontmatter lines of [`observation`] before `source_test`, to build variants from.
pub(crate) const BASE_LINES: &str =
    "id: obs_amber-basin-cedar-delta-ember-fjord-grove-harbor-island-jungle
title: Checkout button needs a second click
trust: 0.5
created: 2026-04-10T12:00:00.000Z
last_confirmed: 2026-04-12T08:30:15.250Z
confirmed_count: 1
contradicted_count: 0
source_test: t_lack-auto-quit-dow-boat-urus-mild-pine-rose-tide
";

/// A file with `frontmatter` (lines ending in `\n`) and `body`.
pub(crate) fn file(frontmatter: &str, body: &str) -> String {
    format!("---\n{frontmatter}---\n{body}\n")
}

/// [`BASE_LINES`] with the line of `key` replaced by `line` (or removed when `line` is empty).
pub(crate) fn with_line(key: &str, line: &str) -> String {
    let mut out = String::new();
    let mut found = false;
    for l in BASE_LINES.lines() {
        if l.starts_with(&format!("{key}:")) {
            found = true;
            if !line.is_empty() {
                out.push_str(line);
                out.push('\n');
            }
        } else {
            out.push_str(l);
            out.push('\n');
        }
    }
    assert!(found, "no line for {key}");
    out
}
