//! Inbound signals per second through the HTTP webhook (`POST /webhooks/sms/twilio`, signed),
//! with many active enrollments waiting in a `wait_for` (docs/signals.md, "Throughput").
//!
//! ```sh
//! NUDGE_BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test cargo bench --bench signals
//! ```
//!
//! It creates a fresh PostgreSQL database (dropped at the end), enrolls
//! `NUDGE_BENCH_ENROLLMENTS` contacts (default 100,000; each has its own phone number) in a
//! flow that waits for a reply, serves nudge on a local port, and sends
//! `NUDGE_BENCH_SIGNALS` (default 20,000) inbound SMS from `NUDGE_BENCH_CONCURRENCY` (default
//! 32) keep-alive connections, each to a different contact, so every signal wakes one
//! enrollment (one transaction with its journey entries). It prints signals per second, the
//! latency percentiles of the webhook and the CPU a signal of the server and of the load
//! generator (a thread of its own), and checks every request was answered 200. Then it sends
//! the same requests to a bare handler that only checks their signature (the edge's floor: what
//! no routing can go under on this machine) and prints the same figures for it.

/// The allocator `nudge serve` runs with (feature `jemalloc`, on by default; its settings in
/// `.cargo/config.toml`), so the server is measured as it ships: on the system's malloc,
/// allocating and freeing were a fifth of the server's CPU here.
#[cfg(feature = "jemalloc")]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

use nudge::api::AppState;
use nudge::app::App;
use nudge::clock::{to_millis, Clock, SystemClock};
use nudge::config::{ClockKind, Config, DatabaseUrl};
use nudge::inbound::signing;
use nudge::service::enrollments::{batch_enroll, EnrollInput};
use nudge::store::accounts::DEFAULT_ACCOUNT_ID;
use nudge::store::contacts::ContactRow;
use nudge::store::schema::contacts;
use nudge::store::Db;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

const FLOW: &str = r#"{
  "name": "bench-wait-reply",
  "start": "wait_reply",
  "steps": {
    "wait_reply": { "type": "wait_for", "params": { "events": ["reply", "reply:sms"], "timeout": "30d" },
                    "next": { "reply": "end_replied", "reply:sms": "end_replied", "timeout": "end_silent" } },
    "end_replied": { "type": "end", "params": { "outcome": "replied" } },
    "end_silent":  { "type": "end", "params": { "outcome": "silent" } }
  }
}"#;

const TWILIO_TOKEN: &str = "bench-twilio-token";
/// The URL the requests are signed for (as the webhook rebuilds it from `Host`), and checked
/// against by the edge's floor.
const WEBHOOK_URL: &str = "http://bench.local/webhooks/sms/twilio";
/// How many times the edge's floor sends the signals' requests.
const FLOOR_PASSES: usize = 5;

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// `n` distinct valid US numbers in E.164 (New York area codes, exchanges 200–999).
fn phones(n: usize) -> Vec<String> {
    let mut out = Vec::with_capacity(n);
    'outer: for area in [212, 646, 718, 917, 347, 929, 332] {
        for exchange in 200..1000 {
            for line in (0..10_000).step_by(97) {
                if out.len() == n {
                    break 'outer;
                }
                out.push(format!("+1{area}{exchange}{line:04}"));
            }
        }
    }
    assert_eq!(out.len(), n, "not enough phone numbers");
    out
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> anyhow::Result<()> {
    let Ok(admin_url) = std::env::var("NUDGE_BENCH_DATABASE_URL") else {
        eprintln!("set NUDGE_BENCH_DATABASE_URL=postgres://user@host/db (a fresh database is created there)");
        std::process::exit(2);
    };
    let enrollments = env_usize("NUDGE_BENCH_ENROLLMENTS", 100_000);
    let signals = env_usize("NUDGE_BENCH_SIGNALS", 20_000).min(enrollments);
    let concurrency = env_usize("NUDGE_BENCH_CONCURRENCY", 32);

    let name = format!("nudge_bench_{}", std::process::id());
    admin(&admin_url, &format!("CREATE DATABASE {name}")).await;
    // The admin URL's parameters (`?options=-c%20log_min_duration_statement%3D0` to see
    // every statement in the server's log) apply to the bench's database too.
    let (path, query) = match admin_url.split_once('?') {
        Some((path, query)) => (path, format!("?{query}")),
        None => (admin_url.as_str(), String::new()),
    };
    let url = match path.rsplit_once('/') {
        Some((base, _)) => format!("{base}/{name}{query}"),
        None => anyhow::bail!("the URL names no database"),
    };
    let result = run(&url, enrollments, signals, concurrency).await;
    admin(
        &admin_url,
        &format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
    )
    .await;
    result
}

async fn admin(url: &str, sql: &str) {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .expect("PostgreSQL is reachable");
    let driver = tokio::spawn(connection);
    client.batch_execute(sql).await.expect(sql);
    drop(client);
    let _ = driver.await;
}

