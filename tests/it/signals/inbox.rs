//! Inbox signals end to end (docs/signals.md, "Inbox signals"): raw MIME samples from `fixtures/inbox/` posted to the
//! signed email webhook as `message/rfc822`, with the thread id of a real dispatch; then what
//! each enrollment's state and journey say. The manual clock drives the out-of-office pause's
//! own resume.

use super::support::*;
use crate::common::{spawn_app, Backend, TestApp};
use chrono::{DateTime, Duration, Utc};
use nudge::proto::v1::contact_service_client::ContactServiceClient;
use nudge::proto::v1::*;
use serde_json::{json, Value};

backend_tests!(
    out_of_office_pauses_until_the_return_and_resumes_by_itself,
    a_reply_ends_the_out_of_office_pause_and_routes,
    an_auto_reply_never_wakes_a_reply_wait,
    a_hard_bounce_exits_every_enrollment_and_blocks_email,
    three_soft_bounces_in_seven_days_count_as_hard,
    bad_inbox_input_never_crashes_nor_pauses_wrongly,
    sms_start_ends_an_opt_out_and_help_is_noted,
    a_cancelled_meeting_raises_meeting_cancelled_and_a_moved_one_updates,
);

/// An email, then a wait for a reply (10 days); out-of-office pauses may last 60 days.
const FLOW: &str = r#"{
  "name": "inbox",
  "start": "email_1",
  "settings": { "out_of_office": { "max_pause": "60d" } },
  "steps": {
    "email_1":    { "type": "email", "params": { "template": "intro" }, "next": { "then": "wait_reply" } },
    "wait_reply": { "type": "wait_for", "params": { "events": ["reply"], "timeout": "10d" },
                    "next": { "reply": "end_replied", "timeout": "end_silent" } },
    "end_replied": { "type": "end", "params": { "outcome": "replied" } },
    "end_silent":  { "type": "end", "params": { "outcome": "silent" } }
  }
}"#;

fn fixture(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/inbox")
        .join(name);
    String::from_utf8(std::fs::read(path).unwrap()).unwrap()
}

/// A corpus sample as an answer to `message_id`, with its own Message-ID made unique by `tag`.
fn sample(name: &str, message_id: &str, tag: &str) -> String {
    fixture(name)
        .replace("<en_test.2@nudge>", message_id)
        .replacen("Message-ID: <", &format!("Message-ID: <{tag}."), 1)
}

/// Posts a raw message to the email webhook, signed.
async fn post_raw(app: &TestApp, raw: &str) -> (u16, Value) {
    let secret = webhook_secret(app).await;
    let mut headers = signed(&secret, signing_now(), raw.as_bytes());
    headers.retain(|(name, _)| *name != "Content-Type");
    headers.push(("Content-Type", "message/rfc822".to_string()));
    let (code, body) = http(app, "/webhooks/email", &headers, raw.as_bytes()).await;
    (
        code,
        serde_json::from_str(&body).unwrap_or(json!({"raw": body})),
    )
}

/// A contact in Europe/Berlin, enrolled in `flow`; the email goes out. Answers the enrollment
/// and the Message-ID of its email.
async fn enrolled(app: &TestApp, flow: &str, contact_id: &str) -> (String, String) {
    ContactServiceClient::new(app.channel().await)
        .upsert_contact(app.authed(UpsertContactRequest {
            contact: Some(Contact {
                id: contact_id.into(),
                email: format!("{contact_id}@example.com"),
                tz: "Europe/Berlin".into(),
                ..Default::default()
            }),
        }))
        .await
        .unwrap();
    let id = enroll(app, contact_id, flow).await;
    app.advance(Duration::seconds(1)).await;
    let claimed = app
        .dispatches()
        .await
        .claim_dispatches(app.authed(ClaimDispatchesRequest {
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
        .expect("the email was dispatched");
    (id, d.message_id.clone())
}

fn instant(v: &Value) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(v.as_str().unwrap_or_else(|| panic!("an instant: {v}")))
        .unwrap()
        .with_timezone(&Utc)
}

fn entries<'a>(journey: &'a [(String, Value)], kind: &str) -> Vec<&'a Value> {
    journey
        .iter()
        .filter(|(k, _)| k == kind)
        .map(|(_, d)| d)
        .collect()
}

