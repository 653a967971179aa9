//! End-to-end tests of the gRPC API: the real server on port 0, real tonic clients. Every test
//! runs against SQLite (`sqlite::…`) and, with `NUDGE_TEST_DATABASE_URL`, PostgreSQL
//! (`postgres::…`).

use crate::common::{spawn_app, with_token, Backend};
use chrono::Duration;
use nudge::auth::Scope;
use nudge::proto::v1::*;
use tonic::Code;
use tonic_types::StatusExt;

backend_tests!(
    auth_is_required_and_scoped,
    contact_upsert_get_and_opt_out,
    bad_phone_tz_and_email_are_refused_with_field_violations,
    unknown_contact_is_not_found,
    senders_and_the_default_sender,
    flows_are_stored_as_immutable_versions,
    unparseable_flow_is_refused_and_changes_nothing,
    oversized_request_is_refused_and_changes_nothing,
    health_and_reflection_need_no_token,
    concurrent_opt_outs_keep_every_channel,
);

fn ann() -> Contact {
    let attributes: serde_json::Value = serde_json::json!({"plan": "pro", "seats": 3});
    let serde_json::Value::Object(map) = attributes else {
        unreachable!()
    };
    Contact {
        id: "crm-1".into(),
        email: "ann@example.com".into(),
        phone: "+1 212 555 1234".into(),
        tz: "America/New_York".into(),
        attributes: Some(nudge::api::grpc::convert::json_to_struct(map)),
        ..Default::default()
    }
}

fn upsert(contact: Contact) -> UpsertContactRequest {
    UpsertContactRequest {
        contact: Some(contact),
    }
}

async fn auth_is_required_and_scoped(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut contacts = app.contacts().await;
    let get = || GetContactRequest { id: "crm-1".into() };

    let missing = contacts.get_contact(get()).await.unwrap_err();
    assert_eq!(missing.code(), Code::Unauthenticated, "{missing:?}");
    assert!(
        missing.message().contains("authorization: Bearer"),
        "{}",
        missing.message()
    );

    let wrong = contacts
        .get_contact(with_token(get(), "nudge_0000"))
        .await
        .unwrap_err();
    assert_eq!(wrong.code(), Code::Unauthenticated);

    let mut basic = tonic::Request::new(get());
    basic
        .metadata_mut()
        .insert("authorization", "Basic dXNlcjpwdw==".parse().unwrap());
    assert_eq!(
        contacts.get_contact(basic).await.unwrap_err().code(),
        Code::Unauthenticated
    );

    let scoped = app.token(Scope::Enrollment("en_1".into())).await;
    let denied = contacts
        .upsert_contact(with_token(upsert(ann()), &scoped))
        .await
        .unwrap_err();
    assert_eq!(denied.code(), Code::PermissionDenied, "{denied:?}");

    // Neither refused call stored anything; a full token sees an unknown contact.
    let status = contacts.get_contact(app.authed(get())).await.unwrap_err();
    assert_eq!(status.code(), Code::NotFound);
    app.stop().await;
}

