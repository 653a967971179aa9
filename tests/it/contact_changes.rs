//! A contact's changes reach its running enrollments (docs/timing.md, "Send windows": the windows are checked again when the step goes): `UpsertContact`
//! delivers the engine's `ContactChanged` in its own transaction, so the execution-time gate
//! reads the zone as it is now, a step held `ZONE_UNKNOWN` is planned again when the contact
//! gets a zone or a number, and an upsert that changes nothing writes nothing. Real server,
//! manual clock, through gRPC.

use crate::common::{spawn_app, Backend, TestApp};
use crate::signals::support::{create_flow, enrollment, journey, AppExt};
use chrono::{DateTime, Utc};
use nudge::proto::v1::*;
use serde_json::Value;

backend_tests!(
    a_zone_change_defers_a_due_email,
    a_held_sms_is_released_when_the_contact_gets_a_zone_or_a_number,
    an_unchanged_upsert_writes_nothing,
    an_opt_out_reaches_a_planned_sms,
);

/// A 3-hour wait, then an email inside a weekday 09:00–17:00 window in the contact's zone.
const WINDOWED_EMAIL: &str = r#"{
  "name": "windowed-email",
  "start": "pause",
  "settings": { "send_window": { "days": ["mon", "tue", "wed", "thu", "fri"], "from": "09:00", "to": "17:00" } },
  "steps": {
    "pause": { "type": "wait", "params": { "duration": "3h" }, "next": { "then": "mail" } },
    "mail":  { "type": "email", "params": { "template": "intro" }, "next": { "then": "done" } },
    "done":  { "type": "end" }
  }
}"#;

/// One SMS, then the end.
const ONE_SMS: &str = r#"{
  "name": "one-sms",
  "start": "text",
  "steps": {
    "text": { "type": "sms", "params": { "template": "hi" }, "next": { "then": "done" } },
    "done": { "type": "end" }
  }
}"#;

/// An hour's wait, then one SMS.
const LATER_SMS: &str = r#"{
  "name": "later-sms",
  "start": "pause",
  "steps": {
    "pause": { "type": "wait", "params": { "duration": "1h" }, "next": { "then": "text" } },
    "text":  { "type": "sms", "params": { "template": "hi" }, "next": { "then": "done" } },
    "done":  { "type": "end" }
  }
}"#;

/// A wait for a reply: an enrollment that stays live.
const WAITING: &str = r#"{
  "name": "waiting",
  "start": "w",
  "steps": {
    "w":    { "type": "wait_for", "params": { "events": ["reply"], "timeout": "7d" },
              "next": { "reply": "done", "timeout": "done" } },
    "done": { "type": "end" }
  }
}"#;

fn at(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text)
        .unwrap()
        .with_timezone(&Utc)
}

fn instant(t: &Option<prost_types::Timestamp>) -> Option<DateTime<Utc>> {
    t.as_ref()
        .map(|t| DateTime::from_timestamp(t.seconds, t.nanos as u32).unwrap())
}

async fn upsert(app: &TestApp, c: Contact) -> Contact {
    app.contacts()
        .await
        .upsert_contact(app.authed(UpsertContactRequest { contact: Some(c) }))
        .await
        .expect("the contact is valid")
        .into_inner()
        .contact
        .expect("a contact")
}

async fn enroll(app: &TestApp, contact: &str, flow: &str) -> String {
    app.enrollments()
        .await
        .enroll(app.authed(EnrollRequest {
            contact_id: contact.into(),
            flow_id: flow.into(),
            ..Default::default()
        }))
        .await
        .expect("enrolled")
        .into_inner()
        .enrollment
        .expect("an enrollment")
        .id
}

/// The dispatches a worker can claim now, as (enrollment, channel, recipient).
async fn claimable(app: &TestApp) -> Vec<(String, String, String)> {
    // Any channel: the request may grow filters, which default to "all".
    #[allow(clippy::needless_update)]
    let request = ClaimDispatchesRequest {
        lease_ms: 60_000,
        max_count: 100,
        ..Default::default()
    };
    app.dispatches()
        .await
        .claim_dispatches(app.authed(request))
        .await
        .unwrap()
        .into_inner()
        .dispatches
        .into_iter()
        .map(|d| (d.enrollment_id, d.channel, d.recipient))
        .collect()
}

