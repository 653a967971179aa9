//! One span per request (docs/operations.md): gRPC method or HTTP route, the answer's code, and the
//! enrollment when the handler names one; the span's fields go into every log line inside it
//! (`--log-format json` prints them under `span`), and its end is one `request` log line and the
//! `nudge_requests_total` / `nudge_request_seconds` samples. With `--otlp-endpoint` the span is
//! also exported (`crate::telemetry`), its fields as attributes.
//!
//! Written as one middleware rather than `tower-http`'s `TraceLayer` because the gRPC code of a
//! successful call arrives in the trailers, after the handler: the response body is wrapped
//! ([`Observed`]) and the request ends when the trailers (or the body's end, or the client
//! going away) are seen, with the method still at hand for the metric's labels.

use crate::runtime::Metrics;
use axum::body::{Body, Bytes};
use axum::extract::{MatchedPath, Request};
use axum::http::HeaderMap;
use axum::middleware::Next;
use axum::response::Response;
use http_body::{Frame, SizeHint};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;
use tracing::{field, Instrument, Span};

/// Which side of the port a request came in on (a label of the request metrics).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interface {
    Grpc,
    Http,
}

impl Interface {
    pub const fn as_str(self) -> &'static str {
        match self {
            Interface::Grpc => "grpc",
            Interface::Http => "http",
        }
    }
}

/// Records the enrollment a request is about on the current request span.
pub fn enrollment(id: &str) {
    Span::current().record("enrollment_id", id);
}

/// The middleware for gRPC (`method` is the full path, `/nudge.v1.EnrollmentService/Explain`).
pub async fn grpc(
    axum::extract::State(metrics): axum::extract::State<Arc<Metrics>>,
    request: Request,
    next: Next,
) -> Response {
    let method = request.uri().path().to_string();
    observe(metrics, Interface::Grpc, method, request, next).await
}

/// The middleware for HTTP (`method` is the verb and the matched route, `POST
/// /events/{key}`, so ids in paths never become label values).
pub async fn http(
    axum::extract::State(metrics): axum::extract::State<Arc<Metrics>>,
    request: Request,
    next: Next,
) -> Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or("unmatched", MatchedPath::as_str)
        .to_string();
    let method = format!("{} {route}", request.method());
    observe(metrics, Interface::Http, method, request, next).await
}

async fn observe(
    metrics: Arc<Metrics>,
    interface: Interface,
    method: String,
    request: Request,
    next: Next,
) -> Response {
    let span = tracing::info_span!(
        "request",
        interface = interface.as_str(),
        method = %method,
        code = field::Empty,
        http_status = field::Empty,
        enrollment_id = field::Empty,
        // For `--otlp-endpoint`: a server span, as collectors and trace viewers expect.
        otel.kind = "server",
    );
    let finish = Finish {
        span: span.clone(),
        metrics,
        interface,
        method,
        started: Instant::now(),
    };
    let response = next.run(request).instrument(span).await;
    finish
        .span
        .record("http_status", response.status().as_u16());
    if interface == Interface::Http {
        finish.done(response.status().as_u16().to_string());
        return response;
    }
    // A refusal before the handler (or any trailers-only answer) has its code in the headers.
    if let Some(code) = grpc_code(response.headers()) {
        finish.done(code);
        return response;
    }
    response.map(|inner| {
        Body::new(Observed {
            inner,
            finish: Some(finish),
        })
    })
}

/// What ends a request: its span, and the labels and start of its metric samples.
struct Finish {
    span: Span,
    metrics: Arc<Metrics>,
    interface: Interface,
    method: String,
    started: Instant,
}

impl Finish {
    fn done(self, code: String) {
        let took = self.started.elapsed();
        self.span.record("code", code.as_str());
        self.span.in_scope(|| {
            tracing::info!(elapsed_us = took.as_micros() as u64, "request");
        });
        self.metrics
            .request(self.interface.as_str(), self.method, code, took);
    }
}

/// The gRPC status of headers or trailers, by its canonical name (`OK`, `NOT_FOUND`, …).
fn grpc_code(headers: &HeaderMap) -> Option<String> {
    let n: i32 = headers.get("grpc-status")?.to_str().ok()?.parse().ok()?;
    Some(code_name(n).to_string())
}

/// The canonical names of the gRPC codes (the metric's `code` label).
pub fn code_name(n: i32) -> &'static str {
    const NAMES: [&str; 17] = [
        "OK",
        "CANCELLED",
        "UNKNOWN",
        "INVALID_ARGUMENT",
        "DEADLINE_EXCEEDED",
        "NOT_FOUND",
        "ALREADY_EXISTS",
        "PERMISSION_DENIED",
        "RESOURCE_EXHAUSTED",
        "FAILED_PRECONDITION",
        "ABORTED",
        "OUT_OF_RANGE",
        "UNIMPLEMENTED",
        "INTERNAL",
        "UNAVAILABLE",
        "DATA_LOSS",
        "UNAUTHENTICATED",
    ];
    usize::try_from(n)
        .ok()
        .and_then(|i| NAMES.get(i))
        .copied()
        .unwrap_or("UNKNOWN")
}

/// A gRPC response body that ends its request when the trailers pass (a stream too: a Watch
/// ends when the client stops it, as `CANCELLED`).
struct Observed {
    inner: Body,
    finish: Option<Finish>,
}

impl Observed {
    fn end(&mut self, code: &str) {
        if let Some(f) = self.finish.take() {
            f.done(code.to_string());
        }
    }
}

impl http_body::Body for Observed {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        match &polled {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(code) = frame.trailers_ref().and_then(grpc_code) {
                    self.end(&code);
                }
            }
            Poll::Ready(Some(Err(_))) => self.end("CANCELLED"),
            // A body that ended without trailers: no status, which gRPC clients read as UNKNOWN.
            Poll::Ready(None) => self.end("UNKNOWN"),
            Poll::Pending => {}
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for Observed {
    fn drop(&mut self) {
        // The client went away before the end (a stopped stream, a reset).
        self.end("CANCELLED");
    }
}
