//! What a reply says, end to end: a human reply's words are read into an intent on every path
//! a reply arrives by (ReportSignal, the JSON email webhook, Twilio SMS, a LinkedIn task's
//! text), raise `intent:<name>` ahead of `reply:<channel>` and `reply`, and an unsubscribe in
//! words opts the contact out of that channel unless the account lets the flow decide.

use super::support::*;
use crate::common::{spawn_app, Backend, TestApp};
use nudge::inbound::intent::{classify, Reply};
use nudge::proto::v1::*;
use serde_json::{json, Value};

backend_tests!(
    a_reply_takes_the_branch_its_words_choose,
    what_cannot_be_read_is_refused_and_changes_nothing,
    an_unsubscribe_in_words_opts_out_of_its_channel_unless_the_flow_decides,
    every_path_reads_a_reply_the_same_way,
);

/// Waits for a reply and sends it one way by what it says.
const INTENT_FLOW: &str = r#"{
  "name": "by-intent",
  "start": "wait",
  "steps": {
    "wait": { "type": "wait_for",
              "params": { "events": ["reply", "reply:email", "intent:not_now", "intent:interested"], "timeout": "5d" },
              "next": { "intent:interested": "end_yes", "intent:not_now": "end_later",
                        "reply:email": "end_email", "reply": "end_reply", "timeout": "end_silent" } },
    "end_yes":    { "type": "end", "params": { "outcome": "yes" } },
    "end_later":  { "type": "end", "params": { "outcome": "later" } },
    "end_email":  { "type": "end", "params": { "outcome": "email" } },
    "end_reply":  { "type": "end", "params": { "outcome": "reply" } },
    "end_silent": { "type": "end", "params": { "outcome": "silent" } }
  }
}"#;

/// Lets the flow decide what an unsubscribe in words does.
const UNSUBSCRIBE_EVENT_FLOW: &str = r#"{
  "name": "unsubscribe-event",
  "start": "wait",
  "steps": {
    "wait": { "type": "wait_for", "params": { "events": ["intent:unsubscribe", "reply"], "timeout": "5d" },
              "next": { "intent:unsubscribe": "end_asked", "reply": "end_reply", "timeout": "end_silent" } },
    "end_asked":  { "type": "end", "params": { "outcome": "asked_to_stop" } },
    "end_reply":  { "type": "end", "params": { "outcome": "reply" } },
    "end_silent": { "type": "end", "params": { "outcome": "silent" } }
  }
}"#;

/// A LinkedIn message task whose `replied` outcome ends the flow.
const LINKEDIN_FLOW: &str = r#"{
  "name": "linkedin",
  "start": "li",
  "steps": {
    "li":   { "type": "linkedin_message", "params": {}, "next": { "replied": "done", "then": "done" } },
    "done": { "type": "end", "params": { "outcome": "done" } }
  }
}"#;

/// A LinkedIn message task whose `replied` outcome goes on to wait two days.
const LINKEDIN_THEN_WAIT_FLOW: &str = r#"{
  "name": "linkedin-then-wait",
  "start": "li",
  "steps": {
    "li":    { "type": "linkedin_message", "params": {}, "next": { "replied": "pause", "then": "done" } },
    "pause": { "type": "wait", "params": { "duration": "2d" }, "next": { "then": "done" } },
    "done":  { "type": "end", "params": { "outcome": "done" } }
  }
}"#;

/// Reports a reply with its words and, when given, the intent someone named.
async fn report_words(
    app: &TestApp,
    contact: &str,
    channel: &str,
    text: &str,
    intent: &str,
) -> Result<ReportSignalResponse, tonic::Status> {
    app.signals()
        .await
        .report_signal(app.authed(ReportSignalRequest {
            contact: contact.into(),
            kind: "reply".into(),
            channel: channel.into(),
            text: text.into(),
            intent: intent.into(),
            ..Default::default()
        }))
        .await
        .map(|r| r.into_inner())
}

async fn contact_tz(app: &TestApp, id: &str, email: &str, phone: &str, tz: &str) {
    app.contacts()
        .await
        .upsert_contact(app.authed(UpsertContactRequest {
            contact: Some(Contact {
                id: id.into(),
                email: email.into(),
                phone: phone.into(),
                tz: tz.into(),
                ..Default::default()
            }),
        }))
        .await
        .unwrap();
}

