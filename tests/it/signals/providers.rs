//! Providers' own webhooks end to end, with requests signed by the providers' own
//! tools: `fixtures/providers/requests/*.json`, made by `scripts/gen_provider_fixtures.py`
//! (Twilio's `RequestValidator`, `cryptography`'s ECDSA and RSA, Python's `hmac`), plus
//! sendgrid-python's signed vector and AWS's own SNS messages. The server's signature clock is
//! set to the instant they were signed at (a stale one is that clock moved on).
//!
//! Every adapter: no secret (401), forged (401), stale (401), replayed (401 or a duplicate,
//! changing nothing), malformed (4xx), and each refused request stores nothing; then what
//! each event does, in nudge's own terms (docs/providers.md).

use super::support::*;
use crate::common::{spawn_app_with, Backend, TestApp};
use chrono::{DateTime, Duration, Utc};
use nudge::clock::ManualClock;
use nudge::inbound::providers::Provider;
use nudge::proto::v1::*;
use nudge::runtime::sns::PinnedSns;
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

backend_tests!(
    mailgun_inbound_mail,
    mailgun_events,
    sendgrid_inbound_parse,
    sendgrid_events,
    sendgrids_own_vector,
    postmark_inbound_and_events,
    ses_through_sns,
    awss_own_sns_messages,
    twilio_message_status,
    twilio_voice_calls,
    calendly_bookings,
    calcom_bookings,
    provider_secrets_over_the_api,
    over_the_limit_and_unknown_paths,
);

/// The certificate `SigningCertURL` names in `ses.json`.
const SNS_CERT_URL: &str =
    "https://sns.us-east-1.amazonaws.com/SimpleNotificationService-nudgetest.pem";
/// AWS's validator tests' certificate URL.
const AWS_CERT_URL: &str =
    "https://sns.us-east-2.amazonaws.com/SimpleNotificationService-7ff5318490ec183fbaddaa2a969abfda.pem";

#[derive(Debug, Clone, Deserialize)]
struct Fixture {
    secret: String,
    signed_at: i64,
    requests: BTreeMap<String, Request>,
    #[serde(default)]
    provider_message_ids: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Deserialize)]
struct Request {
    path: String,
    headers: BTreeMap<String, String>,
    #[serde(default)]
    body: Option<String>,
    #[serde(default)]
    body_base64: Option<String>,
}

impl Request {
    fn bytes(&self) -> Vec<u8> {
        use base64::Engine;
        match (&self.body, &self.body_base64) {
            (Some(b), _) => b.clone().into_bytes(),
            (None, Some(b)) => base64::engine::general_purpose::STANDARD.decode(b).unwrap(),
            (None, None) => Vec::new(),
        }
    }

    /// The request with `NUDGE_THREAD_ID` (in a body no signature covers) replaced.
    fn in_thread(&self, message_id: &str) -> Request {
        let bare = message_id.trim_start_matches('<').trim_end_matches('>');
        let mut r = self.clone();
        r.body = r.body.map(|b| b.replace("NUDGE_THREAD_ID", bare));
        r
    }

    fn with_header(&self, name: &str, value: &str) -> Request {
        let mut r = self.clone();
        r.headers.retain(|k, _| !k.eq_ignore_ascii_case(name));
        r.headers.insert(name.into(), value.into());
        r
    }

    fn with_body(&self, body: &str) -> Request {
        let mut r = self.clone();
        r.body = Some(body.into());
        r.body_base64 = None;
        r
    }
}

fn fixture(name: &str) -> Fixture {
    let path = format!("fixtures/providers/requests/{name}.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn at(unix: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(unix, 0).unwrap()
}

/// One email, then a wait for a reply.
const EMAIL_FLOW: &str = r#"{
  "name": "provider-email",
  "start": "e1",
  "steps": {
    "e1": { "type": "email", "params": { "template": "intro" }, "next": { "then": "w" } },
    "w":  { "type": "wait_for", "params": { "events": ["reply"], "timeout": "3d" },
            "next": { "reply": "end_replied", "timeout": "end_silent" } },
    "end_replied": { "type": "end", "params": { "outcome": "replied" } },
    "end_silent":  { "type": "end", "params": { "outcome": "silent" } }
  }
}"#;

/// One SMS, then a wait for a reply.
const SMS_FLOW: &str = r#"{
  "name": "provider-sms",
  "start": "s1",
  "steps": {
    "s1": { "type": "sms", "params": { "template": "hi" }, "next": { "then": "w" } },
    "w":  { "type": "wait_for", "params": { "events": ["reply"], "timeout": "3d" },
            "next": { "reply": "end_replied", "timeout": "end_silent" } },
    "end_replied": { "type": "end", "params": { "outcome": "replied" } },
    "end_silent":  { "type": "end", "params": { "outcome": "silent" } }
  }
}"#;

/// A call task with outcomes, then the end.
const CALL_FLOW: &str = r#"{
  "name": "provider-call",
  "start": "c1",
  "steps": {
    "c1": { "type": "call",
            "params": { "instructions": "call", "outcomes": ["connected", "short_call", "voicemail", "no_answer", "busy", "failed"] },
            "next": { "then": "end_connected", "connected": "end_connected", "voicemail": "end_voicemail", "no_answer": "end_no_answer",
                      "busy": "end_busy", "failed": "end_failed", "short_call": "end_short" } },
    "end_connected": { "type": "end", "params": { "outcome": "connected" } },
    "end_voicemail": { "type": "end", "params": { "outcome": "voicemail" } },
    "end_no_answer": { "type": "end", "params": { "outcome": "no_answer" } },
    "end_busy":      { "type": "end", "params": { "outcome": "busy" } },
    "end_failed":    { "type": "end", "params": { "outcome": "failed" } },
    "end_short":     { "type": "end", "params": { "outcome": "short_call" } }
  }
}"#;

