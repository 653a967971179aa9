//! Email replies through the signed email webhook: a reply is matched to the thread of the email
//! it answers.

use super::support::*;
use crate::common::{spawn_app, Backend};
use chrono::Duration;
use serde_json::json;

backend_tests!(email_reply_is_matched_to_its_thread);

async fn email_reply_is_matched_to_its_thread(backend: Backend) {
    let app = spawn_app(backend).await;
    let flow = create_flow(&app, EMAIL_FLOW).await;
    contact(&app, "ann", "ann@example.com", "").await;
    let id = enroll(&app, "ann", &flow).await;
    app.advance(Duration::seconds(1)).await;
    let message_id = claimed_message_id(&app, &id).await;
    assert!(!message_id.is_empty());
    assert_eq!(enrollment(&app, &id).await.current_step, "wait_reply");

    let secret = webhook_secret(&app).await;
    let now = signing_now();
    // Mail in no nudge thread: 202, ignored, nothing stored.
    let stray = json!({"headers": {"Message-ID": "<x1@mail>", "In-Reply-To": "<other@gmail.com>"},
                       "from": "ann@example.com", "subject": "hello"})
    .to_string();
    let (code, body) = http(
        &app,
        "/webhooks/email",
        &signed(&secret, now, stray.as_bytes()),
        stray.as_bytes(),
    )
    .await;
    assert_eq!(code, 202, "{body}");
    assert_eq!(json_body(&body)["status"], "ignored");
    assert_eq!(enrollment(&app, &id).await.current_step, "wait_reply");

    // A NUL in a header (it would become the provider id): 422 naming it, nothing stored.
    let nul = json!({"headers": {"Message-ID": "<r0\u{0}@mail>", "In-Reply-To": message_id},
                     "from": "ann@example.com", "subject": "hi"})
    .to_string();
    let (code, body) = http(
        &app,
        "/webhooks/email",
        &signed(&secret, now, nul.as_bytes()),
        nul.as_bytes(),
    )
    .await;
    assert_eq!(code, 422, "{body}");
    assert!(body.contains("/headers/Message-ID"), "{body}");
    assert_eq!(enrollment(&app, &id).await.current_step, "wait_reply");

    // A reply that names the thread in References only (folded, with another id first).
    let reply = json!({
        "headers": {"message-id": "<r1@mail.example.com>",
                    "References": format!("<older@x>\r\n {}", message_id)},
        "from": "Ann <ann@example.com>", "to": "rep@acme.com",
        "subject": "Re: intro", "text": "Sounds good"})
    .to_string();
    let (code, body) = http(
        &app,
        "/webhooks/email",
        &signed(&secret, now, reply.as_bytes()),
        reply.as_bytes(),
    )
    .await;
    assert_eq!(code, 200, "{body}");
    let receipt = json_body(&body);
    assert_eq!(receipt["deliveries"][0]["effect"], "woke");
    assert_eq!(receipt["deliveries"][0]["branch"], "reply:email");
    let e = enrollment(&app, &id).await;
    assert_eq!(
        (e.status.as_str(), e.outcome.as_str()),
        ("completed", "replied")
    );
    app.stop().await;
}
