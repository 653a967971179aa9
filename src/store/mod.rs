//! Storage: one diesel schema over SQLite (the embedded default) and PostgreSQL.
//!
//! A [`Db`] is a pool for one of the two backends; [`Db::conn`] hands out a [`Conn`], and the
//! [`with_conn!`](crate::with_conn) macro runs a query written once against whichever backend it
//! holds (the body is compiled for each). Everything is async: PostgreSQL through
//! `tokio-postgres`, SQLite through diesel-async's `SyncConnectionWrapper`, which moves each
//! query onto tokio's blocking pool.
//!
//! Adding a table: a migration in both `migrations/postgres/` and `migrations/sqlite/` (same
//! name), its `table!` in [`schema`], and a file here with its rows and queries.

pub mod accounts;
pub mod contacts;
pub mod enrollments;
pub mod flows;
pub mod pg_batch;
pub mod schema;
pub mod senders;
pub mod signals;
pub mod sqlite_batch;
pub mod tokens;

use crate::config::DatabaseUrl;
use diesel::{Connection, SqliteConnection};
use diesel_async::pooled_connection::deadpool::{Object, Pool};
use diesel_async::pooled_connection::{AsyncDieselConnectionManager, ManagerConfig};
use diesel_async::sync_connection_wrapper::SyncConnectionWrapper;
use diesel_async::{AsyncConnection, AsyncPgConnection, SimpleAsyncConnection};
use diesel_migrations::{embed_migrations, EmbeddedMigrations, MigrationHarness};
use std::time::Duration;

/// Migrations compiled into the binary, one set per backend (the SQL may differ).
pub const POSTGRES_MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations/postgres");
pub const SQLITE_MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations/sqlite");

/// The async SQLite connection: a synchronous diesel connection run on the blocking pool.
pub type SqliteConn = SyncConnectionWrapper<SqliteConnection>;

/// How long an SQLite writer waits for a lock before failing, in milliseconds.
const SQLITE_BUSY_TIMEOUT_MS: u32 = 5_000;
/// PostgreSQL pool size per replica.
const POSTGRES_POOL_SIZE: usize = 16;
/// How long a request waits for a pooled connection (or for a new one to open) before it fails
/// as unavailable, rather than hanging.
const POOL_TIMEOUT: Duration = Duration::from_secs(30);

/// The errors of the storage boundary.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database query failed: {0}")]
    Query(#[from] diesel::result::Error),
    #[error("cannot connect to the database at {url}: {message}")]
    Connect { url: String, message: String },
    #[error("cannot get a database connection from the pool: {0}")]
    Pool(String),
    #[error("migrations failed: {0}")]
    Migration(String),
    #[error("stored data is corrupt: {0}")]
    Corrupt(String),
    #[error("too many concurrent writers: {0}")]
    Contention(String),
    #[error("a storage worker task stopped: {0}")]
    Worker(String),
}

/// A failure inside a write transaction that also decodes stored rows: diesel's own error (so
/// `?` and rollback work inside `transaction`) or a stored value that does not parse.
#[derive(Debug)]
pub enum TxError {
    Db(diesel::result::Error),
    Store(StoreError),
}

impl From<diesel::result::Error> for TxError {
    fn from(e: diesel::result::Error) -> Self {
        TxError::Db(e)
    }
}

impl From<TxError> for StoreError {
    fn from(e: TxError) -> Self {
        match e {
            TxError::Db(e) => StoreError::Query(e),
            TxError::Store(e) => e,
        }
    }
}

/// A pool of connections to one backend. Cheap to clone.
#[derive(Clone)]
pub enum Db {
    Postgres(Pool<AsyncPgConnection>),
    Sqlite(Pool<SqliteConn>),
}

/// One pooled connection, to either backend. Use it with [`with_conn!`](crate::with_conn).
// Short-lived and moved once into `with_conn!`; boxing would only add an allocation per query.
#[allow(clippy::large_enum_variant)]
pub enum Conn {
    Postgres(Object<AsyncPgConnection>),
    Sqlite(Object<SqliteConn>),
}

/// Runs `$body` with `$c: &mut impl AsyncConnection` bound to the connection inside `$conn`
/// (a [`Conn`]), whichever backend it is. The body is compiled once per backend, so a query
/// written once must be valid diesel for both.
#[macro_export]
macro_rules! with_conn {
    ($conn:expr, $c:ident => $body:expr) => {
        match $conn {
            $crate::store::Conn::Postgres(mut pooled) => {
                let $c = &mut *pooled;
                $body
            }
            $crate::store::Conn::Sqlite(mut pooled) => {
                let $c = &mut *pooled;
                $body
            }
        }
    };
}

