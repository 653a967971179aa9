//! The operations behind the API, independent of the wire: each takes the
//! [`Core`](crate::runtime::Core) (or, to receive a signal, the signal
//! [`Router`](signals::Router)), the caller's account and its input, checks the input, and talks
//! to the store. The gRPC and HTTP adapters call these and only translate. Services never import
//! the edge (`api`) or the planner loop.

pub mod accounts;
pub mod approvals;
pub mod contacts;
pub mod dispatches;
pub mod enrollments;
pub mod fields;
pub mod flow_stats;
pub mod flows;
pub mod ids;
pub mod providers;
pub mod senders;
pub mod signals;
pub mod simulate;
pub mod tasks;
pub mod unsubscribe;

use crate::code::Code;
use crate::store::StoreError;

/// One thing wrong with a request: which field, the problem code, and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The request field, e.g. `contact.phone`, or a JSON Pointer inside a document, e.g.
    /// `definition/steps/wait_2d`.
    pub field: String,
    pub code: Code,
    /// What is wrong, quoting the offending text, and how to fix it.
    pub message: String,
}

impl Violation {
    pub fn new(field: impl Into<String>, code: Code, message: impl Into<String>) -> Self {
        Violation {
            field: field.into(),
            code,
            message: message.into(),
        }
    }
}

/// The errors of the service boundary; the gRPC adapter maps each to a status in one place.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    #[error("invalid request: {}", summary(.0))]
    Invalid(Vec<Violation>),
    #[error("{what} {} not found", crate::quote::quote(.id))]
    NotFound { what: &'static str, id: String },
    /// The request is well-formed but the current state refuses it (a flow the engine cannot
    /// run, resuming an enrollment that is not paused, …).
    #[error("{0}")]
    FailedPrecondition(String),
    /// [`ServiceError::FailedPrecondition`] with each problem named, as [`ServiceError::Invalid`]
    /// names them: the state refuses the request for these reasons (a move to a version where
    /// some enrollments' steps have no place).
    #[error("refused: {}", summary(.0))]
    Refused(Vec<Violation>),
    /// It would duplicate something that exists (a second active enrollment).
    #[error("{0}")]
    Conflict(String),
    /// The token's scope does not cover this enrollment.
    #[error("{0}")]
    Forbidden(String),
    /// The service cannot answer now (shutting down, the database unreachable); the caller
    /// may retry.
    #[error("{0}")]
    Unavailable(String),
    /// A bug: a state the code does not expect. Logged; the caller sees an internal error.
    #[error("internal error: {0}")]
    Internal(String),
    #[error(transparent)]
    Store(StoreError),
}

impl From<StoreError> for ServiceError {
    /// An unreachable database is [`ServiceError::Unavailable`] (retryable), saying whether
    /// anything may have been stored; its cause is logged here, since the caller's message
    /// never names the database.
    fn from(error: StoreError) -> ServiceError {
        match error {
            StoreError::Unavailable(_)
            | StoreError::Connect { .. }
            | StoreError::ConnectionLost(_) => {
                let sqlstate = error.sqlstate().map(|c| c.to_string()).unwrap_or_default();
                tracing::warn!(error = %error, sqlstate, "database unavailable");
                let advice = error.retry_advice().expect("a retryable store error");
                ServiceError::Unavailable(advice.into())
            }
            error => ServiceError::Store(error),
        }
    }
}

impl crate::store::Conflicted for ServiceError {
    fn is_conflict(&self) -> bool {
        matches!(self, ServiceError::Store(e) if e.is_conflict())
    }
}

/// How many violations the one-line summary of [`ServiceError::Invalid`] spells out; the rest
/// are counted (the gRPC `BadRequest` detail lists them).
pub const SUMMARY_SHOWN: usize = 3;
/// The most characters of one violation's field or message the summary shows.
const SUMMARY_PART_CHARS: usize = 300;

/// `field: message (CODE)` for the first few violations, then how many more: a status message
/// stays short whatever the request (docs/service.md, "Errors").
fn summary(violations: &[Violation]) -> String {
    use crate::quote::truncate;
    let mut text = violations
        .iter()
        .take(SUMMARY_SHOWN)
        .map(|v| {
            format!(
                "{}: {} ({})",
                truncate(&v.field, SUMMARY_PART_CHARS),
                truncate(&v.message, SUMMARY_PART_CHARS),
                v.code
            )
        })
        .collect::<Vec<_>>()
        .join("; ");
    if violations.len() > SUMMARY_SHOWN {
        text.push_str(&format!("; and {} more", violations.len() - SUMMARY_SHOWN));
    }
    text
}

/// Collects violations while checking several fields, so one reply lists every problem.
#[derive(Debug, Default)]
pub struct Violations(Vec<Violation>);

impl Violations {
    /// Keeps the value of `result`, or records its violation and returns `None`.
    pub fn check<T>(&mut self, result: Result<T, Violation>) -> Option<T> {
        match result {
            Ok(value) => Some(value),
            Err(violation) => {
                self.0.push(violation);
                None
            }
        }
    }

    pub fn push(&mut self, violation: Violation) {
        self.0.push(violation);
    }

    /// The recorded violations, if any (for callers that report them without a
    /// [`ServiceError`], such as the command line).
    pub fn into_violations(self) -> Result<(), Vec<Violation>> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(self.0)
        }
    }

    /// `Err(Invalid)` when anything was recorded.
    pub fn finish(self) -> Result<(), ServiceError> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(ServiceError::Invalid(self.0))
        }
    }
}

/// Keyset pagination: the store is asked for `size + 1` rows; when the extra one came back there
/// is a next page, whose token is the key of the last row kept. An empty token means the end.
pub(crate) fn next_page_token<T>(
    rows: &mut Vec<T>,
    size: i64,
    key: impl Fn(&T) -> String,
) -> String {
    if rows.len() as i64 > size {
        rows.truncate(size as usize);
        rows.last().map(key).unwrap_or_default()
    } else {
        String::new()
    }
}
