//! The port's edge (docs/service.md): what is routed where (gRPC by content type, everything else
//! HTTP, an unknown path 404), the timeouts that cut idle and slow connections, the connection
//! cap, HTTP/2 keep-alive, and the `Bearer` scheme in any case.
//!
//! Timeouts are real time by nature: these tests make them short (a few hundred ms) and give
//! each expectation a bound well above them; none of them reads the manual clock.

use crate::common::{spawn_app, spawn_app_with, with_token, Backend, TestApp};
use nudge::proto::v1::*;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Far above every short timeout these tests set: a wait longer than this is a hang.
const HANG: Duration = Duration::from_secs(10);

/// Sends `request` as is and reads until the server closes: the status (0 when it closed
/// without answering) and the whole text.
async fn raw(app: &TestApp, request: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(app.addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    read_all(&mut stream).await
}

async fn read_all(stream: &mut TcpStream) -> (u16, String) {
    let mut out = Vec::new();
    let read = tokio::time::timeout(HANG, stream.read_to_end(&mut out)).await;
    assert!(read.is_ok(), "the server held the connection open: {out:?}");
    let text = String::from_utf8_lossy(&out).to_string();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, text)
}

fn request(method: &str, path: &str, headers: &str, body: &str) -> String {
    format!(
        "{method} {path} HTTP/1.1\r\nHost: nudge.test\r\nConnection: close\r\n{headers}\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// Any path nudge does not serve is a plain 404 (a mistyped webhook URL must fail at the
/// provider, not be taken with 200 and a gRPC error); gRPC requests still reach gRPC, where an
/// unknown service is UNIMPLEMENTED.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unserved_paths_answer_404_and_grpc_still_works() {
    let app = spawn_app(Backend::Sqlite).await;
    let json = "Content-Type: application/json\r\n";
    for (method, path, headers) in [
        ("POST", "/webhooks/emails", json),
        ("POST", "/webhook/email", json),
        ("GET", "/", ""),
        ("GET", "/healthz/", ""),
        ("POST", "/events", json),
        ("POST", "/nudge.v1.ContactService/GetContact", json),
        ("GET", "/grpc.health.v1.Health/Check", ""),
    ] {
        let (status, text) = raw(&app, &request(method, path, headers, "{}")).await;
        assert_eq!(status, 404, "{method} {path}: {text}");
        assert!(!text.to_ascii_lowercase().contains("grpc-status"), "{text}");
        let body = text.split_once("\r\n\r\n").unwrap().1;
        let body: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(body["error"]["code"], "not_found", "{text}");
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("POST /webhooks/email"),
            "{text}"
        );
    }
    // A served path with the wrong method.
    let (status, text) = raw(&app, &request("GET", "/webhooks/email", "", "")).await;
    assert_eq!(status, 405, "{text}");
    let (status, text) = raw(&app, &request("GET", "/healthz", "", "")).await;
    assert_eq!(status, 200, "{text}");

    // gRPC works, and an unknown service is UNIMPLEMENTED.
    let mut contacts = app.contacts().await;
    contacts
        .upsert_contact(app.authed(UpsertContactRequest {
            contact: Some(Contact {
                id: "ann".into(),
                email: "ann@example.com".into(),
                ..Default::default()
            }),
        }))
        .await
        .unwrap();
    let mut grpc = tonic::client::Grpc::new(app.channel().await);
    grpc.ready().await.unwrap();
    let unknown: Result<tonic::Response<()>, tonic::Status> = grpc
        .unary(
            app.authed(()),
            axum::http::uri::PathAndQuery::from_static("/nudge.v1.NoSuchService/Nope"),
            tonic_prost::ProstCodec::<(), ()>::default(),
        )
        .await;
    assert_eq!(
        unknown.unwrap_err().code(),
        tonic::Code::Unimplemented,
        "an unknown gRPC service"
    );
    app.stop().await;
}

