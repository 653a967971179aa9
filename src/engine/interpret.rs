//! The step interpreter: `(state, input, now) -> (state, effects)`.
//!
//! [`step`] is a pure function. It never reads the clock (`now` is a parameter), never touches
//! storage and never draws an unseeded random number, so the planner, a retry on another
//! replica and `Simulate` all get the same answer for the same arguments (docs/timing.md, "Fixed once").
//!
//! One call runs through every step that takes no time: an `end`, a `wait` whose target is
//! already past, an outreach step whose time is now, a `wait_for` that consumes a buffered
//! signal. It stops at the first step that has to wait, with `next_run_at` set for the planner.
//!
//! Decisions the documented contract leaves open, written down here:
//! - A step held with `ZONE_UNKNOWN` or `NO_OPENING` keeps the enrollment `active` with the run
//!   open and no `next_run_at`: nothing is sent, the journey shows why, and the step is planned
//!   again when the contact changes ([`Input::ContactChanged`]) or an operator moves/exits it.
//!   Failing the enrollment instead would lose it over a fixable contact record.
//! - An outreach step to a channel the contact opted out of, or with no address for it, is
//!   skipped (run branch `skipped`, journey `skipped`) and the flow goes on.
//! - Tasks get no jitter (jitter is for outreach, docs/flows.md); a task's timeout counts from when
//!   the task is created, so a task due Monday is not half timed out by the weekend.
//! - A task outcome reported while paused is kept on the run and applied at resume.
//! - A task outcome raises its events (docs/signals.md, "Kinds of signal and the events they raise") for the contact's other enrollments
//!   ([`Effect::RaiseSignal`]); in this enrollment it takes its own branch, except that an
//!   event in `exit_on` exits (rule 2 applies to the enrollment the outcome came from too).

use crate::capacity::{domain_of, Book, Caps, Entry as CapEntry};
use crate::code::Code;
use crate::engine::effect::{
    message_id, reading_of, Dispatch, Effect, JourneyEntry, PauseReason, RecordedPayload,
    SignalEffect, Task, Woken,
};
use crate::engine::input::{Input, Signal, SignalFacts};
use crate::engine::outside::{Decision, FetchAnswer, FetchCall, FetchRequest, FetchResponse};
use crate::engine::seed::jitter_seed;
use crate::engine::state::{Away, EnrollmentState, Hold, Run, Status, TaskPhase};
use crate::flow::expr::{
    eval, eval_instant, eval_millis, ContactView as ExprContact, ExprError, SignalView,
    Value as ExprValue,
};
use crate::flow::model::{
    Action, Deadline, DurationSlot, Operand, Step, StepKind, Target, UntilSlot, OUTCOME_ACCEPTED,
    OUTCOME_REPLIED,
};
use crate::flow::Flow;
use crate::routing::{route, BufferedSignal, Dropped, Inbox, Route, Waiting};
use crate::timing::{
    explain_opening, is_open, phone_zones, resolve_zones_with, schedule_explained, Channel,
    ContactCalendar, Duration, Holidays, QuietHours, Recipient, ResolvedZones, TimingError, Zone,
};
use chrono::{DateTime, Utc};
use std::borrow::Cow;

/// At most this many steps are entered in one call. Validation refuses cycles that spin without
/// time passing and paths longer than this with no step that lets time pass
/// (`TRANSITION_TOO_LONG`), but a loop through a `wait` whose target is already past, or through
/// a `wait_for` consuming up to 1,000 buffered signals, still runs in one call; beyond this the
/// enrollment fails with [`Code::LoopGuard`] instead of spinning, and nothing of that call but the
/// failure is kept (docs/service.md, "Errors"). The number lives with the validator, below the engine.
pub use crate::flow::LOOP_GUARD;

/// What the interpreter needs besides the state and the flow: account settings.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ctx {
    /// Step-experiment variants taking no new contacts, by flow id.
    pub stopped: std::sync::Arc<std::collections::HashMap<String, super::variant::Stopped>>,
    /// The account's `max_wait` (docs/flows.md, "Plan limits"): a computed wait beyond it fails the enrollment;
    /// a `wait_for` without a timeout gets it as its timeout.
    pub max_wait: Option<Duration>,
    /// Mixed into every jitter seed: a simulation's `seed`, 0 in production.
    pub seed: u64,
    /// The account's quiet-hours policy for SMS and calls (docs/timing.md, "Holiday calendars and quiet hours"); federal by default.
    pub quiet_hours: QuietHours,
}

/// Whether the interpreter runs every step of `flow`. Every step type the validator accepts
/// runs (approval, fetch and branch included), so this refuses nothing today; the enroll path
/// and `Simulate` still ask, so a future step type can be refused in one place.
pub fn enrollable(_flow: &Flow) -> Result<(), String> {
    Ok(())
}

/// What the interpreter knows of the sender's capacity (docs/capacity.md) when a step would go.
#[derive(Debug, Clone, Copy)]
pub enum CapacityView<'a> {
    /// The sender has no caps: nothing is checked or reserved.
    Unlimited,
    /// The sender has these caps, but this writer holds no ledger (enroll, a signal, an
    /// operator): a capped step that would go now is handed to the planner instead (its
    /// `next_run_at` becomes now), which reserves under the sender's lock. No journey entry:
    /// nothing was deferred.
    HandOff(&'a Caps),
    /// The sender's caps and ledger, read under its lock: a step that fits reserves its slot
    /// (on the dispatch or task), one that does not is deferred to the earliest instant at
    /// which it fits and every window is open.
    Ledger(&'a Book),
}

impl CapacityView<'_> {
    fn caps(&self) -> Option<&Caps> {
        match self {
            CapacityView::Unlimited => None,
            CapacityView::HandOff(c) => Some(c),
            CapacityView::Ledger(b) => Some(&b.caps),
        }
    }
}

/// Applies `input` at `now` and returns the new state and what to write or send, in order.
/// The sender has no caps; [`step_with`] says what it has.
pub fn step(
    state: &EnrollmentState,
    flow: &Flow,
    input: Input,
    now: DateTime<Utc>,
    ctx: &Ctx,
) -> (EnrollmentState, Vec<Effect>) {
    step_with(state, flow, input, now, ctx, CapacityView::Unlimited)
}

/// [`step`] with the sender's capacity (docs/capacity.md).
pub fn step_with(
    state: &EnrollmentState,
    flow: &Flow,
    input: Input,
    now: DateTime<Utc>,
    ctx: &Ctx,
    cap: CapacityView<'_>,
) -> (EnrollmentState, Vec<Effect>) {
    let effects = Vec::with_capacity(EFFECTS);
    let (after, effects) = step_owned(
        Box::new(state.clone()),
        || Box::new(state.clone()),
        flow,
        input,
        now,
        ctx,
        cap,
        effects,
    );
    (*after, effects)
}

/// Room for a planner step's effects (a run closed, one opened, a dispatch, …): growing the
/// vector of large values was a few percent of a step.
const EFFECTS: usize = 8;

/// [`step_with`] on a state the caller gives up (the stored writers decode one for the step
/// alone): the interpreter works on it in place instead of on a copy, a tenth of a planner
/// step. The state is boxed so that handing it through the step moves a pointer, not its
/// 760 bytes (those moves were 2 % of a planner step). `original` gives the state again, as
/// it was, for the replay after a failure (rare). The effects are pushed onto `effects`
/// (empty): a caller stepping many enrollments passes the same vector back each time, so its
/// room is allocated once, not once a step.
#[allow(clippy::too_many_arguments)]
pub fn step_owned(
    state: Box<EnrollmentState>,
    original: impl FnOnce() -> Box<EnrollmentState>,
    flow: &Flow,
    input: Input,
    now: DateTime<Utc>,
    ctx: &Ctx,
    cap: CapacityView<'_>,
    mut effects: Vec<Effect>,
) -> (Box<EnrollmentState>, Vec<Effect>) {
    effects.clear();
    let mut m = Machine::new(state, flow, ctx, now, cap, effects);
    m.expire_buffer();
    m.handle(input.clone());
    m.drive();
    if let Some(failure) = m.failure.take() {
        // docs/service.md, "Errors": a transition commits every effect or none. What the input itself did (a
        // signal closing its wait, an operator's move) is replayed; every step entered after it
        // is dropped with its dispatches and tasks, and the enrollment fails where it stood.
        let mut effects = std::mem::take(&mut m.fx);
        effects.clear();
        m = Machine::new(original(), flow, ctx, now, cap, effects);
        m.expire_buffer();
        m.handle(input);
        m.record_failure(failure);
    }
    m.st.next_run_at = match (&m.st.status, &m.st.run) {
        (Status::Active, Some(run)) => run.wake_at(),
        // An out-of-office pause resumes by itself: its end is the planner's timer.
        (Status::Paused, _) => m.st.away.as_ref().map(|a| a.until),
        _ => None,
    };
    (m.st, m.fx)
}

/// Why the enrollment fails.
struct Failure {
    code: Code,
    message: String,
    /// The step that could not be run, when one could not.
    step: Option<String>,
}

