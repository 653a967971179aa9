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
//! - [`signals`] — pure: the kinds of inbound signal and the events they raise, email thread
//!   matching, SMS opt-out keywords, webhook signatures (SPEC §5.2, §7).
//! - [`clock`] — the one place the wall clock is read; a manual clock for tests and demos.
//! - [`config`] — what `nudge serve` runs with (listen address, database URL, clock).
//! - [`store`] — diesel schema, rows and queries; one connection type over SQLite and PostgreSQL.
//! - [`planner`] — the loop that claims due enrollments (`FOR UPDATE SKIP LOCKED` on
//!   PostgreSQL) and applies the engine; wake-ups in-process and by `LISTEN/NOTIFY`.
//! - [`auth`] — API tokens (hashed at rest) and their scopes.
//! - [`service`] — the operations behind the API, wire-independent: contacts, senders, flows,
//!   enrollments, dispatches, tasks, signals (storing one and reaching every enrollment).
//! - [`proto`] — the generated `nudge.v1` gRPC types and the reflection descriptor set.
//! - [`api`] — adapters: thin tonic services and the token layer (`api::grpc`), HTTP (`api::http`:
//!   `/healthz`, `POST /events/{key}`, the email, Twilio SMS and calendar webhooks).
//! - [`app`] — builds the server (migrate, bootstrap, bind) and serves gRPC + HTTP on one port.
//! - [`cli`] — the `nudge` command line, one file per subcommand.
//! - [`telemetry`] — logging setup (human or JSON, to stderr).

pub mod api;
pub mod app;
pub mod auth;
pub mod cli;
pub mod clock;
pub mod code;
pub mod config;
pub mod engine;
pub mod flow;
pub mod planner;
pub mod proto;
pub mod routing;
pub mod service;
pub mod signals;
pub mod store;
pub mod telemetry;
pub mod timing;