/// Waits for a meeting (or a call).
const MEETING_FLOW: &str = r#"{
  "name": "provider-meeting",
  "start": "w",
  "steps": {
    "w": { "type": "wait_for", "params": { "events": ["meeting_booked", "call_connected"], "timeout": "7d" },
           "next": { "meeting_booked": "end_booked", "call_connected": "end_call", "timeout": "end_silent" } },
    "end_booked": { "type": "end", "params": { "outcome": "booked" } },
    "end_call":   { "type": "end", "params": { "outcome": "call" } },
    "end_silent": { "type": "end", "params": { "outcome": "silent" } }
  }
}"#;

struct World {
    app: TestApp,
    /// What signatures are checked against.
    sig: Arc<ManualClock>,
    sns: Arc<PinnedSns>,
    fx: Fixture,
}

/// A server with the fixture's signing instant, the test SNS, the contacts alice and bob, and
/// the sender rep@acme.example (its calendar too).
async fn world(backend: Backend, name: &str) -> World {
    let fx = fixture(name);
    let sig = Arc::new(ManualClock::new(at(fx.signed_at)));
    let mut sns = PinnedSns::default();
    sns.certs.insert(
        SNS_CERT_URL.into(),
        std::fs::read("fixtures/providers/ses/nudge-test-cert.pem").unwrap(),
    );
    sns.certs.insert(
        AWS_CERT_URL.into(),
        std::fs::read("fixtures/providers/ses/aws-test-cert.pem").unwrap(),
    );
    let sns = Arc::new(sns);
    let (s, n) = (sig.clone(), sns.clone());
    let app = spawn_app_with(backend, move |c| {
        c.public_url = Some("https://nudge.example.com".into());
        c.signature_clock = Some(s);
        c.sns = Some(n);
    })
    .await;
    contact(&app, "alice", "alice@example.com", "+14155550100").await;
    contact(&app, "bob", "bob@example.com", "+14155550101").await;
    app.senders()
        .await
        .upsert_sender(app.authed(UpsertSenderRequest {
            sender: Some(Sender {
                id: "rep".into(),
                email: "rep@acme.example".into(),
                calendar: "rep@acme.example".into(),
                tz: "UTC".into(),
                ..Default::default()
            }),
            make_default: true,
        }))
        .await
        .unwrap();
    World { app, sig, sns, fx }
}

impl World {
    fn req(&self, case: &str) -> Request {
        self.fx
            .requests
            .get(case)
            .unwrap_or_else(|| panic!("no case `{case}` in the fixture"))
            .clone()
    }

    async fn send(&self, r: &Request) -> (u16, Value) {
        let headers: Vec<(&str, String)> = r
            .headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.clone()))
            .collect();
        let (code, text) = http(&self.app, &r.path, &headers, &r.bytes()).await;
        let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
        (code, body)
    }

    async fn case(&self, case: &str) -> (u16, Value) {
        self.send(&self.req(case)).await
    }

    async fn set_secret(&self, provider: Provider) {
        set_provider_secret(&self.app, provider, &self.fx.secret).await;
    }

    /// What a refused request must leave as it was: every enrollment's status and journey,
    /// every contact's opt-outs, every dispatch's and task's status.
    async fn snapshot(&self) -> String {
        let db = &self.app.state.core.db;
        let mut out = Vec::new();
        let enrollments = nudge::store::enrollments::list(db, "default", &Default::default(), 1000)
            .await
            .unwrap();
        for e in enrollments {
            let journey = nudge::store::enrollments::journey(db, &e.id, 0, 10_000)
                .await
                .unwrap();
            out.push(format!("{} {} {}", e.id, e.status, journey.len()));
        }
        for id in ["alice", "bob"] {
            let c = nudge::store::contacts::get(db, "default", id)
                .await
                .unwrap()
                .unwrap();
            out.push(format!("{id} {:?}", c.opted_out));
        }
        let filter = nudge::store::dispatches::ListFilter::default();
        for d in nudge::store::dispatches::list(db, "default", &filter, 1000)
            .await
            .unwrap()
        {
            out.push(format!("{} {} {:?}", d.id, d.status, d.failure));
        }
        let filter = nudge::store::tasks::ListFilter::default();
        for t in nudge::store::tasks::list(db, "default", &filter, 1000)
            .await
            .unwrap()
        {
            out.push(format!("{} {} {:?}", t.id, t.status, t.outcome));
        }
        out.join("\n")
    }

    /// Sends `r` and checks it is refused with `code` (and a message holding `says`), with
    /// nothing stored.
    async fn refused(&self, what: &str, r: &Request, code: u16, says: &str) {
        let before = self.snapshot().await;
        let (got, body) = self.send(r).await;
        assert_eq!(got, code, "{what}: {body}");
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.to_lowercase().contains(&says.to_lowercase()),
            "{what}: `{says}` not in {body}"
        );
        assert_eq!(
            self.snapshot().await,
            before,
            "{what}: something was stored"
        );
    }

    /// Enrolls `contact` in `flow` and runs what is due now.
    async fn enroll(&self, contact: &str, flow: &str) -> String {
        let id = enroll(&self.app, contact, flow).await;
        self.app.advance(Duration::zero()).await;
        id
    }

    /// Claims the dispatch of enrollment `id` and acks it sent with `provider_message_id`;
    /// returns its Message-ID (email).
    async fn sent(&self, id: &str, provider_message_id: &str) -> String {
        let claimed = self
            .app
            .dispatches()
            .await
            .claim_dispatches(self.app.authed(ClaimDispatchesRequest {
                lease_ms: 60_000,
                max_count: 50,
                ..Default::default()
            }))
            .await
            .unwrap()
            .into_inner()
            .dispatches;
        let d = claimed
            .iter()
            .find(|d| d.enrollment_id == id)
            .expect("the step was dispatched");
        self.app
            .dispatches()
            .await
            .ack_dispatch(self.app.authed(AckDispatchRequest {
                id: d.id.clone(),
                lease_token: d.lease_token.clone(),
                provider_message_id: provider_message_id.into(),
                ..Default::default()
            }))
            .await
            .unwrap();
        d.message_id.clone()
    }

    fn pmid(&self, who: &str) -> String {
        self.fx.provider_message_ids[who].clone()
    }

    async fn status(&self, id: &str) -> (String, String, String) {
        let e = enrollment(&self.app, id).await;
        (e.status, e.outcome, e.reason)
    }

    async fn opted_out(&self, contact: &str) -> Vec<String> {
        let row = nudge::store::contacts::get(&self.app.state.core.db, "default", contact)
            .await
            .unwrap()
            .unwrap();
        let mut v: Vec<String> = serde_json::from_str(&row.opted_out).unwrap();
        v.sort();
        v
    }

    /// The signal stored under `provider_id`, if any.
    async fn signal(&self, provider_id: &str) -> Option<nudge::store::signals::SignalRow> {
        nudge::store::signals::by_provider_id(&self.app.state.core.db, "default", provider_id)
            .await
            .unwrap()
    }
}