impl Db {
    /// Opens a pool. Connects once right away, so a wrong URL fails at start, not at the first
    /// request.
    pub async fn connect(url: &DatabaseUrl) -> Result<Db, StoreError> {
        let db = match url {
            DatabaseUrl::Postgres(pg) => {
                let mut config = ManagerConfig::<AsyncPgConnection>::default();
                config.custom_setup = Box::new(|url| Box::pin(open_postgres(url.to_string())));
                let manager = AsyncDieselConnectionManager::<AsyncPgConnection>::new_with_config(
                    pg.clone(),
                    config,
                );
                let pool = Pool::builder(manager)
                    .max_size(POSTGRES_POOL_SIZE)
                    .runtime(deadpool::Runtime::Tokio1)
                    .wait_timeout(Some(POOL_TIMEOUT))
                    .create_timeout(Some(POOL_TIMEOUT))
                    .build()
                    .map_err(|e| StoreError::Pool(e.to_string()))?;
                Db::Postgres(pool)
            }
            DatabaseUrl::Sqlite(path) => {
                let mut config = ManagerConfig::<SqliteConn>::default();
                config.custom_setup = Box::new(|path| Box::pin(open_sqlite(path.to_string())));
                let manager =
                    AsyncDieselConnectionManager::<SqliteConn>::new_with_config(path, config);
                // One connection: SQLite has a single writer anyway, and a second pooled
                // connection that upgrades a read transaction to a write one can fail with
                // SQLITE_BUSY at once (busy_timeout does not cover that case).
                let pool = Pool::builder(manager)
                    .max_size(1)
                    .runtime(deadpool::Runtime::Tokio1)
                    .wait_timeout(Some(POOL_TIMEOUT))
                    .create_timeout(Some(POOL_TIMEOUT))
                    .build()
                    .map_err(|e| StoreError::Pool(e.to_string()))?;
                Db::Sqlite(pool)
            }
        };
        drop(db.conn().await.map_err(|e| StoreError::Connect {
            url: url.to_string(),
            message: e.to_string(),
        })?);
        Ok(db)
    }

    /// A connection from the pool.
    pub async fn conn(&self) -> Result<Conn, StoreError> {
        match self {
            Db::Postgres(pool) => pool
                .get()
                .await
                .map(Conn::Postgres)
                .map_err(|e| StoreError::Pool(e.to_string())),
            Db::Sqlite(pool) => pool
                .get()
                .await
                .map(Conn::Sqlite)
                .map_err(|e| StoreError::Pool(e.to_string())),
        }
    }

    /// Applies pending migrations and returns how many ran. Runs on the blocking pool, because
    /// diesel's migration harness is synchronous.
    pub async fn migrate(url: &DatabaseUrl) -> Result<usize, StoreError> {
        let url = url.clone();
        tokio::task::spawn_blocking(move || -> Result<usize, StoreError> {
            let migration_error =
                |e: Box<dyn std::error::Error + Send + Sync>| StoreError::Migration(e.to_string());
            match &url {
                DatabaseUrl::Postgres(pg) => {
                    type Wrapper = diesel_async::async_connection_wrapper::AsyncConnectionWrapper<
                        AsyncPgConnection,
                    >;
                    let mut conn = <Wrapper as Connection>::establish(pg).map_err(|e| {
                        StoreError::Connect {
                            url: url.to_string(),
                            message: e.to_string(),
                        }
                    })?;
                    conn.run_pending_migrations(POSTGRES_MIGRATIONS)
                        .map(|v| v.len())
                        .map_err(migration_error)
                }
                DatabaseUrl::Sqlite(path) => {
                    let mut conn =
                        SqliteConnection::establish(path).map_err(|e| StoreError::Connect {
                            url: url.to_string(),
                            message: e.to_string(),
                        })?;
                    conn.run_pending_migrations(SQLITE_MIGRATIONS)
                        .map(|v| v.len())
                        .map_err(migration_error)
                }
            }
        })
        .await
        .map_err(|e| StoreError::Migration(e.to_string()))?
    }
}

/// Opens a PostgreSQL connection that plans every statement for its own parameters.
///
/// diesel-async prepares each query once per connection, and after five runs PostgreSQL may
/// switch a prepared statement to a generic plan, kept until the table is next analyzed. Made
/// while a table is still nearly empty (a fresh deployment, a bench), that plan can be a
/// sequential scan: `BatchEnroll`'s duplicate check then read every enrollment for each batch
/// and fell from 3,400 to 700 enrollments/s as the table grew to 100,000. A custom plan costs
/// a fraction of a millisecond per statement, and nudge's statements are few and batched.
async fn open_postgres(url: String) -> diesel::ConnectionResult<AsyncPgConnection> {
    let mut conn = AsyncPgConnection::establish(&url).await?;
    conn.batch_execute("SET plan_cache_mode = force_custom_plan")
        .await
        .map_err(diesel::ConnectionError::CouldntSetupConfiguration)?;
    Ok(conn)
}

/// Opens an SQLite connection with the settings nudge relies on: WAL (readers never block the
/// writer), a busy timeout (a writer waits instead of failing), and enforced foreign keys.
async fn open_sqlite(path: String) -> diesel::ConnectionResult<SqliteConn> {
    let mut conn = SqliteConn::establish(&path).await?;
    conn.batch_execute(&format!(
        "PRAGMA journal_mode = WAL; PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}; \
         PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL;"
    ))
    .await
    .map_err(diesel::ConnectionError::CouldntSetupConfiguration)?;
    Ok(conn)
}

/// A new id with a readable prefix, e.g. `en_019ad5…`: 16 bytes, hex, laid out like a UUIDv7
/// — 6 bytes of milliseconds since the epoch, then 10 random bytes.
///
/// Time first, so ids made together sort together: a batch's enrollments, journey rows and
/// dispatches land on the right edge of their B-tree indexes instead of on random pages, which
/// on a table larger than the database's cache is the difference between a cache hit and a disk
/// read per row (and per foreign-key check). 80 random bits keep ids made in the same
/// millisecond apart. The wall clock is fine here: an id's order is never a timing decision.
pub fn new_id(prefix: &str) -> String {
    use rand::RngCore;
    let mut bytes = [0u8; 16];
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or_default();
    bytes[..6].copy_from_slice(&millis.to_be_bytes()[2..]);
    rand::rngs::OsRng.fill_bytes(&mut bytes[6..]);
    format!("{prefix}_{}", hex::encode(bytes))
}
