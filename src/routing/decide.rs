//! The four rules of SPEC §5.3, applied in order to one enrollment a signal reaches.

use crate::routing::precedence::pick;
use serde::{Deserialize, Serialize};

/// What the enrollment is doing when the signal arrives, as far as routing cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waiting<'a> {
    /// Paused: signals neither wake nor buffer (rule 1).
    Paused,
    /// Active and its current run is a `wait_for` listing these events (rule 3).
    ForEvents(&'a [String]),
    /// Active but not in a `wait_for` (a `wait`, an outreach step, a task, a held step): a signal
    /// never wakes those.
    NotWaiting,
}

/// Why a signal ends an enrollment (rule 2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ExitCause {
    /// The contact opted out on `channel`.
    OptOut {
        /// The channel opted out of (`sms`, `email`, …), blocked from now on.
        channel: String,
    },
    /// The signal raised `event`, which is in `settings.exit_on`.
    ExitOn {
        /// The `exit_on` event, as the flow spells it.
        event: String,
    },
}

impl ExitCause {
    /// The journey's exit reason: `opt_out:sms`, `exit_on:meeting_booked`.
    pub fn reason(&self) -> String {
        match self {
            ExitCause::OptOut { channel } => format!("opt_out:{channel}"),
            ExitCause::ExitOn { event } => format!("exit_on:{event}"),
        }
    }
}

/// The routing decision for one enrollment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// Rule 1: recorded as `ignored_paused`, not buffered.
    IgnoredPaused,
    /// Rule 2: the enrollment exits; a waiting run closes on branch `exit`.
    Exit(ExitCause),
    /// Rule 3: the waiting run closes on this branch (the event picked by precedence).
    Wake {
        /// The `next` key to take: one of the run's listed events.
        event: String,
    },
    /// Rule 4: kept for a later `wait_for`.
    Buffer,
}

/// Decides what a signal does to one enrollment. `raises` are the events the signal raises,
/// `opt_out` the channel when it is an opt-out.
///
/// An opt-out exits even a paused enrollment: SPEC §5.2 says it "exits every enrollment of the
/// contact", and a paused enrollment that ignored a `STOP` would send again on resume, which is
/// what quiet-hours and unsubscribe law forbid. Every other signal follows §5.3 in order, so a
/// paused enrollment ignores even an `exit_on` event (rule 1 comes first).
pub fn decide(
    waiting: Waiting<'_>,
    exit_on: &[String],
    raises: &[String],
    opt_out: Option<&str>,
) -> Route {
    if let Some(channel) = opt_out {
        return Route::Exit(ExitCause::OptOut {
            channel: channel.to_string(),
        });
    }
    if waiting == Waiting::Paused {
        return Route::IgnoredPaused;
    }
    if let Some(event) = raises.iter().find(|r| exit_on.contains(r)) {
        return Route::Exit(ExitCause::ExitOn {
            event: event.clone(),
        });
    }
    if let Waiting::ForEvents(listed) = waiting {
        if let Some(event) = pick(listed, raises) {
            return Route::Wake {
                event: event.to_string(),
            };
        }
    }
    Route::Buffer
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    /// (name, what the enrollment does, events raised, opt-out channel, expected route)
    type Case<'a> = (&'a str, Waiting<'a>, &'a [String], Option<&'a str>, Route);

    #[test]
    fn rules_in_order() {
        let listed = v(&["reply", "reply:sms", "meeting_booked"]);
        let exit_on = v(&["meeting_booked"]);
        let waiting = Waiting::ForEvents(&listed);
        let sms = v(&["reply", "reply:sms"]);
        let booked = v(&["meeting_booked"]);
        let custom = v(&["payment.42"]);
        let cases: Vec<Case> = vec![
            (
                "paused ignores a reply",
                Waiting::Paused,
                &sms,
                None,
                Route::IgnoredPaused,
            ),
            (
                "an opt-out exits even a paused enrollment",
                Waiting::Paused,
                &[],
                Some("sms"),
                Route::Exit(ExitCause::OptOut {
                    channel: "sms".into(),
                }),
            ),
            (
                "paused ignores exit_on",
                Waiting::Paused,
                &booked,
                None,
                Route::IgnoredPaused,
            ),
            (
                "opt-out exits even a wait that lists the event",
                waiting,
                &sms,
                Some("sms"),
                Route::Exit(ExitCause::OptOut {
                    channel: "sms".into(),
                }),
            ),
            (
                "exit_on beats a listed event",
                waiting,
                &booked,
                None,
                Route::Exit(ExitCause::ExitOn {
                    event: "meeting_booked".into(),
                }),
            ),
            (
                "exit_on while not waiting",
                Waiting::NotWaiting,
                &booked,
                None,
                Route::Exit(ExitCause::ExitOn {
                    event: "meeting_booked".into(),
                }),
            ),
            (
                "listed event wakes, specific first",
                waiting,
                &sms,
                None,
                Route::Wake {
                    event: "reply:sms".into(),
                },
            ),
            (
                "unlisted event buffers",
                waiting,
                &custom,
                None,
                Route::Buffer,
            ),
            (
                "a wait or task never wakes",
                Waiting::NotWaiting,
                &sms,
                None,
                Route::Buffer,
            ),
        ];
        for (name, w, raises, opt_out, want) in cases {
            assert_eq!(decide(w, &exit_on, raises, opt_out), want, "{name}");
        }
    }

    #[test]
    fn exit_reasons() {
        assert_eq!(
            ExitCause::OptOut {
                channel: "sms".into()
            }
            .reason(),
            "opt_out:sms"
        );
        assert_eq!(
            ExitCause::ExitOn {
                event: "meeting_booked".into()
            }
            .reason(),
            "exit_on:meeting_booked"
        );
    }
}
