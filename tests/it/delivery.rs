//! The delivery side of the outbox (docs/service.md, "Delivery") and a contact's journey (docs/service.md, "The journey"), end to end:
//! `ClaimDispatches` by channel, repeated and retried `AckDispatch`, `BatchAckDispatch`,
//! `GetDispatch` /
//! `ListDispatches` for held and pending dispatches, tasks that carry their contact, and
//! `ListJourney` across a contact's enrollments.

use crate::common::{spawn_app, with_token, Backend, TestApp};
use nudge::auth::Scope;
use nudge::proto::v1::ack_dispatch_request::RetryWhen;
use nudge::proto::v1::dispatch_service_client::DispatchServiceClient;
use nudge::proto::v1::enrollment_service_client::EnrollmentServiceClient;
use nudge::proto::v1::signal_service_client::SignalServiceClient;
use nudge::proto::v1::test_clock_service_client::TestClockServiceClient;
use nudge::proto::v1::*;
use tonic::transport::Channel;
use tonic::Code;

backend_tests!(
    claim_takes_only_the_channels_asked_for,
    a_repeated_ack_answers_the_same,
    a_batch_of_acks_answers_each_alone,
    a_transient_failure_is_retried_then_failed,
    held_and_pending_dispatches_are_listed_with_why,
    tasks_carry_their_contact,
    list_journey_interleaves_a_contacts_enrollments,
    list_journey_refuses_what_it_cannot_answer,
);

const MINUTE_MS: i64 = 60_000;

struct Clients {
    enrollments: EnrollmentServiceClient<Channel>,
    dispatches: DispatchServiceClient<Channel>,
    signals: SignalServiceClient<Channel>,
    clock: TestClockServiceClient<Channel>,
}

async fn clients(app: &TestApp) -> Clients {
    let ch = app.channel().await;
    Clients {
        enrollments: EnrollmentServiceClient::new(ch.clone()),
        dispatches: DispatchServiceClient::new(ch.clone()),
        signals: SignalServiceClient::new(ch.clone()),
        clock: TestClockServiceClient::new(ch),
    }
}

/// One-step flows with no send window and no jitter, so each goes out at once; `wait-mail`
/// waits an hour first; `call-now` opens a call task.
async fn setup(app: &TestApp) {
    let flows = [
        r#"{"name": "mail-now", "start": "mail", "steps": {
            "mail": {"type": "email", "params": {"template": "hi"}, "next": {"then": "done"}},
            "done": {"type": "end"}}}"#,
        r#"{"name": "text-now", "start": "text", "steps": {
            "text": {"type": "sms", "params": {"template": "ping"}, "next": {"then": "done"}},
            "done": {"type": "end"}}}"#,
        r#"{"name": "wait-mail", "start": "pause", "steps": {
            "pause": {"type": "wait", "params": {"duration": "1h"}, "next": {"then": "mail"}},
            "mail": {"type": "email", "params": {"template": "later"}, "next": {"then": "done"}},
            "done": {"type": "end"}}}"#,
        r#"{"name": "call-now", "start": "call", "steps": {
            "call": {"type": "call", "params": {}, "next": {"then": "done"}},
            "done": {"type": "end"}}}"#,
    ];
    for definition in flows {
        app.flows()
            .await
            .create_flow(app.authed(CreateFlowRequest {
                definition: definition.into(),
            }))
            .await
            .unwrap();
    }
    for id in ["ann", "bob"] {
        upsert(app, id, "+12125551234", "America/New_York").await;
    }
    // +800 (international freephone) maps to no zone: an SMS to it is held, ZONE_UNKNOWN.
    upsert(app, "zed", "+80012345678", "").await;
}

async fn upsert(app: &TestApp, id: &str, phone: &str, tz: &str) {
    let mut attributes = prost_types::Struct::default();
    attributes.fields.insert(
        "name".into(),
        prost_types::Value {
            kind: Some(prost_types::value::Kind::StringValue(format!("{id} Lee"))),
        },
    );
    app.contacts()
        .await
        .upsert_contact(app.authed(UpsertContactRequest {
            contact: Some(Contact {
                id: id.into(),
                email: format!("{id}@example.com"),
                phone: phone.into(),
                tz: tz.into(),
                attributes: Some(attributes),
                ..Default::default()
            }),
        }))
        .await
        .unwrap();
}

