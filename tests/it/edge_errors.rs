//! The gRPC edge under bad input and as a person reads it (docs/service.md, "Errors"): the input limits at every
//! call, with the field named and nothing stored; statuses that fit a default client whatever
//! was sent; the exact wording of representative refusals; error details a reflection client
//! (a reflection client, as grpcurl is one) decodes; the journey's `detail` as a `Struct`.

use crate::common::{spawn_app, Backend, TestApp};
use nudge::proto::v1::dispatch_service_client::DispatchServiceClient;
use nudge::proto::v1::enrollment_service_client::EnrollmentServiceClient;
use nudge::proto::v1::signal_service_client::SignalServiceClient;
use nudge::proto::v1::*;
use std::future::Future;
use std::pin::Pin;
use tonic::transport::Channel;
use tonic::{Code, Status};
use tonic_types::StatusExt;

backend_tests!(
    every_text_field_is_limited_with_the_field_named_and_nothing_stored,
    huge_inputs_get_their_real_code_at_a_default_client,
    refusals_read_well,
    journey_detail_is_a_struct,
);

/// A flow whose first step opens a call task with two outcomes.
const CALL_FLOW: &str = r#"{"name": "call-only", "start": "call", "steps": {
    "call": {"type": "call", "params": {"outcomes": ["connected", "no_answer"]},
             "next": {"then": "done"}},
    "done": {"type": "end"}}}"#;

struct Clients {
    enrollments: EnrollmentServiceClient<Channel>,
    dispatches: DispatchServiceClient<Channel>,
    signals: SignalServiceClient<Channel>,
}

async fn clients(app: &TestApp) -> Clients {
    let ch = app.channel().await;
    Clients {
        enrollments: EnrollmentServiceClient::new(ch.clone()),
        dispatches: DispatchServiceClient::new(ch.clone()),
        signals: SignalServiceClient::new(ch),
    }
}

/// The call flow and the contact `ann` in New York.
async fn setup(app: &TestApp) {
    app.flows()
        .await
        .create_flow(app.authed(CreateFlowRequest {
            definition: CALL_FLOW.into(),
        }))
        .await
        .expect("the call flow is valid");
    app.contacts()
        .await
        .upsert_contact(app.authed(UpsertContactRequest {
            contact: Some(Contact {
                id: "ann".into(),
                email: "ann@example.com".into(),
                tz: "America/New_York".into(),
                ..Default::default()
            }),
        }))
        .await
        .unwrap();
}

async fn enroll_ann(app: &TestApp, c: &mut Clients) -> Enrollment {
    c.enrollments
        .enroll(app.authed(EnrollRequest {
            contact_id: "ann".into(),
            flow_id: "call-only".into(),
            ..Default::default()
        }))
        .await
        .expect("ann enrolls")
        .into_inner()
        .enrollment
        .unwrap()
}

type Call = Pin<Box<dyn Future<Output = Result<(), Status>> + Send>>;

/// The one violation's field of an `INVALID_ARGUMENT`, and its reason.
fn violation(name: &str, status: &Status) -> (String, String) {
    assert_eq!(status.code(), Code::InvalidArgument, "{name}: {status:?}");
    let v = status
        .get_details_bad_request()
        .unwrap_or_else(|| panic!("{name}: a BadRequest: {status:?}"))
        .field_violations;
    assert!(!v.is_empty(), "{name}");
    (v[0].field.clone(), v[0].reason.clone())
}

