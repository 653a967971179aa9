//! The flow language: the JSON model of docs/flows.md and its validator. Pure: no I/O.
//!
//! - [`model`] — a validated flow as Rust types ([`Flow`], [`Step`], [`Action`], timing slots);
//!   what the engine interprets.
//! - [`mod@validate`] — [`validate()`]: every problem of a flow document (code, JSON Pointer, how to
//!   fix it), and the typed [`Flow`] when there is no error.
//! - [`events`] — event names: the built-ins and custom keys (docs/signals.md, "Kinds of signal and the events they raise").
//! - [`expr`] — `$:` expressions in timing slots: grammar, type inference, evaluation (docs/timing.md, "Expressions in timing slots").
//! - [`graph`] — strongly connected components and reachability, for `CYCLE` and `UNREACHABLE`.
//! - [`report`] — problems as text lines or docs/service.md's JSON.
//!
//! The reference for flow authors is `docs/flows.md`.

#![warn(missing_docs)]

pub mod allow;
pub mod events;
pub mod expr;
pub mod graph;
pub mod model;
pub mod report;
pub mod validate;

pub use events::Event;

/// The most steps the engine enters in one call (one transition). The validator refuses a flow
/// with a longer path of steps that need not let time pass (`TRANSITION_TOO_LONG`); the engine
/// fails an enrollment that reaches it anyway (`LOOP_GUARD`, a loop through a `wait` that is
/// already over). Here, below both, so the two read the same number.
pub const LOOP_GUARD: usize = 10_000;
pub use model::{Action, Flow, Step, StepId, StepKind};
pub use validate::{validate, Problem, Severity, ValidateOptions, Validation};
