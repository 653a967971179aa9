//! Request spans leaving the real `nudge serve` binary (a child process: the tracing subscriber
//! is global to a process): exported over OTLP/HTTP to a local receiver that decodes them as a
//! collector would, flushed on a graceful stop, and carried by `--log-format json` lines.

use crate::common::process::{connect, database_with_token, free_port, serve_command, KillOnDrop};
use crate::common::with_token;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, HeaderMap};
use nudge::proto::v1::enrollment_service_client::EnrollmentServiceClient;
use nudge::proto::v1::ExplainRequest;
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::{any_value, KeyValue};
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;
use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::Duration;
use tokio::sync::mpsc;
use tonic::Code;

/// How long a span or log line may take to arrive: generous, a loaded CI machine is slow; a
/// passing run waits for the condition, never for this.
const DEADLINE: Duration = Duration::from_secs(60);

const EXPLAIN: &str = "/nudge.v1.EnrollmentService/Explain";

/// One span as the collector saw it, with its batch's `service.name`.
#[derive(Debug)]
struct Received {
    service: Option<String>,
    span: Span,
}

/// An OTLP/HTTP receiver on a free loopback port: `POST /v1/traces`, protobuf
/// `ExportTraceServiceRequest` in, each span out on the channel. Returns its base URL.
async fn receiver() -> (String, mpsc::UnboundedReceiver<Received>) {
    async fn traces(
        State(spans): State<mpsc::UnboundedSender<Received>>,
        headers: HeaderMap,
        body: Bytes,
    ) -> Result<([(header::HeaderName, &'static str); 1], Vec<u8>), (axum::http::StatusCode, String)>
    {
        let bad = |why: String| (axum::http::StatusCode::BAD_REQUEST, why);
        let kind = headers.get(header::CONTENT_TYPE).map(|v| v.as_bytes());
        if kind != Some(b"application/x-protobuf") {
            return Err(bad(format!("content type {kind:?}")));
        }
        let request = ExportTraceServiceRequest::decode(body).map_err(|e| bad(e.to_string()))?;
        for resource in request.resource_spans {
            let attributes = resource.resource.map(|r| r.attributes).unwrap_or_default();
            let service = string(&attributes, "service.name").map(str::to_string);
            for scope in resource.scope_spans {
                for span in scope.spans {
                    let _ = spans.send(Received {
                        service: service.clone(),
                        span,
                    });
                }
            }
        }
        Ok((
            [(header::CONTENT_TYPE, "application/x-protobuf")],
            ExportTraceServiceResponse::default().encode_to_vec(),
        ))
    }
    let (tx, rx) = mpsc::unbounded_channel();
    let app = axum::Router::new()
        .route("/v1/traces", axum::routing::post(traces))
        .with_state(tx);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, rx)
}

fn attribute<'a>(attributes: &'a [KeyValue], key: &str) -> Option<&'a any_value::Value> {
    attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.as_ref()?.value.as_ref())
}

fn string<'a>(attributes: &'a [KeyValue], key: &str) -> Option<&'a str> {
    match attribute(attributes, key)? {
        any_value::Value::StringValue(s) => Some(s),
        _ => None,
    }
}

/// Spans from `spans` until the `request` span of `method` arrives (or the deadline passes).
async fn request_span(spans: &mut mpsc::UnboundedReceiver<Received>, method: &str) -> Received {
    let wait = async {
        while let Some(received) = spans.recv().await {
            let span = &received.span;
            if span.name == "request" && string(&span.attributes, "method") == Some(method) {
                return received;
            }
        }
        panic!("the receiver stopped");
    };
    tokio::time::timeout(DEADLINE, wait)
        .await
        .unwrap_or_else(|_| panic!("no `request` span of {method} arrived within {DEADLINE:?}"))
}

/// An Explain of an enrollment that does not exist: NOT_FOUND, with the id on the span.
async fn explain_unknown(port: u16, token: &str) {
    let status = EnrollmentServiceClient::new(connect(port).await)
        .explain(with_token(
            ExplainRequest {
                id: "e_nope".into(),
            },
            token,
        ))
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::NotFound, "{status:?}");
}

/// What every exported `request` span of that Explain carries.
fn assert_explain_span(received: &Received) {
    let span = &received.span;
    assert_eq!(received.service.as_deref(), Some("nudge"), "{received:?}");
    assert_eq!(
        string(&span.attributes, "interface"),
        Some("grpc"),
        "{span:?}"
    );
    assert_eq!(
        string(&span.attributes, "code"),
        Some("NOT_FOUND"),
        "{span:?}"
    );
    assert_eq!(
        string(&span.attributes, "enrollment_id"),
        Some("e_nope"),
        "{span:?}"
    );
    assert_eq!(span.kind, SpanKind::Server as i32, "{span:?}");
    assert!(span.end_time_unix_nano >= span.start_time_unix_nano);
    assert_eq!(span.trace_id.len(), 16, "{span:?}");
}

