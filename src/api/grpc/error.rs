//! The one place errors become gRPC statuses.
//!
//! Invalid input becomes `INVALID_ARGUMENT` with a `google.rpc.BadRequest` listing the field
//! violations (field path, the problem code as `reason`, the message as `description`) plus a
//! `google.rpc.ErrorInfo` whose reason is the first problem code, so clients can branch on codes
//! without parsing text; reflection serves both types' descriptors, so grpcurl decodes them.
//! Every status is bounded in size (docs/service.md, "Errors"): a client refuses trailers over its header list
//! limit and would see `RESOURCE_EXHAUSTED` instead of the real code. Storage failures are
//! logged in full and answered with a generic `INTERNAL` (no SQL leaks to callers).

use crate::auth::AuthError;
use crate::service::{ServiceError, Violation};
use crate::store::StoreError;
use std::collections::HashMap;
use tonic::{Code, Status};
use tonic_types::{ErrorDetails, FieldViolation, StatusExt};

/// The `ErrorInfo.domain` of nudge's errors.
pub const ERROR_DOMAIN: &str = "nudge";

/// The most bytes of a status message. It travels twice, percent-encoded in `grpc-message`
/// and inside `grpc-status-details-bin`, and the whole status must fit the client's header
/// list limit (16 KiB in tonic/hyper); this and [`DETAILS_BUDGET`] keep it under 8 KiB even
/// when every character needs three bytes and percent-encoding (docs/service.md, "Errors").
pub const MAX_MESSAGE_BYTES: usize = 1_000;
/// The most bytes the `BadRequest` violations take (before base64); violations past it are
/// counted in `ErrorInfo.metadata["omitted"]`.
pub const DETAILS_BUDGET: usize = 2_000;
/// The most characters of one violation's description (and of its field path).
const DESCRIPTION_CHARS: usize = 500;
const FIELD_CHARS: usize = 200;

impl From<ServiceError> for Status {
    fn from(error: ServiceError) -> Status {
        match error {
            ServiceError::Invalid(violations) => {
                let message = bounded(ServiceError::Invalid(violations.clone()).to_string());
                violations_status(Code::InvalidArgument, message, violations)
            }
            ServiceError::Refused(violations) => {
                let message = bounded(ServiceError::Refused(violations.clone()).to_string());
                violations_status(Code::FailedPrecondition, message, violations)
            }
            ServiceError::NotFound { .. } => Status::not_found(bounded(error.to_string())),
            ServiceError::FailedPrecondition(m) => Status::failed_precondition(bounded(m)),
            ServiceError::Conflict(m) => Status::already_exists(bounded(m)),
            ServiceError::Forbidden(m) => Status::permission_denied(bounded(m)),
            ServiceError::Unavailable(m) => Status::unavailable(bounded(m)),
            ServiceError::Internal(m) => {
                tracing::error!(error = %m, "internal error");
                Status::internal("internal error; the server log has the details")
            }
            ServiceError::Store(e) => store_status(e),
        }
    }
}

/// `status` (`INVALID_ARGUMENT`, or `FAILED_PRECONDITION` for a refusal) with a `BadRequest`
/// (each violation: its field, the code as `reason`, the message as `description`) and an
/// `ErrorInfo` (the first code as `reason`, every distinct code in `metadata["codes"]`), all
/// within the size bounds above.
fn violations_status(status: Code, message: String, violations: Vec<Violation>) -> Status {
    use crate::quote::truncate;
    let mut field_violations = Vec::new();
    let mut used = 0;
    for v in &violations {
        let fv = FieldViolation {
            field: truncate(&v.field, FIELD_CHARS),
            description: truncate(&v.message, DESCRIPTION_CHARS),
            reason: v.code.as_str().to_string(),
            localized_message: None,
        };
        // Field tags and lengths: a few bytes per violation besides the text.
        let size = fv.field.len() + fv.description.len() + fv.reason.len() + 12;
        if used + size > DETAILS_BUDGET && !field_violations.is_empty() {
            break;
        }
        used += size;
        field_violations.push(fv);
    }
    let omitted = violations.len() - field_violations.len();
    let mut details = ErrorDetails::with_bad_request(field_violations);
    if let Some(first) = violations.first() {
        let mut codes: Vec<&str> = Vec::new();
        for v in &violations {
            if !codes.contains(&v.code.as_str()) {
                codes.push(v.code.as_str());
            }
        }
        let mut metadata = HashMap::from([("codes".to_string(), codes.join(","))]);
        if omitted > 0 {
            metadata.insert("omitted".to_string(), omitted.to_string());
        }
        details.set_error_info(first.code.as_str(), ERROR_DOMAIN, metadata);
    }
    Status::with_error_details(status, message, details)
}

