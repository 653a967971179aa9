//! Enrollments (docs/service.md, "Enrollments"): enroll one or a batch ([`enroll`](enroll())), operator actions
//! (pause, resume, exit, move: [`act`](act())), reads and the journey (docs/service.md, "The journey", `read`).
//!
//! Every change goes through the interpreter: the service loads the stored state, calls
//! [`crate::engine::step`] with the operator's input ([`crate::runtime::apply()`]), and writes the
//! new state and its effects (journey, dispatches, tasks) in one transaction, the enrollment row
//! locked on PostgreSQL so a planner on another replica cannot wake it meanwhile. An input the
//! interpreter rejects (resume when not paused, move to an unknown step) is refused with
//! FAILED_PRECONDITION and nothing is written.

pub(crate) mod act;
mod enroll;
mod explain;
pub mod migrate;
mod read;
mod watch;

pub use act::{act, apply_input, apply_input_storing};
pub use enroll::{batch_enroll, enroll, BatchResult, EnrollInput, MAX_BATCH};
pub use explain::{explain, flow_of};
pub use read::{
    contact_journey_page, get, journey_page, list, status_counts, ContactEntry, Entry, ListFilter,
    MAX_PAGE_TOKEN_LEN,
};
pub use watch::{cursor, watch, WatchFilter, WatchItem, WATCH_BUFFER, WATCH_POLL};

use super::ids::EnrollmentId;
use super::ServiceError;
use crate::auth::{Principal, Scope};
use crate::clock::from_millis;
use crate::engine::{EnrollmentState, Status};
use crate::store::EnrollmentRow;
use chrono::{DateTime, Utc};

/// The most items one list or journey page returns.
pub const MAX_PAGE_SIZE: i64 = 500;
/// The page size when the caller gives none.
pub const DEFAULT_PAGE_SIZE: i64 = 50;

/// An enrollment as the API shows it: the stored columns, typed, and the engine's state.
#[derive(Debug, Clone, PartialEq)]
pub struct Enrollment {
    /// `en_…`.
    pub id: EnrollmentId,
    /// The flow's id (not its name).
    pub flow_id: String,
    /// The flow version it runs, fixed at enrollment.
    pub flow_version: i32,
    /// The caller's contact id.
    pub contact_id: String,
    /// The sender whose zone and mailbox it uses.
    pub sender_id: String,
    /// Active, paused, or how it ended.
    pub status: Status,
    /// The caller's idempotency key, if it gave one.
    pub client_key: Option<String>,
    /// When it was enrolled.
    pub created_at: DateTime<Utc>,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
    /// The engine's state: the open run, the next wake, the outcome. Boxed: an enrollment
    /// is moved whole into answers and lists, and the state is most of it.
    pub state: Box<EnrollmentState>,
}

impl Enrollment {
    pub(crate) fn from_row(row: EnrollmentRow) -> Result<Enrollment, ServiceError> {
        let state = Box::new(row.engine_state()?);
        Ok(Enrollment::from_parts(row, state))
    }

    /// The enrollment of a row whose state is at hand (just written), without parsing it back.
    pub(crate) fn from_parts(row: EnrollmentRow, state: Box<EnrollmentState>) -> Enrollment {
        Enrollment {
            id: row.id.into(),
            flow_id: row.flow_id,
            flow_version: row.flow_version,
            contact_id: row.contact_id,
            sender_id: row.sender_id,
            // The state is what the engine wrote; the column mirrors it for queries.
            status: state.status,
            client_key: row.client_key,
            created_at: from_millis(row.created_at),
            updated_at: from_millis(row.updated_at),
            state,
        }
    }
}

/// Refuses an enrollment-scoped token that names another enrollment.
pub fn check_scope(who: &Principal, enrollment_id: &EnrollmentId) -> Result<(), ServiceError> {
    match &who.scope {
        Scope::Full => Ok(()),
        Scope::Admin => Err(ServiceError::Forbidden(
            "an admin token manages accounts; act on an enrollment with a full account token"
                .into(),
        )),
        Scope::Enrollment(own) if enrollment_id == own.as_str() => Ok(()),
        Scope::Enrollment(own) => Err(ServiceError::Forbidden(format!(
            "this token is scoped to enrollment `{own}`; it cannot act on {}",
            crate::quote::quote(enrollment_id.as_str())
        ))),
    }
}

/// The page size a request asks for: 0 is the default, more than the most is the most.
pub(crate) fn page_size(size: i32) -> Result<i64, ServiceError> {
    if size < 0 {
        return Err(ServiceError::Invalid(vec![super::Violation::new(
            "page.page_size",
            crate::code::Code::BadSchema,
            "the page size must not be negative (0 means the default, 50)",
        )]));
    }
    Ok(match i64::from(size) {
        0 => DEFAULT_PAGE_SIZE,
        n => n.min(MAX_PAGE_SIZE),
    })
}
