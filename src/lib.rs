//! nudge — an outreach sequence scheduler.
//!
//! nudge stores contacts and flows, enrolls contacts, decides *when* each step happens and routes
//! inbound signals to the step that waits for them. The product contract is `docs/` (index: `docs/README.md`).
//!
//! # Layout
//!
//! Four layers, and one rule: **imports point down**. Nothing below [`api`] imports it, no
//! service imports [`planner`], and the pure core imports nothing above it.
//!
//! ```text
//! api ─▶ service ─▶ runtime ─▶ store ─▶ pure core (timing, flow, engine, routing, inbound)
//!        planner ─┘
//! ```
//!
//! The pure core, no I/O, tested table-driven:
//!
//! - [`timing`] — durations, `until` instants, calendar patterns, zones and DST, business
//!   days, send windows and the SMS window, jitter, zones from phone numbers (docs/timing.md).
//! - [`flow`] — the flow model, parsing and validation, `$:` expressions (docs/flows.md; docs/timing.md, "Expressions in timing slots").
//! - [`engine`] — the step interpreter `(state, input, now) -> (state, effects)` and the
//!   in-memory simulation (docs/signals.md; docs/service.md `simulate`).
//! - [`routing`] — what a signal does to one enrollment, which branch a reply picks, the
//!   signal buffer (docs/signals.md, "Routing").
//! - [`inbound`] — the kinds of inbound signal and the events they raise, email thread
//!   matching, SMS opt-out keywords, webhook signatures (docs/signals.md, "Kinds of signal and the events they raise"; docs/service.md).
//! - [`capacity`] — a sender's caps per channel and when one more send fits them (docs/capacity.md).
//! - [`experiment`] — which variant of a step a contact gets (GrowthBook's hashing).
//! - [`code`] — the stable problem codes, one spelling each.
//! - [`quote`] — quoting input in messages, bounded (docs/service.md, "Errors"), so a status always fits.
//!
//! Around it:
//!
//! - [`clock`] — the one place the wall clock is read; a manual clock for tests and demos.
//! - [`store`] — diesel schema, rows and queries over SQLite and PostgreSQL: [`store::Db`] for
//!   one-shot reads, [`store::Tx`] for work that commits together.
//! - [`runtime`] — what the services and the planner share: [`runtime::Core`] (database,
//!   clock, flow cache, wake-up), [`runtime::apply()`] (one engine step into rows), wake-ups
//!   across replicas.
//! - [`service`] — the operations behind the API, wire-independent: contacts, senders, flows,
//!   enrollments, dispatches, tasks, signals (the group-commit router, the pure group plan, the
//!   one-signal path).
//! - [`planner`] — the loop that claims due enrollments (`FOR UPDATE SKIP LOCKED` on
//!   PostgreSQL) and wakes them; it owns a `Core`.
//! - [`auth`] — API tokens (hashed at rest) and their scopes.
//! - [`proto`] — the generated `nudge.v1` gRPC types and the reflection descriptor set.
//! - [`api`] — the edge: thin tonic services and the token layer (`api::grpc`), HTTP
//!   (`api::http`: `/healthz`, `POST /events/{key}`, the email, Twilio SMS and calendar
//!   webhooks). Its `AppState` is a `Core` plus what only the edge needs.
//! - [`app`] — builds the server in one phase (migrate, bootstrap, `Core`, signal router,
//!   bind) and serves gRPC + HTTP on one port.
//! - [`cli`] — the `nudge` command line, one file per subcommand.
//! - [`config`] — what `nudge serve` runs with; [`telemetry`] — logging setup.

pub mod api;
pub mod app;
pub mod auth;
pub mod cache;
pub mod capacity;
pub mod cli;
pub mod clock;
pub mod code;
pub mod config;
pub mod engine;
pub mod experiment;
pub mod flow;
pub mod inbound;
pub mod planner;
pub mod proto;
pub mod quote;
pub mod routing;
pub mod runtime;
pub mod service;
pub mod store;
pub mod telemetry;
pub mod timing;
