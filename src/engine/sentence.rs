//! Every journey entry in one sentence a person understands ("why didn't Ann get the
//! follow-up?"), with its times in the contact's zone and the zone named.
//!
//! [`sentence()`] is the one place an entry becomes words: `GetJourney`, `ListJourney` and
//! Watch carry it as the entry's `summary`, and the console shows the same words. It reads only
//! the entry, its time and the [`ShownZone`]: no flow, no store, so a page of entries costs no
//! more than finding the zone once.
//!
//! The parts: [`ShownZone`] (which zone the times are in, and why that one), [`local_time`]
//! (a time as a person reads it), [`step_of`] (the step an entry is about) and the cause,
//! written per kind below.

use crate::engine::effect::{AckOutcome, Effect, JourneyEntry, PauseReason, SignalEffect};
use crate::engine::outside::Decision;
use crate::engine::state::{EnrollmentState, Run, TaskPhase};
use crate::engine::JourneyKind;
use crate::flow::events::Event;
use crate::flow::StepKind;
use crate::inbound::intent::{Intent, ReplyIntent};
use crate::routing::Dropped;
use crate::timing::{Channel, ClosedBy, Zone};
use chrono::{DateTime, Datelike, Utc};

/// Where the zone a journey is shown in comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ZoneSource {
    /// The contact's set zone.
    Contact,
    /// The contact has no zone: its phone number's (the first, when the number spans several).
    Phone,
    /// The contact has neither: the sender's zone.
    Sender,
    /// Nothing parses: UTC.
    Utc,
}

/// The zone a journey's times are shown in, and why that one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShownZone {
    /// The zone.
    pub zone: Zone,
    /// Whose it is.
    pub source: ZoneSource,
}

impl ShownZone {
    /// The contact's set zone; else its phone number's zone (the first, when it maps to
    /// several); else the sender's; else UTC. A zone that does not parse counts as none.
    pub fn of(contact_tz: Option<&str>, phone: Option<&str>, sender_tz: Option<&str>) -> ShownZone {
        let shown = |zone, source| ShownZone { zone, source };
        if let Some(z) = contact_tz.and_then(|t| Zone::parse(t).ok()) {
            return shown(z, ZoneSource::Contact);
        }
        if let Some(z) = phone
            .and_then(|p| crate::timing::phone_zones(p).ok())
            .and_then(|found| found.zones.first().copied())
        {
            return shown(z, ZoneSource::Phone);
        }
        match sender_tz.and_then(|t| Zone::parse(t).ok()) {
            Some(z) => shown(z, ZoneSource::Sender),
            None => shown(Zone::Utc, ZoneSource::Utc),
        }
    }

    /// The zone of an enrollment's own contact view and sender.
    pub fn of_state(state: &EnrollmentState) -> ShownZone {
        ShownZone::of(
            state.contact.tz.as_deref(),
            state.contact.phone.as_deref(),
            Some(&state.sender_tz),
        )
    }

    /// How the zone is named after a time: `America/Denver`, `Europe/Prague, the sender's
    /// zone: the contact has none`.
    pub fn label(&self) -> String {
        let name = self.zone.name();
        match self.source {
            ZoneSource::Contact => name,
            ZoneSource::Phone => format!("{name}, from the contact's phone number"),
            ZoneSource::Sender => format!("{name}, the sender's zone: the contact has none"),
            ZoneSource::Utc => "UTC: no zone is known".to_string(),
        }
    }
}

/// `t` as a person reads it in `zone`, next to an entry written at `at`: `09:00` on the same
/// local day, `Tue 10 Dec, 09:00` on another, `Tue 10 Dec 2025, 09:00` in another year.
pub fn local_time(t: DateTime<Utc>, at: DateTime<Utc>, zone: &Zone) -> String {
    let (t, at) = (zone.to_local(t), zone.to_local(at));
    if t.date() == at.date() {
        t.format("%H:%M").to_string()
    } else if t.year() == at.year() {
        t.format("%a %-d %b, %H:%M").to_string()
    } else {
        t.format("%a %-d %b %Y, %H:%M").to_string()
    }
}

/// The entry's own time in `zone`, whole: `Mon 9 Dec 2024, 14:05`.
pub fn entry_time(at: DateTime<Utc>, zone: &Zone) -> String {
    zone.to_local(at).format("%a %-d %b %Y, %H:%M").to_string()
}

/// The step an entry is about, when it names one.
pub fn step_of(effect: &Effect) -> Option<&str> {
    Some(match effect {
        Effect::RunOpened(run) => &run.step,
        Effect::RunClosed { step, .. }
        | Effect::ApprovalRequested { step, .. }
        | Effect::Dispatch(crate::engine::Dispatch { step, .. })
        | Effect::TaskCreated(crate::engine::Task { step, .. }) => step,
        Effect::Journey(entry) => match entry {
            JourneyEntry::Enrolled { step }
            | JourneyEntry::Deferred { step, .. }
            | JourneyEntry::Held { step, .. }
            | JourneyEntry::Released { step, .. }
            | JourneyEntry::Skipped { step, .. }
            | JourneyEntry::TaskOutcome { step, .. }
            | JourneyEntry::DispatchAcked { step, .. }
            | JourneyEntry::DeliveryFailed { step, .. } => step,
            JourneyEntry::Moved { to, .. } => to,
            JourneyEntry::Migrated { to_step, .. } => to_step,
            JourneyEntry::Failed { step, .. } => step.as_deref()?,
            _ => return None,
        },
        _ => return None,
    })
}

/// A stored entry (`kind` and its JSON `detail`, as the journey keeps them) read back into the
/// engine's effect; `None` for an entry this release cannot read.
pub fn read_stored(
    kind: &str,
    detail: &serde_json::Map<String, serde_json::Value>,
) -> Option<Effect> {
    let value = serde_json::Value::Object(detail.clone());
    if detail.contains_key("event") {
        serde_json::from_value::<JourneyEntry>(value)
            .ok()
            .map(Effect::Journey)
    } else {
        serde_json::from_value::<Effect>(value).ok()
    }
    .filter(|e| JourneyKind::of(e).as_str() == kind)
}