/// The stored status of a result.
/// The receipt says the reply's words were read as `intent`, with the words that decided
/// (every mail path reads them the same way: the text, its quoted history cut).
fn read_as(body: &Value, intent: &str) {
    assert_eq!(body["intent"]["intent"], intent, "{body}");
    assert!(
        body["intent"]["evidence"]
            .as_array()
            .is_some_and(|e| !e.is_empty()),
        "{body}"
    );
}

fn status_of(body: &Value) -> &str {
    body["status"].as_str().unwrap_or("")
}

/// Flips the last hex digit of `value` wherever it appears in the text.
fn flip(text: &str, value: &str) -> String {
    assert!(text.contains(value), "{value} not in {text}");
    let mut forged = value.to_string();
    let last = forged.pop().unwrap();
    forged.push(if last == '0' { '1' } else { '0' });
    text.replace(value, &forged)
}

/// The form field `name` of a URL-encoded body.
fn form_field(body: &str, name: &str) -> String {
    serde_urlencoded::from_str::<Vec<(String, String)>>(body)
        .unwrap()
        .into_iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v)
        .unwrap_or_else(|| panic!("no `{name}` in {body}"))
}

async fn mailgun_inbound_mail(backend: Backend) {
    let w = world(backend, "mailgun").await;
    let flow = create_flow(&w.app, EMAIL_FLOW).await;
    let id = w.enroll("alice", &flow).await;
    let thread = w.sent(&id, &w.pmid("alice")).await;
    let reply = w.req("reply").in_thread(&thread);
    w.refused("no secret", &reply, 401, "provider-secret set mailgun")
        .await;
    w.set_secret(Provider::Mailgun).await;
    let body = reply.body.clone().unwrap();
    let signature = form_field(&body, "signature");
    w.refused(
        "forged",
        &reply.with_body(&flip(&body, &signature)),
        401,
        "signature",
    )
    .await;
    w.sig.set(at(w.fx.signed_at + 301));
    w.refused("stale", &reply, 401, "stale").await;
    w.sig.set(at(w.fx.signed_at));
    w.refused("malformed", &w.req("malformed"), 422, "").await;
    let json = reply.with_header("Content-Type", "application/json");
    w.refused("a JSON body", &json, 415, "application/json")
        .await;
    // The reply wakes the wait; its words are read ("Yes, Tuesday afternoon works").
    let (code, body) = w.send(&reply).await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(status_of(&body), "stored", "{body}");
    assert_eq!(w.status(&id).await.1, "replied");
    read_as(&body, "interested");
    // The same token again: a replay, nothing changes.
    w.refused("replayed", &reply, 401, "already used").await;
    // The multipart form (with an attachment) is read the same way: a second enrollment's
    // thread.
    let id2 = w.enroll("alice", &flow).await;
    let thread2 = w.sent(&id2, "mg-2").await;
    let (code, body) = w.send(&w.req("reply_multipart").in_thread(&thread2)).await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(w.status(&id2).await.1, "replied", "{body}");
    // The DSN is a hard bounce that exits, never a reply.
    let id3 = w.enroll("bob", &flow).await;
    let thread3 = w.sent(&id3, "mg-3").await;
    let (code, body) = w.send(&w.req("dsn").in_thread(&thread3)).await;
    assert_eq!(code, 200, "{body}");
    let (status, outcome, _) = w.status(&id3).await;
    assert_eq!(
        (status.as_str(), outcome.as_str()),
        ("exited", ""),
        "{body}"
    );
    assert_eq!(body["deliveries"][0]["effect"], "exited", "{body}");
    assert!(body.get("intent").is_none(), "a DSN is no reply: {body}");
    // Mail in no nudge thread (an out-of-office here): 200 ignored, nothing stored (a
    // provider retries a 4xx); its token is spent all the same.
    let before = w.snapshot().await;
    let stray = w.req("auto_reply").in_thread("<nobody@else>");
    let (code, body) = w.send(&stray).await;
    assert_eq!((code, status_of(&body)), (200, "ignored"), "{body}");
    assert_eq!(w.snapshot().await, before);
    w.refused("replayed, ignored", &stray, 401, "already used")
        .await;
    w.app.stop().await;
}

