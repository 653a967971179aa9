//! `--via grpc`: the throughput run as a CRM sees it. A real `nudge serve --clock manual` (the
//! `nudge` binary next to this one, on `--database-url`, a free port) is driven with the tonic
//! client of `nudge::proto`: BatchEnroll calls of `--enroll-batch` (1,000) from `--callers`
//! connections; one `TestClockService.Advance` of an hour makes every enrollment due (the
//! server wakes them all before it answers) while `--consumers` delivery workers, each on its
//! own connection, ClaimDispatches (1,000 at a time) and ack them as sent (BatchAckDispatch,
//! or AckDispatch each with `--ack-batch 1`); the step
//! figure runs from the Advance to the last ack. Then `--signals` ReportSignal replies.
//!
//! With `--compare-database-url` (another empty database) the in-process run with the same
//! settings goes first, and a last line gives what the gRPC path keeps of each figure.

use crate::run::{Acks, Figures, Run};
use crate::{arg, insert_contacts, FLOW};
use futures_util::{StreamExt, TryStreamExt};
use nudge::clock::{Clock, SystemClock};
use nudge::config::DatabaseUrl;
use nudge::proto::v1 as pb;
use nudge::proto::v1::dispatch_service_client::DispatchServiceClient;
use nudge::proto::v1::enrollment_service_client::EnrollmentServiceClient;
use nudge::proto::v1::flow_service_client::FlowServiceClient;
use nudge::proto::v1::signal_service_client::SignalServiceClient;
use nudge::proto::v1::test_clock_service_client::TestClockServiceClient;
use nudge::store::Db;
use std::path::PathBuf;
use std::process::{Child, Command};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tonic::metadata::{Ascii, MetadataValue};
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, Endpoint};

/// How long one call may take: the Advance that wakes every enrollment is the longest.
const CALL_TIMEOUT: Duration = Duration::from_secs(600);
/// How long the server may take to migrate and listen.
const START_TIMEOUT: Duration = Duration::from_secs(60);

pub async fn throughput(url: DatabaseUrl) -> anyhow::Result<()> {
    let run = Run::from_args(1_000, 2, 10_000)?;
    // As given: the display form of a URL hides its password.
    let raw_url = arg("--database-url").unwrap_or_else(|| crate::DEFAULT_DATABASE_URL.into());
    let reference = match arg("--compare-database-url") {
        Some(other) => {
            anyhow::ensure!(
                other != raw_url,
                "--compare-database-url must be another empty database than --database-url"
            );
            let other = DatabaseUrl::parse(&other).map_err(anyhow::Error::msg)?;
            Some(crate::throughput(other, &run).await?)
        }
        None => None,
    };
    let server = Server::start(&raw_url)?;
    let result = drive(&server, &url, &run).await;
    let figures = match result {
        Ok(figures) => figures,
        Err(e) => return Err(e.context(server.log_tail())),
    };
    drop(server);
    if let Some(reference) = reference {
        let keep = |grpc: f64, in_process: f64| 100.0 * grpc / in_process;
        println!(
            "gRPC / in process: BatchEnroll {:.0} %, steps to the last ack {:.0} % (of the in-process drain alone {:.0} %), ReportSignal {:.0} %",
            keep(figures.enrolled, reference.enrolled),
            keep(
                figures.delivered.unwrap_or(0.0),
                reference.delivered.unwrap_or(f64::NAN)
            ),
            keep(figures.delivered.unwrap_or(0.0), reference.stepped),
            keep(
                figures.signalled.unwrap_or(0.0),
                reference.signalled.unwrap_or(f64::NAN)
            ),
        );
    }
    Ok(())
}