/// The sentence of a stored entry; an entry this release cannot read is named by its kind.
pub fn stored_sentence(
    kind: &str,
    detail: &serde_json::Map<String, serde_json::Value>,
    at: DateTime<Utc>,
    zone: &ShownZone,
) -> String {
    match read_stored(kind, detail) {
        Some(effect) => sentence(&effect, at, zone),
        None => format!("A `{kind}` entry: see its detail"),
    }
}

/// The entry in one sentence, its times in `zone` (named), `at` being when it was written.
pub fn sentence(effect: &Effect, at: DateTime<Utc>, zone: &ShownZone) -> String {
    let when = |t: DateTime<Utc>| format!("{} ({})", local_time(t, at, &zone.zone), zone.label());
    match effect {
        Effect::RunOpened(run) => run_opened(run, &when),
        Effect::RunClosed {
            step,
            branch,
            woken_by,
            ..
        } => match (branch.as_deref(), woken_by) {
            (None, _) => format!("Left step {step}"),
            (Some("then"), _) => format!("Step {step} done"),
            (Some("timeout"), _) => format!("Step {step} timed out"),
            (Some("exit"), _) => format!("Left step {step}: the enrollment exited"),
            (Some("moved"), _) => format!("Left step {step}: an operator moved the enrollment"),
            (Some("completed"), _) => format!("Left step {step}: the enrollment completed"),
            (Some("skipped"), _) => format!("Left step {step} without sending"),
            (Some("failed"), _) => format!("Left step {step}: the enrollment failed"),
            (Some(b), Some(_)) => format!("Step {step} ended on {}", event_words(b)),
            (Some(b), None) => format!("Step {step} went on by `{b}`"),
        },
        Effect::Dispatch(d) => {
            let to = match d.channel {
                Channel::Sms | Channel::Call => phone_for_people(&d.recipient),
                _ => d.recipient.clone(),
            };
            let variant = d
                .variant
                .as_ref()
                .map(|v| format!(" (variant {v})"))
                .unwrap_or_default();
            format!(
                "Sent {} *{}* to {to}{variant}",
                channel_words(d.channel),
                d.template
            )
        }
        Effect::DispatchHeld {
            channel,
            code,
            message,
            ..
        } => format!(
            "Nothing sent by {}: {} ({code})",
            channel_words(*channel),
            clause(message)
        ),
        Effect::TaskCreated(t) => {
            let kind = StepKind::ALL
                .into_iter()
                .find(|k| k.as_str() == t.step_type)
                .map_or_else(|| format!("{} task", t.step_type), task_words);
            let due = t
                .due_by
                .map(|d| format!(", due by {}", when(d)))
                .unwrap_or_default();
            let variant = t
                .variant
                .as_ref()
                .map(|v| format!(" (variant {v})"))
                .unwrap_or_default();
            format!("Created the {kind} of step {}{due}{variant}", t.step)
        }
        Effect::RaiseSignal { raises, .. } => format!(
            "The task's outcome raised {} in the contact's other enrollments",
            or_list(raises, "and", event_words)
        ),
        Effect::FetchRequested(f) => format!(
            "Calling {} {} (attempt {} of {})",
            f.call.method,
            f.call.url.split('?').next().unwrap_or_default(),
            f.attempt,
            f.call.attempts
        ),
        Effect::ApprovalRequested {
            step,
            title,
            expires_at,
            ..
        } => format!(
            "Asked a person to approve “{title}” at step {step}; the link works until {}",
            when(*expires_at)
        ),
        Effect::Journey(entry) => journey(entry, at, zone, &when),
    }
}

fn run_opened(run: &Run, when: &dyn Fn(DateTime<Utc>) -> String) -> String {
    let step = &run.step;
    if let Some(hold) = &run.hold {
        return format!(
            "Held at step {step} until the contact is fixed: {} ({})",
            clause(&hold.message),
            hold.code
        );
    }
    match run.step_type {
        StepKind::Wait => match run.until {
            Some(t) => format!("Waiting at step {step} — until {}", when(t)),
            None => format!("Waiting at step {step}"),
        },
        StepKind::WaitFor => {
            let events = or_list(&run.events, "or", event_words);
            match run.until {
                Some(t) => format!("Waiting at step {step} for {events} — until {}", when(t)),
                None => format!("Waiting at step {step} for {events}, with no timeout"),
            }
        }
        StepKind::Approval => match run.until {
            Some(t) => format!(
                "Waiting at step {step} for a person to approve or reject — until {}",
                when(t)
            ),
            None => format!("Waiting at step {step} for a person to approve or reject"),
        },
        StepKind::Fetch => match &run.fetch {
            Some(call) => format!(
                "Asking another system at step {step} (attempt {} of {})",
                call.attempt, call.attempts
            ),
            None => format!("Asking another system at step {step}"),
        },
        StepKind::Branch => format!("Choosing a branch at step {step}"),
        StepKind::End => format!("Reached the end, step {step}"),
        kind => {
            let what = if kind.is_task() {
                format!("The {} of step {step} is created", task_words(kind))
            } else {
                format!(
                    "The {} of step {step} goes",
                    channel_words(crate::engine::channel_of(kind))
                )
            };
            if run.task == Some(TaskPhase::Open) {
                return match run.until {
                    Some(t) => format!(
                        "The {} of step {step} is open — until {}",
                        task_words(kind),
                        when(t)
                    ),
                    None => format!("The {} of step {step} is open", task_words(kind)),
                };
            }
            let why = match run.wait_reason {
                Some(ClosedBy::Window) => ", when the send window opens".to_string(),
                Some(ClosedBy::Holiday) => ", after a holiday closes the send window".to_string(),
                Some(ClosedBy::QuietHours) => format!(
                    ", after {}{}",
                    quiet_words(kind),
                    rule_words(run.rule.as_deref())
                ),
                None => String::new(),
            };
            match run.deferred_to.or(run.scheduled) {
                Some(t) if t > run.entered => format!("{what} {}{why}", when(t)),
                _ => format!("{what} now"),
            }
        }
    }
}