/// A connection that sends nothing, or stops halfway through its headers, or idles after a
/// request, is closed after the header timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_connection_is_closed_after_the_header_timeout() {
    let app = spawn_app_with(Backend::Sqlite, |c| {
        c.limits.header_timeout = Duration::from_millis(300);
    })
    .await;
    let started = Instant::now();
    let mut silent = TcpStream::connect(app.addr).await.unwrap();
    let (status, text) = read_all(&mut silent).await;
    assert_eq!((status, text.as_str()), (0, ""));
    assert!(started.elapsed() >= Duration::from_millis(250));

    let (status, _) = raw(&app, "GET /healthz HTTP/1.1\r\nHost: nudge.test\r\n").await;
    assert!(status == 0 || status == 408, "{status}");

    let mut kept = TcpStream::connect(app.addr).await.unwrap();
    kept.write_all(b"GET /healthz HTTP/1.1\r\nHost: nudge.test\r\n\r\n")
        .await
        .unwrap();
    let (status, text) = read_all(&mut kept).await;
    assert_eq!(status, 200, "answered, then closed when idle: {text}");
    app.stop().await;
}

/// A body that does not arrive within the body timeout is cut: 408, connection closed, and
/// nothing of it is kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_body_is_cut_after_the_body_timeout() {
    let app = spawn_app_with(Backend::Sqlite, |c| {
        c.limits.body_timeout = Duration::from_millis(300);
    })
    .await;
    let started = Instant::now();
    let (status, text) = raw(
        &app,
        "POST /webhooks/email HTTP/1.1\r\nHost: nudge.test\r\nContent-Length: 1000\r\n\r\n{\"head",
    )
    .await;
    assert_eq!(status, 408, "{text}");
    assert!(text.contains("did not arrive within"), "{text}");
    assert!(started.elapsed() >= Duration::from_millis(250));
    app.stop().await;
}

/// At the cap, a flood of idle connections cannot keep a real client out: each new connection
/// takes the place of the oldest idle one. When every connection has a request in flight, a
/// new one is closed at once: the cap holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_the_connection_cap_healthz_still_answers() {
    let app = spawn_app_with(Backend::Sqlite, |c| {
        c.limits.max_connections = 8;
        // Long enough that only eviction, not a timeout, can make room within the test.
        c.limits.header_timeout = Duration::from_secs(30);
        c.limits.body_timeout = Duration::from_secs(30);
    })
    .await;
    let mut flood = Vec::new();
    for _ in 0..40 {
        flood.push(TcpStream::connect(app.addr).await.unwrap());
    }
    let started = Instant::now();
    let (status, text) = raw(&app, &request("GET", "/healthz", "", "")).await;
    assert_eq!(status, 200, "{text}");
    assert!(started.elapsed() < Duration::from_secs(5));
    // The oldest of the flood made room: closed.
    let (status, text) = read_all(&mut flood[0]).await;
    assert_eq!((status, text.as_str()), (0, ""));
    drop(flood);

    // Eight requests in flight (their bodies still coming), then one more connection. Each is
    // known to be in flight once the server asks for its body (`100 Continue`): a condition to
    // wait on, not a sleep.
    let mut busy = Vec::new();
    for _ in 0..8 {
        let mut s = TcpStream::connect(app.addr).await.unwrap();
        s.write_all(
            b"POST /webhooks/email HTTP/1.1\r\nHost: nudge.test\r\nContent-Length: 100\r\nExpect: 100-continue\r\n\r\n",
        )
        .await
        .unwrap();
        let mut seen = Vec::new();
        let mut buf = [0u8; 256];
        while !String::from_utf8_lossy(&seen).contains("100 Continue") {
            let n = tokio::time::timeout(HANG, s.read(&mut buf))
                .await
                .expect("the server asks for the body")
                .unwrap();
            assert!(n > 0, "closed before asking for the body: {seen:?}");
            seen.extend_from_slice(&buf[..n]);
        }
        s.write_all(b"{").await.unwrap();
        busy.push(s);
    }
    let started = Instant::now();
    let (status, text) = raw(&app, &request("GET", "/healthz", "", "")).await;
    assert_eq!((status, text.as_str()), (0, ""), "refused at the cap");
    assert!(started.elapsed() < Duration::from_secs(5));
    drop(busy);
    app.stop().await;
}