async fn contact_upsert_get_and_opt_out(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut contacts = app.contacts().await;

    let first = contacts
        .upsert_contact(app.authed(upsert(ann())))
        .await
        .unwrap()
        .into_inner();
    assert!(first.created);
    let stored = first.contact.unwrap();
    assert_eq!(stored.phone, "+12125551234", "normalized to E.164");
    assert_eq!(stored.tz, "America/New_York");
    assert!(stored.opted_out.is_empty());

    let got = contacts
        .get_contact(app.authed(GetContactRequest { id: "crm-1".into() }))
        .await
        .unwrap()
        .into_inner()
        .contact
        .unwrap();
    assert_eq!(got, stored);
    let attrs = got.attributes.unwrap();
    let seats = attrs.fields["seats"].kind.clone();
    assert_eq!(seats, Some(prost_types::value::Kind::NumberValue(3.0)));

    app.clock.advance(Duration::minutes(5));
    let opted = contacts
        .opt_out(app.authed(OptOutRequest {
            contact_id: "crm-1".into(),
            channels: vec!["sms".into(), "email".into(), "sms".into()],
        }))
        .await
        .unwrap()
        .into_inner()
        .contact
        .unwrap();
    assert_eq!(opted.opted_out, vec!["email", "sms"]);

    // A second upsert replaces the fields but keeps the opt-outs and the creation time.
    app.clock.advance(Duration::minutes(5));
    let mut changed = ann();
    changed.email = "ann@new.example.com".into();
    changed.tz = String::new();
    let second = contacts
        .upsert_contact(app.authed(upsert(changed)))
        .await
        .unwrap()
        .into_inner();
    assert!(!second.created);
    let second = second.contact.unwrap();
    assert_eq!(second.email, "ann@new.example.com");
    assert_eq!(second.tz, "");
    assert_eq!(second.opted_out, vec!["email", "sms"]);
    assert_eq!(second.created_at, stored.created_at);
    assert_eq!(
        second.updated_at.unwrap().seconds - stored.created_at.unwrap().seconds,
        600
    );

    // An empty id gets one assigned.
    let mut anonymous = ann();
    anonymous.id = String::new();
    let assigned = contacts
        .upsert_contact(app.authed(upsert(anonymous)))
        .await
        .unwrap()
        .into_inner()
        .contact
        .unwrap();
    assert!(assigned.id.starts_with("ct_"), "{}", assigned.id);
    app.stop().await;
}

async fn bad_phone_tz_and_email_are_refused_with_field_violations(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut contacts = app.contacts().await;
    let mut bad = ann();
    bad.phone = "2125551234".into(); // national, without `+`
    bad.tz = "CET".into();
    bad.email = "ann".into();
    let status = contacts
        .upsert_contact(app.authed(upsert(bad)))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument);
    let violations = status
        .get_details_bad_request()
        .expect("BadRequest details")
        .field_violations;
    let fields: Vec<&str> = violations.iter().map(|v| v.field.as_str()).collect();
    assert_eq!(fields, ["contact.email", "contact.phone", "contact.tz"]);
    // The code is the violation's reason; the description is the message alone.
    assert_eq!(violations[1].reason, "BAD_PHONE");
    assert!(
        violations[1].description.starts_with("`2125551234`"),
        "{}",
        violations[1].description
    );
    assert_eq!(violations[2].reason, "BAD_TZ");
    assert!(
        !violations[2].description.contains("BAD_TZ"),
        "{}",
        violations[2].description
    );
    assert!(violations[2].description.contains("CET"));
    let info = status.get_details_error_info().expect("ErrorInfo details");
    assert_eq!(info.reason, "BAD_SCHEMA");
    assert_eq!(info.metadata["codes"], "BAD_SCHEMA,BAD_PHONE,BAD_TZ");

    // A number no plan allows is BAD_PHONE too.
    let mut invalid = ann();
    invalid.phone = "+1 555 555 5555".into();
    let status = contacts
        .upsert_contact(app.authed(upsert(invalid)))
        .await
        .unwrap_err();
    assert_eq!(status.get_details_error_info().unwrap().reason, "BAD_PHONE");

    // Nothing was stored.
    let status = contacts
        .get_contact(app.authed(GetContactRequest { id: "crm-1".into() }))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::NotFound);

    // Opting out of an unknown channel is refused and names the entry.
    contacts
        .upsert_contact(app.authed(upsert(ann())))
        .await
        .unwrap();
    let status = contacts
        .opt_out(app.authed(OptOutRequest {
            contact_id: "crm-1".into(),
            channels: vec!["fax".into()],
        }))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument);
    assert_eq!(
        status.get_details_bad_request().unwrap().field_violations[0].field,
        "channels[0]"
    );
    let after = contacts
        .get_contact(app.authed(GetContactRequest { id: "crm-1".into() }))
        .await
        .unwrap()
        .into_inner()
        .contact
        .unwrap();
    assert!(after.opted_out.is_empty());
    app.stop().await;
}