/// Moves the manual clock to `to`, running what falls due on the way.
async fn advance_to(app: &TestApp, to: &str) {
    app.advance(at(to) - app.clock_now()).await;
}

fn entries<'a>(journey: &'a [(String, Value)], kind: &str) -> Vec<&'a Value> {
    journey
        .iter()
        .filter(|(k, _)| k == kind)
        .map(|(_, d)| d)
        .collect()
}

/// The email is planned for Monday 09:00 New York (14:00Z); the contact moves to Tokyo, where
/// 14:00Z is 23:00. The planned time stays (docs/timing.md, "Fixed once"), but at 14:00Z the gate sees
/// Tokyo: deferred to Tuesday 09:00 Tokyo (00:00Z) with a journey entry, sent then.
async fn a_zone_change_defers_a_due_email(backend: Backend) {
    let app = spawn_app(backend).await;
    let flow = create_flow(&app, WINDOWED_EMAIL).await;
    let ann = Contact {
        id: "ann".into(),
        email: "ann@example.com".into(),
        tz: "America/New_York".into(),
        ..Default::default()
    };
    upsert(&app, ann.clone()).await;
    let id = enroll(&app, "ann", &flow).await;
    // Friday 20:00Z + 3h = 18:00 New York: the window is closed until Monday 09:00.
    app.advance(chrono::Duration::hours(3)).await;
    let e = enrollment(&app, &id).await;
    assert_eq!(e.current_step, "mail");
    assert_eq!(instant(&e.next_run_at), Some(at("2026-12-07T14:00:00Z")));

    upsert(
        &app,
        Contact {
            tz: "Asia/Tokyo".into(),
            ..ann
        },
    )
    .await;
    let e = enrollment(&app, &id).await;
    assert_eq!(
        instant(&e.next_run_at),
        Some(at("2026-12-07T14:00:00Z")),
        "the planned time is not recomputed: it was fixed once, when the step was entered"
    );

    advance_to(&app, "2026-12-07T14:00:00Z").await;
    let j = journey(&app, &id).await;
    let deferred = entries(&j, "deferred");
    assert_eq!(deferred.len(), 1, "{j:?}");
    assert_eq!(deferred[0]["step"], "mail");
    assert_eq!(deferred[0]["to"], "2026-12-08T00:00:00Z");
    assert!(
        entries(&j, "dispatch").is_empty(),
        "nothing sent at 23:00 Tokyo"
    );
    assert!(claimable(&app).await.is_empty());

    advance_to(&app, "2026-12-08T00:00:00Z").await;
    assert_eq!(
        claimable(&app).await,
        [(
            id.clone(),
            "email".to_string(),
            "ann@example.com".to_string()
        )]
    );
    assert_eq!(enrollment(&app, &id).await.status, "completed");
    app.stop().await;
}

