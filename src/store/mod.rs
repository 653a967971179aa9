//! Storage: one diesel schema over SQLite (the embedded default) and PostgreSQL.
//!
//! A [`Db`] is a pool for one of the two backends. One-shot reads and writes are functions over
//! `&Db` in the file of their table; work that must commit together takes a [`Tx`]
//! ([`Db::begin`]), one transaction type over both backends whose small methods match on the
//! backend inside, so a workflow above is an ordinary `async fn` compiled once. Inside `store`,
//! `with_conn!` runs a query written once against whichever backend a connection holds. Everything is async: PostgreSQL through
//! `tokio-postgres`, SQLite through diesel-async's `SyncConnectionWrapper`, which moves each
//! query onto tokio's blocking pool.
//!
//! Adding a table: a migration in both `migrations/postgres/` and `migrations/sqlite/` (same
//! name), its `table!` in [`schema`], and a file here with its rows and queries.

/// Runs `$body` with `$c: &mut impl AsyncConnection` bound to the connection inside `$conn`
/// (an owned [`Conn`]), whichever backend it is. The body is compiled once per backend, so a
/// query written once must be valid diesel for both. Private to `store`: everything above
/// works with [`Db`] and [`Tx`].
macro_rules! with_conn {
    ($conn:expr, $c:ident => $body:expr) => {{
        let mut conn: $crate::store::Conn = $conn;
        on_conn!(&mut conn, $c => $body)
    }};
}

/// [`with_conn!`] over a borrowed `&mut Conn` (what a [`Tx`] holds).
macro_rules! on_conn {
    ($conn:expr, $c:ident => $body:expr) => {
        match $conn {
            $crate::store::Conn::Postgres(pooled) => {
                let $c = &mut **pooled;
                $body
            }
            $crate::store::Conn::Sqlite(pooled) => {
                let $c = &mut **pooled;
                $body
            }
        }
    };
}

pub mod accounts;
pub mod capacity;
pub mod clock;
pub mod contacts;
pub mod dispatches;
pub mod enrollment_migrations;
pub mod enrollments;
mod error;
pub mod fetches;
pub mod flow_stats;
pub mod flows;
pub mod journey;
pub mod link_secret;
pub mod pg_array;
pub mod pg_batch;
pub mod pg_connect;
pub mod provider_secrets;
pub mod schema;
pub mod senders;
pub mod signals;
pub mod sqlite_batch;
pub mod state_encoding;
pub mod tasks;
pub mod tokens;
mod tx;
pub mod values;
pub mod variant_states;
pub mod watch;

pub use enrollments::{Committed, EnrollmentRow, Writes, LIVE};
pub use error::{classify, ErrorClass, StoreError};
pub use journey::{JourneyRow, JourneyStep};
pub use tx::{conflict_backoff, Conflicted, Tx, BEGIN_PLANNED, CONFLICT_ATTEMPTS};
pub use values::{DispatchStatus, TaskStatus};

/// A hash map for what one batch looks up per step (enrollment, account and flow ids):
/// foldhash, seeded per process, where std's SipHash was several percent of a due step.
pub type FastMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

/// [`FastMap`]'s set.
pub type FastSet<K> = std::collections::HashSet<K, foldhash::fast::RandomState>;

/// Where the enrollment rows a transaction claimed are (PostgreSQL `ctid`), in claim
/// order: the write that updates them goes straight to each place instead of probing the
/// primary key for every row. A place is valid while the transaction holds the row's lock and
/// has not updated it, so [`Tx::write_all`] takes the places it writes and forgets them.
///
/// A list, not a map: a batch is written in the order it was claimed (but for capped senders,
/// stepped in priority order), so each row is found at the next position, one comparison; a
/// map cost 1,600 instructions a step (the id cloned, hashed three times, the table grown).
/// Rows are known by a hash of their id, not a copy: a place taken for another row's (a
/// collision) would still be refused, as the update compares the id too.
#[derive(Debug, Default)]
pub struct LockedRows(Vec<(u64, pg_array::Place)>);