async fn get_contact(app: &TestApp, id: &str) -> Contact {
    ContactServiceClient::new(app.channel().await)
        .get_contact(app.authed(GetContactRequest { id: id.into() }))
        .await
        .unwrap()
        .into_inner()
        .contact
        .unwrap()
}

async fn out_of_office_pauses_until_the_return_and_resumes_by_itself(backend: Backend) {
    let app = spawn_app(backend).await;
    let flow = create_flow(&app, FLOW).await;
    let (id, message_id) = enrolled(&app, &flow, "ann").await;
    // "Ab dem 05.01. bin ich wieder erreichbar": back 2027-01-05; plus extra 1bd, in Berlin.
    let (code, body) = post_raw(&app, &sample("outlook_ooo_de.eml", &message_id, "a")).await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["deliveries"][0]["effect"], "paused", "{body}");
    let e = enrollment(&app, &id).await;
    assert_eq!(e.status, "paused");
    let want_until: DateTime<Utc> = "2027-01-05T23:00:00Z".parse().unwrap();
    let j = journey(&app, &id).await;
    let paused = entries(&j, "paused");
    assert_eq!(paused.len(), 1, "{j:?}");
    assert_eq!(paused[0]["reason"], "OUT_OF_OFFICE", "{:?}", paused[0]);
    assert_eq!(instant(&paused[0]["until"]), want_until);

    // A second auto-reply while away is only noted; the pause keeps its end.
    let (code, body) = post_raw(&app, &sample("gmail_vacation_en.eml", &message_id, "b")).await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["deliveries"][0]["effect"], "noted", "{body}");

    // The reply wait's timeout (10 days) passes during the pause; nothing happens before the
    // pause ends.
    let until_start = want_until - app.clock_now();
    app.advance(until_start - Duration::seconds(1)).await;
    assert_eq!(enrollment(&app, &id).await.status, "paused");
    app.advance(Duration::seconds(2)).await;
    let e = enrollment(&app, &id).await;
    assert_eq!(
        (e.status.as_str(), e.outcome.as_str()),
        ("completed", "silent")
    );
    let j = journey(&app, &id).await;
    let resumed = entries(&j, "resumed");
    assert_eq!(resumed.len(), 1, "{j:?}");
    assert_eq!(resumed[0]["reason"], "OUT_OF_OFFICE");
    // The timeout closed at the resume instant (docs/timing.md, "A target already in the past"), not when it was due.
    let closed = entries(&j, "run_closed")
        .into_iter()
        .find(|d| d["branch"] == "timeout")
        .expect("the wait closed on timeout");
    assert_eq!(instant(&closed["closed"]), want_until);
    app.stop().await;
}

async fn a_reply_ends_the_out_of_office_pause_and_routes(backend: Backend) {
    let app = spawn_app(backend).await;
    let flow = create_flow(&app, FLOW).await;
    let (id, message_id) = enrolled(&app, &flow, "ann").await;
    let (code, body) = post_raw(&app, &sample("outlook_ooo_fr.eml", &message_id, "a")).await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(enrollment(&app, &id).await.status, "paused");
    // A person answers (quoting "out of office" in her own words): the pause ends, the reply
    // wakes the wait.
    let (code, body) = post_raw(&app, &sample("human_quotes_ooo.eml", &message_id, "b")).await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["deliveries"][0]["effect"], "woke", "{body}");
    assert_eq!(body["deliveries"][0]["branch"], "reply");
    let e = enrollment(&app, &id).await;
    assert_eq!(
        (e.status.as_str(), e.outcome.as_str()),
        ("completed", "replied")
    );
    let j = journey(&app, &id).await;
    assert_eq!(entries(&j, "resumed")[0]["reason"], "OUT_OF_OFFICE");
    app.stop().await;
}

async fn an_auto_reply_never_wakes_a_reply_wait(backend: Backend) {
    let app = spawn_app(backend).await;
    let flow = create_flow(&app, FLOW).await;
    let (id, message_id) = enrolled(&app, &flow, "ann").await;
    let (code, body) = post_raw(&app, &sample("zendesk_autoreply.eml", &message_id, "a")).await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["deliveries"][0]["effect"], "buffered", "{body}");
    let e = enrollment(&app, &id).await;
    assert_eq!(
        (e.status.as_str(), e.current_step.as_str()),
        ("active", "wait_reply")
    );
    // The same through JSON: the headers decide.
    let secret = webhook_secret(&app).await;
    let mail = json!({"headers": {"Message-ID": "<auto2@x>", "In-Reply-To": message_id,
                                  "Auto-Submitted": "auto-replied"},
                      "from": "ann@example.com", "subject": "Re: intro", "text": "Got it"})
    .to_string();
    let (code, body) = http(
        &app,
        "/webhooks/email",
        &signed(&secret, signing_now(), mail.as_bytes()),
        mail.as_bytes(),
    )
    .await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(json_body(&body)["deliveries"][0]["effect"], "buffered");
    assert_eq!(enrollment(&app, &id).await.current_step, "wait_reply");
    app.stop().await;
}

