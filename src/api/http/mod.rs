//! The HTTP side of the server (same port as gRPC, docs/service.md): `GET /healthz`, custom events
//! (`POST /events/{key}`, [`events`]) and provider webhooks (`/webhooks/…`, [`webhooks`]).
//! Errors become statuses in one place, [`error`].

pub mod approvals;
pub mod console;
pub mod error;
pub mod events;
pub mod page;
pub mod unsubscribe;
pub mod webhooks;

use super::AppState;
use crate::service::signals::Receipt;
use axum::body::{Body, Bytes};
use axum::http::{Method, StatusCode, Uri};
use axum::routing::{get, post};
use axum::Router;
use error::HttpError;
use webhooks::providers;

/// The HTTP routes.
pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics))
        .route("/events/{key}", post(events::post_event))
        .route("/webhooks/email", post(webhooks::email))
        .route("/webhooks/sms/twilio", post(webhooks::twilio))
        .route("/webhooks/calendar", post(webhooks::calendar))
        .route("/webhooks/email/mailgun", post(providers::mailgun_inbound))
        .route(
            "/webhooks/email/mailgun/events",
            post(providers::mailgun_events),
        )
        .route(
            "/webhooks/email/sendgrid",
            post(providers::sendgrid_inbound),
        )
        .route(
            "/webhooks/email/sendgrid/events",
            post(providers::sendgrid_events),
        )
        .route(
            "/webhooks/email/postmark",
            post(providers::postmark_inbound),
        )
        .route(
            "/webhooks/email/postmark/events",
            post(providers::postmark_events),
        )
        .route("/webhooks/email/ses", post(providers::ses))
        .route(
            "/webhooks/sms/twilio/status",
            post(providers::twilio_status),
        )
        .route("/webhooks/call/twilio", post(providers::twilio_call))
        .route("/webhooks/calendar/calendly", post(providers::calendly))
        .route("/webhooks/calendar/calcom", post(providers::calcom))
        .route(
            "/unsubscribe/{token}",
            get(unsubscribe::show).post(unsubscribe::post),
        )
        .route(
            "/approvals/{token}",
            get(approvals::show).post(approvals::decide),
        )
        .merge(console::routes())
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(axum::middleware::from_fn(page_headers))
        .with_state(state)
}

/// Which pages a path belongs to, for the headers every answer there carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pages {
    /// `/console…`: a signed-in UI whose sign-in page takes a full API token.
    Console,
    /// `/approvals/…` and `/unsubscribe/…`: the URL itself is a signed token.
    Token,
}

impl Pages {
    fn of(path: &str) -> Option<Pages> {
        let under = |prefix: &str| {
            path.strip_prefix(prefix)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
        };
        if under("/console") {
            Some(Pages::Console)
        } else if under("/approvals") || under("/unsubscribe") {
            Some(Pages::Token)
        } else {
            None
        }
    }
}

/// The headers of every answer under the console and the token pages — the pages' own, but also
/// redirects, 404s, 405s and errors, which the handlers never see: not cached (`no-store`;
/// the console's stylesheet excepted), no `Referer` leaving with a token, and on the console
/// its policy (nothing inline, nothing framing it) and `nosniff`.
async fn page_headers(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::http::{header, HeaderValue};
    let pages = Pages::of(request.uri().path());
    let mut response = next.run(request).await;
    let Some(pages) = pages else {
        return response;
    };
    let h = response.headers_mut();
    if !h.contains_key(header::CACHE_CONTROL) {
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    match pages {
        Pages::Console => {
            h.insert(
                header::CONTENT_SECURITY_POLICY,
                HeaderValue::from_static(console::CONSOLE_CSP),
            );
            h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
        }
        Pages::Token => {
            if !h.contains_key(header::CONTENT_SECURITY_POLICY) {
                h.insert(
                    header::CONTENT_SECURITY_POLICY,
                    HeaderValue::from_static(page::CSP),
                );
            }
            h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
        }
    }
    response
}

/// The path as an answer may show it: under the token pages, the token replaced by the route's
/// `{token}` (a mistyped link must not be quoted back whole, its signature included).
fn shown_path(path: &str) -> String {
    for prefix in ["/approvals/", "/unsubscribe/"] {
        if let Some(rest) = path.strip_prefix(prefix) {
            let tail = match rest.find('/') {
                Some(i) if i + 1 < rest.len() => "/…",
                Some(_) => "/",
                None => "",
            };
            return format!("{prefix}{{token}}{tail}");
        }
    }
    quote(path)
}

/// What the HTTP side serves, for the 404 and 405 answers.
const PATHS: &str = "GET /healthz, GET /metrics, GET /console, POST /events/{key}, \
                     POST /webhooks/email, POST /webhooks/sms/twilio, POST /webhooks/calendar, \
                     POST /webhooks/email/{mailgun,mailgun/events,sendgrid,sendgrid/events,\
                     postmark,postmark/events,ses}, POST /webhooks/sms/twilio/status, \
                     POST /webhooks/call/twilio, POST /webhooks/calendar/{calendly,calcom}, \
                     GET and POST /unsubscribe/{token}, GET and POST /approvals/{token}";

/// A path nudge does not serve: 404, so a mistyped webhook URL fails at the provider instead
/// of being taken (gRPC requests never come here: see [`crate::api::serve`]).
async fn not_found(method: Method, uri: Uri) -> HttpError {
    HttpError::not_found(format!(
        "nudge serves no `{method} {}`; it serves {PATHS}",
        shown_path(uri.path())
    ))
}

async fn method_not_allowed(method: Method, uri: Uri) -> HttpError {
    HttpError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        format!(
            "`{}` does not take {method}; nudge serves {PATHS}",
            shown_path(uri.path())
        ),
    )
}

