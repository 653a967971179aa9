//! `EnrollmentService.Explain` (docs/operations.md): why an enrollment is where it is, as a pure function
//! of its state, its flow and `now`.
//!
//! [`WaitReason`] is the one list of reasons: Explain answers with it and the
//! `nudge_waiting_runs` gauge counts by it, so the two never disagree. The reason is derived,
//! not stored: a step scheduled at entry for the next opening waits for whichever window is
//! closed *now* (a holiday first, then the send window, then the SMS window), and the same
//! arithmetic that scheduled it answers the question.
//!
//! Every reason of docs/operations.md is answered here: `cap` from the capacity deferral on the run,
//! `approval` and `fetch` from their runs (the link's expiry, the attempt), calendar holidays
//! and place quiet-hours rules through the window arithmetic.

use crate::code::Code;
use crate::engine::interpret::channel_of;
use crate::engine::state::{EnrollmentState, Run, Status, TaskPhase};
use crate::flow::model::{Action, StepKind};
use crate::flow::Flow;
use crate::timing::{
    is_open, next_opening, resolve_zones_with, Channel, Holidays, QuietHours, Recipient,
    ResolvedZones, Zone,
};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::fmt;

/// What a live enrollment waits for (docs/operations.md). The order is the order of that page's list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WaitReason {
    /// A `wait`'s wake time, a timeout, a jittered send time, or due now.
    Timer,
    /// A `wait_for`'s events, or an open task's outcome.
    Signal,
    /// The flow's send window is closed in its zone.
    Window,
    /// The SMS window (08:00–21:00 in the recipient's zones) is closed.
    QuietHours,
    /// A holiday closes the send window (or a holiday calendar's, docs/timing.md, "Holiday calendars
    /// and quiet hours").
    Holiday,
    /// The sender's capacity is used up (per-sender caps, docs/capacity.md).
    Cap,
    /// The step cannot be planned (`ZONE_UNKNOWN`, `NO_OPENING`): a person must fix the contact.
    Held,
    /// An approval waits for a person's decision (docs/flows.md, "approval").
    Approval,
    /// A fetch waits for another system's answer or its next attempt (docs/flows.md, "fetch").
    Fetch,
    /// An operator paused the enrollment.
    Paused,
}

impl WaitReason {
    /// Every reason, for a gauge that shows zero for each one absent.
    pub const ALL: [WaitReason; 10] = [
        WaitReason::Timer,
        WaitReason::Signal,
        WaitReason::Window,
        WaitReason::QuietHours,
        WaitReason::Holiday,
        WaitReason::Cap,
        WaitReason::Held,
        WaitReason::Approval,
        WaitReason::Fetch,
        WaitReason::Paused,
    ];

    /// The spelling in the spec, the metric label and the console.
    pub const fn as_str(self) -> &'static str {
        match self {
            WaitReason::Timer => "timer",
            WaitReason::Signal => "signal",
            WaitReason::Window => "window",
            WaitReason::QuietHours => "quiet_hours",
            WaitReason::Holiday => "holiday",
            WaitReason::Cap => "cap",
            WaitReason::Held => "held",
            WaitReason::Approval => "approval",
            WaitReason::Fetch => "fetch",
            WaitReason::Paused => "paused",
        }
    }
}

impl fmt::Display for WaitReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Explain's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Explanation {
    /// What it waits for; `None` when it is finished (or not started).
    pub reason: Option<WaitReason>,
    /// The current run's step, when there is one.
    pub step: Option<String>,
    /// The current run's id.
    pub run: Option<u64>,
    /// Until when: the wake time, the opening, the timeout. `None` when only a person or a
    /// signal without a deadline can move it.
    pub until: Option<DateTime<Utc>>,
    /// The zone `until` and the closed window are read in.
    pub zone: Option<String>,
    /// A `wait_for`'s events.
    pub events: Vec<String>,
    /// A held step's code (`ZONE_UNKNOWN`, `NO_OPENING`).
    pub code: Option<Code>,
    /// The answer in one sentence a person understands.
    pub sentence: String,
    /// The current step's variant this contact gets, when the step has variants.
    pub variant: Option<String>,
}

