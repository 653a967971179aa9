//! End-to-end tests of the engine's gRPC services: enrollments, the planner driven by the
//! manual clock (`TestClockService.Advance`), the dispatch outbox and tasks. Real server on
//! port 0, real tonic clients; SQLite always, PostgreSQL with `NUDGE_TEST_DATABASE_URL`.

use crate::common::{self, spawn_app, with_token, Backend, TestApp};
use nudge::auth::Scope;
use nudge::proto::v1::dispatch_service_client::DispatchServiceClient;
use nudge::proto::v1::enrollment_service_client::EnrollmentServiceClient;
use nudge::proto::v1::signal_service_client::SignalServiceClient;
use nudge::proto::v1::test_clock_service_client::TestClockServiceClient;
use nudge::proto::v1::*;
use std::collections::HashSet;
use tonic::transport::Channel;
use tonic::Code;
use tonic_types::StatusExt;

backend_tests!(
    outbound_flow_walks_weeks_of_virtual_time,
    enroll_is_idempotent_by_client_key,
    duplicate_active_enrollment_is_refused_unless_allowed,
    a_live_enrollment_made_with_allow_duplicate_still_refuses_a_plain_one,
    bad_input_is_refused_with_the_field_and_nothing_stored,
    pause_then_resume_past_target_wakes_at_once,
    move_to_and_exit,
    dispatch_lease_expires_and_is_claimed_again,
    enrollment_scoped_token_sees_only_its_enrollment,
    batch_enroll_answers_every_item,
    an_approval_flow_enrolls_and_waits,
    connected_call_reaches_the_contacts_other_enrollments,
    an_interrupted_task_outcome_is_routed_by_the_retry,
);

const HOUR_MS: i64 = 3_600_000;
const DAY_MS: i64 = 24 * HOUR_MS;

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

/// The docs/flows.md example flow, a contact in New York and the default sender.
async fn setup(app: &TestApp) {
    let definition = std::fs::read_to_string("fixtures/flows/outbound-v1.json").unwrap();
    app.flows()
        .await
        .create_flow(app.authed(CreateFlowRequest { definition }))
        .await
        .unwrap();
    for id in ["ann", "bob"] {
        app.contacts()
            .await
            .upsert_contact(app.authed(UpsertContactRequest {
                contact: Some(Contact {
                    id: id.into(),
                    email: format!("{id}@example.com"),
                    phone: "+12125551234".into(),
                    tz: "America/New_York".into(),
                    ..Default::default()
                }),
            }))
            .await
            .unwrap();
    }
}

fn enroll_req(contact: &str, key: &str) -> EnrollRequest {
    EnrollRequest {
        contact_id: contact.into(),
        flow_id: "outbound-v1".into(),
        input: r#"{"demo_at": "2026-12-20T15:00:00Z", "nudge_ms": 60000}"#.into(),
        client_key: key.into(),
        ..Default::default()
    }
}

async fn advance(app: &TestApp, c: &mut Clients, by_ms: i64) -> AdvanceResponse {
    c.clock
        .advance(app.authed(AdvanceRequest {
            target: Some(advance_request::Target::ByMs(by_ms)),
        }))
        .await
        .unwrap()
        .into_inner()
}