async fn a_reply_takes_the_branch_its_words_choose(backend: Backend) {
    let app = spawn_app(backend).await;
    let flow = create_flow(&app, INTENT_FLOW).await;
    let mut ids = Vec::new();
    for c in ["yes", "later", "no", "sms", "named"] {
        contact_tz(&app, c, &format!("{c}@example.com"), "", "America/Denver").await;
        ids.push(enroll(&app, c, &flow).await);
    }
    // Interested: the intent beats reply:email and reply, whatever their order in the list.
    let r = report_words(
        &app,
        "yes",
        "email",
        "Sounds good, can we talk Thursday?",
        "",
    )
    .await
    .unwrap();
    let read = r.intent.expect("the words were read");
    assert_eq!(read.intent, "interested");
    assert!(
        read.evidence
            .iter()
            .all(|e| "Sounds good, can we talk Thursday?".contains(e.as_str())),
        "evidence is quoted as it stands: {read:?}"
    );
    assert!(!read.evidence.is_empty(), "{read:?}");
    assert_eq!(read.language, "en");
    assert_eq!(r.deliveries[0].branch, "intent:interested");
    // Not now, with a date: read in the contact's zone on the day it arrived (Thu 4 Dec 2026,
    // 13:00 in Denver), Q3 is the next third quarter.
    let r = report_words(
        &app,
        "later",
        "email",
        "Reach out again in Q3, budgets are frozen.",
        "",
    )
    .await
    .unwrap();
    let read = r.intent.unwrap();
    assert_eq!(
        (read.intent.as_str(), read.resume_on.as_str()),
        ("not_now", "2027-07-01")
    );
    assert_eq!(r.deliveries[0].branch, "intent:not_now");
    // Not interested is not listed: the specific reply:email before reply.
    let r = report_words(&app, "no", "email", "Not interested, thanks.", "")
        .await
        .unwrap();
    assert_eq!(r.intent.unwrap().intent, "not_interested");
    assert_eq!(r.deliveries[0].branch, "reply:email");
    // A reply without words has no intent and takes `reply`.
    let r = report_words(&app, "sms", "sms", "", "").await.unwrap();
    assert!(r.intent.is_none(), "{r:?}");
    assert_eq!(r.deliveries[0].branch, "reply");
    // An intent someone named skips the classifier: full confidence, no evidence.
    let r = report_words(&app, "named", "email", "", "not_now")
        .await
        .unwrap();
    let read = r.intent.unwrap();
    assert_eq!((read.intent.as_str(), read.confidence), ("not_now", 1.0));
    assert!(read.evidence.is_empty());
    let outcomes: Vec<String> = futures_outcomes(&app, &ids).await;
    assert_eq!(outcomes, ["yes", "later", "email", "reply", "later"]);
    // The signal's journey entry carries the reading (once: not again inside the payload),
    // and Watch streams the same entry.
    let entries = journey(&app, &ids[1]).await;
    let (_, signal) = entries
        .iter()
        .find(|(kind, _)| kind == "signal")
        .expect("a signal entry");
    assert_eq!(signal["intent"]["intent"], "not_now", "{signal}");
    assert_eq!(signal["intent"]["resume_on"], "2027-07-01", "{signal}");
    assert_eq!(signal["intent"]["language"], "en", "{signal}");
    assert!(
        signal
            .get("payload")
            .is_none_or(|p| p.get("intent").is_none()),
        "{signal}"
    );
    let mut watch = nudge::proto::v1::enrollment_service_client::EnrollmentServiceClient::new(
        app.channel().await,
    )
    .watch(app.authed(WatchRequest {
        contact_id: "later".into(),
        kinds: vec!["signal".into()],
        ..Default::default()
    }))
    .await
    .unwrap()
    .into_inner();
    let entry = tokio::time::timeout(std::time::Duration::from_secs(20), watch.message())
        .await
        .expect("Watch answers")
        .unwrap()
        .expect("an entry")
        .entry
        .unwrap();
    let detail = crate::common::detail_json(&entry);
    assert_eq!(&detail, signal, "Watch shows what the journey shows");
    // An open stream would hold the server's graceful stop.
    drop(watch);
    app.stop().await;
}

async fn futures_outcomes(app: &TestApp, ids: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for id in ids {
        out.push(enrollment(app, id).await.outcome);
    }
    out
}