fn journey(
    entry: &JourneyEntry,
    at: DateTime<Utc>,
    zone: &ShownZone,
    when: &dyn Fn(DateTime<Utc>) -> String,
) -> String {
    match entry {
        JourneyEntry::Enrolled { step } => format!("Enrolled; starting at step {step}"),
        JourneyEntry::Paused {
            reason: None,
            until,
            ..
        } => match until {
            Some(t) => format!("Paused by an operator until {}", when(*t)),
            None => "Paused by an operator".to_string(),
        },
        JourneyEntry::Paused {
            reason: Some(PauseReason::OutOfOffice),
            until,
            note,
        } => {
            let until = until
                .map(|t| format!(" until {}", when(t)))
                .unwrap_or_default();
            let note = note.as_ref().map(|n| format!(" ({n})")).unwrap_or_default();
            format!("Paused: the contact is out of office{until}{note}")
        }
        JourneyEntry::Resumed { reason: None } => "Resumed by an operator".to_string(),
        JourneyEntry::Resumed {
            reason: Some(PauseReason::OutOfOffice),
        } => "Resumed: the out-of-office pause ended".to_string(),
        JourneyEntry::Moved { from, to } => match from {
            Some(from) => format!("An operator moved it from step {from} to step {to}"),
            None => format!("An operator moved it to step {to}"),
        },
        JourneyEntry::Migrated {
            to_version,
            from_step,
            to_step,
            ..
        } => {
            if from_step == to_step {
                format!("Moved to version {to_version} of the flow, still at step {to_step}")
            } else {
                format!(
                    "Moved to version {to_version} of the flow: step {from_step} is now {to_step}"
                )
            }
        }
        JourneyEntry::Exited { reason } => format!("Exited: {}", exit_words(reason)),
        JourneyEntry::Completed { outcome } => match outcome {
            Some(o) => format!("Completed with outcome {o}"),
            None => "Completed".to_string(),
        },
        JourneyEntry::Failed {
            code,
            step,
            message,
        } => match step {
            Some(step) => format!("Failed at step {step}: {} ({code})", clause(message)),
            None => format!("Failed: {} ({code})", clause(message)),
        },
        JourneyEntry::Deferred {
            step,
            to,
            reason,
            rule,
            cap,
            ..
        } => match (cap, reason) {
            (Some(cap), _) => format!(
                "Held: {} until {} (step {step})",
                cap_words(*cap),
                when(*to)
            ),
            // The zone is named before the time when it is the contact's own.
            (None, Some(ClosedBy::QuietHours)) if zone.source == ZoneSource::Contact => format!(
                "Held: quiet hours{} in {} until {} (step {step})",
                rule_words(rule.as_deref()),
                zone.zone.name(),
                local_time(*to, at, &zone.zone)
            ),
            (None, Some(ClosedBy::QuietHours)) => format!(
                "Held: quiet hours{} until {} (step {step})",
                rule_words(rule.as_deref()),
                when(*to)
            ),
            (None, Some(ClosedBy::Window)) => format!(
                "Held: the send window is closed until {} (step {step})",
                when(*to)
            ),
            (None, Some(ClosedBy::Holiday)) => format!(
                "Held: a holiday closes the send window until {} (step {step})",
                when(*to)
            ),
            (None, None) => format!("Held step {step} until {}", when(*to)),
        },
        JourneyEntry::Held {
            step,
            code,
            message,
            ..
        } => format!(
            "Held at step {step} until the contact is fixed: {} ({code})",
            clause(message)
        ),
        JourneyEntry::Released {
            step, scheduled, ..
        } => format!(
            "Released step {step}, now that the contact allows it: it goes {}",
            when(*scheduled)
        ),
        JourneyEntry::Skipped { step, reason, .. } => {
            format!("Skipped step {step}: {}", clause(reason))
        }
        JourneyEntry::TaskOutcome { step, outcome, .. } => {
            format!("The task of step {step} was done: {outcome}")
        }
        JourneyEntry::Signal { intent, effect, .. } => signal(intent.as_ref(), effect, when),
        JourneyEntry::Rejected { input, reason } => {
            format!("Refused {input}: {}", clause(reason))
        }
        JourneyEntry::FetchAttempt {
            attempt,
            status,
            error,
            ms,
            ..
        } => match (status, error) {
            (Some(s), _) => format!("Attempt {attempt} answered HTTP {s} in {ms} ms"),
            (None, Some(e)) => format!("Attempt {attempt} failed after {ms} ms: {}", clause(e)),
            (None, None) => format!("Attempt {attempt} ended after {ms} ms without an answer"),
        },
        JourneyEntry::Decided { decision, by, .. } => {
            let what = match decision {
                Decision::Approved => "Approved",
                Decision::Rejected => "Rejected",
            };
            match by {
                Some(by) => format!("{what} by {by}"),
                None => what.to_string(),
            }
        }
        JourneyEntry::DispatchAcked {
            step,
            attempt,
            outcome,
            provider_message_id,
            failure,
            retry_at,
            gave_up,
            ..
        } => match outcome {
            AckOutcome::Sent => match provider_message_id {
                Some(id) => format!(
                    "The provider took the message of step {step} (attempt {attempt}, its id {id})"
                ),
                None => format!("The provider took the message of step {step} (attempt {attempt})"),
            },
            AckOutcome::Retry => {
                let why = failure
                    .as_ref()
                    .map(|f| format!(": {}", clause(f)))
                    .unwrap_or_default();
                match retry_at {
                    Some(t) => format!(
                        "Sending step {step} failed on attempt {attempt}{why}; it tries again at {}",
                        when(*t)
                    ),
                    None => format!(
                        "Sending step {step} failed on attempt {attempt}{why}; it tries again"
                    ),
                }
            }
            AckOutcome::Failed => {
                let why = failure
                    .as_ref()
                    .map(|f| format!(": {}", clause(f)))
                    .unwrap_or_default();
                let left = if *gave_up { ", no attempts left" } else { "" };
                format!("Gave up sending step {step} after attempt {attempt}{left}{why}")
            }
        },
        JourneyEntry::DeliveryFailed {
            step,
            provider,
            status,
            error_code,
            error,
            ..
        } => {
            let why = match (error_code, error) {
                (Some(c), Some(e)) => format!(" (error {c}: {})", clause(e)),
                (Some(c), None) => format!(" (error {c})"),
                (None, Some(e)) => format!(" ({})", clause(e)),
                (None, None) => String::new(),
            };
            format!("Not delivered: {provider} reports the message of step {step} {status}{why}")
        }
    }
}

