//! Custom events: over HTTP (`/events`, by the status rules) and over gRPC (`PostEvent`, which
//! needs a full token).

use super::support::*;
use crate::common::{spawn_app, with_token, Backend};
use nudge::auth::Scope;
use nudge::proto::v1::*;
use tonic::Code;

backend_tests!(
    events_over_http_follow_the_status_rules,
    post_event_over_grpc_needs_a_full_token,
);

async fn events_over_http_follow_the_status_rules(backend: Backend) {
    let app = spawn_app(backend).await;
    let flow = create_flow(&app, ROUTING_FLOW).await;
    contact(&app, "ann", "ann@example.com", "+12125550100").await;
    let id = enroll(&app, "ann", &flow).await;
    let bearer = |t: &str| ("Authorization", format!("Bearer {t}"));
    let enrollment_token = app.token(Scope::Enrollment(id.clone())).await;
    let full = bearer(&app.token);
    let big = format!("{{\"x\": \"{}\"}}", "a".repeat(65 * 1024));
    let cases: Vec<(&str, String, Headers, Vec<u8>, u16)> = vec![
        (
            "no token",
            "/events/payment.received?contact=ann".into(),
            vec![],
            b"{}".to_vec(),
            401,
        ),
        (
            "bad token",
            "/events/payment.received?contact=ann".into(),
            vec![bearer("nudge_nope")],
            b"{}".to_vec(),
            401,
        ),
        (
            "enrollment token",
            "/events/payment.received?contact=ann".into(),
            vec![bearer(&enrollment_token)],
            b"{}".to_vec(),
            403,
        ),
        (
            "65 KiB",
            "/events/payment.received?contact=ann".into(),
            vec![full.clone()],
            big.into_bytes(),
            413,
        ),
        (
            "bad JSON",
            "/events/payment.received?contact=ann".into(),
            vec![full.clone()],
            b"{\"amount\": }".to_vec(),
            422,
        ),
        (
            "unknown contact",
            "/events/payment.received?contact=nobody".into(),
            vec![full.clone()],
            b"{}".to_vec(),
            404,
        ),
        (
            "unknown phone",
            "/events/payment.received?contact=%2B12125559999".into(),
            vec![full.clone()],
            b"{}".to_vec(),
            404,
        ),
        (
            "no contact",
            "/events/payment.received".into(),
            vec![full.clone()],
            b"{}".to_vec(),
            400,
        ),
        (
            "built-in key",
            "/events/reply?contact=ann".into(),
            vec![full.clone()],
            b"{}".to_vec(),
            400,
        ),
    ];
    for (name, path, headers, body, status) in cases {
        let (code, text) = http(&app, &path, &headers, &body).await;
        assert_eq!(code, status, "{name}: {text}");
        assert!(
            json_body(&text)["error"]["message"].is_string(),
            "{name}: {text}"
        );
    }
    let e = enrollment(&app, &id).await;
    assert_eq!(e.status, "active", "nothing was stored by a refusal");
    assert!(journey(&app, &id).await.iter().all(|(k, _)| k != "signal"));

    // An unlisted key with an empty body is buffered with {}; then the listed one wakes the
    // wait (the contact named by its phone number), with its payload; a retry with the same
    // Idempotency-Key is a duplicate.
    let (code, text) = http(
        &app,
        "/events/payment.pending?contact=ann@example.com",
        std::slice::from_ref(&full),
        b"",
    )
    .await;
    assert_eq!(code, 200, "{text}");
    assert_eq!(json_body(&text)["deliveries"][0]["effect"], "buffered");
    let signal = json_body(&text)["signal_id"].as_str().unwrap().to_string();
    let buffered = journey(&app, &id).await;
    assert!(buffered
        .iter()
        .any(|(k, d)| k == "signal" && d["signal"] == signal.as_str()));
    let headers = vec![full.clone(), ("Idempotency-Key", "pay-1".to_string())];
    let (code, text) = http(
        &app,
        "/events/payment.received?contact=%2B12125550100",
        &headers,
        br#"{"amount": 42}"#,
    )
    .await;
    assert_eq!(code, 200, "{text}");
    let first = json_body(&text);
    assert_eq!(first["deliveries"][0]["branch"], "payment.received");
    let e = enrollment(&app, &id).await;
    assert_eq!(
        (e.status.as_str(), e.outcome.as_str()),
        ("completed", "paid")
    );
    let (code, text) = http(
        &app,
        "/events/payment.received?contact=ann",
        &headers,
        br#"{"amount": 42}"#,
    )
    .await;
    assert_eq!(code, 200, "{text}");
    let second = json_body(&text);
    assert_eq!(second["duplicate"], true);
    assert_eq!(second["signal_id"], first["signal_id"]);
    app.stop().await;
}

async fn post_event_over_grpc_needs_a_full_token(backend: Backend) {
    let app = spawn_app(backend).await;
    let flow = create_flow(&app, ROUTING_FLOW).await;
    contact(&app, "ann", "ann@example.com", "").await;
    let id = enroll(&app, "ann", &flow).await;
    let scoped = app.token(Scope::Enrollment(id.clone())).await;
    let request = || PostEventRequest {
        key: "payment.received".into(),
        contact: "ann".into(),
        payload: String::new(),
        provider_id: String::new(),
    };
    let e = app
        .signals()
        .await
        .post_event(with_token(request(), &scoped))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::PermissionDenied, "{e:?}");
    let big = PostEventRequest {
        payload: format!("\"{}\"", "x".repeat(64 * 1024)),
        ..request()
    };
    let e = app
        .signals()
        .await
        .post_event(app.authed(big))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument, "{e:?}");
    assert!(e.message().contains("64 KiB"), "{}", e.message());
    let bad = PostEventRequest {
        payload: "{".into(),
        ..request()
    };
    let e = app
        .signals()
        .await
        .post_event(app.authed(bad))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument, "{e:?}");
    assert_eq!(enrollment(&app, &id).await.status, "active");
    let ok = post_event(&app, "ann", "payment.received", "").await;
    assert_eq!(ok.deliveries[0].effect, "woke");
    app.stop().await;
}