async fn run(
    url: &str,
    enrollments: usize,
    signals: usize,
    concurrency: usize,
) -> anyhow::Result<()> {
    let mut config = Config::new(
        "127.0.0.1:0".parse()?,
        DatabaseUrl::Postgres(url.to_string()),
        ClockKind::System,
    );
    config.announce_first_token = false;
    let app = App::build_with_clock(config, Arc::new(SystemClock)).await?;
    let addr = app.local_addr()?;
    let state = app.state().clone();

    let started = Instant::now();
    let numbers = setup(&state, enrollments).await?;
    eprintln!(
        "setup: {enrollments} contacts enrolled in {:.1}s",
        started.elapsed().as_secs_f64()
    );

    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(app.run(async {
        let _ = stop_rx.await;
    }));

    let numbers = Arc::new(numbers[..signals].to_vec());
    let routed = drive(addr, numbers.clone(), concurrency).await?;
    let _ = stop_tx.send(());
    server.await??;
    println!(
        "signals: {signals} SMS webhooks over {concurrency} connections, {enrollments} active enrollments (PostgreSQL)"
    );
    routed.print("", signals);

    // The same requests again, answered by a bare handler that reads the form and checks its
    // signature, nothing stored: the floor the transport, the framework and the check set on
    // this machine, which no routing can go under.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let floor_addr = listener.local_addr()?;
    let (floor_stop, floor_stopped) = tokio::sync::oneshot::channel::<()>();
    let floor_server = tokio::spawn(async move {
        let app = axum::Router::new().route("/webhooks/sms/twilio", axum::routing::post(bare));
        axum::serve(listener, app)
            .with_graceful_shutdown(async {
                let _ = floor_stopped.await;
            })
            .await
    });
    // Five times over: at this rate one pass is over too soon to measure.
    let repeated: Vec<String> = numbers
        .iter()
        .cycle()
        .take(FLOOR_PASSES * signals)
        .cloned()
        .collect();
    let floor = drive(floor_addr, Arc::new(repeated), concurrency).await?;
    let _ = floor_stop.send(());
    floor_server.await??;
    floor.print(
        "edge floor (signature checked, nothing stored) ",
        FLOOR_PASSES * signals,
    );
    Ok(())
}

/// The edge alone: the form read and its Twilio signature checked as the webhook does, then
/// the webhook's empty answer.
async fn bare(headers: axum::http::HeaderMap, body: axum::body::Bytes) -> axum::response::Response {
    use axum::response::IntoResponse;
    let params: Vec<(String, String)> = serde_urlencoded::from_bytes(&body).unwrap_or_default();
    let signature = headers
        .get(signing::TWILIO_HEADER)
        .and_then(|v| v.to_str().ok());
    match signing::twilio_verify(TWILIO_TOKEN, WEBHOOK_URL, &params, signature) {
        Ok(()) => (
            axum::http::StatusCode::OK,
            [(axum::http::header::CONTENT_TYPE, "text/xml")],
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Response/>",
        )
            .into_response(),
        Err(_) => axum::http::StatusCode::FORBIDDEN.into_response(),
    }
}

/// One phase's figures.
struct Measured {
    latencies: Vec<Duration>,
    elapsed: Duration,
    /// The process's CPU less the load generator's.
    server_cpu: Duration,
    generator_cpu: Duration,
}

/// Sends every number's SMS to `addr` from the load generator's thread and measures it.
async fn drive(
    addr: std::net::SocketAddr,
    numbers: Arc<Vec<String>>,
    concurrency: usize,
) -> anyhow::Result<Measured> {
    // The load generator runs on a thread of its own (one runtime, every connection on it), so
    // its CPU is counted apart from the server's: the process's CPU less the generator's.
    let process = cpu_time::ProcessTime::now();
    let started = Instant::now();
    let generator = std::thread::spawn(move || generate(addr, numbers, concurrency));
    let (mut latencies, generator_cpu) = tokio::task::spawn_blocking(move || generator.join())
        .await?
        .map_err(|_| anyhow::anyhow!("the load generator panicked"))?;
    let elapsed = started.elapsed();
    let server_cpu = process.elapsed().saturating_sub(generator_cpu);
    latencies.sort();
    Ok(Measured {
        latencies,
        elapsed,
        server_cpu,
        generator_cpu,
    })
}

impl Measured {
    fn print(&self, label: &str, signals: usize) {
        let latencies = &self.latencies;
        let pct =
            |p: f64| latencies[((latencies.len() as f64 * p) as usize).min(latencies.len() - 1)];
        println!(
            "{label}throughput: {:.0} signals/s ({:.2}s)",
            signals as f64 / self.elapsed.as_secs_f64(),
            self.elapsed.as_secs_f64()
        );
        println!(
            "{label}latency: p50 {:.1} ms, p90 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
            ms(pct(0.50)),
            ms(pct(0.90)),
            ms(pct(0.99)),
            ms(*latencies.last().unwrap())
        );
        let per_signal = |d: Duration| d.as_secs_f64() * 1e6 / signals as f64;
        println!(
            "{label}cpu: server {:.0} us/signal, load generator {:.0} us/signal (its own thread)",
            per_signal(self.server_cpu),
            per_signal(self.generator_cpu)
        );
    }
}