impl Failure {
    fn new(code: Code, message: impl Into<String>) -> Failure {
        Failure {
            code,
            message: message.into(),
            step: None,
        }
    }
}

impl From<TimingError> for Failure {
    /// A timing refusal keeps its own code; the message is its text and hint (the code is
    /// beside it, not repeated in it).
    fn from(e: TimingError) -> Failure {
        Failure::new(e.code, e.message())
    }
}

/// The current run as the methods that fire it read it, copied out of the state they change
/// meanwhile: its id, its step (the flow's own name of it, borrowed), its type and task phase.
/// Copying the whole [`Run`] instead was a tenth of the interpreter.
struct Firing<'a> {
    id: u64,
    step: Cow<'a, str>,
    step_type: StepKind,
    task: Option<TaskPhase>,
}

struct Machine<'a> {
    st: Box<EnrollmentState>,
    fx: Vec<Effect>,
    flow: &'a Flow,
    ctx: &'a Ctx,
    now: DateTime<Utc>,
    /// A step to enter next (the loop in [`Machine::drive`] enters it): the flow's own name
    /// of it, borrowed (every step entered is one of the flow's).
    pending: Option<&'a str>,
    /// Set by [`Machine::fail`]: the transition failed, and [`step`] replays it without the
    /// steps it entered.
    failure: Option<Failure>,
    /// The step being entered or fired, named by a failure: borrowed from the flow, so naming
    /// it costs nothing unless a failure does.
    current: Option<Cow<'a, str>>,
    /// The sender's capacity.
    cap: CapacityView<'a>,
    /// The next step entered comes from an operator's `MoveTo`.
    moved: bool,
    /// A capped step was handed to the planner: it is due now, but not in this call.
    handed_off: bool,
    /// The zones of the channel last resolved ([`Machine::zones`]): a step asks for them
    /// several times (its wait's zone, its send's plan and gate) with the same contact.
    /// Cleared when the contact changes; the sender's zone, the flow and the context do not.
    zones_memo: std::cell::RefCell<Option<(Channel, ResolvedZones)>>,
}