impl Explanation {
    fn new(reason: Option<WaitReason>, sentence: String) -> Explanation {
        Explanation {
            reason,
            step: None,
            run: None,
            until: None,
            zone: None,
            events: Vec::new(),
            code: None,
            sentence,
            variant: None,
        }
    }
}

/// Why `state` (running `flow`) is where it is at `now`.
pub fn explain(state: &EnrollmentState, flow: &Flow, now: DateTime<Utc>) -> Explanation {
    explain_with(state, flow, now, &QuietHours::federal())
}

/// [`explain()`] under the account's quiet-hours policy (docs/timing.md, "Holiday calendars and quiet hours"), so a place rule that holds
/// an SMS or call is named (`US-FL`).
pub fn explain_with(
    state: &EnrollmentState,
    flow: &Flow,
    now: DateTime<Utc>,
    quiet: &QuietHours,
) -> Explanation {
    explain_in(state, flow, now, quiet, None)
}

/// [`explain_with`] knowing which step-experiment variants of the flow take no new contacts,
/// so the variant it names is the one the contact would get.
pub fn explain_in(
    state: &EnrollmentState,
    flow: &Flow,
    now: DateTime<Utc>,
    quiet: &QuietHours,
    stopped: Option<&super::variant::Stopped>,
) -> Explanation {
    match state.status {
        Status::Completed => {
            return Explanation::new(
                None,
                match &state.outcome {
                    Some(o) => format!("Completed with outcome `{o}`; it waits for nothing."),
                    None => "Completed; it waits for nothing.".to_string(),
                },
            )
        }
        Status::Exited => {
            return Explanation::new(
                None,
                format!(
                    "Exited ({}); it waits for nothing.",
                    state.reason.as_deref().unwrap_or("no reason given")
                ),
            )
        }
        Status::Failed => {
            return Explanation::new(
                None,
                format!(
                    "Failed: {}",
                    state.reason.as_deref().unwrap_or("no reason recorded")
                ),
            )
        }
        Status::Active | Status::Paused => {}
    }
    let Some(run) = &state.run else {
        return Explanation::new(None, "Not started yet.".to_string());
    };
    let mut e = running(state, flow, run, now, quiet);
    e.step = Some(run.step.clone());
    e.run = Some(run.id);
    if let Some(v) = super::variant::of(flow, &run.step, state, stopped) {
        e.sentence = format!(
            "{} Its variant of `{}` is `{}`.",
            e.sentence, run.step, v.name
        );
        // A stop changes who gets what: say which variants take no new contacts.
        let halted: Vec<String> = flow
            .experiment_of(&run.step)
            .and_then(|(key, _, _)| stopped.and_then(|s| s.get(&key)))
            .map(|names| names.iter().map(|n| format!("`{n}`")).collect())
            .unwrap_or_default();
        if !halted.is_empty() {
            e.sentence = format!(
                "{} Stopped (taking no new contacts): {}.",
                e.sentence,
                halted.join(", ")
            );
        }
        e.variant = Some(v.name.clone());
    }
    if state.status == Status::Paused {
        // Paused wins: nothing fires until an operator resumes, whatever the run waits for.
        let then = e.sentence.trim_end_matches('.');
        e.sentence = format!(
            "Paused by an operator at step `{}`; nothing happens until it is resumed (then: {}).",
            run.step,
            lower_first(then)
        );
        e.reason = Some(WaitReason::Paused);
    }
    e
}

