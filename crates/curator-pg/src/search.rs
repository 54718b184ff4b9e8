//! Scoped search in PostgreSQL with the file store index's request and hit types
//! (agent-qa-memory §3.2, §3.3; issue 7 item 2).
//!
//! Scopes work as in the index: every row of a selected product or test scope; in a selected
//! suite scope the base rows (no `position`) plus the suite rows whose position and snapshot
//! equal the request's (compared in SQL as jsonb, then entry by entry here). `min_trust`
//! filters before the top-N cut; `max_results` caps the hits; ties follow discovery order
//! (the request's scope order, then the id, which is the file name's order).
//!
//! * **phrase** (agent-qa exactly): candidates come from a `<->` phrase `tsquery` over a
//!   `tsvector` of curator's own `unicode61` tokens (PostgreSQL's parser splits words
//!   differently, so `phraseto_tsquery` could miss or add matches); each candidate's phrase
//!   count and length, and N and avgdl over the scoped rows, then give FTS5's bm25, × trust —
//!   the numbers the file store's index computes, so the same data injects the same memory.
//! * **terms**: the step's English lexemes (stemmed, stop words dropped) OR-ed into one
//!   `tsquery` against the generated `search_tsv` (title weight A above content weight B, GIN
//!   indexed), ranked by `ts_rank × trust`. As in the index, IDF counts the rows the step may
//!   see (words none of them has are ignored), a hit must contain at least `min_relevance` of
//!   the query's IDF weight, and hits under `keep_ratio` of the best score are dropped. Ranks
//!   are PostgreSQL's, not tantivy's BM25, so scores (not the rules) differ. As in the index,
//!   phrase mode's hits come first ([`phrase_hits_first`], `index/terms.rs` rule 6: an exact
//!   phrase is the strongest evidence there is), so both stores inject the same phrase hits.

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

use curator_core::fts::{Bm25Stats, phrase_occurrences, sanitize_step, token_texts};
use curator_core::{ScopeName, Tier};
use curator_store::index::{Hit, QueryMode, ScopeSelector, SearchRequest, phrase_hits_first};
use curator_store::{Result, StoredObservation};
use deadpool_postgres::GenericClient;

use crate::row::{RawRow, phrase_query, quote_lexeme};
use crate::sql::Table;
use crate::store::PgStore;

/// Most candidates terms mode ranks before the floor (as the index's `TERMS_CANDIDATES`).
const TERMS_CANDIDATES: i64 = 1000;

/// The request's selectors as parallel arrays for `unnest(...) WITH ORDINALITY`.
struct Selectors {
    tiers: Vec<String>,
    scopes: Vec<String>,
    positions: Vec<Option<i64>>,
    snapshots: Vec<Option<serde_json::Value>>,
}

impl Selectors {
    /// One selector per folder (the first one wins, as in the index's lookup).
    fn new(scopes: &[ScopeSelector]) -> Self {
        let mut seen = HashSet::new();
        let mut s =
            Selectors { tiers: vec![], scopes: vec![], positions: vec![], snapshots: vec![] };
        for sel in scopes {
            if !seen.insert(sel.dir.key()) {
                continue;
            }
            let suite = sel.suite.as_ref().filter(|_| sel.dir.tier == Tier::Suites);
            s.tiers.push(sel.dir.tier.dir_name().to_owned());
            s.scopes.push(sel.dir.scope.as_str().to_owned());
            s.positions.push(suite.map(|m| i64::try_from(m.position).unwrap_or(i64::MAX)));
            s.snapshots.push(suite.and_then(|m| serde_json::to_value(&m.snapshot).ok()));
        }
        s
    }
}

/// The selectors' table `sel` and the scoped rows `o` joined to their selector `s`.
const SCOPED: &str = "WITH sel AS (
        SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::jsonb[])
            WITH ORDINALITY AS s(tier, scope, pos, snap, ord)
    )
    SELECT {columns}
    FROM {table} o JOIN sel s
      ON o.tier = s.tier AND o.scope = s.scope
     AND (o.tier <> 'suites' OR o.position IS NULL
          OR (o.position = s.pos AND o.suite_snapshot = s.snap))";

/// The columns `RawRow::from_row` reads, then the selector's ordinality (column 5).
const ROW_COLUMNS: &str = "o.id, o.tier, o.scope, o.file_text, o.version, s.ord";

fn scoped(table: Table, columns: &str) -> String {
    SCOPED.replace("{columns}", columns).replace("{table}", table.name())
}

/// A served row that matched, with what ordering needs.
struct Candidate {
    stored: StoredObservation,
    ord: i64,
    score: f64,
    relevance: f64,
}

