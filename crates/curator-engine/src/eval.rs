//! Retrieval quality on a labelled query set: the measure behind `curator eval` (issues 3, 14).
//!
//! The eval set is a memory root plus `queries.jsonl` (format in `eval/README.md`). For each
//! query the caller's `run_query` returns the ids it would inject for that step at a given cap,
//! best first; [`evaluate`] asks twice — at the configured cap (what is really injected) and
//! with the cap raised to `max(k, 10)` (how well the mode ranks) — and reports recall@k, MRR@10
//! and nDCG@10 over the queries that have relevant memory, the irrelevant-injection rate at the
//! configured cap over all of them, and every figure again per class label.
//!
//! This module never ranks anything itself: the retrieval engine plugs in through `run_query`,
//! so the same labels measure every mode (`terms`, `phrase`, and the plain BM25 baseline of
//! [`baseline_ids`]) and every future ranking, and a figure can only move because the ranking
//! did.
//!
//! What the irrelevant-injection rate counts: every id injected at the configured cap for every
//! query (the list is taken to be exactly the injection, so the engine must apply `minTrust`
//! and the cap before returning). An id is irrelevant unless it is the first occurrence of a
//! labelled relevant id of that query; so every id injected for a "nothing" query (relevant
//! `[]`) is irrelevant, and a second copy of a relevant id is too. Rate = irrelevant /
//! injected, 0 when nothing at all was injected.

mod baseline;
mod metrics;
mod queries;

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

use curator_core::{ObservationId, ScopeName, SnapshotEntry};
use serde::Serialize;

pub use baseline::baseline_ids;
pub use metrics::{irrelevant_injections, missed_at_k, ndcg_at, recall_at_k, reciprocal_rank};
pub use queries::{load_queries, parse_queries};

/// The cutoff of nDCG, fixed so figures stay comparable across runs whatever `--k` is.
pub const NDCG_CUTOFF: usize = 10;

/// One labelled step of the eval set.
#[derive(Debug, Clone, PartialEq)]
pub struct EvalQuery {
    /// 1-based line in `queries.jsonl`, for messages.
    pub line: usize,
    /// The step text as a test agent writes it.
    pub query: String,
    /// The product whose memory the step sees (`products/<product>`).
    pub product: ScopeName,
    /// The test running the step (`tests/<test>`); for a suite step, the child test's id.
    pub test: ScopeName,
    /// Present when the step runs as a child of a suite.
    pub suite: Option<EvalSuite>,
    /// Observations a careful QA agent would want injected for this step; empty = inject nothing.
    pub relevant: Vec<ObservationId>,
    /// What kind of step this is (`inflection`, `synonym`, `short`, …), for per-class figures.
    pub classes: Vec<String>,
    /// Why the label is what it is (free text, not used by the metrics).
    pub note: Option<String>,
}

/// The suite context of a step: which suite, its current tests, and the child's position.
#[derive(Debug, Clone, PartialEq)]
pub struct EvalSuite {
    /// The suite id (`suites/<id>`).
    pub id: ScopeName,
    /// The suite's child tests in order, compared with each observation's `suite_snapshot`.
    pub tests: Vec<SnapshotEntry>,
    /// 0-based index of the running child test in `tests`.
    pub position: u64,
}

impl EvalQuery {
    /// The relevant ids as strings, the form the metrics compare.
    pub fn relevant_ids(&self) -> Vec<String> {
        self.relevant.iter().map(|id| id.as_str().to_owned()).collect()
    }
}

/// Why an eval could not be loaded or run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EvalError {
    /// The queries file could not be read.
    #[error("{}: cannot read queries: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A line of the queries file breaks the format.
    #[error("{source_name} line {line}: field `{field}`: {message}")]
    Field { source_name: String, line: usize, field: String, message: String },
    /// `k` must be at least 1.
    #[error("--k must be at least 1 (got {0})")]
    InvalidK(usize),
    /// The retrieval engine failed on one query; the eval stops because a skipped query would
    /// make every figure look better than it is.
    #[error("query on line {line} ({query:?}) failed: {source}")]
    Query {
        line: usize,
        query: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// How deep an eval looks: recall at `k`, and what is injected at the configured `cap`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EvalDepth {
    /// The `k` of recall@k.
    pub k: usize,
    /// The configured `maxInjections`: what the irrelevant-injection figures count.
    pub cap: usize,
}