async fn every_text_field_is_limited_with_the_field_named_and_nothing_stored(backend: Backend) {
    let app = spawn_app(backend).await;
    setup(&app).await;
    let c = clients(&app).await;
    let nul = |s: &str| format!("{s}\0x");
    let long = |n: usize| "x".repeat(n);
    let page = |token: String| {
        Some(PageRequest {
            page_size: 0,
            page_token: token,
        })
    };
    let flow_named = |name: &str| {
        CALL_FLOW.replace(
            r#""name": "call-only""#,
            &format!(r#""name": {}"#, serde_json::json!(name)),
        )
    };
    let (contacts, senders, flows) = (app.contacts().await, app.senders().await, app.flows().await);
    macro_rules! call {
        ($client:expr, $method:ident, $req:expr) => {{
            let mut client = $client.clone();
            let req = app.authed($req);
            Box::pin(async move { client.$method(req).await.map(|_| ()) }) as Call
        }};
    }
    let sender = |id: &str, email: String, calendar: String| UpsertSenderRequest {
        sender: Some(Sender {
            id: id.into(),
            email,
            tz: "UTC".into(),
            calendar,
            ..Default::default()
        }),
        make_default: false,
    };
    let contact = |id: String, email: String| UpsertContactRequest {
        contact: Some(Contact {
            id,
            email,
            ..Default::default()
        }),
    };
    let enroll = |contact_id: String, client_key: String| EnrollRequest {
        contact_id,
        flow_id: "call-only".into(),
        client_key,
        ..Default::default()
    };
    // (call, the field named, the request).
    let cases: Vec<(&str, &str, Call)> = vec![
        (
            "UpsertSender calendar with NUL",
            "sender.calendar",
            call!(
                senders,
                upsert_sender,
                sender("s-nul", String::new(), nul("us"))
            ),
        ),
        (
            "UpsertSender 1 KB calendar",
            "sender.calendar",
            call!(
                senders,
                upsert_sender,
                sender("s-long", String::new(), long(1_000))
            ),
        ),
        (
            "UpsertSender 10 KB email",
            "sender.email",
            call!(
                senders,
                upsert_sender,
                sender(
                    "s-mail",
                    format!("{}@example.com", long(10_000)),
                    String::new()
                )
            ),
        ),
        (
            "UpsertContact 10 KB email",
            "contact.email",
            call!(
                contacts,
                upsert_contact,
                contact("c-mail".into(), format!("{}@example.com", long(10_000)))
            ),
        ),
        (
            "UpsertContact id with NUL",
            "contact.id",
            call!(contacts, upsert_contact, contact(nul("c"), String::new())),
        ),
        (
            "Enroll client_key with NUL",
            "client_key",
            call!(c.enrollments, enroll, enroll("ann".into(), nul("key"))),
        ),
        (
            "Enroll 20 KB contact_id",
            "contact_id",
            call!(c.enrollments, enroll, enroll(long(20_000), String::new())),
        ),
        (
            "CreateFlow name with NUL",
            "definition/name",
            call!(
                flows,
                create_flow,
                CreateFlowRequest {
                    definition: flow_named("bad\0name"),
                }
            ),
        ),
        (
            "CreateFlow 1 MB name",
            "definition/name",
            call!(
                flows,
                create_flow,
                CreateFlowRequest {
                    definition: flow_named(&long(1 << 20)),
                }
            ),
        ),
        (
            "GetFlow 1 KB id",
            "id",
            call!(
                flows,
                get_flow,
                GetFlowRequest {
                    id: long(1_000),
                    version: 0,
                }
            ),
        ),
        (
            "ListFlows page token with NUL",
            "page.page_token",
            call!(
                flows,
                list_flows,
                ListFlowsRequest {
                    page: page(nul("a"))
                }
            ),
        ),
        (
            "ListEnrollments page token with NUL",
            "page.page_token",
            call!(
                c.enrollments,
                list_enrollments,
                ListEnrollmentsRequest {
                    page: page(nul("en_")),
                    ..Default::default()
                }
            ),
        ),
        (
            "ListEnrollments 1 KB page token",
            "page.page_token",
            call!(
                c.enrollments,
                list_enrollments,
                ListEnrollmentsRequest {
                    page: page(long(1_000)),
                    ..Default::default()
                }
            ),
        ),
        (
            "ListTasks page token with NUL",
            "page.page_token",
            call!(
                c.signals,
                list_tasks,
                ListTasksRequest {
                    page: page(nul("tk_")),
                    ..Default::default()
                }
            ),
        ),
        (
            "GetJourney 20 KB id",
            "enrollment_id",
            call!(
                c.enrollments,
                get_journey,
                GetJourneyRequest {
                    enrollment_id: long(20_000),
                    page: None,
                }
            ),
        ),
        (
            "Exit reason with NUL",
            "reason",
            call!(
                c.enrollments,
                exit,
                ExitRequest {
                    id: "en_x".into(),
                    reason: nul("bye"),
                }
            ),
        ),
        (
            "MoveTo 1 KB step",
            "step",
            call!(
                c.enrollments,
                move_to,
                MoveToRequest {
                    id: "en_x".into(),
                    step: long(1_000),
                }
            ),
        ),
        (
            "CompleteTask outcome with NUL",
            "outcome",
            call!(
                c.signals,
                complete_task,
                CompleteTaskRequest {
                    task_id: "tk_x".into(),
                    outcome: nul("connected"),
                    ..Default::default()
                }
            ),
        ),
        (
            "AckDispatch failure with NUL",
            "failure",
            call!(
                c.dispatches,
                ack_dispatch,
                AckDispatchRequest {
                    id: "dp_x".into(),
                    lease_token: "lease_x".into(),
                    failure: nul("bounced"),
                    ..Default::default()
                }
            ),
        ),
        (
            "AckDispatch lease token with NUL",
            "lease_token",
            call!(
                c.dispatches,
                ack_dispatch,
                AckDispatchRequest {
                    id: "dp_x".into(),
                    lease_token: nul("lease"),
                    provider_message_id: "m-1".into(),
                    ..Default::default()
                }
            ),
        ),
        (
            "PostEvent 1 MB key",
            "key",
            call!(
                c.signals,
                post_event,
                PostEventRequest {
                    key: format!("big.{}", long(1 << 20)),
                    contact: "ann".into(),
                    provider_id: "ev-big".into(),
                    ..Default::default()
                }
            ),
        ),
        (
            "PostEvent key with NUL",
            "key",
            call!(
                c.signals,
                post_event,
                PostEventRequest {
                    key: nul("payment.received"),
                    contact: "ann".into(),
                    provider_id: "ev-nul".into(),
                    ..Default::default()
                }
            ),
        ),
    ];
    for (name, field, call) in cases {
        let status = call.await.expect_err(name);
        let (got, reason) = violation(name, &status);
        assert_eq!(
            (got.as_str(), reason.as_str()),
            (field, "BAD_SCHEMA"),
            "{name}"
        );
    }

    // Nothing was stored.
    let mut senders = app.senders().await;
    for id in ["s-nul", "s-long", "s-mail"] {
        let got = senders
            .get_sender(app.authed(GetSenderRequest { id: id.into() }))
            .await;
        assert_eq!(got.unwrap_err().code(), Code::NotFound, "{id}");
    }
    let got = app
        .contacts()
        .await
        .get_contact(app.authed(GetContactRequest {
            id: "c-mail".into(),
        }))
        .await;
    assert_eq!(got.unwrap_err().code(), Code::NotFound);
    let enrollments = c
        .enrollments
        .clone()
        .list_enrollments(app.authed(ListEnrollmentsRequest::default()))
        .await
        .unwrap()
        .into_inner()
        .enrollments;
    assert!(enrollments.is_empty(), "{enrollments:?}");
    let stored_flows = app
        .flows()
        .await
        .list_flows(app.authed(ListFlowsRequest { page: None }))
        .await
        .unwrap()
        .into_inner()
        .flows;
    assert_eq!(stored_flows.len(), 1, "only the call flow");
    for provider_id in ["ev-big", "ev-nul"] {
        let signal = nudge::store::signals::by_provider_id(
            &app.state.core.db,
            nudge::store::accounts::DEFAULT_ACCOUNT_ID,
            provider_id,
        )
        .await
        .unwrap();
        assert!(signal.is_none(), "{provider_id} was stored");
    }
    app.stop().await;
}

/// What a client sees of a status: every part that travels in its trailers.
fn status_bytes(status: &Status) -> usize {
    status.message().len() + status.details().len()
}

async fn huge_inputs_get_their_real_code_at_a_default_client(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut c = clients(&app).await;

    // A 20 KB id: the id's own refusal, not RESOURCE_EXHAUSTED from an echo of it.
    let status = c
        .enrollments
        .get_enrollment(app.authed(GetEnrollmentRequest {
            id: "x".repeat(20_000),
        }))
        .await
        .unwrap_err();
    assert_eq!(violation("20 KB id", &status).0, "id");
    // One with a space, which the refusal quotes: at most 200 characters of it.
    let status = app
        .contacts()
        .await
        .get_contact(app.authed(GetContactRequest {
            id: format!("a {}", "x".repeat(100)),
        }))
        .await
        .unwrap_err();
    assert_eq!(violation("id with a space", &status).0, "id");
    assert!(status.message().contains("`a xxx"), "{}", status.message());

    // A cycle of 10,000 steps that never lets time pass: CYCLE, named by its first steps.
    let n = 10_000;
    let steps: serde_json::Map<String, serde_json::Value> = (0..n)
        .map(|i| {
            let step = serde_json::json!({"type": "email", "params": {"template": "t"},
                                           "next": {"then": format!("step_{}", (i + 1) % n)}});
            (format!("step_{i}"), step)
        })
        .collect();
    let cycle = serde_json::json!({"name": "spin", "start": "step_0", "steps": steps});
    let status = app
        .flows()
        .await
        .create_flow(app.authed(CreateFlowRequest {
            definition: cycle.to_string(),
        }))
        .await
        .unwrap_err();
    let (_, reason) = violation("10,000-step cycle", &status);
    assert_eq!(reason, "CYCLE");
    assert!(
        status.message().contains("and 9995 more"),
        "{}",
        status.message()
    );
    assert!(
        status_bytes(&status) < 8 * 1024,
        "{}",
        status_bytes(&status)
    );

    // 10,000 bad durations: every one is a violation; the status summarizes them.
    let steps: serde_json::Map<String, serde_json::Value> = (0..n)
        .map(|i| {
            let next = if i + 1 == n {
                "done".to_string()
            } else {
                format!("wait_{}", i + 1)
            };
            let step = serde_json::json!({"type": "wait", "params": {"duration": "2H"},
                                           "next": {"then": next}});
            (format!("wait_{i}"), step)
        })
        .chain([("done".to_string(), serde_json::json!({"type": "end"}))])
        .collect();
    let waits = serde_json::json!({"name": "waits", "start": "wait_0", "steps": steps});
    let status = app
        .flows()
        .await
        .create_flow(app.authed(CreateFlowRequest {
            definition: waits.to_string(),
        }))
        .await
        .unwrap_err();
    let (_, reason) = violation("10,000 bad durations", &status);
    assert_eq!(reason, "BAD_DURATION");
    assert!(
        status.message().ends_with("; and 9997 more"),
        "{}",
        status.message()
    );
    let info = status.get_details_error_info().expect("ErrorInfo");
    let shown = status
        .get_details_bad_request()
        .unwrap()
        .field_violations
        .len();
    let omitted: usize = info.metadata["omitted"].parse().unwrap();
    assert_eq!(shown + omitted, n);
    assert!(
        status_bytes(&status) < 8 * 1024,
        "{}",
        status_bytes(&status)
    );
    app.stop().await;
}

async fn refusals_read_well(backend: Backend) {
    let app = spawn_app(backend).await;
    setup(&app).await;
    let mut c = clients(&app).await;
    let mut contacts = app.contacts().await;
    let upsert = |tz: &str, phone: &str| UpsertContactRequest {
        contact: Some(Contact {
            id: "bob".into(),
            tz: tz.into(),
            phone: phone.into(),
            ..Default::default()
        }),
    };
    // (request, exact status message).
    let mut cases: Vec<(&str, Status)> = vec![];
    cases.push((
        "UpsertContact with an ambiguous zone",
        contacts
            .upsert_contact(app.authed(upsert("CET", "")))
            .await
            .unwrap_err(),
    ));
    cases.push((
        "UpsertContact with a national number",
        contacts
            .upsert_contact(app.authed(upsert("", "2125551234")))
            .await
            .unwrap_err(),
    ));
    cases.push((
        "GetEnrollment of an unknown id",
        c.enrollments
            .get_enrollment(app.authed(GetEnrollmentRequest {
                id: "en_nope".into(),
            }))
            .await
            .unwrap_err(),
    ));
    cases.push((
        "GetEnrollment without an id",
        c.enrollments
            .get_enrollment(app.authed(GetEnrollmentRequest { id: String::new() }))
            .await
            .unwrap_err(),
    ));
    let enrollment = enroll_ann(&app, &mut c).await;
    let task = c
        .signals
        .list_tasks(app.authed(ListTasksRequest {
            enrollment_id: enrollment.id.clone(),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner()
        .tasks
        .pop()
        .expect("the call step opened a task");
    cases.push((
        "CompleteTask with an outcome the step does not list",
        c.signals
            .complete_task(app.authed(CompleteTaskRequest {
                task_id: task.id,
                outcome: "maybe".into(),
                ..Default::default()
            }))
            .await
            .unwrap_err(),
    ));
    cases.push((
        "MoveTo an unknown step",
        c.enrollments
            .move_to(app.authed(MoveToRequest {
                id: enrollment.id.clone(),
                step: "nowhere".into(),
            }))
            .await
            .unwrap_err(),
    ));
    cases.push((
        "PostEvent with a built-in key",
        c.signals
            .post_event(app.authed(PostEventRequest {
                key: "reply".into(),
                contact: "ann".into(),
                ..Default::default()
            }))
            .await
            .unwrap_err(),
    ));
    let got: Vec<(&str, Code, String)> = cases
        .iter()
        .map(|(name, s)| (*name, s.code(), s.message().to_string()))
        .collect();
    let en = &enrollment.id;
    let want: Vec<(&str, Code, String)> = vec![
        (
            "UpsertContact with an ambiguous zone",
            Code::InvalidArgument,
            "invalid request: contact.tz: `CET` is an abbreviation or a legacy single-word name, \
             which means the wrong thing half the year; use an IANA name with a `/` such as \
             `Europe/Prague` or `America/New_York`, or `UTC` (BAD_TZ)"
                .into(),
        ),
        (
            "UpsertContact with a national number",
            Code::InvalidArgument,
            "invalid request: contact.phone: `2125551234` is not a valid E.164 phone number: \
             write it with `+` and the country code, e.g. `+12125551234` or `+420 601 123 456` \
             (BAD_PHONE)"
                .into(),
        ),
        (
            "GetEnrollment of an unknown id",
            Code::NotFound,
            "enrollment `en_nope` not found".into(),
        ),
        (
            "GetEnrollment without an id",
            Code::InvalidArgument,
            "invalid request: id: the id is empty (BAD_SCHEMA)".into(),
        ),
        (
            "CompleteTask with an outcome the step does not list",
            Code::FailedPrecondition,
            "cannot complete the task: `maybe` is not an outcome of this task; use one of \
             connected, no_answer"
                .into(),
        ),
        (
            "MoveTo an unknown step",
            Code::FailedPrecondition,
            "cannot move: the flow has no step `nowhere`; name one of its `steps` keys".into(),
        ),
        (
            "PostEvent with a built-in key",
            Code::InvalidArgument,
            "invalid request: key: `reply` is a built-in event, raised by nudge itself; post a \
             custom key that contains a `.` (like `payment.received`), or report a `reply` \
             signal with ReportSignal (BAD_EVENT)"
                .into(),
        ),
    ];
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g, w, "enrollment {en}");
    }
    assert_eq!(got.len(), want.len());
    app.stop().await;
}

async fn journey_detail_is_a_struct(backend: Backend) {
    use prost_types::value::Kind;
    let app = spawn_app(backend).await;
    setup(&app).await;
    let mut c = clients(&app).await;
    let enrollment = enroll_ann(&app, &mut c).await;
    let entries = c
        .enrollments
        .get_journey(app.authed(GetJourneyRequest {
            enrollment_id: enrollment.id,
            page: None,
        }))
        .await
        .unwrap()
        .into_inner()
        .entries;
    let opened = entries
        .iter()
        .find(|e| e.kind == "run_opened")
        .expect("the call step's run");
    // A field of the detail, read as a field: no JSON text to parse.
    let detail = opened.detail.as_ref().expect("a detail");
    assert_eq!(
        detail.fields["step"].kind,
        Some(Kind::StringValue("call".into())),
        "{detail:?}"
    );
    assert_eq!(
        detail.fields["id"].kind,
        Some(Kind::NumberValue(1.0)),
        "{detail:?}"
    );
    app.stop().await;
}

/// A reflection client decodes a refusal's details as grpcurl does: with only the descriptors
/// the server's reflection serves (`google.rpc.Status`, `BadRequest`, `ErrorInfo` and what they
/// import), the `grpc-status-details-bin` trailer reads as the field, the reason (the code) and
/// the description. The README's session shows the same refusal through the real grpcurl.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reflection_client_decodes_the_bad_request() {
    use prost_reflect::{DynamicMessage, Value};
    let app = spawn_app(Backend::Sqlite).await;
    let e = app
        .contacts()
        .await
        .upsert_contact(app.authed(nudge::proto::v1::UpsertContactRequest {
            contact: Some(nudge::proto::v1::Contact {
                id: "ann".into(),
                phone: "2125551234".into(),
                ..Default::default()
            }),
        }))
        .await
        .expect_err("a phone without its country is refused");
    assert_eq!(e.code(), tonic::Code::InvalidArgument, "{e:?}");
    let addr = app.addr.to_string();
    let pool = crate::common::reflection::pool(
        &addr,
        &[
            "google.rpc.Status",
            "google.rpc.BadRequest",
            "google.rpc.ErrorInfo",
        ],
    )
    .await;
    let status = DynamicMessage::decode(
        pool.get_message_by_name("google.rpc.Status").unwrap(),
        e.details(),
    )
    .expect("the details are a google.rpc.Status");
    let Some(Value::List(details)) = status.get_field_by_name("details").map(|v| v.into_owned())
    else {
        panic!("no details in {status:?}");
    };
    let mut decoded = Vec::new();
    for any in details {
        let any = any.as_message().unwrap();
        let type_url = any
            .get_field_by_name("type_url")
            .unwrap()
            .as_str()
            .unwrap()
            .to_string();
        let bytes = any
            .get_field_by_name("value")
            .unwrap()
            .as_bytes()
            .unwrap()
            .clone();
        let name = type_url.trim_start_matches("type.googleapis.com/");
        let descriptor = pool
            .get_message_by_name(name)
            .unwrap_or_else(|| panic!("reflection serves {name}"));
        let message = DynamicMessage::decode(descriptor, bytes.as_ref()).unwrap();
        decoded.push((type_url, serde_json::to_value(&message).unwrap()));
    }
    let text = format!("{decoded:?}");
    let bad_request = decoded
        .iter()
        .find(|(t, _)| t == "type.googleapis.com/google.rpc.BadRequest")
        .unwrap_or_else(|| panic!("a BadRequest in {text}"));
    let violation = &bad_request.1["fieldViolations"][0];
    assert_eq!(violation["field"], "contact.phone", "{text}");
    assert_eq!(violation["reason"], "BAD_PHONE", "{text}");
    let description = violation["description"].as_str().unwrap();
    assert!(
        description.starts_with("`2125551234` is not a valid E.164 phone number")
            && description.contains("`+420 601 123 456`"),
        "{text}"
    );
    let info = decoded
        .iter()
        .find(|(t, _)| t == "type.googleapis.com/google.rpc.ErrorInfo")
        .unwrap_or_else(|| panic!("an ErrorInfo in {text}"));
    assert_eq!(info.1["reason"], "BAD_PHONE", "{text}");
    assert_eq!(info.1["domain"], "nudge", "{text}");
    app.stop().await;
}
