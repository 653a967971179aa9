//! The signed webhooks (`X-Nudge-Signature`): forged, stale and replayed requests are refused, the
//! calendar webhook books a meeting for its attendees, and the CLI shows the secret and sets the
//! Twilio token.

use super::support::*;
use crate::common::{spawn_app, Backend};
use chrono::Duration;
use serde_json::json;

backend_tests!(
    signed_webhooks_refuse_forged_stale_and_replayed_requests,
    calendar_event_books_a_meeting_for_attendees,
    webhook_signatures_are_fresh_by_the_system_clock_not_virtual_time,
    a_replayed_signature_is_refused_when_the_mail_was_ignored,
    webhook_query_parameters_are_checked_at_the_edge,
);

async fn signed_webhooks_refuse_forged_stale_and_replayed_requests(backend: Backend) {
    let app = spawn_app(backend).await;
    let flow = create_flow(&app, ROUTING_FLOW).await;
    contact(&app, "ann", "ann@example.com", "").await;
    let id = enroll(&app, "ann", &flow).await;
    calendar_sender(&app, "rep@acme.com").await;
    let secret = webhook_secret(&app).await;
    let now = signing_now();
    let event = |id: &str| {
        json!({"id": id, "organizer": "rep@acme.com", "attendees": ["ann@example.com"],
               "start": "2026-12-10T15:00:00Z"})
        .to_string()
    };
    let path = "/webhooks/calendar";
    let body = event("evt-1");
    let b = body.as_bytes();
    let refusals: Vec<(&str, Headers, &[u8], u16, &str)> = vec![
        ("no signature", vec![], b, 401, "X-Nudge-Signature"),
        (
            "forged",
            signed("not-the-secret", now, b),
            b,
            401,
            "does not match",
        ),
        (
            "altered body",
            signed(&secret, now, b),
            br#"{"id":"evt-1"}"#,
            401,
            "does not match",
        ),
        (
            // The server reads the system clock after this test did: under load a second or
            // two may tick in between, so the hint names the bound, not the exact age.
            "5 min 1 s old",
            signed(&secret, now - 301, b),
            b,
            401,
            "away from the system clock; at most 300s is accepted",
        ),
        (
            "malformed",
            vec![("X-Nudge-Signature", "sha256=abc".into())],
            b,
            401,
            "malformed",
        ),
        (
            "bad JSON, signed",
            signed(&secret, now, b"{nope"),
            b"{nope",
            422,
            "does not parse",
        ),
        (
            "missing fields, signed",
            signed(&secret, now, b"{}"),
            b"{}",
            422,
            "does not parse",
        ),
    ];
    for (name, headers, body, status, hint) in refusals {
        let (code, text) = http(&app, path, &headers, body).await;
        assert_eq!(code, status, "{name}: {text}");
        assert!(
            json_body(&text)["error"]["message"]
                .as_str()
                .unwrap()
                .contains(hint),
            "{name}: {text}"
        );
    }
    assert_eq!(
        enrollment(&app, &id).await.status,
        "active",
        "nothing was stored"
    );
    assert!(journey(&app, &id).await.iter().all(|(k, _)| k != "signal"));

    // Within 5 minutes is accepted. The server reads the system clock after this test did, so
    // a second may tick in between: 299 s here; the exact 300 s bound is
    // `inbound::signing::tests::accepted_at_the_edges_and_with_rotated_secrets` (an injected instant).
    let headers = signed(&secret, now - 299, b);
    let (code, text) = http(&app, path, &headers, b).await;
    assert_eq!(code, 200, "{text}");
    assert_eq!(json_body(&text)["deliveries"][0]["effect"], "exited");
    assert_eq!(enrollment(&app, &id).await.reason, "exit_on:meeting_booked");
    // The same request again is a replay.
    let (code, text) = http(&app, path, &headers, b).await;
    assert_eq!(code, 401, "{text}");
    assert!(text.contains("already used"), "{text}");
    // Signed anew, the same event id is a duplicate: the first result, nothing changes.
    let (code, text) = http(&app, path, &signed(&secret, now + 1, b), b).await;
    assert_eq!(code, 200, "{text}");
    assert_eq!(json_body(&text)["duplicate"], true);

    app.stop().await;
}