impl<'a> Machine<'a> {
    fn new(
        state: Box<EnrollmentState>,
        flow: &'a Flow,
        ctx: &'a Ctx,
        now: DateTime<Utc>,
        cap: CapacityView<'a>,
        fx: Vec<Effect>,
    ) -> Machine<'a> {
        Machine {
            st: state,
            fx,
            flow,
            ctx,
            now,
            pending: None,
            failure: None,
            current: None,
            cap,
            moved: false,
            handed_off: false,
            zones_memo: std::cell::RefCell::new(None),
        }
    }

    /// The contact as it is from now on (the resolved zones go with the old one).
    fn set_contact(&mut self, contact: crate::engine::state::ContactView) {
        self.st.contact = contact;
        *self.zones_memo.get_mut() = None;
    }

    fn journey(&mut self, entry: JourneyEntry) {
        self.fx.push(Effect::Journey(entry));
    }

    fn reject(&mut self, input: &str, reason: impl Into<String>) {
        self.journey(JourneyEntry::Rejected {
            input: input.to_string(),
            reason: reason.into(),
        });
    }

    fn expire_buffer(&mut self) {
        for s in self.st.buffer.expire(self.now) {
            let at = s.expires_at();
            self.journey(JourneyEntry::Signal {
                signal: s.id,
                intent: reading_of(&s.payload),
                effect: SignalEffect::Expired {
                    why: Dropped::Expired,
                    at,
                },
            });
        }
    }

    // ----- inputs -------------------------------------------------------------------------

    fn handle(&mut self, input: Input) {
        if self.st.status.is_finished() {
            match input {
                // A finished enrollment is not reached by signals; a late wake is harmless.
                Input::Wake | Input::Signal(_) | Input::SlotFreed { .. } => {}
                Input::ContactChanged(c) => self.set_contact(c),
                other => {
                    let name = input_name(&other);
                    let status = self.st.status.as_str();
                    self.reject(name, format!("the enrollment is {status}"));
                }
            }
            return;
        }
        match input {
            Input::Start => {
                if self.st.last_run_id != 0 || self.st.run.is_some() {
                    self.reject("start", "the enrollment has already started");
                    return;
                }
                let flow: &'a Flow = self.flow;
                self.journey(JourneyEntry::Enrolled {
                    step: flow.start.clone(),
                });
                self.pending = Some(flow.start.as_str());
            }
            Input::Wake => {
                let back = self.st.away.as_ref().is_some_and(|a| a.until <= self.now);
                if self.st.status == Status::Paused && back {
                    self.end_away();
                }
            }
            Input::Signal(s) => self.signal(s),
            Input::SlotFreed { channel } => {
                // Due again now: `drive` fires it, and the capacity check decides afresh.
                let now = self.now;
                if let Some(r) = self.st.run.as_mut() {
                    let waits_for_it = r.deferred_reason.is_some()
                        && channel_of(r.step_type) == channel
                        && r.deferred_to.is_some_and(|t| t > now);
                    if waits_for_it && self.st.status == Status::Active {
                        r.deferred_to = Some(now);
                    }
                }
            }
            Input::TaskOutcome { run, outcome } => self.task_outcome(run, outcome),
            Input::Pause => {
                if self.st.status == Status::Paused && self.st.away.is_none() {
                    self.reject("pause", "the enrollment is already paused");
                } else {
                    // An operator's pause replaces an out-of-office one: it ends only by Resume.
                    self.st.away = None;
                    self.st.status = Status::Paused;
                    self.journey(JourneyEntry::Paused {
                        reason: None,
                        until: None,
                        note: None,
                    });
                }
            }
            Input::Resume => {
                if self.st.status != Status::Paused {
                    self.reject("resume", "the enrollment is not paused");
                    return;
                }
                self.st.away = None;
                self.st.status = Status::Active;
                self.journey(JourneyEntry::Resumed { reason: None });
                let pending = self.st.run.as_mut().and_then(|r| r.pending_outcome.take());
                let fetch = self
                    .st
                    .run
                    .as_ref()
                    .is_some_and(|r| r.step_type == StepKind::Fetch);
                match pending {
                    // A fetch answered while paused: its branch was kept for now.
                    Some(branch) if fetch => self.take_branch(&branch, None),
                    Some(outcome) => self.apply_outcome(outcome),
                    None => {}
                }
            }
            Input::Exit { reason } => self.exit(reason, None),
            Input::MoveTo { step } => {
                let flow: &'a Flow = self.flow;
                let Some((target, _)) = flow.steps.get_key_value(step.as_str()) else {
                    self.reject(
                        "move_to",
                        format!(
                            "the flow has no step {}; name one of its `steps` keys",
                            crate::quote::quote(&step)
                        ),
                    );
                    return;
                };
                let from = self.st.run.as_ref().map(|r| r.step.clone());
                self.close_run(Some("moved"), None);
                self.journey(JourneyEntry::Moved { from, to: step });
                self.moved = true;
                self.pending = Some(target.as_str());
            }
            Input::Migrate { to_version, step } => self.migrate(to_version, step),
            Input::Complete { outcome } => {
                self.close_run(Some("completed"), None);
                self.complete(outcome);
            }
            Input::FetchAnswer {
                run,
                attempt,
                answer,
            } => self.fetch_answer(run, attempt, answer),
            Input::Decide {
                run,
                decision,
                input,
                by,
            } => self.decide(run, decision, input, by),
            Input::ContactChanged(c) => {
                // Only the zone and the number decide a hold (docs/timing.md, "Send windows"): another change (an
                // email, an attribute) leaves a held step as it is, without a second `held`.
                let zone_changed = c.tz != self.st.contact.tz || c.phone != self.st.contact.phone;
                self.set_contact(c);
                let held = self.st.run.as_ref().is_some_and(|r| r.hold.is_some());
                if held && zone_changed {
                    self.replan_held();
                }
            }
        }
    }

    /// docs/signals.md, "Routing" (and docs/signals.md, "Inbox signals" for inbox signals), in order, for this enrollment.
    fn signal(&mut self, mut s: Signal) {
        if let Some(channel) = &s.opt_out {
            self.st.contact.opted_out.insert(channel.clone());
        }
        // `START`/`UNSTOP`/`YES` end an opt-out (docs/signals.md, "Inbox signals") only where there is one: from a
        // contact who never opted out of the channel, "Yes" answers the sequence, a reply.
        if let Some(Inbox::OptIn { channel }) = &s.inbox {
            if !self.st.contact.opted_out.contains(channel) {
                s.raises = vec!["reply".into(), format!("reply:{channel}")];
                s.inbox = None;
            }
        }
        match &s.inbox {
            Some(Inbox::OptIn { channel }) => {
                self.st.contact.opted_out.remove(channel);
            }
            // A hard bounce blocks email to the address (docs/signals.md, "Inbox signals").
            Some(Inbox::HardBounce) | Some(Inbox::Complaint) => {
                self.st.contact.opted_out.insert("email".to_string());
            }
            _ => {}
        }
        let route = {
            let listed = match &self.st.run {
                Some(run) if run.step_type == StepKind::WaitFor => Some(run.events.as_slice()),
                _ => None,
            };
            let waiting = match (&self.st.status, listed) {
                (Status::Paused, l) if self.st.away.is_some() => Waiting::Away(l),
                (Status::Paused, _) => Waiting::Paused,
                (_, Some(l)) => Waiting::ForEvents(l),
                _ => Waiting::NotWaiting,
            };
            let exit_on: Vec<String> = self
                .flow
                .settings
                .exit_on
                .iter()
                .map(|e| e.as_str().to_string())
                .collect();
            route(
                waiting,
                &exit_on,
                &s.raises,
                s.opt_out.as_deref(),
                s.inbox.as_ref(),
                self.flow.settings.out_of_office.action,
            )
        };
        self.apply_route(route, s);
    }

    fn apply_route(&mut self, route: Route, s: Signal) {
        match route {
            Route::Return(inner) => {
                self.end_away();
                self.apply_route(*inner, s);
            }
            Route::Noted(what) => self.journey(JourneyEntry::Signal {
                signal: s.id,
                intent: reading_of(&s.payload),
                effect: SignalEffect::Noted { what },
            }),
            Route::PauseAway => self.pause_away(&s),
            Route::IgnoredPaused => self.journey(JourneyEntry::Signal {
                signal: s.id,
                intent: reading_of(&s.payload),
                effect: SignalEffect::IgnoredPaused,
            }),
            Route::Exit(cause) => {
                let reason = cause.reason();
                self.journey(JourneyEntry::Signal {
                    signal: s.id.clone(),
                    intent: reading_of(&s.payload),
                    effect: SignalEffect::Exited {
                        reason: reason.clone(),
                    },
                });
                self.exit(reason, Some(s.id));
            }
            Route::Wake { event } => {
                let run = self.st.run.as_ref().map(|r| r.id).unwrap_or_default();
                let payload = RecordedPayload::of(&s.payload);
                self.journey(JourneyEntry::Signal {
                    signal: s.id.clone(),
                    intent: reading_of(&s.payload),
                    effect: SignalEffect::Woke {
                        run,
                        branch: event.clone(),
                        payload: payload.clone(),
                    },
                });
                self.woken(&s.id, &event, payload, s.facts);
                self.take_branch(&event, Some(s.id));
            }
            Route::Buffer => {
                self.journey(JourneyEntry::Signal {
                    signal: s.id.clone(),
                    intent: reading_of(&s.payload),
                    effect: SignalEffect::Buffered {
                        payload: RecordedPayload::of(&s.payload),
                    },
                });
                let dropped = self.st.buffer.push(BufferedSignal {
                    id: s.id,
                    raises: s.raises,
                    payload: s.payload,
                    at: self.now,
                    facts: s.facts,
                });
                for d in dropped {
                    self.journey(JourneyEntry::Signal {
                        signal: d.id,
                        intent: reading_of(&d.payload),
                        effect: SignalEffect::Expired {
                            why: Dropped::BufferFull,
                            at: self.now,
                        },
                    });
                }
            }
        }
    }

    /// The out-of-office pause ends (its `until` came, or a person's signal arrived): the
    /// enrollment is active again, and a target that passed meanwhile fires now (docs/timing.md, "A target already in the past").
    fn end_away(&mut self) {
        self.st.away = None;
        self.st.status = Status::Active;
        self.journey(JourneyEntry::Resumed {
            reason: Some(PauseReason::OutOfOffice),
        });
    }

    /// docs/signals.md, "Inbox signals": paused until the return date's start in the contact's zone plus `extra` (or
    /// `default_pause` without a usable date), both from the message's arrival, never past
    /// `max_pause`.
    fn pause_away(&mut self, s: &Signal) {
        let settings = &self.flow.settings.out_of_office;
        let holidays = &self.flow.settings.holidays;
        let zone = match self.arithmetic_zone() {
            Ok(z) => z,
            Err(_) => crate::timing::Zone::parse("UTC").expect("UTC parses"),
        };
        let (return_date, note) = match &s.inbox {
            Some(Inbox::OutOfOffice { return_date, note }) => (*return_date, note.clone()),
            _ => (None, None),
        };
        let latest = settings.max_pause.add_to(self.now, &zone, holidays);
        let default = || settings.default_pause.add_to(self.now, &zone, holidays);
        let (mut until, mut note) = match return_date {
            Some(day) => {
                let start = zone.to_instant(day.and_hms_opt(0, 0, 0).expect("midnight exists"));
                let back = settings.extra.add_to(start, &zone, holidays);
                if back <= self.now {
                    (
                        default(),
                        format!("the return date {day} has passed; default_pause applies"),
                    )
                } else {
                    (back, format!("returns {day}; extra added"))
                }
            }
            None => (
                default(),
                match note {
                    Some(n) => format!("{n}; default_pause applies"),
                    None => "no return date stated; default_pause applies".to_string(),
                },
            ),
        };
        if until > latest {
            until = latest;
            note.push_str("; capped at max_pause");
        }
        self.journey(JourneyEntry::Signal {
            signal: s.id.clone(),
            intent: reading_of(&s.payload),
            effect: SignalEffect::Paused { until },
        });
        self.st.status = Status::Paused;
        self.st.away = Some(Away {
            until,
            signal: s.id.clone(),
        });
        self.journey(JourneyEntry::Paused {
            reason: Some(PauseReason::OutOfOffice),
            until: Some(until),
            note: Some(note),
        });
    }

    fn task_outcome(&mut self, run_id: u64, outcome: String) {
        let open = self
            .st
            .run
            .as_ref()
            .is_some_and(|r| r.id == run_id && r.task == Some(TaskPhase::Open));
        if !open {
            self.reject(
                "task_outcome",
                format!("run {run_id} is not an open task of this enrollment"),
            );
            return;
        }
        let step = self.current_step();
        if let Some(Step {
            action:
                Action::Call(crate::flow::model::CallParams { task: p, .. })
                | Action::LinkedinConnect(p)
                | Action::LinkedinMessage(p),
            ..
        }) = step
        {
            if let Some(allowed) = &p.outcomes {
                if !allowed.contains(&outcome) {
                    self.reject(
                        "task_outcome",
                        format!(
                            "{} is not an outcome of this task; use one of {}",
                            crate::quote::quote(&outcome),
                            allowed.join(", ")
                        ),
                    );
                    return;
                }
            }
        }
        if self.st.status == Status::Paused {
            if let Some(r) = self.st.run.as_mut() {
                r.pending_outcome = Some(outcome);
            }
            return;
        }
        self.apply_outcome(outcome);
    }

    /// A task's outcome: journey, the events it raises (docs/signals.md, "Kinds of signal and the events they raise"), then its branch.
    fn apply_outcome(&mut self, outcome: String) {
        let Some(run) = self.st.run.clone() else {
            return;
        };
        let Some(step) = self.flow.step(&run.step) else {
            return;
        };
        let raises: Vec<String> = match &step.action {
            Action::Call(p) if p.connected_outcomes.contains(&outcome) => {
                vec!["call_connected".into(), "reply".into()]
            }
            Action::LinkedinMessage(_) if outcome == OUTCOME_REPLIED => {
                vec!["reply".into(), "reply:linkedin".into()]
            }
            Action::LinkedinConnect(_) if outcome == OUTCOME_ACCEPTED => {
                vec!["connection_accepted".into()]
            }
            _ => Vec::new(),
        };
        self.journey(JourneyEntry::TaskOutcome {
            run: run.id,
            step: run.step.clone(),
            outcome: outcome.clone(),
        });
        if !raises.is_empty() {
            self.fx.push(Effect::RaiseSignal {
                run: run.id,
                raises: raises.clone(),
            });
        }
        let exit_event = raises.iter().find(|r| {
            self.flow
                .settings
                .exit_on
                .iter()
                .any(|e| e.as_str() == r.as_str())
        });
        if let Some(event) = exit_event {
            let reason = format!("exit_on:{event}");
            self.exit(reason, None);
            return;
        }
        let branch = if step.next(&outcome).is_some() {
            outcome
        } else {
            "then".to_string()
        };
        self.take_branch(&branch, None);
    }

    // ----- steps that reach outside ------------------------------------------------------

    /// docs/flows.md, "fetch": the request with its expressions evaluated, fixed at entry. An expression
    /// that cannot be evaluated, or a timeout that resolves outside (0, 60s], is an error: no
    /// request is sent, so it is never reported as a timeout.
    fn resolve_fetch(&self, p: &crate::flow::model::FetchParams) -> Result<FetchCall, String> {
        use crate::flow::model::{FETCH_TIMEOUT_DEFAULT_MS, FETCH_TIMEOUT_MAX_MS};
        let contact = self.expr_contact();
        let timeout_ms = match &p.timeout {
            None => FETCH_TIMEOUT_DEFAULT_MS,
            Some(t) => match &t.duration {
                DurationSlot::Literal(d) => {
                    let zone = match &t.tz {
                        Some(z) => *z,
                        None => self.arithmetic_zone().map_err(|f| f.message)?,
                    };
                    (d.add_to(self.now, &zone, &self.flow.settings.holidays) - self.now)
                        .num_milliseconds()
                }
                DurationSlot::Expr(e) => eval_millis(e, &self.st.input, &contact)
                    .map_err(|e| format!("the timeout: {e}"))?,
            },
        };
        if timeout_ms <= 0 || timeout_ms > FETCH_TIMEOUT_MAX_MS {
            return Err(format!(
                "the timeout resolved to {timeout_ms} ms; a fetch timeout is more than 0 and at                  most 60s, so no request was sent"
            ));
        }
        let mut url = url::Url::parse(&p.url).map_err(|e| format!("the url: {e}"))?;
        if !p.query.is_empty() {
            let mut pairs = url.query_pairs_mut();
            for (name, v) in &p.query {
                pairs.append_pair(name, &operand_text(v, &self.st.input, &contact, name)?);
            }
        }
        let mut headers = std::collections::BTreeMap::new();
        for (name, v) in &p.headers {
            let text = operand_text(v, &self.st.input, &contact, name)?;
            if text.chars().any(|c| c.is_control()) {
                return Err(format!(
                    "header {name} evaluated to a value with a line break"
                ));
            }
            headers.insert(name.clone(), text);
        }
        let body = match &p.body {
            Some(b) => Some(body_value(b, &self.st.input, &contact)?),
            None => None,
        };
        Ok(FetchCall {
            method: p.method.as_str().to_string(),
            url: url.to_string(),
            headers,
            body,
            timeout_ms: timeout_ms as u64,
            response_limit: p.response_limit,
            attempts: p.retry.attempts,
            backoff_ms: p
                .retry
                .backoff
                .max_span(&self.flow.settings.holidays)
                .num_milliseconds()
                .max(0) as u64,
            attempt: 1,
        })
    }

    /// Records the current fetch run's attempt for the outbox (the request is made outside).
    fn request_attempt(&mut self) {
        let Some(run) = self.st.run.as_mut() else {
            return;
        };
        run.scheduled = None;
        let Some(call) = run.fetch.as_deref().cloned() else {
            return;
        };
        let run_id = run.id;
        self.fx.push(Effect::FetchRequested(FetchRequest {
            idempotency_key: format!("{}:{}:{}", self.st.id, run_id, call.attempt),
            run: run_id,
            attempt: call.attempt,
            call,
        }));
    }

    /// docs/flows.md, "fetch": an attempt's answer. `ok` on a 2xx; otherwise a retry while attempts remain
    /// (a refused host or address is not retried), then `error`, or `timeout` when the last
    /// attempt ran out of time.
    fn fetch_answer(&mut self, run_id: u64, attempt: u32, answer: FetchAnswer) {
        let current = self.st.run.as_ref().and_then(|r| {
            (r.id == run_id && r.scheduled.is_none())
                .then_some(r.fetch.as_deref())
                .flatten()
                .filter(|c| c.attempt == attempt)
                .cloned()
        });
        let Some(call) = current else {
            self.reject(
                "fetch_answer",
                format!(
                    "run {run_id} attempt {attempt} is not the fetch this enrollment waits for"
                ),
            );
            return;
        };
        let (status, error, ms) = match &answer {
            FetchAnswer::Response { status, ms, .. } => (Some(*status), None, *ms),
            FetchAnswer::Error { error, ms, .. } => (None, Some(error.clone()), *ms),
            FetchAnswer::Timeout { ms } => (None, Some("timeout".to_string()), *ms),
        };
        self.journey(JourneyEntry::FetchAttempt {
            run: run_id,
            attempt,
            status,
            error,
            ms,
        });
        let retryable = match &answer {
            FetchAnswer::Response { status, body, .. } => {
                self.st.fetch = Some(FetchResponse {
                    status: *status,
                    body: body.clone(),
                });
                if (200..300).contains(status) {
                    return self.fetch_branch("ok");
                }
                true
            }
            FetchAnswer::Error { refused, .. } => !refused,
            FetchAnswer::Timeout { .. } => true,
        };
        if retryable && attempt < call.attempts {
            let next = attempt + 1;
            let seed = jitter_seed(&self.st.id, run_id, self.ctx.seed) ^ u64::from(next);
            let delay = crate::engine::outside::backoff_ms(call.backoff_ms, next, seed);
            if let Some(r) = self.st.run.as_mut() {
                if let Some(c) = r.fetch.as_mut() {
                    c.attempt = next;
                }
                r.scheduled = Some(self.now + chrono::Duration::milliseconds(delay as i64));
            }
            return;
        }
        let timed_out = matches!(answer, FetchAnswer::Timeout { .. });
        let wired = self
            .current_step()
            .is_some_and(|s| s.next("timeout").is_some());
        self.fetch_branch(if timed_out && wired {
            "timeout"
        } else {
            "error"
        });
    }

    /// Takes a fetch's branch, or keeps it for `Resume` while paused.
    fn fetch_branch(&mut self, branch: &str) {
        if self.st.status == Status::Paused {
            if let Some(r) = self.st.run.as_mut() {
                r.pending_outcome = Some(branch.to_string());
            }
            return;
        }
        self.take_branch(branch, None);
    }

    /// docs/flows.md, "approval": a person's decision closes the approval run on its branch.
    fn decide(
        &mut self,
        run: Option<u64>,
        decision: Decision,
        input: serde_json::Value,
        by: Option<String>,
    ) {
        let Some(current) = self.st.run.clone() else {
            return self.reject("decide", "the enrollment is not waiting for an approval");
        };
        if current.step_type != StepKind::Approval || run.is_some_and(|r| r != current.id) {
            return self.reject(
                "decide",
                "the approval was already closed (decided, timed out, exited or moved)",
            );
        }
        if self.st.status == Status::Paused {
            return self.reject("decide", "the enrollment is paused; resume it first");
        }
        if let Some(Action::Approval(p)) = self.current_step().map(|s| &s.action) {
            if let Err(bad) = crate::flow::model::check_input(&p.input, &input) {
                let list: Vec<String> = bad.iter().map(ToString::to_string).collect();
                return self.reject("decide", list.join("; "));
            }
        }
        self.journey(JourneyEntry::Decided {
            run: current.id,
            decision,
            input,
            by,
        });
        self.take_branch(decision.as_str(), None);
    }

    // ----- the loop ------------------------------------------------------------------------

    /// Enters pending steps and fires due runs until something has to wait.
    fn drive(&mut self) {
        let mut entered = 0;
        // Every fire either enters a step or leaves the run not due, so this outer bound is
        // never reached before the guard on entries; it only keeps the loop finite by
        // construction.
        for _ in 0..3 * LOOP_GUARD {
            if let Some(step) = self.pending.take() {
                if entered == LOOP_GUARD {
                    self.pending = Some(step);
                    break;
                }
                entered += 1;
                self.current = Some(Cow::Borrowed(step));
                self.enter(step);
                continue;
            }
            if self.st.status != Status::Active || self.handed_off {
                return;
            }
            let due = self
                .st
                .run
                .as_ref()
                .and_then(Run::wake_at)
                .is_some_and(|t| t <= self.now);
            if !due {
                return;
            }
            let flow: &'a Flow = self.flow;
            self.current =
                self.st
                    .run
                    .as_ref()
                    .map(|r| match flow.steps.get_key_value(r.step.as_str()) {
                        Some((name, _)) => Cow::Borrowed(name.as_str()),
                        None => Cow::Owned(r.step.clone()),
                    });
            self.fire();
        }
        let step = self.pending.take().map(str::to_string);
        self.fail(Failure {
            step,
            ..Failure::new(
                Code::LoopGuard,
                format!(
                    "more than {LOOP_GUARD} steps ran without time passing; put a wait that \
                 lets time pass (or a wait_for with a timeout) in the loop"
                ),
            )
        });
    }

    fn current_step(&self) -> Option<&'a Step> {
        let flow: &'a Flow = self.flow;
        self.st.run.as_ref().and_then(|r| flow.step(&r.step))
    }

    /// Opens a run of `step_id` and plans it (docs/timing.md, "Fixed once": timing is computed here, once).
    fn enter(&mut self, step_id: &'a str) {
        let Some(step) = self.flow.step(step_id) else {
            self.fail(Failure::new(
                Code::UnknownTarget,
                format!("the flow has no step `{step_id}`"),
            ));
            return;
        };
        self.st.last_run_id += 1;
        let mut run = Run {
            id: self.st.last_run_id,
            step: step_id.to_string(),
            step_type: step.kind(),
            entered: self.now,
            until: None,
            scheduled: None,
            deferred_to: None,
            events: Vec::new(),
            task: None,
            pending_outcome: None,
            hold: None,
            moved: std::mem::take(&mut self.moved),
            deferred_reason: None,
            wait_reason: None,
            rule: None,
            contact_holidays: match self.holidays().1 {
                ContactCalendar::NotAsked => None,
                ContactCalendar::Country(code) => Some(code.to_string()),
                ContactCalendar::None(why) => Some(format!("none: {why}")),
            },
            fetch: None,
            link_expires: None,
        };
        match &step.action {
            Action::End(p) => {
                self.open(run);
                self.close_run(None, None);
                self.complete(p.outcome.clone());
            }
            Action::Wait(deadline) => match self.deadline(deadline, self.now) {
                Ok(until) => {
                    run.until = Some(until.max(self.now));
                    self.open(run);
                }
                Err(f) => {
                    self.open(run);
                    self.fail(f);
                }
            },
            Action::WaitFor(p) => {
                run.events = p.events.iter().map(|e| e.as_str().to_string()).collect();
                let until = match &p.timeout {
                    Some(d) => self.deadline(d, self.now).map(Some),
                    None => self.max_wait_deadline(self.now),
                };
                match until {
                    Ok(until) => run.until = until.map(|t| t.max(self.now)),
                    Err(f) => {
                        self.open(run);
                        self.fail(f);
                        return;
                    }
                }
                let events = run.events.clone();
                let run_id = run.id;
                self.open(run);
                self.take_buffered(run_id, &events);
            }
            Action::Email(_) | Action::Sms(_) => {
                let channel = channel_of(step.kind());
                if let Some(reason) = self.unsendable(channel) {
                    let run_id = run.id;
                    let step_name = run.step.clone();
                    self.open(run);
                    self.journey(JourneyEntry::Skipped {
                        run: run_id,
                        step: step_name,
                        reason,
                    });
                    self.take_branch("skipped", None);
                    return;
                }
                self.plan(&mut run, step.kind());
                self.open_planned(run);
            }
            Action::Call(_) | Action::LinkedinConnect(_) | Action::LinkedinMessage(_) => {
                run.task = Some(TaskPhase::Scheduled);
                self.plan(&mut run, step.kind());
                self.open_planned(run);
            }
            Action::Branch(b) => {
                let contact = self.expr_contact();
                let case = b.choose(&self.st.input, &contact).to_string();
                self.open(run);
                self.take_branch(&case, None);
            }
            Action::Approval(p) => {
                let until = match &p.timeout {
                    Some(d) => self.deadline(d, self.now).map(Some),
                    None => self.max_wait_deadline(self.now),
                };
                let until = match until {
                    Ok(u) => u.map(|t| t.max(self.now)),
                    Err(f) => {
                        self.open(run);
                        self.fail(f);
                        return;
                    }
                };
                // docs/flows.md, "approval": `link_ttl` defaults to the timeout (or 7 days), never outlives it.
                let ttl_end = match &p.link_ttl {
                    Some(ttl) => match self.arithmetic_zone() {
                        Ok(zone) => ttl.add_to(self.now, &zone, &self.flow.settings.holidays),
                        Err(f) => {
                            self.open(run);
                            self.fail(f);
                            return;
                        }
                    },
                    None => until.unwrap_or(self.now + chrono::Duration::days(7)),
                };
                let expires_at = until.map_or(ttl_end, |u| ttl_end.min(u));
                run.until = until;
                run.link_expires = Some(expires_at);
                let (run_id, step_name) = (run.id, run.step.clone());
                self.open(run);
                self.fx.push(Effect::ApprovalRequested {
                    run: run_id,
                    step: step_name,
                    title: p.title.clone(),
                    expires_at,
                });
            }
            Action::Fetch(p) => match self.resolve_fetch(p) {
                Ok(call) => {
                    run.fetch = Some(Box::new(call));
                    self.open(run);
                    self.request_attempt();
                }
                Err(message) => {
                    let run_id = run.id;
                    self.open(run);
                    self.journey(JourneyEntry::FetchAttempt {
                        run: run_id,
                        attempt: 1,
                        status: None,
                        error: Some(message),
                        ms: 0,
                    });
                    self.take_branch("error", None);
                }
            },
        }
    }

    fn open(&mut self, run: Run) {
        self.fx.push(Effect::RunOpened(run.clone()));
        self.st.run = Some(run);
    }

    /// Opens an outreach or task run; when it is held, records why.
    fn open_planned(&mut self, run: Run) {
        let held = run
            .hold
            .as_ref()
            .map(|h| (h.clone(), run.id, run.step.clone(), run.step_type));
        self.open(run);
        if let Some((h, id, step, kind)) = held {
            self.record_hold(id, &step, kind, &h);
        }
    }

    /// The journey says why a step is held; an outreach step also shows in the dispatch stream.
    fn record_hold(&mut self, run: u64, step: &str, kind: StepKind, h: &Hold) {
        self.journey(JourneyEntry::Held {
            run,
            step: step.to_string(),
            code: h.code,
            message: h.message.clone(),
        });
        if kind.is_outreach() {
            self.fx.push(Effect::DispatchHeld {
                idempotency_key: self.key(run),
                run,
                channel: channel_of(kind),
                code: h.code,
                message: h.message.clone(),
            });
        }
    }

    /// docs/timing.md, "Send windows" steps 1–3: the scheduled instant of an outreach step or task, or a hold.
    fn plan(&self, run: &mut Run, kind: StepKind) {
        let channel = channel_of(kind);
        let jitter = if kind.is_outreach() {
            self.flow.settings.jitter.as_ref()
        } else {
            None
        };
        let seed = jitter_seed(&self.st.id, run.id, self.ctx.seed);
        let (holidays, _) = self.holidays();
        let window = self.flow.settings.send_window.as_ref();
        let planned = self.zones(channel).and_then(|zones| {
            // And what held the step past its entry, for the journey (the jitter is not a
            // reason): one search of the next opening for both.
            let (at, why) =
                schedule_explained(self.now, window, &zones, channel, &holidays, jitter, seed)
                    .map_err(Failure::from)?;
            Ok((at, Some(why)))
        });
        match planned {
            Ok((t, why)) => {
                run.scheduled = Some(t);
                run.hold = None;
                run.wait_reason = why.as_ref().and_then(|o| o.reason);
                run.rule = why.and_then(|o| o.rule);
            }
            Err(f) => {
                run.hold = Some(Hold {
                    code: f.code,
                    message: f.message,
                })
            }
        }
    }

    /// A held step is planned again from now (the contact changed).
    fn replan_held(&mut self) {
        let Some(mut run) = self.st.run.clone() else {
            return;
        };
        let kind = run.step_type;
        if !(kind.is_outreach() || kind.is_task()) {
            return;
        }
        run.deferred_to = None;
        // The first plan never happened, so this is still the one computation of docs/timing.md, "Fixed once".
        self.plan(&mut run, kind);
        let hold = run.hold.clone();
        let (id, step, scheduled) = (run.id, run.step.clone(), run.scheduled);
        self.st.run = Some(run);
        match (hold, scheduled) {
            (Some(h), _) => self.record_hold(id, &step, kind, &h),
            (None, Some(scheduled)) => self.journey(JourneyEntry::Released {
                run: id,
                step,
                scheduled,
            }),
            (None, None) => {}
        }
    }

    /// The current run is due: a wait wakes, a wait_for or task times out, an outreach step
    /// goes, a task is created.
    fn fire(&mut self) {
        let flow: &'a Flow = self.flow;
        let Some(run) = self.st.run.as_ref().map(|r| Firing {
            id: r.id,
            step: match flow.steps.get_key_value(r.step.as_str()) {
                Some((name, _)) => Cow::Borrowed(name.as_str()),
                None => Cow::Owned(r.step.clone()),
            },
            step_type: r.step_type,
            task: r.task,
        }) else {
            return;
        };
        match run.step_type {
            StepKind::Wait => self.take_branch("then", None),
            StepKind::WaitFor => self.take_branch("timeout", None),
            kind @ (StepKind::Email | StepKind::Sms) => {
                if self.gate(&run, kind) {
                    self.send(&run, kind);
                }
            }
            kind @ (StepKind::Call | StepKind::LinkedinConnect | StepKind::LinkedinMessage) => {
                match run.task {
                    Some(TaskPhase::Open) => self.take_branch("timeout", None),
                    _ => {
                        if self.gate(&run, kind) {
                            self.create_task(&run);
                        }
                    }
                }
            }
            // docs/timing.md, "A target already in the past": an approval whose timeout passed (or is already past) takes `timeout`.
            StepKind::Approval => self.take_branch("timeout", None),
            // A retry's backoff has passed: record the next attempt for the outbox.
            StepKind::Fetch => self.request_attempt(),
            // Never current: they finish when entered.
            StepKind::End | StepKind::Branch => {}
        }
    }

    /// docs/timing.md, "Send windows" step 4: at execution the windows are checked again. True when the step may go
    /// now; otherwise it is deferred to the next opening (or held) and the journey says so.
    fn gate(&mut self, run: &Firing<'a>, kind: StepKind) -> bool {
        let channel = channel_of(kind);
        let window = self.flow.settings.send_window.as_ref();
        let (holidays, _) = self.holidays();
        let holidays: &Holidays = &holidays;
        let zones = match self.zones(channel) {
            Ok(z) => z,
            Err(f) => {
                self.hold_current(run, kind, f);
                return false;
            }
        };
        if is_open(self.now, window, &zones, channel, holidays) {
            return true;
        }
        match explain_opening(self.now, window, &zones, channel, holidays) {
            // An opening at or before now means the window is open after all (both answers
            // come from the same window arithmetic); going now beats deferring in a loop.
            Ok(o) if o.at <= self.now => true,
            Ok(o) => {
                if let Some(r) = self.st.run.as_mut() {
                    r.deferred_to = Some(o.at);
                    r.deferred_reason = None;
                }
                self.journey(JourneyEntry::Deferred {
                    run: run.id,
                    step: run.step.to_string(),
                    to: o.at,
                    reason: o.reason,
                    rule: o.rule,
                    cap: None,
                });
                false
            }
            Err(e) => {
                self.hold_current(run, kind, Failure::from(e));
                false
            }
        }
    }

    fn hold_current(&mut self, run: &Firing<'a>, kind: StepKind, f: Failure) {
        let h = Hold {
            code: f.code,
            message: f.message,
        };
        if let Some(r) = self.st.run.as_mut() {
            r.hold = Some(h.clone());
        }
        self.record_hold(run.id, &run.step, kind, &h);
    }

    /// docs/capacity.md at execution, once the windows are open: `Some(slot)` when the step may go now
    /// (`slot` is the ledger entry to reserve, `None` when the channel has no caps); `None`
    /// when it was deferred (to the earliest instant at which it fits every cap and every
    /// window is open, with a `deferred` entry naming the cap) or handed to the planner.
    /// `address` is an email's recipient, whose domain is capped (read only when there are caps).
    fn capacity(
        &mut self,
        run: &Firing<'a>,
        kind: StepKind,
        address: Option<&str>,
    ) -> Option<Option<CapEntry>> {
        let channel = channel_of(kind);
        let Some(caps) = self.cap.caps().and_then(|c| c.of(channel)) else {
            return Some(None);
        };
        let domain = address.and_then(domain_of);
        let book = match self.cap {
            CapacityView::Ledger(book) => book,
            _ => {
                // Only the planner reserves: go again at once, there.
                if let Some(r) = self.st.run.as_mut() {
                    r.deferred_to = Some(self.now);
                }
                self.handed_off = true;
                return None;
            }
        };
        let window = self.flow.settings.send_window.as_ref();
        let (holidays, _) = self.holidays();
        let holidays: &Holidays = &holidays;
        let zones = match self.zones(channel) {
            Ok(z) => z,
            Err(f) => {
                self.hold_current(run, kind, f);
                return None;
            }
        };
        let mut t = self.now;
        let mut cap = None;
        let (mut closed_by, mut rule) = (None, None);
        // Alternate the caps and the windows (the timing core's, holidays and quiet hours
        // included) until both agree; each turn moves `t` forward.
        for _ in 0..64 {
            let (fit, why) = book.earliest_fit(channel, domain.as_deref(), t);
            cap = cap.or(why);
            t = fit;
            if is_open(t, window, &zones, channel, holidays) {
                break;
            }
            match explain_opening(t, window, &zones, channel, holidays) {
                Ok(o) if o.at <= t => break,
                Ok(o) => {
                    t = o.at;
                    closed_by = o.reason;
                    rule = o.rule;
                }
                Err(e) => {
                    self.hold_current(run, kind, Failure::from(e));
                    return None;
                }
            }
        }
        if t <= self.now {
            let seed = jitter_seed(&self.st.id, run.id, self.ctx.seed);
            let gap = chrono::Duration::milliseconds(caps.gap_after(seed) as i64);
            return Some(Some(CapEntry {
                channel,
                at: self.now,
                domain,
                gap_until: self.now + gap,
            }));
        }
        if let Some(r) = self.st.run.as_mut() {
            r.deferred_to = Some(t);
            r.deferred_reason = cap;
        }
        self.journey(JourneyEntry::Deferred {
            run: run.id,
            step: run.step.to_string(),
            to: t,
            reason: closed_by,
            rule,
            cap,
        });
        None
    }

    fn send(&mut self, run: &Firing<'a>, kind: StepKind) {
        let channel = channel_of(kind);
        if let Some(reason) = self.unsendable(channel) {
            self.journey(JourneyEntry::Skipped {
                run: run.id,
                step: run.step.to_string(),
                reason,
            });
            self.take_branch("skipped", None);
            return;
        }
        let (variant, action) = match self.flow.step(&run.step) {
            Some(step) => self.variant_of(&run.step, step),
            None => (None, None),
        };
        self.keep_variant(&run.step, variant.as_deref());
        let (template, channel_params) = match action {
            Some(Action::Email(p) | Action::Sms(p)) => (p.template.clone(), p.channel.clone()),
            _ => (String::new(), None),
        };
        let recipient = match kind {
            StepKind::Email => self.st.contact.email.clone(),
            _ => self.st.contact.phone.clone(),
        }
        .unwrap_or_default();
        let address = (kind == StepKind::Email).then_some(recipient.as_str());
        let reservation = match self.capacity(run, kind, address) {
            Some(r) => r,
            None => return,
        };
        let message_id = (kind == StepKind::Email).then(|| message_id(&self.st.id, run.id));
        self.st.sent.insert(channel);
        self.fx.push(Effect::Dispatch(Dispatch {
            idempotency_key: self.key(run.id),
            run: run.id,
            step: run.step.to_string(),
            channel,
            recipient,
            template,
            input: self.st.input.clone(),
            channel_params,
            message_id,
            reservation,
            variant,
        }));
        self.take_branch("then", None);
    }

    /// The variant of `step` this enrollment's contact gets and the action it sends: the
    /// step's own, with no variant name, when the step has no variants.
    fn variant_of<'s>(&self, step_id: &str, step: &'s Step) -> (Option<String>, Option<&'s Action>)
    where
        'a: 's,
    {
        // Most steps have no variants: nothing to look up.
        if step.variants.is_empty() {
            return (None, Some(&step.action));
        }
        let stopped = self.ctx.stopped.get(&self.st.flow.id);
        match super::variant::of(self.flow, step_id, &self.st, stopped) {
            Some(v) => (Some(v.name.clone()), Some(&v.action)),
            None => (None, Some(&step.action)),
        }
    }

    /// `MigrateEnrollments`: the run carries on as step `step` of version `to_version` (the
    /// flow this call steps with). Nothing is entered again; a `wait_for` takes the new
    /// version's events, and a buffered signal one of them matches, as on entry.
    fn migrate(&mut self, to_version: u32, step: String) {
        if self.st.run.is_none() {
            // No open run: nothing to place, only the version changes.
            let from_version = std::mem::replace(&mut self.st.flow.version, to_version);
            self.journey(JourneyEntry::Migrated {
                from_version,
                to_version,
                from_step: String::new(),
                to_step: String::new(),
            });
            return;
        }
        let Some(new_step) = self.flow.step(&step) else {
            self.reject(
                "migrate",
                format!(
                    "version {to_version} has no step {}; map the current step to one of its steps",
                    crate::quote::quote(&step)
                ),
            );
            return;
        };
        let kind = new_step.kind();
        let events: Vec<String> = match &new_step.action {
            Action::WaitFor(p) => p.events.iter().map(|e| e.as_str().to_string()).collect(),
            _ => Vec::new(),
        };
        let from_version = self.st.flow.version;
        let was = self.st.run.as_ref().map(|r| r.step_type);
        if let Some(was) = was.filter(|&was| was != kind) {
            self.reject(
                "migrate",
                format!(
                    "the current step is a {was} and step {} of version {to_version} a {kind}; map it to a step of type {was}",
                    crate::quote::quote(&step)
                ),
            );
            return;
        }
        let run = self.st.run.as_mut().expect("an open run (checked above)");
        let from_step = std::mem::replace(&mut run.step, step.clone());
        if kind == StepKind::WaitFor {
            run.events = events.clone();
        }
        self.st.flow.version = to_version;
        self.journey(JourneyEntry::Migrated {
            from_version,
            to_version,
            from_step,
            to_step: step,
        });
        let waiting = self
            .st
            .run
            .as_ref()
            .filter(|r| r.step_type == StepKind::WaitFor)
            .map(|r| r.id);
        if let (Some(run_id), Status::Active) = (waiting, self.st.status) {
            self.take_buffered(run_id, &events);
        }
    }

    /// A `wait_for` run that starts listening for `events` (entered, or migrated to a version
    /// that lists them) takes the oldest buffered signal one of them matches, as if it came now.
    fn take_buffered(&mut self, run_id: u64, events: &[String]) {
        if let Some((signal, event)) = self.st.buffer.take_oldest(events) {
            let payload = RecordedPayload::of(&signal.payload);
            self.journey(JourneyEntry::Signal {
                signal: signal.id.clone(),
                intent: reading_of(&signal.payload),
                effect: SignalEffect::Consumed {
                    run: run_id,
                    branch: event.clone(),
                    payload: payload.clone(),
                },
            });
            self.woken(&signal.id, &event, payload, signal.facts);
            self.take_branch(&event, Some(signal.id));
        }
    }

    /// Remembers the variant given at `step_id`, so the enrollment keeps it at every later step
    /// of the same experiment.
    fn keep_variant(&mut self, step_id: &str, variant: Option<&str>) {
        // The experiment is looked up only for a step that gave a variant.
        let Some(name) = variant else {
            return;
        };
        if let Some((key, _, _)) = self.flow.experiment_of(step_id) {
            self.st.variants.insert(key, name.to_string());
        }
    }

    fn create_task(&mut self, run: &Firing<'a>) {
        let Some(step) = self.flow.step(&run.step) else {
            return;
        };
        let Some(reservation) = self.capacity(run, run.step_type, None) else {
            return;
        };
        self.st.sent.insert(channel_of(run.step_type));
        let due_by = match step.timeout() {
            Some(d) => match self.deadline(d, self.now) {
                Ok(t) => Some(t.max(self.now)),
                Err(f) => {
                    self.fail(f);
                    return;
                }
            },
            None => None,
        };
        let (variant, action) = self.variant_of(&run.step, step);
        let params = task_params_json(action.unwrap_or(&step.action));
        let variant_given = variant.clone();
        self.fx.push(Effect::TaskCreated(Task {
            idempotency_key: self.key(run.id),
            run: run.id,
            step: run.step.to_string(),
            step_type: run.step_type.to_string(),
            params,
            input: self.st.input.clone(),
            due_by,
            reservation,
            variant,
        }));
        self.keep_variant(&run.step, variant_given.as_deref());
        if let Some(r) = self.st.run.as_mut() {
            r.task = Some(TaskPhase::Open);
            r.until = due_by;
        }
    }

    // ----- leaving runs ----------------------------------------------------------------------

    /// Closes the current run on `branch` and goes where it is wired; an unwired branch
    /// completes the enrollment (docs/flows.md, "Timeouts" for `timeout`). `skipped` continues at `then`.
    fn take_branch(&mut self, branch: &str, woken_by: Option<String>) {
        let next = self.current_step().and_then(|s| {
            let key = if branch == "skipped" { "then" } else { branch };
            s.next(key)
        });
        self.close_run(Some(branch), woken_by);
        match next {
            Some(step) => self.pending = Some(step.as_str()),
            None => self.complete(None),
        }
    }

    fn close_run(&mut self, branch: Option<&str>, woken_by: Option<String>) {
        if let Some(run) = self.st.run.take() {
            // A `wait_for` that closes without a signal of its own (its timeout, a move, an
            // exit) leaves none: `signal.*` never reads the signal of an earlier wait.
            if run.step_type == StepKind::WaitFor
                && self.st.woken.as_ref().is_some_and(|w| w.run != run.id)
            {
                self.st.woken = None;
            }
            self.fx.push(Effect::RunClosed {
                run: run.id,
                step: run.step,
                closed: self.now,
                branch: branch.map(str::to_string),
                woken_by,
            });
        }
    }

    fn complete(&mut self, outcome: Option<String>) {
        self.close_run(Some("completed"), None);
        self.st.status = Status::Completed;
        self.st.outcome = outcome.clone();
        self.pending = None;
        self.journey(JourneyEntry::Completed { outcome });
    }

    fn exit(&mut self, reason: String, woken_by: Option<String>) {
        self.close_run(Some("exit"), woken_by);
        self.st.status = Status::Exited;
        self.st.reason = Some(reason.clone());
        self.pending = None;
        self.journey(JourneyEntry::Exited { reason });
    }

    /// The transition fails: the loop stops here, and [`step`] replays the input and records
    /// the failure ([`Machine::record_failure`]) without anything the failed steps did.
    fn fail(&mut self, mut f: Failure) {
        if f.step.is_none() {
            f.step = self.current.as_deref().map(str::to_string);
        }
        self.st.status = Status::Failed;
        self.pending = None;
        self.failure = Some(f);
    }

    /// Fails the enrollment where it stood: its open run closes on `failed`.
    fn record_failure(&mut self, f: Failure) {
        self.close_run(Some("failed"), None);
        self.st.status = Status::Failed;
        self.st.reason = Some(format!("{}: {}", f.code, f.message));
        self.pending = None;
        self.journey(JourneyEntry::Failed {
            code: f.code,
            step: f.step,
            message: f.message,
        });
    }

    /// Keeps the signal that ends the current `wait_for` run on the enrollment (docs/signals.md, "Custom events").
    /// With it go the facts `signal.*` reads.
    fn woken(&mut self, signal: &str, branch: &str, payload: RecordedPayload, facts: SignalFacts) {
        if let Some(run) = &self.st.run {
            self.st.woken = Some(Box::new(Woken {
                run: run.id,
                step: run.step.clone(),
                signal: signal.to_string(),
                branch: branch.to_string(),
                payload,
                facts,
            }));
        }
    }

    // ----- timing ----------------------------------------------------------------------------

    fn key(&self, run: u64) -> String {
        // `<enrollment>:<run>`, spelled without `format!` (one per send).
        let mut key = String::with_capacity(self.st.id.len() + 21);
        key.push_str(&self.st.id);
        key.push(':');
        super::effect::push_decimal(&mut key, run);
        key
    }

    fn sender_zone(&self) -> Result<Zone, Failure> {
        Zone::parse(&self.st.sender_tz).map_err(Failure::from)
    }

    fn recipient(&self) -> Recipient {
        Recipient {
            // A stored zone that no longer parses is treated as unknown: never guessed.
            tz: self
                .st
                .contact
                .tz
                .as_deref()
                .and_then(|t| Zone::parse(t).ok()),
            phone: self.st.contact.phone.clone(),
        }
    }

    /// docs/timing.md, "Zones", "Send windows" and "Holiday calendars and quiet hours": the zones a step of `channel` uses, and the account's quiet-hours
    /// place rule for SMS and calls.
    fn zones(&self, channel: Channel) -> Result<ResolvedZones, Failure> {
        if let Some((memo_channel, zones)) = &*self.zones_memo.borrow() {
            if *memo_channel == channel {
                return Ok(zones.clone());
            }
        }
        let sender = self.sender_zone()?;
        let zones = resolve_zones_with(
            self.flow.settings.send_window.as_ref(),
            &self.recipient(),
            &sender,
            channel,
            &self.ctx.quiet_hours,
        )
        .map_err(Failure::from)?;
        *self.zones_memo.borrow_mut() = Some((channel, zones.clone()));
        Ok(zones)
    }

    /// docs/timing.md, "Holiday calendars and quiet hours": the flow's holidays for this contact, `contact` resolved to the contact's
    /// `country`, else its phone number's region; and what `contact` became.
    fn holidays(&self) -> (Cow<'_, Holidays>, ContactCalendar) {
        contact_holidays(self.flow, &self.st.contact)
    }

    /// The zone of a `wait` or a timeout without `tz` (docs/timing.md, "Zones"; the phone-inferred zone
    /// counts for SMS only, so not here).
    fn arithmetic_zone(&self) -> Result<Zone, Failure> {
        Ok(self.zones(Channel::Email)?.arithmetic)
    }

    /// Resolves a `wait` target or a timeout deadline from `from`, enforcing `max_wait` on the
    /// ones computed at run time (docs/flows.md, "Plan limits"). The result may be in the past; callers clamp.
    fn deadline(&self, d: &Deadline, from: DateTime<Utc>) -> Result<DateTime<Utc>, Failure> {
        let zone = match &d.tz {
            Some(z) => *z,
            None => self.arithmetic_zone()?,
        };
        let (holidays, _) = self.holidays();
        let holidays: &Holidays = &holidays;
        // Only an expression reads the contact: a literal wait (the common case) copies nothing.
        let contact = || self.expr_contact();
        let (target, computed) = match &d.target {
            Target::For(DurationSlot::Literal(dur)) => (dur.add_to(from, &zone, holidays), false),
            Target::For(DurationSlot::Expr(e)) => {
                let ms = eval_millis(e, &self.st.input, &contact()).map_err(expr_failure)?;
                (from + chrono::Duration::milliseconds(ms), true)
            }
            Target::Until(UntilSlot::Literal(u)) => (u.resolve(from, &zone, holidays), true),
            Target::Until(UntilSlot::Expr(e)) => (
                eval_instant(e, &self.st.input, &contact()).map_err(expr_failure)?,
                true,
            ),
        };
        if computed {
            if let Some(limit) = &self.ctx.max_wait {
                let latest = limit.add_to(from, &zone, holidays);
                if target > latest {
                    return Err(Failure::new(
                        Code::WaitExceedsLimit,
                        format!(
                            "the wait computed at run time ends at {}, after the account's \
                             max_wait (latest {}); shorten the wait or raise the limit",
                            crate::engine::instant::format(target),
                            crate::engine::instant::format(latest)
                        ),
                    ));
                }
            }
        }
        Ok(target)
    }

    /// docs/flows.md, "Plan limits": a `wait_for` without a timeout gets `max_wait` as its timeout.
    fn max_wait_deadline(&self, from: DateTime<Utc>) -> Result<Option<DateTime<Utc>>, Failure> {
        match &self.ctx.max_wait {
            Some(limit) => {
                let zone = self.arithmetic_zone()?;
                Ok(Some(limit.add_to(from, &zone, &self.holidays().0)))
            }
            None => Ok(None),
        }
    }

    fn expr_contact(&self) -> ExprContact {
        let c = &self.st.contact;
        ExprContact {
            id: c.id.clone(),
            email: c.email.clone(),
            phone: c.phone.clone(),
            tz: c.tz.clone(),
            attributes: c.attributes.clone(),
            fetch: self.st.fetch.as_ref().map(|f| f.as_json()),
            signal: self.st.woken.as_ref().map(|w| self.signal_view(&w.facts)),
        }
    }

    /// What `signal.*` reads of `facts`: `resume_on` becomes the start of that day in the
    /// contact's zone, else the sender's. With neither zone usable (a stored zone that no
    /// longer parses) it is missing rather than guessed.
    fn signal_view(&self, facts: &SignalFacts) -> SignalView {
        let zone = || self.recipient().tz.or_else(|| self.sender_zone().ok());
        SignalView {
            channel: facts.channel.clone(),
            intent: facts.intent,
            resume_on: facts
                .resume_on
                .and_then(|day| zone().map(|z| day_start(day, &z))),
            referral: facts.referral.clone(),
        }
    }

    /// Why an outreach step on `channel` cannot send, if it cannot.
    fn unsendable(&self, channel: Channel) -> Option<String> {
        if self.st.contact.opted_out.contains(channel.as_str()) {
            return Some(format!("the contact opted out of {channel}"));
        }
        let (address, what) = match channel {
            Channel::Email => (&self.st.contact.email, "email address"),
            _ => (&self.st.contact.phone, "phone number"),
        };
        match address {
            Some(a) if !a.is_empty() => None,
            _ => Some(format!("the contact has no {what}")),
        }
    }
}

