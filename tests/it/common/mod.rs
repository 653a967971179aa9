//! Test harness: `spawn_app` starts the real server (built through the library) on
//! `127.0.0.1:0` against a fresh database, and hands back its address, a full-account token and
//! a shutdown handle.
//!
//! Backends: SQLite in a temp dir always; PostgreSQL when a test asks for it, using the server
//! at `NUDGE_TEST_DATABASE_URL` (each test gets its own database, a clone of a template migrated
//! once per run, and drops it afterwards: see [`pg`]). A PostgreSQL test without that variable
//! fails loudly instead of passing.

#![allow(dead_code)]

pub mod browser;
pub mod http;
pub mod pg;
pub mod process;
pub mod reflection;
pub mod round_trips;

pub use pg::PgDatabase;

use chrono::{DateTime, Utc};
use nudge::api::AppState;
use nudge::app::App;
use nudge::auth::{self, Scope};
use nudge::clock::{to_millis, Clock, ManualClock};
use nudge::config::{ClockKind, Config, DatabaseUrl};
use nudge::proto::v1::contact_service_client::ContactServiceClient;
use nudge::proto::v1::flow_service_client::FlowServiceClient;
use nudge::proto::v1::sender_service_client::SenderServiceClient;
use nudge::store::accounts::DEFAULT_ACCOUNT_ID;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::sync::oneshot;
use tonic::transport::Channel;

/// Which database a test runs against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// A running server.
pub struct TestApp {
    pub addr: SocketAddr,
    /// A full-account token.
    pub token: String,
    pub state: AppState,
    pub clock: Arc<ManualClock>,
    pub database_url: DatabaseUrl,
    shutdown: Option<oneshot::Sender<()>>,
    server: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
    _dir: tempfile::TempDir,
    pg: Option<PgDatabase>,
}

/// The instant every test's manual clock starts at.
pub fn start_instant() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-12-04T20:00:00Z")
        .unwrap()
        .with_timezone(&Utc)
}

pub async fn spawn_app(backend: Backend) -> TestApp {
    spawn_app_with(backend, |_| {}).await
}

/// [`spawn_app`] with its [`Config`] changed first (short timeouts, a connection cap).
pub async fn spawn_app_with(backend: Backend, configure: impl FnOnce(&mut Config)) -> TestApp {
    if std::env::var_os("NUDGE_TEST_LOG").is_some() {
        let _ = nudge::telemetry::init(nudge::config::LogFormat::Human, None);
    }
    let (database_url, dir, pg) = fresh_database(backend).await;
    spawn_app_configured(database_url, dir, pg, configure).await
}

/// A fresh database of the given backend, for tests that prepare it before a server starts:
/// on PostgreSQL a clone of the migrated template, on SQLite a new file (migrated by the first
/// `Db::migrate` or app start; that costs next to nothing). Keep the returned guards alive for
/// as long as the database is used.
pub async fn fresh_database(
    backend: Backend,
) -> (DatabaseUrl, tempfile::TempDir, Option<PgDatabase>) {
    match backend {
        Backend::Sqlite => sqlite_database(),
        Backend::Postgres => postgres_database(PgDatabase::create().await),
    }
}

/// A database without any schema, on either backend: for tests of migrating itself
/// (`nudge migrate`, the CLI's first start on a new database).
pub async fn empty_database(
    backend: Backend,
) -> (DatabaseUrl, tempfile::TempDir, Option<PgDatabase>) {
    match backend {
        Backend::Sqlite => sqlite_database(),
        Backend::Postgres => postgres_database(PgDatabase::create_empty().await),
    }
}

fn sqlite_database() -> (DatabaseUrl, tempfile::TempDir, Option<PgDatabase>) {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = DatabaseUrl::Sqlite(dir.path().join("nudge.db").to_string_lossy().into_owned());
    (url, dir, None)
}

fn postgres_database(pg: PgDatabase) -> (DatabaseUrl, tempfile::TempDir, Option<PgDatabase>) {
    let dir = tempfile::tempdir().expect("temp dir");
    (DatabaseUrl::Postgres(pg.url.clone()), dir, Some(pg))
}

/// Starts the server on an existing database (see [`fresh_database`]).
pub async fn spawn_app_on(
    database_url: DatabaseUrl,
    dir: tempfile::TempDir,
    pg: Option<PgDatabase>,
) -> TestApp {
    spawn_app_configured(database_url, dir, pg, |_| {}).await
}