/// Freshness is about real time: a manual-clock server whose virtual time moved days ahead
/// still takes a webhook signed now, and refuses one signed 6 minutes ago, by the system clock.
async fn webhook_signatures_are_fresh_by_the_system_clock_not_virtual_time(backend: Backend) {
    let app = spawn_app(backend).await;
    contact(&app, "ann", "ann@example.com", "").await;
    let secret = webhook_secret(&app).await;
    app.advance(Duration::days(3)).await;
    let stray = |id: &str| {
        json!({"headers": {"Message-ID": id, "In-Reply-To": "<other@gmail.com>"},
               "from": "ann@example.com"})
        .to_string()
    };
    let path = "/webhooks/email";
    let now = signing_now();
    let body = stray("<a@mail>");
    let (code, text) = http(
        &app,
        path,
        &signed(&secret, now, body.as_bytes()),
        body.as_bytes(),
    )
    .await;
    assert_eq!(code, 202, "signed now, days behind virtual time: {text}");
    let body = stray("<b@mail>");
    let (code, text) = http(
        &app,
        path,
        &signed(&secret, now - 6 * 60, body.as_bytes()),
        body.as_bytes(),
    )
    .await;
    assert_eq!(code, 401, "signed 6 minutes ago: {text}");
    assert!(text.contains("system clock"), "{text}");
    // Virtual time moved back to before the signature: still fresh.
    app.clock.set(app.clock_now() - Duration::days(30));
    let body = stray("<c@mail>");
    let (code, text) = http(
        &app,
        path,
        &signed(&secret, now, body.as_bytes()),
        body.as_bytes(),
    )
    .await;
    assert_eq!(code, 202, "{text}");
    app.stop().await;
}

/// Mail in no nudge thread stores nothing, but its signature is spent: sent again, it is a
/// replay (401), like any other.
async fn a_replayed_signature_is_refused_when_the_mail_was_ignored(backend: Backend) {
    let app = spawn_app(backend).await;
    let secret = webhook_secret(&app).await;
    let body = json!({"headers": {"Message-ID": "<x@mail>", "In-Reply-To": "<other@gmail.com>"},
                      "from": "ann@example.com"})
    .to_string();
    let headers = signed(&secret, signing_now(), body.as_bytes());
    let (code, text) = http(&app, "/webhooks/email", &headers, body.as_bytes()).await;
    assert_eq!(code, 202, "{text}");
    assert_eq!(json_body(&text)["status"], "ignored");
    let (code, text) = http(&app, "/webhooks/email", &headers, body.as_bytes()).await;
    assert_eq!(code, 401, "{text}");
    assert!(text.contains("already used"), "{text}");
    // The memory of signatures runs on the system clock too: a day of virtual time and another
    // webhook (which forgets what is old) later, the signature is still refused.
    app.advance(Duration::days(1)).await;
    let other =
        json!({"headers": {"Message-ID": "<y@mail>"}, "from": "bob@example.com"}).to_string();
    let (code, text) = http(
        &app,
        "/webhooks/email",
        &signed(&secret, signing_now(), other.as_bytes()),
        other.as_bytes(),
    )
    .await;
    assert_eq!(code, 202, "{text}");
    let (code, text) = http(&app, "/webhooks/email", &headers, body.as_bytes()).await;
    assert_eq!(code, 401, "{text}");
    app.stop().await;
}