async fn unknown_contact_is_not_found(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut contacts = app.contacts().await;
    let status = contacts
        .get_contact(app.authed(GetContactRequest {
            id: "nobody".into(),
        }))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::NotFound);
    assert!(
        status.message().contains("`nobody`"),
        "{}",
        status.message()
    );
    let status = contacts
        .opt_out(app.authed(OptOutRequest {
            contact_id: "nobody".into(),
            channels: vec!["sms".into()],
        }))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::NotFound);
    app.stop().await;
}

async fn senders_and_the_default_sender(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut senders = app.senders().await;
    let default = senders
        .get_sender(app.authed(GetSenderRequest { id: String::new() }))
        .await
        .unwrap()
        .into_inner()
        .sender
        .unwrap();
    assert_eq!(default.tz, "UTC");
    assert!(default.is_default);

    let rep = Sender {
        id: "rep-1".into(),
        email: "rep@example.com".into(),
        tz: "Europe/Prague".into(),
        calendar: "rep@example.com".into(),
        ..Default::default()
    };
    let made = senders
        .upsert_sender(app.authed(UpsertSenderRequest {
            sender: Some(rep.clone()),
            make_default: true,
        }))
        .await
        .unwrap()
        .into_inner();
    assert!(made.created);
    let now_default = senders
        .get_sender(app.authed(GetSenderRequest { id: String::new() }))
        .await
        .unwrap()
        .into_inner()
        .sender
        .unwrap();
    assert_eq!(now_default.id, "rep-1");
    assert_eq!(now_default.tz, "Europe/Prague");
    assert!(now_default.is_default);

    let mut bad = rep;
    bad.tz = "Local".into();
    let status = senders
        .upsert_sender(app.authed(UpsertSenderRequest {
            sender: Some(bad),
            make_default: false,
        }))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::InvalidArgument);
    assert_eq!(status.get_details_error_info().unwrap().reason, "BAD_TZ");
    let unchanged = senders
        .get_sender(app.authed(GetSenderRequest { id: "rep-1".into() }))
        .await
        .unwrap()
        .into_inner()
        .sender
        .unwrap();
    assert_eq!(unchanged.tz, "Europe/Prague");

    let status = senders
        .get_sender(app.authed(GetSenderRequest { id: "rep-9".into() }))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::NotFound);
    app.stop().await;
}

const OUTBOUND_V1: &str =
    r#"{"name": "outbound", "start": "end", "steps": {"end": {"type": "end"}}}"#;
const OUTBOUND_V2: &str = r#"{"name": "outbound", "start": "done", "steps": {"done": {"type": "end", "params": {"outcome": "ok"}}}}"#;

fn create(definition: &str) -> CreateFlowRequest {
    CreateFlowRequest {
        definition: definition.into(),
    }
}

