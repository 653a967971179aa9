//! The adapters around the services: gRPC ([`grpc`]) and HTTP ([`http`]), served together on
//! one port by [`crate::app`].

pub mod grpc;
pub mod http;

use crate::clock::SharedClock;
use crate::store::Db;

/// What every handler shares. Cheap to clone.
#[derive(Clone)]
pub struct AppState {
    pub db: Db,
    pub clock: SharedClock,
    /// Parsed flows and the planner's wake-up, shared with the services.
    pub engine: crate::planner::EngineShared,
    /// The public base URL webhook providers call (`--public-url`); Twilio signs the URL it
    /// called. `None`: rebuilt from the request's headers.
    pub public_url: Option<String>,
    /// The group-commit queue inbound signals go through; detached (each signal alone) until
    /// [`crate::app::App`] starts it.
    pub signals: crate::service::signals::Router,
    /// Webhook keys read recently, so a burst of webhooks does not read the account each time.
    pub webhook_keys: crate::api::http::webhooks::KeyCache,
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
    let path = request.uri().path().to_string();
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
