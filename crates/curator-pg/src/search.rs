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
//! * **terms**: the file store's rules, judged by the same code (`index/relevance.rs`), so the
//!   same memory injects the same hits on both stores. Each row keeps the analyzed terms of its
//!   title and of its title + content (`title_terms`, `any_terms`: curator's terms analyzer,
//!   computed on write), and `terms_tsv`, a GIN-indexed tsvector of them. A step costs four
//!   statements: the pool's size (the step's rows with `trust >= min_trust`), the terms each
//!   long stem begins in the step's folders (`'stem':*`), the pool rows holding any step term
//!   with the terms they hold, and the accepted rows in full. Document frequencies, masks,
//!   acceptance, the cut and the order are computed in Rust from those rows. As in the index,
//!   phrase mode's hits come first ([`phrase_hits_first`], `index/terms.rs` rule 6).

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

use curator_core::fts::{Bm25Stats, phrase_occurrences, sanitize_step, token_texts};
use curator_core::{ScopeName, Tier};
use curator_store::index::relevance::{self, MAX_FORMS, Masks, TermSource, expands_by_prefix};
use curator_store::index::{Hit, QueryMode, ScopeSelector, SearchRequest, phrase_hits_first};
use curator_store::{Result, StoredObservation};
use deadpool_postgres::GenericClient;

use crate::row::{RawRow, fits_lexeme, phrase_query, quote_lexeme};
use crate::sql::Table;
use crate::store::PgStore;

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
            file_name_cmp(self.stored.observation.id.as_str(), other.stored.observation.id.as_str())
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
    // Candidates only: every one is checked against its text below. A word too long for a
    // lexeme is in no vector, so the others are looked up (in any order), or every row when
    // none fits.
    let cand_sql = format!(
        "{} WHERE $5::text = '' OR o.phrase_tsv @@ $5::text::tsquery",
        scoped(table, ROW_COLUMNS)
    );
    let stmt = c.prepare_cached(&cand_sql).await?;
    let query = if tokens.iter().all(|t| fits_lexeme(t)) {
        phrase_query(&tokens)
    } else {
        let fitting: Vec<String> =
            tokens.iter().filter(|t| fits_lexeme(t)).map(|t| quote_lexeme(t)).collect();
        fitting.join(" & ")
    };
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

/// Rules 1–5 of `index/terms.rs`, judged by [`relevance`] on what PostgreSQL finds: the
/// pool's size, the forms of each step stem in the request's folders, and the pool rows
/// holding any form with the forms they hold in their title and anywhere. Then the accepted
/// rows are read in full, best first.
async fn ranked_terms(
    c: &impl GenericClient,
    table: Table,
    req: &SearchRequest,
    sel: &Selectors,
    sanitized: &str,
) -> Result<Vec<Hit>, tokio_postgres::Error> {
    let words = relevance::step_words(sanitized);
    if words.is_empty() {
        return Ok(Vec::new());
    }
    let (tiers, scopes, positions, snapshots) =
        (&sel.tiers, &sel.scopes, &sel.positions, &sel.snapshots);
    let stmt =
        c.prepare_cached(&format!("{} WHERE o.trust >= $5", scoped(table, "count(*)"))).await?;
    let pool_size: i64 =
        c.query_one(&stmt, &[tiers, scopes, positions, snapshots, &req.min_trust]).await?.get(0);
    if pool_size <= 0 {
        return Ok(Vec::new());
    }
    let forms = prefix_forms(c, table, sel, words.lookups()).await?;
    let mut all: Vec<String> = words.lookups().iter().filter(|s| fits_lexeme(s)).cloned().collect();
    all.extend(forms.values().flatten().cloned());
    all.sort_unstable();
    all.dedup();
    let any = all.iter().map(|f| quote_lexeme(f)).collect::<Vec<_>>().join(" | ");
    let columns = "o.id, s.ord, o.trust,
         ARRAY(SELECT t FROM unnest(o.title_terms) t WHERE t = ANY($6::text[])),
         ARRAY(SELECT t FROM unnest(o.any_terms) t WHERE t = ANY($6::text[]))";
    let stmt = c
        .prepare_cached(&format!(
            "{} WHERE o.terms_tsv @@ $5::text::tsquery AND o.trust >= $7",
            scoped(table, columns)
        ))
        .await?;
    let found =
        c.query(&stmt, &[tiers, scopes, positions, snapshots, &any, &all, &req.min_trust]).await?;
    let mut rows: Vec<PoolRow> = found
        .iter()
        .map(|r| PoolRow {
            id: r.get(0),
            ord: r.get(1),
            trust: r.get(2),
            title: r.get(3),
            any: r.get(4),
            masks: Masks::default(),
        })
        .collect();
    rows.sort_by(|a, b| a.ord.cmp(&b.ord).then_with(|| file_name_cmp(&a.id, &b.id)));
    let mut source = PoolRows { forms, rows };
    let pool_size = u64::try_from(pool_size).unwrap_or(0);
    let Ok(step) = relevance::step_terms(&mut source, pool_size, &words);
    if step.is_empty() {
        return Ok(Vec::new());
    }
    let candidates = source.rows.into_iter().map(|r| ((r.id, r.ord), r.masks, r.trust));
    let accepted = relevance::accept(&step, req.min_relevance, req.keep_ratio, candidates);
    if accepted.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<&str> = accepted.iter().map(|a| a.key.0.as_str()).collect();
    let stmt = c
        .prepare_cached(&format!("{} WHERE o.id = ANY($5::text[])", scoped(table, ROW_COLUMNS)))
        .await?;
    let mut full: HashMap<String, tokio_postgres::Row> = c
        .query(&stmt, &[tiers, scopes, positions, snapshots, &ids])
        .await?
        .into_iter()
        .map(|r| (r.get::<_, String>(0), r))
        .collect();
    // As the index does: read the best until `max_results` are in hand and the next one scores
    // strictly lower, so ties keep discovery order.
    let mut hits: Vec<Candidate> = Vec::new();
    for a in &accepted {
        let score = a.score();
        if hits.len() >= req.max_results && hits.last().is_some_and(|h| score < h.score) {
            break;
        }
        let (id, ord) = &a.key;
        let Some(row) = full.remove(id) else { continue };
        let Some(stored) = served(RawRow::from_row(&row), req, *ord) else { continue };
        if stored.observation.trust < req.min_trust {
            continue;
        }
        hits.push(Candidate { stored, ord: *ord, score, relevance: a.judgement.coverage });
    }
    hits.sort_by(Candidate::cmp);
    Ok(hits.into_iter().take(req.max_results).map(Candidate::into_hit).collect())
}

