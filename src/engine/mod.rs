//! The step interpreter (docs/signals.md): `(enrollment state, what happened, now) -> (new state,
//! effects)`, and the in-memory simulation built on it (docs/service.md `simulate`).
//!
//! Pure: no I/O, no database, no wall clock, no unseeded randomness. That is what makes the
//! product's promises checkable: a wake time computed once and stored (docs/timing.md, "Fixed once"), a re-processed
//! step that gives the same answer on any replica, and a `Simulate` that shows exactly what
//! reality will do. The storage layer loads an [`EnrollmentState`], calls [`step`], and writes
//! the new state and the [`Effect`]s (journey, dispatch outbox, tasks) in one transaction.
//!
//! - [`state`] — [`EnrollmentState`], [`Run`], [`Status`]: what is kept between calls.
//! - [`input`] — [`Input`], [`Signal`]: what happened.
//! - [`effect`] — [`Effect`], [`JourneyEntry`], [`Dispatch`], [`Task`]: what to write or send.
//! - [`interpret`] — [`step`], [`enrollable`], [`Ctx`].
//! - [`mod@simulate`] — [`simulate()`], [`Scenario`], [`Timeline`], [`render_table`].
//! - [`campaign`] — a campaign simulated under one sender's capacity (docs/service.md; docs/capacity.md), and the
//!   priority order capacity is given in.
//! - [`explain`] — [`explain()`], [`WaitReason`]: why an enrollment is where it is (docs/operations.md).
//! - [`seed`] — the stable jitter seed of a run.
//! - [`sentence`] — [`sentence()`]: every journey entry in one sentence, in the contact's zone.
//! - [`instant`] — how answers write instants.
//! - [`outside`] — a `fetch` request and its answer, an approval's decision (docs/flows.md, "approval" and "fetch").
//! - [`names`] — the closed sets of names it is stored under: [`DeliveryEffect`], [`JourneyKind`].
//!
//! Which branch a signal picks, and the buffer of early signals, live in [`crate::routing`].

#![warn(missing_docs)]

pub mod campaign;
pub mod effect;
pub mod explain;
pub mod funnel;
pub mod input;
pub mod instant;
pub mod interpret;
pub mod names;
pub mod outside;
pub mod seed;
pub mod sentence;
pub mod simulate;
pub mod state;
pub mod variant;

pub use effect::{
    message_id, parse_message_id, AckOutcome, Dispatch, Effect, JourneyEntry, PauseReason,
    RecordedPayload, SignalEffect, Task, Woken, MAX_RECORDED_PAYLOAD,
};
pub use explain::{explain, explain_in, explain_with, Explanation, WaitReason};
pub use input::{Input, Signal, SignalFacts};
pub use interpret::{channel_of, enrollable, step, step_owned, step_with, CapacityView, Ctx};
pub use names::{DeliveryEffect, JourneyKind};
pub use outside::{Decision, FetchAnswer, FetchCall, FetchRequest, FetchResponse};
pub use sentence::{sentence, ShownZone};
pub use simulate::{render_table, simulate, simulate_any, Answer, Scenario, SimError, Timeline};
pub use state::{Away, ContactView, EnrollmentState, FlowRef, Run, Status};
