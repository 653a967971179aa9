//! PostgreSQL databases for tests, at the server named by `NUDGE_TEST_DATABASE_URL`: a template
//! migrated once per test process, and a clone of it for each test (as crates.io's test-db
//! crate does).
//!
//! The first test that asks for a database creates the template, `nudge_test_<run>` (`<run>` is
//! random, so concurrent runs on one server never share or drop each other's), and migrates it
//! with [`Db::migrate`]. From then on a test's database is `CREATE DATABASE nudge_test_<run>_<n>
//! TEMPLATE nudge_test_<run>`: a copy of a few files instead of running every migration again.
//! The app still runs `Db::migrate` on start; on a clone it applies nothing.
//!
//! Each test's database is dropped when its [`PgDatabase`] is, also when the test panics. The
//! template outlives every test, and libtest has no hook at the end of a run, so it is dropped by
//! a reaper: a second copy of this binary, started with the template, that runs only
//! [`reap_databases`]. It waits for its stdin to close, which happens when this process ends in
//! any way (also when it is killed), and then drops every database whose name starts with
//! `nudge_test_<run>`: the template and whatever a killed run left behind.

use nudge::config::DatabaseUrl;
use nudge::store::Db;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use tokio::sync::OnceCell;

/// The environment variable naming the PostgreSQL server for the PostgreSQL suite.
pub const PG_ENV: &str = "NUDGE_TEST_DATABASE_URL";

/// Tells a copy of this binary that it is the reaper, and of which run.
const REAPER_ENV: &str = "NUDGE_TEST_REAP_DATABASES";
/// The reaper's test name, as `--exact` wants it.
const REAPER_TEST: &str = "common::pg::reap_databases";

/// A fresh PostgreSQL database for one test, dropped (`WITH (FORCE)`) when the test ends, also
/// when it panics.
pub struct PgDatabase {
    pub url: String,
    admin_url: String,
    name: String,
}

impl PgDatabase {
    /// A database with every migration applied: a clone of this run's template.
    pub async fn create() -> PgDatabase {
        let template = template().await;
        PgDatabase::new(&format!("TEMPLATE {}", template.name)).await
    }

    /// A database without any schema, for tests of migrating itself (`nudge migrate`, a first
    /// start).
    pub async fn create_empty() -> PgDatabase {
        PgDatabase::new("").await
    }

    async fn new(options: &str) -> PgDatabase {
        let run = run();
        let name = format!(
            "{}_{}",
            run.prefix,
            run.databases.fetch_add(1, Ordering::Relaxed)
        );
        run_admin(&run.admin_url, &format!("CREATE DATABASE {name} {options}")).await;
        PgDatabase {
            url: replace_database(&run.admin_url, &name),
            admin_url: run.admin_url.clone(),
            name,
        }
    }
}

impl Drop for PgDatabase {
    fn drop(&mut self) {
        let admin_url = self.admin_url.clone();
        let sql = format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name);
        // Drop runs outside any runtime we can block on: use a thread with its own.
        std::thread::spawn(move || {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap()
                .block_on(run_admin(&admin_url, &sql));
        })
        .join()
        .ok();
    }
}

/// This process's share of the server: where it is, and the names its databases take.
struct Run {
    admin_url: String,
    /// `nudge_test_<run>`: the template's name, and the start of every database of this run.
    prefix: String,
    /// Numbers this run's databases.
    databases: AtomicU64,
}

fn run() -> &'static Run {
    static RUN: std::sync::OnceLock<Run> = std::sync::OnceLock::new();
    RUN.get_or_init(|| Run {
        admin_url: std::env::var(PG_ENV).unwrap_or_else(|_| {
            panic!("{PG_ENV} is not set: the PostgreSQL suite needs a server, e.g. {PG_ENV}=postgres://postgres@127.0.0.1:5432/test (bash .ci/run sets it)")
        }),
        prefix: format!(
            "nudge_test_{}",
            nudge::store::new_id("run").trim_start_matches("run_")
        ),
        databases: AtomicU64::new(0),
    })
}

