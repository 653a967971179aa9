//! nudge — an outreach sequence scheduler.
//!
//! nudge stores contacts and flows, enrolls contacts, decides *when* each step happens and routes
//! inbound signals to the step that waits for them. The product contract is `SPEC.md` (shared).
//!
//! # Layout
//!
//! The heart is a pure core with no I/O; everything else is a thin adapter around it.
//!
//! - [`timing`] — pure: durations, `until` instants, calendar patterns, zones and DST, business
//!   days, send windows and the SMS window, jitter, zones from phone numbers (SPEC §2–§4).
//! - [`flow`] — pure: the flow model, parsing and validation, `$:` expressions (SPEC §1, §2.5).
//! - [`engine`] — pure: the step interpreter `(state, input, now) -> (state, effects)` and the
//!   in-memory simulation (SPEC §5, §7 `simulate`).
//! - [`routing`] — pure: what a signal does to one enrollment, which branch a reply picks, the
//!   signal buffer (SPEC §5.3).

pub mod code;
pub mod engine;
pub mod flow;
pub mod routing;
pub mod timing;
