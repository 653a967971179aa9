//! The step interpreter: `(state, input, now) -> (state, effects)`.
//!
//! [`step`] is a pure function. It never reads the clock (`now` is a parameter), never touches
//! storage and never draws an unseeded random number, so the planner, a retry on another
//! replica and `Simulate` all get the same answer for the same arguments (SPEC §2.7).
//!
//! One call runs through every step that takes no time: an `end`, a `wait` whose target is
//! already past, an outreach step whose time is now, a `wait_for` that consumes a buffered
//! signal. It stops at the first step that has to wait, with `next_run_at` set for the planner.
//!
//! Decisions the SPEC leaves open, written down here:
//! - A step held with `ZONE_UNKNOWN` or `NO_OPENING` keeps the enrollment `active` with the run
//!   open and no `next_run_at`: nothing is sent, the journey shows why, and the step is planned
//!   again when the contact changes ([`Input::ContactChanged`]) or an operator moves/exits it.
//!   Failing the enrollment instead would lose it over a fixable contact record.
//! - An outreach step to a channel the contact opted out of, or with no address for it, is
//!   skipped (run branch `skipped`, journey `skipped`) and the flow goes on.
//! - Tasks get no jitter (jitter is for outreach, SPEC §1); a task's timeout counts from when
//!   the task is created, so a task due Monday is not half timed out by the weekend.
//! - A task outcome reported while paused is kept on the run and applied at resume.
//! - A task outcome raises its events (SPEC §5.2) for the contact's other enrollments
//!   ([`Effect::RaiseSignal`]); in this enrollment it takes its own branch, except that an
//!   event in `exit_on` exits (rule 2 applies to the enrollment the outcome came from too).

use crate::code::Code;
use crate::engine::effect::{
    message_id, Dispatch, Effect, JourneyEntry, RecordedPayload, SignalEffect, Task, Woken,
};
use crate::engine::input::{Input, Signal};
use crate::engine::seed::jitter_seed;
use crate::engine::state::{EnrollmentState, Hold, Run, Status, TaskPhase};
use crate::flow::expr::{eval_instant, eval_millis, ContactView as ExprContact};
use crate::flow::model::{
    Action, Deadline, DurationSlot, Step, StepKind, Target, UntilSlot, OUTCOME_ACCEPTED,
    OUTCOME_REPLIED,
};
use crate::flow::Flow;
use crate::routing::{decide, BufferedSignal, Dropped, Route, Waiting};
use crate::timing::{
    explain_opening, is_open, phone_zones, resolve_zones_with, schedule, Channel, ContactCalendar,
    Duration, Holidays, QuietHours, Recipient, ResolvedZones, TimingError, Zone,
};
use chrono::{DateTime, Utc};
use std::borrow::Cow;

/// At most this many steps are entered in one call. Validation refuses cycles that spin without
/// time passing and paths longer than this with no step that lets time pass
/// (`TRANSITION_TOO_LONG`), but a loop through a `wait` whose target is already past, or through
/// a `wait_for` consuming up to 1,000 buffered signals, still runs in one call; beyond this the
/// enrollment fails with [`Code::LoopGuard`] instead of spinning, and nothing of that call but the
/// failure is kept (SPEC §13). The number lives with the validator, below the engine.
pub use crate::flow::LOOP_GUARD;

/// What the interpreter needs besides the state and the flow: account settings.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ctx {
    /// The account's `max_wait` (SPEC §5.7): a computed wait beyond it fails the enrollment;
    /// a `wait_for` without a timeout gets it as its timeout.
    pub max_wait: Option<Duration>,
    /// Mixed into every jitter seed: a simulation's `seed`, 0 in production.
    pub seed: u64,
    /// The account's quiet-hours policy for SMS and calls (SPEC §11); federal by default.
    pub quiet_hours: QuietHours,
}

/// Refuses a flow that uses a step type the interpreter does not run yet (`approval`, `fetch`,
/// `branch`). The enroll path calls this; [`step`] itself fails such an enrollment rather than
/// panic.
pub fn enrollable(flow: &Flow) -> Result<(), String> {
    let unsupported: Vec<String> = flow
        .steps
        .iter()
        .filter(|(_, s)| is_unsupported(s.kind()))
        .map(|(id, s)| format!("`{id}` ({})", s.kind()))
        .collect();
    if unsupported.is_empty() {
        return Ok(());
    }
    let one = unsupported.len() == 1;
    Err(format!(
        "{} {} {} of a type this version cannot run yet (approval, fetch and branch come in a \
         later release); remove {} or replace {} with a wait_for or a task",
        if one { "the step" } else { "the steps" },
        unsupported.join(", "),
        if one { "is" } else { "are" },
        if one { "it" } else { "them" },
        if one { "it" } else { "them" },
    ))
}

