//! The rules provider: the embedded default, no LLM (ARCHITECTURE.md, "Decision providers").
//!
//! Three rules, all from the run itself:
//! 1. every observation injected into a step that passed is confirmed, once per run;
//! 2. a line `MEMO: <fact>` in a step's `observation` or `reasoning` adds that fact, in product
//!    scope unless written `MEMO(test):` or `MEMO(suite):` (suite without a suite context is
//!    product, as §5.4 does for any add);
//! 3. an add whose text is at least 0.85 Jaccard-similar (§5.8) to an existing observation of its
//!    scope confirms that observation instead, and a repeat of an earlier MEMO of the same run is
//!    dropped, so the rules never write the same fact twice.
//!
//! A reason names a step by its 0-based index, the number `query --step-index`, `step_index` and
//! the run record's `steps[i]` use, so "step 1" is `steps[1]` everywhere (issue 15).
//!
//! The provider never deprecates: on a passed run there is no evidence against any memory, and
//! failed runs take the §5.5 path without consulting a provider.

use std::collections::HashSet;
use std::sync::LazyLock;

use curator_core::similarity::{DUPLICATE_THRESHOLD, observation_similarity};
use curator_core::{ScopeName, Tier};
use regex::Regex;

use crate::curate::{Decision, DecisionScope, RunRecord};

use super::{CuratorInput, DecisionProvider, ProviderAnswer, ProviderError};

/// `MEMO:` / `MEMO(product|suite|test):` at the start of a line (after indentation).
static MEMO: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)^[ \t]*MEMO(?:\((product|suite|test)\))?:[ \t]*(.*?)[ \t]*\r?$")
        .expect("static regex")
});

/// Longest title the rules write; a longer first sentence is cut at a word boundary.
const MAX_TITLE_CHARS: usize = 120;

/// Confirms what helped, adds what the agent flagged.
#[derive(Debug, Clone)]
pub struct RulesProvider {
    /// Similarity at or above which a MEMO confirms an existing observation (default 0.85).
    pub threshold: f64,
}

impl Default for RulesProvider {
    fn default() -> Self {
        RulesProvider { threshold: DUPLICATE_THRESHOLD }
    }
}

/// One flagged fact.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Memo {
    pub(crate) scope: DecisionScope,
    pub(crate) text: String,
    /// 0-based step index.
    pub(crate) step: usize,
}

/// Every MEMO line of the run's steps, in step order (observation before reasoning).
pub(crate) fn memos(record: &RunRecord) -> Vec<Memo> {
    let mut out = Vec::new();
    for (i, step) in record.steps.iter().enumerate() {
        for text in [&step.observation, &step.reasoning].into_iter().flatten() {
            for cap in MEMO.captures_iter(text) {
                let body = cap.get(2).map_or("", |m| m.as_str()).trim();
                if body.is_empty() {
                    continue;
                }
                let scope = match cap.get(1).map(|m| m.as_str()) {
                    Some("test") => DecisionScope::Test,
                    Some("suite") if record.suite.is_some() => DecisionScope::Suite,
                    _ => DecisionScope::Product,
                };
                out.push(Memo { scope, text: body.to_owned(), step: i });
            }
        }
    }
    out
}

/// The title of a MEMO: its first sentence, at most [`MAX_TITLE_CHARS`] characters.
pub(crate) fn memo_title(text: &str) -> String {
    let first = text
        .match_indices(['.', '!', '?'])
        .map(|(at, _)| at)
        .find(|&at| text[at + 1..].starts_with(' '))
        .map_or(text, |at| &text[..at]);
    if first.chars().count() <= MAX_TITLE_CHARS {
        return first.to_owned();
    }
    let cut: String = first.chars().take(MAX_TITLE_CHARS - 1).collect();
    let at_word =
        cut.rfind(' ').filter(|&i| i > MAX_TITLE_CHARS / 2).map_or(cut.as_str(), |i| &cut[..i]);
    format!("{at_word}…")
}

