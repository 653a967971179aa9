//! What the signal tests share: their flows, gRPC helpers (clients, the clock, contacts,
//! enrollments, journeys, signals) and a minimal HTTP client with the webhooks' signatures.

use crate::common::TestApp;
use chrono::Duration;
use nudge::inbound::signing;
use nudge::proto::v1::dispatch_service_client::DispatchServiceClient;
use nudge::proto::v1::enrollment_service_client::EnrollmentServiceClient;
use nudge::proto::v1::signal_service_client::SignalServiceClient;
use nudge::proto::v1::test_clock_service_client::TestClockServiceClient;
use nudge::proto::v1::*;
use serde_json::Value;
use tonic::transport::Channel;

/// Waits for one of several events; `meeting_booked` exits.
pub const ROUTING_FLOW: &str = r#"{
  "name": "routing",
  "start": "wait_1",
  "settings": { "exit_on": ["meeting_booked"] },
  "steps": {
    "wait_1": { "type": "wait_for",
                "params": { "events": ["reply", "reply:sms", "call_connected", "payment.received"], "timeout": "3d" },
                "next": { "reply": "end_reply", "reply:sms": "end_sms", "call_connected": "end_call",
                          "payment.received": "end_paid", "timeout": "end_timeout" } },
    "end_reply":   { "type": "end", "params": { "outcome": "reply" } },
    "end_sms":     { "type": "end", "params": { "outcome": "reply:sms" } },
    "end_call":    { "type": "end", "params": { "outcome": "call_connected" } },
    "end_paid":    { "type": "end", "params": { "outcome": "paid" } },
    "end_timeout": { "type": "end", "params": { "outcome": "timeout" } }
  }
}"#;

/// Two waits in a row: a reply during the first is kept for the second.
pub const TWO_WAITS_FLOW: &str = r#"{
  "name": "two-waits",
  "start": "wait_pay",
  "steps": {
    "wait_pay":   { "type": "wait_for", "params": { "events": ["payment.received"], "timeout": "1d" },
                    "next": { "payment.received": "wait_reply", "timeout": "wait_reply" } },
    "wait_reply": { "type": "wait_for", "params": { "events": ["reply"], "timeout": "1d" },
                    "next": { "reply": "end_replied", "timeout": "end_silent" } },
    "end_replied": { "type": "end", "params": { "outcome": "replied" } },
    "end_silent":  { "type": "end", "params": { "outcome": "silent" } }
  }
}"#;

/// A timed wait, then a wait for a reply.
pub const TIMED_FLOW: &str = r#"{
  "name": "timed",
  "start": "pause_2h",
  "steps": {
    "pause_2h":   { "type": "wait", "params": { "duration": "2h" }, "next": { "then": "wait_reply" } },
    "wait_reply": { "type": "wait_for", "params": { "events": ["reply"], "timeout": "1d" },
                    "next": { "reply": "end_replied", "timeout": "end_silent" } },
    "end_replied": { "type": "end", "params": { "outcome": "replied" } },
    "end_silent":  { "type": "end", "params": { "outcome": "silent" } }
  }
}"#;

/// An email, then a wait for an email reply.
pub const EMAIL_FLOW: &str = r#"{
  "name": "email-thread",
  "start": "email_1",
  "steps": {
    "email_1":    { "type": "email", "params": { "template": "intro" }, "next": { "then": "wait_reply" } },
    "wait_reply": { "type": "wait_for", "params": { "events": ["reply:email"], "timeout": "5d" },
                    "next": { "reply:email": "end_replied", "timeout": "end_silent" } },
    "end_replied": { "type": "end", "params": { "outcome": "replied" } },
    "end_silent":  { "type": "end", "params": { "outcome": "silent" } }
  }
}"#;

