//! The state of one enrollment (docs/service.md, "Enrollments"): everything the interpreter needs between two calls.
//!
//! It is plain data with serde, so storage can keep it as one JSON column or split it into
//! columns (`status`, `next_run_at` for the planner's index).

use crate::code::Code;
use crate::flow::StepKind;
use crate::routing::SignalBuffer;
use crate::timing::ClosedBy;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// docs/service.md, "Enrollments": `active` → (`paused` ↔ `active`) → `completed` | `exited` | `failed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Running: the planner wakes it at `next_run_at`, signals reach it.
    Active,
    /// Stopped by an operator: nothing fires, timers keep running (docs/timing.md, "A target already in the past"), an opt-out
    /// still exits it.
    Paused,
    /// Reached an `end` (or an unwired branch, or an operator completed it).
    Completed,
    /// Left early: `exit_on`, an opt-out, or an operator.
    Exited,
    /// Could not go on (a computed wait beyond `max_wait`, an unusable flow); `reason` says why.
    Failed,
}

impl Status {
    /// The wire spelling (`active`, …).
    pub const fn as_str(self) -> &'static str {
        match self {
            Status::Active => "active",
            Status::Paused => "paused",
            Status::Completed => "completed",
            Status::Exited => "exited",
            Status::Failed => "failed",
        }
    }

    /// Completed, exited or failed: nothing moves it any more.
    pub fn is_finished(self) -> bool {
        matches!(self, Status::Completed | Status::Exited | Status::Failed)
    }
}

/// Which immutable flow version the enrollment runs (a new version never changes it).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct FlowRef {
    /// The flow's id (or name) in storage.
    pub id: String,
    /// The immutable version.
    pub version: u32,
}

/// What the interpreter knows of the contact: where to send and which zone to use.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ContactView {
    /// The contact's id: `contact.id` in expressions.
    pub id: String,
    /// Where an `email` step sends; without one the step is skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
    /// E.164 (normalized by the contact layer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phone: Option<String>,
    /// The contact's set zone (a docs/timing.md, "Zones" `tz`), when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tz: Option<String>,
    /// The contact's country (ISO 3166-1 alpha-2), for the `contact` holiday calendar.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub country: Option<String>,
    /// Channels the contact opted out of (`email`, `sms`): no more sends there (docs/signals.md, "Kinds of signal and the events they raise").
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub opted_out: BTreeSet<String>,
    /// Free-form CRM attributes (`contact.attributes.*` in expressions).
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub attributes: serde_json::Map<String, serde_json::Value>,
}

/// Why the current run is not moving by itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hold {
    /// `ZONE_UNKNOWN` or `NO_OPENING` (or the timing core's code when the sender's zone or the
    /// contact's phone no longer parses).
    pub code: Code,
    /// What to fix, shown in the journey and on the held dispatch.
    pub message: String,
}

/// Where a task run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskPhase {
    /// Scheduled inside the windows, not yet created.
    Scheduled,
    /// Created (listed by `ListTasks`), waiting for its outcome or its timeout.
    Open,
}

/// One entry into a step (docs/service.md, "The journey": "each step entry is a run").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Run {
    /// Sequence number within the enrollment, from 1. With the enrollment id it is the
    /// idempotency key of a dispatch and the jitter seed, so it never repeats.
    pub id: u64,
    /// The step's key in the flow.
    pub step: String,
    /// The step's `type` (`wait`, `wait_for`, `email`, …), kept so a run can be fired without
    /// looking its step up first.
    #[serde(rename = "type")]
    pub step_type: StepKind,
    /// When the step was entered: where its durations count from.
    #[serde(with = "crate::engine::instant::stored")]
    pub entered: DateTime<Utc>,
    /// The wake time of a `wait`; the timeout deadline of a `wait_for` or an open task.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "crate::engine::instant::stored_opt"
    )]
    pub until: Option<DateTime<Utc>>,
    /// When an outreach step goes or a task is created, fixed at entry (docs/timing.md, "Fixed once").
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "crate::engine::instant::stored_opt"
    )]
    pub scheduled: Option<DateTime<Utc>>,
    /// The next opening an execution-time deferral moved the step to (docs/timing.md, "Send windows" step 4).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "crate::engine::instant::stored_opt"
    )]
    pub deferred_to: Option<DateTime<Utc>>,
    /// The events a `wait_for` waits for.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<String>,
    /// For tasks: scheduled or open.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskPhase>,
    /// A task outcome reported while the enrollment was paused, applied at resume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_outcome: Option<String>,
    /// Set when the step is held (`ZONE_UNKNOWN`, `NO_OPENING`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hold: Option<Hold>,
    /// Entered by an operator's `MoveTo`: first in line when capacity is short (docs/capacity.md).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub moved: bool,
    /// Why the last execution-time deferral happened, when a cap held the step (docs/capacity.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deferred_reason: Option<crate::capacity::CapReason>,
    /// Why `scheduled` is later than `entered`: `send_window`, `holiday`, `quiet_hours`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_reason: Option<ClosedBy>,
    /// The quiet-hours place rule that decided `scheduled` (`US-FL`), when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// What the flow's `contact` holidays were for this contact: its country (`DE`), or why
    /// there were none (docs/timing.md, "Holiday calendars and quiet hours"). Absent when the flow does not list `contact`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contact_holidays: Option<String>,
    /// A `fetch` run: the request, fixed at entry, and the attempt in flight or next. While
    /// a retry waits, `scheduled` is when it goes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// Boxed: a run is moved several times a step, and most runs fetch nothing.
    pub fetch: Option<Box<crate::engine::outside::FetchCall>>,
    /// An `approval` run: when its link stops working (never after `until`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "crate::engine::instant::stored_opt"
    )]
    pub link_expires: Option<DateTime<Utc>>,
}