async fn enroll(app: &TestApp, c: &mut Clients, contact: &str, flow: &str) -> Enrollment {
    c.enrollments
        .enroll(app.authed(EnrollRequest {
            contact_id: contact.into(),
            flow_id: flow.into(),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner()
        .enrollment
        .unwrap()
}

async fn advance(app: &TestApp, c: &mut Clients, by_ms: i64) {
    c.clock
        .advance(app.authed(AdvanceRequest {
            target: Some(advance_request::Target::ByMs(by_ms)),
        }))
        .await
        .unwrap();
}

async fn claim(app: &TestApp, c: &mut Clients, channels: &[&str]) -> Vec<Dispatch> {
    c.dispatches
        .claim_dispatches(app.authed(ClaimDispatchesRequest {
            lease_ms: 10 * MINUTE_MS,
            max_count: 10,
            channels: channels.iter().map(|c| c.to_string()).collect(),
        }))
        .await
        .unwrap()
        .into_inner()
        .dispatches
}

async fn ack(
    app: &TestApp,
    c: &mut Clients,
    d: &Dispatch,
    req: AckDispatchRequest,
) -> Result<AckDispatchResponse, tonic::Status> {
    c.dispatches
        .ack_dispatch(app.authed(AckDispatchRequest {
            id: d.id.clone(),
            lease_token: d.lease_token.clone(),
            ..req
        }))
        .await
        .map(|r| r.into_inner())
}

fn sent(provider: &str) -> AckDispatchRequest {
    AckDispatchRequest {
        provider_message_id: provider.into(),
        ..Default::default()
    }
}

fn failed(why: &str) -> AckDispatchRequest {
    AckDispatchRequest {
        failure: why.into(),
        ..Default::default()
    }
}

fn retry(why: &str, when: Option<RetryWhen>) -> AckDispatchRequest {
    AckDispatchRequest {
        failure: why.into(),
        retry: true,
        retry_when: when,
        ..Default::default()
    }
}

async fn get_dispatch(app: &TestApp, c: &mut Clients, id: &str) -> Dispatch {
    c.dispatches
        .get_dispatch(app.authed(GetDispatchRequest { id: id.into() }))
        .await
        .unwrap()
        .into_inner()
        .dispatch
        .unwrap()
}

async fn journey(app: &TestApp, c: &mut Clients, id: &str) -> Vec<JourneyEntry> {
    c.enrollments
        .get_journey(app.authed(GetJourneyRequest {
            enrollment_id: id.into(),
            page: Some(PageRequest {
                page_size: 500,
                page_token: String::new(),
            }),
        }))
        .await
        .unwrap()
        .into_inner()
        .entries
}

fn detail(e: &JourneyEntry) -> serde_json::Value {
    crate::common::detail_json(e)
}

fn acks(entries: &[JourneyEntry]) -> Vec<serde_json::Value> {
    entries
        .iter()
        .filter(|e| e.kind == "dispatch_acked")
        .map(detail)
        .collect()
}

fn now_ms(app: &TestApp) -> i64 {
    nudge::clock::to_millis(nudge::clock::Clock::now(app.clock.as_ref()))
}

fn ms(t: &Option<prost_types::Timestamp>) -> i64 {
    let t = t.as_ref().unwrap();
    t.seconds * 1000 + i64::from(t.nanos) / 1_000_000
}

async fn claim_takes_only_the_channels_asked_for(backend: Backend) {
    let app = spawn_app(backend).await;
    setup(&app).await;
    let mut c = clients(&app).await;
    enroll(&app, &mut c, "ann", "mail-now").await;
    enroll(&app, &mut c, "bob", "text-now").await;
    advance(&app, &mut c, 1_000).await;

    let sms = claim(&app, &mut c, &["sms"]).await;
    assert_eq!(sms.len(), 1, "{sms:?}");
    assert_eq!(sms[0].channel, "sms");
    assert!(
        claim(&app, &mut c, &["sms"]).await.is_empty(),
        "the SMS worker never takes email"
    );
    let email = claim(&app, &mut c, &["email"]).await;
    assert_eq!(email.len(), 1, "{email:?}");
    assert_eq!(email[0].channel, "email");
    assert!(
        claim(&app, &mut c, &["email", "sms"]).await.is_empty(),
        "both leased"
    );

    // No filter: every channel, once the leases lapse.
    advance(&app, &mut c, 11 * MINUTE_MS).await;
    let all = claim(&app, &mut c, &[]).await;
    let mut channels: Vec<_> = all.iter().map(|d| d.channel.as_str()).collect();
    channels.sort();
    assert_eq!(channels, ["email", "sms"]);

    for (bad, field) in [("call", "channels[0]"), ("fax", "channels[0]")] {
        let err = c
            .dispatches
            .claim_dispatches(app.authed(ClaimDispatchesRequest {
                channels: vec![bad.into()],
                ..Default::default()
            }))
            .await
            .unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument, "{err:?}");
        assert!(err.message().contains(field), "{err:?}");
    }
    app.stop().await;
}

async fn a_repeated_ack_answers_the_same(backend: Backend) {
    let app = spawn_app(backend).await;
    setup(&app).await;
    let mut c = clients(&app).await;
    let e = enroll(&app, &mut c, "ann", "mail-now").await;
    enroll(&app, &mut c, "bob", "mail-now").await;
    advance(&app, &mut c, 1_000).await;
    let claimed = claim(&app, &mut c, &[]).await;
    assert_eq!(claimed.len(), 2);
    let (mine, other) = if claimed[0].enrollment_id == e.id {
        (&claimed[0], &claimed[1])
    } else {
        (&claimed[1], &claimed[0])
    };

    let first = ack(&app, &mut c, mine, sent("ses-1")).await.unwrap();
    assert_eq!(first.status, "sent");
    let again = ack(&app, &mut c, mine, sent("ses-1")).await.unwrap();
    assert_eq!(again, first, "the same ack, the same answer");
    for different in [sent("ses-2"), failed("bounced")] {
        let err = ack(&app, &mut c, mine, different).await.unwrap_err();
        assert_eq!(err.code(), Code::FailedPrecondition, "{err:?}");
    }
    let d = get_dispatch(&app, &mut c, &mine.id).await;
    assert_eq!(d.status, "sent");
    assert_eq!(d.provider_message_id, "ses-1");

    // A failure repeated is the same failure.
    let failed_once = ack(&app, &mut c, other, failed("no such mailbox"))
        .await
        .unwrap();
    assert_eq!(failed_once.status, "failed");
    assert_eq!(
        ack(&app, &mut c, other, failed("no such mailbox"))
            .await
            .unwrap(),
        failed_once
    );
    let err = ack(&app, &mut c, other, sent("ses-3")).await.unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition, "{err:?}");

    // One journey entry for the ack, however often it was repeated.
    let entries = acks(&journey(&app, &mut c, &e.id).await);
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(entries[0]["outcome"], "sent");
    assert_eq!(entries[0]["provider_message_id"], "ses-1");
    assert_eq!(entries[0]["attempt"], 1);
    app.stop().await;
}

async fn batch_ack(
    app: &TestApp,
    c: &mut Clients,
    items: Vec<AckDispatchRequest>,
) -> Result<Vec<BatchAckDispatchResult>, tonic::Status> {
    c.dispatches
        .batch_ack_dispatch(app.authed(BatchAckDispatchRequest { items }))
        .await
        .map(|r| r.into_inner().results)
}

/// `BatchAckDispatch`: each item answered as `AckDispatch` would answer it, in order, in one
/// transaction; a refused item (unknown id, lost lease, bad outcome, twice in the call) refuses
/// only itself, and every applied ack is in its enrollment's journey.
async fn a_batch_of_acks_answers_each_alone(backend: Backend) {
    let app = spawn_app(backend).await;
    setup(&app).await;
    let mut c = clients(&app).await;
    let ann_mail = enroll(&app, &mut c, "ann", "mail-now").await;
    let ann_text = enroll(&app, &mut c, "ann", "text-now").await;
    let bob_mail = enroll(&app, &mut c, "bob", "mail-now").await;
    let bob_text = enroll(&app, &mut c, "bob", "text-now").await;
    advance(&app, &mut c, 1_000).await;
    let claimed = claim(&app, &mut c, &[]).await;
    assert_eq!(claimed.len(), 4, "{claimed:?}");
    let of = |e: &Enrollment| claimed.iter().find(|d| d.enrollment_id == e.id).unwrap();
    let with = |d: &Dispatch, req: AckDispatchRequest| AckDispatchRequest {
        id: d.id.clone(),
        lease_token: d.lease_token.clone(),
        ..req
    };
    let (mail, text, other) = (of(&ann_mail), of(&ann_text), of(&bob_mail));
    let stale = of(&bob_text);
    let at = now_ms(&app);
    let items = vec![
        with(mail, sent("ses-1")),
        with(other, failed("no such mailbox")),
        with(
            text,
            retry("carrier busy", Some(RetryWhen::RetryAfterMs(5 * MINUTE_MS))),
        ),
        // An id that names nothing, a stale lease, the same dispatch twice, a bad outcome.
        AckDispatchRequest {
            id: "dp_nothing_here".into(),
            lease_token: mail.lease_token.clone(),
            ..sent("ses-x")
        },
        AckDispatchRequest {
            lease_token: "not-the-lease".into(),
            ..with(stale, sent("ses-y"))
        },
        with(mail, sent("ses-1")),
        AckDispatchRequest {
            retry_when: Some(RetryWhen::RetryAfterMs(1)),
            ..with(text, retry("again", None))
        },
    ];
    let results = batch_ack(&app, &mut c, items.clone()).await.unwrap();
    assert_eq!(results.len(), items.len(), "{results:?}");
    let status = |r: &BatchAckDispatchResult| r.ack.as_ref().map(|a| a.status.clone());
    assert_eq!(status(&results[0]).as_deref(), Some("sent"), "{results:?}");
    assert_eq!(
        status(&results[1]).as_deref(),
        Some("failed"),
        "{results:?}"
    );
    assert_eq!(
        status(&results[2]).as_deref(),
        Some("pending"),
        "{results:?}"
    );
    assert_eq!(
        ms(&results[2].ack.as_ref().unwrap().due_at),
        at + 5 * MINUTE_MS,
        "the retry is due when asked"
    );
    let codes: Vec<&str> = results[3..].iter().map(|r| r.error_code.as_str()).collect();
    assert_eq!(
        codes,
        [
            "NOT_FOUND",
            "FAILED_PRECONDITION",
            "INVALID_ARGUMENT",
            "INVALID_ARGUMENT"
        ],
        "{results:?}"
    );
    assert!(results[3..].iter().all(|r| r.ack.is_none()));
    assert!(results[5].error_message.contains("twice"), "{results:?}");
    assert_eq!(results[5].problems[0].path, "id");
    assert_eq!(results[6].problems[0].path, "retry_after_ms", "{results:?}");

    // Stored as each ack alone would store it, one journey entry per applied ack.
    assert_eq!(
        get_dispatch(&app, &mut c, &mail.id)
            .await
            .provider_message_id,
        "ses-1"
    );
    assert_eq!(get_dispatch(&app, &mut c, &other.id).await.status, "failed");
    assert_eq!(get_dispatch(&app, &mut c, &text.id).await.status, "pending");
    assert!(acks(&journey(&app, &mut c, &bob_text.id).await).is_empty());
    let outcomes = |entries: Vec<serde_json::Value>| -> Vec<String> {
        entries
            .iter()
            .map(|e| e["outcome"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        outcomes(acks(&journey(&app, &mut c, &ann_mail.id).await)),
        ["sent"]
    );
    assert_eq!(
        outcomes(acks(&journey(&app, &mut c, &ann_text.id).await)),
        ["retry"]
    );
    assert_eq!(
        outcomes(acks(&journey(&app, &mut c, &bob_mail.id).await)),
        ["failed"]
    );

    // The same batch again: the applied acks repeat their answers and write nothing.
    let again = batch_ack(&app, &mut c, items[..3].to_vec()).await.unwrap();
    assert_eq!(again, results[..3].to_vec());
    assert_eq!(acks(&journey(&app, &mut c, &ann_mail.id).await).len(), 1);

    // No items, or more than a claim's worth, refuses the call and names `items`.
    for n in [0, 1_001] {
        let err = batch_ack(&app, &mut c, vec![with(mail, sent("ses-1")); n])
            .await
            .unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument, "{err:?}");
        assert!(err.message().contains("items"), "{err:?}");
    }
    app.stop().await;
}

async fn a_transient_failure_is_retried_then_failed(backend: Backend) {
    use nudge::service::dispatches::{MAX_ATTEMPTS, RETRY_BACKOFF_MS};
    let app = spawn_app(backend).await;
    setup(&app).await;
    let mut c = clients(&app).await;
    let e = enroll(&app, &mut c, "ann", "mail-now").await;
    advance(&app, &mut c, 1_000).await;

    // Attempt 1, nudge's backoff: due again a minute later, not before.
    let d = claim(&app, &mut c, &["email"]).await.remove(0);
    assert_eq!(d.attempts, 1);
    let at = now_ms(&app);
    let r = ack(&app, &mut c, &d, retry("421 try later", None))
        .await
        .unwrap();
    assert_eq!(r.status, "pending");
    assert_eq!(ms(&r.due_at), at + RETRY_BACKOFF_MS);
    assert_eq!(r.attempts, 1);
    assert_eq!(
        ack(&app, &mut c, &d, retry("421 try later", None))
            .await
            .unwrap(),
        r,
        "a repeated retry ack answers the same"
    );
    let err = ack(&app, &mut c, &d, sent("ses-1")).await.unwrap_err();
    assert_eq!(err.code(), Code::FailedPrecondition, "{err:?}");
    let shown = get_dispatch(&app, &mut c, &d.id).await;
    assert_eq!(shown.status, "pending");
    assert_eq!(shown.failure, "421 try later");
    assert_eq!(ms(&shown.due_at), at + RETRY_BACKOFF_MS);
    assert!(shown.lease_token.is_empty(), "the lease is the claimer's");
    assert!(claim(&app, &mut c, &[]).await.is_empty(), "not due yet");

    // Attempt 2 after the backoff; attempt 3 at the instant asked for; 4 after a duration.
    advance(&app, &mut c, RETRY_BACKOFF_MS).await;
    let d = claim(&app, &mut c, &[]).await.remove(0);
    assert_eq!(d.attempts, 2);
    let at = now_ms(&app) + 90_000;
    let when = RetryWhen::RetryAt(prost_types::Timestamp {
        seconds: at / 1000,
        nanos: 0,
    });
    let r = ack(&app, &mut c, &d, retry("rate limited", Some(when)))
        .await
        .unwrap();
    assert_eq!(ms(&r.due_at), at);
    advance(&app, &mut c, 90_000).await;
    let d = claim(&app, &mut c, &[]).await.remove(0);
    assert_eq!(d.attempts, 3);
    let r = ack(
        &app,
        &mut c,
        &d,
        retry("timeout", Some(RetryWhen::RetryAfterMs(5_000))),
    )
    .await
    .unwrap();
    assert_eq!(ms(&r.due_at), now_ms(&app) + 5_000);
    let mut d = d;
    for attempt in 4..=MAX_ATTEMPTS {
        advance(&app, &mut c, 5_000).await;
        d = claim(&app, &mut c, &[]).await.remove(0);
        assert_eq!(d.attempts, attempt);
        if attempt < MAX_ATTEMPTS {
            let r = ack(
                &app,
                &mut c,
                &d,
                retry("timeout", Some(RetryWhen::RetryAfterMs(5_000))),
            )
            .await
            .unwrap();
            assert_eq!(r.status, "pending");
        }
    }
    // The last attempt: a retry is failed instead, and stays so.
    let r = ack(&app, &mut c, &d, retry("timeout", None)).await.unwrap();
    assert_eq!(r.status, "failed");
    assert_eq!(
        ack(&app, &mut c, &d, retry("timeout", None)).await.unwrap(),
        r
    );
    advance(&app, &mut c, 24 * 60 * MINUTE_MS).await;
    assert!(
        claim(&app, &mut c, &[]).await.is_empty(),
        "gave up: never claimed again"
    );
    assert_eq!(get_dispatch(&app, &mut c, &d.id).await.status, "failed");

    // Every attempt is in the journey.
    let entries = acks(&journey(&app, &mut c, &e.id).await);
    let outcomes: Vec<_> = entries
        .iter()
        .map(|a| {
            (
                a["attempt"].as_i64().unwrap(),
                a["outcome"].as_str().unwrap(),
            )
        })
        .collect();
    let mut expected: Vec<(i64, &str)> =
        (1..i64::from(MAX_ATTEMPTS)).map(|n| (n, "retry")).collect();
    expected.push((i64::from(MAX_ATTEMPTS), "failed"));
    assert_eq!(outcomes, expected);
    assert_eq!(entries.last().unwrap()["gave_up"], true);
    assert_eq!(entries[0]["failure"], "421 try later");
    assert!(entries[0]["retry_at"].is_string(), "{:?}", entries[0]);

    // Out of range: refused with the field named.
    let err = c
        .dispatches
        .ack_dispatch(app.authed(AckDispatchRequest {
            id: d.id.clone(),
            lease_token: d.lease_token.clone(),
            failure: "x".into(),
            retry_when: Some(RetryWhen::RetryAfterMs(999_999_999)),
            ..Default::default()
        }))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("retry_after_ms"), "{err:?}");
    app.stop().await;
}

async fn held_and_pending_dispatches_are_listed_with_why(backend: Backend) {
    let app = spawn_app(backend).await;
    setup(&app).await;
    let mut c = clients(&app).await;
    let held_in = enroll(&app, &mut c, "zed", "text-now").await;
    let pending_in = enroll(&app, &mut c, "ann", "mail-now").await;
    enroll(&app, &mut c, "bob", "mail-now").await;
    advance(&app, &mut c, 1_000).await;

    let list = |enrollment_id: &str, status: &str, page_size: i32, page_token: String| {
        ListDispatchesRequest {
            enrollment_id: enrollment_id.into(),
            status: status.into(),
            page: Some(PageRequest {
                page_size,
                page_token,
            }),
        }
    };
    let held = c
        .dispatches
        .list_dispatches(app.authed(list("", "held", 0, String::new())))
        .await
        .unwrap()
        .into_inner()
        .dispatches;
    assert_eq!(held.len(), 1, "{held:?}");
    assert_eq!(held[0].enrollment_id, held_in.id);
    assert_eq!(held[0].status, "held");
    assert_eq!(held[0].hold_code, "ZONE_UNKNOWN");
    assert!(!held[0].failure.is_empty(), "what to fix");
    assert_eq!(held[0].channel, "sms");
    assert_eq!(get_dispatch(&app, &mut c, &held[0].id).await, held[0]);

    let pending = c
        .dispatches
        .list_dispatches(app.authed(list(&pending_in.id, "pending", 0, String::new())))
        .await
        .unwrap()
        .into_inner()
        .dispatches;
    assert_eq!(pending.len(), 1, "{pending:?}");
    assert_eq!(pending[0].status, "pending");
    assert!(pending[0].hold_code.is_empty());
    assert!(ms(&pending[0].due_at) <= now_ms(&app));

    // Claimed: still pending, leased, the token not shown; pages of one reassemble the lot.
    claim(&app, &mut c, &[]).await;
    let mut all = Vec::new();
    let mut token = String::new();
    loop {
        let page = c
            .dispatches
            .list_dispatches(app.authed(list("", "", 1, token.clone())))
            .await
            .unwrap()
            .into_inner();
        assert!(page.dispatches.len() <= 1);
        all.extend(page.dispatches);
        if page.next_page_token.is_empty() {
            break;
        }
        token = page.next_page_token;
    }
    assert_eq!(all.len(), 3, "{all:?}");
    assert!(all.windows(2).all(|w| w[0].id < w[1].id), "ordered by id");
    assert!(all.iter().all(|d| d.lease_token.is_empty()));
    assert!(all
        .iter()
        .filter(|d| d.status == "pending")
        .all(|d| d.lease_until.is_some()));

    let err = c
        .dispatches
        .get_dispatch(app.authed(GetDispatchRequest {
            id: "dp_nope".into(),
        }))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    let err = c
        .dispatches
        .list_dispatches(app.authed(list("", "lost", 0, String::new())))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("status"), "{err:?}");
    app.stop().await;
}

