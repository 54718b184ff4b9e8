//! The retrieval benchmark's tables and its verdict on the issue-3 targets.
//!
//! Invariant: ratios are always agent-qa ÷ curator (above 1 means curator is faster), and each
//! row names exactly what both sides did, so no ratio compares unlike work silently.

use std::fmt::Write as _;
use std::time::Duration;

use crate::measure::SizeResult;
use crate::report::{Samples, Table, fmt_dur, ratio};

fn pair(s: &Samples) -> (Duration, Duration) {
    (s.p50(), s.p99())
}

impl SizeResult {
    /// Smoke mode: curator's phrase mode must give agent-qa's answer on every step.
    pub(crate) fn check_agreement(&self) -> Result<(), String> {
        if self.steps == 0 || self.agree != self.steps {
            return Err(format!(
                "phrase mode agreed with agent-qa on {}/{} steps: {:#?}",
                self.agree, self.steps, self.disagreements
            ));
        }
        Ok(())
    }

    /// The section for this size.
    pub(crate) fn markdown(&self) -> String {
        let mut out = String::new();
        let avg_rows = self.aq_rows as f64 / self.aq_builds.max(1) as f64;
        let _ = writeln!(
            out,
            "### {} observations\n\n{} served; 20 products, {} tests, {} suites; a test's scope \
             (product + suite + test folders) holds {avg_rows:.0} rows on average. Corpus written \
             in {}. {} step queries ({} test runs × {} passes).\n",
            self.size,
            self.served,
            self.tests,
            self.suites,
            fmt_dur(self.generate),
            self.cur_terms.len(),
            self.runs,
            self.passes,
        );
        let mut t = Table::new(&["per step", "agent-qa (FTS5)", "curator", "agent-qa ÷ curator"]);
        let aq_step = pair(&self.aq_step);
        for (label, cur) in [
            ("terms mode (curator default)", pair(&self.cur_terms)),
            ("phrase mode (agent-qa exact)", pair(&self.cur_phrase)),
        ] {
            for (p, a, c) in [("p50", aq_step.0, cur.0), ("p99", aq_step.1, cur.1)] {
                t.row(&[format!("{label}, {p}"), fmt_dur(a), fmt_dur(c), ratio(a, c)]);
            }
        }
        let aq_q = pair(&self.aq_query);
        let cur_q = pair(&self.cur_phrase_now);
        let cur_tq = pair(&self.cur_terms_now);
        for (p, a, c, ct) in
            [("p50", aq_q.0, cur_q.0, cur_tq.0), ("p99", aq_q.1, cur_q.1, cur_tq.1)]
        {
            t.row(&[
                format!("query only, phrase, {p} (terms: {})", fmt_dur(ct)),
                fmt_dur(a),
                fmt_dur(c),
                ratio(a, c),
            ]);
        }
        let aq_b = pair(&self.aq_build);
        let fresh = pair(&self.cur_fresh_check);
        for (p, a, c) in [("p50", aq_b.0, fresh.0), ("p99", aq_b.1, fresh.1)] {
            t.row(&[format!("per-test setup, {p}"), fmt_dur(a), fmt_dur(c), ratio(a, c)]);
        }
        let first = pair(&self.aq_first);
        let engine = pair(&self.engine_query);
        for (p, a, c) in [("p50", first.0, engine.0), ("p99", first.1, engine.1)] {
            t.row(&[
                format!("first step of a test, in process, {p}"),
                fmt_dur(a),
                fmt_dur(c),
                ratio(a, c),
            ]);
        }
        for (samples, what) in [
            (&self.process, "`curator query` fresh process"),
            (&self.process_served, "`curator query` fresh process, `curator serve` running"),
            (&self.one_folder, "all in one folder: fresh process"),
            (&self.one_folder_served, "all in one folder: fresh process, `curator serve` running"),
        ] {
            if samples.len() == 0 {
                continue;
            }
            let proc = pair(samples);
            for (p, a, c) in [("p50", first.0, proc.0), ("p99", first.1, proc.1)] {
                t.row(&[
                    format!("first step of a test, {what}, {p}"),
                    fmt_dur(a),
                    fmt_dur(c),
                    ratio(a, c),
                ]);
            }
        }
        out.push_str(&t.finish());
        out.push('\n');
        if let Some(note) = &self.process_note {
            let _ = writeln!(out, "Fresh-process rows skipped: {note}.\n");
        }
        let _ = writeln!(
            out,
            "Steps injecting memory: terms mode {}/{n}, phrase mode {}/{n}, agent-qa {}/{n}; \
             curator's phrase mode returned agent-qa's ids in agent-qa's order on {}/{n} steps.\n",
            self.injected_terms,
            self.injected_phrase,
            self.injected_aq,
            self.agree,
            n = self.steps
        );
        out.push_str(&self.maintenance_table());
        out
    }