async fn a_hard_bounce_exits_every_enrollment_and_blocks_email(backend: Backend) {
    let app = spawn_app(backend).await;
    let flow = create_flow(&app, FLOW).await;
    let (first, message_id) = enrolled(&app, &flow, "ann").await;
    // A second enrollment of the same contact (another flow version of the same shape).
    let other = create_flow(&app, &FLOW.replace("\"inbox\"", "\"inbox-2\"")).await;
    let second = enroll(&app, "ann", &other).await;
    let (code, body) = post_raw(&app, &sample("postfix_hard.eml", &message_id, "a")).await;
    assert_eq!(code, 200, "{body}");
    for id in [&first, &second] {
        let e = enrollment(&app, id).await;
        assert_eq!(
            (e.status.as_str(), e.reason.as_str()),
            ("exited", "BOUNCED"),
            "{id}"
        );
    }
    assert!(get_contact(&app, "ann")
        .await
        .opted_out
        .contains(&"email".to_string()));
    // A new enrollment skips its email: the address is blocked.
    let third = enroll(&app, "ann", &flow).await;
    app.advance(Duration::seconds(1)).await;
    let j = journey(&app, &third).await;
    assert!(!entries(&j, "skipped").is_empty(), "{j:?}");
    app.stop().await;
}

async fn three_soft_bounces_in_seven_days_count_as_hard(backend: Backend) {
    let app = spawn_app(backend).await;
    let flow = create_flow(&app, FLOW).await;
    let (id, _) = enrolled(&app, &flow, "ann").await;
    let soft = |n: u32| ReportSignalRequest {
        contact: "ann".into(),
        kind: "bounce".into(),
        r#type: "soft".into(),
        provider_id: format!("soft-{n}"),
        ..Default::default()
    };
    for n in 1..=2 {
        app.signals()
            .await
            .report_signal(app.authed(soft(n)))
            .await
            .unwrap();
        app.advance(Duration::days(1)).await;
        assert_eq!(enrollment(&app, &id).await.status, "active", "after {n}");
    }
    app.signals()
        .await
        .report_signal(app.authed(soft(3)))
        .await
        .unwrap();
    let e = enrollment(&app, &id).await;
    assert_eq!(
        (e.status.as_str(), e.reason.as_str()),
        ("exited", "BOUNCED")
    );
    // A bad type is refused, naming the field.
    let err = app
        .signals()
        .await
        .report_signal(app.authed(ReportSignalRequest {
            r#type: "bouncy".into(),
            ..soft(4)
        }))
        .await
        .unwrap_err();
    assert_eq!(err.code(), tonic::Code::InvalidArgument);
    assert!(err.message().contains("hard"), "{}", err.message());
    app.stop().await;
}

async fn bad_inbox_input_never_crashes_nor_pauses_wrongly(backend: Backend) {
    let app = spawn_app(backend).await;
    let flow = create_flow(&app, FLOW).await;
    let (id, message_id) = enrolled(&app, &flow, "ann").await;
    // Not MIME at all: 422, nothing stored.
    let (code, body) = post_raw(&app, "this is not a message\r\n\r\n").await;
    assert_eq!(code, 422, "{body}");
    assert!(body.to_string().contains("MIME"), "{body}");
    // A DSN without a status: a soft bounce (noted in the payload), never an exit.
    let (code, body) = post_raw(&app, &sample("dsn_no_status.eml", &message_id, "a")).await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(enrollment(&app, &id).await.status, "active");
    // "Ab dem 31.02.": a date that does not exist. The pause falls back to default_pause (7d)
    // from the arrival, and the journey says why.
    let arrived = app.clock_now();
    let (code, body) = post_raw(&app, &sample("outlook_ooo_bad_date.eml", &message_id, "b")).await;
    assert_eq!(code, 200, "{body}");
    let j = journey(&app, &id).await;
    let paused = entries(&j, "paused");
    assert_eq!(paused.len(), 1, "{j:?}");
    assert_eq!(instant(&paused[0]["until"]), arrived + Duration::days(7));
    let note = paused[0]["note"].as_str().unwrap();
    assert!(
        note.contains("31.02") && note.contains("default_pause"),
        "{note}"
    );
    app.stop().await;
}