/// An HTTP/2 (gRPC) connection is pinged at the keep-alive interval and closed when a ping goes
/// unanswered; its SETTINGS cap concurrent streams.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grpc_connection_gets_keepalive() {
    let app = spawn_app_with(Backend::Sqlite, |c| {
        c.limits.keepalive_interval = Duration::from_millis(200);
        c.limits.keepalive_timeout = Duration::from_millis(300);
        c.limits.max_concurrent_streams = 7;
    })
    .await;
    let mut s = TcpStream::connect(app.addr).await.unwrap();
    s.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
        .await
        .unwrap();
    s.write_all(&frame(4, 0, &[])).await.unwrap();
    let mut max_streams = None;
    let mut pings = 0;
    let closed = tokio::time::timeout(HANG, async {
        loop {
            let mut head = [0u8; 9];
            if s.read_exact(&mut head).await.is_err() {
                return "closed";
            }
            let len = u32::from_be_bytes([0, head[0], head[1], head[2]]) as usize;
            let (kind, flags) = (head[3], head[4]);
            let mut payload = vec![0u8; len];
            if s.read_exact(&mut payload).await.is_err() {
                return "closed";
            }
            match (kind, flags & 1) {
                // SETTINGS, not an ack: read it and ack it.
                (4, 0) => {
                    for p in payload.chunks(6) {
                        if u16::from_be_bytes([p[0], p[1]]) == 3 {
                            max_streams = Some(u32::from_be_bytes([p[2], p[3], p[4], p[5]]));
                        }
                    }
                    s.write_all(&frame(4, 1, &[])).await.unwrap();
                }
                // PING: answer the first, then stay silent.
                (6, 0) => {
                    pings += 1;
                    if pings == 1 {
                        s.write_all(&frame(6, 1, &payload)).await.unwrap();
                    }
                }
                (7, _) => return "goaway",
                _ => {}
            }
        }
    })
    .await
    .expect("an unanswered ping closes the connection");
    assert_eq!(max_streams, Some(7));
    assert!(pings >= 2, "{pings} pings, then {closed}");
    app.stop().await;
}

/// An HTTP/2 frame on stream 0.
fn frame(kind: u8, flags: u8, payload: &[u8]) -> Vec<u8> {
    let len = (payload.len() as u32).to_be_bytes();
    let mut out = vec![len[1], len[2], len[3], kind, flags, 0, 0, 0, 0];
    out.extend_from_slice(payload);
    out
}

/// The `Bearer` scheme is case-insensitive (RFC 9110 §11.1), on gRPC and HTTP alike.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bearer_scheme_is_accepted_in_any_case() {
    let app = spawn_app(Backend::Sqlite).await;
    for scheme in ["Bearer", "bearer", "BEARER", "bEaReR"] {
        let mut upsert = tonic::Request::new(UpsertContactRequest {
            contact: Some(Contact {
                id: "ann".into(),
                email: "ann@example.com".into(),
                ..Default::default()
            }),
        });
        upsert.metadata_mut().insert(
            "authorization",
            format!("{scheme} {}", app.token).parse().unwrap(),
        );
        app.contacts()
            .await
            .upsert_contact(upsert)
            .await
            .unwrap_or_else(|e| panic!("gRPC, {scheme}: {e:?}"));
        let auth = format!("Authorization: {scheme} {}\r\n", app.token);
        let (status, text) = raw(
            &app,
            &request("POST", "/events/demo.ping?contact=ann", &auth, "{}"),
        )
        .await;
        assert_eq!(status, 200, "HTTP, {scheme}: {text}");
    }
    // Another scheme is still refused.
    let refused = app
        .contacts()
        .await
        .get_contact(with_token(
            GetContactRequest { id: "ann".into() },
            "not-a-token",
        ))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), tonic::Code::Unauthenticated);
    let (status, _) = raw(
        &app,
        &request(
            "POST",
            "/events/demo.ping?contact=ann",
            &format!("Authorization: Basic {}\r\n", app.token),
            "{}",
        ),
    )
    .await;
    assert_eq!(status, 401);
    app.stop().await;
}