/// The longest id a query parameter may carry (docs/service.md, "Errors").
pub const MAX_ID_CHARS: usize = 128;

/// Checks an id given as a query parameter before it reaches the database: at most
/// [`MAX_ID_CHARS`] characters, no control characters (PostgreSQL refuses a NUL).
pub fn check_id(parameter: &str, value: &str) -> Result<(), HttpError> {
    let problem = if value.is_empty() {
        "is empty"
    } else if value.chars().count() > MAX_ID_CHARS {
        "is longer than 128 characters"
    } else if value.chars().any(char::is_control) {
        "contains a control character"
    } else {
        return Ok(());
    };
    Err(HttpError::new(
        StatusCode::BAD_REQUEST,
        "bad_request",
        format!(
            "the query parameter `{parameter}` {problem}: give an id of at most \
             {MAX_ID_CHARS} printable characters (`{}`)",
            quote(&value.escape_debug().to_string())
        ),
    ))
}

/// At most 200 characters of what the caller sent (docs/service.md, "Errors").
fn quote(text: &str) -> String {
    let mut quoted: String = text.chars().take(200).collect();
    if quoted.len() < text.len() {
        quoted.push('…');
    }
    quoted
}

/// Liveness: the process answers. (Readiness of the database is gRPC health's job.)
async fn healthz() -> &'static str {
    "ok\n"
}

/// Prometheus metrics (docs/operations.md), text format 0.0.4. With `--metrics-token` a request without
/// that bearer token is refused with 401 (compared in constant time).
async fn metrics(
    axum::extract::State(state): axum::extract::State<AppState>,
    headers: axum::http::HeaderMap,
) -> Result<axum::response::Response, HttpError> {
    if let Some(want) = &state.metrics_token {
        let given = headers
            .get(axum::http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .unwrap_or("");
        use sha2::Digest;
        // Equal-length digests compared whole: no early exit that times the prefix.
        let (a, b) = (
            sha2::Sha256::digest(given),
            sha2::Sha256::digest(want.as_bytes()),
        );
        if !crate::inbound::providers::same_bytes(&a, &b) {
            return Err(HttpError::new(
                StatusCode::UNAUTHORIZED,
                "unauthenticated",
                "GET /metrics needs `Authorization: Bearer <the --metrics-token value>`",
            ));
        }
    }
    let body = state.core.metrics.render(&state.core.db);
    Ok(axum::response::Response::builder()
        .header(
            axum::http::header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )
        .body(Body::from(body))
        .expect("a static header"))
}

/// Reads the whole body, refusing one over `limit` bytes with 413 (before anything is parsed
/// or stored) and one too slow with 408 (the body timeout, [`crate::api::serve`]).
pub async fn read_body(body: Body, limit: usize) -> Result<Bytes, HttpError> {
    axum::body::to_bytes(body, limit).await.map_err(|e| {
        let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&e);
        while let Some(s) = source {
            if s.is::<http_body_util::LengthLimitError>() {
                return HttpError::too_large(limit);
            }
            if let Some(timeout) = s.downcast_ref::<crate::api::serve::BodyTimeout>() {
                return HttpError::new(
                    axum::http::StatusCode::REQUEST_TIMEOUT,
                    "request_timeout",
                    format!(
                        "the body did not arrive within {}s of the headers; send it at once",
                        timeout.0.as_secs_f64()
                    ),
                );
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

/// The JSON answer to a stored signal: with `intent` when a human reply's words were read.
pub fn receipt_json(receipt: &Receipt) -> serde_json::Value {
    let mut v = serde_json::json!({
        "signal_id": receipt.signal_id,
        "duplicate": receipt.duplicate,
        "deliveries": receipt.deliveries.iter().map(|d| serde_json::json!({
            "enrollment_id": d.enrollment_id,
            "effect": d.effect.as_str(),
            "branch": d.branch,
        })).collect::<Vec<_>>(),
    });
    if let Some(intent) = &receipt.intent {
        v["intent"] = serde_json::to_value(intent).expect("an intent serializes");
    }
    v
}