fn scope_of(record: &RunRecord, scope: DecisionScope) -> (Tier, &ScopeName) {
    match (scope, &record.suite) {
        (DecisionScope::Suite, Some(s)) => (Tier::Suites, &s.id),
        (DecisionScope::Test, _) => (Tier::Tests, &record.test.id),
        _ => (Tier::Products, &record.product),
    }
}

impl DecisionProvider for RulesProvider {
    fn name(&self) -> &'static str {
        "rules"
    }

    fn decide(&self, input: &CuratorInput<'_>) -> Result<ProviderAnswer, ProviderError> {
        let record = input.record;
        let mut decisions = Vec::new();
        let mut confirmed: HashSet<&str> = HashSet::new();
        for (i, step) in record.steps.iter().enumerate() {
            if !step.is_passed() {
                continue;
            }
            for id in step.injected_ids() {
                if confirmed.insert(id.as_str()) {
                    decisions.push(Decision::Update {
                        observation_id: id.clone(),
                        reasoning: format!("Injected into step {i} ({}), which passed", step.name),
                    });
                }
            }
        }
        // (tier, scope, text) of the adds already decided, to drop repeats within the run.
        let mut added: Vec<(Tier, &ScopeName, String)> = Vec::new();
        for memo in memos(record) {
            let (tier, scope) = scope_of(record, memo.scope);
            let best = input
                .existing
                .iter()
                .filter(|o| o.tier == tier && o.scope == *scope)
                .map(|o| {
                    (
                        o,
                        observation_similarity(
                            &memo.text,
                            &o.observation.title,
                            &o.observation.content,
                        ),
                    )
                })
                .filter(|(_, sim)| *sim >= self.threshold)
                .max_by(|a, b| a.1.total_cmp(&b.1));
            if let Some((existing, sim)) = best {
                let id = existing.observation.id.as_str();
                if confirmed.insert(id) {
                    decisions.push(Decision::Update {
                        observation_id: id.to_owned(),
                        reasoning: format!(
                            "MEMO in step {} restates this observation (similarity {sim:.2})",
                            memo.step
                        ),
                    });
                }
                continue;
            }
            let repeat = added.iter().any(|(t, s, text)| {
                *t == tier
                    && *s == scope
                    && observation_similarity(&memo.text, text, text) >= self.threshold
            });
            if repeat {
                continue;
            }
            decisions.push(Decision::Add {
                title: memo_title(&memo.text),
                content: memo.text.clone(),
                scope: memo.scope,
                reasoning: format!("Flagged with MEMO in step {}", memo.step),
            });
            added.push((tier, scope, memo.text));
        }
        Ok(ProviderAnswer { decisions, token_usage: None })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use curator_core::{Observation, ObservationId};
    use curator_store::StoredObservation;
    use serde_json::json;

    fn record(steps: serde_json::Value, suite: bool) -> RunRecord {
        let mut v = json!({"product": "acme", "test": {"id": "t_x", "name": "Login"}, "status": "passed", "steps": steps});
        if suite {
            v["suite"] =
                json!({"id": "s_x", "tests": [{"test": "a.yaml", "id": "t_x"}], "position": 0});
        }
        RunRecord::from_value(&v).unwrap()
    }

    fn stored(tier: Tier, scope: &str, id: &str, title: &str, content: &str) -> StoredObservation {
        StoredObservation {
            tier,
            scope: ScopeName::new(scope).unwrap(),
            observation: Observation {
                id: ObservationId::parse(id).unwrap(),
                title: title.into(),
                content: content.into(),
                trust: 0.5,
                created: "2026-04-10T12:00:00.000Z".into(),
                last_confirmed: "2026-04-10T12:00:00.000Z".into(),
                confirmed_count: 0,
                contradicted_count: 0,
                source_test: "t_x".into(),
                suite: None,
                extra: Default::default(),
            },
        }
    }

    const A: &str = "obs_aa-bb-cc-dd-ee-ff";
    const B: &str = "obs_gg-hh-ii-jj-kk-ll";

    #[test]
    fn confirms_injections_of_passed_steps_once_and_ignores_failed_steps() {
        let r = record(
            json!([
                {"name": "one", "status": "passed", "injected": [A]},
                {"name": "two", "status": "passed", "injected": [A]},
                {"name": "three", "status": "failed", "injected": [B]}
            ]),
            false,
        );
        let answer =
            RulesProvider::default().decide(&CuratorInput { record: &r, existing: &[] }).unwrap();
        let ids: Vec<_> = answer
            .decisions
            .iter()
            .map(|d| match d {
                Decision::Update { observation_id, .. } => observation_id.as_str(),
                other => panic!("unexpected {other:?}"),
            })
            .collect();
        assert_eq!(ids, [A]);
        let Decision::Update { reasoning, .. } = &answer.decisions[0] else { unreachable!() };
        assert_eq!(reasoning, "Injected into step 0 (one), which passed", "0-based, as step_index");
    }

    #[test]
    fn memo_lines_add_in_the_scope_they_name() {
        let r = record(
            json!([{"name": "one", "status": "passed",
                    "observation": "clicked\nMEMO: Checkout: the coupon field is below the total. It accepts one code.",
                    "reasoning": "  MEMO(test): Login takes two redirects\nMEMO(suite): Suite logs in once\nMEMO:   "}]),
            false,
        );
        let answer =
            RulesProvider::default().decide(&CuratorInput { record: &r, existing: &[] }).unwrap();
        let adds: Vec<_> = answer
            .decisions
            .iter()
            .map(|d| match d {
                Decision::Add { title, scope, .. } => (title.as_str(), *scope),
                other => panic!("unexpected {other:?}"),
            })
            .collect();
        assert_eq!(
            adds,
            [
                ("Checkout: the coupon field is below the total", DecisionScope::Product),
                ("Login takes two redirects", DecisionScope::Test),
                ("Suite logs in once", DecisionScope::Product),
            ],
            "suite without suite context falls back to product; an empty MEMO adds nothing"
        );
    }

    #[test]
    fn a_memo_similar_to_an_existing_observation_confirms_it_instead() {
        let existing = [
            stored(
                Tier::Products,
                "acme",
                A,
                "Checkout: coupon field",
                "The coupon field sits below the cart total",
            ),
            stored(
                Tier::Tests,
                "t_x",
                B,
                "Checkout: coupon field",
                "The coupon field sits below the cart total",
            ),
        ];
        let r = record(
            json!([{"name": "one", "status": "passed",
                    "observation": "MEMO: the coupon field sits below the cart total\nMEMO: The coupon field sits below the cart total!"}]),
            true,
        );
        let answer = RulesProvider::default()
            .decide(&CuratorInput { record: &r, existing: &existing })
            .unwrap();
        assert_eq!(answer.decisions.len(), 1, "{:?}", answer.decisions);
        assert!(
            matches!(&answer.decisions[0], Decision::Update { observation_id, .. } if observation_id == A)
        );
    }

    #[test]
    fn repeated_memos_in_one_run_add_once_and_dissimilar_ones_add() {
        let existing =
            [stored(Tier::Products, "acme", A, "Search: results", "Results load in pages of 20")];
        let r = record(
            json!([{"name": "one", "status": "passed", "observation": "MEMO: Cart badge shows the item count"},
                   {"name": "two", "status": "passed", "reasoning": "MEMO: cart badge shows the item count."}]),
            false,
        );
        let answer = RulesProvider::default()
            .decide(&CuratorInput { record: &r, existing: &existing })
            .unwrap();
        assert_eq!(answer.decisions.len(), 1);
        assert!(matches!(&answer.decisions[0], Decision::Add { .. }));
    }

    #[test]
    fn long_titles_are_cut_at_a_word() {
        let long = "word ".repeat(60);
        let t = memo_title(long.trim());
        assert!(t.chars().count() <= MAX_TITLE_CHARS && t.ends_with('…'), "{t}");
        assert_eq!(memo_title("v1.2 is shown. Then more"), "v1.2 is shown");
    }
}