/// docs/timing.md, "Holiday calendars and quiet hours": `flow`'s holidays for `contact`, `contact` resolved to the contact's `country`,
/// else its phone number's region; and what `contact` became. Shared with Explain.
pub(crate) fn contact_holidays<'f>(
    flow: &'f Flow,
    contact: &crate::engine::state::ContactView,
) -> (Cow<'f, Holidays>, ContactCalendar) {
    let holidays = &flow.settings.holidays;
    if !holidays.wants_contact() {
        return (Cow::Borrowed(holidays), ContactCalendar::NotAsked);
    }
    let country: Option<String> = contact.country.clone().or_else(|| {
        let phone = contact.phone.as_deref()?;
        Some(phone_zones(phone).ok()?.region?.to_string())
    });
    holidays.for_contact(country.as_deref())
}

/// The channel an outreach step or task goes out on: which windows apply, what its dispatch
/// says, which opt-out blocks it. Only outreach steps and tasks are planned, so the fallback
/// arm is `email` itself.
pub fn channel_of(kind: StepKind) -> Channel {
    match kind {
        StepKind::Sms => Channel::Sms,
        StepKind::Call => Channel::Call,
        StepKind::LinkedinConnect | StepKind::LinkedinMessage => Channel::Linkedin,
        _ => Channel::Email,
    }
}