/// How many active enrollments `contact` has.
async fn active_of(app: &TestApp, c: &mut Clients, contact: &str) -> usize {
    c.enrollments
        .list_enrollments(app.authed(ListEnrollmentsRequest {
            contact_id: contact.into(),
            status: "active".into(),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner()
        .enrollments
        .len()
}

/// One `BatchEnroll` call's answers, item by item.
async fn batch_enroll(
    app: &TestApp,
    c: &mut Clients,
    items: Vec<EnrollRequest>,
) -> Vec<BatchEnrollResult> {
    c.enrollments
        .batch_enroll(app.authed(BatchEnrollRequest { items }))
        .await
        .unwrap()
        .into_inner()
        .results
}

async fn journey(app: &TestApp, c: &mut Clients, id: &str) -> Vec<JourneyEntry> {
    let mut out = Vec::new();
    let mut token = String::new();
    loop {
        let page = c
            .enrollments
            .get_journey(app.authed(GetJourneyRequest {
                enrollment_id: id.into(),
                page: Some(PageRequest {
                    page_size: 3,
                    page_token: token.clone(),
                }),
            }))
            .await
            .unwrap()
            .into_inner();
        out.extend(page.entries);
        if page.next_page_token.is_empty() {
            return out;
        }
        token = page.next_page_token;
    }
}

fn detail(e: &JourneyEntry) -> serde_json::Value {
    crate::common::detail_json(e)
}

/// The steps of the runs opened, in order.
fn opened_steps(entries: &[JourneyEntry]) -> Vec<String> {
    entries
        .iter()
        .filter(|e| e.kind == "run_opened")
        .map(|e| detail(e)["step"].as_str().unwrap().to_string())
        .collect()
}

async fn get(app: &TestApp, c: &mut Clients, id: &str) -> Enrollment {
    c.enrollments
        .get_enrollment(app.authed(GetEnrollmentRequest { id: id.into() }))
        .await
        .unwrap()
        .into_inner()
        .enrollment
        .unwrap()
}

async fn claim(app: &TestApp, c: &mut Clients, lease_ms: i64) -> Vec<Dispatch> {
    c.dispatches
        .claim_dispatches(app.authed(ClaimDispatchesRequest {
            lease_ms,
            max_count: 10,
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner()
        .dispatches
}

async fn outbound_flow_walks_weeks_of_virtual_time(backend: Backend) {
    let app = spawn_app(backend).await;
    setup(&app).await;
    let mut c = clients(&app).await;
    let e = c
        .enrollments
        .enroll(app.authed(enroll_req("ann", "k1")))
        .await
        .unwrap()
        .into_inner();
    assert!(e.created);
    let e = e.enrollment.unwrap();
    assert_eq!(e.status, "active");
    assert_eq!(e.current_step, "email_1");
    // Friday 15:00 in New York, inside the window: the email goes within the 20m jitter.
    let due = e.next_run_at.expect("email scheduled");
    let start = common::start_instant().timestamp();
    assert!(
        due.seconds >= start && due.seconds <= start + 20 * 60,
        "{due:?}"
    );
    assert!(
        claim(&app, &mut c, 60_000).await.is_empty(),
        "nothing due yet"
    );

    let moved = advance(&app, &mut c, HOUR_MS).await;
    assert_eq!(moved.woken, 1);
    let sent = claim(&app, &mut c, 60_000).await;
    assert_eq!(sent.len(), 1, "{sent:?}");
    let email = &sent[0];
    assert_eq!(email.channel, "email");
    assert_eq!(email.recipient, "ann@example.com");
    assert_eq!(email.template, "intro");
    assert_eq!(email.idempotency_key, format!("{}:1", e.id));
    assert_eq!(email.message_id, format!("<{}.1@nudge>", e.id));
    let acked = c
        .dispatches
        .ack_dispatch(app.authed(AckDispatchRequest {
            id: email.id.clone(),
            lease_token: email.lease_token.clone(),
            provider_message_id: "ses-1".into(),
            failure: String::new(),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(acked.status, "sent");
    let now_waiting = get(&app, &mut c, &e.id).await;
    assert_eq!(now_waiting.current_step, "wait_2d");

    // Three weeks: 2bd wait, the SMS, the 5bd reply timeout, then the call task.
    advance(&app, &mut c, 21 * DAY_MS).await;
    let sms = claim(&app, &mut c, 60_000).await;
    assert_eq!(sms.len(), 1, "{sms:?}");
    assert_eq!(sms[0].channel, "sms");
    assert_eq!(sms[0].recipient, "+12125551234");
    assert!(sms[0].message_id.is_empty());
    let waiting = get(&app, &mut c, &e.id).await;
    assert_eq!(waiting.current_step, "call_1");
    assert!(
        waiting.next_run_at.is_none(),
        "an open task without timeout"
    );

    let tasks = c
        .signals
        .list_tasks(app.authed(ListTasksRequest::default()))
        .await
        .unwrap()
        .into_inner()
        .tasks;
    assert_eq!(tasks.len(), 1);
    assert_eq!(tasks[0].kind, "call");
    assert_eq!(tasks[0].enrollment_id, e.id);
    let done = c
        .signals
        .complete_task(app.authed(CompleteTaskRequest {
            task_id: tasks[0].id.clone(),
            outcome: "connected".into(),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(done.task.unwrap().status, "completed");
    let finished = get(&app, &mut c, &e.id).await;
    assert_eq!(finished.status, "completed");
    assert!(finished.next_run_at.is_none());

    let entries = journey(&app, &mut c, &e.id).await;
    assert_eq!(
        opened_steps(&entries),
        [
            "email_1",
            "wait_2d",
            "sms_1",
            "wait_reply",
            "call_1",
            "end_done"
        ]
    );
    let seqs: Vec<i64> = entries.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, (1..=entries.len() as i64).collect::<Vec<_>>());
    let reply_closed = entries
        .iter()
        .find(|e| e.kind == "run_closed" && detail(e)["step"] == "wait_reply")
        .unwrap();
    assert_eq!(detail(reply_closed)["branch"], "timeout");
    assert!(entries.iter().any(|e| e.kind == "task_outcome"));
    assert_eq!(entries.last().unwrap().kind, "completed");
    // Wait times are in the journey: the 2bd wait from Friday ends on Tuesday (New York).
    let wait = entries
        .iter()
        .find(|e| e.kind == "run_opened" && detail(e)["step"] == "wait_2d")
        .unwrap();
    let until = detail(wait)["until"].as_str().unwrap().to_string();
    assert!(until.starts_with("2026-12-08T"), "{until}");
    app.stop().await;
}

async fn enroll_is_idempotent_by_client_key(backend: Backend) {
    let app = spawn_app(backend).await;
    setup(&app).await;
    let mut c = clients(&app).await;
    let first = c
        .enrollments
        .enroll(app.authed(enroll_req("ann", "same")))
        .await
        .unwrap()
        .into_inner();
    let again = c
        .enrollments
        .enroll(app.authed(enroll_req("ann", "same")))
        .await
        .unwrap()
        .into_inner();
    assert!(first.created);
    assert!(!again.created);
    assert_eq!(
        first.enrollment.as_ref().unwrap().id,
        again.enrollment.as_ref().unwrap().id
    );
    let all = c
        .enrollments
        .list_enrollments(app.authed(ListEnrollmentsRequest::default()))
        .await
        .unwrap()
        .into_inner()
        .enrollments;
    assert_eq!(all.len(), 1);
    let entries = journey(&app, &mut c, &first.enrollment.unwrap().id).await;
    assert_eq!(entries.iter().filter(|e| e.kind == "enrolled").count(), 1);
    app.stop().await;
}

async fn duplicate_active_enrollment_is_refused_unless_allowed(backend: Backend) {
    let app = spawn_app(backend).await;
    setup(&app).await;
    let mut c = clients(&app).await;
    c.enrollments
        .enroll(app.authed(enroll_req("ann", "")))
        .await
        .unwrap();
    let refused = c
        .enrollments
        .enroll(app.authed(enroll_req("ann", "")))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::AlreadyExists, "{refused:?}");
    assert!(refused.message().contains("allow_duplicate"));
    let mut allowed = enroll_req("ann", "");
    allowed.allow_duplicate = true;
    c.enrollments.enroll(app.authed(allowed)).await.unwrap();
    // Another contact is not a duplicate.
    c.enrollments
        .enroll(app.authed(enroll_req("bob", "")))
        .await
        .unwrap();
    assert_eq!(active_of(&app, &mut c, "ann").await, 2);
    app.stop().await;
}

/// The unique index of live enrollments holds only those made without `allow_duplicate`, so
/// an enrollment written without reading the contact's live ones first would slip past one
/// made with it: the flows that have such an enrollment are read before writing. In a batch,
/// a duplicate the index refuses is answered alone, the other items written.
async fn a_live_enrollment_made_with_allow_duplicate_still_refuses_a_plain_one(backend: Backend) {
    let app = spawn_app(backend).await;
    setup(&app).await;
    let mut c = clients(&app).await;
    let mut allowed = enroll_req("ann", "");
    allowed.allow_duplicate = true;
    c.enrollments.enroll(app.authed(allowed)).await.unwrap();
    let refused = c
        .enrollments
        .enroll(app.authed(enroll_req("ann", "")))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::AlreadyExists, "{refused:?}");

    c.enrollments
        .enroll(app.authed(enroll_req("bob", "")))
        .await
        .unwrap();
    app.contacts()
        .await
        .upsert_contact(app.authed(UpsertContactRequest {
            contact: Some(Contact {
                id: "cy".into(),
                email: "cy@example.com".into(),
                tz: "America/New_York".into(),
                ..Default::default()
            }),
        }))
        .await
        .unwrap();
    let items = ["cy", "bob", "ann"].map(|id| enroll_req(id, "")).to_vec();
    let results = batch_enroll(&app, &mut c, items).await;
    let answers: Vec<(bool, &str)> = results
        .iter()
        .map(|r| (r.created, r.error_code.as_str()))
        .collect();
    assert_eq!(
        answers,
        [
            (true, ""),
            (false, "ALREADY_EXISTS"),
            (false, "ALREADY_EXISTS")
        ]
    );
    for contact in ["ann", "bob", "cy"] {
        assert_eq!(active_of(&app, &mut c, contact).await, 1, "{contact}");
    }
    app.stop().await;
}

async fn bad_input_is_refused_with_the_field_and_nothing_stored(backend: Backend) {
    let app = spawn_app(backend).await;
    setup(&app).await;
    let mut c = clients(&app).await;
    let mut bad = enroll_req("ann", "bad");
    bad.input = r#"{"demo_at": "next tuesday", "nudge_ms": 5}"#.into();
    let status = c.enrollments.enroll(app.authed(bad)).await.unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument);
    let violations = status.get_details_bad_request().unwrap().field_violations;
    assert_eq!(violations.len(), 1, "{violations:?}");
    assert_eq!(violations[0].field, "input.demo_at");
    assert!(
        violations[0].description.contains("RFC 3339"),
        "{violations:?}"
    );

    let mut missing = enroll_req("ann", "bad");
    missing.input = "{}".into();
    let status = c.enrollments.enroll(app.authed(missing)).await.unwrap_err();
    let fields: Vec<String> = status
        .get_details_bad_request()
        .unwrap()
        .field_violations
        .into_iter()
        .map(|v| v.field)
        .collect();
    assert_eq!(fields, ["input.demo_at", "input.nudge_ms"]);

    let unknown = c
        .enrollments
        .enroll(app.authed(enroll_req("nobody", "")))
        .await
        .unwrap_err();
    assert_eq!(unknown.code(), Code::NotFound);

    let all = c
        .enrollments
        .list_enrollments(app.authed(ListEnrollmentsRequest::default()))
        .await
        .unwrap()
        .into_inner()
        .enrollments;
    assert!(all.is_empty(), "{all:?}");
    app.stop().await;
}

async fn pause_then_resume_past_target_wakes_at_once(backend: Backend) {
    let app = spawn_app(backend).await;
    setup(&app).await;
    let mut c = clients(&app).await;
    let e = c
        .enrollments
        .enroll(app.authed(enroll_req("ann", "")))
        .await
        .unwrap()
        .into_inner()
        .enrollment
        .unwrap();
    advance(&app, &mut c, HOUR_MS).await; // the email went; now in wait_2d until Tuesday
    let paused = c
        .enrollments
        .pause(app.authed(PauseRequest { id: e.id.clone() }))
        .await
        .unwrap()
        .into_inner()
        .enrollment
        .unwrap();
    assert_eq!(paused.status, "paused");
    assert!(paused.next_run_at.is_none());
    let again = c
        .enrollments
        .pause(app.authed(PauseRequest { id: e.id.clone() }))
        .await
        .unwrap_err();
    assert_eq!(again.code(), Code::FailedPrecondition, "{again:?}");

    // A week passes while paused: nothing moves.
    let moved = advance(&app, &mut c, 7 * DAY_MS).await;
    assert_eq!(moved.woken, 0);
    assert_eq!(get(&app, &mut c, &e.id).await.current_step, "wait_2d");

    // Resume: the wait's target is in the past, so it fires at once and the SMS is planned.
    let resumed = c
        .enrollments
        .resume(app.authed(ResumeRequest { id: e.id.clone() }))
        .await
        .unwrap()
        .into_inner()
        .enrollment
        .unwrap();
    assert_eq!(resumed.status, "active");
    assert_eq!(resumed.current_step, "sms_1");
    let entries = journey(&app, &mut c, &e.id).await;
    let kinds: Vec<&str> = entries.iter().map(|e| e.kind.as_str()).collect();
    let paused_at = kinds.iter().position(|k| *k == "paused").unwrap();
    let resumed_at = kinds.iter().position(|k| *k == "resumed").unwrap();
    assert!(paused_at < resumed_at);
    assert!(
        !kinds.contains(&"rejected"),
        "a refused pause is not stored"
    );
    app.stop().await;
}

async fn move_to_and_exit(backend: Backend) {
    let app = spawn_app(backend).await;
    setup(&app).await;
    let mut c = clients(&app).await;
    let e = c
        .enrollments
        .enroll(app.authed(enroll_req("ann", "")))
        .await
        .unwrap()
        .into_inner()
        .enrollment
        .unwrap();
    let unknown = c
        .enrollments
        .move_to(app.authed(MoveToRequest {
            id: e.id.clone(),
            step: "nowhere".into(),
        }))
        .await
        .unwrap_err();
    assert_eq!(unknown.code(), Code::FailedPrecondition);
    assert!(unknown.message().contains("nowhere"), "{unknown:?}");

    let moved = c
        .enrollments
        .move_to(app.authed(MoveToRequest {
            id: e.id.clone(),
            step: "wait_reply".into(),
        }))
        .await
        .unwrap()
        .into_inner()
        .enrollment
        .unwrap();
    assert_eq!(moved.current_step, "wait_reply");
    assert!(moved.next_run_at.is_some(), "the 5bd timeout");

    let exited = c
        .enrollments
        .exit(app.authed(ExitRequest {
            id: e.id.clone(),
            reason: "rep asked".into(),
        }))
        .await
        .unwrap()
        .into_inner()
        .enrollment
        .unwrap();
    assert_eq!(exited.status, "exited");
    assert_eq!(exited.reason, "rep asked");
    assert!(exited.next_run_at.is_none());
    let moved = advance(&app, &mut c, 30 * DAY_MS).await;
    assert_eq!(moved.woken, 0);
    let entries = journey(&app, &mut c, &e.id).await;
    let first_close = entries.iter().find(|e| e.kind == "run_closed").unwrap();
    assert_eq!(detail(first_close)["branch"], "moved");
    assert!(entries.iter().any(|e| e.kind == "moved"));
    assert_eq!(entries.last().unwrap().kind, "exited");
    // Nothing was sent: the email run was moved away before it was due.
    assert!(claim(&app, &mut c, 60_000).await.is_empty());
    app.stop().await;
}

async fn dispatch_lease_expires_and_is_claimed_again(backend: Backend) {
    let app = spawn_app(backend).await;
    setup(&app).await;
    let mut c = clients(&app).await;
    c.enrollments
        .enroll(app.authed(enroll_req("ann", "")))
        .await
        .unwrap();
    advance(&app, &mut c, HOUR_MS).await;
    let first = claim(&app, &mut c, 10_000).await;
    assert_eq!(first.len(), 1);
    assert_eq!(first[0].attempts, 1);
    assert!(
        claim(&app, &mut c, 10_000).await.is_empty(),
        "leased: not claimable"
    );
    advance(&app, &mut c, 11_000).await;
    let second = claim(&app, &mut c, 10_000).await;
    assert_eq!(second.len(), 1, "the lease expired: claimable again");
    assert_eq!(second[0].id, first[0].id);
    assert_eq!(second[0].idempotency_key, first[0].idempotency_key);
    assert_eq!(second[0].attempts, 2);
    // The first worker lost its lease: its ack is refused, the second's is taken.
    let late = c
        .dispatches
        .ack_dispatch(app.authed(AckDispatchRequest {
            id: first[0].id.clone(),
            lease_token: first[0].lease_token.clone(),
            provider_message_id: "p-1".into(),
            failure: String::new(),
            ..Default::default()
        }))
        .await
        .unwrap_err();
    assert_eq!(late.code(), Code::FailedPrecondition, "{late:?}");
    let ok = c
        .dispatches
        .ack_dispatch(app.authed(AckDispatchRequest {
            id: second[0].id.clone(),
            lease_token: second[0].lease_token.clone(),
            provider_message_id: String::new(),
            failure: "mailbox full".into(),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(ok.status, "failed");
    advance(&app, &mut c, 60_000).await;
    assert!(claim(&app, &mut c, 10_000).await.is_empty(), "acked: done");
    app.stop().await;
}

async fn enrollment_scoped_token_sees_only_its_enrollment(backend: Backend) {
    let app = spawn_app(backend).await;
    setup(&app).await;
    let mut c = clients(&app).await;
    let mine = c
        .enrollments
        .enroll(app.authed(enroll_req("ann", "")))
        .await
        .unwrap()
        .into_inner()
        .enrollment
        .unwrap();
    let other = c
        .enrollments
        .enroll(app.authed(enroll_req("bob", "")))
        .await
        .unwrap()
        .into_inner()
        .enrollment
        .unwrap();
    let token = app.token(Scope::Enrollment(mine.id.clone())).await;
    let got = c
        .enrollments
        .get_enrollment(with_token(
            GetEnrollmentRequest {
                id: mine.id.clone(),
            },
            &token,
        ))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(got.enrollment.unwrap().id, mine.id);
    let journey = c
        .enrollments
        .get_journey(with_token(
            GetJourneyRequest {
                enrollment_id: mine.id.clone(),
                page: None,
            },
            &token,
        ))
        .await
        .unwrap()
        .into_inner();
    assert!(!journey.entries.is_empty());
    for denied in [
        c.enrollments
            .get_enrollment(with_token(
                GetEnrollmentRequest {
                    id: other.id.clone(),
                },
                &token,
            ))
            .await
            .unwrap_err(),
        c.enrollments
            .pause(with_token(
                PauseRequest {
                    id: other.id.clone(),
                },
                &token,
            ))
            .await
            .unwrap_err(),
        c.enrollments
            .list_enrollments(with_token(ListEnrollmentsRequest::default(), &token))
            .await
            .unwrap_err(),
        c.enrollments
            .enroll(with_token(enroll_req("ann", "x"), &token))
            .await
            .unwrap_err(),
    ] {
        assert_eq!(denied.code(), Code::PermissionDenied, "{denied:?}");
    }
    assert_eq!(get(&app, &mut c, &other.id).await.status, "active");
    app.stop().await;
}

async fn batch_enroll_answers_every_item(backend: Backend) {
    let app = spawn_app(backend).await;
    setup(&app).await;
    let mut c = clients(&app).await;
    let mut contacts = app.contacts().await;
    // Past one 1,000-item chunk: the refusals and the repeated key land in the second chunk,
    // whose key check must find the first chunk's committed enrollment.
    let n = 1_010;
    for i in 0..n {
        contacts
            .upsert_contact(app.authed(UpsertContactRequest {
                contact: Some(Contact {
                    id: format!("c{i}"),
                    email: format!("c{i}@example.com"),
                    tz: "America/New_York".into(),
                    ..Default::default()
                }),
            }))
            .await
            .unwrap();
    }
    let mut items: Vec<EnrollRequest> = (0..n)
        .map(|i| enroll_req(&format!("c{i}"), &format!("b{i}")))
        .collect();
    let mut bad = enroll_req("c0", "bad");
    bad.input = "{}".into();
    items.push(bad);
    items.push(enroll_req("missing", ""));
    items.push(enroll_req("c1", "b1")); // the same key again
    let results = batch_enroll(&app, &mut c, items).await;
    assert_eq!(results.len(), n + 3);
    let ids: HashSet<&str> = results[..n]
        .iter()
        .map(|r| r.enrollment.as_ref().unwrap().id.as_str())
        .collect();
    assert_eq!(ids.len(), n);
    assert!(results[..n].iter().all(|r| r.created));
    assert_eq!(results[n].error_code, "INVALID_ARGUMENT");
    assert_eq!(results[n].problems[0].path, "input.demo_at");
    assert_eq!(results[n + 1].error_code, "NOT_FOUND");
    assert!(!results[n + 2].created);
    assert_eq!(
        results[n + 2].enrollment.as_ref().unwrap().id,
        results[1].enrollment.as_ref().unwrap().id
    );
    // Every one of them sends its email within the hour.
    let moved = advance(&app, &mut c, HOUR_MS).await;
    assert_eq!(moved.woken, n as i64);
    app.stop().await;
}

/// Approval steps run: the fixture enrolls and waits for its decision.
async fn an_approval_flow_enrolls_and_waits(backend: Backend) {
    let app = spawn_app(backend).await;
    setup(&app).await;
    let mut c = clients(&app).await;
    let definition = std::fs::read_to_string("fixtures/flows/approval.json").unwrap();
    let created = app
        .flows()
        .await
        .create_flow(app.authed(CreateFlowRequest { definition }))
        .await
        .unwrap()
        .into_inner()
        .flow
        .unwrap();
    let mut req = enroll_req("ann", "");
    req.flow_id = created.id;
    req.input = "{}".into();
    let enrolled = c
        .enrollments
        .enroll(app.authed(req))
        .await
        .unwrap()
        .into_inner()
        .enrollment
        .unwrap();
    assert_eq!(enrolled.status, "active");
    assert_eq!(enrolled.current_step, "ask_manager");
    app.stop().await;
}

/// Ann at a call task (enrollment `a`), a second enrollment of hers (`b`) and bob's, both
/// waiting for a reply; answers (a, b, bob, the call task).
async fn call_task_setup(
    app: &TestApp,
    c: &mut Clients,
) -> (Enrollment, Enrollment, Enrollment, Task) {
    let a = c
        .enrollments
        .enroll(app.authed(enroll_req("ann", "a")))
        .await
        .unwrap()
        .into_inner()
        .enrollment
        .unwrap();
    advance(app, c, 21 * DAY_MS).await;
    assert_eq!(get(app, c, &a.id).await.current_step, "call_1");
    // A second enrollment of the same contact, waiting for a reply; and bob's, which must not
    // be reached.
    let mut second = enroll_req("ann", "b");
    second.allow_duplicate = true;
    let b = c
        .enrollments
        .enroll(app.authed(second))
        .await
        .unwrap()
        .into_inner()
        .enrollment
        .unwrap();
    let bob = c
        .enrollments
        .enroll(app.authed(enroll_req("bob", "c")))
        .await
        .unwrap()
        .into_inner()
        .enrollment
        .unwrap();
    for id in [&b.id, &bob.id] {
        c.enrollments
            .move_to(app.authed(MoveToRequest {
                id: id.clone(),
                step: "wait_reply".into(),
            }))
            .await
            .unwrap();
    }
    let task = c
        .signals
        .list_tasks(app.authed(ListTasksRequest::default()))
        .await
        .unwrap()
        .into_inner()
        .tasks
        .remove(0);
    (a, b, bob, task)
}

async fn connected_call_reaches_the_contacts_other_enrollments(backend: Backend) {
    let app = spawn_app(backend).await;
    setup(&app).await;
    let mut c = clients(&app).await;
    let (_a, b, bob, task) = call_task_setup(&app, &mut c).await;
    let done = c
        .signals
        .complete_task(app.authed(CompleteTaskRequest {
            task_id: task.id,
            outcome: "connected".into(),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(done.signalled, 1);
    let b_now = get(&app, &mut c, &b.id).await;
    assert_eq!(b_now.status, "completed");
    assert_eq!(b_now.outcome, "replied");
    let entries = journey(&app, &mut c, &b.id).await;
    let signal = entries.iter().find(|e| e.kind == "signal").unwrap();
    assert_eq!(detail(signal)["effect"], "woke");
    assert_eq!(detail(signal)["branch"], "reply");
    let closed = entries
        .iter()
        .find(|e| e.kind == "run_closed" && detail(e)["step"] == "wait_reply")
        .unwrap();
    assert_eq!(detail(closed)["woken_by"], detail(signal)["signal"]);
    assert_eq!(get(&app, &mut c, &bob.id).await.current_step, "wait_reply");
    app.stop().await;
}

/// The process stopped after storing the outcome and its signal, before routing it: completing
/// the task again with the same outcome routes it (once); another outcome is refused.
async fn an_interrupted_task_outcome_is_routed_by_the_retry(backend: Backend) {
    let app = spawn_app(backend).await;
    setup(&app).await;
    let mut c = clients(&app).await;
    let (a, b, bob, task) = call_task_setup(&app, &mut c).await;
    let (rows, _) = nudge::service::tasks::list(&app.state.core, "default", "open", &a.id, 10, "")
        .await
        .unwrap();
    let (after, stored) =
        nudge::service::tasks::record_outcome(&app.state.core, "default", &rows[0], "connected")
            .await
            .unwrap();
    assert_eq!(after.id, a.id);
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].kind, "call_connected");
    assert_eq!(
        get(&app, &mut c, &b.id).await.current_step,
        "wait_reply",
        "not routed yet"
    );

    let complete = |outcome: &str| CompleteTaskRequest {
        task_id: task.id.clone(),
        outcome: outcome.into(),
        ..Default::default()
    };
    let other = c
        .signals
        .complete_task(app.authed(complete("no_answer")))
        .await
        .unwrap_err();
    assert_eq!(other.code(), Code::FailedPrecondition, "{other:?}");
    let done = c
        .signals
        .complete_task(app.authed(complete("connected")))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(done.signalled, 1);
    assert_eq!(done.task.unwrap().status, "completed");
    assert_eq!(get(&app, &mut c, &b.id).await.status, "completed");
    assert_eq!(get(&app, &mut c, &bob.id).await.current_step, "wait_reply");
    // Routed now: a third call is refused and reaches nothing again.
    let again = c
        .signals
        .complete_task(app.authed(complete("connected")))
        .await
        .unwrap_err();
    assert_eq!(again.code(), Code::FailedPrecondition, "{again:?}");
    let signals = journey(&app, &mut c, &b.id)
        .await
        .into_iter()
        .filter(|e| e.kind == "signal")
        .count();
    assert_eq!(signals, 1);
    app.stop().await;
}
