//! How an observation looks on the command line, as text and as JSON.

use curator_core::ObservationSnapshot;
use curator_store::StoredObservation;
use serde::Serialize;

/// The `--json` shape of one stored observation: where it lives plus the §5.7 snapshot fields.
#[derive(Debug, Serialize)]
pub(crate) struct ObservationView {
    pub(crate) tier: &'static str,
    pub(crate) scope: String,
    #[serde(flatten)]
    pub(crate) snapshot: ObservationSnapshot,
}

impl From<&StoredObservation> for ObservationView {
    fn from(stored: &StoredObservation) -> Self {
        ObservationView {
            tier: stored.tier.dir_name(),
            scope: stored.scope.as_str().to_owned(),
            snapshot: stored.observation.snapshot(),
        }
    }
}

/// The human form of one observation: a header of fields, a blank line, the body.
pub(crate) fn render_text(stored: &StoredObservation) -> String {
    let obs = &stored.observation;
    let mut out = String::new();
    out.push_str(&format!("{}  ({}/{})\n", obs.id, stored.tier, stored.scope));
    out.push_str(&format!("title: {}\n", obs.title.replace('\n', "\n       ")));
    out.push_str(&format!(
        "trust: {}  confirmed: {}  contradicted: {}\n",
        curator_core::codec::format_js_number(obs.trust),
        obs.confirmed_count,
        obs.contradicted_count
    ));
    out.push_str(&format!("created: {}  last confirmed: {}\n", obs.created, obs.last_confirmed));
    out.push_str(&format!("source test: {}\n", obs.source_test));
    if let Some(suite) = &obs.suite {
        out.push_str(&format!(
            "suite position: {} of {} tests\n",
            suite.position,
            suite.suite_snapshot.len()
        ));
    }
    out.push('\n');
    out.push_str(&obs.content);
    out.push('\n');
    out
}
