//! A load for the database-fault tests (`failover`, `db_faults`): a server with the
//! planner on the system clock, a flow whose steps fall due every second, and clients running
//! BatchEnroll, ClaimDispatches/AckDispatch, signed Twilio webhooks and gRPC health side by
//! side, each recording what it was told. [`Record::verify`] then checks the database against
//! it: what was answered OK is there, no step ran twice, no acked dispatch came back.

use nudge::app::App;
use nudge::config::{ClockKind, Config, DatabaseUrl};
use nudge::inbound::providers::Provider;
use nudge::proto::v1::dispatch_service_client::DispatchServiceClient;
use nudge::proto::v1::enrollment_service_client::EnrollmentServiceClient;
use nudge::proto::v1::*;
use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::task::JoinHandle;
use tonic::transport::Channel;
use tonic_health::pb::{health_client::HealthClient, HealthCheckRequest};

const TWILIO_TOKEN: &str = "fault-twilio-token";
/// Every call's deadline.
pub const DEADLINE: Duration = Duration::from_secs(5);
const CONTACTS: usize = 40;

/// A short wait, an email, a wait for a reply.
const FLOW: &str = r#"{
  "name": "faults",
  "start": "w",
  "steps": {
    "w":  { "type": "wait", "params": { "duration": "1s" }, "next": { "then": "e1" } },
    "e1": { "type": "email", "params": { "template": "intro" }, "next": { "then": "w2" } },
    "w2": { "type": "wait_for", "params": { "events": ["reply"], "timeout": "1h" },
            "next": { "reply": "done", "timeout": "done" } },
    "done": { "type": "end" }
  }
}"#;

