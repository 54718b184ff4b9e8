//! Versioned schema migrations, embedded in the binary (issue 7 item 1).
//!
//! Each `migrations/NNNN_name.sql` is applied once, in version order, in one transaction with
//! its `schema_version` row, so a database is always at exactly one recorded version. Openers
//! serialize on a transaction-scoped advisory lock, so eight processes starting at once against
//! an empty database apply each migration exactly once. Invariants checked on every open: a
//! database whose version is newer than the newest migration this binary embeds is refused
//! (this binary would misread it), and a recorded migration whose checksum differs from the
//! embedded text is refused (a released migration was edited; add a new one instead).

use deadpool_postgres::GenericClient;

use crate::error::{PgError, Result};
use crate::row::{phrase_vector, term_arrays};
use crate::sql::Table;

/// One embedded migration.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Migration {
    pub(crate) version: i32,
    pub(crate) name: &'static str,
    pub(crate) sql: &'static str,
    /// What the migration recomputes in Rust after its SQL (the SQL cannot: curator's
    /// tokenizers derive it).
    pub(crate) backfill: Backfill,
}

/// Columns a migration recomputes in Rust for the rows already stored, in both tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Backfill {
    None,
    /// `phrase_tsv` and `token_len` of every row with non-ASCII text (ASCII text tokenizes
    /// the same under every tokenizer curator has shipped).
    PhraseVectors,
    /// `title_terms` and `any_terms` of every row.
    TermArrays,
    /// `title_terms` and `any_terms` of every row with non-ASCII text (the CJK bigrams of
    /// version 7 change nothing else).
    NonAsciiTermArrays,
}

/// Every migration this binary knows, in version order (versions are 1, 2, 3… without gaps).
pub(crate) const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "init",
        sql: include_str!("../migrations/0001_init.sql"),
        backfill: Backfill::None,
    },
    Migration {
        version: 2,
        name: "journal_transactions",
        sql: include_str!("../migrations/0002_journal_transactions.sql"),
        backfill: Backfill::None,
    },
    Migration {
        version: 3,
        name: "trust",
        sql: include_str!("../migrations/0003_trust.sql"),
        backfill: Backfill::None,
    },
    Migration {
        version: 4,
        name: "run_records",
        sql: include_str!("../migrations/0004_run_records.sql"),
        backfill: Backfill::None,
    },
    Migration {
        version: 5,
        name: "unicode61_tables",
        sql: include_str!("../migrations/0005_unicode61_tables.sql"),
        backfill: Backfill::PhraseVectors,
    },
    Migration {
        version: 6,
        name: "terms_arrays",
        sql: include_str!("../migrations/0006_terms_arrays.sql"),
        backfill: Backfill::TermArrays,
    },
    Migration {
        version: 7,
        name: "cjk_bigrams",
        sql: include_str!("../migrations/0007_cjk_bigrams.sql"),
        backfill: Backfill::NonAsciiTermArrays,
    },
];

/// The schema version this binary reads and writes: the newest embedded migration.
pub const SCHEMA_VERSION: i32 = 7;

/// Advisory lock key that serializes migrating openers (any constant unlikely to clash).
const MIGRATION_LOCK: i64 = 0x6375_7261_746f_7201; // "curator" + 1

const CREATE_VERSION_TABLE: &str = "CREATE TABLE IF NOT EXISTS schema_version (
    version    integer PRIMARY KEY,
    name       text NOT NULL,
    checksum   text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
)";

/// One migration as the database and this binary see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MigrationStatus {
    pub version: i32,
    pub name: String,
    /// The checksum of the SQL embedded in this binary; `None` for a version only the database
    /// knows (written by a newer curator).
    pub checksum: Option<String>,
    /// When it was applied (ISO, UTC), `None` when still pending.
    pub applied_at: Option<String>,
}

/// What `curator migrate` shows: the versions on both sides and every migration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MigrationsStatus {
    /// The highest version applied to the database (0 for an empty database).
    pub database_version: i32,
    /// [`SCHEMA_VERSION`].
    pub binary_version: i32,
    /// Embedded and recorded migrations, by version.
    pub migrations: Vec<MigrationStatus>,
}

impl MigrationsStatus {
    /// Migrations this binary would apply.
    pub fn pending(&self) -> impl Iterator<Item = &MigrationStatus> {
        self.migrations.iter().filter(|m| m.applied_at.is_none())
    }
}

