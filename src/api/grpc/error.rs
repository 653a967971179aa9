//! The one place errors become gRPC statuses.
//!
//! Invalid input becomes `INVALID_ARGUMENT` with a `google.rpc.BadRequest` listing every field
//! violation (field path, and `CODE: message`) plus a `google.rpc.ErrorInfo` whose reason is the
//! first SPEC code, so clients can branch on codes without parsing text. Storage failures are
//! logged in full and answered with a generic `INTERNAL` (no SQL leaks to callers).

use crate::auth::AuthError;
use crate::service::ServiceError;
use crate::store::StoreError;
use std::collections::HashMap;
use tonic::{Code, Status};
use tonic_types::{ErrorDetails, StatusExt};

/// The `ErrorInfo.domain` of nudge's errors.
pub const ERROR_DOMAIN: &str = "nudge";

impl From<ServiceError> for Status {
    fn from(error: ServiceError) -> Status {
        match error {
            ServiceError::Invalid(violations) => {
                let mut details = ErrorDetails::new();
                for v in &violations {
                    details
                        .add_bad_request_violation(&v.field, format!("{}: {}", v.code, v.message));
                }
                if let Some(first) = violations.first() {
                    let codes = violations
                        .iter()
                        .map(|v| v.code.as_str())
                        .collect::<Vec<_>>()
                        .join(",");
                    details.set_error_info(
                        first.code.as_str(),
                        ERROR_DOMAIN,
                        HashMap::from([("codes".to_string(), codes)]),
                    );
                }
                let message = ServiceError::Invalid(violations).to_string();
                Status::with_error_details(Code::InvalidArgument, message, details)
            }
            ServiceError::NotFound { .. } => Status::not_found(error.to_string()),
            ServiceError::FailedPrecondition(m) => Status::failed_precondition(m),
            ServiceError::Conflict(m) => Status::already_exists(m),
            ServiceError::Forbidden(m) => Status::permission_denied(m),
            ServiceError::Unavailable(m) => Status::unavailable(m),
            ServiceError::Internal(m) => {
                tracing::error!(error = %m, "internal error");
                Status::internal("internal error; the server log has the details")
            }
            ServiceError::Store(e) => store_status(e),
        }
    }
}

impl From<AuthError> for Status {
    fn from(error: AuthError) -> Status {
        match error {
            AuthError::Missing | AuthError::Malformed | AuthError::Unknown => {
                Status::unauthenticated(error.to_string())
            }
            AuthError::Forbidden { .. } => Status::permission_denied(error.to_string()),
            AuthError::Store(e) => store_status(e),
        }
    }
}

fn store_status(error: StoreError) -> Status {
    use diesel::result::{DatabaseErrorKind, Error as DieselError};
    match &error {
        StoreError::Query(DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, _)) => {
            tracing::info!(error = %error, "conflicting write");
            Status::already_exists("a conflicting record was written at the same time; retry")
        }
        StoreError::Contention(_) => {
            tracing::warn!(error = %error, "write contention");
            Status::aborted("too many concurrent changes to the same record; retry")
        }
        StoreError::Unavailable(_) | StoreError::Connect { .. } => {
            tracing::error!(error = %error, "database unavailable");
            Status::unavailable("the database is unavailable; retry later")
        }
        _ => {
            tracing::error!(error = %error, "storage error");
            Status::internal("internal error; the server log has the details")
        }
    }
}
