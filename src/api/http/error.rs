//! The one place HTTP errors become responses: a status and `{"error": {"code", "message"}}`.
//!
//! docs/service.md: 401 no or bad credentials or signature, 403 a token without the scope, 404 unknown
//! contact, 413 a body over the limit, 422 a body that does not parse. Storage failures are
//! logged in full and answered as `docs/service.md` tabulates them: 503 with `Retry-After` for
//! every retryable one, else a generic 500.

use crate::auth::AuthError;
use crate::inbound::payload::PayloadError;
use crate::inbound::signing::SignatureError;
use crate::service::ServiceError;
use crate::store::StoreError;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;

/// An HTTP refusal.
#[derive(Debug)]
pub struct HttpError {
    pub status: StatusCode,
    /// A problem code (`BAD_EVENT`, …) or the status's name (`unauthenticated`, …).
    pub code: String,
    pub message: String,
}

impl HttpError {
    pub fn new(status: StatusCode, code: &str, message: impl Into<String>) -> HttpError {
        HttpError {
            status,
            code: code.to_string(),
            message: message.into(),
        }
    }

    pub fn unauthenticated(message: impl Into<String>) -> HttpError {
        HttpError::new(StatusCode::UNAUTHORIZED, "unauthenticated", message)
    }

    pub fn not_found(message: impl Into<String>) -> HttpError {
        HttpError::new(StatusCode::NOT_FOUND, "not_found", message)
    }

    pub fn unprocessable(message: impl Into<String>) -> HttpError {
        HttpError::new(StatusCode::UNPROCESSABLE_ENTITY, "unprocessable", message)
    }

    pub fn too_large(limit: usize) -> HttpError {
        HttpError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
            format!("the body is over the limit of {limit} bytes"),
        )
    }
}

/// How long a 503's `Retry-After` asks a client (a provider's webhook sender) to wait, in
/// seconds: a cancelled statement or a failover is over in about that.
pub const RETRY_AFTER_SECS: u32 = 5;

impl IntoResponse for HttpError {
    /// The JSON body; a 503 (retryable: nothing was refused for what it said) also carries
    /// `Retry-After`, so providers that honour it retry then, and the rest retry on the 5xx.
    fn into_response(self) -> Response {
        let body = serde_json::json!({"error": {"code": self.code, "message": self.message}});
        let mut response = (self.status, Json(body)).into_response();
        if self.status == StatusCode::SERVICE_UNAVAILABLE {
            response.headers_mut().insert(
                axum::http::header::RETRY_AFTER,
                axum::http::HeaderValue::from(RETRY_AFTER_SECS),
            );
        }
        response
    }
}

impl From<ServiceError> for HttpError {
    fn from(error: ServiceError) -> HttpError {
        match error {
            ServiceError::Invalid(violations) => {
                let code = violations
                    .first()
                    .map(|v| v.code.as_str())
                    .unwrap_or("BAD_SCHEMA");
                let message = ServiceError::Invalid(violations.clone()).to_string();
                HttpError::new(StatusCode::BAD_REQUEST, code, message)
            }
            ServiceError::NotFound { .. } => HttpError::not_found(error.to_string()),
            ServiceError::Forbidden(m) => {
                HttpError::new(StatusCode::FORBIDDEN, "permission_denied", m)
            }
            ServiceError::FailedPrecondition(m) => {
                HttpError::new(StatusCode::CONFLICT, "failed_precondition", m)
            }
            ServiceError::Refused(_) => HttpError::new(
                StatusCode::CONFLICT,
                "failed_precondition",
                error.to_string(),
            ),
            ServiceError::Conflict(m) => HttpError::new(StatusCode::CONFLICT, "conflict", m),
            ServiceError::Unavailable(m) => {
                HttpError::new(StatusCode::SERVICE_UNAVAILABLE, "unavailable", m)
            }
            ServiceError::Internal(m) => {
                tracing::error!(error = %m, "internal error");
                HttpError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "internal",
                    "internal error; the server log has the details",
                )
            }
            ServiceError::Store(e) => e.into(),
        }
    }
}

impl From<StoreError> for HttpError {
    /// As gRPC answers it (`docs/service.md`, "Storage failures"), with one difference: a
    /// conflict that outlasted nudge's retries is a 503 too, since a provider retries a 5xx
    /// and may drop a 409 for good.
    fn from(error: StoreError) -> HttpError {
        use diesel::result::{DatabaseErrorKind, Error as DieselError};
        let sqlstate = error.sqlstate().map(|c| c.to_string()).unwrap_or_default();
        if let Some(advice) = error.retry_advice() {
            tracing::error!(error = %error, sqlstate, "database unavailable");
            return HttpError::new(StatusCode::SERVICE_UNAVAILABLE, "unavailable", advice);
        }
        match &error {
            StoreError::Unwritable(why) => {
                tracing::error!(error = %error, "database refuses writes");
                HttpError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "unavailable",
                    format!("the database refuses writes: {why}; nothing was changed, retry later"),
                )
            }
            StoreError::Contention(_) => {
                tracing::warn!(error = %error, "write contention");
                HttpError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "aborted",
                    "too many concurrent changes to the same record; nothing was changed, retry",
                )
            }
            StoreError::Query(DieselError::DatabaseError(
                DatabaseErrorKind::UniqueViolation,
                _,
            )) => {
                tracing::info!(error = %error, sqlstate, "conflicting write");
                HttpError::new(
                    StatusCode::CONFLICT,
                    "conflict",
                    "a conflicting record was written at the same time; retry",
                )
            }
            StoreError::Query(DieselError::DatabaseError(
                DatabaseErrorKind::ForeignKeyViolation,
                _,
            )) => {
                tracing::info!(error = %error, sqlstate, "a record referred to is gone");
                HttpError::new(
                    StatusCode::CONFLICT,
                    "failed_precondition",
                    "a record this request refers to was deleted at the same time; nothing was \
                     changed",
                )
            }
            _ => {
                tracing::error!(error = %error, sqlstate, "storage error");
                HttpError::new(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "internal",
                    "internal error; the server log has the details",
                )
            }
        }
    }
}

impl From<AuthError> for HttpError {
    fn from(error: AuthError) -> HttpError {
        match error {
            AuthError::Missing | AuthError::Malformed | AuthError::Unknown => {
                // The foundation's texts speak of gRPC metadata; over HTTP it is a header.
                let message = match error {
                    AuthError::Missing => "missing credentials: send the header `Authorization: Bearer <token>` (create a token with `nudge token create`)".to_string(),
                    AuthError::Malformed => "malformed credentials: the `Authorization` header must be `Bearer <token>`".to_string(),
                    other => other.to_string(),
                };
                HttpError::unauthenticated(message)
            }
            AuthError::Forbidden { .. } | AuthError::NeedsAdmin => HttpError::new(
                StatusCode::FORBIDDEN,
                "permission_denied",
                error.to_string(),
            ),
            AuthError::Store(e) => e.into(),
        }
    }
}

impl From<SignatureError> for HttpError {
    fn from(error: SignatureError) -> HttpError {
        HttpError::unauthenticated(error.to_string())
    }
}

impl From<PayloadError> for HttpError {
    fn from(error: PayloadError) -> HttpError {
        match error {
            PayloadError::TooLarge { .. } => HttpError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "payload_too_large",
                error.to_string(),
            ),
            PayloadError::NotJson { .. } => HttpError::unprocessable(error.to_string()),
        }
    }
}