/// A task's parameters as shown in `ListTasks`.
fn task_params_json(action: &Action) -> serde_json::Value {
    let (p, connected) = match action {
        Action::Call(c) => (&c.task, Some(&c.connected_outcomes)),
        Action::LinkedinConnect(p) | Action::LinkedinMessage(p) => (p, None),
        _ => return serde_json::json!({}),
    };
    let mut out = serde_json::Map::new();
    if let Some(i) = &p.instructions {
        out.insert("instructions".into(), i.clone().into());
    }
    if let Some(o) = &p.outcomes {
        out.insert("outcomes".into(), o.clone().into());
    }
    if let Some(c) = connected {
        out.insert("connected_outcomes".into(), c.clone().into());
    }
    serde_json::Value::Object(out)
}

/// The instant `day` starts in `zone`: its midnight, or when midnight falls in a DST gap (some
/// zones spring forward at 00:00), the first instant of the day that exists, the gap's end; in a
/// fold, the earlier midnight.
pub(crate) fn day_start(day: chrono::NaiveDate, zone: &Zone) -> DateTime<Utc> {
    zone.to_instant(day.and_time(chrono::NaiveTime::MIN))
}

/// The failure of a timing slot whose expression could not be evaluated: `EXPR_MISSING` when a
/// value it reads is absent (the flow should branch on `exists` first), else `EXPR_TYPE`.
fn expr_failure(e: ExprError) -> Failure {
    if e.is_missing() {
        Failure::new(Code::ExprMissing, e.message)
    } else {
        Failure::new(Code::ExprType, format!("{e}; check the enrollment input"))
    }
}