/// While it serves, nudge sends each request's span to the collector (batches every 100 ms
/// here, by the standard `OTEL_BSP_SCHEDULE_DELAY`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn otlp_export_sends_request_spans_to_a_collector() {
    let (collector, mut spans) = receiver().await;
    let dir = tempfile::tempdir().unwrap();
    let (db, token) = database_with_token(dir.path());
    let port = free_port();
    let _server = KillOnDrop(
        serve_command(&db, port)
            .args(["--otlp-endpoint", &collector])
            .env("OTEL_BSP_SCHEDULE_DELAY", "100")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    explain_unknown(port, &token).await;
    assert_explain_span(&request_span(&mut spans, EXPLAIN).await);
}

/// A graceful stop (SIGTERM) sends the spans still queued before the process exits: with a
/// batch due only in an hour, the span can arrive no other way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn otlp_export_flushes_queued_spans_on_shutdown() {
    let (collector, mut spans) = receiver().await;
    let dir = tempfile::tempdir().unwrap();
    let (db, token) = database_with_token(dir.path());
    let port = free_port();
    // Through the environment variable this time, with the path spelled out.
    let mut server = KillOnDrop(
        serve_command(&db, port)
            .env("NUDGE_OTLP_ENDPOINT", format!("{collector}/v1/traces"))
            .env("OTEL_BSP_SCHEDULE_DELAY", "3600000")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    explain_unknown(port, &token).await;
    let exited = tokio::task::spawn_blocking(move || server.terminate())
        .await
        .unwrap();
    assert!(exited.success(), "graceful exit on SIGTERM: {exited:?}");
    assert_explain_span(&request_span(&mut spans, EXPLAIN).await);
}

/// A bad `--otlp-endpoint` (or `NUDGE_OTLP_ENDPOINT`) stops the start with an error naming the
/// flag and showing a good value.
#[test]
fn a_bad_otlp_endpoint_is_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("nudge.db").to_string_lossy().into_owned();
    for (flag, env) in [
        (Some("localhost:4318"), None),
        (Some("grpc://collector:4317"), None),
        (None, Some("not a url")),
    ] {
        let mut command = serve_command(&db, free_port());
        if let Some(value) = flag {
            command.args(["--otlp-endpoint", value]);
        }
        if let Some(value) = env {
            command.env("NUDGE_OTLP_ENDPOINT", value);
        }
        let out = command.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flag:?} {env:?}: {stderr}");
        assert!(stderr.contains("--otlp-endpoint"), "{stderr}");
        assert!(stderr.contains("http://localhost:4318"), "{stderr}");
    }
    assert!(
        !dir.path().join("nudge.db").exists(),
        "refused before opening the database"
    );
}

/// `--log-format json`: the request's closing `request` line carries the span's fields under
/// `span` (method, code, enrollment id), which is what a log collector indexes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_logs_carry_the_request_span_fields() {
    let dir = tempfile::tempdir().unwrap();
    let (db, token) = database_with_token(dir.path());
    let port = free_port();
    let mut child = serve_command(&db, port)
        .args(["--log-format", "json"])
        .env("RUST_LOG", "info")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let _server = KillOnDrop(child);
    // Every stderr line on a channel, until the server is killed and the pipe ends.
    let (tx, mut lines) = mpsc::unbounded_channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    explain_unknown(port, &token).await;
    let wait = async {
        while let Some(text) = lines.recv().await {
            let line: serde_json::Value = serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("not a JSON log line ({e}): {text}"));
            if line["fields"]["message"] == "request" && line["span"]["method"] == EXPLAIN {
                return line;
            }
        }
        panic!("the server's stderr ended before the request line");
    };
    let line = tokio::time::timeout(DEADLINE, wait)
        .await
        .expect("the request's log line within the deadline");
    let span = &line["span"];
    assert_eq!(span["name"], "request", "{line}");
    assert_eq!(span["interface"], "grpc", "{line}");
    assert_eq!(span["code"], "NOT_FOUND", "{line}");
    assert_eq!(span["enrollment_id"], "e_nope", "{line}");
    assert_eq!(line["level"], "INFO", "{line}");
    assert!(line["fields"]["elapsed_us"].is_u64(), "{line}");
    assert_eq!(line["spans"][0]["method"], EXPLAIN, "{line}");
}
