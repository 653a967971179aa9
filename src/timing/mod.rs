//! The timing core (docs/timing.md). Pure: no I/O, and `now` is always a parameter.
//!
//! - [`error`] — the one error type: code, offending text, position, hint.
//! - [`zone`] — `tz` slots and the wall-clock ↔ instant rules of DST.
//! - [`holidays`] — `settings.holidays`, the local dates business days skip.
//! - [`holiday_calendars`] — the shipped public holiday calendars by place (docs/timing.md, "Holiday calendars and quiet hours").
//! - [`calendar`] — systemd `OnCalendar` patterns and their next match in a zone.
//! - [`channel`] — [`Channel`]: email, SMS, call, LinkedIn; the one channel type of the crate.
//! - [`business_days`] — Monday–Friday stepping that skips holidays (`bd`, `+Nbd`).
//! - [`duration`] — the duration grammar and its calendar-then-fixed arithmetic in a zone.
//! - [`until`] — the four `until` forms and their resolution to an instant.
//! - [`phone`] — E.164 numbers and their candidate zones (docs/timing.md, "Send windows").
//! - [`quiet`] — quiet-hours policies: the federal floor and the US state table (docs/timing.md, "Holiday calendars and quiet hours").
//! - [`window`] — send windows, the SMS window, jitter and the zone rule (docs/timing.md, "Zones" and "Send windows").

#![warn(missing_docs)]

pub mod business_days;
pub mod calendar;
pub mod channel;
pub mod duration;
pub mod error;
pub mod holiday_calendars;
pub mod holidays;
pub mod phone;
pub mod question;
pub mod quiet;
pub mod until;
pub mod window;
pub mod zone;

pub use business_days::{add_business_days, is_business_day};
pub use calendar::CalendarPattern;
pub use channel::Channel;
pub use duration::Duration;
pub use error::TimingError;
pub use holidays::{ContactCalendar, Holidays};
pub use phone::{phone_zones, PhoneZones};
pub use quiet::{PlaceRule, QuietHours, QuietHoursPolicy, QuietProblem, RuleRow};
pub use until::Until;
pub use window::{
    explain_opening, is_open, next_opening, resolve_zones, resolve_zones_with, schedule,
    schedule_explained, ClosedBy, Opening, Recipient, ResolvedZones, SendWindow, WindowZone,
};
pub use zone::Zone;
