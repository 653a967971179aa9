//! Inbound signals, the pure part (docs/signals.md, "Kinds of signal and the events they raise"; docs/service.md): what each kind of signal raises, how an
//! email reply names its thread, which SMS bodies opt out, and webhook signatures.
//!
//! - [`kinds`] — [`SignalKind`]: every way a signal arrives, and the events it raises.
//! - [`payload`] — a custom event's payload: JSON up to 64 KiB, empty or `null` is `{}`.
//! - [`thread`] — candidate `Message-ID`s from `In-Reply-To` / `References`.
//! - [`sms`] — the SMS keywords (`STOP`, `START`, `HELP`, …).
//! - [`mail`] — an inbound email from JSON or raw MIME (`mail-parser`), DSN fields included.
//! - [`classify`] — reply, auto-reply, out-of-office, bounce or unsubscribe (docs/signals.md, "Inbox signals").
//! - [`return_date`] — an out-of-office's return date, in nine languages.
//! - [`intent`] — what a person's reply says: interested, not now (and until when), not
//!   interested, wrong person (and who), unsubscribe in words, or other.
//! - [`signing`] — `X-Nudge-Signature` (HMAC-SHA256, 5-minute window) and `X-Twilio-Signature`.
//! - [`link`] — signed, expiring link tokens for the approval and unsubscribe pages.
//! - [`providers`] — providers' own webhooks (Mailgun, SendGrid, Postmark, SES, Twilio status
//!   and Voice, Calendly, Cal.com): verified on the raw bytes, read into notices.
//!
//! Storing a signal and fanning it out to every enrollment of the contact is
//! [`crate::service::signals`]; what it does to each enrollment is [`crate::routing`].

#![warn(missing_docs)]

pub mod classify;
pub mod intent;
pub mod kinds;
pub mod link;
pub mod mail;
mod names;
pub mod payload;
pub mod providers;
pub mod return_date;
pub mod signing;
pub mod sms;
pub mod thread;

pub use kinds::{KindError, SignalKind};