async fn what_cannot_be_read_is_refused_and_changes_nothing(backend: Backend) {
    let app = spawn_app(backend).await;
    let flow = create_flow(&app, INTENT_FLOW).await;
    contact_tz(&app, "ann", "ann@example.com", "", "").await;
    let id = enroll(&app, "ann", &flow).await;
    let before = journey(&app, &id).await;
    let field_of = |e: &tonic::Status| {
        use tonic_types::StatusExt;
        e.get_details_bad_request()
            .map(|b| {
                b.field_violations
                    .iter()
                    .map(|v| v.field.clone())
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default()
    };
    // An intent that is none of the six.
    let e = report_words(&app, "ann", "email", "", "maybe")
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::InvalidArgument, "{e:?}");
    assert_eq!(field_of(&e), ["intent"]);
    assert!(e.message().contains("`not_now`"), "{}", e.message());
    // Words on a signal that is not a reply.
    let e = app
        .signals()
        .await
        .report_signal(app.authed(ReportSignalRequest {
            contact: "ann".into(),
            kind: "meeting_booked".into(),
            text: "see you then".into(),
            ..Default::default()
        }))
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::InvalidArgument, "{e:?}");
    assert_eq!(field_of(&e), ["text"]);
    // Nothing of either was stored or routed.
    assert_eq!(journey(&app, &id).await, before);
    assert_eq!(enrollment(&app, &id).await.status, "active");
    // A flow that listens for a misspelt intent is refused at the exact place, with the fix.
    let bad = INTENT_FLOW
        .replace("\"by-intent\"", "\"by-intent-2\"")
        .replace(
            "\"intent:not_now\", \"intent:interested\"]",
            "\"intent:not_now\", \"intent:intrested\"]",
        );
    let e = app
        .flows()
        .await
        .create_flow(app.authed(CreateFlowRequest { definition: bad }))
        .await
        .unwrap_err();
    assert!(e.message().contains("BAD_EVENT"), "{}", e.message());
    assert!(
        e.message().contains("/steps/wait/params/events/3"),
        "{}",
        e.message()
    );
    assert!(
        e.message().contains("Did you mean `intent:interested`?"),
        "{}",
        e.message()
    );
    app.stop().await;
}

async fn an_unsubscribe_in_words_opts_out_of_its_channel_unless_the_flow_decides(backend: Backend) {
    let app = spawn_app(backend).await;
    let routing = create_flow(&app, ROUTING_FLOW).await;
    let timed = create_flow(&app, TIMED_FLOW).await;
    contact_tz(&app, "ann", "ann@example.com", "+12125550100", "").await;
    let e1 = enroll(&app, "ann", &routing).await;
    let e2 = enroll(&app, "ann", &timed).await;
    // The default: an opt-out of the channel it came on; every enrollment exits.
    let r = report_words(
        &app,
        "ann",
        "email",
        "Please remove me from your mailing list.",
        "",
    )
    .await
    .unwrap();
    assert_eq!(r.intent.unwrap().intent, "unsubscribe");
    for id in [&e1, &e2] {
        let e = enrollment(&app, id).await;
        assert_eq!(
            (e.status.as_str(), e.reason.as_str()),
            ("exited", "opt_out:email"),
            "{id}"
        );
    }
    let ann = get_contact(&app, "ann").await;
    assert_eq!(ann.opted_out, ["email"], "only the channel it came on");
    // A rep who judges the words misread lifts it; SMS is refused (only START lifts that).
    let contacts = || async {
        nudge::proto::v1::contact_service_client::ContactServiceClient::new(app.channel().await)
    };
    let e = contacts()
        .await
        .lift_opt_out(app.authed(LiftOptOutRequest {
            contact_id: "ann".into(),
            channels: vec!["email".into(), "sms".into()],
        }))
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::InvalidArgument, "{e:?}");
    assert!(e.message().contains("START"), "{}", e.message());
    assert_eq!(
        get_contact(&app, "ann").await.opted_out,
        ["email"],
        "nothing lifted"
    );
    let lifted = contacts()
        .await
        .lift_opt_out(app.authed(LiftOptOutRequest {
            contact_id: "ann".into(),
            channels: vec!["email".into()],
        }))
        .await
        .unwrap()
        .into_inner()
        .contact
        .unwrap();
    assert!(lifted.opted_out.is_empty(), "{lifted:?}");
    assert_eq!(
        enrollment(&app, &e1).await.status,
        "exited",
        "nothing is re-enrolled"
    );
    // "No thanks" ends this sequence, not every one: no opt-out.
    contact_tz(&app, "bob", "bob@example.com", "", "").await;
    let e3 = enroll(&app, "bob", &routing).await;
    let r = report_words(&app, "bob", "email", "No thanks, not for us.", "")
        .await
        .unwrap();
    assert_eq!(r.intent.unwrap().intent, "not_interested");
    assert_eq!(enrollment(&app, &e3).await.outcome, "reply");
    assert!(get_contact(&app, "bob").await.opted_out.is_empty());
    // An account that lets the flow decide: `intent:unsubscribe` only.
    nudge::proto::v1::account_service_client::AccountServiceClient::new(app.channel().await)
        .update_account(app.authed(UpdateAccountRequest {
            account: Some(Account {
                reply_unsubscribe: "event".into(),
                ..Default::default()
            }),
            ..Default::default()
        }))
        .await
        .unwrap();
    let decide = create_flow(&app, UNSUBSCRIBE_EVENT_FLOW).await;
    contact_tz(&app, "cy", "cy@example.com", "", "").await;
    let e4 = enroll(&app, "cy", &decide).await;
    let r = report_words(&app, "cy", "email", "Stop emailing me.", "")
        .await
        .unwrap();
    assert_eq!(r.intent.unwrap().intent, "unsubscribe");
    assert_eq!(r.deliveries[0].branch, "intent:unsubscribe");
    let e = enrollment(&app, &e4).await;
    assert_eq!(
        (e.status.as_str(), e.outcome.as_str()),
        ("completed", "asked_to_stop")
    );
    assert!(get_contact(&app, "cy").await.opted_out.is_empty());
    app.stop().await;
}

