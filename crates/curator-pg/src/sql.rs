//! The SQL statements of the store, shared by plain reads and transactions.
//!
//! Every statement is prepared once per connection (deadpool's statement cache). Reads inside a
//! transaction pass `lock = true` and take `FOR UPDATE` row locks, so a read-modify-write in
//! one transaction can never lose an update made by another process between its read and its
//! write (issue 7 item 3). Ids are ordered `COLLATE "C"` (byte order, which for ids equals the
//! UTF-16 order agent-qa lists files in), whatever the database's default collation is.

use curator_store::{JournalEntry, JournalFilter, Place};
use deadpool_postgres::GenericClient;
use tokio_postgres::Error;

use crate::row::{Derived, RawRow};

/// Which table of observation rows: served memory, or the review queue (issue 18). Both have
/// the same columns; a statement names one of them, never a user-given string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Table {
    Observations,
    Pending,
}

impl Table {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Table::Observations => "observations",
            Table::Pending => "pending_observations",
        }
    }

    pub(crate) fn place(self) -> Place {
        match self {
            Table::Observations => Place::Memory,
            Table::Pending => Place::Pending,
        }
    }
}

fn with_lock(sql: &str, lock: bool) -> String {
    if lock { format!("{sql} FOR UPDATE") } else { sql.to_owned() }
}

/// The row of `id` in `table`, wherever it lives there.
pub(crate) async fn by_id(
    c: &impl GenericClient,
    table: Table,
    id: &str,
    lock: bool,
) -> Result<Option<RawRow>, Error> {
    let sql = with_lock(
        &format!("SELECT id, tier, scope, file_text, version FROM {} WHERE id = $1", table.name()),
        lock,
    );
    let stmt = c.prepare_cached(&sql).await?;
    Ok(c.query_opt(&stmt, &[&id]).await?.as_ref().map(RawRow::from_row))
}

/// Every row of one scope, by id.
pub(crate) async fn scope_rows(
    c: &impl GenericClient,
    table: Table,
    tier: &str,
    scope: &str,
    lock: bool,
) -> Result<Vec<RawRow>, Error> {
    let sql = with_lock(
        &format!(
            "SELECT id, tier, scope, file_text, version FROM {}
             WHERE tier = $1 AND scope = $2 ORDER BY id COLLATE \"C\"",
            table.name()
        ),
        lock,
    );
    let stmt = c.prepare_cached(&sql).await?;
    Ok(c.query(&stmt, &[&tier, &scope]).await?.iter().map(RawRow::from_row).collect())
}

/// Every row, optionally of one tier and/or scope, in tier, scope, id order.
pub(crate) async fn all_rows(
    c: &impl GenericClient,
    table: Table,
    tier: Option<&str>,
    scope: Option<&str>,
) -> Result<Vec<RawRow>, Error> {
    let stmt = c
        .prepare_cached(&format!(
            "SELECT id, tier, scope, file_text, version FROM {}
             WHERE ($1::text IS NULL OR tier = $1) AND ($2::text IS NULL OR scope = $2)
             ORDER BY tier COLLATE \"C\", scope COLLATE \"C\", id COLLATE \"C\"",
            table.name()
        ))
        .await?;
    Ok(c.query(&stmt, &[&tier, &scope]).await?.iter().map(RawRow::from_row).collect())
}

