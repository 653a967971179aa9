//! docs/service.md, "Errors", a database that cannot be reached: calls answer `UNAVAILABLE` (retryable), gRPC
//! health answers `NOT_SERVING` until the database answers again, and a start against a server
//! that accepts TCP but never answers fails after the connect timeout, naming the host.
//!
//! PostgreSQL only: SQLite is a file in this process, so "unreachable" narrows to a file that
//! cannot be opened (a start fails at once, naming the path) or a lock held past the busy
//! timeout (`ABORTED`, see `store`); there is no connection to lose.

use crate::common::{fresh_database, start_instant, Backend};
use nudge::app::App;
use nudge::clock::ManualClock;
use nudge::config::{ClockKind, Config, DatabaseUrl};
use nudge::proto::v1::contact_service_client::ContactServiceClient;
use nudge::proto::v1::GetContactRequest;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;
use tonic::transport::Channel;
use tonic::Code;
use tonic_health::pb::{health_client::HealthClient, HealthCheckRequest};

/// A TCP proxy in front of PostgreSQL that the test can cut (every open connection closed,
/// new ones closed at once) and restore.
struct Proxy {
    port: u16,
    cut: Arc<AtomicBool>,
    links: Arc<Mutex<Vec<JoinHandle<()>>>>,
    accept: JoinHandle<()>,
}

impl Proxy {
    async fn start(upstream: String) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let cut = Arc::new(AtomicBool::new(false));
        let links: Arc<Mutex<Vec<JoinHandle<()>>>> = Arc::default();
        let accept = tokio::spawn({
            let (cut, links) = (cut.clone(), links.clone());
            async move {
                loop {
                    let Ok((mut client, _)) = listener.accept().await else {
                        return;
                    };
                    if cut.load(Ordering::SeqCst) {
                        continue; // dropped: closed at once
                    }
                    let upstream = upstream.clone();
                    links.lock().unwrap().push(tokio::spawn(async move {
                        if let Ok(mut server) = TcpStream::connect(&upstream).await {
                            let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                        }
                    }));
                }
            }
        });
        Proxy {
            port,
            cut,
            links,
            accept,
        }
    }

    fn cut(&self) {
        self.cut.store(true, Ordering::SeqCst);
        for link in self.links.lock().unwrap().drain(..) {
            link.abort();
        }
    }

    fn restore(&self) {
        self.cut.store(false, Ordering::SeqCst);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.cut();
        self.accept.abort();
    }
}

/// `url` with its `host:port` replaced by `127.0.0.1:port`, and the `host:port` it had.
fn through(url: &str, port: u16) -> (String, String) {
    let (scheme, rest) = url.split_once("://").unwrap();
    let (userinfo, rest) = rest.split_once('@').map_or(("", rest), |(u, r)| (u, r));
    let (host, path) = rest.split_once('/').unwrap();
    let at = if userinfo.is_empty() { "" } else { "@" };
    (
        format!("{scheme}://{userinfo}{at}127.0.0.1:{port}/{path}"),
        host.to_string(),
    )
}

fn config(url: DatabaseUrl) -> Config {
    let mut config = Config::new("127.0.0.1:0".parse().unwrap(), url, ClockKind::Manual);
    config.announce_first_token = false;
    config.health_probe_every = Duration::from_millis(100);
    config.database_connect_timeout = Duration::from_millis(500);
    config
}

async fn health(channel: &Channel) -> i32 {
    HealthClient::new(channel.clone())
        .check(HealthCheckRequest {
            service: "nudge.v1.ContactService".into(),
        })
        .await
        .unwrap()
        .into_inner()
        .status
}

/// Polls `health` until it is `want` (1 SERVING, 2 NOT_SERVING); a generous bound in real time,
/// since the probe runs on the runtime's timer, not on the test's manual clock.
async fn wait_for_health(channel: &Channel, want: i32) {
    for _ in 0..100 {
        if health(channel).await == want {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("health never became {want}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL: set NUDGE_TEST_DATABASE_URL and run with --ignored (bash .ci/run does)"]
async fn postgres_cut_is_unavailable_and_not_serving_until_restored() {
    let (url, _dir, pg) = fresh_database(Backend::Postgres).await;
    let DatabaseUrl::Postgres(direct) = url else {
        unreachable!()
    };
    let (_, upstream) = through(&direct, 0);
    let proxy = Proxy::start(upstream).await;
    let (proxied, _) = through(&direct, proxy.port);
    let clock = Arc::new(ManualClock::new(start_instant()));
    let app = App::build_with_clock(config(DatabaseUrl::Postgres(proxied)), clock)
        .await
        .unwrap();
    let addr = app.local_addr().unwrap();
    let db = app.state().core.db.clone();
    let token = nudge::auth::create_token(
        &db,
        nudge::store::accounts::DEFAULT_ACCOUNT_ID,
        &nudge::auth::Scope::Full,
        0,
    )
    .await
    .unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(app.run(async {
        let _ = stopped.await;
    }));
    let channel = Channel::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect()
        .await
        .unwrap();
    let get = || {
        let mut contacts = ContactServiceClient::new(channel.clone());
        let request = crate::common::with_token(
            GetContactRequest {
                id: "nobody".into(),
            },
            &token,
        );
        async move { contacts.get_contact(request).await }
    };
    assert_eq!(get().await.unwrap_err().code(), Code::NotFound);
    assert_eq!(health(&channel).await, 1, "SERVING");

    proxy.cut();
    let refused = get().await.unwrap_err();
    assert_eq!(refused.code(), Code::Unavailable, "{refused:?}");
    assert!(refused.message().contains("retry"), "{refused:?}");
    wait_for_health(&channel, 2).await;
    let refused = get().await.unwrap_err();
    assert_eq!(refused.code(), Code::Unavailable, "{refused:?}");

    proxy.restore();
    wait_for_health(&channel, 1).await;
    assert_eq!(get().await.unwrap_err().code(), Code::NotFound);

    let _ = stop.send(());
    server.await.unwrap().unwrap();
    drop(db);
    drop(pg);
}

/// A listener that accepts and never answers (no PostgreSQL needed): the start fails after the
/// configured timeout, naming the host, instead of hanging.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_that_never_answers_fails_the_start_after_the_timeout() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            open.push(socket);
        }
    });
    let url = DatabaseUrl::Postgres(format!("postgres://nudge@127.0.0.1:{port}/nudge"));
    let clock = Arc::new(ManualClock::new(start_instant()));
    let started = tokio::time::timeout(
        Duration::from_secs(20),
        App::build_with_clock(config(url), clock),
    )
    .await
    .expect("the start gives up by itself");
    let message = format!("{:#}", started.err().expect("the start fails"));
    assert!(message.contains(&format!("127.0.0.1:{port}")), "{message}");
    assert!(message.contains("no answer within 500ms"), "{message}");
    held.abort();
}