/// A `fetch` query or header value as text.
fn operand_text(
    v: &Operand,
    input: &serde_json::Value,
    contact: &ExprContact,
    name: &str,
) -> Result<String, String> {
    match v {
        Operand::Literal(serde_json::Value::String(s)) => Ok(s.clone()),
        Operand::Literal(other) => Ok(other.to_string()),
        Operand::Expr(e) => match eval(e, input, contact).map_err(|e| format!("{name}: {e}"))? {
            ExprValue::String(s) => Ok(s),
            ExprValue::Number(n) if n.fract() == 0.0 && n.abs() < 9e15 => {
                Ok(format!("{}", n as i64))
            }
            ExprValue::Number(n) => Ok(n.to_string()),
            ExprValue::Boolean(b) => Ok(b.to_string()),
            ExprValue::Timestamp(t) => Ok(crate::engine::instant::format(t)),
        },
    }
}

/// A `fetch` body with each `$:` string replaced by its value.
fn body_value(
    v: &serde_json::Value,
    input: &serde_json::Value,
    contact: &ExprContact,
) -> Result<serde_json::Value, String> {
    use serde_json::Value as J;
    Ok(match v {
        J::String(s) => match crate::flow::expr::strip_prefix(s) {
            Some(src) => {
                let e = crate::flow::expr::Expr::parse(src).map_err(|e| e.to_string())?;
                match &e.node {
                    crate::flow::expr::Node::Path(p) => contact.get(p, input).unwrap_or(J::Null),
                    _ => match eval(&e, input, contact).map_err(|e| e.to_string())? {
                        ExprValue::String(s) => J::String(s),
                        ExprValue::Number(n) => {
                            serde_json::Number::from_f64(n).map_or(J::Null, J::Number)
                        }
                        ExprValue::Boolean(b) => J::Bool(b),
                        ExprValue::Timestamp(t) => J::String(crate::engine::instant::format(t)),
                    },
                }
            }
            None => v.clone(),
        },
        J::Array(items) => J::Array(
            items
                .iter()
                .map(|i| body_value(i, input, contact))
                .collect::<Result<_, _>>()?,
        ),
        J::Object(o) => J::Object(
            o.iter()
                .map(|(k, i)| Ok((k.clone(), body_value(i, input, contact)?)))
                .collect::<Result<_, String>>()?,
        ),
        other => other.clone(),
    })
}