impl Run {
    /// The instant this run wants to be woken at, or `None` when only a signal, an outcome or
    /// an operator can move it.
    pub fn wake_at(&self) -> Option<DateTime<Utc>> {
        if self.hold.is_some() {
            return None;
        }
        match self.task {
            Some(TaskPhase::Open) => self.until,
            Some(TaskPhase::Scheduled) => self.deferred_to.or(self.scheduled),
            None => self.deferred_to.or(self.scheduled).or(self.until),
        }
    }
}

/// Everything about one enrollment the interpreter reads and writes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnrollmentState {
    /// The enrollment id: part of every idempotency key, Message-ID and jitter seed.
    pub id: String,
    /// Where the enrollment is in its life (docs/service.md, "Enrollments").
    pub status: Status,
    /// The flow version it runs, fixed at enrollment.
    pub flow: FlowRef,
    /// The contact as last seen: addresses, zone, opt-outs, attributes.
    pub contact: ContactView,
    /// The sender's zone (a docs/timing.md, "Zones" `tz`): the fallback zone for arithmetic and windows.
    pub sender_tz: String,
    /// The enrollment input, checked against the flow's `input` schema at enrollment.
    #[serde(default)]
    pub input: serde_json::Value,
    /// The current run; `None` before start and after the enrollment finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<Run>,
    /// The planner's key: when to call [`crate::engine::step`] with `Wake`. `None` while
    /// paused, waiting without a deadline, held, or finished.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "crate::engine::instant::stored_opt"
    )]
    pub next_run_at: Option<DateTime<Utc>>,
    /// Signals no step was waiting for (docs/signals.md, "Routing" rule 4).
    #[serde(default, skip_serializing_if = "SignalBuffer::is_empty")]
    pub buffer: SignalBuffer,
    /// The last run id handed out.
    #[serde(default)]
    pub last_run_id: u64,
    /// The `end` step's outcome, once completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
    /// Why it exited (`opt_out:sms`, `exit_on:meeting_booked`, an operator's reason) or failed
    /// (`WAIT_EXCEEDS_LIMIT: …`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The signal that ended the last `wait_for` run, with its payload (capped): what the wait
    /// completed with (docs/signals.md, "Custom events").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// Boxed: the state is moved several times a step, and this is its largest field.
    pub woken: Option<Box<crate::engine::effect::Woken>>,
    /// Set while `paused` by an out-of-office notice (docs/signals.md, "Inbox signals"): it resumes by itself at
    /// `until` (the planner's `next_run_at`, a row, not a process timer) and still listens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub away: Option<Away>,
    /// The channels this enrollment has sent on (or created a task on): a step on one of them
    /// is a follow-up, ahead of first touches when capacity is short (docs/capacity.md).
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub sent: BTreeSet<crate::timing::Channel>,
    /// The last `fetch` response (docs/flows.md, "fetch"), read by later expressions and `branch`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fetch: Option<crate::engine::outside::FetchResponse>,
    /// The variant given in each step experiment it met (by the experiment's key): kept at
    /// every later step of the experiment, even once that variant stops taking new contacts.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub variants: BTreeMap<String, String>,
}

/// What the writer of a step still reads of the state the step started from, taken before the
/// interpreter is given that state ([`crate::engine::step_owned`]): copying the whole state
/// for it was a tenth of a planner step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Before {
    /// The status it had.
    pub status: Status,
    /// The run it was at: its id, step and task phase.
    pub run: Option<(u64, String, Option<TaskPhase>)>,
}

impl Before {
    /// What a writer reads of `state` once it has stepped.
    pub fn of(state: &EnrollmentState) -> Before {
        Before {
            status: state.status,
            run: state.run.as_ref().map(|r| (r.id, r.step.clone(), r.task)),
        }
    }

    /// The step it was at.
    pub fn step(&self) -> Option<&str> {
        self.run.as_ref().map(|(_, step, _)| step.as_str())
    }
}

/// An out-of-office pause.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Away {
    /// When it resumes by itself.
    #[serde(with = "crate::engine::instant::stored")]
    pub until: DateTime<Utc>,
    /// The out-of-office signal that paused it.
    pub signal: String,
}

impl EnrollmentState {
    /// A new enrollment, not started yet: feed it [`crate::engine::Input::Start`].
    pub fn new(
        id: impl Into<String>,
        flow: FlowRef,
        contact: ContactView,
        sender_tz: impl Into<String>,
        input: serde_json::Value,
    ) -> Self {
        EnrollmentState {
            id: id.into(),
            status: Status::Active,
            flow,
            contact,
            sender_tz: sender_tz.into(),
            input,
            run: None,
            next_run_at: None,
            buffer: SignalBuffer::new(),
            last_run_id: 0,
            outcome: None,
            reason: None,
            woken: None,
            away: None,
            sent: BTreeSet::new(),
            fetch: None,
            variants: BTreeMap::new(),
        }
    }
}
