//! The timing core (SPEC §2–§4). Pure: no I/O, and `now` is always a parameter.
//!
//! - [`error`] — the one error type: code, offending text, position, hint.
//! - [`zone`] — `tz` slots and the wall-clock ↔ instant rules of DST.
//! - [`phone`] — E.164 numbers and their candidate zones (SPEC §4).

pub mod error;
pub mod phone;
pub mod zone;

pub use error::TimingError;
pub use phone::{phone_zones, PhoneZones};
pub use zone::Zone;