fn input_name(input: &Input) -> &'static str {
    match input {
        Input::Start => "start",
        Input::Wake => "wake",
        Input::Signal(_) => "signal",
        Input::TaskOutcome { .. } => "task_outcome",
        Input::Pause => "pause",
        Input::Resume => "resume",
        Input::Exit { .. } => "exit",
        Input::MoveTo { .. } => "move_to",
        Input::Migrate { .. } => "migrate",
        Input::Complete { .. } => "complete",
        Input::ContactChanged(_) => "contact_changed",
        Input::FetchAnswer { .. } => "fetch_answer",
        Input::Decide { .. } => "decide",
        Input::SlotFreed { .. } => "slot_freed",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `signal.resume_on`'s instant: the day's first instant in the zone. Expected values are
    /// from Python's `zoneinfo`, not from chrono-tz: the first minute whose local date is the day.
    #[test]
    fn a_day_starts_at_its_first_instant_in_the_zone() {
        let cases = [
            // An ordinary midnight (MST, UTC-7).
            ("America/Denver", (2027, 3, 1), "2027-03-01T07:00:00Z"),
            // After DST began (MDT, UTC-6).
            ("America/Denver", (2027, 3, 15), "2027-03-15T06:00:00Z"),
            // Midnight in a spring-forward gap: the day starts at 01:00, when the gap ends.
            ("America/Santiago", (2026, 9, 6), "2026-09-06T04:00:00Z"),
            ("America/Havana", (2027, 3, 14), "2027-03-14T05:00:00Z"),
            // Midnight twice (Havana falls back from 01:00 to 00:00): the earlier one.
            ("America/Havana", (2026, 11, 1), "2026-11-01T04:00:00Z"),
            // A fixed offset and UTC.
            ("+05:30", (2027, 3, 1), "2027-02-28T18:30:00Z"),
            ("UTC", (2027, 3, 1), "2027-03-01T00:00:00Z"),
        ];
        for (zone, (y, m, d), want) in cases {
            let day = chrono::NaiveDate::from_ymd_opt(y, m, d).unwrap();
            let got = day_start(day, &Zone::parse(zone).unwrap());
            let want = DateTime::parse_from_rfc3339(want).unwrap();
            assert_eq!(got, want, "{zone} {day}");
        }
    }
}
