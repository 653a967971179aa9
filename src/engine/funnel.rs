//! What one step of an enrollment adds to its flow's funnel (`GetFlowStats`): pure, from the
//! input and the effects the interpreter answered, so every path that steps an enrollment (the
//! planner, signals, operators) counts the same way and the counts commit with the step.
//!
//! Where a count lands: `entered` on the step entered, `dispatched` on the step whose message
//! it is; a signal's counts (`replies`, each intent, `meetings_booked`, `bounced`) and an
//! ending's (`exited`, `opted_out`) on the step the enrollment was at when it came. `sent` and
//! `failed` are counted where the delivery side acknowledges the message, `exposed` and
//! `converted` where a step experiment records them.

use crate::engine::effect::{Effect, JourneyEntry};
use crate::engine::input::Signal;
use crate::engine::state::EnrollmentState;
use crate::inbound::intent::Intent;
use crate::routing::Inbox;

/// A count of a flow's funnel: a closed set, spelled as the statistics table and the API
/// spell them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Metric {
    /// A run of the step began.
    Entered,
    /// The step put a message in the outbox.
    Dispatched,
    /// The delivery side acknowledged the message as sent.
    Sent,
    /// The delivery side gave up on it.
    Failed,
    /// A bounce came back (soft or hard).
    Bounced,
    /// A person answered (never an auto-reply or an out-of-office notice).
    Replies,
    /// A person's answer read as this intent.
    Intent(Intent),
    /// A meeting was booked.
    MeetingsBooked,
    /// The contact opted out (in words, by keyword, by link): the enrollment ended.
    OptedOut,
    /// The enrollment ended early, for any reason (opt-outs included).
    Exited,
    /// A contact's message of a variant was sent (the experiment's denominator).
    Exposed,
    /// An exposed contact reached the experiment's goal in its window.
    Converted,
}

impl Metric {
    /// Every metric, in the order the statistics list them.
    pub fn all() -> impl Iterator<Item = Metric> {
        [
            Metric::Entered,
            Metric::Dispatched,
            Metric::Sent,
            Metric::Failed,
            Metric::Bounced,
            Metric::Replies,
        ]
        .into_iter()
        .chain(Intent::ALL.into_iter().map(Metric::Intent))
        .chain([
            Metric::MeetingsBooked,
            Metric::OptedOut,
            Metric::Exited,
            Metric::Exposed,
            Metric::Converted,
        ])
    }

    /// The stored spelling: `entered`, …, `intent:not_now`, …
    pub fn as_str(self) -> &'static str {
        match self {
            Metric::Entered => "entered",
            Metric::Dispatched => "dispatched",
            Metric::Sent => "sent",
            Metric::Failed => "failed",
            Metric::Bounced => "bounced",
            Metric::Replies => "replies",
            Metric::Intent(i) => i.event(),
            Metric::MeetingsBooked => "meetings_booked",
            Metric::OptedOut => "opted_out",
            Metric::Exited => "exited",
            Metric::Exposed => "exposed",
            Metric::Converted => "converted",
        }
    }

    /// The metric spelled `text`.
    pub fn parse(text: &str) -> Option<Metric> {
        Metric::all().find(|m| m.as_str() == text)
    }
}

/// The counts the effects of one step add: `(step id, metric)`, one per occurrence. `at` is
/// the step the enrollment was at before it.
pub fn of_effects<'a>(at: Option<&'a str>, effects: &'a [Effect]) -> Vec<(&'a str, Metric)> {
    let mut counts = Vec::new();
    for effect in effects {
        match effect {
            Effect::RunOpened(run) => counts.push((run.step.as_str(), Metric::Entered)),
            Effect::Dispatch(d) => counts.push((d.step.as_str(), Metric::Dispatched)),
            Effect::Journey(JourneyEntry::Exited { reason }) => {
                if let Some(step) = at {
                    counts.push((step, Metric::Exited));
                    if reason.starts_with("opt_out:") {
                        counts.push((step, Metric::OptedOut));
                    }
                }
            }
            _ => {}
        }
    }
    counts
}

/// The counts a signal adds where it reaches an enrollment (at the step it was at), whatever
/// the step did with it.
pub fn of_signal(before: &EnrollmentState, signal: &Signal) -> Vec<(String, Metric)> {
    let Some(step) = before.run.as_ref().map(|r| r.step.as_str()) else {
        return Vec::new();
    };
    let mut counts = Vec::new();
    if signal.inbox.is_none() && signal.raises.iter().any(|e| e == "reply") {
        counts.push((step.to_string(), Metric::Replies));
        if let Some(intent) = signal.facts.intent {
            counts.push((step.to_string(), Metric::Intent(intent)));
        }
    }
    if signal.raises.iter().any(|e| e == "meeting_booked") {
        counts.push((step.to_string(), Metric::MeetingsBooked));
    }
    if matches!(signal.inbox, Some(Inbox::SoftBounce | Inbox::HardBounce)) {
        counts.push((step.to_string(), Metric::Bounced));
    }
    counts
}

/// The goal events `signal` raises that may convert an exposure: a person's reply (never an
/// auto-reply), its `intent:<x>`, a booked meeting.
pub fn goal_events(signal: &Signal) -> Vec<&str> {
    if signal.inbox.is_some() {
        return Vec::new();
    }
    signal
        .raises
        .iter()
        .map(String::as_str)
        .filter(|e| crate::flow::model::Goal::parse(e).is_some())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_metric_reads_back_from_its_spelling() {
        let all: Vec<Metric> = Metric::all().collect();
        assert_eq!(all.len(), 17);
        for m in all {
            assert_eq!(Metric::parse(m.as_str()), Some(m));
        }
        assert_eq!(Metric::Intent(Intent::NotNow).as_str(), "intent:not_now");
        assert_eq!(Metric::parse("sends"), None);
    }
}