async fn sms_start_ends_an_opt_out_and_help_is_noted(backend: Backend) {
    let app = spawn_app(backend).await;
    set_twilio_token(&app).await;
    contact(&app, "bob", "bob@example.com", "+12125551234").await;
    let (code, body) = sms(&app, "+12125551234", "STOP", "SM1").await;
    assert_eq!(code, 200, "{body}");
    assert!(get_contact(&app, "bob")
        .await
        .opted_out
        .contains(&"sms".to_string()));
    let (code, body) = sms(&app, "+12125551234", "HELP", "SM2").await;
    assert_eq!(code, 200, "{body}");
    assert!(get_contact(&app, "bob")
        .await
        .opted_out
        .contains(&"sms".to_string()));
    let (code, body) = sms(&app, "+12125551234", " start ", "SM3").await;
    assert_eq!(code, 200, "{body}");
    assert!(!get_contact(&app, "bob")
        .await
        .opted_out
        .contains(&"sms".to_string()));
    app.stop().await;
}

async fn a_cancelled_meeting_raises_meeting_cancelled_and_a_moved_one_updates(backend: Backend) {
    let app = spawn_app(backend).await;
    let flow = create_flow(
        &app,
        r#"{"name": "meet", "start": "wait_meet",
            "steps": {
              "wait_meet": {"type": "wait_for", "params": {"events": ["meeting_booked"], "timeout": "10d"},
                            "next": {"meeting_booked": "wait_cancel", "timeout": "end"}},
              "wait_cancel": {"type": "wait_for", "params": {"events": ["meeting_cancelled"], "timeout": "10d"},
                              "next": {"meeting_cancelled": "end_cancelled", "timeout": "end"}},
              "end_cancelled": {"type": "end", "params": {"outcome": "cancelled"}},
              "end": {"type": "end"}}}"#,
    )
    .await;
    contact(&app, "ann", "ann@example.com", "").await;
    let id = enroll(&app, "ann", &flow).await;
    app.advance(Duration::seconds(1)).await;
    calendar_sender(&app, "rep@acme.com").await;
    let secret = webhook_secret(&app).await;
    let post = |event: Value| {
        let secret = secret.clone();
        let app = &app;
        async move {
            let body = event.to_string();
            http(
                app,
                "/webhooks/calendar",
                &signed(&secret, signing_now(), body.as_bytes()),
                body.as_bytes(),
            )
            .await
        }
    };
    let booked = json!({"id": "evt_1", "organizer": "rep@acme.com", "attendees": ["ann@example.com"],
                        "start": "2026-12-10T15:00:00Z"});
    let (code, body) = post(booked.clone()).await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(enrollment(&app, &id).await.current_step, "wait_cancel");
    // Moved: same id, another start: the booking is updated, nothing new is raised.
    let mut moved = booked.clone();
    moved["start"] = json!("2026-12-11T15:00:00Z");
    let (code, body) = post(moved).await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(json_body(&body)["duplicate"], true);
    assert_eq!(enrollment(&app, &id).await.current_step, "wait_cancel");
    let stored =
        nudge::store::signals::by_provider_id(&app.state.core.db, "default", "calendar:evt_1")
            .await
            .unwrap()
            .unwrap();
    assert!(
        stored.payload.contains("2026-12-11T15:00:00"),
        "{}",
        stored.payload
    );
    // Cancelled: raises meeting_cancelled.
    let mut cancelled = booked.clone();
    cancelled["status"] = json!("cancelled");
    let (code, body) = post(cancelled).await;
    assert_eq!(code, 200, "{body}");
    let e = enrollment(&app, &id).await;
    assert_eq!(
        (e.status.as_str(), e.outcome.as_str()),
        ("completed", "cancelled")
    );
    // A status that is no status: 422.
    let mut bad = booked;
    bad["id"] = json!("evt_2");
    bad["status"] = json!("maybe");
    let (code, body) = post(bad).await;
    assert_eq!(code, 422, "{body}");
    app.stop().await;
}