/// +800 numbers have no zone: the SMS is held `ZONE_UNKNOWN`. Giving the contact a zone plans it
/// for the next opening of the SMS window there (20:00Z Friday is 21:00 in Paris: Saturday
/// 08:00 Paris, 07:00Z); giving it a New York number sends it at once (15:00 there).
async fn a_held_sms_is_released_when_the_contact_gets_a_zone_or_a_number(backend: Backend) {
    let app = spawn_app(backend).await;
    let flow = create_flow(&app, ONE_SMS).await;
    let held = |id: &str| Contact {
        id: id.into(),
        phone: "+80012345678".into(),
        ..Default::default()
    };
    upsert(&app, held("zed")).await;
    upsert(&app, held("pim")).await;
    let zed = enroll(&app, "zed", &flow).await;
    let pim = enroll(&app, "pim", &flow).await;
    for id in [&zed, &pim] {
        let e = enrollment(&app, id).await;
        assert_eq!((e.status.as_str(), e.next_run_at), ("active", None));
        let j = journey(&app, id).await;
        assert_eq!(entries(&j, "held")[0]["code"], "ZONE_UNKNOWN", "{j:?}");
    }
    assert!(claimable(&app).await.is_empty());

    upsert(
        &app,
        Contact {
            tz: "Europe/Paris".into(),
            ..held("zed")
        },
    )
    .await;
    let e = enrollment(&app, &zed).await;
    assert_eq!(instant(&e.next_run_at), Some(at("2026-12-05T07:00:00Z")));
    let j = journey(&app, &zed).await;
    let released = entries(&j, "released");
    assert_eq!(released.len(), 1, "{j:?}");
    assert_eq!(released[0]["scheduled"], "2026-12-05T07:00:00Z");

    upsert(
        &app,
        Contact {
            phone: "+12125551234".into(),
            ..held("pim")
        },
    )
    .await;
    assert_eq!(
        claimable(&app).await,
        [(pim.clone(), "sms".to_string(), "+12125551234".to_string())],
        "released and sent in the upsert's transaction"
    );
    assert_eq!(enrollment(&app, &pim).await.status, "completed");

    advance_to(&app, "2026-12-05T07:00:00Z").await;
    // (pim's SMS, never acknowledged, is claimable again once its lease ran out.)
    let zeds: Vec<_> = claimable(&app)
        .await
        .into_iter()
        .filter(|(e, _, _)| *e == zed)
        .collect();
    assert_eq!(
        zeds,
        [(zed.clone(), "sms".to_string(), "+80012345678".to_string())]
    );
    app.stop().await;
}

/// The same contact sent again changes nothing: the contact's `updated_at`, the enrollment's
/// row and its journey stay as they were.
async fn an_unchanged_upsert_writes_nothing(backend: Backend) {
    let app = spawn_app(backend).await;
    let flow = create_flow(&app, WAITING).await;
    let ann = Contact {
        id: "ann".into(),
        email: "ann@example.com".into(),
        phone: "+12125551234".into(),
        tz: "America/New_York".into(),
        ..Default::default()
    };
    let first = upsert(&app, ann.clone()).await;
    let id = enroll(&app, "ann", &flow).await;
    let before = (enrollment(&app, &id).await, journey(&app, &id).await);
    app.advance(chrono::Duration::hours(1)).await;

    let again = upsert(&app, ann.clone()).await;
    assert_eq!(
        again.updated_at, first.updated_at,
        "the contact is not rewritten"
    );
    let after = (enrollment(&app, &id).await, journey(&app, &id).await);
    assert_eq!(
        after, before,
        "the enrollment and its journey are untouched"
    );

    // A real change reaches the enrollment (its row changes), still without a journey entry
    // when nothing is held.
    upsert(
        &app,
        Contact {
            tz: "Europe/Paris".into(),
            ..ann
        },
    )
    .await;
    let changed = enrollment(&app, &id).await;
    assert_ne!(changed.updated_at, before.0.updated_at);
    assert_eq!(journey(&app, &id).await, before.1);
    app.stop().await;
}

/// `OptOut` is a contact change too: the running enrollment learns of it in the same
/// transaction, so its SMS an hour later is skipped (journey `skipped`), not sent.
async fn an_opt_out_reaches_a_planned_sms(backend: Backend) {
    let app = spawn_app(backend).await;
    let flow = create_flow(&app, LATER_SMS).await;
    upsert(
        &app,
        Contact {
            id: "ann".into(),
            phone: "+12125551234".into(),
            ..Default::default()
        },
    )
    .await;
    let id = enroll(&app, "ann", &flow).await;
    app.contacts()
        .await
        .opt_out(app.authed(OptOutRequest {
            contact_id: "ann".into(),
            channels: vec!["sms".into()],
        }))
        .await
        .unwrap();
    app.advance(chrono::Duration::hours(1)).await;
    let j = journey(&app, &id).await;
    let skipped = entries(&j, "skipped");
    assert_eq!(skipped.len(), 1, "{j:?}");
    assert_eq!(skipped[0]["reason"], "the contact opted out of sms");
    assert!(claimable(&app).await.is_empty());
    assert_eq!(enrollment(&app, &id).await.status, "completed");
    app.stop().await;
}