impl LockedRows {
    fn key(id: &str) -> u64 {
        use std::hash::BuildHasher;
        foldhash::fast::FixedState::default().hash_one(id)
    }

    /// Records where enrollment `id` is, after the rows recorded before.
    pub(crate) fn push(&mut self, id: &str, place: pg_array::Place) {
        self.0.push((Self::key(id), place));
    }

    /// Room for `n` more rows.
    pub(crate) fn reserve(&mut self, n: usize) {
        self.0.reserve(n);
    }

    /// Where each of `ids` is, when this transaction claimed it.
    pub fn places<'b>(
        &self,
        ids: impl IntoIterator<Item = &'b str>,
    ) -> Vec<Option<pg_array::Place>> {
        let mut next = 0;
        let mut index: Option<FastMap<u64, pg_array::Place>> = None;
        ids.into_iter()
            .map(|id| {
                let key = Self::key(id);
                match self.0.get(next) {
                    Some(&(claimed, place)) if claimed == key => {
                        next += 1;
                        Some(place)
                    }
                    // Out of claim order (or not claimed): looked up.
                    _ => index
                        .get_or_insert_with(|| self.0.iter().copied().collect())
                        .get(&key)
                        .copied(),
                }
            })
            .collect()
    }
}

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
/// SQLite's migrations (same names as PostgreSQL's).
pub const SQLITE_MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations/sqlite");

/// The async SQLite connection: a synchronous diesel connection run on the blocking pool.
pub type SqliteConn = SyncConnectionWrapper<SqliteConnection>;

/// Any error a lower layer gives, kept whole so its source chain reaches the log.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// How long an SQLite writer waits for a lock before failing, in milliseconds.
const SQLITE_BUSY_TIMEOUT_MS: u32 = 5_000;
/// How long migrating SQLite waits for another process's migrations (or writes) to finish.
const SQLITE_MIGRATION_BUSY_TIMEOUT_MS: u32 = 120_000;
/// The PostgreSQL advisory lock replicas take around migrating ("nudge_mg" in ASCII): one
/// migrates, the others wait and then find nothing pending.
pub const MIGRATION_LOCK_KEY: i64 = 0x6e75_6467_655f_6d67;
/// How long connecting at start may take before it fails naming the host (docs/service.md, "Errors").
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// PostgreSQL pool size per replica.
const POSTGRES_POOL_SIZE: usize = 16;
/// How long a request waits for a pooled connection (or for a new one to open) before it fails
/// as unavailable, rather than hanging.
const POOL_TIMEOUT: Duration = Duration::from_secs(10);

/// How the pool opens its connections.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DbOptions {
    /// PostgreSQL's connect, statement, answer and keepalive timeouts.
    pub postgres: pg_connect::PgTimeouts,
    /// SQLite: the most pages the file may grow to (`PRAGMA max_page_count`); `None`: no cap
    /// but the disk's. Tests set it to fill the store as a full disk would.
    pub sqlite_max_pages: Option<u32>,
}

/// A pool's connections at one instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolStatus {
    /// Lent out to a query or a transaction.
    pub in_use: usize,
    /// Open and waiting in the pool.
    pub idle: usize,
    /// The most the pool opens.
    pub max: usize,
}

/// A pool of connections to one backend. Cheap to clone.
#[derive(Clone)]
pub enum Db {
    /// Production: several replicas may share it.
    Postgres(Pool<AsyncPgConnection>),
    /// The embedded default: one writer.
    Sqlite(Pool<SqliteConn>),
}

/// One pooled connection, to either backend.
// Short-lived and moved once into `with_conn!`; boxing would only add an allocation per query.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Conn {
    Postgres(Object<AsyncPgConnection>),
    Sqlite(Object<SqliteConn>),
}