async fn mailgun_events(backend: Backend) {
    let w = world(backend, "mailgun").await;
    let flow = create_flow(&w.app, ROUTING_FLOW).await;
    let email_flow = create_flow(&w.app, EMAIL_FLOW).await;
    let first = w.enroll("alice", &email_flow).await;
    w.sent(&first, &w.pmid("alice")).await;
    let failed = w.req("event_failed_permanent");
    w.refused("no secret", &failed, 401, "mailgun").await;
    w.set_secret(Provider::Mailgun).await;
    let body = failed.body.clone().unwrap();
    let v: Value = serde_json::from_str(&body).unwrap();
    let signature = v["signature"]["signature"].as_str().unwrap().to_string();
    w.refused(
        "forged",
        &failed.with_body(&flip(&body, &signature)),
        401,
        "signature",
    )
    .await;
    w.sig.set(at(w.fx.signed_at - 400));
    w.refused("stale", &failed, 401, "stale").await;
    w.sig.set(at(w.fx.signed_at));
    w.refused("malformed", &w.req("event_malformed"), 422, "")
        .await;
    w.refused(
        "a form",
        &failed.with_header("Content-Type", "text/plain"),
        415,
        "application/json",
    )
    .await;
    // Temporary: a soft bounce, which leaves the enrollment be.
    let waiting = w.enroll("alice", &flow).await;
    let (code, body) = w.case("event_failed_temporary").await;
    assert_eq!((code, status_of(&body)), (200, "stored"), "{body}");
    assert_eq!(w.status(&waiting).await.0, "active");
    // Opened: not acted on.
    let before = w.snapshot().await;
    let (code, body) = w.case("event_opened").await;
    assert_eq!((code, status_of(&body)), (200, "ignored"), "{body}");
    assert_eq!(w.snapshot().await, before);
    // Permanent: exits like a hard bounce.
    let (code, body) = w.send(&failed).await;
    assert_eq!((code, status_of(&body)), (200, "stored"), "{body}");
    assert_eq!(w.status(&waiting).await.0, "exited");
    w.refused("replayed", &failed, 401, "already used").await;
    // Complained: exits, and blocks email.
    let again = w.enroll("alice", &flow).await;
    let (code, body) = w.case("event_complained").await;
    assert_eq!((code, status_of(&body)), (200, "stored"), "{body}");
    let (status, _, reason) = w.status(&again).await;
    assert_eq!(status, "exited", "{body}");
    assert!(reason.contains("COMPLAINED"), "{reason}");
    assert!(w.opted_out("alice").await.contains(&"email".to_string()));
    // Unsubscribed: an email opt-out (bob's stays as it was).
    let (code, body) = w.case("event_unsubscribed").await;
    assert_eq!((code, status_of(&body)), (200, "stored"), "{body}");
    assert_eq!(w.opted_out("alice").await, vec!["email".to_string()]);
    assert!(w.opted_out("bob").await.is_empty());
    w.app.stop().await;
}

/// The `Authorization` header of `user:password`.
fn basic(credentials: &str) -> String {
    use base64::Engine;
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(credentials)
    )
}

async fn sendgrid_inbound_parse(backend: Backend) {
    let w = world(backend, "sendgrid").await;
    let flow = create_flow(&w.app, EMAIL_FLOW).await;
    let id = w.enroll("alice", &flow).await;
    let thread = w.sent(&id, "sg-1").await;
    let raw = w.req("reply_raw").in_thread(&thread);
    w.refused("no secret", &raw, 401, "sendgrid").await;
    w.set_secret(Provider::Sendgrid).await;
    w.refused(
        "wrong password",
        &raw.with_header("Authorization", &basic("parse:wrong")),
        401,
        "",
    )
    .await;
    let mut bare = raw.clone();
    bare.headers
        .retain(|k, _| !k.eq_ignore_ascii_case("authorization"));
    w.refused("no credentials", &bare, 401, "authorization")
        .await;
    w.refused("broken multipart", &w.req("malformed"), 422, "multipart")
        .await;
    w.refused(
        "JSON",
        &raw.with_header("Content-Type", "application/json"),
        415,
        "multipart/form-data",
    )
    .await;
    let (code, body) = w.send(&raw).await;
    assert_eq!((code, status_of(&body)), (200, "stored"), "{body}");
    assert_eq!(w.status(&id).await.1, "replied");
    read_as(&body, "interested");
    // SendGrid signs nothing: the same mail again is its Message-ID again, a duplicate.
    let before = w.snapshot().await;
    let (code, body) = w.send(&raw).await;
    assert_eq!((code, status_of(&body)), (200, "duplicate"), "{body}");
    assert_eq!(w.snapshot().await, before);
    // Parsed fields, the text in ISO-8859-1 as `charsets` says.
    let id2 = w.enroll("alice", &flow).await;
    let thread2 = w.sent(&id2, "sg-2").await;
    let mut parsed = w.req("reply_parsed");
    {
        use base64::Engine;
        let bytes = parsed.bytes();
        let bare = thread2.trim_start_matches('<').trim_end_matches('>');
        let text = String::from_utf8_lossy(&bytes).into_owned();
        assert!(text.contains("NUDGE_THREAD_ID"));
        // Only ASCII is replaced: the Latin-1 bytes stay as they are.
        let mut out = Vec::new();
        let needle = b"NUDGE_THREAD_ID";
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i..].starts_with(needle) {
                out.extend_from_slice(bare.as_bytes());
                i += needle.len();
            } else {
                out.push(bytes[i]);
                i += 1;
            }
        }
        parsed.body_base64 = Some(base64::engine::general_purpose::STANDARD.encode(out));
    }
    let (code, body) = w.send(&parsed).await;
    assert_eq!((code, status_of(&body)), (200, "stored"), "{body}");
    assert_eq!(w.status(&id2).await.1, "replied");
    // French, in ISO-8859-1: "ça me va très bien".
    read_as(&body, "interested");
    assert_eq!(body["intent"]["language"], "fr", "{body}");
    w.app.stop().await;
}