/// The migrated template, made by the first test that needs it while the others wait.
struct Template {
    name: String,
    /// The reaper, with the write end of its stdin: open for as long as this process lives (a
    /// static is never dropped). Never waited for: it is meant to outlive this process.
    _reaper: Child,
}

async fn template() -> &'static Template {
    static TEMPLATE: OnceCell<Template> = OnceCell::const_new();
    TEMPLATE
        .get_or_init(|| async {
            let run = run();
            let name = run.prefix.clone();
            // The reaper first, so that even a failed migration leaves nothing behind.
            let reaper = start_reaper(run);
            run_admin(&run.admin_url, &format!("CREATE DATABASE {name}")).await;
            let url = DatabaseUrl::Postgres(replace_database(&run.admin_url, &name));
            Db::migrate(&url)
                .await
                .unwrap_or_else(|e| panic!("migrating the template database {name}: {e}"));
            // `Db::migrate` has closed its connection: a clone needs a template no one is
            // connected to (PostgreSQL waits a few seconds for a closing session).
            Template {
                name,
                _reaper: reaper,
            }
        })
        .await
}

/// Starts this binary again as the reaper of this run's databases (see the module comment).
fn start_reaper(run: &Run) -> Child {
    let exe = std::env::current_exe().expect("the path of the test binary");
    let mut command = Command::new(exe);
    command
        .args([REAPER_TEST, "--exact", "--ignored", "--test-threads=1"])
        .env(REAPER_ENV, &run.prefix)
        .env(PG_ENV, &run.admin_url)
        .stdin(Stdio::piped())
        // Its libtest report must not reach this run's output (`.ci/run` adds up the
        // `test result:` lines).
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // Its own process group: a Ctrl-C in the terminal stops the run, not the clean-up after it.
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    command.spawn().expect("start the database reaper")
}

/// Not a test: the reaper of a run's databases, when this binary is started as one (see the
/// module comment). Ignored, and without [`REAPER_ENV`] it returns at once, so it does nothing
/// in a run of the ignored tests either.
#[test]
#[ignore = "not a test: the PostgreSQL suite starts it to drop its databases when the run ends"]
fn reap_databases() {
    let Ok(prefix) = std::env::var(REAPER_ENV) else {
        return;
    };
    let admin_url = std::env::var(PG_ENV).expect("the server to clean up");
    // Blocks until the test process ends: it holds the other end of stdin.
    let _ = std::io::copy(&mut std::io::stdin(), &mut std::io::sink());
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            let (client, connection) =
                tokio_postgres::connect(&admin_url, tokio_postgres::NoTls).await?;
            let driver = tokio::spawn(connection);
            let rows = client
                .query(
                    "SELECT datname::text FROM pg_database WHERE starts_with(datname, $1)",
                    &[&prefix],
                )
                .await?;
            for row in rows {
                let name: String = row.get(0);
                client
                    .batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                    .await?;
            }
            drop(client);
            let _ = driver.await;
            Ok::<_, tokio_postgres::Error>(())
        })
        .expect("drop the run's databases");
}

async fn run_admin(admin_url: &str, sql: &str) {
    let (client, connection) = tokio_postgres::connect(admin_url, tokio_postgres::NoTls)
        .await
        .unwrap_or_else(|e| panic!("cannot reach PostgreSQL at {admin_url} ({PG_ENV}): {e}"));
    let driver = tokio::spawn(connection);
    client
        .batch_execute(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    drop(client);
    let _ = driver.await;
}

/// `postgres://user@host:port/db?x` with `db` replaced by `name`.
fn replace_database(url: &str, name: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (url, None),
    };
    let scheme_end = base.find("://").map(|i| i + 3).unwrap_or(0);
    let base = match base[scheme_end..].find('/') {
        Some(i) => &base[..scheme_end + i],
        None => base,
    };
    match query {
        Some(q) => format!("{base}/{name}?{q}"),
        None => format!("{base}/{name}"),
    }
}