/// FNV-1a 64 of the SQL text: enough to notice an edited migration, not a security measure.
pub(crate) fn checksum(sql: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in sql.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// A recorded `schema_version` row.
struct Recorded {
    version: i32,
    name: String,
    checksum: String,
    applied_at: String,
}

async fn recorded(client: &impl GenericClient) -> Result<Vec<Recorded>, tokio_postgres::Error> {
    let exists: bool =
        client.query_one("SELECT to_regclass('schema_version') IS NOT NULL", &[]).await?.get(0);
    if !exists {
        return Ok(Vec::new());
    }
    let rows = client
        .query(
            "SELECT version, name, checksum,
                    to_char(applied_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')
             FROM schema_version ORDER BY version",
            &[],
        )
        .await?;
    Ok(rows
        .iter()
        .map(|r| Recorded {
            version: r.get(0),
            name: r.get(1),
            checksum: r.get(2),
            applied_at: r.get(3),
        })
        .collect())
}

/// Refuses a database newer than this binary or with an edited migration.
fn check(target: &str, recorded: &[Recorded], known: &[Migration]) -> Result<()> {
    let newest = known.iter().map(|m| m.version).max().unwrap_or(0);
    if let Some(found) = recorded.iter().map(|r| r.version).max()
        && found > newest
    {
        return Err(PgError::SchemaTooNew { target: target.to_owned(), found, supported: newest });
    }
    for r in recorded {
        if let Some(m) = known.iter().find(|m| m.version == r.version) {
            let embedded = checksum(m.sql);
            if embedded != r.checksum {
                return Err(PgError::ChecksumMismatch {
                    target: target.to_owned(),
                    version: r.version,
                    name: r.name.clone(),
                    recorded: r.checksum.clone(),
                    embedded,
                });
            }
        }
    }
    Ok(())
}

/// Holds off migrations for the rest of the caller's transaction and refuses a database that a
/// newer curator migrated since this process connected.
///
/// A process checks the schema when it connects; a long-running `serve` or `mcp` of an older
/// build would otherwise go on writing rows into a schema it does not know, leaving the
/// columns a newer curator derives on write empty or stale, so those rows were never found
/// again (audit 9). Every write transaction first takes the migrations' advisory lock shared
/// (a migration takes it exclusive), so a write either finishes before a migration starts or
/// sees the version it recorded and is refused: `Some((found, known))` then.
pub(crate) async fn guard_schema(
    tx: &impl GenericClient,
) -> std::result::Result<Option<(i32, i32)>, tokio_postgres::Error> {
    let row = tx
        .query_one(
            "SELECT pg_advisory_xact_lock_shared($1)::text, \
             (SELECT max(version) FROM schema_version)",
            &[&MIGRATION_LOCK],
        )
        .await?;
    Ok(row
        .get::<_, Option<i32>>(1)
        .filter(|&found| found > SCHEMA_VERSION)
        .map(|found| (found, SCHEMA_VERSION)))
}

/// The status without changing anything; still refuses a newer or edited database.
pub(crate) async fn status(
    client: &impl GenericClient,
    target: &str,
    known: &[Migration],
) -> Result<MigrationsStatus> {
    let recorded = recorded(client).await.map_err(|e| connect_error(target, e))?;
    check(target, &recorded, known)?;
    let mut migrations: Vec<MigrationStatus> = known
        .iter()
        .map(|m| MigrationStatus {
            version: m.version,
            name: m.name.to_owned(),
            checksum: Some(checksum(m.sql)),
            applied_at: recorded
                .iter()
                .find(|r| r.version == m.version)
                .map(|r| r.applied_at.clone()),
        })
        .collect();
    for r in &recorded {
        if !known.iter().any(|m| m.version == r.version) {
            migrations.push(MigrationStatus {
                version: r.version,
                name: r.name.clone(),
                checksum: None,
                applied_at: Some(r.applied_at.clone()),
            });
        }
    }
    migrations.sort_by_key(|m| m.version);
    Ok(MigrationsStatus {
        database_version: recorded.iter().map(|r| r.version).max().unwrap_or(0),
        binary_version: known.iter().map(|m| m.version).max().unwrap_or(0),
        migrations,
    })
}

/// Applies every pending migration in one transaction; returns the versions applied.
pub(crate) async fn apply(
    client: &mut deadpool_postgres::Client,
    target: &str,
    known: &[Migration],
) -> Result<Vec<i32>> {
    let fail = |e| connect_error(target, e);
    let tx = client.transaction().await.map_err(fail)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK]).await.map_err(fail)?;
    tx.batch_execute(CREATE_VERSION_TABLE).await.map_err(fail)?;
    let recorded = recorded(&tx).await.map_err(fail)?;
    check(target, &recorded, known)?;
    let mut applied = Vec::new();
    for m in known {
        if recorded.iter().any(|r| r.version == m.version) {
            continue;
        }
        let failed = |source| PgError::Migration {
            target: target.to_owned(),
            version: m.version,
            name: m.name.to_owned(),
            source,
        };
        tx.batch_execute(m.sql).await.map_err(failed)?;
        if m.backfill != Backfill::None {
            let rows = backfill(&tx, m.backfill).await.map_err(failed)?;
            tracing::info!(rows, backfill = ?m.backfill, "recomputed derived columns");
        }
        tx.execute(
            "INSERT INTO schema_version (version, name, checksum) VALUES ($1, $2, $3)",
            &[&m.version, &m.name, &checksum(m.sql)],
        )
        .await
        .map_err(failed)?;
        tracing::info!(version = m.version, name = m.name, "applied migration");
        applied.push(m.version);
    }
    tx.commit().await.map_err(fail)?;
    Ok(applied)
}