/// Claims the due dispatches and answers enrollment `id`'s.
pub async fn claimed(app: &TestApp, id: &str) -> Dispatch {
    app.dispatches()
        .await
        .claim_dispatches(app.authed(ClaimDispatchesRequest {
            lease_ms: 60_000,
            max_count: 10,
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner()
        .dispatches
        .into_iter()
        .find(|d| d.enrollment_id == id)
        .expect("the email was dispatched")
}

/// Claims enrollment `id`'s email dispatch; its Message-ID (the thread a reply names).
pub async fn claimed_message_id(app: &TestApp, id: &str) -> String {
    claimed(app, id).await.message_id
}

/// Adds the sender `rep` (rep@acme.com, UTC) whose calendar is `calendar`, not the default.
pub async fn calendar_sender(app: &TestApp, calendar: &str) {
    app.senders()
        .await
        .upsert_sender(app.authed(UpsertSenderRequest {
            sender: Some(Sender {
                id: "rep".into(),
                email: "rep@acme.com".into(),
                tz: "UTC".into(),
                calendar: calendar.into(),
                ..Default::default()
            }),
            make_default: false,
        }))
        .await
        .unwrap();
}

/// Request headers, name and value.
pub type Headers<'a> = Vec<(&'a str, String)>;

/// Clients and the clock, beside `common`'s.
pub trait AppExt {
    async fn enrollments(&self) -> EnrollmentServiceClient<Channel>;
    async fn signals(&self) -> SignalServiceClient<Channel>;
    async fn dispatches(&self) -> DispatchServiceClient<Channel>;
    /// `TestClockService.Advance`: moves the manual clock, running what falls due on the way.
    async fn advance(&self, by: Duration);
    fn clock_now(&self) -> chrono::DateTime<chrono::Utc>;
}

impl AppExt for TestApp {
    async fn enrollments(&self) -> EnrollmentServiceClient<Channel> {
        EnrollmentServiceClient::new(self.channel().await)
    }

    async fn signals(&self) -> SignalServiceClient<Channel> {
        SignalServiceClient::new(self.channel().await)
    }

    async fn dispatches(&self) -> DispatchServiceClient<Channel> {
        DispatchServiceClient::new(self.channel().await)
    }

    async fn advance(&self, by: Duration) {
        TestClockServiceClient::new(self.channel().await)
            .advance(self.authed(AdvanceRequest {
                target: Some(advance_request::Target::ByMs(by.num_milliseconds())),
            }))
            .await
            .expect("the clock advances");
    }

    fn clock_now(&self) -> chrono::DateTime<chrono::Utc> {
        use nudge::clock::Clock;
        self.clock.now()
    }
}

pub async fn create_flow(app: &TestApp, definition: &str) -> String {
    let reply = app
        .flows()
        .await
        .create_flow(app.authed(CreateFlowRequest {
            definition: definition.into(),
        }))
        .await
        .expect("the flow is valid")
        .into_inner();
    reply.flow.expect("a flow").id
}

pub async fn contact(app: &TestApp, id: &str, email: &str, phone: &str) {
    app.contacts()
        .await
        .upsert_contact(app.authed(UpsertContactRequest {
            contact: Some(Contact {
                id: id.into(),
                email: email.into(),
                phone: phone.into(),
                ..Default::default()
            }),
        }))
        .await
        .expect("the contact is valid");
}

pub async fn enroll(app: &TestApp, contact_id: &str, flow_id: &str) -> String {
    let reply = app
        .enrollments()
        .await
        .enroll(app.authed(EnrollRequest {
            contact_id: contact_id.into(),
            flow_id: flow_id.into(),
            allow_duplicate: true,
            ..Default::default()
        }))
        .await
        .expect("enrolled")
        .into_inner();
    reply.enrollment.expect("an enrollment").id
}

pub async fn enrollment(app: &TestApp, id: &str) -> Enrollment {
    app.enrollments()
        .await
        .get_enrollment(app.authed(GetEnrollmentRequest { id: id.into() }))
        .await
        .expect("the enrollment exists")
        .into_inner()
        .enrollment
        .expect("an enrollment")
}

/// The journey as (kind, detail) pairs.
pub async fn journey(app: &TestApp, id: &str) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    let mut token = String::new();
    loop {
        let page = app
            .enrollments()
            .await
            .get_journey(app.authed(GetJourneyRequest {
                enrollment_id: id.into(),
                page: Some(PageRequest {
                    page_size: 500,
                    page_token: token.clone(),
                }),
            }))
            .await
            .expect("a journey")
            .into_inner();
        for e in page.entries {
            let detail = crate::common::detail_json(&e);
            out.push((e.kind, detail));
        }
        if page.next_page_token.is_empty() {
            return out;
        }
        token = page.next_page_token;
    }
}

/// The journey's signal entries for `signal_id`: their `effect`s.
pub async fn signal_effects(app: &TestApp, enrollment_id: &str, signal_id: &str) -> Vec<String> {
    journey(app, enrollment_id)
        .await
        .into_iter()
        .filter(|(kind, d)| kind == "signal" && d["signal"] == signal_id)
        .map(|(_, d)| d["effect"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// The `run_closed` entry that a signal woke.
pub async fn closed_by(app: &TestApp, enrollment_id: &str, signal_id: &str) -> Option<Value> {
    journey(app, enrollment_id)
        .await
        .into_iter()
        .find(|(kind, d)| kind == "run_closed" && d["woken_by"] == signal_id)
        .map(|(_, d)| d)
}

pub async fn report(
    app: &TestApp,
    contact: &str,
    kind: &str,
    channel: &str,
    provider_id: &str,
) -> ReportSignalResponse {
    app.signals()
        .await
        .report_signal(app.authed(ReportSignalRequest {
            contact: contact.into(),
            kind: kind.into(),
            channel: channel.into(),
            provider_id: provider_id.into(),
            ..Default::default()
        }))
        .await
        .unwrap_or_else(|e| panic!("{kind}/{channel}: {e:?}"))
        .into_inner()
}

pub async fn post_event(
    app: &TestApp,
    contact: &str,
    key: &str,
    payload: &str,
) -> PostEventResponse {
    app.signals()
        .await
        .post_event(app.authed(PostEventRequest {
            key: key.into(),
            contact: contact.into(),
            payload: payload.into(),
            provider_id: String::new(),
        }))
        .await
        .unwrap_or_else(|e| panic!("{key}: {e:?}"))
        .into_inner()
}

/// A minimal HTTP/1.1 client: the status and the body.
pub async fn http(
    app: &TestApp,
    path: &str,
    headers: &[(&str, String)],
    body: &[u8],
) -> (u16, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(app.addr).await.unwrap();
    let mut request = format!(
        "POST {path} HTTP/1.1\r\nHost: nudge.test\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    // A server may answer (413) before reading the whole body and close: ignore write errors.
    let _ = stream.write_all(body).await;
    let mut out = Vec::new();
    let _ = stream.read_to_end(&mut out).await;
    let text = String::from_utf8_lossy(&out).to_string();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {text:?}"));
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}

pub fn json_body(body: &str) -> Value {
    serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"))
}

pub async fn webhook_secret(app: &TestApp) -> String {
    nudge::store::provider_secrets::keys(&app.state.core.db, "default")
        .await
        .unwrap()
        .unwrap()
        .webhook_secret
}

/// Now by the system clock, in unix seconds: what a webhook signature's timestamp is checked
/// against whatever the server's clock (a signature is the sender's real time). The one thing
/// these tests read the system clock for.
pub fn signing_now() -> i64 {
    chrono::Utc::now().timestamp()
}

pub fn signed(secret: &str, t: i64, body: &[u8]) -> Vec<(&'static str, String)> {
    vec![
        ("Content-Type", "application/json".into()),
        ("X-Nudge-Signature", signing::sign(secret, t, body)),
    ]
}

pub async fn sms(app: &TestApp, from: &str, text: &str, sid: &str) -> (u16, String) {
    let params: Vec<(String, String)> = [
        ("From", from),
        ("To", "+18005551212"),
        ("Body", text),
        ("MessageSid", sid),
        ("AccountSid", "AC123"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let body = serde_urlencoded::to_string(&params).unwrap();
    let url = "http://nudge.test/webhooks/sms/twilio";
    let signature = signing::twilio_sign(TWILIO_TOKEN, url, &params);
    http(
        app,
        "/webhooks/sms/twilio",
        &[
            (
                "Content-Type",
                "application/x-www-form-urlencoded".to_string(),
            ),
            ("X-Twilio-Signature", signature),
        ],
        body.as_bytes(),
    )
    .await
}

pub const TWILIO_TOKEN: &str = "twilio-test-token";

pub async fn set_twilio_token(app: &TestApp) {
    set_provider_secret(
        app,
        nudge::inbound::providers::Provider::Twilio,
        TWILIO_TOKEN,
    )
    .await;
}

/// Sets the default account's secret for `provider`, as `nudge provider-secret set` does.
pub async fn set_provider_secret(
    app: &TestApp,
    provider: nudge::inbound::providers::Provider,
    secret: &str,
) {
    let secret = provider.check_secret(secret).expect("a valid secret");
    assert!(nudge::store::provider_secrets::set(
        &app.state.core.db,
        "default",
        provider,
        Some(&secret),
        0
    )
    .await
    .unwrap());
}
