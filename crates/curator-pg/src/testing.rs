//! A throwaway PostgreSQL for tests (issue 7 item 6): no mock database, ever.
//!
//! [`test_database`] gives every test its own fresh database. The server is, in order:
//! `CURATOR_TEST_PG_URL` when set (a role allowed to `CREATE DATABASE`); otherwise one private
//! PostgreSQL 15 cluster per test process, created with `initdb` in a temporary folder and
//! started with `pg_ctl` on a free loopback port, with unix sockets off and `fsync` off (it
//! holds nothing worth keeping). `initdb` refuses to run as root, so as root the cluster runs as
//! the `postgres` user through `runuser`. A watcher process stops the cluster and removes its
//! folder as soon as the test process exits, however it exits (a panic, SIGKILL), because a
//! Rust static is never dropped.
//!
//! Binaries come from `CURATOR_PG_BIN` or `/usr/lib/postgresql/15/bin`; when they are missing
//! the error says to `apt-get install -y postgresql-15` or to set `CURATOR_TEST_PG_URL`.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

use tokio_postgres::NoTls;

use crate::error::PgError;

/// Where Debian's PostgreSQL 15 server binaries live.
pub const DEFAULT_PG_BIN: &str = "/usr/lib/postgresql/15/bin";

/// One server that tests create their databases in.
#[derive(Debug)]
struct Server {
    /// Connection string of a role that may create databases, without a database name.
    admin_url: String,
}

static SERVER: OnceLock<Result<Server, String>> = OnceLock::new();
static DURABLE_SERVER: OnceLock<Result<Server, String>> = OnceLock::new();
static COUNTER: AtomicU32 = AtomicU32::new(0);

/// A fresh, empty database, dropped (best effort) when this value is dropped.
#[derive(Debug)]
pub struct TestDatabase {
    url: String,
    name: String,
    admin_url: String,
}

impl TestDatabase {
    /// Connection string of this database.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Its name (`curator_t_<pid>_<n>`).
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        let sql = format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name);
        if let Err(e) = admin_exec(&self.admin_url, &sql) {
            tracing::warn!("dropping test database {}: {e}", self.name);
        }
    }
}

/// A new empty database on the test server (started on first use).
pub fn test_database() -> Result<TestDatabase, PgError> {
    database_on(&SERVER, false)
}

/// A new empty database on a cluster that keeps PostgreSQL's durability defaults (`fsync`,
/// `synchronous_commit` and `full_page_writes` on), for benchmarks that compare write
/// throughput with the file store, which fsyncs every write. Tests use [`test_database`].
pub fn durable_test_database() -> Result<TestDatabase, PgError> {
    database_on(&DURABLE_SERVER, true)
}

fn database_on(
    cell: &OnceLock<Result<Server, String>>,
    durable: bool,
) -> Result<TestDatabase, PgError> {
    let server = cell
        .get_or_init(|| start_server(durable))
        .as_ref()
        .map_err(|e| PgError::Cluster(e.clone()))?;
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let name = format!("curator_t_{}_{n}", std::process::id());
    admin_exec(
        &server.admin_url,
        &format!("CREATE DATABASE {name} TEMPLATE template0 ENCODING 'UTF8'"),
    )
    .map_err(PgError::Cluster)?;
    Ok(TestDatabase {
        url: with_dbname(&server.admin_url, &name),
        name,
        admin_url: server.admin_url.clone(),
    })
}

/// `url` pointing at database `name` (key-value or URL form).
fn with_dbname(url: &str, name: &str) -> String {
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        let (base, query) = match url.split_once('?') {
            Some((b, q)) => (b, format!("?{q}")),
            None => (url, String::new()),
        };
        let scheme_end = base.find("://").map_or(0, |i| i + 3);
        let authority_end = base[scheme_end..].find('/').map_or(base.len(), |i| scheme_end + i);
        format!("{}/{name}{query}", &base[..authority_end])
    } else {
        format!("{url} dbname={name}")
    }
}

/// Runs one statement as the admin role, on the `postgres` database (or the URL's own).
fn admin_exec(admin_url: &str, sql: &str) -> Result<(), String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("runtime: {e}"))?;
    rt.block_on(async {
        let (client, conn) =
            tokio_postgres::connect(admin_url, NoTls).await.map_err(|e| format!("connect: {e}"))?;
        let task = tokio::spawn(conn);
        let r = client.batch_execute(sql).await.map_err(|e| format!("{sql}: {e}"));
        drop(client);
        let _ = task.await;
        r
    })
}

