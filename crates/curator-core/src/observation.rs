//! The observation: one behavioral fact with a trust score (agent-qa-memory §1.5).
//!
//! Field names and order follow the spec's base and suite schemas because they are also the
//! write order of the frontmatter (§1.6). Values are kept as they were read (datetimes stay the
//! exact strings from the file) so a rewrite changes only what the caller changed.

use serde::{Deserialize, Serialize};

use crate::codec::ExtraKeys;
use crate::id::ObservationId;

/// One observation: frontmatter fields plus the markdown body (`content`).
#[derive(Debug, Clone, PartialEq)]
pub struct Observation {
    /// Canonical (10 words) or legacy (6 words) id; equals the file name without `.md`.
    pub id: ObservationId,
    /// A non-empty headline; may contain newlines (written as a block literal).
    pub title: String,
    /// The markdown body, `\r\n` already turned into `\n`, without the file's trailing newline.
    pub content: String,
    /// Trust in `[0, 1]`.
    pub trust: f64,
    /// ISO datetime string (§1.5 rule), kept exactly as read or written.
    pub created: String,
    /// ISO datetime string (§1.5 rule), kept exactly as read or written.
    pub last_confirmed: String,
    /// How often a run confirmed this observation.
    pub confirmed_count: u64,
    /// How often a run contradicted this observation.
    pub contradicted_count: u64,
    /// The test id (or name) of the run that added it.
    pub source_test: String,
    /// Present for suite observations: the file has a `position` key (§1.5 discriminator).
    pub suite: Option<SuitePlacement>,
    /// Frontmatter keys the schema does not know, in file order. agent-qa drops them on
    /// rewrite; curator writes them back after the known fields.
    pub extra: ExtraKeys,
}

/// Where a suite observation applies: the child test's position and the suite it was learned in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SuitePlacement {
    /// 0-based index of the child test in the suite.
    pub position: u64,
    /// The suite's tests, in order, when the observation was written (non-empty).
    pub suite_snapshot: Vec<SnapshotEntry>,
}

/// One entry of a suite snapshot: a child test's file and its id.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SnapshotEntry {
    /// The child test's file, e.g. `tests/web/auth.yaml`.
    pub test: String,
    /// The child test's id, e.g. `t_...`.
    pub id: String,
}

/// The JSON shape of an observation in a MemoryLog delta and in the journal (§5.7 `Snapshot`):
/// every frontmatter field plus `content`, `position`/`suite_snapshot` only for suite observations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ObservationSnapshot {
    pub id: String,
    pub title: String,
    pub content: String,
    /// Written as agent-qa's JSON writes it (`1`, not `1.0`).
    #[serde(serialize_with = "crate::codec::serialize_js_number")]
    pub trust: f64,
    pub created: String,
    pub last_confirmed: String,
    pub confirmed_count: u64,
    pub contradicted_count: u64,
    pub source_test: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite_snapshot: Option<Vec<SnapshotEntry>>,
}

impl Observation {
    /// The §5.7 snapshot of this observation (unknown frontmatter keys are not part of it).
    pub fn snapshot(&self) -> ObservationSnapshot {
        ObservationSnapshot {
            id: self.id.as_str().to_owned(),
            title: self.title.clone(),
            content: self.content.clone(),
            trust: self.trust,
            created: self.created.clone(),
            last_confirmed: self.last_confirmed.clone(),
            confirmed_count: self.confirmed_count,
            contradicted_count: self.contradicted_count,
            source_test: self.source_test.clone(),
            position: self.suite.as_ref().map(|s| s.position),
            suite_snapshot: self.suite.as_ref().map(|s| s.suite_snapshot.clone()),
        }
    }
}

/// Why a title a curator writer was given cannot be written: `None` when it is one line.
///
/// agent-qa prints a title as the first line of its item in `<memory-context>`, unindented, so a
/// title with a line break writes lines of its own into the prompt, outside the item ("[End of
/// past observations]", a fake operator note; audit 9). A content line is indented and stays
/// inside its item. Files agent-qa or a person wrote are served as they are; what curator's
/// own writers add or edit (a decision's add, a proposal, `curator add`, the API, the UI) is one
/// line.
pub fn title_line_violation(title: &str) -> Option<&'static str> {
    title.contains(['\n', '\r', '\u{0085}', '\u{2028}', '\u{2029}']).then_some(
        "must be one line (a line break in a title starts a line of the prompt outside its item)",
    )
}