/// Enrollment `id`'s open task.
async fn open_task(app: &TestApp, id: &str) -> Task {
    app.signals()
        .await
        .list_tasks(app.authed(ListTasksRequest {
            enrollment_id: id.into(),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner()
        .tasks
        .remove(0)
}

async fn get_contact(app: &TestApp, id: &str) -> Contact {
    app.contacts()
        .await
        .get_contact(app.authed(GetContactRequest { id: id.into() }))
        .await
        .unwrap()
        .into_inner()
        .contact
        .unwrap()
}

/// The stored signal with `provider_id`: its events and its stored reading.
async fn stored(app: &TestApp, provider_id: &str) -> (Vec<String>, Value) {
    let row = nudge::store::signals::by_provider_id(&app.state.core.db, "default", provider_id)
        .await
        .unwrap()
        .unwrap_or_else(|| panic!("no signal {provider_id}"));
    let payload: Value = serde_json::from_str(&row.payload).unwrap();
    (
        serde_json::from_str(&row.raises).unwrap(),
        payload["intent"].clone(),
    )
}

/// What the classifier itself makes of `text` from `contact_email` in Denver, now.
fn expected(app: &TestApp, text: &str, from: Option<&str>, contact_email: Option<&str>) -> Value {
    let reply = Reply {
        text,
        received_at: Some(app.clock_now()),
        tz: Some(chrono_tz::America::Denver),
        from,
        contact_email,
        ..Default::default()
    };
    serde_json::to_value(classify(&reply)).unwrap()
}

async fn every_path_reads_a_reply_the_same_way(backend: Backend) {
    let app = spawn_app(backend).await;
    set_twilio_token(&app).await;
    let flow = create_flow(&app, ROUTING_FLOW).await;
    contact_tz(
        &app,
        "ann",
        "ann@example.com",
        "+12125550100",
        "America/Denver",
    )
    .await;
    enroll(&app, "ann", &flow).await;

    // ReportSignal's text.
    let text = "We're happy with our current vendor, thanks.";
    app.signals()
        .await
        .report_signal(app.authed(ReportSignalRequest {
            contact: "ann".into(),
            kind: "reply".into(),
            channel: "email".into(),
            text: text.into(),
            provider_id: "crm-1".into(),
            ..Default::default()
        }))
        .await
        .unwrap();
    let (raises, read) = stored(&app, "crm-1").await;
    assert_eq!(read, expected(&app, text, None, Some("ann@example.com")));
    assert_eq!(read["intent"], "not_interested");
    assert_eq!(raises, ["intent:not_interested", "reply", "reply:email"]);

    // The JSON email webhook: a reply in the thread of nudge's email.
    let email_flow = create_flow(&app, EMAIL_FLOW).await;
    let id = enroll(&app, "ann", &email_flow).await;
    app.advance(chrono::Duration::seconds(1)).await;
    let message_id = claimed_message_id(&app, &id).await;
    let text = "I'm not the right person for this. Try Jane Smith, jane.smith@example.com.";
    let reply =
        json!({"headers": {"Message-ID": "<r1@mail.example.com>", "In-Reply-To": message_id},
                       "from": "Ann <ann@example.com>", "subject": "Re: intro", "text": text})
        .to_string();
    let secret = webhook_secret(&app).await;
    let (code, body) = http(
        &app,
        "/webhooks/email",
        &signed(&secret, signing_now(), reply.as_bytes()),
        reply.as_bytes(),
    )
    .await;
    assert_eq!(code, 200, "{body}");
    let answered = json_body(&body)["intent"].clone();
    let (raises, read) = stored(&app, "email:<r1@mail.example.com>").await;
    let want = expected(
        &app,
        text,
        Some("Ann <ann@example.com>"),
        Some("ann@example.com"),
    );
    assert_eq!(
        (&read["intent"], &read["referral"]),
        (&want["intent"], &want["referral"])
    );
    assert_eq!(read["intent"], "wrong_person");
    assert_eq!(
        read["referral"],
        json!({"email": "jane.smith@example.com", "name": "Jane Smith"})
    );
    assert_eq!(answered, read, "the webhook answers what it stored");
    assert_eq!(raises[0], "intent:wrong_person");
    // An out-of-office notice in the same thread is no reply: it has no intent, whatever its
    // words say.
    let ooo = json!({"headers": {"Message-ID": "<ooo1@mail.example.com>", "In-Reply-To": message_id,
                                 "Auto-Submitted": "auto-replied"},
                     "from": "Ann <ann@example.com>", "subject": "Out of office",
                     "text": "I am out of the office until Monday. Please remove me from this thread."})
    .to_string();
    let (code, body) = http(
        &app,
        "/webhooks/email",
        &signed(&secret, signing_now(), ooo.as_bytes()),
        ooo.as_bytes(),
    )
    .await;
    assert_eq!(code, 200, "{body}");
    assert!(json_body(&body).get("intent").is_none(), "{body}");
    let (raises, read) = stored(&app, "email:<ooo1@mail.example.com>").await;
    assert!(read.is_null(), "{read}");
    assert!(
        !raises.iter().any(|r| r.starts_with("intent:")),
        "{raises:?}"
    );

    // Twilio SMS: the body.
    let text = "not now, try me next month";
    let (code, body) = sms(&app, "+12125550100", text, "SM-intent-1").await;
    assert_eq!(code, 200, "{body}");
    let (raises, read) = stored(&app, "twilio:SM-intent-1").await;
    assert_eq!(read, expected(&app, text, None, Some("ann@example.com")));
    assert_eq!(
        (&read["intent"], &read["resume_on"]),
        (&json!("not_now"), &json!("2027-01-01"))
    );
    assert_eq!(raises, ["intent:not_now", "reply", "reply:sms"]);

    // A LinkedIn message task completed `replied` with the reply's words.
    let li = create_flow(&app, LINKEDIN_FLOW).await;
    let li_id = enroll(&app, "ann", &li).await;
    app.advance(chrono::Duration::seconds(1)).await;
    let task = open_task(&app, &li_id).await;
    let text = "Sure, send me more info about pricing.";
    app.signals()
        .await
        .complete_task(app.authed(CompleteTaskRequest {
            task_id: task.id.clone(),
            outcome: "replied".into(),
            text: text.into(),
        }))
        .await
        .unwrap();
    let (raises, read) = stored(&app, &format!("task:{}", task.id)).await;
    assert_eq!(read, expected(&app, text, None, Some("ann@example.com")));
    assert_eq!(read["intent"], "interested");
    assert_eq!(raises[0], "intent:interested");
    assert!(raises.contains(&"reply:linkedin".to_string()), "{raises:?}");

    // A LinkedIn reply that asks to stop opts the contact out of LinkedIn: every enrollment
    // exits, the task's own included.
    contact_tz(&app, "lee", "lee@example.com", "", "America/Denver").await;
    let waiting = enroll(&app, "lee", &flow).await;
    let li_wait = create_flow(&app, LINKEDIN_THEN_WAIT_FLOW).await;
    let li_own = enroll(&app, "lee", &li_wait).await;
    app.advance(chrono::Duration::seconds(1)).await;
    let task = open_task(&app, &li_own).await;
    app.signals()
        .await
        .complete_task(app.authed(CompleteTaskRequest {
            task_id: task.id.clone(),
            outcome: "replied".into(),
            text: "Please stop messaging me.".into(),
        }))
        .await
        .unwrap();
    let (raises, read) = stored(&app, &format!("task:{}", task.id)).await;
    assert_eq!(read["intent"], "unsubscribe");
    assert!(raises.is_empty(), "an opt-out raises nothing: {raises:?}");
    assert_eq!(get_contact(&app, "lee").await.opted_out, ["linkedin"]);
    for id in [&waiting, &li_own] {
        let e = enrollment(&app, id).await;
        assert_eq!(
            (e.status.as_str(), e.reason.as_str()),
            ("exited", "opt_out:linkedin"),
            "{id}"
        );
    }
    app.stop().await;
}