/// Inserts the row, or updates it in place when the id already lives at the same tier and
/// scope (bumping `version`). Returns `false`, changing nothing, when the id exists elsewhere:
/// checked by the statement itself, so a concurrent insert of the same id cannot move a row.
pub(crate) async fn upsert(
    c: &impl GenericClient,
    table: Table,
    d: &Derived,
) -> Result<bool, Error> {
    let stmt = c
        .prepare_cached(&format!(
            "INSERT INTO {t} (id, tier, scope, title, content, trust, created,
                 last_confirmed, confirmed_count, contradicted_count, source_test, position,
                 suite_snapshot, file_text, phrase_tsv, token_len, title_terms, any_terms)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14,
                 $15::text::tsvector, $16, $17, $18)
             ON CONFLICT (id) DO UPDATE SET
                 title = EXCLUDED.title, content = EXCLUDED.content, trust = EXCLUDED.trust,
                 created = EXCLUDED.created, last_confirmed = EXCLUDED.last_confirmed,
                 confirmed_count = EXCLUDED.confirmed_count,
                 contradicted_count = EXCLUDED.contradicted_count,
                 source_test = EXCLUDED.source_test, position = EXCLUDED.position,
                 suite_snapshot = EXCLUDED.suite_snapshot, file_text = EXCLUDED.file_text,
                 phrase_tsv = EXCLUDED.phrase_tsv, token_len = EXCLUDED.token_len,
                 title_terms = EXCLUDED.title_terms, any_terms = EXCLUDED.any_terms,
                 version = {t}.version + 1, updated_at = now()
             WHERE {t}.tier = EXCLUDED.tier AND {t}.scope = EXCLUDED.scope",
            t = table.name()
        ))
        .await?;
    let n = c
        .execute(
            &stmt,
            &[
                &d.id,
                &d.tier,
                &d.scope,
                &d.title,
                &d.content,
                &d.trust,
                &d.created,
                &d.last_confirmed,
                &d.confirmed_count,
                &d.contradicted_count,
                &d.source_test,
                &d.position,
                &d.suite_snapshot,
                &d.file_text,
                &d.phrase_tsv,
                &d.token_len,
                &d.title_terms,
                &d.any_terms,
            ],
        )
        .await?;
    Ok(n == 1)
}

/// Deletes the row of `id` at `tier`/`scope`; `false` when there was none.
pub(crate) async fn delete(
    c: &impl GenericClient,
    table: Table,
    tier: &str,
    scope: &str,
    id: &str,
) -> Result<bool, Error> {
    let stmt = c
        .prepare_cached(&format!(
            "DELETE FROM {} WHERE id = $1 AND tier = $2 AND scope = $3",
            table.name()
        ))
        .await?;
    Ok(c.execute(&stmt, &[&id, &tier, &scope]).await? == 1)
}

/// Appends one journal row (in the caller's transaction, so it commits with the change).
pub(crate) async fn append_journal(c: &impl GenericClient, e: &JournalEntry) -> Result<(), Error> {
    let stmt = c
        .prepare_cached(
            "INSERT INTO journal (time, run_id, action, tier, scope, id, reasoning, before, after,
                 before_file, after_file, txn, reverts, place, evidence)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)",
        )
        .await?;
    // Journal text is for reading: a NUL (from a decision's reasoning, say) is shown as ␀.
    let json = |s: &Option<curator_core::ObservationSnapshot>| {
        s.as_ref()
            .and_then(|s| serde_json::to_value(s).ok())
            .map(|v| crate::row::json_shown_nul(&v))
    };
    let text = |s: &Option<String>| s.as_deref().map(|t| crate::row::shown_nul(t).into_owned());
    c.execute(
        &stmt,
        &[
            &e.time,
            &e.run_id,
            &e.action.as_str(),
            &e.tier,
            &e.scope,
            &e.id,
            &crate::row::shown_nul(&e.reasoning),
            &json(&e.before),
            &json(&e.after),
            &text(&e.before_file),
            &text(&e.after_file),
            &e.txn,
            &e.reverts,
            &place_text(e.place),
            &e.evidence
                .as_ref()
                .and_then(|run| serde_json::to_value(run).ok())
                .map(|v| crate::row::json_shown_nul(&v)),
        ],
    )
    .await?;
    Ok(())
}