async fn flows_are_stored_as_immutable_versions(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut flows = app.flows().await;
    let v1 = flows
        .create_flow(app.authed(create(OUTBOUND_V1)))
        .await
        .unwrap()
        .into_inner()
        .flow
        .unwrap();
    assert_eq!((v1.name.as_str(), v1.version), ("outbound", 1));
    let v2 = flows
        .create_flow(app.authed(create(OUTBOUND_V2)))
        .await
        .unwrap()
        .into_inner()
        .flow
        .unwrap();
    assert_eq!((v2.id.as_str(), v2.version), (v1.id.as_str(), 2));
    flows
        .create_flow(app.authed(create(
            r#"{"name": "another", "start": "end", "steps": {"end": {"type": "end"}}}"#,
        )))
        .await
        .unwrap();

    let get = |id: &str, version: i32| GetFlowRequest {
        id: id.into(),
        version,
    };
    let latest = flows
        .get_flow(app.authed(get(&v1.id, 0)))
        .await
        .unwrap()
        .into_inner()
        .flow
        .unwrap();
    assert_eq!(latest.definition, OUTBOUND_V2);
    let first = flows
        .get_flow(app.authed(get("outbound", 1)))
        .await
        .unwrap()
        .into_inner()
        .flow
        .unwrap();
    assert_eq!(first.definition, OUTBOUND_V1, "a version never changes");
    let status = flows
        .get_flow(app.authed(get("outbound", 3)))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::NotFound);
    let status = flows
        .get_flow(app.authed(get("missing", 0)))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::NotFound);

    let page = |size: i32, token: &str| ListFlowsRequest {
        page: Some(PageRequest {
            page_size: size,
            page_token: token.into(),
        }),
    };
    let all = flows
        .list_flows(app.authed(page(0, "")))
        .await
        .unwrap()
        .into_inner();
    let names: Vec<(String, i32)> = all
        .flows
        .iter()
        .map(|f| (f.name.clone(), f.version))
        .collect();
    assert_eq!(
        names,
        [("another".to_string(), 1), ("outbound".to_string(), 2)]
    );
    assert_eq!(all.next_page_token, "");
    let one = flows
        .list_flows(app.authed(page(1, "")))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(one.flows.len(), 1);
    assert_eq!(one.next_page_token, "another");
    let rest = flows
        .list_flows(app.authed(page(1, &one.next_page_token)))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(rest.flows[0].name, "outbound");
    assert_eq!(rest.next_page_token, "");
    app.stop().await;
}

async fn unparseable_flow_is_refused_and_changes_nothing(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut flows = app.flows().await;
    flows
        .create_flow(app.authed(create(OUTBOUND_V1)))
        .await
        .unwrap();
    for (bad, field) in [
        (r#"{"name": "outbound", "steps": "#, "definition"),
        ("[1, 2]", "definition"),
        (r#"{"steps": {}}"#, "definition/name"),
    ] {
        let status = flows
            .create_flow(app.authed(create(bad)))
            .await
            .unwrap_err();
        assert_eq!(status.code(), Code::InvalidArgument, "{bad}");
        let violation = &status.get_details_bad_request().unwrap().field_violations[0];
        assert_eq!(violation.field, field, "{bad}");
        assert_eq!(violation.reason, "BAD_SCHEMA", "{bad}");
    }
    let listed = flows
        .list_flows(app.authed(ListFlowsRequest { page: None }))
        .await
        .unwrap()
        .into_inner()
        .flows;
    assert_eq!(listed.len(), 1);
    assert_eq!(
        listed[0].version, 1,
        "no version was added by a refused create"
    );
    app.stop().await;
}

async fn oversized_request_is_refused_and_changes_nothing(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut flows = app.flows().await;
    let huge = format!(
        r#"{{"name": "huge", "padding": "{}"}}"#,
        "x".repeat(nudge::config::DEFAULT_MAX_MESSAGE_BYTES + 1)
    );
    let status = flows
        .create_flow(app.authed(create(&huge)))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::OutOfRange, "{status:?}");
    assert!(
        status.message().contains("too large"),
        "{}",
        status.message()
    );
    let status = flows
        .get_flow(app.authed(GetFlowRequest {
            id: "huge".into(),
            version: 0,
        }))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::NotFound);
    // Just under the limit is fine (a valid flow with a long template name).
    let fits = format!(
        r#"{{"name": "fits", "start": "e", "steps": {{"e": {{"type": "email", "params": {{"template": "{}"}}, "next": {{"then": "end"}}}}, "end": {{"type": "end"}}}}}}"#,
        "x".repeat(1024 * 1024)
    );
    flows.create_flow(app.authed(create(&fits))).await.unwrap();
    app.stop().await;
}