impl Db {
    /// Opens a pool. Connects once right away, so a wrong URL fails at start, not at the first
    /// request; within [`DEFAULT_CONNECT_TIMEOUT`].
    pub async fn connect(url: &DatabaseUrl) -> Result<Db, StoreError> {
        Db::connect_within(url, DEFAULT_CONNECT_TIMEOUT).await
    }

    /// [`Db::connect`], failing when the first connection takes longer than `timeout` (a
    /// server that accepts TCP but never answers would otherwise hang the start).
    pub async fn connect_within(url: &DatabaseUrl, timeout: Duration) -> Result<Db, StoreError> {
        Db::connect_with(url, timeout, &DbOptions::default()).await
    }

    /// [`Db::connect_within`] with `options` (the server's configured timeouts).
    pub async fn connect_with(
        url: &DatabaseUrl,
        timeout: Duration,
        options: &DbOptions,
    ) -> Result<Db, StoreError> {
        let db = match url {
            DatabaseUrl::Postgres(pg) => {
                let mut config = ManagerConfig::<AsyncPgConnection>::default();
                // A connection goes back out without a test query (`SELECT 1`, a round trip
                // before every transaction: a tenth of a signal group's statements): one whose
                // server ended it, or whose transaction was left open, is dropped all the same
                // (`is_broken`), and a call that meets a connection lost since answers
                // UNAVAILABLE, which the client retries.
                config.recycling_method = diesel_async::pooled_connection::RecyclingMethod::Fast;
                let timeouts = options.postgres;
                config.custom_setup =
                    Box::new(move |url| Box::pin(open_postgres(url.to_string(), timeouts)));
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
                    .expect("a pool with a runtime and timeouts builds");
                Db::Postgres(pool)
            }
            DatabaseUrl::Sqlite(path) => {
                let mut config = ManagerConfig::<SqliteConn>::default();
                let max_pages = options.sqlite_max_pages;
                config.custom_setup =
                    Box::new(move |path| Box::pin(open_sqlite(path.to_string(), max_pages)));
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
                    .expect("a pool with a runtime and timeouts builds");
                Db::Sqlite(pool)
            }
        };
        drop(within(url, timeout, db.conn()).await?);
        Ok(db)
    }

    /// The pool's connections now (no query): the `nudge_db_connections` gauges.
    pub fn pool_status(&self) -> PoolStatus {
        let s = match self {
            Db::Postgres(pool) => pool.status(),
            Db::Sqlite(pool) => pool.status(),
        };
        PoolStatus {
            in_use: s.size.saturating_sub(s.available),
            idle: s.available,
            max: s.max_size,
        }
    }

    /// Whether the database answers now and takes writes (the health probe): `SELECT 1` on
    /// SQLite; on PostgreSQL a transaction that writes the `health_probe` row and commits, so a
    /// read-only session (a standby reached without `target_session_attrs=read-write`, or
    /// `default_transaction_read_only`: [`StoreError::Unwritable`]) fails it, and a primary
    /// whose commits hang (waiting for a synchronous standby that is gone) never finishes it.
    pub async fn ping(&self) -> Result<(), StoreError> {
        #[derive(diesel::QueryableByName)]
        struct ReadOnly {
            #[diesel(sql_type = diesel::sql_types::Text)]
            read_only: String,
        }
        match self.conn().await? {
            Conn::Postgres(mut c) => {
                use diesel_async::{AsyncConnection, RunQueryDsl};
                let read_only = c
                    .transaction(async |c| {
                        let row: ReadOnly = diesel::sql_query(
                            "SELECT current_setting('transaction_read_only') AS read_only",
                        )
                        .get_result(c)
                        .await?;
                        if row.read_only != "on" {
                            // A write makes the commit a real one: WAL, and the wait for a
                            // synchronous standby.
                            diesel::sql_query(
                                "UPDATE health_probe SET at = \
                                 (extract(epoch FROM clock_timestamp()) * 1000)::bigint \
                                 WHERE id = 1",
                            )
                            .execute(c)
                            .await?;
                        }
                        Ok::<_, diesel::result::Error>(row.read_only == "on")
                    })
                    .await?;
                if read_only {
                    return Err(StoreError::Unwritable(
                        "it is read-only (transaction_read_only is on)".into(),
                    ));
                }
            }
            Conn::Sqlite(mut c) => c.batch_execute("SELECT 1").await?,
        }
        Ok(())
    }