/// Query parameters are checked before anything reaches the database (a NUL would fail on
/// PostgreSQL with 500): 400 naming the parameter, on every webhook, before authentication.
async fn webhook_query_parameters_are_checked_at_the_edge(backend: Backend) {
    let app = spawn_app(backend).await;
    let long = "a".repeat(129);
    for path in [
        "/webhooks/email",
        "/webhooks/calendar",
        "/webhooks/sms/twilio",
    ] {
        for query in [
            "account=%00",
            "account=a%0Ab",
            &format!("account={long}"),
            "account=",
        ] {
            let (code, text) = http(&app, &format!("{path}?{query}"), &[], b"{}").await;
            assert_eq!(code, 400, "{path}?{query}: {text}");
            let message = json_body(&text)["error"]["message"]
                .as_str()
                .unwrap()
                .to_string();
            assert!(message.contains("`account`"), "{path}?{query}: {message}");
            assert!(message.len() < 400, "{message}");
        }
    }
    // A well-formed id that is no account: 401, as before.
    let (code, text) = http(&app, "/webhooks/email?account=nope", &[], b"{}").await;
    assert_eq!(code, 401, "{text}");
    assert!(text.contains("no account `nope`"), "{text}");
    app.stop().await;
}

async fn calendar_event_books_a_meeting_for_attendees(backend: Backend) {
    let app = spawn_app(backend).await;
    let flow = create_flow(&app, ROUTING_FLOW).await;
    contact(&app, "ann", "ann@example.com", "").await;
    contact(&app, "bob", "BOB@example.com", "").await;
    contact(&app, "cat", "cat@example.com", "").await;
    let ann = enroll(&app, "ann", &flow).await;
    let bob = enroll(&app, "bob", &flow).await;
    let cat = enroll(&app, "cat", &flow).await;
    calendar_sender(&app, "cal-rep@acme.com").await;
    let secret = webhook_secret(&app).await;
    let now = signing_now();
    let send = |body: String| {
        let headers = signed(&secret, now, body.as_bytes());
        let app = &app;
        async move { http(app, "/webhooks/calendar", &headers, body.as_bytes()).await }
    };
    // Not a sender's calendar (the sender's email is not its calendar): 404.
    let (code, text) = send(json!({"id": "e0", "organizer": "rep@acme.com", "attendees": ["ann@example.com"], "start": "2026-12-10T15:00:00Z"}).to_string()).await;
    assert_eq!(code, 404, "{text}");
    // No attendee is a contact: 404.
    let (code, text) = send(json!({"id": "e1", "organizer": "cal-rep@acme.com", "attendees": ["x@y.com"], "start": "2026-12-10T15:00:00Z"}).to_string()).await;
    assert_eq!(code, 404, "{text}");
    // Two attendees are contacts (one as an object, in another case).
    let (code, text) = send(json!({"id": "e2", "organizer": {"email": "CAL-rep@acme.com"},
        "attendees": ["cal-rep@acme.com", "ann@example.com", {"email": "bob@EXAMPLE.com"}, "stranger@z.com"],
        "start": "2026-12-10T15:00:00+01:00"}).to_string()).await;
    assert_eq!(code, 200, "{text}");
    assert_eq!(json_body(&text)["deliveries"].as_array().unwrap().len(), 2);
    for id in [&ann, &bob] {
        let e = enrollment(&app, id).await;
        assert_eq!(
            (e.status.as_str(), e.reason.as_str()),
            ("exited", "exit_on:meeting_booked")
        );
    }
    assert_eq!(enrollment(&app, &cat).await.status, "active");
    app.stop().await;
}