impl EvalDepth {
    /// How many results the ranking figures read: `k`, and at least [`NDCG_CUTOFF`] so MRR@10
    /// and nDCG@10 see ten. Every mode ranks and then truncates, so the first `k` of this list
    /// are exactly what a cap of `k` would inject.
    pub fn ranking_depth(&self) -> usize {
        self.k.max(NDCG_CUTOFF)
    }
}

/// Figures for one mode over a set of queries (the whole set, or one class of it).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EvalSummary {
    /// Number of queries run.
    pub queries: usize,
    /// Queries with at least one relevant id (the ones recall, MRR and nDCG average over).
    pub answerable: usize,
    /// Queries whose right answer is to inject nothing.
    pub nothing: usize,
    /// The `k` of `recall_at_k`.
    pub k: usize,
    /// The injection cap the irrelevant-injection figures were measured at.
    pub cap: usize,
    /// Mean recall@k over answerable queries (the cap raised to k); `None` when there are none.
    pub recall_at_k: Option<f64>,
    /// Mean reciprocal rank of the first hit in the top 10, over answerable queries.
    pub mrr_at_10: Option<f64>,
    /// Mean nDCG@10 (binary gains) over answerable queries.
    pub ndcg_at_10: Option<f64>,
    /// Ids injected at the configured cap over all queries.
    pub injected: usize,
    /// Injected ids that were not relevant (module doc says exactly what counts).
    pub irrelevant_injected: usize,
    /// `irrelevant_injected / injected`, 0 when nothing was injected.
    pub irrelevant_injection_rate: f64,
    /// "Nothing" queries that got at least one injection.
    pub nothing_queries_with_injection: usize,
}

/// What happened for one query in one mode.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QueryOutcome {
    pub line: usize,
    pub query: String,
    pub product: String,
    pub test: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suite: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub position: Option<u64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub classes: Vec<String>,
    pub relevant: Vec<String>,
    /// The ranking with the cap raised to [`EvalDepth::ranking_depth`], best first.
    pub returned: Vec<String>,
    /// What would be injected at the configured cap, best first.
    pub injected: Vec<String>,
    pub recall_at_k: Option<f64>,
    /// Reciprocal rank of the first hit in the top 10.
    pub reciprocal_rank: Option<f64>,
    pub ndcg_at_10: Option<f64>,
    /// Injected ids counted as irrelevant injections.
    pub irrelevant: Vec<String>,
    /// Relevant ids missing from the first `k` returned.
    pub missed: Vec<String>,
}

/// One mode's summary, its figures per class, and per-query details.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModeReport {
    /// The query mode measured (`terms`, `phrase`, `bm25` …).
    pub mode: String,
    pub summary: EvalSummary,
    /// The same figures over the queries labelled with each class (`classes` in the set).
    pub classes: BTreeMap<String, EvalSummary>,
    pub queries: Vec<QueryOutcome>,
}

/// The result of `curator eval`: one report per mode, in the order they were run.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct EvalReport {
    pub modes: Vec<ModeReport>,
}

/// Runs every query through `run_query` and scores the returned ids against the labels.
///
/// `run_query(query, limit)` must return exactly what would be injected for the step with the
/// injection cap set to `limit` (after `minTrust`), best first. It is called with
/// `depth.cap` (what the irrelevant-injection figures count) and with
/// [`EvalDepth::ranking_depth`] (what recall@k, MRR@10 and nDCG@10 read). The first error stops
/// the eval and names the query's line.
pub fn evaluate<F, E>(
    mode: &str,
    queries: &[EvalQuery],
    depth: EvalDepth,
    mut run_query: F,
) -> Result<ModeReport, EvalError>
where
    F: FnMut(&EvalQuery, usize) -> Result<Vec<String>, E>,
    E: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    if depth.k == 0 {
        return Err(EvalError::InvalidK(depth.k));
    }
    let mut outcomes = Vec::with_capacity(queries.len());
    for q in queries {
        let mut run = |limit| {
            run_query(q, limit).map_err(|e| EvalError::Query {
                line: q.line,
                query: q.query.clone(),
                source: e.into(),
            })
        };
        let returned = run(depth.ranking_depth())?;
        let injected =
            if depth.cap == depth.ranking_depth() { returned.clone() } else { run(depth.cap)? };
        outcomes.push(score(q, returned, injected, depth.k));
    }
    let mut classes: BTreeMap<String, Vec<&QueryOutcome>> = BTreeMap::new();
    for o in &outcomes {
        for class in &o.classes {
            classes.entry(class.clone()).or_default().push(o);
        }
    }
    let classes = classes
        .into_iter()
        .map(|(class, members)| (class, summarize(members.into_iter(), depth)))
        .collect();
    Ok(ModeReport {
        mode: mode.to_owned(),
        summary: summarize(outcomes.iter(), depth),
        classes,
        queries: outcomes,
    })
}