/// The run against the started server.
async fn drive(server: &Server, url: &DatabaseUrl, run: &Run) -> anyhow::Result<Figures> {
    let via = format!("{url} via gRPC");
    let mut figures = Figures::default();
    let setup = server.connect().await?;
    FlowServiceClient::new(setup.clone())
        .create_flow(pb::CreateFlowRequest {
            definition: FLOW.into(),
        })
        .await?;
    // The contacts straight into the table, as the in-process run does: the figure is
    // enrolling, not contact upserts.
    let db = Db::connect(url).await?;
    insert_contacts(&db, run.n, SystemClock.now()).await?;
    drop(db);

    // BatchEnroll from `--callers` connections, each taking the next call's contacts.
    let queue = Arc::new(std::sync::Mutex::new(run.enroll_calls()));
    let mut connections = Vec::new();
    for _ in 0..run.callers {
        connections.push(EnrollmentServiceClient::new(server.connect().await?));
    }
    let started = Instant::now();
    let mut callers = tokio::task::JoinSet::new();
    for mut client in connections {
        let queue = queue.clone();
        callers.spawn(async move {
            loop {
                let next = queue.lock().expect("queue lock").next();
                let Some(contacts) = next else {
                    return Ok::<(), anyhow::Error>(());
                };
                let items = contacts
                    .map(|i| pb::EnrollRequest {
                        contact_id: format!("c{i}"),
                        flow_id: "bench".into(),
                        ..Default::default()
                    })
                    .collect();
                let answer = client
                    .batch_enroll(pb::BatchEnrollRequest { items })
                    .await?
                    .into_inner();
                if let Some(refused) = answer.results.iter().find(|r| r.enrollment.is_none()) {
                    anyhow::bail!(
                        "BatchEnroll refused an item: {} {}",
                        refused.error_code,
                        refused.error_message
                    );
                }
            }
        });
    }
    while let Some(joined) = callers.join_next().await {
        joined??;
    }
    figures.enrolled = run.print_enrolled(&via, started.elapsed());

    // One Advance makes them all due; the delivery workers claim and ack meanwhile.
    let acks = Arc::new(Acks::new(run.n));
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..run.consumers {
        let client = DispatchServiceClient::new(server.connect().await?);
        workers.spawn(deliver(client, run.clone(), acks.clone()));
    }
    let mut clock = TestClockServiceClient::new(setup.clone());
    let started = Instant::now();
    let advanced = clock
        .advance(pb::AdvanceRequest {
            target: Some(pb::advance_request::Target::ByMs(3_600_000)),
        })
        .await?
        .into_inner();
    let secs = started.elapsed().as_secs_f64();
    figures.stepped = advanced.woken as f64 / secs;
    println!(
        "{via}: planner woke {} due enrollments (each: email dispatch + next wait) in {secs:.2} s = {:.0} steps/s (one TestClockService.Advance, delivery workers running)",
        advanced.woken, figures.stepped
    );
    anyhow::ensure!(
        advanced.woken as usize == run.n,
        "Advance woke {} of {} enrollments",
        advanced.woken,
        run.n
    );
    while let Some(joined) = workers.join_next().await {
        joined??;
    }
    figures.delivered = Some(run.print_delivered(&via, acks.count(), acks.elapsed_since(started)));

    if run.signals > 0 {
        let mut connections = Vec::new();
        for _ in 0..run.signal_concurrency.min(8) {
            connections.push(SignalServiceClient::new(server.connect().await?));
        }
        let elapsed = run
            .report_signals(|i| {
                let mut client = connections[i % connections.len()].clone();
                async move {
                    client
                        .report_signal(pb::ReportSignalRequest {
                            contact: format!("c{i}"),
                            kind: "reply".into(),
                            channel: "email".into(),
                            provider_id: format!("bench-{i}"),
                            ..Default::default()
                        })
                        .await?;
                    Ok::<(), anyhow::Error>(())
                }
            })
            .await?;
        figures.signalled = Some(run.print_signals(&via, elapsed));
    }
    Ok(figures)
}

/// A delivery worker as a CRM runs one: claims up to 1,000 due dispatches, acks them as sent
/// (BatchAckDispatch of `ack_batch`, or AckDispatch each when it is 1; `acks_in_flight` calls
/// at a time on its connection), until every dispatch of the run is acked.
async fn deliver(
    mut client: DispatchServiceClient<Authed>,
    run: Run,
    acks: Arc<Acks>,
) -> anyhow::Result<()> {
    while !acks.all_done() {
        let claimed = client
            .claim_dispatches(pb::ClaimDispatchesRequest {
                lease_ms: 60_000,
                max_count: 1_000,
                channels: Vec::new(),
            })
            .await?
            .into_inner()
            .dispatches;
        if claimed.is_empty() {
            tokio::time::sleep(Duration::from_millis(5)).await;
            continue;
        }
        let items: Vec<pb::AckDispatchRequest> = claimed
            .into_iter()
            .map(|d| pb::AckDispatchRequest {
                provider_message_id: format!("p-{}", d.id),
                id: d.id,
                lease_token: d.lease_token,
                ..Default::default()
            })
            .collect();
        let chunks: Vec<Vec<_>> = items.chunks(run.ack_batch).map(<[_]>::to_vec).collect();
        futures_util::stream::iter(chunks)
            .map(|chunk| {
                let (mut client, acks) = (client.clone(), &acks);
                async move {
                    if let [item] = chunk.as_slice() {
                        client.ack_dispatch(item.clone()).await?;
                    } else {
                        let results = client
                            .batch_ack_dispatch(pb::BatchAckDispatchRequest {
                                items: chunk.clone(),
                            })
                            .await?
                            .into_inner()
                            .results;
                        if let Some(refused) = results.iter().find(|r| r.ack.is_none()) {
                            anyhow::bail!(
                                "BatchAckDispatch refused an ack: {} {}",
                                refused.error_code,
                                refused.error_message
                            );
                        }
                    }
                    acks.add(chunk.len());
                    Ok::<(), anyhow::Error>(())
                }
            })
            .buffer_unordered(run.acks_in_flight)
            .try_collect::<()>()
            .await?;
    }
    Ok(())
}