    /// A connection from the pool.
    pub(crate) async fn conn(&self) -> Result<Conn, StoreError> {
        Ok(match self {
            Db::Postgres(pool) => Conn::Postgres(pool.get().await?),
            Db::Sqlite(pool) => Conn::Sqlite(pool.get().await?),
        })
    }

    /// Starts a transaction on a pooled connection.
    pub async fn begin(&self) -> Result<Tx, StoreError> {
        Tx::begin(self.conn().await?).await
    }

    /// Starts a transaction whose statements are planned once per connection instead of on
    /// every run (PostgreSQL; SQLite plans cheaply and has nothing to set), in the same round
    /// trip as its `BEGIN`. For a transaction whose statements each find a few rows by index,
    /// such as a signal group: binding a custom plan for each run cost PostgreSQL more than
    /// running the statements.
    ///
    /// A plan kept across runs is made from the statistics of its first run, and on a young
    /// table those mislead (a contact found by number through the email index, every live
    /// enrollment read by a bitmap scan, until the next `ANALYZE`). So the kept plans may use
    /// only index scans and nested loops: sequential and bitmap scans, hash and merge joins
    /// are off for the rest of the transaction, and a statement of a few rows is served by
    /// the index that matches its columns whatever the statistics say (test
    /// `store::pg::postgres::a_kept_plan_finds_rows_by_their_index_on_a_young_table`). A
    /// statement added here must not need a partial index whose predicate names a bound value
    /// (`status = $1` against `WHERE status = 'pending'`): a plan made without the values
    /// cannot prove it. Every other transaction keeps `force_custom_plan`.
    pub async fn begin_planned(&self) -> Result<Tx, StoreError> {
        Tx::begin_planned(self.conn().await?).await
    }

    /// True on PostgreSQL, where several replicas may share the database.
    pub fn is_postgres(&self) -> bool {
        matches!(self, Db::Postgres(_))
    }

    /// PostgreSQL: `NOTIFY channel`, to wake other replicas. SQLite has one process: nothing.
    pub async fn notify(&self, channel: &str) -> Result<(), StoreError> {
        if let Db::Postgres(pool) = self {
            use diesel_async::RunQueryDsl;
            let mut c = pool.get().await?;
            diesel::sql_query(format!("NOTIFY {channel}"))
                .execute(&mut *c)
                .await?;
        }
        Ok(())
    }

    /// Applies pending migrations and returns how many ran; connecting within
    /// [`DEFAULT_CONNECT_TIMEOUT`].
    pub async fn migrate(url: &DatabaseUrl) -> Result<usize, StoreError> {
        Db::migrate_within(url, DEFAULT_CONNECT_TIMEOUT).await
    }

    /// Applies pending migrations under a lock, so replicas starting at once on a fresh
    /// database do not race (docs/service.md, "Errors"): PostgreSQL's advisory lock [`MIGRATION_LOCK_KEY`]
    /// (released when the connection closes, also if this process dies), SQLite's write lock
    /// (`BEGIN IMMEDIATE`, waited for with a busy timeout). Whoever comes second finds nothing
    /// pending. Runs on the blocking pool, because diesel's migration harness is synchronous.
    pub async fn migrate_within(url: &DatabaseUrl, timeout: Duration) -> Result<usize, StoreError> {
        match url {
            DatabaseUrl::Postgres(pg) => {
                let conn = within(url, timeout, async {
                    // Each host may take the whole start-up budget (a slow host, or a process
                    // under valgrind, answers its startup late).
                    let timeouts = pg_connect::PgTimeouts {
                        connect: timeout,
                        ..pg_connect::PgTimeouts::for_migrations()
                    };
                    pg_connect::connect(pg, &timeouts)
                        .await
                        .map_err(|e| StoreError::Connect {
                            url: url.to_string(),
                            source: Box::new(e),
                        })
                })
                .await?;
                tokio::task::spawn_blocking(move || migrate_postgres(conn)).await?
            }
            DatabaseUrl::Sqlite(path) => {
                let path = path.clone();
                let url = url.clone();
                tokio::task::spawn_blocking(move || {
                    let mut conn =
                        SqliteConnection::establish(&path).map_err(|e| StoreError::Connect {
                            url: url.to_string(),
                            source: Box::new(e),
                        })?;
                    migrate_sqlite(&mut conn)
                })
                .await?
            }
        }
    }
}