async fn tasks_carry_their_contact(backend: Backend) {
    let app = spawn_app(backend).await;
    setup(&app).await;
    let mut c = clients(&app).await;
    enroll(&app, &mut c, "ann", "call-now").await;
    advance(&app, &mut c, 1_000).await;
    let list = |c: &mut Clients| {
        let mut s = c.signals.clone();
        let req = app.authed(ListTasksRequest::default());
        async move { s.list_tasks(req).await.unwrap().into_inner().tasks }
    };
    let tasks = list(&mut c).await;
    assert_eq!(tasks.len(), 1, "{tasks:?}");
    assert_eq!(tasks[0].contact_id, "ann");
    assert_eq!(tasks[0].contact_name, "ann Lee");
    assert_eq!(tasks[0].contact_email, "ann@example.com");
    assert_eq!(tasks[0].contact_phone, "+12125551234");

    // The contact as it is now.
    upsert(&app, "ann", "+12125559876", "America/New_York").await;
    let tasks = list(&mut c).await;
    assert_eq!(tasks[0].contact_phone, "+12125559876");
    let done = c
        .signals
        .complete_task(app.authed(CompleteTaskRequest {
            task_id: tasks[0].id.clone(),
            outcome: "no_answer".into(),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner()
        .task
        .unwrap();
    assert_eq!(done.contact_name, "ann Lee");
    assert_eq!(done.contact_phone, "+12125559876");
    app.stop().await;
}

/// Every entry of `contact`'s journey, in pages of `size`.
async fn list_journey(
    c: &mut Clients,
    token: &str,
    contact: &str,
    size: i32,
) -> Vec<ContactJourneyEntry> {
    let mut out = Vec::new();
    let mut page_token = String::new();
    loop {
        let page = c
            .enrollments
            .list_journey(with_token(
                ListJourneyRequest {
                    contact_id: contact.into(),
                    page: Some(PageRequest {
                        page_size: size,
                        page_token: page_token.clone(),
                    }),
                },
                token,
            ))
            .await
            .unwrap()
            .into_inner();
        assert!(page.entries.len() <= size as usize);
        out.extend(page.entries);
        if page.next_page_token.is_empty() {
            return out;
        }
        assert!(page.next_page_token.len() <= 512);
        page_token = page.next_page_token;
    }
}

async fn list_journey_interleaves_a_contacts_enrollments(backend: Backend) {
    let app = spawn_app(backend).await;
    setup(&app).await;
    let mut c = clients(&app).await;
    // Ann: one enrollment waits an hour, another runs meanwhile; Bob's entries are in between.
    let slow = enroll(&app, &mut c, "ann", "wait-mail").await;
    advance(&app, &mut c, 10 * MINUTE_MS).await;
    enroll(&app, &mut c, "bob", "mail-now").await;
    advance(&app, &mut c, 10 * MINUTE_MS).await;
    let fast = enroll(&app, &mut c, "ann", "mail-now").await;
    advance(&app, &mut c, 60 * MINUTE_MS).await;
    for d in claim(&app, &mut c, &[]).await {
        ack(&app, &mut c, &d, sent(&format!("p-{}", d.id)))
            .await
            .unwrap();
    }

    let whole = list_journey(&mut c, &app.token, "ann", 500).await;
    // Each enrollment's own journey, in order, and nothing else.
    for e in [&slow, &fast] {
        let own: Vec<JourneyEntry> = whole
            .iter()
            .filter(|x| x.enrollment_id == e.id)
            .map(|x| {
                assert_eq!(x.flow_id, e.flow_id);
                assert_eq!(x.flow_version, e.flow_version);
                x.entry.clone().unwrap()
            })
            .collect();
        assert_eq!(own, journey(&app, &mut c, &e.id).await);
    }
    assert!(whole
        .iter()
        .all(|x| x.enrollment_id == slow.id || x.enrollment_id == fast.id));
    // Ordered by time, the two interleaved: slow's start, fast's run, slow's end between
    // fast's run and the ack of fast's email.
    let at: Vec<i64> = whole
        .iter()
        .map(|x| ms(&x.entry.as_ref().unwrap().at))
        .collect();
    assert!(at.windows(2).all(|w| w[0] <= w[1]), "{at:?}");
    let owners: Vec<&str> = whole.iter().map(|x| x.enrollment_id.as_str()).collect();
    let first_fast = owners.iter().position(|o| *o == fast.id).unwrap();
    let last_fast = owners.iter().rposition(|o| *o == fast.id).unwrap();
    assert!(owners[..first_fast].iter().all(|o| *o == slow.id));
    assert!(
        owners[first_fast..last_fast].iter().any(|o| *o == slow.id),
        "{owners:?}"
    );
    assert!(whole
        .iter()
        .any(|x| x.entry.as_ref().unwrap().kind == "dispatch_acked"));

    // Any page size reassembles the same list.
    for size in 1..=whole.len() as i32 + 1 {
        assert_eq!(
            list_journey(&mut c, &app.token, "ann", size).await,
            whole,
            "size {size}"
        );
    }

    // An enrollment-scoped token sees its own enrollment's entries only.
    let scoped = app.token(Scope::Enrollment(fast.id.clone())).await;
    let own = list_journey(&mut c, &scoped, "ann", 2).await;
    assert!(!own.is_empty());
    assert_eq!(
        own,
        whole
            .iter()
            .filter(|x| x.enrollment_id == fast.id)
            .cloned()
            .collect::<Vec<_>>()
    );
    let err = c
        .enrollments
        .list_journey(with_token(
            ListJourneyRequest {
                contact_id: "bob".into(),
                page: None,
            },
            &scoped,
        ))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::PermissionDenied, "{err:?}");

    // A contact with no enrollment has an empty journey.
    assert!(list_journey(&mut c, &app.token, "zed", 10).await.is_empty());
    app.stop().await;
}

async fn list_journey_refuses_what_it_cannot_answer(backend: Backend) {
    let app = spawn_app(backend).await;
    setup(&app).await;
    let mut c = clients(&app).await;
    let request = |contact: &str, token: &str| ListJourneyRequest {
        contact_id: contact.into(),
        page: Some(PageRequest {
            page_size: 10,
            page_token: token.into(),
        }),
    };
    let err = c
        .enrollments
        .list_journey(app.authed(request("nobody", "")))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::NotFound, "{err:?}");
    let long = "1.1.".to_string() + &"x".repeat(600);
    for bad in ["garbage", "1.x.en_1", "1.1.", long.as_str()] {
        let err = c
            .enrollments
            .list_journey(app.authed(request("ann", bad)))
            .await
            .unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument, "{bad}: {err:?}");
        assert!(err.message().contains("page_token"), "{err:?}");
        assert!(err.message().len() < 400, "{err:?}");
    }
    let err = c
        .enrollments
        .list_journey(app.authed(request("", "")))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument, "{err:?}");
    app.stop().await;
}