/// Whether the journal holds `entry`'s transaction already: a row with its transaction id, or,
/// for an entry written before transaction ids, a row with its time, run, action, id and
/// reasoning.
pub(crate) async fn journal_holds(
    c: &impl GenericClient,
    entry: &JournalEntry,
) -> Result<bool, Error> {
    let row = match &entry.txn {
        Some(txn) => {
            let stmt =
                c.prepare_cached("SELECT EXISTS (SELECT 1 FROM journal WHERE txn = $1)").await?;
            c.query_one(&stmt, &[txn]).await?
        }
        None => {
            let stmt = c
                .prepare_cached(
                    "SELECT EXISTS (SELECT 1 FROM journal WHERE txn IS NULL AND time = $1
                         AND run_id IS NOT DISTINCT FROM $2 AND action = $3 AND id = $4
                         AND reasoning = $5)",
                )
                .await?;
            c.query_one(
                &stmt,
                &[&entry.time, &entry.run_id, &entry.action.as_str(), &entry.id, &entry.reasoning],
            )
            .await?
        }
    };
    Ok(row.get(0))
}

/// Serializes the transactions of one run (issue 13): a transaction-scoped advisory lock on the
/// run id without its `undo-` prefixes, so `curate r1`, `undo r1` and `undo undo-r1` never
/// overlap and each reads the journal as the one before it left it (READ COMMITTED: every
/// statement after the lock sees what the previous holder committed).
pub(crate) async fn lock_run(c: &impl GenericClient, run_id: &str) -> Result<(), Error> {
    let mut base = run_id;
    while let Some(rest) = base.strip_prefix("undo-") {
        base = rest;
    }
    let key = format!("curator-run:{base}");
    let stmt = c.prepare_cached("SELECT pg_advisory_xact_lock(hashtext($1))").await?;
    c.execute(&stmt, &[&key]).await?;
    Ok(())
}

fn place_text(place: Place) -> &'static str {
    match place {
        Place::Memory => "memory",
        Place::Pending => "pending",
    }
}

/// Journal rows passing `filter`, oldest first; a row that does not decode is reported by its
/// sequence number.
pub(crate) async fn read_journal(
    c: &impl GenericClient,
    filter: &JournalFilter,
) -> Result<Result<Vec<JournalEntry>, (i64, String)>, Error> {
    let stmt = c
        .prepare_cached(
            "SELECT seq, time, run_id, action, tier, scope, id, reasoning, before, after,
                    before_file, after_file, txn, reverts, place, evidence
             FROM journal
             WHERE ($1::text IS NULL OR id = $1) AND ($2::text IS NULL OR run_id = $2)
             ORDER BY seq",
        )
        .await?;
    let rows = c.query(&stmt, &[&filter.id, &filter.run_id]).await?;
    let mut out = Vec::with_capacity(rows.len());
    for r in &rows {
        let seq: i64 = r.get(0);
        let decode = |v: Option<serde_json::Value>| match v {
            None => Ok(None),
            Some(v) => serde_json::from_value(v).map(Some),
        };
        let entry = (|| -> Result<JournalEntry, serde_json::Error> {
            Ok(JournalEntry {
                time: r.get(1),
                run_id: r.get(2),
                action: serde_json::from_value(serde_json::Value::String(r.get(3)))?,
                tier: r.get(4),
                scope: r.get(5),
                id: r.get(6),
                reasoning: r.get(7),
                before: decode(r.get(8))?,
                after: decode(r.get(9))?,
                before_file: r.get(10),
                after_file: r.get(11),
                txn: r.get(12),
                reverts: r.get(13),
                place: serde_json::from_value(serde_json::Value::String(r.get(14)))?,
                evidence: match r.get::<_, Option<serde_json::Value>>(15) {
                    None => None,
                    Some(v) => Some(Box::new(serde_json::from_value(v)?)),
                },
            })
        })();
        match entry {
            Ok(entry) => out.push(entry),
            Err(e) => return Ok(Err((seq, e.to_string()))),
        }
    }
    Ok(Ok(out))
}