async fn spawn_app_configured(
    database_url: DatabaseUrl,
    dir: tempfile::TempDir,
    pg: Option<PgDatabase>,
    configure: impl FnOnce(&mut Config),
) -> TestApp {
    let mut config = Config::new(
        "127.0.0.1:0".parse().unwrap(),
        database_url.clone(),
        ClockKind::Manual,
    );
    config.announce_first_token = false;
    configure(&mut config);
    let clock = Arc::new(ManualClock::new(start_instant()));
    let app = App::build_with_clock(config, clock.clone())
        .await
        .expect("the app builds");
    let addr = app.local_addr().unwrap();
    let state = app.state().clone();
    let token = auth::create_token(
        &state.core.db,
        DEFAULT_ACCOUNT_ID,
        &Scope::Full,
        to_millis(clock.now()),
    )
    .await
    .expect("a token");
    let (tx, rx) = oneshot::channel();
    let server = tokio::spawn(app.run(async {
        let _ = rx.await;
    }));
    TestApp {
        addr,
        token,
        state,
        clock,
        database_url,
        shutdown: Some(tx),
        server: Some(server),
        _dir: dir,
        pg,
    }
}

impl TestApp {
    pub async fn channel(&self) -> Channel {
        Channel::from_shared(format!("http://{}", self.addr))
            .unwrap()
            .connect()
            .await
            .expect("connect to the test server")
    }

    pub async fn contacts(&self) -> ContactServiceClient<Channel> {
        ContactServiceClient::new(self.channel().await)
    }

    pub async fn senders(&self) -> SenderServiceClient<Channel> {
        SenderServiceClient::new(self.channel().await)
    }

    pub async fn flows(&self) -> FlowServiceClient<Channel> {
        FlowServiceClient::new(self.channel().await)
    }

    /// The journey of enrollment `id` as `GetJourney` answers it (its first page).
    pub async fn journey(&self, id: &str) -> Vec<nudge::proto::v1::JourneyEntry> {
        use nudge::proto::v1::enrollment_service_client::EnrollmentServiceClient;
        EnrollmentServiceClient::new(self.channel().await)
            .get_journey(self.authed(nudge::proto::v1::GetJourneyRequest {
                enrollment_id: id.into(),
                page: None,
            }))
            .await
            .unwrap()
            .into_inner()
            .entries
    }

    /// A request carrying this app's full token.
    pub fn authed<T>(&self, message: T) -> tonic::Request<T> {
        with_token(message, &self.token)
    }

    /// Another token for the default account.
    pub async fn token(&self, scope: Scope) -> String {
        auth::create_token(
            &self.state.core.db,
            DEFAULT_ACCOUNT_ID,
            &scope,
            to_millis(self.clock.now()),
        )
        .await
        .unwrap()
    }

    /// Stops the server gracefully and waits for it.
    pub async fn stop(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(server) = self.server.take() {
            server.await.unwrap().unwrap();
        }
    }
}

/// A journey entry's `detail` (a `google.protobuf.Struct`) as JSON, to compare with `json!`.
pub fn detail_json(entry: &nudge::proto::v1::JourneyEntry) -> serde_json::Value {
    let detail = entry
        .detail
        .clone()
        .expect("every journey entry has a detail");
    serde_json::Value::Object(
        nudge::api::grpc::convert::struct_to_json("detail", detail).expect("a JSON object"),
    )
}

pub fn with_token<T>(message: T, token: &str) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    request
        .metadata_mut()
        .insert("authorization", format!("Bearer {token}").parse().unwrap());
    request
}

/// Generates each listed test twice: `sqlite::NAME` (runs by default) and `postgres::NAME`
/// (ignored by default, with the reason; `.ci/run` runs them with `--ignored` and
/// `NUDGE_TEST_DATABASE_URL` set). Each test is an `async fn NAME(backend: Backend)`.
macro_rules! backend_tests {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name($crate::common::Backend::Sqlite).await
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                #[ignore = "needs PostgreSQL: set NUDGE_TEST_DATABASE_URL and run with --ignored (bash .ci/run does)"]
                async fn $name() {
                    super::$name($crate::common::Backend::Postgres).await
                }
            )*
        }
    };
}
