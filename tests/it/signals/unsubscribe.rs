//! One-click unsubscribe (RFC 8058, docs/signals.md, "Inbox signals"): the link on every email dispatch, the page a
//! `GET` shows (it changes nothing), the one-click `POST` (idempotent), and refusals.

use super::support::*;
use crate::common::{spawn_app, Backend, TestApp};
use chrono::Duration;
use nudge::proto::v1::contact_service_client::ContactServiceClient;
use nudge::proto::v1::*;

backend_tests!(one_click_unsubscribe_opts_out_of_email_and_exits);

const FLOW: &str = r#"{
  "name": "unsub",
  "start": "email_1",
  "steps": {
    "email_1":    { "type": "email", "params": { "template": "intro" }, "next": { "then": "wait_reply" } },
    "wait_reply": { "type": "wait_for", "params": { "events": ["reply"], "timeout": "5d" },
                    "next": { "reply": "end", "timeout": "end" } },
    "end": { "type": "end" }
  }
}"#;

/// A raw HTTP request; answers the status, the head and the body.
async fn request(app: &TestApp, method: &str, path: &str, body: &str) -> (u16, String, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(app.addr).await.unwrap();
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: nudge.test\r\nConnection: close\r\n\
         Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    let _ = stream.read_to_end(&mut out).await;
    let text = String::from_utf8_lossy(&out).to_string();
    let status = text.split_whitespace().nth(1).unwrap().parse().unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    (status, head.to_ascii_lowercase(), body.to_string())
}

async fn opted_out(app: &TestApp, id: &str) -> Vec<String> {
    ContactServiceClient::new(app.channel().await)
        .get_contact(app.authed(GetContactRequest { id: id.into() }))
        .await
        .unwrap()
        .into_inner()
        .contact
        .unwrap()
        .opted_out
}

async fn one_click_unsubscribe_opts_out_of_email_and_exits(backend: Backend) {
    let app = spawn_app(backend).await;
    let flow = create_flow(&app, FLOW).await;
    contact(&app, "ann", "ann@example.com", "").await;
    let id = enroll(&app, "ann", &flow).await;
    app.advance(Duration::seconds(1)).await;
    let d = claimed(&app, &id).await;
    assert_eq!(d.list_unsubscribe_post, "List-Unsubscribe=One-Click");
    let prefix = format!("<http://{}/unsubscribe/", app.addr);
    assert!(
        d.list_unsubscribe.starts_with(&prefix),
        "{}",
        d.list_unsubscribe
    );
    let path = d
        .list_unsubscribe
        .trim_start_matches('<')
        .trim_end_matches('>')
        .trim_start_matches(&format!("http://{}", app.addr))
        .to_string();
    let token = path.trim_start_matches("/unsubscribe/").to_string();

    // GET shows a page with a button and changes nothing (mail scanners open links).
    let (code, head, body) = request(&app, "GET", &path, "").await;
    assert_eq!(code, 200, "{body}");
    for h in [
        "cache-control: no-store",
        "referrer-policy: no-referrer",
        "content-security-policy: default-src 'none'",
        "content-type: text/html",
    ] {
        assert!(head.contains(h), "{h} missing in {head}");
    }
    assert!(
        body.contains("<button") && body.contains("ann@example.com"),
        "{body}"
    );
    assert!(!body.contains(&token), "the page never holds the token");
    let (code, _, body) = request(&app, "HEAD", &path, "").await;
    assert_eq!((code, body.as_str()), (200, ""));
    assert_eq!(enrollment(&app, &id).await.status, "active");
    assert!(opted_out(&app, "ann").await.is_empty());

    // Another body: 400, nothing changed.
    let (code, _, _) = request(&app, "POST", &path, "unsubscribe=yes").await;
    assert_eq!(code, 400);
    assert_eq!(enrollment(&app, &id).await.status, "active");

    // A forged (altered) token: 404, nothing changed.
    let mut forged = token.clone();
    let last = forged.pop().unwrap();
    forged.push(if last == 'A' { 'B' } else { 'A' });
    let (code, head, _) = request(
        &app,
        "POST",
        &format!("/unsubscribe/{forged}"),
        "List-Unsubscribe=One-Click",
    )
    .await;
    assert_eq!(code, 404);
    assert!(head.contains("cache-control: no-store"));
    assert_eq!(enrollment(&app, &id).await.status, "active");

    // The one-click POST: opted out of email, the enrollment exits.
    let (code, _, body) = request(&app, "POST", &path, "List-Unsubscribe=One-Click").await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(opted_out(&app, "ann").await, vec!["email".to_string()]);
    let e = enrollment(&app, &id).await;
    assert_eq!(
        (e.status.as_str(), e.reason.as_str()),
        ("exited", "opt_out:email")
    );
    // Idempotent.
    let (code, _, _) = request(&app, "POST", &path, "List-Unsubscribe=One-Click").await;
    assert_eq!(code, 200);
    let (code, _, body) = request(&app, "GET", &path, "").await;
    assert_eq!(code, 200);
    assert!(
        body.contains("unsubscribed") && !body.contains("<button"),
        "{body}"
    );
    app.stop().await;
}