/// For each step stem that [`expands_by_prefix`], the request folders' terms that begin with
/// it (itself excluded), folder by folder in the request's order, in byte order within a
/// folder: the order of the index's term dictionaries.
async fn prefix_forms(
    c: &impl GenericClient,
    table: Table,
    sel: &Selectors,
    stems: &[String],
) -> Result<HashMap<String, Vec<String>>, tokio_postgres::Error> {
    let expanding: Vec<String> =
        stems.iter().filter(|s| expands_by_prefix(s) && fits_lexeme(s)).cloned().collect();
    let mut forms: HashMap<String, Vec<String>> = HashMap::new();
    if expanding.is_empty() {
        return Ok(forms);
    }
    let query =
        expanding.iter().map(|s| format!("{}:*", quote_lexeme(s))).collect::<Vec<_>>().join(" | ");
    // Every row of the folders, whatever its trust or suite place: the index's dictionaries
    // hold the terms of every document of a folder.
    let stmt = c
        .prepare_cached(&format!(
            "WITH sel AS (
                 SELECT * FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS s(tier, scope, ord)
             )
             SELECT DISTINCT s.ord, t.term COLLATE \"C\"
             FROM {} o JOIN sel s ON o.tier = s.tier AND o.scope = s.scope
             CROSS JOIN LATERAL unnest(o.any_terms) AS t(term)
             WHERE o.terms_tsv @@ $3::text::tsquery
               AND EXISTS (SELECT 1 FROM unnest($4::text[]) p WHERE starts_with(t.term, p))
             ORDER BY 1, 2",
            table.name()
        ))
        .await?;
    let found = c.query(&stmt, &[&sel.tiers, &sel.scopes, &query, &expanding]).await?;
    for r in &found {
        let term: String = r.get(1);
        for stem in expanding.iter().filter(|s| term.starts_with(s.as_str()) && term != **s) {
            let list = forms.entry(stem.clone()).or_default();
            if list.len() + 1 < MAX_FORMS && !list.contains(&term) {
                list.push(term.clone());
            }
        }
    }
    Ok(forms)
}

/// One pool row holding a step form: the forms it holds, and the masks `step_terms` sets.
struct PoolRow {
    id: String,
    ord: i64,
    trust: f64,
    title: Vec<String>,
    any: Vec<String>,
    masks: Masks,
}

/// [`TermSource`] over the rows fetched for one step.
struct PoolRows {
    forms: HashMap<String, Vec<String>>,
    rows: Vec<PoolRow>,
}

impl TermSource for PoolRows {
    type Error = std::convert::Infallible;

    fn forms(&mut self, stem: &str) -> Result<Vec<String>, Self::Error> {
        let mut forms = vec![stem.to_owned()];
        forms.extend(self.forms.get(stem).into_iter().flatten().cloned());
        Ok(forms)
    }

    fn mark(&mut self, forms: &[String], bit: u32) -> Result<(u64, u64), Self::Error> {
        let (mut df, mut title_df) = (0, 0);
        let holds = |terms: &[String]| terms.iter().any(|t| forms.contains(t));
        for row in &mut self.rows {
            if holds(&row.any) {
                row.masks.any |= bit;
                df += 1;
                if holds(&row.title) {
                    row.masks.title |= bit;
                    title_df += 1;
                }
            }
        }
        Ok((df, title_df))
    }
}

/// The order of the ids' file names (`<id>.md`), as the index orders files of one folder.
fn file_name_cmp(a: &str, b: &str) -> Ordering {
    a.bytes().chain(*b".md").cmp(b.bytes().chain(*b".md"))
}