/// The reason of the current run of a live enrollment.
fn running(
    state: &EnrollmentState,
    flow: &Flow,
    run: &Run,
    now: DateTime<Utc>,
    quiet: &QuietHours,
) -> Explanation {
    let step = &run.step;
    if let Some(hold) = &run.hold {
        let mut e = Explanation::new(
            Some(WaitReason::Held),
            format!(
                "Step `{step}` is held ({}): {}. It moves when the contact is fixed or an operator moves it.",
                hold.code, hold.message.trim_end_matches('.')
            ),
        );
        e.code = Some(hold.code);
        return e;
    }
    let zones = |channel| zones_of(state, flow, channel, quiet);
    match run.step_type {
        StepKind::Wait => {
            let zone = wait_zone(state, flow, step);
            let mut e = Explanation::new(
                Some(WaitReason::Timer),
                match run.until {
                    Some(t) => format!(
                        "Waiting at step `{step}` until {} ({}).",
                        local(t, zone.as_ref()),
                        zone_name(zone.as_ref())
                    ),
                    None => format!("Waiting at step `{step}`."),
                },
            );
            e.until = run.until;
            e.zone = zone.map(|z| z.name());
            e
        }
        StepKind::WaitFor => {
            let zone = wait_zone(state, flow, step);
            let events = run.events.join(" or ");
            let mut e = Explanation::new(
                Some(WaitReason::Signal),
                match run.until {
                    Some(t) => format!(
                        "Waiting at step `{step}` for {events}; it times out at {} ({}).",
                        local(t, zone.as_ref()),
                        zone_name(zone.as_ref())
                    ),
                    None => format!("Waiting at step `{step}` for {events}, with no timeout."),
                },
            );
            e.until = run.until;
            e.zone = zone.map(|z| z.name());
            e.events = run.events.clone();
            e
        }
        // A person decides through the signed link (or `Decide`); the link may stop working
        // before the timeout (`link_ttl`), which a person chasing the approver needs to know.
        StepKind::Approval => {
            let link = match run.link_expires {
                Some(x) if x <= now => format!(" (its link expired at {} UTC)", local(x, None)),
                Some(x) => format!(" (its link works until {} UTC)", local(x, None)),
                None => String::new(),
            };
            let mut e = Explanation::new(
                Some(WaitReason::Approval),
                match run.until {
                    Some(t) => format!(
                        "Waiting at step `{step}` for a person to approve or reject{link}; it times out at {} UTC.",
                        local(t, None)
                    ),
                    None => format!(
                        "Waiting at step `{step}` for a person to approve or reject{link}."
                    ),
                },
            );
            e.until = run.until;
            e
        }
        // A fetch waits for the other system's answer to the attempt in flight, or for its
        // next attempt's backoff to end (the run's wake time).
        StepKind::Fetch => {
            let until = run.wake_at();
            let sentence = match (&run.fetch, until) {
                (Some(call), Some(at)) if at > now && call.attempt > 1 => format!(
                    "Waiting at step `{step}` to retry: attempt {} of {} goes at {} UTC.",
                    call.attempt,
                    call.attempts,
                    local(at, None)
                ),
                (Some(call), _) => format!(
                    "Waiting at step `{step}` for another system's answer (attempt {} of {}).",
                    call.attempt, call.attempts
                ),
                (None, _) => format!("Waiting at step `{step}` for another system's answer."),
            };
            let mut e = Explanation::new(Some(WaitReason::Fetch), sentence);
            e.until = until;
            e
        }
        kind if run.task == Some(TaskPhase::Open) => {
            let mut e = Explanation::new(
                Some(WaitReason::Signal),
                match run.until {
                    Some(t) => format!(
                        "Waiting for the outcome of the {kind} task `{step}`; it times out at {}.",
                        local(t, None)
                    ),
                    None => format!("Waiting for the outcome of the {kind} task `{step}`."),
                },
            );
            e.until = run.until;
            e
        }
        kind if kind.is_outreach() || kind.is_task() => {
            let holidays = crate::engine::interpret::contact_holidays(flow, &state.contact).0;
            outreach(flow, run, kind, now, zones(channel_of(kind)), &holidays)
        }
        // `branch` and `end` are never current (they finish when entered): said plainly.
        _ => {
            let mut e = Explanation::new(
                Some(WaitReason::Timer),
                format!("At step `{step}`, due now."),
            );
            e.until = run.wake_at();
            e
        }
    }
}