fn score(q: &EvalQuery, returned: Vec<String>, injected: Vec<String>, k: usize) -> QueryOutcome {
    let relevant = q.relevant_ids();
    let top: Vec<String> = returned.iter().take(NDCG_CUTOFF).cloned().collect();
    QueryOutcome {
        line: q.line,
        query: q.query.clone(),
        product: q.product.as_str().to_owned(),
        test: q.test.as_str().to_owned(),
        suite: q.suite.as_ref().map(|s| s.id.as_str().to_owned()),
        position: q.suite.as_ref().map(|s| s.position),
        classes: q.classes.clone(),
        recall_at_k: recall_at_k(&returned, &relevant, k),
        reciprocal_rank: reciprocal_rank(&top, &relevant),
        ndcg_at_10: ndcg_at(&returned, &relevant, NDCG_CUTOFF),
        irrelevant: irrelevant_injections(&injected, &relevant),
        missed: missed_at_k(&returned, &relevant, k),
        relevant,
        returned,
        injected,
    }
}

fn mean<'a>(values: impl Iterator<Item = &'a Option<f64>>) -> Option<f64> {
    let (sum, n) = values.flatten().fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    (n > 0).then(|| sum / n as f64)
}

fn summarize<'a>(
    outcomes: impl Iterator<Item = &'a QueryOutcome> + Clone,
    depth: EvalDepth,
) -> EvalSummary {
    let queries = outcomes.clone().count();
    let answerable = outcomes.clone().filter(|o| !o.relevant.is_empty()).count();
    let injected: usize = outcomes.clone().map(|o| o.injected.len()).sum();
    let irrelevant_injected: usize = outcomes.clone().map(|o| o.irrelevant.len()).sum();
    EvalSummary {
        queries,
        answerable,
        nothing: queries - answerable,
        k: depth.k,
        cap: depth.cap,
        recall_at_k: mean(outcomes.clone().map(|o| &o.recall_at_k)),
        mrr_at_10: mean(outcomes.clone().map(|o| &o.reciprocal_rank)),
        ndcg_at_10: mean(outcomes.clone().map(|o| &o.ndcg_at_10)),
        injected,
        irrelevant_injected,
        irrelevant_injection_rate: if injected == 0 {
            0.0
        } else {
            irrelevant_injected as f64 / injected as f64
        },
        nothing_queries_with_injection: outcomes
            .filter(|o| o.relevant.is_empty() && !o.injected.is_empty())
            .count(),
    }
}

impl fmt::Display for EvalReport {
    /// Plain-text tables for `curator eval` without `--json`: one row per mode, then one row per
    /// class and mode.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(first) = self.modes.first() else { return Ok(()) };
        let (k, cap) = (first.summary.k, first.summary.cap);
        writeln!(
            f,
            "recall@{k} with the cap raised to {k}; MRR and nDCG over the top 10; irrelevant \
             injections at the configured cap of {cap}"
        )?;
        let header = |f: &mut fmt::Formatter<'_>, first: &str| {
            writeln!(
                f,
                "{first:<13} {:<8} {:>7} {:>9} {:>7} {:>8} {:>17} {:>16}",
                "mode",
                "queries",
                format!("recall@{k}"),
                "MRR@10",
                "nDCG@10",
                format!("irrelevant@{cap}"),
                "nothing-injected"
            )
        };
        header(f, "")?;
        for m in &self.modes {
            row(f, "", &m.mode, &m.summary)?;
        }
        let classes: std::collections::BTreeSet<&String> =
            self.modes.iter().flat_map(|m| m.classes.keys()).collect();
        if !classes.is_empty() {
            writeln!(f, "\nper class:")?;
            header(f, "class")?;
            for class in classes {
                for m in &self.modes {
                    if let Some(s) = m.classes.get(class) {
                        row(f, class, &m.mode, s)?;
                    }
                }
            }
        }
        Ok(())
    }
}