async fn sendgrid_events(backend: Backend) {
    let w = world(backend, "sendgrid-events").await;
    let flow = create_flow(&w.app, ROUTING_FLOW).await;
    let email_flow = create_flow(&w.app, EMAIL_FLOW).await;
    let a = w.enroll("alice", &email_flow).await;
    w.sent(&a, &w.pmid("alice")).await;
    let b = w.enroll("bob", &email_flow).await;
    w.sent(&b, &w.pmid("bob")).await;
    let bounce = w.req("bounce");
    w.refused("no secret", &bounce, 401, "sendgrid-events")
        .await;
    w.set_secret(Provider::SendgridEvents).await;
    let body = bounce.body.clone().unwrap();
    w.refused(
        "forged body",
        &bounce.with_body(&body.replace("alice", "alicf")),
        401,
        "signature",
    )
    .await;
    w.sig.set(at(w.fx.signed_at + 3600));
    w.refused("stale", &bounce, 401, "stale").await;
    w.sig.set(at(w.fx.signed_at));
    w.refused("malformed", &w.req("malformed"), 422, "").await;
    // Deferred: a soft bounce; open: nothing.
    let waiting = w.enroll("alice", &flow).await;
    for case in ["deferred", "open"] {
        let (code, body) = w.case(case).await;
        assert_eq!(code, 200, "{case}: {body}");
    }
    assert_eq!(w.status(&waiting).await.0, "active");
    let (code, body) = w.send(&bounce).await;
    assert_eq!((code, status_of(&body)), (200, "stored"), "{body}");
    assert_eq!(w.status(&waiting).await.0, "exited");
    // SendGrid's retry of the same batch: the same sg_event_id, a duplicate.
    let before = w.snapshot().await;
    let (code, body) = w.send(&bounce).await;
    assert_eq!((code, status_of(&body)), (200, "duplicate"), "{body}");
    assert_eq!(w.snapshot().await, before);
    // A spam report exits and blocks email; an unsubscribe opts out.
    let again = w.enroll("alice", &flow).await;
    let (code, body) = w.case("spamreport").await;
    assert_eq!((code, status_of(&body)), (200, "stored"), "{body}");
    assert!(w.status(&again).await.2.contains("COMPLAINED"));
    for case in ["unsubscribe", "group_unsubscribe", "dropped", "blocked"] {
        let (code, body) = w.case(case).await;
        assert_eq!(code, 200, "{case}: {body}");
    }
    assert!(w.opted_out("alice").await.contains(&"email".to_string()));
    // A batch: each event on its own; the bounce for bob exits bob's enrollment.
    let bobs = w.enroll("bob", &flow).await;
    let (code, body) = w.case("batch").await;
    assert_eq!(code, 200, "{body}");
    let results = body["results"].as_array().expect("one result per event");
    assert!(results.len() >= 3, "{body}");
    assert!(results.iter().any(|r| r["status"] == "ignored"), "{body}");
    assert_eq!(w.status(&bobs).await.0, "exited", "{body}");
    w.app.stop().await;
}

/// sendgrid-python's own signed vector, checked at its own instant.
async fn sendgrids_own_vector(backend: Backend) {
    let w = world(backend, "sendgrid-vector").await;
    w.set_secret(Provider::SendgridEvents).await;
    let r = w.req("dropped");
    let (code, body) = w.send(&r).await;
    // No contact has its address: verified, then ignored (2xx, nothing stored).
    assert_eq!((code, status_of(&body)), (200, "ignored"), "{body}");
    let body = r.body.clone().unwrap();
    w.refused(
        "one byte changed",
        &r.with_body(&body.replacen("dropped", "droppeD", 1)),
        401,
        "signature",
    )
    .await;
    w.app.stop().await;
}

async fn postmark_inbound_and_events(backend: Backend) {
    let w = world(backend, "postmark").await;
    let flow = create_flow(&w.app, EMAIL_FLOW).await;
    let waiting_flow = create_flow(&w.app, ROUTING_FLOW).await;
    let id = w.enroll("alice", &flow).await;
    let thread = w.sent(&id, &w.pmid("alice")).await;
    let reply = w.req("reply").in_thread(&thread);
    w.refused("no secret", &reply, 401, "postmark").await;
    w.set_secret(Provider::Postmark).await;
    w.refused(
        "wrong credentials",
        &reply.with_header("Authorization", &basic("pm:nope")),
        401,
        "",
    )
    .await;
    w.refused("malformed", &w.req("malformed"), 422, "").await;
    w.refused("events_malformed", &w.req("events_malformed"), 422, "")
        .await;
    w.refused(
        "not JSON",
        &reply.with_header("Content-Type", "text/plain"),
        415,
        "application/json",
    )
    .await;
    let (code, body) = w.send(&reply).await;
    assert_eq!((code, status_of(&body)), (200, "stored"), "{body}");
    assert_eq!(w.status(&id).await.1, "replied");
    read_as(&body, "interested");
    let before = w.snapshot().await;
    let (code, body) = w.send(&reply).await;
    assert_eq!((code, status_of(&body)), (200, "duplicate"), "{body}");
    assert_eq!(w.snapshot().await, before);
    // Events.
    let waiting = w.enroll("alice", &waiting_flow).await;
    let (code, body) = w.case("delivery").await;
    assert_eq!((code, status_of(&body)), (200, "ignored"), "{body}");
    let (code, body) = w.case("bounce_soft").await;
    assert_eq!((code, status_of(&body)), (200, "stored"), "{body}");
    assert_eq!(w.status(&waiting).await.0, "active");
    let (code, body) = w.case("bounce_hard").await;
    assert_eq!((code, status_of(&body)), (200, "stored"), "{body}");
    assert_eq!(w.status(&waiting).await.0, "exited");
    let again = w.enroll("alice", &waiting_flow).await;
    let (code, body) = w.case("spam_complaint").await;
    assert_eq!((code, status_of(&body)), (200, "stored"), "{body}");
    assert!(w.status(&again).await.2.contains("COMPLAINED"));
    let (code, body) = w.case("subscription_change").await;
    assert_eq!(code, 200, "{body}");
    assert!(w.opted_out("alice").await.contains(&"email".to_string()));
    w.app.stop().await;
}