impl Candidate {
    fn cmp(&self, other: &Self) -> Ordering {
        other.score.total_cmp(&self.score).then_with(|| self.ord.cmp(&other.ord)).then_with(|| {
            self.stored.observation.id.as_str().cmp(other.stored.observation.id.as_str())
        })
    }

    fn into_hit(self) -> Hit {
        let StoredObservation { tier, scope, observation } = self.stored;
        Hit {
            path: crate::row::path_of(tier, &scope, &observation.id),
            id: observation.id.to_string(),
            tier,
            scope,
            title: observation.title,
            content: observation.content,
            trust: observation.trust,
            score: self.score,
            relevance: self.relevance,
        }
    }
}

/// Parses and scans a row; `None` when it is not served or is a suite row of another place.
fn served(row: RawRow, req: &SearchRequest, ord: i64) -> Option<StoredObservation> {
    let stored = row.into_stored().ok()?;
    if stored.tier == Tier::Suites
        && let Some(placement) = &stored.observation.suite
    {
        let sel = usize::try_from(ord - 1).ok().and_then(|i| selector(req, i, &stored.scope))?;
        let wanted = sel.suite.as_ref()?;
        if wanted.position != placement.position || wanted.snapshot != placement.suite_snapshot {
            return None;
        }
    }
    Some(stored)
}

/// The deduplicated selector number `i` (1-based ordinality − 1) for `scope`.
fn selector<'r>(req: &'r SearchRequest, i: usize, scope: &ScopeName) -> Option<&'r ScopeSelector> {
    let mut seen = HashSet::new();
    req.scopes.iter().filter(|s| seen.insert(s.dir.key())).nth(i).filter(|s| &s.dir.scope == scope)
}

impl PgStore {
    /// Searches the request's scopes in `table`, best hit first (see the module doc for both
    /// modes).
    pub(crate) fn search_rows(&self, table: Table, req: &SearchRequest) -> Result<Vec<Hit>> {
        if req.max_results == 0 || req.scopes.is_empty() {
            return Ok(Vec::new());
        }
        let sanitized = sanitize_step(&req.text);
        if sanitized.is_empty() {
            return Ok(Vec::new());
        }
        let client = self.client()?;
        let sel = Selectors::new(&req.scopes);
        let found = match req.mode {
            QueryMode::Phrase => self.block_on(phrase(&client, table, req, &sel, &sanitized)),
            QueryMode::Terms => self.block_on(terms(&client, table, req, &sel, &sanitized)),
        };
        found.map_err(|e| Self::db_error("searching", e))
    }
}

async fn phrase(
    c: &impl GenericClient,
    table: Table,
    req: &SearchRequest,
    sel: &Selectors,
    sanitized: &str,
) -> Result<Vec<Hit>, tokio_postgres::Error> {
    let tokens = token_texts(sanitized);
    if tokens.is_empty() {
        return Ok(Vec::new());
    }
    let stmt =
        c.prepare_cached(&scoped(table, "count(*), coalesce(sum(o.token_len), 0)::bigint")).await?;
    let row =
        c.query_one(&stmt, &[&sel.tiers, &sel.scopes, &sel.positions, &sel.snapshots]).await?;
    let (rows, total_tokens): (i64, i64) = (row.get(0), row.get(1));
    let cand_sql =
        format!("{} WHERE o.phrase_tsv @@ $5::text::tsquery", scoped(table, ROW_COLUMNS));
    let stmt = c.prepare_cached(&cand_sql).await?;
    let query = phrase_query(&tokens);
    let found =
        c.query(&stmt, &[&sel.tiers, &sel.scopes, &sel.positions, &sel.snapshots, &query]).await?;
    let mut matched: Vec<(Candidate, u64, u64)> = Vec::new();
    for r in &found {
        let ord: i64 = r.get(5);
        let Some(stored) = served(RawRow::from_row(r), req, ord) else { continue };
        let title = token_texts(&stored.observation.title);
        let content = token_texts(&stored.observation.content);
        let freq = phrase_occurrences(&title, &tokens) + phrase_occurrences(&content, &tokens);
        if freq > 0 {
            let len = (title.len() + content.len()) as u64;
            matched.push((Candidate { stored, ord, score: 0.0, relevance: 1.0 }, freq as u64, len));
        }
    }
    let stats = Bm25Stats {
        rows: u64::try_from(rows).unwrap_or(0),
        total_tokens: u64::try_from(total_tokens).unwrap_or(0),
        hits: matched.len() as u64,
    };
    let mut hits: Vec<Candidate> = matched
        .into_iter()
        .filter(|(c, _, _)| c.stored.observation.trust >= req.min_trust)
        .map(|(mut c, freq, len)| {
            // "Higher is better", as the index reports it: the negation of agent-qa's sort key.
            c.score = -(stats.rank(freq, len) * c.stored.observation.trust);
            c
        })
        .collect();
    hits.sort_by(Candidate::cmp);
    Ok(hits.into_iter().take(req.max_results).map(Candidate::into_hit).collect())
}

