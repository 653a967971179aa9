//! Inbound signals, the pure part (SPEC §5.2, §7): what each kind of signal raises, how an
//! email reply names its thread, which SMS bodies opt out, and webhook signatures.
//!
//! - [`kinds`] — [`SignalKind`]: every way a signal arrives, and the events it raises.
//! - [`payload`] — a custom event's payload: JSON up to 64 KiB, empty or `null` is `{}`.
//! - [`thread`] — candidate `Message-ID`s from `In-Reply-To` / `References`.
//! - [`sms`] — the SMS opt-out keywords (`STOP`, …).
//! - [`signing`] — `X-Nudge-Signature` (HMAC-SHA256, 5-minute window) and `X-Twilio-Signature`.
//! - [`link`] — signed, expiring link tokens for the approval and unsubscribe pages.
//!
//! Storing a signal and fanning it out to every enrollment of the contact is
//! [`crate::service::signals`]; what it does to each enrollment is [`crate::routing`].

#![warn(missing_docs)]

pub mod kinds;
pub mod link;
mod names;
pub mod payload;
pub mod signing;
pub mod sms;
pub mod thread;

pub use kinds::{KindError, SignalKind};