fn signal(
    intent: Option<&ReplyIntent>,
    effect: &SignalEffect,
    when: &dyn Fn(DateTime<Utc>) -> String,
) -> String {
    let what = |branch: Option<&str>| {
        let mut out = match (branch, intent) {
            (Some(b), _) => event_words(b),
            (None, Some(_)) => "a reply".to_string(),
            (None, None) => "a signal".to_string(),
        };
        let named_by_branch = branch.is_some_and(|b| b.starts_with("intent:"));
        if let Some(r) = intent.filter(|_| !named_by_branch) {
            out.push_str(": ");
            out.push_str(intent_words(r.intent));
        }
        if let Some(r) = intent {
            if !r.evidence.is_empty() {
                out.push_str(" — ");
                out.push_str(
                    &r.evidence
                        .iter()
                        .map(|e| format!("“{e}”"))
                        .collect::<Vec<_>>()
                        .join(", "),
                );
            }
            if let Some(day) = r.resume_on {
                out.push_str(&format!("; it names {day} to resume"));
            }
            if let Some(other) = &r.referral {
                out.push_str(&format!("; it points to {}", other.email));
            }
        }
        out
    };
    match effect {
        SignalEffect::Woke { branch, .. } => format!("Woken by {}", what(Some(branch))),
        SignalEffect::Buffered { .. } => format!(
            "Kept {} for a later wait: nothing was waiting for it",
            what(None)
        ),
        SignalEffect::Consumed { branch, .. } => {
            format!("Took {}, kept from earlier", what(Some(branch)))
        }
        SignalEffect::Expired { why, .. } => match why {
            Dropped::Expired => "A kept signal expired unused after 7 days".to_string(),
            Dropped::BufferFull => {
                "A kept signal was dropped unused: 1,000 newer ones were kept".to_string()
            }
        },
        SignalEffect::IgnoredPaused => {
            format!("Ignored {}: the enrollment is paused", what(None))
        }
        SignalEffect::Noted { what: noted } => format!("Noted: {}", clause(noted)),
        SignalEffect::Paused { until } => {
            format!("An out-of-office reply paused it until {}", when(*until))
        }
        SignalEffect::Exited { reason } => format!("Exited: {}", exit_words(reason)),
    }
}

/// An event or `next` key as words: `reply:email` is "a reply by email".
fn event_words(event: &str) -> String {
    match Event::parse(event) {
        Ok(Event::Reply) => "a reply".into(),
        Ok(Event::ReplyEmail) => "a reply by email".into(),
        Ok(Event::ReplySms) => "a reply by SMS".into(),
        Ok(Event::ReplyLinkedin) => "a reply on LinkedIn".into(),
        Ok(Event::CallConnected) => "a connected call".into(),
        Ok(Event::ConnectionAccepted) => "an accepted LinkedIn connection".into(),
        Ok(Event::MeetingBooked) => "a booked meeting".into(),
        Ok(Event::AutoReply) => "an automatic reply".into(),
        Ok(Event::OutOfOffice) => "an out-of-office reply".into(),
        Ok(Event::Bounced) => "a bounce".into(),
        Ok(Event::MeetingCancelled) => "a cancelled meeting".into(),
        Ok(Event::Intent(i)) => format!("a reply read as {}", intent_words(i)),
        Ok(Event::Custom(key)) => format!("the event {key}"),
        Err(_) => format!("`{event}`"),
    }
}

fn intent_words(i: Intent) -> &'static str {
    match i {
        Intent::Interested => "interested",
        Intent::NotNow => "not now",
        Intent::NotInterested => "not interested",
        Intent::WrongPerson => "the wrong person",
        Intent::Unsubscribe => "unsubscribe",
        Intent::Other => "other",
    }
}

/// An exit reason as words: `opt_out:email` is "opted out of email".
fn exit_words(reason: &str) -> String {
    if let Some(channel) = reason.strip_prefix("opt_out:") {
        let channel = channel
            .parse::<Channel>()
            .map_or_else(|_| channel.to_string(), |c| channel_words(c).to_string());
        return format!("opted out of {channel}");
    }
    if let Some(event) = reason.strip_prefix("exit_on:") {
        return format!("{} ends this flow", event_words(event));
    }
    clause(reason)
}

fn channel_words(c: Channel) -> &'static str {
    match c {
        Channel::Email => "email",
        Channel::Sms => "SMS",
        Channel::Call => "call",
        Channel::Linkedin => "LinkedIn",
    }
}

fn task_words(kind: StepKind) -> String {
    match kind {
        StepKind::Call => "call task".into(),
        StepKind::LinkedinConnect => "LinkedIn connection task".into(),
        StepKind::LinkedinMessage => "LinkedIn message task".into(),
        other => format!("{other} task"),
    }
}

fn quiet_words(kind: StepKind) -> &'static str {
    if kind == StepKind::Call {
        "quiet hours for calls"
    } else {
        "SMS quiet hours"
    }
}

fn rule_words(rule: Option<&str>) -> String {
    rule.map(|r| format!(" (rule {r})")).unwrap_or_default()
}

fn cap_words(cap: crate::capacity::CapReason) -> &'static str {
    use crate::capacity::CapReason;
    match cap {
        CapReason::CapDaily => "the sender's daily cap is used up",
        CapReason::CapWeekly => "the sender's weekly cap is used up",
        CapReason::CapGap => "the sender's least gap between sends",
        CapReason::CapDomain => {
            "the sender's daily cap for the recipient's email domain is used up"
        }
    }
}

/// `a`, `a or b`, `a, b or c`.
fn or_list(items: &[String], and: &str, words: impl Fn(&str) -> String) -> String {
    let words: Vec<String> = items.iter().map(|i| words(i)).collect();
    match words.as_slice() {
        [] => "nothing".to_string(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} {and} {last}", rest.join(", ")),
    }
}