fn start_server(durable: bool) -> Result<Server, String> {
    if let Ok(url) = std::env::var("CURATOR_TEST_PG_URL")
        && !url.trim().is_empty()
    {
        return Ok(Server { admin_url: url });
    }
    let bin = std::env::var_os("CURATOR_PG_BIN")
        .map_or_else(|| PathBuf::from(DEFAULT_PG_BIN), PathBuf::from);
    for tool in ["initdb", "pg_ctl", "postgres"] {
        if !bin.join(tool).is_file() {
            return Err(format!(
                "{} not found: install PostgreSQL 15 (apt-get install -y postgresql-15), set \
                 CURATOR_PG_BIN to its bin folder, or set CURATOR_TEST_PG_URL",
                bin.join(tool).display()
            ));
        }
    }
    let as_postgres = rustix::process::geteuid().is_root();
    let dir = tempfile::Builder::new()
        .prefix("curator-pg-")
        .tempdir()
        .map_err(|e| format!("temporary folder: {e}"))?
        .keep();
    if as_postgres {
        let (uid, gid) = postgres_ids()?;
        std::os::unix::fs::chown(&dir, Some(uid), Some(gid))
            .map_err(|e| format!("chown {}: {e}", dir.display()))?;
    }
    let data = dir.join("data");
    let run = |tool: &str, args: &[&str]| -> Result<(), String> {
        let mut cmd = if as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(bin.join(tool));
            c
        } else {
            Command::new(bin.join(tool))
        };
        let out = cmd
            .args(args)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("running {tool}: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{tool} failed ({}): {}{}",
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    };
    let data_s = data.to_string_lossy().into_owned();
    run(
        "initdb",
        &[
            "-D",
            &data_s,
            "-U",
            "postgres",
            "--auth=trust",
            "-E",
            "UTF8",
            "--locale=C.UTF-8",
            "--no-sync",
        ],
    )?;
    spawn_reaper(&bin, &dir, &data, as_postgres)?;
    let log = dir.join("server.log").to_string_lossy().into_owned();
    let mut last = String::new();
    // A free port can be taken between our probe and the server's bind: try a few.
    for _ in 0..3 {
        let port = free_port()?;
        let safety = if durable {
            "-c fsync=on -c synchronous_commit=on -c full_page_writes=on"
        } else {
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        };
        let opts = format!(
            "-p {port} -c listen_addresses=127.0.0.1 -c unix_socket_directories='' {safety} \
             -c max_connections=200"
        );
        match run("pg_ctl", &["-D", &data_s, "-o", &opts, "-l", &log, "-w", "-t", "60", "start"]) {
            Ok(()) => {
                return Ok(Server {
                    admin_url: format!("postgres://postgres@127.0.0.1:{port}/postgres"),
                });
            }
            Err(e) => last = format!("{e}\n{}", std::fs::read_to_string(&log).unwrap_or_default()),
        }
    }
    Err(last)
}

/// Stops the cluster and deletes `dir` once this process has exited.
fn spawn_reaper(bin: &Path, dir: &Path, data: &Path, as_postgres: bool) -> Result<(), String> {
    let pg_ctl = bin.join("pg_ctl");
    let stop = if as_postgres {
        format!(
            "runuser -u postgres -- '{}' -D '{}' -m immediate stop",
            pg_ctl.display(),
            data.display()
        )
    } else {
        format!("'{}' -D '{}' -m immediate stop", pg_ctl.display(), data.display())
    };
    let script = format!(
        "while kill -0 {pid} 2>/dev/null; do sleep 0.5; done; {stop} >/dev/null 2>&1; rm -rf '{dir}'",
        pid = std::process::id(),
        dir = dir.display(),
    );
    Command::new("sh")
        .args(["-c", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map(drop)
        .map_err(|e| format!("starting the cluster watcher: {e}"))
}

fn free_port() -> Result<u16, String> {
    let listener =
        TcpListener::bind("127.0.0.1:0").map_err(|e| format!("finding a free port: {e}"))?;
    listener.local_addr().map(|a| a.port()).map_err(|e| format!("finding a free port: {e}"))
}

/// The `postgres` user's uid and gid, from `/etc/passwd`.
fn postgres_ids() -> Result<(u32, u32), String> {
    let passwd = std::fs::read_to_string("/etc/passwd").map_err(|e| format!("/etc/passwd: {e}"))?;
    passwd
        .lines()
        .find_map(|line| {
            let f: Vec<&str> = line.split(':').collect();
            (f.len() > 3 && f[0] == "postgres")
                .then(|| Some((f[2].parse().ok()?, f[3].parse().ok()?)))?
        })
        .ok_or_else(|| "no postgres user in /etc/passwd (install postgresql-15)".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_database_name_replaces_the_urls() {
        assert_eq!(
            with_dbname("postgres://u@127.0.0.1:5432/postgres", "x"),
            "postgres://u@127.0.0.1:5432/x"
        );
        assert_eq!(with_dbname("postgres://u@h:1", "x"), "postgres://u@h:1/x");
        assert_eq!(
            with_dbname("postgresql://u:p@h/db?sslmode=disable", "x"),
            "postgresql://u:p@h/x?sslmode=disable"
        );
        assert_eq!(with_dbname("host=h user=u", "x"), "host=h user=u dbname=x");
    }
}
