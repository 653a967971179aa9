//! The HTTP side of the server (same port as gRPC, SPEC §7): `GET /healthz`, custom events
//! (`POST /events/{key}`, [`events`]) and provider webhooks (`/webhooks/…`, [`webhooks`]).
//! Errors become statuses in one place, [`error`].

pub mod error;
pub mod events;
pub mod webhooks;

use super::AppState;
use crate::service::signals::Receipt;
use axum::body::{Body, Bytes};
use axum::routing::{get, post};
use axum::Router;
use error::HttpError;

/// The HTTP routes.
pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/events/{key}", post(events::post_event))
        .route("/webhooks/email", post(webhooks::email))
        .route("/webhooks/sms/twilio", post(webhooks::twilio))
        .route("/webhooks/calendar", post(webhooks::calendar))
        .with_state(state)
}

/// Liveness: the process answers. (Readiness of the database is gRPC health's job.)
async fn healthz() -> &'static str {
    "ok\n"
}

/// Reads the whole body, refusing one over `limit` bytes with 413 (before anything is parsed
/// or stored).
pub async fn read_body(body: Body, limit: usize) -> Result<Bytes, HttpError> {
    axum::body::to_bytes(body, limit).await.map_err(|e| {
        let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&e);
        while let Some(s) = source {
            if s.is::<http_body_util::LengthLimitError>() {
                return HttpError::too_large(limit);
            }
            source = s.source();
        }
        HttpError::new(
            axum::http::StatusCode::BAD_REQUEST,
            "bad_request",
            format!("cannot read the body: {e}"),
        )
    })
}

/// The JSON answer to a stored signal.
pub fn receipt_json(receipt: &Receipt) -> serde_json::Value {
    serde_json::json!({
        "signal_id": receipt.signal_id,
        "duplicate": receipt.duplicate,
        "deliveries": receipt.deliveries.iter().map(|d| serde_json::json!({
            "enrollment_id": d.enrollment_id,
            "effect": d.effect.as_str(),
            "branch": d.branch,
        })).collect::<Vec<_>>(),
    })
}