/// An outreach step or a scheduled task, waiting for its time: the first closed window at
/// `now` names the reason; all open means jitter (or due now) and the reason is `timer`.
fn outreach(
    flow: &Flow,
    run: &Run,
    kind: StepKind,
    now: DateTime<Utc>,
    zones: Option<ResolvedZones>,
    holidays: &Holidays,
) -> Explanation {
    let step = &run.step;
    let channel = channel_of(kind);
    let what = if kind.is_task() {
        format!("the {kind} task `{step}` is created")
    } else {
        format!("the {kind} of step `{step}` goes")
    };
    let target = run.wake_at();
    let mut e = Explanation::new(Some(WaitReason::Timer), String::new());
    e.until = target;
    let Some(zones) = zones else {
        e.sentence = format!("Waiting until {what}; its zone no longer resolves.");
        return e;
    };
    let window = flow.settings.send_window.as_ref();
    let window_zone = window.map(|_| zones.window.unwrap_or(zones.arithmetic));
    let opening = |h: &Holidays| next_opening(now, window, &zones, channel, h).ok();
    let Some(target) = target.filter(|t| *t > now) else {
        e.sentence = format!("Due now: {what} when the planner picks it up.");
        e.zone = window_zone.map(|z| z.name());
        return e;
    };
    // Capacity: a run deferred because the sender's cap is used up answers
    // `WaitReason::Cap` here, before the windows are asked; its wake is the computed instant
    // the slot frees (windows applied).
    if let Some(cap) = run
        .deferred_reason
        .filter(|_| run.deferred_to == Some(target))
    {
        e.reason = Some(WaitReason::Cap);
        e.zone = window_zone.map(|z| z.name());
        e.sentence = format!(
            "The sender's capacity is used up ({cap}); {what} at {} when a slot frees.",
            local(target, window_zone.as_ref())
        );
        return e;
    }
    let send_only = ResolvedZones {
        sms: Vec::new(),
        ..zones.clone()
    };
    let send_open = is_open(now, window, &send_only, Channel::Email, holidays);
    // A holiday: the opening is later with the holidays than without them.
    if let (Some(wz), false) = (window_zone, send_open) {
        if let (Some(with), Some(without)) = (opening(holidays), opening(&Holidays::none())) {
            if with > without {
                let day = wz.to_local(now).date();
                e.reason = Some(WaitReason::Holiday);
                e.zone = Some(wz.name());
                e.sentence = format!(
                    "Send window closed for a holiday ({}) in {}; {what} at {} ({}).",
                    holiday_named(holidays, day, wz.to_local(with).date()),
                    wz,
                    local(target, Some(&wz)),
                    wz
                );
                return e;
            }
        }
    }
    if let (Some(wz), false) = (window_zone, send_open) {
        e.reason = Some(WaitReason::Window);
        e.zone = Some(wz.name());
        e.sentence = format!(
            "Send window closed in {wz} until {}; {what} then.",
            local(target, Some(&wz))
        );
        return e;
    }
    // The SMS window, zone by zone: the first one closed now is the one named.
    for z in &zones.sms {
        let one = ResolvedZones {
            arithmetic: *z,
            window: None,
            sms: vec![*z],
            place: zones.place.clone(),
            no_number: zones.no_number,
        };
        if !is_open(now, None, &one, channel, &Holidays::none()) {
            e.reason = Some(WaitReason::QuietHours);
            e.zone = Some(z.name());
            // A place rule (docs/timing.md, "Holiday calendars and quiet hours") is named when it is what is closed: the federal hours
            // alone would be open.
            let federal = ResolvedZones {
                place: None,
                ..one.clone()
            };
            let rule = zones
                .place
                .as_ref()
                .filter(|_| is_open(now, None, &federal, channel, &Holidays::none()))
                .map(|p| format!(" (quiet hours rule {})", p.rule))
                .unwrap_or_default();
            let what_window = if channel == Channel::Call {
                "Quiet hours for calls"
            } else {
                "SMS window"
            };
            e.sentence = format!(
                "{what_window} closed in {z}{rule} until {}; {what} then.",
                local_time(target, z)
            );
            return e;
        }
    }
    let zone = window_zone.or(zones.sms.first().copied());
    e.zone = zone.map(|z| z.name());
    e.sentence = format!(
        "Scheduled: {what} at {} ({}), inside its windows (the delay is the flow's jitter).",
        local(target, zone.as_ref()),
        zone_name(zone.as_ref())
    );
    e
}