/// The load generator: `concurrency` keep-alive connections, each sending the next number's
/// SMS until none is left, on a runtime of this thread alone. Returns every latency and the
/// thread's CPU time.
fn generate(
    addr: std::net::SocketAddr,
    numbers: Arc<Vec<String>>,
    concurrency: usize,
) -> (Vec<Duration>, Duration) {
    let cpu = cpu_time::ThreadTime::now();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime for the load generator");
    let latencies = runtime.block_on(async move {
        let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let mut workers = Vec::new();
        for _ in 0..concurrency {
            let numbers = numbers.clone();
            let next = next.clone();
            workers.push(tokio::spawn(async move {
                let stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
                stream.set_nodelay(true).ok();
                let mut stream = BufReader::new(stream);
                let mut latencies = Vec::new();
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if i >= numbers.len() {
                        return latencies;
                    }
                    let t = Instant::now();
                    let status = sms(&mut stream, &numbers[i], &format!("SMbench{i}")).await;
                    latencies.push(t.elapsed());
                    assert_eq!(status, 200, "signal {i}");
                }
            }));
        }
        let mut latencies = Vec::with_capacity(numbers.len());
        for w in workers {
            latencies.extend(w.await.expect("a connection's task"));
        }
        latencies
    });
    (latencies, cpu.elapsed())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The flow, the contacts (bulk insert) and their enrollments (BatchEnroll, 10,000 a call).
async fn setup(state: &AppState, n: usize) -> anyhow::Result<Vec<String>> {
    let now = SystemClock.now();
    let flow = nudge::service::flows::create(&state.core, DEFAULT_ACCOUNT_ID, FLOW, now).await?;
    let (flow, _) = flow;
    assert!(
        nudge::store::provider_secrets::set(
            &state.core.db,
            DEFAULT_ACCOUNT_ID,
            nudge::inbound::providers::Provider::Twilio,
            Some(TWILIO_TOKEN),
            now.timestamp_millis(),
        )
        .await?
    );
    let numbers = phones(n);
    let rows: Vec<ContactRow> = numbers
        .iter()
        .enumerate()
        .map(|(i, phone)| ContactRow {
            account_id: DEFAULT_ACCOUNT_ID.into(),
            id: format!("c{i}"),
            email: None,
            phone: Some(phone.clone()),
            tz: Some("America/New_York".into()),
            country: None,
            attributes: "{}".into(),
            opted_out: "[]".into(),
            created_at: to_millis(now),
            updated_at: to_millis(now),
        })
        .collect();
    {
        use diesel_async::RunQueryDsl;
        let Db::Postgres(pool) = &state.core.db else {
            anyhow::bail!("the bench runs on PostgreSQL")
        };
        let mut c = pool.get().await?;
        for chunk in rows.chunks(3_000) {
            diesel::insert_into(contacts::table)
                .values(chunk)
                .execute(&mut *c)
                .await?;
        }
    }
    for (b, chunk) in (0..n).collect::<Vec<_>>().chunks(10_000).enumerate() {
        let items = chunk
            .iter()
            .map(|i| EnrollInput {
                contact_id: format!("c{i}"),
                flow_id: flow.id.clone(),
                ..Default::default()
            })
            .collect();
        let results = batch_enroll(&state.core, DEFAULT_ACCOUNT_ID, items).await?;
        for r in results {
            r.map_err(|e| anyhow::anyhow!("batch {b}: {e}"))?;
        }
    }
    Ok(numbers)
}

/// One signed inbound SMS on a keep-alive connection; returns the status.
async fn sms(stream: &mut BufReader<tokio::net::TcpStream>, from: &str, sid: &str) -> u16 {
    let params = vec![
        ("From".to_string(), from.to_string()),
        ("To".to_string(), "+18005551212".to_string()),
        ("Body".to_string(), "yes, let's talk".to_string()),
        ("MessageSid".to_string(), sid.to_string()),
    ];
    let body = serde_urlencoded::to_string(&params).unwrap();
    let signature = signing::twilio_sign(TWILIO_TOKEN, WEBHOOK_URL, &params);
    let request = format!(
        "POST /webhooks/sms/twilio HTTP/1.1\r\nHost: bench.local\r\nContent-Type: application/x-www-form-urlencoded\r\nX-Twilio-Signature: {signature}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream
        .get_mut()
        .write_all(request.as_bytes())
        .await
        .expect("write");
    let mut line = String::new();
    stream.read_line(&mut line).await.expect("status line");
    let status: u16 = line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("a status");
    let mut length = 0usize;
    loop {
        line.clear();
        stream.read_line(&mut line).await.expect("header");
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().expect("a length");
            }
        }
    }
    let mut body = vec![0u8; length];
    stream.read_exact(&mut body).await.expect("body");
    status
}