async fn ses_through_sns(backend: Backend) {
    let w = world(backend, "ses").await;
    let flow = create_flow(&w.app, ROUTING_FLOW).await;
    let email_flow = create_flow(&w.app, EMAIL_FLOW).await;
    let a = w.enroll("alice", &email_flow).await;
    w.sent(&a, &w.pmid("alice")).await;
    let confirm = w.req("subscription_confirmation");
    w.refused("no secret", &confirm, 401, "ses").await;
    w.set_secret(Provider::Ses).await;
    // Another account's topic: never confirmed.
    w.refused(
        "another topic",
        &w.req("subscription_other_topic"),
        401,
        "topic",
    )
    .await;
    assert!(w.sns.confirmed.lock().unwrap().is_empty());
    let (code, body) = w.send(&confirm).await;
    assert_eq!((code, status_of(&body)), (200, "confirmed"), "{body}");
    let confirmed = w.sns.confirmed.lock().unwrap().clone();
    assert_eq!(confirmed.len(), 1);
    assert!(
        confirmed[0].starts_with("https://sns.us-east-1.amazonaws.com/?Action=ConfirmSubscription"),
        "{confirmed:?}"
    );
    let (code, body) = w.case("unsubscribe_confirmation").await;
    assert_eq!((code, status_of(&body)), (200, "ignored"), "{body}");
    assert_eq!(w.sns.confirmed.lock().unwrap().len(), 1, "never visited");
    // A certificate from elsewhere is never fetched.
    w.refused("cert elsewhere", &w.req("cert_elsewhere"), 401, "sns")
        .await;
    let bounce = w.req("bounce_permanent");
    let body = bounce.body.clone().unwrap();
    w.refused(
        "forged",
        &bounce.with_body(&body.replace("alice@example.com", "bob@example.com")),
        401,
        "signature",
    )
    .await;
    w.sig.set(at(w.fx.signed_at + 2 * 3600));
    w.refused("stale", &bounce, 401, "stale").await;
    w.sig.set(at(w.fx.signed_at));
    w.refused("malformed", &w.req("malformed"), 422, "").await;
    let waiting = w.enroll("alice", &flow).await;
    let (code, body) = w.case("delivery").await;
    assert_eq!((code, status_of(&body)), (200, "ignored"), "{body}");
    let (code, body) = w.case("bounce_transient").await;
    assert_eq!((code, status_of(&body)), (200, "stored"), "{body}");
    assert_eq!(w.status(&waiting).await.0, "active");
    let (code, body) = w.send(&bounce).await;
    assert_eq!((code, status_of(&body)), (200, "stored"), "{body}");
    assert_eq!(w.status(&waiting).await.0, "exited");
    // SNS's retry: the same MessageId, a duplicate.
    let before = w.snapshot().await;
    let (code, body) = w.send(&bounce).await;
    assert_eq!((code, status_of(&body)), (200, "duplicate"), "{body}");
    assert_eq!(w.snapshot().await, before);
    let again = w.enroll("alice", &flow).await;
    let (code, body) = w.case("complaint").await;
    assert_eq!((code, status_of(&body)), (200, "stored"), "{body}");
    assert!(w.status(&again).await.2.contains("COMPLAINED"));
    // Received mail in no nudge thread: ignored.
    let (code, body) = w.case("received").await;
    assert_eq!((code, status_of(&body)), (200, "ignored"), "{body}");
    w.app.stop().await;
}

/// AWS's own signed SNS messages (aws-php-sns-message-validator's tests), checked at the
/// instant they were signed, when their certificate was valid: verified, then ignored (their
/// message is no SES notification).
async fn awss_own_sns_messages(backend: Backend) {
    let mut w = world(backend, "ses").await;
    let topic_v2 =
        "arn:aws:sns:us-east-2:295079676684:publish-and-verify-62674b1d-4295-426b-88e7-5fb75652a04e";
    w.fx.secret = topic_v2.into();
    w.set_secret(Provider::Ses).await;
    w.sig
        .set("2022-07-28T21:25:00Z".parse::<DateTime<Utc>>().unwrap());
    let body = r#"{"Type":"Notification","MessageId":"17dea24b-55c2-540b-8362-f916557af765","TopicArn":"arn:aws:sns:us-east-2:295079676684:publish-and-verify-62674b1d-4295-426b-88e7-5fb75652a04e","Message":"Hello world","Timestamp":"2022-07-28T21:24:08.324Z","SignatureVersion":"2","Signature":"CXVqp9PfZAL+4JHS3Zxo1PFbQsvnOjvmYhtIf17TWpwc+iIVas8kZ8GopuzVzVMdatE7rCl/O4P91Zp05Dwz8lk8dLhfp8gSu3Njlzxlyrmzo9x3va3Jb7zFnedgS2GKnZWHGBdwTXho+TosNUE+3e10OMSlwN5XGDwX7+R3WL+rn+AXmFAqp3alg27sYa55h1dLE9cGszGPjScPdtF3BmZsUDMx9wSdNKsCk+vSvE8yBjnCmUl7laSFj3LzPVrlSwgNYCF3kYnNAkah7NplK4SFhJYLwS0HCVCQJKa8rVbQLf9cBTu60U402mrgy0bN8xWoyimzbYbrOMJjalqkUg==","SigningCertURL":"https://sns.us-east-2.amazonaws.com/SimpleNotificationService-7ff5318490ec183fbaddaa2a969abfda.pem"}"#;
    let mut headers = BTreeMap::new();
    headers.insert(
        "Content-Type".to_string(),
        "text/plain; charset=UTF-8".to_string(),
    );
    let r = Request {
        path: "/webhooks/email/ses?account=default".into(),
        headers,
        body: Some(body.into()),
        body_base64: None,
    };
    let (code, got) = w.send(&r).await;
    assert_eq!((code, status_of(&got)), (200, "ignored"), "{got}");
    w.refused(
        "another message under the signature",
        &r.with_body(&body.replace("Hello world", "Hello World")),
        401,
        "signature",
    )
    .await;
    // Their certificate expired on 2022-08-17: at today's instant it is refused.
    w.sig.set(at(w.fx.signed_at));
    w.refused("expired certificate", &r, 401, "not valid now")
        .await;
    w.app.stop().await;
}