/// Runs PostgreSQL's pending migrations holding the advisory lock.
fn migrate_postgres(conn: AsyncPgConnection) -> Result<usize, StoreError> {
    use diesel::RunQueryDsl;
    type Wrapper =
        diesel_async::async_connection_wrapper::AsyncConnectionWrapper<AsyncPgConnection>;
    let mut conn = Wrapper::from(conn);
    diesel::sql_query(format!("SELECT pg_advisory_lock({MIGRATION_LOCK_KEY})"))
        .execute(&mut conn)?;
    let applied = conn
        .run_pending_migrations(POSTGRES_MIGRATIONS)
        .map(|v| v.len())
        .map_err(StoreError::Migration);
    // Closing the connection would release it too; unlocking lets the next replica go now.
    diesel::sql_query(format!("SELECT pg_advisory_unlock({MIGRATION_LOCK_KEY})"))
        .execute(&mut conn)?;
    applied
}

/// Runs SQLite's pending migrations inside one `BEGIN IMMEDIATE` transaction (each migration a
/// savepoint in it), so another process migrating the same file waits for the lock instead of
/// failing with "database is locked" or applying a migration twice.
fn migrate_sqlite(conn: &mut SqliteConnection) -> Result<usize, StoreError> {
    use diesel::connection::SimpleConnection;
    conn.batch_execute(&format!(
        "PRAGMA busy_timeout = {SQLITE_MIGRATION_BUSY_TIMEOUT_MS};"
    ))?;
    conn.immediate_transaction::<_, BoxError, _>(|c| {
        c.run_pending_migrations(SQLITE_MIGRATIONS).map(|v| v.len())
    })
    .map_err(|e| match e.downcast::<diesel::result::Error>() {
        Ok(e) => StoreError::from(*e),
        Err(e) => StoreError::Migration(e),
    })
}

