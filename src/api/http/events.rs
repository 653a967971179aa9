//! `POST /events/{key}?contact=<id, email or E.164 phone>` (docs/signals.md, "Custom events"): a custom event. The body
//! is the payload (JSON up to 64 KiB; empty or `null` is `{}`); `Authorization: Bearer <full
//! token>`; an optional `Idempotency-Key` header deduplicates retries like a provider id.

use super::error::HttpError;
use super::{read_body, receipt_json};
use crate::api::AppState;
use crate::auth::{self, AuthError, Scope};
use crate::inbound::payload::{self, MAX_PAYLOAD_BYTES};
use crate::service::signals;
use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::IntoResponse;
use axum::Json;
use serde::Deserialize;

#[derive(Debug, Deserialize)]
pub struct EventQuery {
    /// The contact: its id, its email, or its phone number in E.164.
    pub contact: Option<String>,
}

/// Checks, in order: the token (401, 403), the body size (413), the payload (422), the key and
/// the contact reference (400), the contact (404); then stores and routes the event.
pub async fn post_event(
    State(state): State<AppState>,
    Path(key): Path<String>,
    Query(query): Query<EventQuery>,
    headers: HeaderMap,
    body: Body,
) -> Result<impl IntoResponse, HttpError> {
    let authorization = match headers.get(header::AUTHORIZATION) {
        None => None,
        Some(v) => Some(v.to_str().map_err(|_| AuthError::Malformed)?),
    };
    let principal = auth::authenticate(&state.core.db, &state.tokens, authorization).await?;
    if principal.scope != Scope::Full {
        // An event can complete a wait the enrollment's owner is waiting on (seed 001).
        return Err(AuthError::Forbidden {
            scope: principal.scope,
        }
        .into());
    }
    let body = read_body(body, MAX_PAYLOAD_BYTES).await?;
    let payload = payload::parse(&body)?;
    let contact = query.contact.unwrap_or_default();
    let idempotency_key = headers
        .get("idempotency-key")
        .and_then(|v| v.to_str().ok())
        .map(|k| format!("event:{k}"));
    let now = state.core.clock.now();
    let receipt = signals::post_event(
        &state.signals,
        &principal.account_id,
        &key,
        &contact,
        payload,
        idempotency_key,
        now,
    )
    .await?;
    Ok((StatusCode::OK, Json(receipt_json(&receipt))))
}