/// `nudge webhook-secret show` prints the secret the webhooks are checked with;
/// `nudge twilio-token set -` stores the Twilio auth token read from stdin.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cli_shows_the_webhook_secret_and_sets_the_twilio_token() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("nudge.db").display());
    let nudge = env!("CARGO_BIN_EXE_nudge");
    // They manage the database of a server that has started (here: been migrated).
    let migrated = Command::new(nudge)
        .args(["migrate", "--database-url", &url])
        .output()
        .unwrap();
    assert!(migrated.status.success(), "{migrated:?}");
    let show = || {
        Command::new(nudge)
            .args(["webhook-secret", "show", "--database-url", &url])
            .output()
            .unwrap()
    };
    let first = show();
    assert!(first.status.success(), "{first:?}");
    let secret = String::from_utf8(first.stdout).unwrap().trim().to_string();
    assert_eq!(secret.len(), 64, "{secret}");
    assert!(secret.chars().all(|c| c.is_ascii_hexdigit()));
    assert_eq!(String::from_utf8(show().stdout).unwrap().trim(), secret);

    let mut child = Command::new(nudge)
        .args(["twilio-token", "set", "-", "--database-url", &url])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"tw-secret\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let db = nudge::store::Db::connect(&nudge::config::DatabaseUrl::parse(&url).unwrap())
        .await
        .unwrap();
    let keys = nudge::store::provider_secrets::keys(&db, "default")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(keys.webhook_secret, secret);
    assert_eq!(
        keys.of(nudge::inbound::providers::Provider::Twilio),
        Some("tw-secret")
    );

    let unknown = Command::new(nudge)
        .args([
            "webhook-secret",
            "show",
            "--account",
            "nope",
            "--database-url",
            &url,
        ])
        .output()
        .unwrap();
    assert!(!unknown.status.success());
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("no account `nope`"));
}

/// `nudge provider-secret set PROVIDER -` stores a provider's secret read from stdin, checked
/// first (a bad one is refused without being echoed, and nothing stored changes); `--clear`
/// removes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cli_sets_and_clears_a_provider_secret() {
    use nudge::inbound::providers::Provider;
    use std::io::Write;
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("nudge.db").display());
    let nudge = env!("CARGO_BIN_EXE_nudge");
    let migrated = Command::new(nudge)
        .args(["migrate", "--database-url", &url])
        .output()
        .unwrap();
    assert!(migrated.status.success(), "{migrated:?}");
    let set = |args: &[&str], stdin: &str| {
        let mut child = Command::new(nudge)
            .args(["provider-secret", "set"])
            .args(args)
            .args(["--database-url", &url])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    };
    let keys = || async {
        let db = nudge::store::Db::connect(&nudge::config::DatabaseUrl::parse(&url).unwrap())
            .await
            .unwrap();
        nudge::store::provider_secrets::keys(&db, "default")
            .await
            .unwrap()
            .unwrap()
    };
    let out = set(&["postmark", "-"], "pm-user:pm-password\n");
    assert!(out.status.success(), "{out:?}");
    assert!(
        out.stdout.is_empty(),
        "the secret is never printed: {out:?}"
    );
    assert!(!String::from_utf8_lossy(&out.stderr).contains("pm-password"));
    assert_eq!(
        keys().await.of(Provider::Postmark),
        Some("pm-user:pm-password")
    );
    // A secret of the wrong shape: refused, not echoed, the stored one kept.
    let out = set(&["postmark", "-"], "no-colon-here\n");
    assert!(!out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("user:password"), "{stderr}");
    assert!(!stderr.contains("no-colon-here"), "{stderr}");
    assert_eq!(
        keys().await.of(Provider::Postmark),
        Some("pm-user:pm-password")
    );
    // An unknown provider names the ones there are.
    let out = set(&["mailchimp", "-"], "x");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("sendgrid-events"));
    // A list of SES topics, one a line.
    let topics = "arn:aws:sns:us-east-1:123456789012:a\n\narn:aws:sns:eu-west-1:123456789012:b\n";
    assert!(set(&["ses", "-"], topics).status.success());
    assert_eq!(
        keys().await.of(Provider::Ses),
        Some("arn:aws:sns:us-east-1:123456789012:a\narn:aws:sns:eu-west-1:123456789012:b")
    );
    let out = set(&["postmark", "--clear"], "");
    assert!(out.status.success(), "{out:?}");
    assert_eq!(keys().await.of(Provider::Postmark), None);
    assert!(keys().await.of(Provider::Ses).is_some());
}