fn row(f: &mut fmt::Formatter<'_>, class: &str, mode: &str, s: &EvalSummary) -> fmt::Result {
    let fig = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), |v| format!("{v:.3}"));
    writeln!(
        f,
        "{class:<13} {mode:<8} {:>7} {:>9} {:>7} {:>8} {:>17} {:>16}",
        s.queries,
        fig(s.recall_at_k),
        fig(s.mrr_at_10),
        fig(s.ndcg_at_10),
        format!(
            "{:.1}% ({}/{})",
            s.irrelevant_injection_rate * 100.0,
            s.irrelevant_injected,
            s.injected
        ),
        format!("{}/{}", s.nothing_queries_with_injection, s.nothing),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "obs_amber-birch-cedar-delta-ember-fern-glade-hazel-iris-jade";
    const B: &str = "obs_kelp-lake-mint-noble-onyx-pine-quill-reef-sage-tulip";
    const C: &str = "obs_acorn-apple-arrow-aspen-atlas-badge-baker-banjo-basil-berry";
    const X: &str = "obs_bison-blaze-bloom-bolt-brave-brick-brook-cabin-camel-canoe";
    const T: &str = "t_amber-birch-cedar-delta-ember-fern-glade-hazel-iris-jade";

    fn query(line: usize, relevant: &[&str]) -> EvalQuery {
        EvalQuery {
            line,
            query: format!("step {line}"),
            product: ScopeName::new("shop").unwrap(),
            test: ScopeName::new(T).unwrap(),
            suite: None,
            relevant: relevant.iter().map(|id| ObservationId::parse(id).unwrap()).collect(),
            classes: Vec::new(),
            note: None,
        }
    }

    fn answers(list: &[&[&str]]) -> Vec<Vec<String>> {
        list.iter().map(|ids| ids.iter().map(|s| (*s).to_owned()).collect()).collect()
    }

    /// An engine whose ranking for query line `l` is `ranked[l - 1]`, cut at the cap it is given.
    fn engine(
        ranked: Vec<Vec<String>>,
    ) -> impl FnMut(&EvalQuery, usize) -> Result<Vec<String>, std::io::Error> {
        move |q, limit| Ok(ranked[q.line - 1].iter().take(limit).cloned().collect())
    }

    const DEPTH_2: EvalDepth = EvalDepth { k: 2, cap: 10 };

    #[test]
    fn summary_matches_hand_computed_figures() {
        // q1: {A,B}, returned [A, X, B]     recall@2 = 1/2, RR = 1, nDCG = (1 + 1/2)/(1 + 1/log2 3)
        // q2: {C},   returned [X, C]        recall@2 = 1,   RR = 1/2, nDCG = 1/log2 3
        // q3: {},    returned [X]           nothing query with an injection
        // q4: {},    returned []            nothing query, clean
        // q5: {A},   returned []            recall 0, RR 0, nDCG 0
        let queries =
            vec![query(1, &[A, B]), query(2, &[C]), query(3, &[]), query(4, &[]), query(5, &[A])];
        let ranked = answers(&[&[A, X, B], &[X, C], &[X], &[], &[]]);
        let report = evaluate("terms", &queries, DEPTH_2, engine(ranked)).unwrap();
        let s = &report.summary;
        assert_eq!((s.queries, s.answerable, s.nothing, s.k, s.cap), (5, 3, 2, 2, 10));
        let inv_log3 = 1.0 / 3f64.log2();
        let close = |a: Option<f64>, b: f64| (a.unwrap() - b).abs() < 1e-12;
        assert!(close(s.recall_at_k, (0.5 + 1.0 + 0.0) / 3.0), "{:?}", s.recall_at_k);
        assert!(close(s.mrr_at_10, (1.0 + 0.5 + 0.0) / 3.0), "{:?}", s.mrr_at_10);
        assert!(
            close(s.ndcg_at_10, (1.5 / (1.0 + inv_log3) + inv_log3) / 3.0),
            "{:?}",
            s.ndcg_at_10
        );
        // Injected 3 + 2 + 1 = 6; irrelevant: X (q1), X (q2), X (q3) = 3.
        assert_eq!((s.injected, s.irrelevant_injected), (6, 3));
        assert_eq!(s.irrelevant_injection_rate, 0.5);
        assert_eq!(s.nothing_queries_with_injection, 1);
        assert_eq!(report.queries[0].missed, vec![B.to_owned()]);
        assert_eq!(report.queries[2].recall_at_k, None);
        assert_eq!(report.queries[2].irrelevant, vec![X.to_owned()]);
    }

    #[test]
    fn recall_reads_k_results_while_injections_count_at_the_configured_cap() {
        // The relevant id is fourth: found by recall@5, never injected at a cap of 3.
        let queries = vec![query(1, &[C]), query(2, &[])];
        let ranked = answers(&[&[X, A, B, C, X], &[A, B, C, X]]);
        let report =
            evaluate("terms", &queries, EvalDepth { k: 5, cap: 3 }, engine(ranked)).unwrap();
        let s = &report.summary;
        assert_eq!(s.recall_at_k, Some(1.0));
        assert_eq!(s.mrr_at_10, Some(0.25));
        assert_eq!((s.injected, s.irrelevant_injected), (6, 6), "3 + 3 at the cap, none hits");
        assert_eq!(report.queries[0].returned.len(), 5);
        assert_eq!(report.queries[0].injected, [X, A, B]);
        // MRR counts a first hit in the top 10 only.
        let late: Vec<&str> = std::iter::repeat_n(X, 10).chain([C]).collect();
        let report = evaluate(
            "terms",
            &queries[..1],
            EvalDepth { k: 11, cap: 3 },
            engine(answers(&[&late])),
        )
        .unwrap();
        assert_eq!(report.summary.recall_at_k, Some(1.0));
        assert_eq!(report.summary.mrr_at_10, Some(0.0));
    }

    #[test]
    fn every_class_gets_its_own_figures() {
        let mut q1 = query(1, &[A]);
        q1.classes = vec!["synonym".into(), "short".into()];
        let mut q2 = query(2, &[B]);
        q2.classes = vec!["short".into()];
        let mut q3 = query(3, &[]);
        q3.classes = vec!["nothing".into()];
        let ranked = answers(&[&[A], &[X], &[X]]);
        let report = evaluate("terms", &[q1, q2, q3], DEPTH_2, engine(ranked)).unwrap();
        let names: Vec<&str> = report.classes.keys().map(String::as_str).collect();
        assert_eq!(names, ["nothing", "short", "synonym"]);
        assert_eq!(report.classes["synonym"].recall_at_k, Some(1.0));
        assert_eq!(report.classes["short"].recall_at_k, Some(0.5));
        assert_eq!(report.classes["short"].queries, 2);
        let nothing = &report.classes["nothing"];
        assert_eq!((nothing.recall_at_k, nothing.irrelevant_injection_rate), (None, 1.0));
        assert_eq!(report.summary.queries, 3);
        let text = EvalReport { modes: vec![report] }.to_string();
        assert!(text.contains("per class:") && text.contains("synonym"), "{text}");
    }

    #[test]
    fn a_set_of_nothing_queries_with_no_injection_scores_a_zero_rate() {
        let queries = vec![query(1, &[])];
        let report = evaluate("terms", &queries, DEPTH_2, engine(answers(&[&[]]))).unwrap();
        assert_eq!(report.summary.recall_at_k, None);
        assert_eq!(report.summary.irrelevant_injection_rate, 0.0);
        assert_eq!(report.summary.injected, 0);
    }

    #[test]
    fn an_engine_error_stops_the_eval_naming_the_query() {
        let queries = vec![query(1, &[A]), query(7, &[B])];
        let err = evaluate("phrase", &queries, DEPTH_2, |q, _| {
            if q.line == 7 { Err("index is corrupt") } else { Ok(vec![A.to_owned()]) }
        })
        .unwrap_err();
        assert_eq!(err.to_string(), "query on line 7 (\"step 7\") failed: index is corrupt");
        assert!(matches!(
            evaluate(
                "terms",
                &queries,
                EvalDepth { k: 0, cap: 3 },
                |_, _| Ok::<_, std::io::Error>(Vec::new())
            ),
            Err(EvalError::InvalidK(0))
        ));
    }

    #[test]
    fn the_report_serializes_and_renders_a_table() {
        let queries = vec![query(1, &[A]), query(2, &[])];
        let mode =
            evaluate("terms", &queries, EvalDepth { k: 3, cap: 3 }, engine(answers(&[&[A], &[B]])))
                .unwrap();
        let report = EvalReport { modes: vec![mode] };
        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(json["modes"][0]["mode"], "terms");
        assert_eq!(json["modes"][0]["summary"]["recall_at_k"], 1.0);
        assert_eq!(json["modes"][0]["summary"]["irrelevant_injection_rate"], 0.5);
        assert_eq!(json["modes"][0]["queries"][1]["recall_at_k"], serde_json::Value::Null);
        assert!(json["modes"][0]["queries"][0].get("suite").is_none());
        let text = report.to_string();
        assert!(text.lines().nth(1).unwrap().contains("recall@3"), "{text}");
        assert!(
            text.contains("terms")
                && text.contains("1.000")
                && text.contains("50.0% (1/2)")
                && text.contains("1/1"),
            "{text}"
        );
    }
}