/// What the clients were told, and what they saw go wrong.
#[derive(Debug, Default)]
pub struct Record {
    pub enrolled: BTreeSet<String>,
    pub signals: BTreeSet<String>,
    pub acked: BTreeSet<String>,
    /// A dispatch claimed again after an ack the client got an OK for.
    pub reclaimed: Vec<String>,
    /// Each failed gRPC call: what, the code, how long it took.
    pub failures: Vec<(&'static str, tonic::Code, Duration)>,
    /// Each failed webhook: the status (0: no answer), how long it took.
    pub http_failures: Vec<(u16, Duration)>,
    /// Health, sampled every 100 ms: when, and whether SERVING.
    pub health: Vec<(Instant, bool)>,
}

fn phone(i: usize) -> String {
    format!("+1415555{:04}", 1000 + i)
}

/// A request with the token and [`DEADLINE`].
fn req<T>(token: &str, message: T) -> tonic::Request<T> {
    let mut r = tonic::Request::new(message);
    r.metadata_mut()
        .insert("authorization", format!("Bearer {token}").parse().unwrap());
    r.set_timeout(DEADLINE);
    r
}

/// A server on `url` (system clock, planner running), with the flow and the contacts made.
pub struct Served {
    pub addr: SocketAddr,
    pub token: String,
    pub channel: Channel,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    server: Option<JoinHandle<std::io::Result<()>>>,
}

impl Served {
    pub async fn start(url: &str, configure: impl FnOnce(&mut Config)) -> Served {
        if std::env::var_os("NUDGE_TEST_LOG").is_some() {
            let _ = nudge::telemetry::init(nudge::config::LogFormat::Human, None);
        }
        let mut config = Config::new(
            "127.0.0.1:0".parse().unwrap(),
            DatabaseUrl::Postgres(url.to_string()),
            ClockKind::System,
        );
        config.announce_first_token = false;
        config.health_probe_every = Duration::from_millis(500);
        config.public_url = Some("http://nudge.test".into());
        configure(&mut config);
        let app = App::build(config).await.expect("nudge starts");
        let addr = app.local_addr().unwrap();
        let state = app.state().clone();
        let now_ms = chrono::Utc::now().timestamp_millis();
        let token =
            nudge::auth::create_token(&state.core.db, "default", &nudge::auth::Scope::Full, now_ms)
                .await
                .unwrap();
        nudge::store::provider_secrets::set(
            &state.core.db,
            "default",
            Provider::Twilio,
            Some(TWILIO_TOKEN),
            now_ms,
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
        nudge::proto::v1::flow_service_client::FlowServiceClient::new(channel.clone())
            .create_flow(req(
                &token,
                CreateFlowRequest {
                    definition: FLOW.into(),
                },
            ))
            .await
            .unwrap();
        let mut contacts =
            nudge::proto::v1::contact_service_client::ContactServiceClient::new(channel.clone());
        for i in 0..CONTACTS {
            contacts
                .upsert_contact(req(
                    &token,
                    UpsertContactRequest {
                        contact: Some(Contact {
                            id: format!("c{i}"),
                            email: format!("c{i}@example.com"),
                            phone: phone(i),
                            tz: "UTC".into(),
                            ..Default::default()
                        }),
                    },
                ))
                .await
                .unwrap();
        }
        Served {
            addr,
            token,
            channel,
            stop: Some(stop),
            server: Some(server),
        }
    }

    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(server) = self.server.take() {
            let _ = server.await;
        }
    }
}

/// The clients, running until [`Load::finish`].
pub struct Load {
    running: Arc<AtomicBool>,
    record: Arc<Mutex<Record>>,
    tasks: Vec<JoinHandle<()>>,
}

impl Load {
    pub fn start(served: &Served) -> Load {
        let running = Arc::new(AtomicBool::new(true));
        let record: Arc<Mutex<Record>> = Arc::default();
        let mut tasks = Vec::new();
        let (addr, token, channel) = (served.addr, served.token.clone(), served.channel.clone());
        tasks.push(tokio::spawn({
            let (running, record, channel) = (running.clone(), record.clone(), channel.clone());
            async move {
                let mut client = HealthClient::new(channel);
                while running.load(Ordering::Relaxed) {
                    let mut r = tonic::Request::new(HealthCheckRequest {
                        service: String::new(),
                    });
                    r.set_timeout(Duration::from_secs(1));
                    let serving =
                        matches!(client.check(r).await.map(|r| r.into_inner().status), Ok(1));
                    record
                        .lock()
                        .unwrap()
                        .health
                        .push((Instant::now(), serving));
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }));
        tasks.push(tokio::spawn({
            let (running, record, channel, token) = (
                running.clone(),
                record.clone(),
                channel.clone(),
                token.clone(),
            );
            async move {
                let mut client = EnrollmentServiceClient::new(channel);
                let mut n = 0usize;
                while running.load(Ordering::Relaxed) {
                    let items = (0..10)
                        .map(|k| EnrollRequest {
                            contact_id: format!("c{}", (n * 10 + k) % CONTACTS),
                            flow_id: "faults".into(),
                            allow_duplicate: true,
                            ..Default::default()
                        })
                        .collect();
                    n += 1;
                    let started = Instant::now();
                    match client
                        .batch_enroll(req(&token, BatchEnrollRequest { items }))
                        .await
                    {
                        Ok(r) => {
                            let mut rec = record.lock().unwrap();
                            for result in r.into_inner().results {
                                if let Some(e) = result.enrollment {
                                    rec.enrolled.insert(e.id);
                                }
                            }
                        }
                        Err(s) => record.lock().unwrap().failures.push((
                            "BatchEnroll",
                            s.code(),
                            started.elapsed(),
                        )),
                    }
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        }));
        tasks.push(tokio::spawn({
            let (running, record, channel, token) = (
                running.clone(),
                record.clone(),
                channel.clone(),
                token.clone(),
            );
            async move {
                let mut client = DispatchServiceClient::new(channel);
                while running.load(Ordering::Relaxed) {
                    let started = Instant::now();
                    let claimed = match client
                        .claim_dispatches(req(
                            &token,
                            ClaimDispatchesRequest {
                                lease_ms: 60_000,
                                max_count: 20,
                                ..Default::default()
                            },
                        ))
                        .await
                    {
                        Ok(r) => r.into_inner().dispatches,
                        Err(s) => {
                            record.lock().unwrap().failures.push((
                                "ClaimDispatches",
                                s.code(),
                                started.elapsed(),
                            ));
                            tokio::time::sleep(Duration::from_millis(50)).await;
                            continue;
                        }
                    };
                    {
                        let mut rec = record.lock().unwrap();
                        for d in &claimed {
                            if rec.acked.contains(&d.id) {
                                rec.reclaimed.push(d.id.clone());
                            }
                        }
                    }
                    for d in claimed {
                        let started = Instant::now();
                        match client
                            .ack_dispatch(req(
                                &token,
                                AckDispatchRequest {
                                    id: d.id.clone(),
                                    lease_token: d.lease_token.clone(),
                                    provider_message_id: format!("pm-{}", d.id),
                                    ..Default::default()
                                },
                            ))
                            .await
                        {
                            Ok(_) => {
                                record.lock().unwrap().acked.insert(d.id);
                            }
                            Err(s) => record.lock().unwrap().failures.push((
                                "AckDispatch",
                                s.code(),
                                started.elapsed(),
                            )),
                        }
                    }
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        }));
        tasks.push(tokio::spawn({
            let (running, record) = (running.clone(), record.clone());
            async move {
                let http = reqwest::Client::builder()
                    .timeout(DEADLINE)
                    .build()
                    .unwrap();
                let mut n = 0usize;
                while running.load(Ordering::Relaxed) {
                    let sid = format!("SMfault{n:06}");
                    let params: Vec<(String, String)> = [
                        ("From", phone(n % CONTACTS)),
                        ("To", "+18005551212".to_string()),
                        ("Body", "sounds good".to_string()),
                        ("MessageSid", sid.clone()),
                    ]
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), v))
                    .collect();
                    n += 1;
                    let signature = nudge::inbound::signing::twilio_sign(
                        TWILIO_TOKEN,
                        "http://nudge.test/webhooks/sms/twilio",
                        &params,
                    );
                    let started = Instant::now();
                    let answer = http
                        .post(format!("http://{addr}/webhooks/sms/twilio"))
                        .header("Content-Type", "application/x-www-form-urlencoded")
                        .header("X-Twilio-Signature", signature)
                        .body(serde_urlencoded::to_string(&params).unwrap())
                        .send()
                        .await;
                    let outcome = match answer {
                        Ok(r) if r.status().is_success() => Ok(()),
                        Ok(r) => Err(r.status().as_u16()),
                        Err(_) => Err(0),
                    };
                    {
                        let mut rec = record.lock().unwrap();
                        match outcome {
                            Ok(()) => {
                                rec.signals.insert(format!("twilio:{sid}"));
                            }
                            Err(status) => rec.http_failures.push((status, started.elapsed())),
                        }
                    }
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        }));
        Load {
            running,
            record,
            tasks,
        }
    }

    /// What was answered so far: (enrollments, signals, acks).
    pub fn counts(&self) -> (usize, usize, usize) {
        let r = self.record.lock().unwrap();
        (r.enrolled.len(), r.signals.len(), r.acked.len())
    }

    /// The first health sample after `after` that is `serving`, if any yet.
    pub fn health_turned(&self, after: Instant, serving: bool) -> Option<Instant> {
        self.record
            .lock()
            .unwrap()
            .health
            .iter()
            .find(|(at, s)| *at > after && *s == serving)
            .map(|(at, _)| *at)
    }

    /// Waits until `done` holds of what the clients recorded, up to `within` (then fails,
    /// naming `what`); returns how long it took. Polls every 50 ms.
    pub async fn wait_until(
        &self,
        what: &str,
        within: Duration,
        done: impl Fn(&Record) -> bool,
    ) -> Duration {
        let started = Instant::now();
        loop {
            {
                let record = self.record.lock().unwrap();
                if done(&record) {
                    return started.elapsed();
                }
                assert!(
                    started.elapsed() < within,
                    "{what}: not within {within:?} (last failure {:?})",
                    record.failures.last()
                );
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Until the load has done some of everything: enrollments, signals, and acks (which need
    /// the planner to have run due steps).
    pub async fn wait_running(&self) {
        self.wait_until("the load runs", Duration::from_secs(30), |r| {
            r.enrolled.len() >= 50 && r.signals.len() >= 5 && r.acked.len() >= 5
        })
        .await;
    }

    /// Until the load has done as much again of everything as it had so far.
    pub async fn wait_running_more(&self) {
        let before = self.counts();
        self.wait_until("the load goes on", Duration::from_secs(30), |r| {
            r.enrolled.len() >= 2 * before.0.max(25)
                && r.signals.len() >= before.1 + 5
                && r.acked.len() >= before.2 + 5
        })
        .await;
    }

    /// Waits until enrollments and signals are answered OK again after now, up to `within`:
    /// the service works again.
    pub async fn wait_working(&self, within: Duration) -> Duration {
        let before = self.counts();
        self.wait_until("the service works again", within, |r| {
            r.enrolled.len() > before.0 && r.signals.len() > before.1
        })
        .await
    }

    /// Until some call has been refused (or a webhook has failed) since `after` calls in all.
    pub async fn wait_refused(&self, within: Duration) {
        let before = {
            let r = self.record.lock().unwrap();
            r.failures.len() + r.http_failures.len()
        };
        self.wait_until("a call is refused", within, |r| {
            r.failures.len() + r.http_failures.len() > before
        })
        .await;
    }

    /// Until health is `serving` in a sample after `after`; returns that sample's instant.
    pub async fn wait_health(&self, after: Instant, serving: bool, within: Duration) -> Instant {
        self.wait_until("health", within, |r| {
            r.health.iter().any(|(at, s)| *at > after && *s == serving)
        })
        .await;
        self.health_turned(after, serving).expect("just seen")
    }

    pub async fn finish(self) -> Record {
        self.running.store(false, Ordering::Relaxed);
        for task in self.tasks {
            task.await.unwrap();
        }
        Arc::try_unwrap(self.record)
            .expect("the clients are done")
            .into_inner()
            .unwrap()
    }
}

impl Record {
    /// Every failed call answered one of `codes` (webhooks: 503) within its deadline.
    pub fn check_failures(&self, codes: &[tonic::Code]) {
        let slack = DEADLINE + Duration::from_millis(500);
        for (what, code, took) in &self.failures {
            assert!(codes.contains(code), "{what} answered {code:?}");
            assert!(*took <= slack, "{what} took {took:?}");
        }
        for (status, took) in &self.http_failures {
            assert!(
                *status == 503 || (*status == 0 && *took >= DEADLINE),
                "a webhook answered {status} after {took:?}"
            );
            assert!(*took <= slack, "a webhook took {took:?}");
        }
    }

    /// The database (`url`, the primary now) against what the clients were told.
    pub async fn verify(&self, url: &str) {
        assert!(
            self.reclaimed.is_empty(),
            "acked, then handed out again: {:?}",
            self.reclaimed
        );
        let db = crate::pg_cluster::connect(url).await;
        let ids: Vec<String> = self.enrolled.iter().cloned().collect();
        let found: i64 = db
            .query_one(
                "SELECT count(*) FROM enrollments WHERE id = ANY($1)",
                &[&ids],
            )
            .await
            .unwrap()
            .get(0);
        assert_eq!(
            found as usize,
            ids.len(),
            "an enrollment answered OK is gone"
        );
        let sids: Vec<String> = self.signals.iter().cloned().collect();
        let found: i64 = db
            .query_one(
                "SELECT count(*) FROM signals WHERE provider_id = ANY($1)",
                &[&sids],
            )
            .await
            .unwrap()
            .get(0);
        assert_eq!(found as usize, sids.len(), "a signal answered OK is gone");
        let acked: Vec<String> = self.acked.iter().cloned().collect();
        let sent: i64 = db
            .query_one(
                "SELECT count(*) FROM dispatches WHERE id = ANY($1) AND status = 'sent'",
                &[&acked],
            )
            .await
            .unwrap()
            .get(0);
        assert_eq!(sent as usize, acked.len(), "an ack answered OK is lost");
        // Every due step ran once: one run of each step per enrollment, one dispatch each.
        let runs = db
            .query(
                "SELECT enrollment_id, detail FROM journey WHERE kind = 'run_opened'",
                &[],
            )
            .await
            .unwrap();
        let mut seen: BTreeMap<(String, String), usize> = BTreeMap::new();
        for row in runs {
            let detail: serde_json::Value =
                serde_json::from_str(row.get::<_, &str>(1)).unwrap_or_default();
            let step = detail["step"].as_str().unwrap_or_default().to_string();
            *seen.entry((row.get(0), step)).or_default() += 1;
        }
        let doubled: Vec<_> = seen.iter().filter(|(_, n)| **n > 1).collect();
        assert!(doubled.is_empty(), "a step ran twice: {doubled:?}");
        let doubled: i64 = db
            .query_one(
                "SELECT count(*) FROM (SELECT enrollment_id FROM dispatches \
                 GROUP BY enrollment_id HAVING count(*) > 1) d",
                &[],
            )
            .await
            .unwrap()
            .get(0);
        assert_eq!(doubled, 0, "an email step dispatched twice");
        // A signal reached each enrollment at most once.
        let doubled: i64 = db
            .query_one(
                "SELECT count(*) FROM (SELECT enrollment_id, detail FROM journey \
                 WHERE kind = 'signal' GROUP BY enrollment_id, detail HAVING count(*) > 1) d",
                &[],
            )
            .await
            .unwrap()
            .get(0);
        assert_eq!(doubled, 0, "a signal was delivered twice");
        // The planner goes on: every enrollment made before now gets its email once its 1 s
        // wait is over (waited for, up to 20 s).
        let cutoff = chrono::Utc::now().timestamp_millis();
        let started = Instant::now();
        loop {
            let stuck: i64 = db
                .query_one(
                    "SELECT count(*) FROM enrollments e WHERE e.status = 'active' \
                     AND e.created_at < $1 AND NOT EXISTS \
                     (SELECT 1 FROM dispatches d WHERE d.enrollment_id = e.id)",
                    &[&cutoff],
                )
                .await
                .unwrap()
                .get(0);
            if stuck == 0 {
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "due steps stopped running: {stuck} enrollments never got their email"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}