/// `connect`, failing with [`StoreError::Connect`] after `timeout`, naming where it connected.
async fn within<T>(
    url: &DatabaseUrl,
    timeout: Duration,
    connect: impl std::future::Future<Output = Result<T, StoreError>>,
) -> Result<T, StoreError> {
    match tokio::time::timeout(timeout, connect).await {
        Ok(Ok(connected)) => Ok(connected),
        Ok(Err(StoreError::Connect { url, source })) => Err(StoreError::Connect { url, source }),
        Ok(Err(e)) => Err(StoreError::Connect {
            url: url.to_string(),
            source: Box::new(e),
        }),
        Err(_) => Err(StoreError::Connect {
            url: url.to_string(),
            source: format!(
                "no answer within {timeout:?} (is the host reachable and is it a database \
                 server?)"
            )
            .into(),
        }),
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
async fn open_postgres(
    url: String,
    timeouts: pg_connect::PgTimeouts,
) -> diesel::ConnectionResult<AsyncPgConnection> {
    // `plan_cache_mode = force_custom_plan` is set there, with the timeouts.
    pg_connect::connect(&url, &timeouts).await
}

/// Opens an SQLite connection with the settings nudge relies on: WAL (readers never block the
/// writer), a busy timeout (a writer waits instead of failing), and enforced foreign keys.
async fn open_sqlite(path: String, max_pages: Option<u32>) -> diesel::ConnectionResult<SqliteConn> {
    // Opening and switching to WAL can meet a lock another process holds (a replica starting at
    // the same time) and answer SQLITE_BUSY without consulting the busy timeout: wait for the
    // lock (up to about 5 s) instead of failing, as migrating does.
    let mut attempt = 0;
    loop {
        match open_sqlite_once(&path, max_pages).await {
            Err(e) if attempt < 50 && e.to_string().contains("database is locked") => {
                attempt += 1;
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
            opened => return opened,
        }
    }
}

async fn open_sqlite_once(
    path: &str,
    max_pages: Option<u32>,
) -> diesel::ConnectionResult<SqliteConn> {
    let mut conn = SqliteConn::establish(path).await?;
    // The busy timeout first: switching to WAL takes a lock another process may hold (a
    // replica starting at the same time), and waits for it only with a timeout set.
    conn.batch_execute(&format!(
        "PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}; PRAGMA journal_mode = WAL; \
         PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL;"
    ))
    .await
    .map_err(diesel::ConnectionError::CouldntSetupConfiguration)?;
    if let Some(pages) = max_pages {
        conn.batch_execute(&format!("PRAGMA max_page_count = {pages}"))
            .await
            .map_err(diesel::ConnectionError::CouldntSetupConfiguration)?;
    }
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
    // The thread's CSPRNG (seeded from the OS): unguessable like the OS's own bytes, without
    // a system call per id.
    rand::thread_rng().fill_bytes(&mut bytes[6..]);
    // Spelled by hand: `format!` and `hex::encode` (a `char` at a time) cost more than the
    // random bytes, once per dispatch and task.
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut digits = [0u8; 32];
    for (pair, b) in digits.chunks_exact_mut(2).zip(bytes) {
        pair[0] = HEX[usize::from(b >> 4)];
        pair[1] = HEX[usize::from(b & 0xf)];
    }
    let mut id = String::with_capacity(prefix.len() + 1 + digits.len());
    id.push_str(prefix);
    id.push('_');
    id.push_str(std::str::from_utf8(&digits).expect("hex digits"));
    id
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_id_is_its_prefix_and_32_hex_digits_time_first() {
        let before = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64;
        let id = super::new_id("dp");
        let digits = id.strip_prefix("dp_").expect("the prefix");
        assert_eq!(digits.len(), 32);
        assert!(digits
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));
        let millis = u64::from_str_radix(&digits[..12], 16).unwrap();
        assert!(millis >= before && millis < before + 60_000);
    }
}

#[cfg(test)]
mod locked_rows_tests {
    use super::pg_array::Place;
    use super::LockedRows;

    fn at(block: u32) -> Place {
        Place { block, item: 1 }
    }

    /// Rows written in claim order, out of it (a capped sender's priority order), and rows the
    /// transaction did not claim (found by id instead).
    #[test]
    fn each_claimed_row_has_its_place_in_any_order() {
        let mut locked = LockedRows::default();
        for (i, id) in ["en_a", "en_b", "en_c"].into_iter().enumerate() {
            locked.push(id, at(i as u32));
        }
        let cases: [(&[&str], Vec<Option<Place>>); 4] = [
            (
                &["en_a", "en_b", "en_c"],
                vec![Some(at(0)), Some(at(1)), Some(at(2))],
            ),
            (
                &["en_c", "en_a", "en_b"],
                vec![Some(at(2)), Some(at(0)), Some(at(1))],
            ),
            (
                &["en_a", "en_x", "en_b"],
                vec![Some(at(0)), None, Some(at(1))],
            ),
            (&[], vec![]),
        ];
        for (ids, expected) in cases {
            assert_eq!(locked.places(ids.iter().copied()), expected, "{ids:?}");
        }
        assert_eq!(LockedRows::default().places(["en_a"]), vec![None]);
    }
}
