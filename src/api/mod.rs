//! The adapters around the services: gRPC ([`grpc`]) and HTTP ([`http`]), served together on
//! one port by [`crate::app`].

pub mod grpc;
pub mod http;
pub mod serve;

use crate::runtime::Core;
use crate::service::signals::Router;

/// What every handler shares: the [`Core`] the services run on, and what only the edge
/// needs. Cheap to clone.
#[derive(Clone)]
pub struct AppState {
    /// Database, clock, flow cache and wake-up.
    pub core: Core,
    /// The group-commit queue inbound signals go through (over the same core).
    pub signals: Router,
    /// The public base URL webhook providers call (`--public-url`); Twilio signs the URL it
    /// called. `None`: rebuilt from the request's headers.
    pub public_url: Option<String>,
    /// Where links nudge hands out point (the unsubscribe link of every email dispatch): the
    /// public URL, or `http://` and the address the server listens on when none is set.
    pub link_base: String,
    /// Webhook keys read recently, so a burst of webhooks does not read the account each time.
    pub webhook_keys: crate::api::http::webhooks::KeyCache,
}

/// A path as logged: the signed token of a link page (`/unsubscribe/{token}`,
/// `/approvals/{token}`) is a bearer credential and never reaches a log line.
pub fn redact(path: &str) -> String {
    for page in ["/unsubscribe/", "/approvals/"] {
        if path.starts_with(page) {
            return format!("{page}…");
        }
    }
    path.to_string()
}

/// One log line per request: path, HTTP status, the gRPC status when it is in the headers (a
/// refusal before the handler, such as a missing token), and the time taken. Never the body or
/// the `authorization` metadata.
pub async fn access_log(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let started = std::time::Instant::now();
    let method = request.method().clone();
    let path = redact(request.uri().path());
    let response = next.run(request).await;
    let grpc_status = response
        .headers()
        .get("grpc-status")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    tracing::info!(
        %method,
        path,
        status = response.status().as_u16(),
        grpc_status,
        elapsed_us = started.elapsed().as_micros() as u64,
        "request"
    );
    response
}
