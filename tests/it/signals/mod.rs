//! End-to-end tests of inbound signals (docs/signals.md, "Kinds of signal and the events they raise", "Routing" and "Custom events"; docs/flows.md, "Timeouts"; docs/service.md): the real server on port 0 with a
//! manual clock, flows with `wait_for` steps, signals through gRPC (`ReportSignal`,
//! `PostEvent`) and HTTP (`/events`, the webhooks, with real signatures), and what each
//! enrollment's state and journey say afterwards. Every test runs on SQLite and PostgreSQL.
//!
//! By concern: `routing` (one signal, one enrollment, docs/signals.md, "Kinds of signal and the events they raise" and "Routing"), `fanout` (one signal,
//! many enrollments; provider ids), `sms` (Twilio), `email` (replies in a thread), `webhooks`
//! (signatures, the calendar, the CLI's secret), `events` (custom events over HTTP and gRPC),
//! `group` (group commit), `payloads` (a custom event's payload in the journey), `inbox` (auto-replies, out-of-office
//! pauses, bounces, SMS START/HELP, cancelled meetings: docs/signals.md, "Inbox signals"). `support` holds their flows and helpers.

pub mod support;

mod email;
mod events;
mod fanout;
mod group;
mod inbox;
mod intent;
mod payloads;
mod providers;
mod routing;
mod sms;
mod unsubscribe;
mod webhooks;
