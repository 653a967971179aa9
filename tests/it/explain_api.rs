//! `EnrollmentService.Explain` end to end (docs/operations.md): the answer over gRPC for a stored
//! enrollment, and the refusals (an unknown id, a malformed one, another account's).

use crate::common::{spawn_app, with_token, Backend, TestApp};
use nudge::auth::Scope;
use nudge::proto::v1::enrollment_service_client::EnrollmentServiceClient;
use nudge::proto::v1::*;
use tonic::Code;

backend_tests!(
    explain_answers_for_a_stored_enrollment,
    explain_refuses_unknown_and_foreign_ids,
);

/// A flow that sends an SMS inside a weekday window, then waits for a reply.
pub async fn sms_flow(app: &TestApp) -> String {
    let definition = serde_json::json!({
        "name": "explain-sms", "start": "text",
        "settings": {"send_window": {"days": ["mon", "tue", "wed", "thu", "fri"], "from": "09:00", "to": "17:00", "tz": "contact"}},
        "steps": {
            "text": {"type": "sms", "params": {"template": "hello"}, "next": {"then": "listen"}},
            "listen": {"type": "wait_for", "params": {"events": ["reply"], "timeout": {"for": "3d"}},
                       "next": {"reply": "done", "timeout": "done"}},
            "done": {"type": "end"}
        }
    })
    .to_string();
    app.flows()
        .await
        .create_flow(app.authed(CreateFlowRequest { definition }))
        .await
        .unwrap();
    app.contacts()
        .await
        .upsert_contact(app.authed(UpsertContactRequest {
            contact: Some(Contact {
                id: "dee".into(),
                phone: "+13035551234".into(),
                tz: "America/Denver".into(),
                ..Default::default()
            }),
        }))
        .await
        .unwrap();
    let e = EnrollmentServiceClient::new(app.channel().await)
        .enroll(app.authed(EnrollRequest {
            contact_id: "dee".into(),
            flow_id: "explain-sms".into(),
            ..Default::default()
        }))
        .await
        .unwrap()
        .into_inner()
        .enrollment
        .unwrap();
    e.id
}

async fn explain_answers_for_a_stored_enrollment(backend: Backend) {
    let app = spawn_app(backend).await;
    // The clock starts Fri 2026-12-04 20:00Z = 13:00 in Denver: the window is open, so the
    // SMS goes at once and the enrollment waits for a reply.
    let id = sms_flow(&app).await;
    let mut c = EnrollmentServiceClient::new(app.channel().await);
    let x = c
        .explain(app.authed(ExplainRequest { id: id.clone() }))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(x.enrollment_id, id);
    assert_eq!(x.status, "active");
    assert_eq!(x.reason(), WaitReason::Signal);
    assert_eq!(x.step, "listen");
    assert_eq!(x.events, vec!["reply"]);
    assert_eq!(x.zone, "America/Denver");
    assert_eq!(
        x.until.map(|t| t.seconds),
        Some(nudge::clock::to_millis(crate::common::start_instant()) / 1000 + 3 * 86_400)
    );
    assert!(x.sentence.contains("for reply"), "{}", x.sentence);

    c.pause(app.authed(PauseRequest { id: id.clone() }))
        .await
        .unwrap();
    let x = c
        .explain(app.authed(ExplainRequest { id: id.clone() }))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(x.reason(), WaitReason::Paused);
    assert_eq!(x.status, "paused");

    c.exit(app.authed(ExitRequest {
        id: id.clone(),
        reason: "done by hand".into(),
    }))
    .await
    .unwrap();
    let x = c
        .explain(app.authed(ExplainRequest { id }))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(x.reason(), WaitReason::Unspecified);
    assert!(x.sentence.contains("done by hand"), "{}", x.sentence);
    app.stop().await;
}

async fn explain_refuses_unknown_and_foreign_ids(backend: Backend) {
    let app = spawn_app(backend).await;
    let id = sms_flow(&app).await;
    let mut c = EnrollmentServiceClient::new(app.channel().await);

    let unknown = c
        .explain(app.authed(ExplainRequest {
            id: "en_nosuch".into(),
        }))
        .await
        .unwrap_err();
    assert_eq!(unknown.code(), Code::NotFound, "{unknown:?}");
    assert!(unknown.message().contains("en_nosuch"), "{unknown:?}");

    let bad = c
        .explain(app.authed(ExplainRequest {
            id: "en\u{7}bell".into(),
        }))
        .await
        .unwrap_err();
    assert_eq!(bad.code(), Code::InvalidArgument, "{bad:?}");

    // Another account's token sees the same NOT_FOUND as for an id that does not exist.
    let db = &app.state.core.db;
    nudge::store::accounts::create(db, "other", "Other", 0)
        .await
        .unwrap();
    let other = nudge::auth::create_token(db, "other", &Scope::Full, 0)
        .await
        .unwrap();
    let foreign = c
        .explain(with_token(ExplainRequest { id: id.clone() }, &other))
        .await
        .unwrap_err();
    assert_eq!(foreign.code(), Code::NotFound, "{foreign:?}");
    // Word for word what an unknown id gets, so it tells nothing of the enrollment (its contact
    // `dee` included). Not `!contains("dee")`: the id is random hex and may hold those letters.
    assert_eq!(
        foreign.message(),
        unknown.message().replace("en_nosuch", &id),
        "{foreign:?}"
    );

    // A token scoped to another enrollment is refused, not answered.
    let scoped = app.token(Scope::Enrollment("en_else".into())).await;
    let denied = c
        .explain(with_token(ExplainRequest { id }, &scoped))
        .await
        .unwrap_err();
    assert_eq!(denied.code(), Code::PermissionDenied, "{denied:?}");
    app.stop().await;
}