/// Recomputes the columns `what` names, in both tables. A row's `version` is left alone: its
/// observation did not change.
async fn backfill(tx: &impl GenericClient, what: Backfill) -> Result<u64, tokio_postgres::Error> {
    let mut updated = 0;
    for table in [Table::Observations, Table::Pending] {
        let t = table.name();
        let non_ascii = format!(
            "SELECT id, title, content FROM {t}
             WHERE octet_length(title) <> char_length(title)
                OR octet_length(content) <> char_length(content)"
        );
        let term_update = format!("UPDATE {t} SET title_terms = $2, any_terms = $3 WHERE id = $1");
        let (select, update) = match what {
            Backfill::None => return Ok(0),
            Backfill::PhraseVectors => (
                non_ascii,
                format!(
                    "UPDATE {t} SET phrase_tsv = $2::text::tsvector, token_len = $3 WHERE id = $1"
                ),
            ),
            Backfill::TermArrays => (format!("SELECT id, title, content FROM {t}"), term_update),
            Backfill::NonAsciiTermArrays => (non_ascii, term_update),
        };
        let rows = tx.query(&select, &[]).await?;
        let update = tx.prepare(&update).await?;
        for row in rows {
            let (id, title, content): (String, String, String) =
                (row.get(0), row.get(1), row.get(2));
            updated += if what == Backfill::PhraseVectors {
                let (vector, len) = phrase_vector(&title, &content);
                tx.execute(&update, &[&id, &vector, &len]).await?
            } else {
                let (title_terms, any_terms) = term_arrays(&title, &content);
                tx.execute(&update, &[&id, &title_terms, &any_terms]).await?
            };
        }
    }
    Ok(updated)
}

fn connect_error(target: &str, e: tokio_postgres::Error) -> PgError {
    PgError::Connect { target: target.to_owned(), source: Box::new(e) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_dense_and_the_newest_is_the_schema_version() {
        for (i, m) in MIGRATIONS.iter().enumerate() {
            assert_eq!(m.version, i32::try_from(i + 1).unwrap(), "{}", m.name);
            assert!(!m.sql.trim().is_empty());
        }
        assert_eq!(MIGRATIONS.last().map(|m| m.version), Some(SCHEMA_VERSION));
    }

    #[test]
    fn a_newer_database_and_an_edited_migration_are_refused() {
        let rec = |version, checksum: &str| Recorded {
            version,
            name: "x".into(),
            checksum: checksum.into(),
            applied_at: String::new(),
        };
        let ok = checksum(MIGRATIONS[0].sql);
        assert!(check("db", &[rec(1, &ok)], MIGRATIONS).is_ok());
        let newer = SCHEMA_VERSION + 1;
        let err = check("db", &[rec(1, &ok), rec(newer, "00")], MIGRATIONS).unwrap_err();
        assert!(
            matches!(err, PgError::SchemaTooNew { found, supported, .. } if found == newer && supported == SCHEMA_VERSION),
            "{err}"
        );
        assert!(err.to_string().contains("upgrade curator"), "{err}");
        let err = check("db", &[rec(1, "0000000000000000")], MIGRATIONS).unwrap_err();
        assert!(matches!(err, PgError::ChecksumMismatch { version: 1, .. }), "{err}");
    }

    #[test]
    fn checksum_is_stable() {
        assert_eq!(checksum(""), "cbf29ce484222325");
        assert_ne!(checksum("a"), checksum("b"));
    }
}