/// Every call carries the API token.
#[derive(Clone)]
struct Bearer(MetadataValue<Ascii>);

impl tonic::service::Interceptor for Bearer {
    fn call(
        &mut self,
        mut request: tonic::Request<()>,
    ) -> Result<tonic::Request<()>, tonic::Status> {
        request
            .metadata_mut()
            .insert("authorization", self.0.clone());
        Ok(request)
    }
}

type Authed = InterceptedService<Channel, Bearer>;

/// A `nudge serve --clock manual` child process, killed when dropped.
struct Server {
    child: Child,
    port: u16,
    bearer: Bearer,
    log: PathBuf,
}

impl Server {
    /// Starts the `nudge` binary next to this one on `url` and a free port, waits until it
    /// listens, and makes an API token with `nudge token create`.
    fn start(url: &str) -> anyhow::Result<Server> {
        let nudge = std::env::current_exe()?.with_file_name("nudge");
        anyhow::ensure!(
            nudge.exists(),
            "--via grpc runs the server binary next to this one, {}, which is missing; build both: cargo build --release --bins",
            nudge.display()
        );
        let port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        let log =
            std::env::temp_dir().join(format!("nudge-bench-serve-{}.log", std::process::id()));
        let out = std::fs::File::create(&log)?;
        let child = Command::new(&nudge)
            .args(["serve", "--clock", "manual", "--database-url", url])
            .args(["--listen", &format!("127.0.0.1:{port}")])
            .env_remove("NUDGE_DATABASE_URL")
            .stdout(out.try_clone()?)
            .stderr(out)
            .spawn()?;
        let mut server = Server {
            child,
            port,
            bearer: Bearer(MetadataValue::from_static("Bearer none-yet")),
            log,
        };
        server.wait_listening()?;
        let token = Command::new(&nudge)
            .args(["token", "create", "--database-url", url])
            .env_remove("NUDGE_DATABASE_URL")
            .output()?;
        anyhow::ensure!(
            token.status.success(),
            "nudge token create failed: {}",
            String::from_utf8_lossy(&token.stderr)
        );
        let token = String::from_utf8(token.stdout)?;
        server.bearer = Bearer(format!("Bearer {}", token.trim()).parse()?);
        Ok(server)
    }

    /// Polls the port until it accepts, as long as the process lives, at most
    /// [`START_TIMEOUT`].
    fn wait_listening(&mut self) -> anyhow::Result<()> {
        let started = Instant::now();
        loop {
            if std::net::TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                return Ok(());
            }
            if let Some(status) = self.child.try_wait()? {
                anyhow::bail!("nudge serve exited ({status}){}", self.log_tail());
            }
            anyhow::ensure!(
                started.elapsed() < START_TIMEOUT,
                "nudge serve did not listen within {START_TIMEOUT:?}{}",
                self.log_tail()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// A new connection (HTTP/2), its calls authorised with the token.
    async fn connect(&self) -> anyhow::Result<Authed> {
        let channel = Endpoint::from_shared(format!("http://127.0.0.1:{}", self.port))?
            .timeout(CALL_TIMEOUT)
            .connect_timeout(Duration::from_secs(10))
            .tcp_nodelay(true)
            .connect()
            .await?;
        Ok(InterceptedService::new(channel, self.bearer.clone()))
    }

    /// The end of the server's log, to explain a failure.
    fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        let tail = lines[lines.len().saturating_sub(20)..].join("\n");
        format!("; the server's log ({}) ends:\n{tail}", self.log.display())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.log);
    }
}
