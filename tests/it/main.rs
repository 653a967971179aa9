//! nudge's integration tests, as one test binary (`cargo test --test it`): one binary links once,
//! where a binary per file linked the whole dependency tree once per file.
//!
//! Each module is what used to be a file of its own under `tests/`, and test names carry it:
//! `cargo test --test it signals::` runs the signal tests, `cargo test --test it engine_steps::`
//! the interpreter's. Tests that need a database run on both backends through
//! `backend_tests!`: `…::sqlite::NAME` by default, `…::postgres::NAME` ignored unless asked
//! for (`NUDGE_TEST_DATABASE_URL=postgres://… cargo test --tests postgres:: -- --ignored`).
//!
//! # Layout
//!
//! - `common`: the harness (`spawn_app`, fresh databases on both backends, the PostgreSQL
//!   template database, `backend_tests!`), and `common::process` for tests that run the real
//!   `nudge` binary.
//! - `golden`: comparing a timing answer with a golden case (`timing_golden`, `cli_commands`).
//! - `engine_support`: helpers of the interpreter tests (`engine_*`).
//! - End-to-end, through a real server: `api`, `api_flows_timing`, `delivery` (claims, acks,
//!   retries, held and pending dispatches, ListJourney), `engine_api`, `http_edge` (routing by
//!   content type, timeouts, the connection cap, keep-alive), `signals`
//!   (by concern: routing, fan-out, SMS, email, webhooks, events, group commit), `planner`,
//!   `planner_loop`, `store`, `enrollment_keys` (what finds an enrollment, across a migration),
//!   `contact_changes`, `transitions`, `cancelled` (a statement cancelled
//!   under each path), `edge_errors` (input
//!   limits, bounded statuses, exact refusals, error details as a reflection client decodes them).
//! - The real binary as a child process: `cli`, `cli_commands`, `crash`, `replicas`,
//!   `request_tracing` (OTLP export to a local receiver, JSON log lines), `bench`
//!   (`nudge-bench --via grpc` with a tiny N).
//! - The pure core: `engine_props`, `engine_routing`, `engine_signal`, `engine_simulate`,
//!   `engine_steps`, `flow_fixtures`, `flow_props`, `timing_golden`, `timing_phone_cases`,
//!   `timing_props`, `timing_window_props`.
//!
//! Proptest keeps the seeds of past failures in `tests/proptest-regressions/<module>.txt` (its
//! default place for a test crate whose root is `main.rs`).

// First: `backend_tests!` is defined in `common` and is in scope for every module after it.
#[macro_use]
mod common;
mod engine_support;
mod golden;
mod pg_cluster;
mod pg_load;

mod accounts;
mod api;
mod api_flows_timing;
mod approvals;
mod bench;
mod cancelled;
mod capacity;
mod cli;
mod cli_commands;
mod concurrency;
mod console;
mod contact_changes;
mod crash;
mod db_faults;
mod db_unreachable;
mod delivery;
mod edge_errors;
mod engine_api;
mod engine_explain;
mod engine_migrate;
mod engine_outside;
mod engine_props;
mod engine_routing;
mod engine_signal;
mod engine_simulate;
mod engine_steps;
mod enrollment_keys;
mod experiment_golden;
mod experiment_stats;
mod explain_api;
mod failover;
mod fetch;
mod flow_fixtures;
mod flow_props;
mod flow_stats;
mod http_edge;
mod inbox_corpus;
mod inbox_simulate;
mod intent_corpus;
mod intent_invariants;
mod intent_learned;
mod isolation;
mod journey_golden;
mod journey_summary;
mod metrics;
mod migrations;
mod planner;
mod planner_loop;
mod replicas;
mod request_tracing;
mod signals;
mod sqlite_full;
mod state_encoding;
mod store;
mod timing_golden;
mod timing_phone_cases;
mod timing_places;
mod timing_props;
mod timing_window_props;
mod transitions;
mod variants;
mod watch;
