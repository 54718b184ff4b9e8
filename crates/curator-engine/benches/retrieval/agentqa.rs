//! agent-qa's memory engine rebuilt on SQLite FTS5, the baseline of the benchmark
//! (agent-qa-memory §3.1–§3.3).
//!
//! Invariant: this does what agent-qa's `buildMemoryIndex` and `queryForStep` do, in the same
//! order, so its cost is agent-qa's cost minus JavaScript overhead (file reading, parsing and the
//! scanner run as compiled Rust here, which flatters agent-qa). Per test: an in-memory database
//! with `observations(title, content, id UNINDEXED, trust UNINDEXED)`; the product, suite and test
//! folders read in that order, `obs_*.md` sorted in UTF-16 order, each file parsed, suite
//! observations kept only on an exact position and snapshot match, unsafe ones skipped, all rows
//! inserted in one transaction. Per step: the sanitized step as one FTS5 phrase, `trust >= ?`,
//! `ORDER BY (rank * trust) ASC LIMIT ?`.

use std::path::Path;

use curator_core::Tier;
use curator_core::codec::parse_observation;
use curator_engine::SuiteContext;
use rusqlite::{Connection, params};

use crate::corpus::TestRun;

/// agent-qa's query, verbatim (§3.3).
const QUERY_SQL: &str = "SELECT title, content, id, trust, rank FROM observations \
     WHERE observations MATCH ? AND trust >= ? ORDER BY (rank * trust) ASC LIMIT ?";

/// One test's frozen FTS5 snapshot.
#[derive(Debug)]
pub(crate) struct AgentQaIndex {
    conn: Connection,
    /// Rows inserted (the table's N).
    pub(crate) rows: usize,
}

/// The `obs_*.md` names of `dir` in JavaScript's default sort order (§1.2).
pub(crate) fn list_observations(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("obs_") && n.ends_with(".md"))
        .collect();
    names.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
    names
}

/// The folders a test reads, in discovery order, and whether each is the suite folder.
pub(crate) fn scope_dirs(root: &Path, run: &TestRun) -> Vec<(std::path::PathBuf, bool)> {
    let mut dirs = vec![(root.join(Tier::Products.dir_name()).join(run.product.as_str()), false)];
    if let Some(s) = &run.suite {
        dirs.push((root.join(Tier::Suites.dir_name()).join(s.id.as_str()), true));
    }
    dirs.push((root.join(Tier::Tests.dir_name()).join(run.test.as_str()), false));
    dirs
}

/// §3.2 step 2: a suite observation is seen only by the child at its position of its suite.
fn suite_admits(suite: Option<&SuiteContext>, obs: &curator_core::Observation) -> bool {
    let Some(placement) = &obs.suite else { return true };
    let Some(ctx) = suite else { return false };
    match (&ctx.tests, ctx.position) {
        (Some(tests), Some(position)) => {
            position == placement.position && *tests == placement.suite_snapshot
        }
        _ => false,
    }
}

impl AgentQaIndex {
    /// `buildMemoryIndex` for one test run.
    pub(crate) fn build(root: &Path, run: &TestRun) -> rusqlite::Result<Self> {
        let mut conn = Connection::open_in_memory()?;
        conn.execute_batch(
            "CREATE VIRTUAL TABLE observations USING fts5(title, content, id UNINDEXED, trust UNINDEXED)",
        )?;
        let mut rows = 0;
        let tx = conn.transaction()?;
        {
            let mut insert = tx.prepare(
                "INSERT INTO observations (title, content, id, trust) VALUES (?, ?, ?, ?)",
            )?;
            for (dir, is_suite) in scope_dirs(root, run) {
                for name in list_observations(&dir) {
                    let Ok(bytes) = std::fs::read(dir.join(&name)) else { continue };
                    let text = String::from_utf8_lossy(&bytes);
                    let stem = name.strip_suffix(".md").unwrap_or(&name);
                    let Ok(obs) = parse_observation(&text, stem) else { continue };
                    if is_suite && !suite_admits(run.suite.as_ref(), &obs) {
                        continue;
                    }
                    if !curator_core::scanner::scan_observation(&obs.title, &obs.content).is_safe()
                    {
                        continue;
                    }
                    insert.execute(params![obs.title, obs.content, obs.id.as_str(), obs.trust])?;
                    rows += 1;
                }
            }
        }
        tx.commit()?;
        Ok(AgentQaIndex { conn, rows })
    }

    /// `queryForStep`: the injected ids and trusts, best first; empty when agent-qa returns null.
    pub(crate) fn query(&self, step: &str, min_trust: f64, limit: usize) -> Vec<(String, f64)> {
        let sanitized = curator_core::fts::sanitize_step(step);
        if sanitized.is_empty() {
            return Vec::new();
        }
        let phrase = format!("\"{sanitized}\"");
        // better-sqlite3 code prepares the statement on every call, so the bench does too.
        let result = self.conn.prepare(QUERY_SQL).and_then(|mut stmt| {
            stmt.query_map(params![phrase, min_trust, limit as i64], |row| {
                Ok((row.get::<_, String>(2)?, row.get::<_, f64>(3)?))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()
        });
        // agent-qa turns every query error into "no memory" (§3.3).
        result.unwrap_or_default()
    }
}

/// FTS5 is compiled into the bundled SQLite (`SQLITE_ENABLE_FTS5`); fail loudly if not.
pub(crate) fn check_fts5() -> Result<String, String> {
    let conn = Connection::open_in_memory().map_err(|e| e.to_string())?;
    conn.execute_batch("CREATE VIRTUAL TABLE t USING fts5(x)")
        .map_err(|e| format!("this SQLite has no FTS5: {e}"))?;
    conn.query_row("SELECT sqlite_version()", [], |r| r.get::<_, String>(0))
        .map_err(|e| e.to_string())
}