/// At most [`MAX_MESSAGE_BYTES`] of `message`, cut on a character boundary.
fn bounded(mut message: String) -> String {
    if message.len() > MAX_MESSAGE_BYTES {
        let mut end = MAX_MESSAGE_BYTES - '…'.len_utf8();
        while !message.is_char_boundary(end) {
            end -= 1;
        }
        message.truncate(end);
        message.push('…');
    }
    message
}

impl From<AuthError> for Status {
    fn from(error: AuthError) -> Status {
        match error {
            AuthError::Missing | AuthError::Malformed | AuthError::Unknown => {
                Status::unauthenticated(error.to_string())
            }
            AuthError::Forbidden { .. } | AuthError::NeedsAdmin => {
                Status::permission_denied(error.to_string())
            }
            AuthError::Store(e) => store_status(e),
        }
    }
}

/// A storage failure as a status, by what it means for the caller (the table in
/// `docs/service.md`, "Storage failures"): retryable ones `UNAVAILABLE` (nothing committed,
/// or, when the link broke during the commit, said to be unknown), conflicts that outlasted
/// nudge's own retries `ABORTED`, the constraints that are an answer theirs, and anything else
/// `INTERNAL` with the error and its SQLSTATE in the log only. (A `ServiceError` carries the
/// unavailable ones already; this is also the answer to an authentication lookup's failure.)
fn store_status(error: StoreError) -> Status {
    use diesel::result::{DatabaseErrorKind, Error as DieselError};
    let sqlstate = error.sqlstate().map(|c| c.to_string()).unwrap_or_default();
    match &error {
        StoreError::Query(DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, _)) => {
            tracing::info!(error = %error, sqlstate, "conflicting write");
            Status::already_exists("a conflicting record was written at the same time; retry")
        }
        StoreError::Query(DieselError::DatabaseError(
            DatabaseErrorKind::ForeignKeyViolation,
            _,
        )) => {
            tracing::info!(error = %error, sqlstate, "a record referred to is gone");
            Status::failed_precondition(
                "a record this call refers to was deleted at the same time; nothing was changed",
            )
        }
        StoreError::Contention(_) => {
            tracing::warn!(error = %error, "write contention");
            Status::aborted(
                "too many concurrent changes to the same record; nothing was changed, retry",
            )
        }
        StoreError::Unavailable(_) | StoreError::Connect { .. } | StoreError::ConnectionLost(_) => {
            tracing::error!(error = %error, sqlstate, "database unavailable");
            Status::unavailable(error.retry_advice().unwrap_or_default())
        }
        StoreError::Unwritable(why) => {
            tracing::error!(error = %error, "database refuses writes");
            Status::unavailable(format!(
                "the database refuses writes: {why}; nothing was changed, retry later"
            ))
        }
        _ => {
            tracing::error!(error = %error, sqlstate, "storage error");
            Status::internal("internal error; the server log has the details")
        }
    }
}

/// gRPC's canonical name of `code` (`INVALID_ARGUMENT`, `NOT_FOUND`, …), as the protos' batch
/// results name an item's refusal.
pub fn code_name(code: Code) -> &'static str {
    match code {
        Code::Ok => "OK",
        Code::Cancelled => "CANCELLED",
        Code::Unknown => "UNKNOWN",
        Code::InvalidArgument => "INVALID_ARGUMENT",
        Code::DeadlineExceeded => "DEADLINE_EXCEEDED",
        Code::NotFound => "NOT_FOUND",
        Code::AlreadyExists => "ALREADY_EXISTS",
        Code::PermissionDenied => "PERMISSION_DENIED",
        Code::ResourceExhausted => "RESOURCE_EXHAUSTED",
        Code::FailedPrecondition => "FAILED_PRECONDITION",
        Code::Aborted => "ABORTED",
        Code::OutOfRange => "OUT_OF_RANGE",
        Code::Unimplemented => "UNIMPLEMENTED",
        Code::Internal => "INTERNAL",
        Code::Unavailable => "UNAVAILABLE",
        Code::DataLoss => "DATA_LOSS",
        Code::Unauthenticated => "UNAUTHENTICATED",
    }
}

/// One refused item of a batch call (`BatchEnroll`, `BatchAckDispatch`): the code's canonical
/// name, the message as the status carries it (bounded), and for invalid input every field
/// problem.
pub fn item_error(e: ServiceError) -> (String, String, Vec<crate::proto::v1::Problem>) {
    let problems = match &e {
        ServiceError::Invalid(v) => v
            .iter()
            .map(|v| crate::proto::v1::Problem {
                code: v.code.as_str().to_string(),
                path: v.field.clone(),
                message: v.message.clone(),
                severity: "error".into(),
            })
            .collect(),
        _ => Vec::new(),
    };
    let status = Status::from(e);
    (
        code_name(status.code()).to_string(),
        status.message().to_string(),
        problems,
    )
}