fn is_unsupported(kind: StepKind) -> bool {
    matches!(
        kind,
        StepKind::Approval | StepKind::Fetch | StepKind::Branch
    )
}

/// Applies `input` at `now` and returns the new state and what to write or send, in order.
pub fn step(
    state: &EnrollmentState,
    flow: &Flow,
    input: Input,
    now: DateTime<Utc>,
    ctx: &Ctx,
) -> (EnrollmentState, Vec<Effect>) {
    let mut m = Machine::new(state, flow, ctx, now);
    m.expire_buffer();
    m.handle(input.clone());
    m.drive();
    if let Some(failure) = m.failure.take() {
        // SPEC §13: a transition commits every effect or none. What the input itself did (a
        // signal closing its wait, an operator's move) is replayed; every step entered after it
        // is dropped with its dispatches and tasks, and the enrollment fails where it stood.
        m = Machine::new(state, flow, ctx, now);
        m.expire_buffer();
        m.handle(input);
        m.record_failure(failure);
    }
    m.st.next_run_at = match (&m.st.status, &m.st.run) {
        (Status::Active, Some(run)) => run.wake_at(),
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

struct Machine<'a> {
    st: EnrollmentState,
    fx: Vec<Effect>,
    flow: &'a Flow,
    ctx: &'a Ctx,
    now: DateTime<Utc>,
    /// A step to enter next (the loop in [`Machine::drive`] enters it).
    pending: Option<String>,
    /// Set by [`Machine::fail`]: the transition failed, and [`step`] replays it without the
    /// steps it entered.
    failure: Option<Failure>,
    /// The step being entered or fired, named by a failure.
    current: Option<String>,
}

impl<'a> Machine<'a> {
    fn new(
        state: &EnrollmentState,
        flow: &'a Flow,
        ctx: &'a Ctx,
        now: DateTime<Utc>,
    ) -> Machine<'a> {
        Machine {
            st: state.clone(),
            fx: Vec::new(),
            flow,
            ctx,
            now,
            pending: None,
            failure: None,
            current: None,
        }
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
                Input::Wake | Input::Signal(_) => {}
                Input::ContactChanged(c) => self.st.contact = c,
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
                let start = self.flow.start.clone();
                self.journey(JourneyEntry::Enrolled {
                    step: start.clone(),
                });
                self.pending = Some(start);
            }
            Input::Wake => {}
            Input::Signal(s) => self.signal(s),
            Input::TaskOutcome { run, outcome } => self.task_outcome(run, outcome),
            Input::Pause => {
                if self.st.status == Status::Paused {
                    self.reject("pause", "the enrollment is already paused");
                } else {
                    self.st.status = Status::Paused;
                    self.journey(JourneyEntry::Paused);
                }
            }
            Input::Resume => {
                if self.st.status != Status::Paused {
                    self.reject("resume", "the enrollment is not paused");
                    return;
                }
                self.st.status = Status::Active;
                self.journey(JourneyEntry::Resumed);
                let pending = self.st.run.as_mut().and_then(|r| r.pending_outcome.take());
                if let Some(outcome) = pending {
                    self.apply_outcome(outcome);
                }
            }
            Input::Exit { reason } => self.exit(reason, None),
            Input::MoveTo { step } => {
                if self.flow.step(&step).is_none() {
                    self.reject(
                        "move_to",
                        format!(
                            "the flow has no step {}; name one of its `steps` keys",
                            crate::quote::quote(&step)
                        ),
                    );
                    return;
                }
                let from = self.st.run.as_ref().map(|r| r.step.clone());
                self.close_run(Some("moved"), None);
                self.journey(JourneyEntry::Moved {
                    from,
                    to: step.clone(),
                });
                self.pending = Some(step);
            }
            Input::Complete { outcome } => {
                self.close_run(Some("completed"), None);
                self.complete(outcome);
            }
            Input::ContactChanged(c) => {
                // Only the zone and the number decide a hold (SPEC §3, §4): another change (an
                // email, an attribute) leaves a held step as it is, without a second `held`.
                let zone_changed = c.tz != self.st.contact.tz || c.phone != self.st.contact.phone;
                self.st.contact = c;
                let held = self.st.run.as_ref().is_some_and(|r| r.hold.is_some());
                if held && zone_changed {
                    self.replan_held();
                }
            }
        }
    }

    /// SPEC §5.3, in order, for this enrollment.
    fn signal(&mut self, s: Signal) {
        if let Some(channel) = &s.opt_out {
            self.st.contact.opted_out.insert(channel.clone());
        }
        let route = {
            let waiting = match (&self.st.status, &self.st.run) {
                (Status::Paused, _) => Waiting::Paused,
                (_, Some(run)) if run.step_type == StepKind::WaitFor => {
                    Waiting::ForEvents(&run.events)
                }
                _ => Waiting::NotWaiting,
            };
            let exit_on: Vec<String> = self
                .flow
                .settings
                .exit_on
                .iter()
                .map(|e| e.as_str().to_string())
                .collect();
            decide(waiting, &exit_on, &s.raises, s.opt_out.as_deref())
        };
        match route {
            Route::IgnoredPaused => self.journey(JourneyEntry::Signal {
                signal: s.id,
                effect: SignalEffect::IgnoredPaused,
            }),
            Route::Exit(cause) => {
                let reason = cause.reason();
                self.journey(JourneyEntry::Signal {
                    signal: s.id.clone(),
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
                    effect: SignalEffect::Woke {
                        run,
                        branch: event.clone(),
                        payload: payload.clone(),
                    },
                });
                self.woken(&s.id, &event, payload);
                self.take_branch(&event, Some(s.id));
            }
            Route::Buffer => {
                self.journey(JourneyEntry::Signal {
                    signal: s.id.clone(),
                    effect: SignalEffect::Buffered {
                        payload: RecordedPayload::of(&s.payload),
                    },
                });
                let dropped = self.st.buffer.push(BufferedSignal {
                    id: s.id,
                    raises: s.raises,
                    payload: s.payload,
                    at: self.now,
                });
                for d in dropped {
                    self.journey(JourneyEntry::Signal {
                        signal: d.id,
                        effect: SignalEffect::Expired {
                            why: Dropped::BufferFull,
                            at: self.now,
                        },
                    });
                }
            }
        }
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

    /// A task's outcome: journey, the events it raises (SPEC §5.2), then its branch.
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
                self.current = Some(step.clone());
                self.enter(step);
                continue;
            }
            if self.st.status != Status::Active {
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
            self.current = self.st.run.as_ref().map(|r| r.step.clone());
            self.fire();
        }
        let step = self.pending.take();
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

    fn current_step(&self) -> Option<&Step> {
        self.st.run.as_ref().and_then(|r| self.flow.step(&r.step))
    }

    /// Opens a run of `step_id` and plans it (SPEC §2.7: timing is computed here, once).
    fn enter(&mut self, step_id: String) {
        let Some(step) = self.flow.step(&step_id) else {
            self.fail(Failure::new(
                Code::UnknownTarget,
                format!("the flow has no step `{step_id}`"),
            ));
            return;
        };
        self.st.last_run_id += 1;
        let mut run = Run {
            id: self.st.last_run_id,
            step: step_id,
            step_type: step.kind(),
            entered: self.now,
            until: None,
            scheduled: None,
            deferred_to: None,
            events: Vec::new(),
            task: None,
            pending_outcome: None,
            hold: None,
            wait_reason: None,
            rule: None,
            contact_holidays: match self.holidays().1 {
                ContactCalendar::NotAsked => None,
                ContactCalendar::Country(code) => Some(code.to_string()),
                ContactCalendar::None(why) => Some(format!("none: {why}")),
            },
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
                if let Some((signal, event)) = self.st.buffer.take_oldest(&events) {
                    let payload = RecordedPayload::of(&signal.payload);
                    self.journey(JourneyEntry::Signal {
                        signal: signal.id.clone(),
                        effect: SignalEffect::Consumed {
                            run: run_id,
                            branch: event.clone(),
                            payload: payload.clone(),
                        },
                    });
                    self.woken(&signal.id, &event, payload);
                    self.take_branch(&event, Some(signal.id));
                }
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
            Action::Approval(_) | Action::Fetch(_) | Action::Branch(_) => {
                let kind = step.kind();
                self.open(run);
                self.fail(Failure::new(
                    Code::UnsupportedStep,
                    format!("`{kind}` steps are not run by this version; the flow should have been refused at enrollment"),
                ));
            }
        }
    }

    fn open(&mut self, run: Run) {
        self.fx.push(Effect::RunOpened(run.clone()));
        self.st.run = Some(run);
    }

    /// Opens an outreach or task run; when it is held, records why.
    fn open_planned(&mut self, run: Run) {
        let hold = run.hold.clone();
        let (id, step, kind) = (run.id, run.step.clone(), run.step_type);
        self.open(run);
        if let Some(h) = hold {
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

    /// SPEC §3 steps 1–3: the scheduled instant of an outreach step or task, or a hold.
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
            let at = schedule(self.now, window, &zones, channel, &holidays, jitter, seed)
                .map_err(Failure::from)?;
            // What held the step past its entry, for the journey (the jitter is not a reason).
            let why = explain_opening(self.now, window, &zones, channel, &holidays).ok();
            Ok((at, why))
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
        // The first plan never happened, so this is still the one computation of §2.7.
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
        let Some(run) = self.st.run.clone() else {
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
            // Never current: they finish or fail when entered.
            StepKind::End | StepKind::Approval | StepKind::Fetch | StepKind::Branch => {}
        }
    }

    /// SPEC §3 step 4: at execution the windows are checked again. True when the step may go
    /// now; otherwise it is deferred to the next opening (or held) and the journey says so.
    fn gate(&mut self, run: &Run, kind: StepKind) -> bool {
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
                }
                self.journey(JourneyEntry::Deferred {
                    run: run.id,
                    step: run.step.clone(),
                    to: o.at,
                    reason: o.reason,
                    rule: o.rule,
                });
                false
            }
            Err(e) => {
                self.hold_current(run, kind, Failure::from(e));
                false
            }
        }
    }

    fn hold_current(&mut self, run: &Run, kind: StepKind, f: Failure) {
        let h = Hold {
            code: f.code,
            message: f.message,
        };
        if let Some(r) = self.st.run.as_mut() {
            r.hold = Some(h.clone());
        }
        self.record_hold(run.id, &run.step, kind, &h);
    }

    fn send(&mut self, run: &Run, kind: StepKind) {
        let channel = channel_of(kind);
        if let Some(reason) = self.unsendable(channel) {
            self.journey(JourneyEntry::Skipped {
                run: run.id,
                step: run.step.clone(),
                reason,
            });
            self.take_branch("skipped", None);
            return;
        }
        let (template, channel_params) = match self.flow.step(&run.step).map(|s| &s.action) {
            Some(Action::Email(p) | Action::Sms(p)) => (p.template.clone(), p.channel.clone()),
            _ => (String::new(), None),
        };
        let recipient = match kind {
            StepKind::Email => self.st.contact.email.clone(),
            _ => self.st.contact.phone.clone(),
        }
        .unwrap_or_default();
        let message_id = (kind == StepKind::Email).then(|| message_id(&self.st.id, run.id));
        self.fx.push(Effect::Dispatch(Dispatch {
            idempotency_key: self.key(run.id),
            run: run.id,
            step: run.step.clone(),
            channel,
            recipient,
            template,
            input: self.st.input.clone(),
            channel_params,
            message_id,
        }));
        self.take_branch("then", None);
    }

    fn create_task(&mut self, run: &Run) {
        let Some(step) = self.flow.step(&run.step) else {
            return;
        };
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
        let params = task_params_json(step);
        self.fx.push(Effect::TaskCreated(Task {
            idempotency_key: self.key(run.id),
            run: run.id,
            step: run.step.clone(),
            step_type: run.step_type.to_string(),
            params,
            input: self.st.input.clone(),
            due_by,
        }));
        if let Some(r) = self.st.run.as_mut() {
            r.task = Some(TaskPhase::Open);
            r.until = due_by;
        }
    }

    // ----- leaving runs ----------------------------------------------------------------------

    /// Closes the current run on `branch` and goes where it is wired; an unwired branch
    /// completes the enrollment (SPEC §5.4 for `timeout`). `skipped` continues at `then`.
    fn take_branch(&mut self, branch: &str, woken_by: Option<String>) {
        let next = self.current_step().and_then(|s| {
            let key = if branch == "skipped" { "then" } else { branch };
            s.next(key).cloned()
        });
        self.close_run(Some(branch), woken_by);
        match next {
            Some(step) => self.pending = Some(step),
            None => self.complete(None),
        }
    }

    fn close_run(&mut self, branch: Option<&str>, woken_by: Option<String>) {
        if let Some(run) = self.st.run.take() {
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
            f.step = self.current.clone();
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

    /// Keeps the signal that ends the current `wait_for` run on the enrollment (SPEC §5.5).
    fn woken(&mut self, signal: &str, branch: &str, payload: RecordedPayload) {
        if let Some(run) = &self.st.run {
            self.st.woken = Some(Woken {
                run: run.id,
                step: run.step.clone(),
                signal: signal.to_string(),
                branch: branch.to_string(),
                payload,
            });
        }
    }

    // ----- timing ----------------------------------------------------------------------------

    fn key(&self, run: u64) -> String {
        format!("{}:{}", self.st.id, run)
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

    /// SPEC §2.3/§4/§11: the zones a step of `channel` uses, and the account's quiet-hours
    /// place rule for SMS and calls.
    fn zones(&self, channel: Channel) -> Result<ResolvedZones, Failure> {
        let sender = self.sender_zone()?;
        resolve_zones_with(
            self.flow.settings.send_window.as_ref(),
            &self.recipient(),
            &sender,
            channel,
            &self.ctx.quiet_hours,
        )
        .map_err(Failure::from)
    }

    /// SPEC §11: the flow's holidays for this contact, `contact` resolved to the contact's
    /// `country`, else its phone number's region; and what `contact` became.
    fn holidays(&self) -> (Cow<'_, Holidays>, ContactCalendar) {
        contact_holidays(self.flow, &self.st.contact)
    }

    /// The zone of a `wait` or a timeout without `tz` (SPEC §2.3; the phone-inferred zone
    /// counts for SMS only, so not here).
    fn arithmetic_zone(&self) -> Result<Zone, Failure> {
        Ok(self.zones(Channel::Email)?.arithmetic)
    }

    /// Resolves a `wait` target or a timeout deadline from `from`, enforcing `max_wait` on the
    /// ones computed at run time (SPEC §5.7). The result may be in the past; callers clamp.
    fn deadline(&self, d: &Deadline, from: DateTime<Utc>) -> Result<DateTime<Utc>, Failure> {
        let zone = match &d.tz {
            Some(z) => *z,
            None => self.arithmetic_zone()?,
        };
        let (holidays, _) = self.holidays();
        let holidays: &Holidays = &holidays;
        let contact = self.expr_contact();
        let expr_failure = |e: crate::flow::expr::ExprError| {
            Failure::new(Code::ExprType, format!("{e}; check the enrollment input"))
        };
        let (target, computed) = match &d.target {
            Target::For(DurationSlot::Literal(dur)) => (dur.add_to(from, &zone, holidays), false),
            Target::For(DurationSlot::Expr(e)) => {
                let ms = eval_millis(e, &self.st.input, &contact).map_err(expr_failure)?;
                (from + chrono::Duration::milliseconds(ms), true)
            }
            Target::Until(UntilSlot::Literal(u)) => (u.resolve(from, &zone, holidays), true),
            Target::Until(UntilSlot::Expr(e)) => (
                eval_instant(e, &self.st.input, &contact).map_err(expr_failure)?,
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

    /// SPEC §5.7: a `wait_for` without a timeout gets `max_wait` as its timeout.
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

/// SPEC §11: `flow`'s holidays for `contact`, `contact` resolved to the contact's `country`,
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
fn channel_of(kind: StepKind) -> Channel {
    match kind {
        StepKind::Sms => Channel::Sms,
        StepKind::Call => Channel::Call,
        StepKind::LinkedinConnect | StepKind::LinkedinMessage => Channel::Linkedin,
        _ => Channel::Email,
    }
}

/// A task's parameters as shown in `ListTasks`.
fn task_params_json(step: &Step) -> serde_json::Value {
    let (p, connected) = match &step.action {
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
        Input::Complete { .. } => "complete",
        Input::ContactChanged(_) => "contact_changed",
    }
}