/// The holiday dates between `from` and `to` (local), as written: `2026-12-25`.
fn holiday_named(h: &Holidays, from: chrono::NaiveDate, to: chrono::NaiveDate) -> String {
    // A calendar's day is named (`2026-12-25 Christmas Day`); a listed date is the date.
    let name = |d: &chrono::NaiveDate| {
        h.calendars()
            .iter()
            .find_map(|code| {
                crate::timing::holiday_calendars::calendar(code)?
                    .days
                    .get(d)
                    .copied()
            })
            .map_or_else(|| d.to_string(), |n| format!("{d} {n}"))
    };
    let days: Vec<String> = h.in_range(from, to).map(name).collect();
    if days.is_empty() {
        "a listed date".to_string()
    } else {
        days.join(", ")
    }
}

/// The zones a step of `channel` uses, as the interpreter resolves them; `None` when the
/// sender's zone or the contact's phone no longer parses (the interpreter then holds).
fn zones_of(
    state: &EnrollmentState,
    flow: &Flow,
    channel: Channel,
    quiet: &QuietHours,
) -> Option<ResolvedZones> {
    let sender = Zone::parse(&state.sender_tz).ok()?;
    let recipient = Recipient {
        tz: state
            .contact
            .tz
            .as_deref()
            .and_then(|t| Zone::parse(t).ok()),
        phone: state.contact.phone.clone(),
    };
    resolve_zones_with(
        flow.settings.send_window.as_ref(),
        &recipient,
        &sender,
        channel,
        quiet,
    )
    .ok()
}

/// The zone a `wait` or `wait_for` timeout resolves in: the step's `tz`, else the zone rule.
fn wait_zone(state: &EnrollmentState, flow: &Flow, step: &str) -> Option<Zone> {
    let explicit = flow.step(step).and_then(|s| match &s.action {
        Action::Wait(d) => d.tz,
        _ => s.timeout().and_then(|d| d.tz),
    });
    explicit.or_else(|| {
        zones_of(state, flow, Channel::Email, &QuietHours::federal()).map(|z| z.arithmetic)
    })
}

/// `2026-12-04 09:00` in `zone` (UTC without one).
fn local(t: DateTime<Utc>, zone: Option<&Zone>) -> String {
    let z = zone.copied().unwrap_or(Zone::Utc);
    z.to_local(t).format("%Y-%m-%d %H:%M").to_string()
}

/// `08:00`, with the date when it is not the same local day as… always the date: a person
/// reading "until 08:00" on Friday evening needs to know it means Monday.
fn local_time(t: DateTime<Utc>, zone: &Zone) -> String {
    zone.to_local(t).format("%H:%M on %a %Y-%m-%d").to_string()
}

fn zone_name(zone: Option<&Zone>) -> String {
    zone.map_or_else(|| "UTC".to_string(), Zone::name)
}

fn lower_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_lowercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}