async fn health_and_reflection_need_no_token(backend: Backend) {
    use tonic_health::pb::{health_client::HealthClient, HealthCheckRequest};
    use tonic_reflection::pb::v1::server_reflection_client::ServerReflectionClient;
    use tonic_reflection::pb::v1::server_reflection_request::MessageRequest;
    use tonic_reflection::pb::v1::server_reflection_response::MessageResponse;
    use tonic_reflection::pb::v1::ServerReflectionRequest;

    let app = spawn_app(backend).await;
    let channel = app.channel().await;
    let mut health = HealthClient::new(channel.clone());
    for service in ["", "nudge.v1.ContactService", "nudge.v1.FlowService"] {
        let status = health
            .check(HealthCheckRequest {
                service: service.into(),
            })
            .await
            .unwrap()
            .into_inner()
            .status;
        assert_eq!(status, 1, "SERVING for `{service}`");
    }

    let mut reflection = ServerReflectionClient::new(channel);
    let request = ServerReflectionRequest {
        host: String::new(),
        message_request: Some(MessageRequest::ListServices(String::new())),
    };
    let mut responses = reflection
        .server_reflection_info(tokio_stream::iter([request]))
        .await
        .unwrap()
        .into_inner();
    let response = responses.message().await.unwrap().unwrap();
    let Some(MessageResponse::ListServicesResponse(list)) = response.message_response else {
        panic!("unexpected reflection answer {response:?}");
    };
    let names: Vec<String> = list.service.into_iter().map(|s| s.name).collect();
    for wanted in [
        "nudge.v1.ContactService",
        "nudge.v1.SenderService",
        "nudge.v1.FlowService",
        "grpc.health.v1.Health",
    ] {
        assert!(
            names.iter().any(|n| n == wanted),
            "{wanted} missing from {names:?}"
        );
    }

    // Plain HTTP on the same port.
    let body = http_get(app.addr, "/healthz").await;
    assert!(body.starts_with("HTTP/1.1 200"), "{body}");
    app.stop().await;
}

async fn http_get(addr: std::net::SocketAddr, path: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(
            format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").as_bytes(),
        )
        .await
        .unwrap();
    let mut out = String::new();
    stream.read_to_string(&mut out).await.unwrap();
    out
}

/// The quickstart flow of the README (the docs/flows.md example) is stored verbatim.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quickstart_flow_is_stored_verbatim() {
    let app = spawn_app(Backend::Sqlite).await;
    let mut flows = app.flows().await;
    let definition = include_str!("../../fixtures/quickstart/outbound.json");
    let created = flows
        .create_flow(app.authed(create(definition)))
        .await
        .unwrap()
        .into_inner()
        .flow
        .unwrap();
    assert_eq!(created.name, "outbound-v1");
    let got = flows
        .get_flow(app.authed(GetFlowRequest {
            id: created.id.clone(),
            version: 0,
        }))
        .await
        .unwrap()
        .into_inner()
        .flow
        .unwrap();
    assert_eq!(got.definition, definition);
    app.stop().await;
}

/// Opt-outs racing on one contact all land (compare-and-set, not last-writer-wins).
async fn concurrent_opt_outs_keep_every_channel(backend: Backend) {
    let app = spawn_app(backend).await;
    let mut contacts = app.contacts().await;
    contacts
        .upsert_contact(app.authed(upsert(ann())))
        .await
        .unwrap();
    let mut tasks = Vec::new();
    for channel in ["email", "sms", "call", "linkedin"] {
        let mut client = contacts.clone();
        let request = app.authed(OptOutRequest {
            contact_id: "crm-1".into(),
            channels: vec![channel.into()],
        });
        tasks.push(tokio::spawn(async move { client.opt_out(request).await }));
    }
    for task in tasks {
        task.await.unwrap().unwrap();
    }
    let after = contacts
        .get_contact(app.authed(GetContactRequest { id: "crm-1".into() }))
        .await
        .unwrap()
        .into_inner()
        .contact
        .unwrap();
    assert_eq!(after.opted_out, ["call", "email", "linkedin", "sms"]);
    app.stop().await;
}