    fn maintenance_table(&self) -> String {
        let aq = self.aq_build.p50();
        let mut t = Table::new(&[
            "index maintenance and floor",
            "time",
            "agent-qa per-test build (p50) ÷ this",
        ]);
        let med = |s: &Samples| s.p50();
        for (label, d) in [
            ("curator: build from scratch, whole root", self.full_build),
            ("curator: refresh whole root, nothing changed (median)", med(&self.refresh_idle_root)),
            (
                "curator: refresh whole root after one changed file (median)",
                med(&self.refresh_change_root),
            ),
            (
                "curator: refresh a step's folders after one changed file (median)",
                med(&self.refresh_change_dirs),
            ),
            (
                "curator: terms query right after one changed file (median)",
                med(&self.query_after_change),
            ),
            ("agent-qa: per-test table build, p50", aq),
            ("agent-qa: per-test table build, p99", self.aq_build.p99()),
            ("floor: read every file of the root", self.floor_root_read),
            ("floor: read + parse every file of the root", self.floor_root_parse),
            ("floor: read + parse one test's scope, p50", self.floor_scope.p50()),
            ("floor: read + parse one test's scope, p99", self.floor_scope.p99()),
        ] {
            t.row(&[label.to_owned(), fmt_dur(d), ratio(aq, d)]);
        }
        t.finish()
    }
}

/// What each row of the per-step tables measures (printed once, before the tables).
pub(crate) fn legend(process_runs: usize) -> String {
    format!(
        "Rows: *agent-qa per step* = its phrase query + its per-test table build divided by the \
         test's steps; *curator per step* = `MemoryIndex::search` on the warm, watching index \
         (what a long-lived `FileStore` keeps): it drains its inotify queue, refreshes the \
         step's folders that changed, then searches. *Query only* = agent-qa's query on a built \
         table vs curator's `search_now` (no freshness check). *Per-test setup* = agent-qa's \
         table build vs curator's `stat` check of the same folders (`refresh_dirs`: what an \
         index that is not watching does before every query). *First step \
         of a test* = agent-qa's build + first query vs `curator_engine::query` (opens the \
         on-disk index, refreshes, searches, renders) or the `curator query` binary spawned per \
         step ({process_runs} runs per size, warm index).\n\n"
    )
}

/// The targets, checked against the sizes that were run.
pub(crate) fn targets(results: &[SizeResult]) -> String {
    let mut out = String::from("### Targets\n\n");
    let verdict = |ok: bool| if ok { "met" } else { "MISSED" };
    for r in results.iter().filter(|r| r.size == 100_000) {
        for (what, s) in [
            ("terms mode, `search` (watching index, with the freshness check)", &r.cur_terms),
            ("phrase mode, `search` (watching index, with the freshness check)", &r.cur_phrase),
            ("terms mode, `search_now` (query only)", &r.cur_terms_now),
            ("phrase mode, `search_now` (query only)", &r.cur_phrase_now),
        ] {
            let p99 = s.p99();
            let _ = writeln!(
                out,
                "- in-process query p99 under 1 ms at 100k, {what}: {} (p50 {}) — {}",
                fmt_dur(p99),
                fmt_dur(s.p50()),
                verdict(p99 < Duration::from_millis(1))
            );
        }
    }
    for r in results.iter().filter(|r| r.size == 10_000) {
        for (what, s) in [
            ("all in one folder, no server", &r.one_folder),
            ("all in one folder, `curator serve` running", &r.one_folder_served),
        ] {
            if s.len() > 0 {
                let _ = writeln!(
                    out,
                    "- fresh `curator query` process at 10k, {what}: p50 {}, p99 {} (target ≤ 20 ms median) — {}",
                    fmt_dur(s.p50()),
                    fmt_dur(s.p99()),
                    verdict(s.p50() <= Duration::from_millis(20))
                );
            }
        }
        if r.process.len() > 0 {
            let (p50, p99) = (r.process.p50(), r.process.p99());
            let _ = writeln!(
                out,
                "- fresh `curator query` process under 20 ms at 10k (warm index): p50 {}, p99 {} — {}",
                fmt_dur(p50),
                fmt_dur(p99),
                verdict(p99 < Duration::from_millis(20))
            );
        }
    }
    for r in results {
        let refresh = r.refresh_change_root.p50();
        let _ = writeln!(
            out,
            "- refresh (whole root) after one change well under a full rebuild at {}: {} vs {} \
             ({:.1} % of it)",
            r.size,
            fmt_dur(refresh),
            fmt_dur(r.full_build),
            100.0 * refresh.as_secs_f64() / r.full_build.as_secs_f64().max(1e-9)
        );
    }
    out
}