async fn twilio_message_status(backend: Backend) {
    let w = world(backend, "twilio").await;
    let flow = create_flow(&w.app, SMS_FLOW).await;
    let a = w.enroll("alice", &flow).await;
    w.sent(&a, &w.pmid("alice")).await;
    let undelivered = w.req("status_undelivered");
    w.refused("no token", &undelivered, 401, "twilio").await;
    w.set_secret(Provider::Twilio).await;
    let sig = undelivered.headers["X-Twilio-Signature"].clone();
    let mut forged = sig.clone();
    forged.replace_range(0..1, if sig.starts_with('A') { "B" } else { "A" });
    w.refused(
        "forged",
        &undelivered.with_header("X-Twilio-Signature", &forged),
        401,
        "X-Twilio-Signature",
    )
    .await;
    w.refused("malformed", &w.req("status_malformed"), 422, "")
        .await;
    // Delivered: nothing to do.
    let before = w.snapshot().await;
    let (code, body) = w.case("status_delivered").await;
    assert_eq!((code, status_of(&body)), (200, "ignored"), "{body}");
    assert_eq!(w.snapshot().await, before);
    // Undelivered: the dispatch fails, and its journey says so.
    let (code, body) = w.send(&undelivered).await;
    assert_eq!((code, status_of(&body)), (200, "recorded"), "{body}");
    let entries = journey(&w.app, &a).await;
    let failed: Vec<&(String, Value)> = entries
        .iter()
        .filter(|(k, _)| k == "delivery_failed")
        .collect();
    assert_eq!(failed.len(), 1, "{entries:?}");
    assert_eq!(failed[0].1["status"], "undelivered");
    assert_eq!(failed[0].1["error_code"], 30003);
    // Twilio's retry changes nothing (Twilio's signature has no timestamp: the same status
    // again is the same failure).
    let before = w.snapshot().await;
    let (code, _) = w.send(&undelivered).await;
    assert_eq!(code, 200);
    assert_eq!(w.snapshot().await, before);
    // 21610: alice opted out of SMS.
    let b = w.enroll("alice", &flow).await;
    w.sent(&b, &w.pmid("alice_opted_out")).await;
    let (code, body) = w.case("status_opted_out").await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(w.opted_out("alice").await, vec!["sms".to_string()]);
    assert!(w
        .signal(&format!("twilio:{}:opted_out", w.pmid("alice_opted_out")))
        .await
        .is_some());
    w.app.stop().await;
}

async fn twilio_voice_calls(backend: Backend) {
    let w = world(backend, "twilio").await;
    let calls = create_flow(&w.app, CALL_FLOW).await;
    let meeting = create_flow(&w.app, MEETING_FLOW).await;
    let long = w.req("call_completed_long");
    w.refused("no token", &long, 401, "twilio").await;
    w.set_secret(Provider::Twilio).await;
    let sig = long.headers["X-Twilio-Signature"].clone();
    let mut forged = sig.clone();
    forged.replace_range(0..1, if sig.starts_with('A') { "B" } else { "A" });
    w.refused(
        "forged",
        &long.with_header("X-Twilio-Signature", &forged),
        401,
        "X-Twilio-Signature",
    )
    .await;
    let other = long
        .body
        .clone()
        .unwrap()
        .replace("CallDuration=95", "CallDuration=96");
    w.refused(
        "another duration under the signature",
        &long.with_body(&other),
        401,
        "X-Twilio-Signature",
    )
    .await;
    w.refused("malformed", &w.req("call_malformed"), 422, "")
        .await;
    let before = w.snapshot().await;
    let (code, body) = w.case("call_ringing").await;
    assert_eq!((code, status_of(&body)), (200, "ignored"), "{body}");
    assert_eq!(w.snapshot().await, before);
    // Each final status completes alice's open call task with its outcome.
    for (case, outcome) in [
        ("call_no_answer", "no_answer"),
        ("call_busy", "busy"),
        ("call_voicemail", "voicemail"),
        ("call_failed", "failed"),
        ("call_completed_short", "short_call"),
        ("call_completed_long", "connected"),
    ] {
        let id = w.enroll("alice", &calls).await;
        let (code, body) = w.case(case).await;
        assert_eq!(
            (code, status_of(&body)),
            (200, "recorded"),
            "{case}: {body}"
        );
        assert_eq!(w.status(&id).await.1, outcome, "{case}: {body}");
    }
    // A longer threshold: 95 s is short.
    account_service_client::AccountServiceClient::new(w.app.channel().await)
        .update_account(w.app.authed(UpdateAccountRequest {
            account: Some(Account {
                call_connected_threshold: "2m".into(),
                ..Default::default()
            }),
            update_mask: Some(prost_types::FieldMask {
                paths: vec!["call_connected_threshold".into()],
            }),
        }))
        .await
        .unwrap();
    let id = w.enroll("alice", &calls).await;
    let (code, body) = w.case("call_completed_long").await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(w.status(&id).await.1, "short_call", "{body}");
    // No task: a connected call is `call_connected` (back to 30 s).
    account_service_client::AccountServiceClient::new(w.app.channel().await)
        .update_account(w.app.authed(UpdateAccountRequest {
            account: Some(Account::default()),
            update_mask: Some(prost_types::FieldMask {
                paths: vec!["call_connected_threshold".into()],
            }),
        }))
        .await
        .unwrap();
    let waiting = w.enroll("alice", &meeting).await;
    let (code, body) = w.case("call_completed_long").await;
    assert_eq!((code, status_of(&body)), (200, "stored"), "{body}");
    assert_eq!(w.status(&waiting).await.1, "call", "{body}");
    // Twilio's retry of the same callback: the same CallSid, a duplicate; nothing changes.
    let before = w.snapshot().await;
    let (code, body) = w.case("call_completed_long").await;
    assert_eq!((code, status_of(&body)), (200, "duplicate"), "{body}");
    assert_eq!(w.snapshot().await, before);
    // No task and no answer: nothing.
    let (code, body) = w.case("call_no_answer").await;
    assert_eq!((code, status_of(&body)), (200, "ignored"), "{body}");
    w.app.stop().await;
}