/// Terms mode: phrase mode's hits, then the ranked ones (module doc).
async fn terms(
    c: &impl GenericClient,
    table: Table,
    req: &SearchRequest,
    sel: &Selectors,
    sanitized: &str,
) -> Result<Vec<Hit>, tokio_postgres::Error> {
    let exact = phrase(c, table, req, sel, sanitized).await?;
    let ranked = ranked_terms(c, table, req, sel, sanitized).await?;
    Ok(phrase_hits_first(exact, ranked, req.max_results))
}

async fn ranked_terms(
    c: &impl GenericClient,
    table: Table,
    req: &SearchRequest,
    sel: &Selectors,
    sanitized: &str,
) -> Result<Vec<Hit>, tokio_postgres::Error> {
    let stmt = c
        .prepare_cached(
            "SELECT coalesce(array_agg(lexeme ORDER BY lexeme), '{}')
             FROM unnest(to_tsvector('english'::regconfig, $1))",
        )
        .await?;
    let lexemes: Vec<String> = c.query_one(&stmt, &[&sanitized]).await?.get(0);
    if lexemes.is_empty() {
        return Ok(Vec::new());
    }
    let single: Vec<String> = lexemes.iter().map(|l| quote_lexeme(l)).collect();
    // IDF of each lexeme over the rows the step may see, as the index computes it over the
    // step's folders: statistics of the whole table would make every query count matches in
    // every product (150 ms at 100k rows) and rank by other products' vocabulary.
    let stats_sql = format!(
        "WITH seen AS ({})
         SELECT q.l, (SELECT count(*) FROM seen WHERE seen.search_tsv @@ q.t::tsquery),
                (SELECT count(*) FROM seen)
         FROM unnest($5::text[], $6::text[]) AS q(l, t)",
        scoped(table, "o.search_tsv")
    );
    let stmt = c.prepare_cached(&stats_sql).await?;
    let mut weights: HashMap<String, f64> = HashMap::new();
    let stats = c
        .query(&stmt, &[&sel.tiers, &sel.scopes, &sel.positions, &sel.snapshots, &lexemes, &single])
        .await?;
    for r in stats {
        let (l, df, n): (String, i64, i64) = (r.get(0), r.get(1), r.get(2));
        if df == 0 {
            continue; // a word no visible row has cannot be covered: ignored, as in the index
        }
        let (df, n) = (df as f64, n as f64);
        weights.insert(l, (1.0 + (n - df + 0.5) / (df + 0.5)).ln());
    }
    let total_weight: f64 = weights.values().sum();
    let any = single.join(" | ");
    let columns = format!(
        "{ROW_COLUMNS}, ts_rank(o.search_tsv, $5::text::tsquery)::float8,
         ARRAY(SELECT l FROM unnest(tsvector_to_array(o.search_tsv)) l WHERE l = ANY($6::text[]))"
    );
    let cand_sql = format!(
        "{} WHERE o.search_tsv @@ $5::text::tsquery AND o.trust >= $7
         ORDER BY ts_rank(o.search_tsv, $5::text::tsquery) * o.trust DESC, s.ord, o.id COLLATE \"C\"
         LIMIT {TERMS_CANDIDATES}",
        scoped(table, &columns)
    );
    let stmt = c.prepare_cached(&cand_sql).await?;
    let found = c
        .query(
            &stmt,
            &[
                &sel.tiers,
                &sel.scopes,
                &sel.positions,
                &sel.snapshots,
                &any,
                &lexemes,
                &req.min_trust,
            ],
        )
        .await?;
    let mut hits = Vec::new();
    for r in &found {
        let ord: i64 = r.get(5);
        let rank: f64 = r.get(6);
        let present: Vec<String> = r.get(7);
        let Some(stored) = served(RawRow::from_row(r), req, ord) else { continue };
        let covered: f64 = present.iter().filter_map(|l| weights.get(l)).sum();
        if total_weight <= 0.0 || covered / total_weight < req.min_relevance {
            continue;
        }
        let score = rank * stored.observation.trust;
        hits.push(Candidate { stored, ord, score, relevance: covered / total_weight });
    }
    hits.sort_by(Candidate::cmp);
    let cut = hits.first().map_or(0.0, |best| best.score * req.keep_ratio);
    Ok(hits
        .into_iter()
        .filter(|c| c.score >= cut)
        .take(req.max_results)
        .map(Candidate::into_hit)
        .collect())
}