/// A message as a clause inside a sentence: without its closing full stop.
fn clause(text: &str) -> String {
    text.trim().trim_end_matches('.').to_string()
}

/// An E.164 number as people write it (`+1 303-555-1234`); anything else as it is.
fn phone_for_people(number: &str) -> String {
    phonenumber::parse(None, number)
        .ok()
        .filter(phonenumber::is_valid)
        .map(|n| {
            n.format()
                .mode(phonenumber::Mode::International)
                .to_string()
        })
        .unwrap_or_else(|| number.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capacity::CapReason;
    use crate::code::Code;
    use crate::engine::effect::RecordedPayload;
    use crate::engine::outside::{FetchCall, FetchRequest};
    use crate::engine::state::Hold;
    use crate::engine::{Dispatch, Task};
    use serde_json::json;

    fn t(text: &str) -> DateTime<Utc> {
        text.parse().unwrap()
    }

    /// Ann, in Denver (UTC−7 in December).
    fn denver() -> ShownZone {
        ShownZone::of(Some("America/Denver"), None, Some("Europe/Prague"))
    }

    /// Mon 9 Dec 2024, 14:05 in Denver: when most entries below are written.
    const AT: &str = "2024-12-09T21:05:00Z";
    /// Tue 10 Dec 2024, 09:00 in Denver.
    const TUE_9: &str = "2024-12-10T16:00:00Z";
    /// Tue 10 Dec 2024, 08:00 in Denver.
    const TUE_8: &str = "2024-12-10T15:00:00Z";

    fn run(step: &str, kind: StepKind) -> Run {
        Run {
            id: 2,
            step: step.into(),
            step_type: kind,
            entered: t(AT),
            until: None,
            scheduled: None,
            deferred_to: None,
            events: Vec::new(),
            task: None,
            pending_outcome: None,
            hold: None,
            moved: false,
            deferred_reason: None,
            wait_reason: None,
            rule: None,
            contact_holidays: None,
            fetch: None,
            link_expires: None,
        }
    }

    fn dispatch(channel: Channel, recipient: &str, template: &str) -> Dispatch {
        Dispatch {
            idempotency_key: "en_1:3".into(),
            run: 3,
            step: "sms_1".into(),
            channel,
            recipient: recipient.into(),
            template: template.into(),
            input: json!({"first_name": "Ann"}),
            channel_params: None,
            message_id: None,
            reservation: None,
            variant: None,
        }
    }

    fn fetch_call(attempt: u32) -> FetchCall {
        FetchCall {
            method: "GET".into(),
            url: "https://crm.example.com/leads/7?token=secret".into(),
            headers: Default::default(),
            body: None,
            timeout_ms: 5_000,
            response_limit: 65_536,
            attempts: 3,
            backoff_ms: 1_000,
            attempt,
        }
    }

    fn reply(intent: Intent, evidence: &[&str]) -> ReplyIntent {
        ReplyIntent {
            intent,
            confidence: 0.9,
            language: "en".into(),
            evidence: evidence.iter().map(|e| e.to_string()).collect(),
            resume_on: None,
            referral: None,
        }
    }

    fn entry(e: JourneyEntry) -> Effect {
        Effect::Journey(e)
    }

    fn signal(intent: Option<ReplyIntent>, effect: SignalEffect) -> Effect {
        entry(JourneyEntry::Signal {
            signal: "sg_1".into(),
            intent,
            effect,
        })
    }

    /// Every kind of entry, some in several shapes, with its sentence for Ann in Denver,
    /// written at [`AT`] unless a row says otherwise.
    fn table() -> Vec<(Effect, &'static str, &'static str)> {
        let wait = Run {
            until: Some(t(TUE_9)),
            ..run("wait_2d", StepKind::Wait)
        };
        let wait_for = Run {
            until: Some(t(TUE_9)),
            events: vec!["reply:email".into(), "meeting_booked".into()],
            ..run("listen", StepKind::WaitFor)
        };
        let quiet = Run {
            scheduled: Some(t(TUE_8)),
            wait_reason: Some(ClosedBy::QuietHours),
            rule: Some("US-FL".into()),
            ..run("sms_1", StepKind::Sms)
        };
        let now = Run {
            scheduled: Some(t(AT)),
            ..run("email_1", StepKind::Email)
        };
        let held = Run {
            hold: Some(Hold {
                code: Code::ZoneUnknown,
                message: "the contact has no zone and no phone number; set its tz.".into(),
            }),
            ..run("sms_1", StepKind::Sms)
        };
        let call = Run {
            scheduled: Some(t(TUE_9)),
            task: Some(TaskPhase::Scheduled),
            wait_reason: Some(ClosedBy::Window),
            ..run("call_1", StepKind::Call)
        };
        let open_task = Run {
            until: Some(t(TUE_9)),
            task: Some(TaskPhase::Open),
            ..run("connect", StepKind::LinkedinConnect)
        };
        let approval = Run {
            until: Some(t(TUE_9)),
            ..run("approve", StepKind::Approval)
        };
        let fetch = Run {
            fetch: Some(Box::new(fetch_call(1))),
            ..run("lookup", StepKind::Fetch)
        };
        let closed = |branch: Option<&str>, woken_by: Option<&str>| Effect::RunClosed {
            run: 2,
            step: "listen".into(),
            closed: t(AT),
            branch: branch.map(Into::into),
            woken_by: woken_by.map(Into::into),
        };
        let email = Dispatch {
            step: "email_1".into(),
            variant: Some("B".into()),
            ..dispatch(Channel::Email, "ann@example.com", "welcome")
        };
        let acked = |outcome, failure: Option<&str>, retry_at, gave_up| {
            entry(JourneyEntry::DispatchAcked {
                run: 3,
                step: "email_1".into(),
                dispatch: "dp_1".into(),
                attempt: 2,
                outcome,
                provider_message_id: (outcome == AckOutcome::Sent).then(|| "prov-9".into()),
                failure: failure.map(Into::into),
                retry_at,
                gave_up,
            })
        };
        let deferred = |reason, cap| {
            entry(JourneyEntry::Deferred {
                run: 3,
                step: "sms_1".into(),
                to: t(TUE_8),
                reason,
                rule: None,
                cap,
            })
        };
        vec![
            // run_opened, one per shape of step
            (Effect::RunOpened(wait), AT, "Waiting at step wait_2d — until Tue 10 Dec, 09:00 (America/Denver)"),
            (Effect::RunOpened(wait_for), AT, "Waiting at step listen for a reply by email or a booked meeting — until Tue 10 Dec, 09:00 (America/Denver)"),
            (Effect::RunOpened(Run { events: vec!["payment.received".into()], ..run("pay", StepKind::WaitFor) }), AT, "Waiting at step pay for the event payment.received, with no timeout"),
            (Effect::RunOpened(quiet), AT, "The SMS of step sms_1 goes Tue 10 Dec, 08:00 (America/Denver), after SMS quiet hours (rule US-FL)"),
            (Effect::RunOpened(now), AT, "The email of step email_1 goes now"),
            (Effect::RunOpened(held), AT, "Held at step sms_1 until the contact is fixed: the contact has no zone and no phone number; set its tz (ZONE_UNKNOWN)"),
            (Effect::RunOpened(call), AT, "The call task of step call_1 is created Tue 10 Dec, 09:00 (America/Denver), when the send window opens"),
            (Effect::RunOpened(open_task), AT, "The LinkedIn connection task of step connect is open — until Tue 10 Dec, 09:00 (America/Denver)"),
            (Effect::RunOpened(approval), AT, "Waiting at step approve for a person to approve or reject — until Tue 10 Dec, 09:00 (America/Denver)"),
            (Effect::RunOpened(fetch), AT, "Asking another system at step lookup (attempt 1 of 3)"),
            (Effect::RunOpened(run("route", StepKind::Branch)), AT, "Choosing a branch at step route"),
            (Effect::RunOpened(run("done", StepKind::End)), AT, "Reached the end, step done"),
            // run_closed, by how it closed
            (closed(Some("reply:email"), Some("sg_1")), AT, "Step listen ended on a reply by email"),
            (closed(Some("timeout"), None), AT, "Step listen timed out"),
            (closed(Some("then"), None), AT, "Step listen done"),
            (closed(Some("connected"), None), AT, "Step listen went on by `connected`"),
            (closed(Some("moved"), None), AT, "Left step listen: an operator moved the enrollment"),
            (closed(None, None), AT, "Left step listen"),
            // dispatch: the number as people write it
            (Effect::Dispatch(dispatch(Channel::Sms, "+13035551234", "hello")), AT, "Sent SMS *hello* to +1 303-555-1234"),
            (Effect::Dispatch(email), AT, "Sent email *welcome* to ann@example.com (variant B)"),
            (Effect::DispatchHeld { idempotency_key: "en_1:3".into(), run: 3, channel: Channel::Sms, code: Code::NoOpening, message: "no SMS opening within 30 days.".into() }, AT, "Nothing sent by SMS: no SMS opening within 30 days (NO_OPENING)"),
            (Effect::TaskCreated(Task { idempotency_key: "en_1:4".into(), run: 4, step: "call_1".into(), step_type: "call".into(), params: json!({}), input: json!({}), due_by: Some(t(TUE_9)), reservation: None, variant: None }), AT, "Created the call task of step call_1, due by Tue 10 Dec, 09:00 (America/Denver)"),
            (Effect::RaiseSignal { run: 4, raises: vec!["call_connected".into(), "reply".into()] }, AT, "The task's outcome raised a connected call and a reply in the contact's other enrollments"),
            (Effect::FetchRequested(FetchRequest { idempotency_key: "en_1:5:2".into(), run: 5, attempt: 2, call: fetch_call(2) }), AT, "Calling GET https://crm.example.com/leads/7 (attempt 2 of 3)"),
            (Effect::ApprovalRequested { run: 6, step: "approve".into(), title: "Send the discount?".into(), expires_at: t(TUE_9) }, AT, "Asked a person to approve “Send the discount?” at step approve; the link works until Tue 10 Dec, 09:00 (America/Denver)"),
            (entry(JourneyEntry::FetchAttempt { run: 5, attempt: 1, status: Some(503), error: None, ms: 120 }), AT, "Attempt 1 answered HTTP 503 in 120 ms"),
            (entry(JourneyEntry::FetchAttempt { run: 5, attempt: 2, status: None, error: Some("timeout".into()), ms: 5000 }), AT, "Attempt 2 failed after 5000 ms: timeout"),
            (entry(JourneyEntry::Decided { run: 6, decision: Decision::Approved, input: json!({}), by: Some("lee@example.com".into()) }), AT, "Approved by lee@example.com"),
            (entry(JourneyEntry::Decided { run: 6, decision: Decision::Rejected, input: json!({}), by: None }), AT, "Rejected"),
            // the enrollment's own life
            (entry(JourneyEntry::Enrolled { step: "email_1".into() }), AT, "Enrolled; starting at step email_1"),
            (entry(JourneyEntry::Paused { reason: None, until: None, note: None }), AT, "Paused by an operator"),
            (entry(JourneyEntry::Paused { reason: Some(PauseReason::OutOfOffice), until: Some(t("2025-01-06T16:00:00Z")), note: Some("returns 2025-01-06".into()) }), AT, "Paused: the contact is out of office until Mon 6 Jan 2025, 09:00 (America/Denver) (returns 2025-01-06)"),
            (entry(JourneyEntry::Resumed { reason: None }), AT, "Resumed by an operator"),
            (entry(JourneyEntry::Resumed { reason: Some(PauseReason::OutOfOffice) }), AT, "Resumed: the out-of-office pause ended"),
            (entry(JourneyEntry::Moved { from: Some("listen".into()), to: "call_1".into() }), AT, "An operator moved it from step listen to step call_1"),
            (entry(JourneyEntry::Migrated { from_version: 1, to_version: 2, from_step: "listen".into(), to_step: "wait_reply".into() }), AT, "Moved to version 2 of the flow: step listen is now wait_reply"),
            (entry(JourneyEntry::Migrated { from_version: 2, to_version: 3, from_step: "listen".into(), to_step: "listen".into() }), AT, "Moved to version 3 of the flow, still at step listen"),
            (entry(JourneyEntry::Exited { reason: "opt_out:email".into() }), AT, "Exited: opted out of email"),
            (entry(JourneyEntry::Exited { reason: "exit_on:meeting_booked".into() }), AT, "Exited: a booked meeting ends this flow"),
            (entry(JourneyEntry::Exited { reason: "Closed-won in the CRM".into() }), AT, "Exited: Closed-won in the CRM"),
            (entry(JourneyEntry::Completed { outcome: Some("booked".into()) }), AT, "Completed with outcome booked"),
            (entry(JourneyEntry::Completed { outcome: None }), AT, "Completed"),
            (entry(JourneyEntry::Failed { code: Code::WaitExceedsLimit, step: Some("wait_long".into()), message: "the wait ends after max_wait.".into() }), AT, "Failed at step wait_long: the wait ends after max_wait (WAIT_EXCEEDS_LIMIT)"),
            // deferrals: the quiet hours' end on the same morning is its hour alone
            (deferred(Some(ClosedBy::QuietHours), None), "2024-12-10T12:30:00Z", "Held: quiet hours in America/Denver until 08:00 (step sms_1)"),
            (deferred(Some(ClosedBy::QuietHours), None), AT, "Held: quiet hours in America/Denver until Tue 10 Dec, 08:00 (step sms_1)"),
            (deferred(Some(ClosedBy::Window), None), AT, "Held: the send window is closed until Tue 10 Dec, 08:00 (America/Denver) (step sms_1)"),
            (deferred(Some(ClosedBy::Holiday), None), AT, "Held: a holiday closes the send window until Tue 10 Dec, 08:00 (America/Denver) (step sms_1)"),
            (deferred(None, Some(CapReason::CapDaily)), AT, "Held: the sender's daily cap is used up until Tue 10 Dec, 08:00 (America/Denver) (step sms_1)"),
            (entry(JourneyEntry::Held { run: 3, step: "sms_1".into(), code: Code::ZoneUnknown, message: "the number +1 555 maps to no zone; set the contact's tz".into() }), AT, "Held at step sms_1 until the contact is fixed: the number +1 555 maps to no zone; set the contact's tz (ZONE_UNKNOWN)"),
            (entry(JourneyEntry::Released { run: 3, step: "sms_1".into(), scheduled: t(TUE_9) }), AT, "Released step sms_1, now that the contact allows it: it goes Tue 10 Dec, 09:00 (America/Denver)"),
            (entry(JourneyEntry::Skipped { run: 3, step: "sms_1".into(), reason: "the contact opted out of sms".into() }), AT, "Skipped step sms_1: the contact opted out of sms"),
            (entry(JourneyEntry::TaskOutcome { run: 4, step: "call_1".into(), outcome: "connected".into() }), AT, "The task of step call_1 was done: connected"),
            // signals: the reply's words quoted only where the entry carries them
            (signal(Some(reply(Intent::Interested, &["Sounds good, Thursday?"])), SignalEffect::Woke { run: 2, branch: "reply:email".into(), payload: RecordedPayload::default() }), AT, "Woken by a reply by email: interested — “Sounds good, Thursday?”"),
            (signal(Some(reply(Intent::NotNow, &[])), SignalEffect::Woke { run: 2, branch: "intent:not_now".into(), payload: RecordedPayload::default() }), AT, "Woken by a reply read as not now"),
            (signal(None, SignalEffect::Woke { run: 2, branch: "meeting_booked".into(), payload: RecordedPayload::default() }), AT, "Woken by a booked meeting"),
            (signal(None, SignalEffect::Buffered { payload: RecordedPayload { payload: Some(json!({"amount": 5})), payload_truncated: None } }), AT, "Kept a signal for a later wait: nothing was waiting for it"),
            (signal(Some(reply(Intent::Other, &[])), SignalEffect::Consumed { run: 5, branch: "reply".into(), payload: RecordedPayload::default() }), AT, "Took a reply: other, kept from earlier"),
            (signal(None, SignalEffect::Expired { why: Dropped::Expired, at: t(AT) }), AT, "A kept signal expired unused after 7 days"),
            (signal(None, SignalEffect::IgnoredPaused), AT, "Ignored a signal: the enrollment is paused"),
            (signal(None, SignalEffect::Noted { what: "an SMS HELP".into() }), AT, "Noted: an SMS HELP"),
            (signal(None, SignalEffect::Paused { until: t(TUE_9) }), AT, "An out-of-office reply paused it until Tue 10 Dec, 09:00 (America/Denver)"),
            (signal(Some(reply(Intent::Unsubscribe, &["stop emailing me"])), SignalEffect::Exited { reason: "opt_out:email".into() }), AT, "Exited: opted out of email"),
            (entry(JourneyEntry::Rejected { input: "move_to".into(), reason: "there is no step `nope` in version 2.".into() }), AT, "Refused move_to: there is no step `nope` in version 2"),
            // what the delivery side said
            (acked(AckOutcome::Sent, None, None, false), AT, "The provider took the message of step email_1 (attempt 2, its id prov-9)"),
            (acked(AckOutcome::Retry, Some("421 try later"), Some(t(TUE_9)), false), AT, "Sending step email_1 failed on attempt 2: 421 try later; it tries again at Tue 10 Dec, 09:00 (America/Denver)"),
            (acked(AckOutcome::Failed, Some("mailbox unknown"), None, true), AT, "Gave up sending step email_1 after attempt 2, no attempts left: mailbox unknown"),
            (entry(JourneyEntry::DeliveryFailed { run: 3, step: "sms_1".into(), dispatch: "dp_1".into(), provider: "twilio".into(), status: "undelivered".into(), error_code: Some(30003), error: None }), AT, "Not delivered: twilio reports the message of step sms_1 undelivered (error 30003)"),
        ]
    }

    /// The text the journey stores for `effect` (as the store writes it).
    fn stored(effect: &Effect) -> serde_json::Map<String, serde_json::Value> {
        match crate::store::journey::detail::reference(effect).parse() {
            Ok(serde_json::Value::Object(map)) => map,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn every_entry_kind_has_its_sentence() {
        let zone = denver();
        let rows = table();
        for kind in JourneyKind::ALL {
            assert!(
                rows.iter().any(|(e, _, _)| JourneyKind::of(e) == kind),
                "no sentence tested for `{}`",
                kind.as_str()
            );
        }
        for (effect, at, want) in &rows {
            assert_eq!(sentence(effect, t(at), &zone), *want, "{effect:?}");
            // The same words from the stored entry, which is what the readers have.
            let kind = JourneyKind::of(effect).as_str();
            let detail = stored(effect);
            assert_eq!(read_stored(kind, &detail).as_ref(), Some(effect), "{kind}");
            assert_eq!(stored_sentence(kind, &detail, t(at), &zone), *want);
        }
    }

    #[test]
    fn an_entry_this_release_cannot_read_is_named_by_its_kind() {
        let detail = json!({"event": "teleported", "to": "mars"});
        let serde_json::Value::Object(detail) = detail else {
            unreachable!()
        };
        assert_eq!(
            stored_sentence("teleported", &detail, t(AT), &denver()),
            "A `teleported` entry: see its detail"
        );
        // A known kind whose detail does not read is not guessed either.
        let serde_json::Value::Object(odd) = json!({"event": "enrolled"}) else {
            unreachable!()
        };
        assert_eq!(read_stored("enrolled", &odd), None);
    }

    /// The zone is the contact's, else its phone number's, else the sender's, else UTC, and
    /// each sentence says which.
    #[test]
    fn the_zone_is_named_with_where_it_came_from() {
        let wait = Effect::RunOpened(Run {
            until: Some(t(TUE_9)),
            ..run("wait_2d", StepKind::Wait)
        });
        let cases = [
            (
                ShownZone::of(Some("America/Denver"), Some("+420601123456"), Some("UTC")),
                ZoneSource::Contact,
                "Waiting at step wait_2d — until Tue 10 Dec, 09:00 (America/Denver)",
            ),
            // A zone that does not parse is no zone: the phone's (Prague) is used.
            (
                ShownZone::of(Some("MST"), Some("+420601123456"), Some("UTC")),
                ZoneSource::Phone,
                "Waiting at step wait_2d — until Tue 10 Dec, 17:00 (Europe/Prague, from the contact's phone number)",
            ),
            (
                ShownZone::of(None, None, Some("Asia/Tokyo")),
                ZoneSource::Sender,
                "Waiting at step wait_2d — until Wed 11 Dec, 01:00 (Asia/Tokyo, the sender's zone: the contact has none)",
            ),
            (
                ShownZone::of(None, Some("not a number"), Some("Bad/Zone")),
                ZoneSource::Utc,
                "Waiting at step wait_2d — until Tue 10 Dec, 16:00 (UTC: no zone is known)",
            ),
            // Written at 02:35 on the 10th there: the same local day, so the hour alone.
            (
                ShownZone::of(Some("+05:30"), None, None),
                ZoneSource::Contact,
                "Waiting at step wait_2d — until 21:30 (+05:30)",
            ),
        ];
        for (zone, source, want) in cases {
            assert_eq!(zone.source, source, "{want}");
            assert_eq!(sentence(&wait, t(AT), &zone), want);
        }
        // Quiet hours held without the contact's own zone: the zone follows the time.
        let deferred = Effect::Journey(JourneyEntry::Deferred {
            run: 3,
            step: "sms_1".into(),
            to: t(TUE_8),
            reason: Some(ClosedBy::QuietHours),
            rule: None,
            cap: None,
        });
        assert_eq!(
            sentence(&deferred, t(AT), &ShownZone::of(None, None, Some("America/Chicago"))),
            "Held: quiet hours until Tue 10 Dec, 09:00 (America/Chicago, the sender's zone: the contact has none) (step sms_1)"
        );
    }

    /// Local days, not UTC days, decide whether the date is said; a DST change moves the hour.
    #[test]
    fn times_are_read_on_the_contacts_own_calendar() {
        let denver = Zone::parse("America/Denver").unwrap();
        // 23:30 UTC on the 9th is still the 9th in Denver (16:30): same day, the hour alone.
        assert_eq!(
            local_time(
                t("2024-12-10T05:30:00Z"),
                t("2024-12-09T23:30:00Z"),
                &denver
            ),
            "22:30"
        );
        // Across New Year the year is said.
        assert_eq!(
            local_time(
                t("2025-01-02T16:00:00Z"),
                t("2024-12-31T16:00:00Z"),
                &denver
            ),
            "Thu 2 Jan 2025, 09:00"
        );
        // The same UTC hour is 09:00 in winter and 10:00 in summer.
        assert_eq!(
            local_time(
                t("2025-03-10T16:00:00Z"),
                t("2025-03-07T16:00:00Z"),
                &denver
            ),
            "Mon 10 Mar, 10:00"
        );
        assert_eq!(entry_time(t(AT), &denver), "Mon 9 Dec 2024, 14:05");
    }

    #[test]
    fn numbers_are_written_for_people() {
        assert_eq!(phone_for_people("+13035551234"), "+1 303-555-1234");
        assert_eq!(phone_for_people("+420601123456"), "+420 601 123 456");
        assert_eq!(phone_for_people("12345"), "12345");
    }

    #[test]
    fn the_step_of_an_entry() {
        let rows = table();
        let steps: Vec<Option<&str>> = rows.iter().map(|(e, _, _)| step_of(e)).collect();
        assert_eq!(steps[0], Some("wait_2d"));
        let exited = entry(JourneyEntry::Exited { reason: "x".into() });
        assert_eq!(step_of(&exited), None);
        let migrated = entry(JourneyEntry::Migrated {
            from_version: 1,
            to_version: 2,
            from_step: "a".into(),
            to_step: "b".into(),
        });
        assert_eq!(step_of(&migrated), Some("b"));
    }
}