async fn calendly_bookings(backend: Backend) {
    let w = world(backend, "calendly").await;
    let flow = create_flow(&w.app, MEETING_FLOW).await;
    let id = w.enroll("alice", &flow).await;
    let created = w.req("invitee_created");
    w.refused("no secret", &created, 401, "calendly").await;
    w.set_secret(Provider::Calendly).await;
    let header = created.headers["Calendly-Webhook-Signature"].clone();
    let v1 = header.split("v1=").nth(1).unwrap().to_string();
    w.refused(
        "forged",
        &created.with_header("Calendly-Webhook-Signature", &flip(&header, &v1)),
        401,
        "signature",
    )
    .await;
    w.sig.set(at(w.fx.signed_at + 181));
    w.refused("stale", &created, 401, "stale").await;
    w.sig.set(at(w.fx.signed_at));
    w.refused("malformed", &w.req("malformed"), 422, "").await;
    let (code, body) = w.send(&created).await;
    assert_eq!((code, status_of(&body)), (200, "stored"), "{body}");
    assert_eq!(w.status(&id).await.1, "booked");
    w.refused("replayed", &created, 401, "already used").await;
    let (code, body) = w.case("unknown_event").await;
    assert!(code == 200 || code == 422, "{code} {body}");
    // A reschedule moves nothing that already ran.
    let before = w.snapshot().await;
    for case in ["reschedule_canceled", "reschedule_created"] {
        let (code, body) = w.case(case).await;
        assert_eq!(code, 200, "{case}: {body}");
    }
    assert_eq!(w.status(&id).await.1, "booked");
    let _ = before;
    let (code, body) = w.case("invitee_canceled").await;
    assert_eq!(code, 200, "{body}");
    w.app.stop().await;
}

async fn calcom_bookings(backend: Backend) {
    let w = world(backend, "calcom").await;
    let flow = create_flow(&w.app, MEETING_FLOW).await;
    let id = w.enroll("alice", &flow).await;
    let created = w.req("booking_created");
    w.refused("no secret", &created, 401, "calcom").await;
    w.set_secret(Provider::Calcom).await;
    let sig = created.headers["X-Cal-Signature-256"].clone();
    w.refused(
        "forged",
        &created.with_header("X-Cal-Signature-256", &flip(&sig, &sig)),
        401,
        "signature",
    )
    .await;
    w.sig.set(at(w.fx.signed_at + 3600));
    w.refused("stale", &created, 401, "stale").await;
    w.sig.set(at(w.fx.signed_at));
    w.refused("malformed", &w.req("malformed"), 422, "").await;
    let (code, body) = w.send(&created).await;
    assert_eq!((code, status_of(&body)), (200, "stored"), "{body}");
    assert_eq!(w.status(&id).await.1, "booked");
    // Cal.com's retry: the same uid and trigger, a duplicate.
    let before = w.snapshot().await;
    let (code, body) = w.send(&created).await;
    assert_eq!((code, status_of(&body)), (200, "duplicate"), "{body}");
    assert_eq!(w.snapshot().await, before);
    let (code, body) = w.case("booking_rescheduled").await;
    assert_eq!((code, status_of(&body)), (200, "recorded"), "{body}");
    assert_eq!(
        w.snapshot().await,
        before,
        "a reschedule moves nothing that ran"
    );
    let (code, body) = w.case("booking_cancelled").await;
    assert_eq!(code, 200, "{body}");
    let (code, body) = w.case("ping").await;
    assert_eq!((code, status_of(&body)), (200, "ignored"), "{body}");
    w.app.stop().await;
}

async fn provider_secrets_over_the_api(backend: Backend) {
    let w = world(backend, "mailgun").await;
    let mut accounts = account_service_client::AccountServiceClient::new(w.app.channel().await);
    let e = accounts
        .set_provider_secret(w.app.authed(SetProviderSecretRequest {
            provider: "mailchimp".into(),
            secret: "x".into(),
        }))
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::InvalidArgument);
    assert!(e.message().contains("sendgrid-events"), "{}", e.message());
    let e = accounts
        .set_provider_secret(w.app.authed(SetProviderSecretRequest {
            provider: "sendgrid".into(),
            secret: "no-password-here".into(),
        }))
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::InvalidArgument);
    assert!(!e.message().contains("no-password-here"), "{}", e.message());
    let account = accounts
        .set_provider_secret(w.app.authed(SetProviderSecretRequest {
            provider: "mailgun".into(),
            secret: w.fx.secret.clone(),
        }))
        .await
        .unwrap()
        .into_inner()
        .account
        .unwrap();
    let names: Vec<&str> = account
        .provider_secrets
        .iter()
        .map(|p| p.provider.as_str())
        .collect();
    assert_eq!(names, vec!["mailgun"]);
    let shown = format!("{account:?}");
    assert!(!shown.contains(&w.fx.secret), "the secret is never shown");
    // Set over the API, it checks the webhook at once.
    let (code, body) = w.case("event_opened").await;
    assert_eq!(code, 200, "{body}");
    // Cleared: 401 again.
    accounts
        .set_provider_secret(w.app.authed(SetProviderSecretRequest {
            provider: "mailgun".into(),
            secret: String::new(),
        }))
        .await
        .unwrap();
    let got = accounts
        .get_account(w.app.authed(GetAccountRequest {}))
        .await
        .unwrap()
        .into_inner()
        .account
        .unwrap();
    assert!(got.provider_secrets.is_empty());
    let (code, body) = w.case("event_opened").await;
    assert_eq!(code, 401, "{body}");
    w.app.stop().await;
}

/// A body over 1 MiB is 413 before anything is checked; a path nudge does not serve is 404.
async fn over_the_limit_and_unknown_paths(backend: Backend) {
    let w = world(backend, "calcom").await;
    w.set_secret(Provider::Calcom).await;
    let big = "x".repeat(1024 * 1024 + 1);
    let r = w.req("booking_created").with_body(&big);
    w.refused("over the limit", &r, 413, "limit").await;
    for path in [
        "/webhooks/email/mailgunn?account=default",
        "/webhooks/calendar/google?account=default",
        "/webhooks/sms/twilio/statuses",
    ] {
        let mut r = w.req("booking_created");
        r.path = path.into();
        w.refused(path, &r, 404, "nudge serves no").await;
    }
    w.app.stop().await;
}
