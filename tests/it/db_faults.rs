//! Network faults between nudge and PostgreSQL: a fault-injecting TCP proxy on
//! 127.0.0.1 ([`FaultProxy`]) that resets every connection mid-transaction, stalls the link
//! (bytes accepted, nothing forwarded) for 30 s, or adds 50 ms to each packet. Under each,
//! with the load of [`crate::pg_load`] running: nothing answered OK is lost, nothing runs
//! twice, every call ends within its deadline, and the pool works again when the fault ends;
//! a stalled connection is given up by nudge (its answer deadline), not waited on forever.
//!
//! Then PostgreSQL refusing writes (`default_transaction_read_only`): UNAVAILABLE naming the
//! database's refusal, health NOT_SERVING, nothing stored lost, and back by itself.

use crate::common::pg::PgDatabase;
use crate::pg_load::{Load, Served, DEADLINE};
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

mod postgres {
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    #[ignore = "needs PostgreSQL: set NUDGE_TEST_DATABASE_URL and run with --ignored (bash .ci/run does)"]
    async fn connections_reset_mid_transaction() {
        super::reset().await
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    #[ignore = "needs PostgreSQL: set NUDGE_TEST_DATABASE_URL and run with --ignored (bash .ci/run does)"]
    async fn a_link_stalled_for_30_seconds() {
        super::stall().await
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    #[ignore = "needs PostgreSQL: set NUDGE_TEST_DATABASE_URL and run with --ignored (bash .ci/run does)"]
    async fn fifty_milliseconds_on_every_packet() {
        super::latency().await
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    #[ignore = "needs PostgreSQL: set NUDGE_TEST_DATABASE_URL and run with --ignored (bash .ci/run does)"]
    async fn backends_terminated_under_load() {
        super::terminated().await
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    #[ignore = "needs PostgreSQL: set NUDGE_TEST_DATABASE_URL and run with --ignored (bash .ci/run does)"]
    async fn a_database_that_refuses_writes() {
        super::read_only().await
    }
}

/// How long the link stalls (30 s).
const STALL_FOR: Duration = Duration::from_secs(30);

/// What the proxy does to the bytes.
const PASS: u8 = 0;
const STALL: u8 = 1;
const LATENCY: u8 = 2;

/// A TCP proxy in front of PostgreSQL that can reset every open link (RST, as a crashed
/// middlebox does), stall them (read and hold, forward nothing), or delay every chunk.
struct FaultProxy {
    port: u16,
    mode: Arc<AtomicU8>,
    /// Bumped to reset every link open now.
    reset: watch::Sender<u64>,
    /// Links nudge closed while the proxy stalled them: connections it gave up.
    given_up: Arc<AtomicU64>,
    accept: tokio::task::JoinHandle<()>,
    latency: Duration,
}

impl FaultProxy {
    async fn start(upstream: String, latency: Duration) -> FaultProxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let mode = Arc::new(AtomicU8::new(PASS));
        let given_up = Arc::new(AtomicU64::new(0));
        let (reset, resets) = watch::channel(0u64);
        let accept = tokio::spawn({
            let (mode, given_up) = (mode.clone(), given_up.clone());
            async move {
                while let Ok((client, _)) = listener.accept().await {
                    let Ok(server) = TcpStream::connect(&upstream).await else {
                        continue;
                    };
                    let _ = client.set_nodelay(true);
                    let _ = server.set_nodelay(true);
                    tokio::spawn(link(
                        client,
                        server,
                        mode.clone(),
                        resets.clone(),
                        given_up.clone(),
                        latency,
                    ));
                }
            }
        });
        FaultProxy {
            port,
            mode,
            reset,
            given_up,
            accept,
            latency,
        }
    }

    fn set(&self, mode: u8) {
        self.mode.store(mode, Ordering::SeqCst);
    }

    fn reset_all(&self) {
        self.reset.send_modify(|n| *n += 1);
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.accept.abort();
        let _ = self.latency;
    }
}

/// One proxied connection, both directions in one task so a reset closes both at once.
async fn link(
    client: TcpStream,
    server: TcpStream,
    mode: Arc<AtomicU8>,
    mut resets: watch::Receiver<u64>,
    given_up: Arc<AtomicU64>,
    latency: Duration,
) {
    resets.borrow_and_update();
    let (mut cr, mut cw) = client.into_split();
    let (mut sr, mut sw) = server.into_split();
    let mut up = vec![0u8; 64 * 1024];
    let mut down = vec![0u8; 64 * 1024];
    // Bytes read while stalled, forwarded when the stall ends.
    let mut held_up: Vec<u8> = Vec::new();
    let mut held_down: Vec<u8> = Vec::new();
    loop {
        let stalled = mode.load(Ordering::SeqCst) == STALL;
        if !stalled {
            if !held_up.is_empty() && sw.write_all(&std::mem::take(&mut held_up)).await.is_err() {
                return;
            }
            if !held_down.is_empty() && cw.write_all(&std::mem::take(&mut held_down)).await.is_err()
            {
                return;
            }
        }
        enum Event {
            Reset,
            Up(std::io::Result<usize>),
            Down(std::io::Result<usize>),
            Tick,
        }
        let event = tokio::select! {
            _ = resets.changed() => Event::Reset,
            n = cr.read(&mut up) => Event::Up(n),
            n = sr.read(&mut down) => Event::Down(n),
            // Wakes a stalled link now and then, to forward what it held once the stall ends.
            _ = tokio::time::sleep(Duration::from_millis(100)), if stalled => Event::Tick,
        };
        match event {
            Event::Reset => {
                // RST both ways: linger 0, then drop.
                if let (Ok(c), Ok(s)) = (cr.reunite(cw), sr.reunite(sw)) {
                    // Non-blocking sockets: a zero linger does not block the drop.
                    let _ = socket2::SockRef::from(&c).set_linger(Some(Duration::ZERO));
                    let _ = socket2::SockRef::from(&s).set_linger(Some(Duration::ZERO));
                }
                return;
            }
            Event::Up(Ok(0) | Err(_)) => {
                if stalled {
                    given_up.fetch_add(1, Ordering::SeqCst);
                }
                return;
            }
            Event::Down(Ok(0) | Err(_)) => return,
            Event::Up(Ok(n)) => match mode.load(Ordering::SeqCst) {
                STALL => held_up.extend_from_slice(&up[..n]),
                m => {
                    if m == LATENCY {
                        tokio::time::sleep(latency).await;
                    }
                    if sw.write_all(&up[..n]).await.is_err() {
                        return;
                    }
                }
            },
            Event::Down(Ok(n)) => match mode.load(Ordering::SeqCst) {
                STALL => held_down.extend_from_slice(&down[..n]),
                m => {
                    if m == LATENCY {
                        tokio::time::sleep(latency).await;
                    }
                    if cw.write_all(&down[..n]).await.is_err() {
                        return;
                    }
                }
            },
            Event::Tick => {}
        }
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

/// A fresh database behind a proxy, nudge on the proxy (short answer deadline), load running.
async fn behind_proxy(latency: Duration) -> (PgDatabase, FaultProxy, Served, Load) {
    let pg = PgDatabase::create().await;
    let (_, upstream) = through(&pg.url, 0);
    let proxy = FaultProxy::start(upstream, latency).await;
    let (url, _) = through(&pg.url, proxy.port);
    let served = Served::start(&url, |c| {
        c.database.postgres.statement = Duration::from_secs(3);
        c.database.postgres.answer = Duration::from_secs(4);
        c.database.postgres.connect = Duration::from_secs(2);
    })
    .await;
    let load = Load::start(&served);
    (pg, proxy, served, load)
}

async fn reset() {
    let (pg, proxy, served, load) = behind_proxy(Duration::ZERO).await;
    load.wait_running().await;
    // Reset every connection five times, each once the service works again: some resets cut
    // a transaction in the middle.
    let mut back = Duration::ZERO;
    for _ in 0..5 {
        proxy.reset_all();
        back = load.wait_working(Duration::from_secs(10)).await;
    }
    load.wait_running_more().await;
    let record = load.finish().await;
    eprintln!(
        "reset: working again {:.1} s after the last reset; {} gRPC and {} webhook calls \
         refused, {} enrollments OK",
        back.as_secs_f64(),
        record.failures.len(),
        record.http_failures.len(),
        record.enrolled.len()
    );
    record.check_failures(&[tonic::Code::Unavailable, tonic::Code::Aborted]);
    record.verify(&pg.url).await;
    served.stop().await;
}

async fn stall() {
    let (pg, proxy, served, load) = behind_proxy(Duration::ZERO).await;
    load.wait_running().await;
    let stalled = Instant::now();
    proxy.set(STALL);
    // The fault is a 30 s stall: its length is what is tested (longer than every
    // deadline and timeout), so it is waited out, not a condition.
    tokio::time::sleep(STALL_FOR).await;
    proxy.set(PASS);
    let ended = Instant::now();
    let back = load.wait_working(Duration::from_secs(15)).await;
    load.wait_running_more().await;
    let given_up = proxy.given_up.load(Ordering::SeqCst);
    let record = load.finish().await;
    eprintln!(
        "stall: {given_up} stalled connections given up by nudge; working again {:.1} s after \
         the stall ended; {} gRPC and {} webhook calls refused",
        back.as_secs_f64(),
        record.failures.len(),
        record.http_failures.len()
    );
    assert!(
        given_up > 0,
        "nudge waited on stalled connections instead of giving them up"
    );
    assert!(
        record
            .health
            .iter()
            .any(|(at, s)| *at > stalled && *at < ended && !*s),
        "health stayed SERVING through a 30 s stall"
    );
    // Within their deadlines: refused as unavailable, or cut at the deadline by the client.
    record.check_failures(&[tonic::Code::Unavailable, tonic::Code::DeadlineExceeded]);
    record.verify(&pg.url).await;
    served.stop().await;
}

async fn latency() {
    let (pg, proxy, served, load) = behind_proxy(Duration::from_millis(50)).await;
    let before = load.counts();
    proxy.set(LATENCY);
    // Slow, but everything goes through: enrollments, signals and acks under the latency.
    let took = load
        .wait_until("work through the latency", Duration::from_secs(60), |r| {
            r.enrolled.len() >= before.0 + 10
                && r.signals.len() >= before.1 + 2
                && r.acked.len() > before.2
        })
        .await;
    proxy.set(PASS);
    load.wait_working(Duration::from_secs(10)).await;
    let record = load.finish().await;
    eprintln!(
        "latency: with 50 ms a packet, 10 enrollments, 2 signals and an ack took {:.1} s; {} \
         calls refused",
        took.as_secs_f64(),
        record.failures.len() + record.http_failures.len()
    );
    record.check_failures(&[]);
    record.verify(&pg.url).await;
    served.stop().await;
}

async fn read_only() {
    let pg = PgDatabase::create().await;
    let served = Served::start(&pg.url, |_| {}).await;
    let load = Load::start(&served);
    load.wait_running().await;
    let name = pg.url.rsplit('/').next().unwrap().to_string();
    let admin = crate::pg_cluster::connect(&pg.url).await;
    let terminate = format!(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE datname = '{name}' AND pid <> pg_backend_pid()"
    );
    admin
        .batch_execute(&format!(
            "ALTER DATABASE \"{name}\" SET default_transaction_read_only = on"
        ))
        .await
        .unwrap();
    // Sessions read the setting when they start: end the ones open now.
    admin.batch_execute(&terminate).await.unwrap();
    let refused_at = Instant::now();
    load.wait_health(refused_at, false, Duration::from_secs(15))
        .await;
    // A write now: UNAVAILABLE, saying the database refuses writes.
    let mut client =
        nudge::proto::v1::contact_service_client::ContactServiceClient::new(served.channel.clone());
    let mut r = tonic::Request::new(nudge::proto::v1::UpsertContactRequest {
        contact: Some(nudge::proto::v1::Contact {
            id: "late".into(),
            email: "late@example.com".into(),
            ..Default::default()
        }),
    });
    r.metadata_mut().insert(
        "authorization",
        format!("Bearer {}", served.token).parse().unwrap(),
    );
    r.set_timeout(DEADLINE);
    let e = client.upsert_contact(r).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::Unavailable, "{e:?}");
    assert!(
        e.message().contains("the database refuses writes"),
        "{}",
        e.message()
    );
    assert!(e.message().contains("read-only"), "{}", e.message());
    // Writes allowed again: back by itself.
    admin
        .batch_execute(&format!(
            "ALTER DATABASE \"{name}\" SET default_transaction_read_only = off"
        ))
        .await
        .unwrap();
    admin.batch_execute(&terminate).await.unwrap();
    let allowed = Instant::now();
    let back = load.wait_working(Duration::from_secs(15)).await;
    load.wait_health(allowed, true, Duration::from_secs(15))
        .await;
    let record = load.finish().await;
    eprintln!(
        "read-only: working again {:.1} s after writes were allowed; {} calls refused",
        back.as_secs_f64(),
        record.failures.len() + record.http_failures.len()
    );
    record.check_failures(&[tonic::Code::Unavailable]);
    record.verify(&pg.url).await;
    served.stop().await;
}

/// `pg_terminate_backend` on every nudge connection, ten times under load: each call that
/// lost its connection answers UNAVAILABLE (it answered INTERNAL for "terminating connection
/// due to administrator command"), and nothing answered OK is lost.
async fn terminated() {
    let pg = PgDatabase::create().await;
    let served = Served::start(&pg.url, |_| {}).await;
    let load = Load::start(&served);
    load.wait_running().await;
    let name = pg.url.rsplit('/').next().unwrap().to_string();
    let admin = crate::pg_cluster::connect(&pg.url).await;
    let mut terminated = 0i64;
    for _ in 0..10 {
        let rows = admin
            .query(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                 WHERE datname = $1 AND pid <> pg_backend_pid()",
                &[&name],
            )
            .await
            .unwrap();
        terminated += rows.len() as i64;
        // Each time once the service works again on new connections.
        load.wait_working(Duration::from_secs(10)).await;
    }
    let record = load.finish().await;
    eprintln!(
        "terminated: {terminated} backends; {} gRPC and {} webhook calls refused",
        record.failures.len(),
        record.http_failures.len()
    );
    assert!(terminated > 0);
    record.check_failures(&[tonic::Code::Unavailable]);
    record.verify(&pg.url).await;
    served.stop().await;
}
