//! The four rules of docs/signals.md, "Routing", applied in order to one enrollment a signal reaches.

use crate::routing::inbox::{Inbox, OooAction};
use crate::routing::precedence::pick;
use serde::{Deserialize, Serialize};

/// What the enrollment is doing when the signal arrives, as far as routing cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waiting<'a> {
    /// Paused by an operator: signals neither wake nor buffer (rule 1).
    Paused,
    /// Paused by an out-of-office notice (docs/signals.md, "Inbox signals"): it still listens. Its current run's
    /// listed events when it is a `wait_for`.
    Away(Option<&'a [String]>),
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
    /// A hard bounce (docs/signals.md, "Inbox signals").
    Bounced,
    /// A spam complaint (docs/providers.md, "What each event does").
    Complained,
    /// An out-of-office with `settings.out_of_office.action` = `exit`.
    OutOfOffice,
}

impl ExitCause {
    /// The journey's exit reason: `opt_out:sms`, `exit_on:meeting_booked`.
    pub fn reason(&self) -> String {
        match self {
            ExitCause::OptOut { channel } => format!("opt_out:{channel}"),
            ExitCause::ExitOn { event } => format!("exit_on:{event}"),
            ExitCause::Bounced => "BOUNCED".to_string(),
            ExitCause::Complained => "COMPLAINED".to_string(),
            ExitCause::OutOfOffice => "OUT_OF_OFFICE".to_string(),
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
    /// Journal-only: an automatic answer while away, an SMS `HELP`, a delayed delivery, an
    /// opt-in. The text says what it was.
    Noted(String),
    /// An out-of-office: pause until the return (docs/signals.md, "Inbox signals").
    PauseAway,
    /// A person's signal while away: the out-of-office pause ends, then this route applies.
    Return(Box<Route>),
}

/// Decides what an ordinary signal does to one enrollment. `raises` are the events the signal
/// raises, `opt_out` the channel when it is an opt-out. See [`route`] for inbox signals.
///
/// An opt-out exits even a paused enrollment: docs/signals.md, "Kinds of signal and the events they raise" says it "exits every enrollment of the
/// contact", and a paused enrollment that ignored a `STOP` would send again on resume, which is
/// what quiet-hours and unsubscribe law forbid. Every other signal follows docs/signals.md, "Routing" in order, so a
/// paused enrollment ignores even an `exit_on` event (rule 1 comes first).
pub fn decide(
    waiting: Waiting<'_>,
    exit_on: &[String],
    raises: &[String],
    opt_out: Option<&str>,
) -> Route {
    route(
        waiting,
        exit_on,
        raises,
        opt_out,
        None,
        OooAction::default(),
    )
}

/// [`decide`] for any signal, inbox ones included (docs/signals.md, "Inbox signals"):
///
/// - a hard bounce exits like an opt-out (`BOUNCED`), even a paused enrollment;
/// - an opt-in (`START`) and a journal-only signal are only noted;
/// - while **away** (an out-of-office pause) an automatic signal is only noted; any other one
///   exits when `exit_on` says so, and otherwise ends the pause and routes as usual;
/// - an out-of-office that no `exit_on` or listed event takes does what `action` says: pause,
///   exit (`OUT_OF_OFFICE`), or nothing special (buffered).
pub fn route(
    waiting: Waiting<'_>,
    exit_on: &[String],
    raises: &[String],
    opt_out: Option<&str>,
    inbox: Option<&Inbox>,
    action: OooAction,
) -> Route {
    if let Some(channel) = opt_out {
        return Route::Exit(ExitCause::OptOut {
            channel: channel.to_string(),
        });
    }
    match inbox {
        Some(Inbox::HardBounce) => return Route::Exit(ExitCause::Bounced),
        Some(Inbox::Complaint) => return Route::Exit(ExitCause::Complained),
        Some(Inbox::OptIn { channel }) => {
            return Route::Noted(format!("the contact opted back into {channel}"))
        }
        Some(Inbox::Noted { what }) => return Route::Noted(what.clone()),
        _ => {}
    }
    let listed = match waiting {
        Waiting::Paused => return Route::IgnoredPaused,
        Waiting::Away(listed) => {
            if inbox.is_some_and(Inbox::is_automatic) {
                return Route::Noted("an automatic answer while out of office".into());
            }
            if let Some(event) = raises.iter().find(|r| exit_on.contains(r)) {
                return Route::Exit(ExitCause::ExitOn {
                    event: event.clone(),
                });
            }
            return Route::Return(Box::new(active(listed, exit_on, raises, inbox, action)));
        }
        Waiting::ForEvents(listed) => Some(listed),
        Waiting::NotWaiting => None,
    };
    active(listed, exit_on, raises, inbox, action)
}

/// Rules 2–4 for an enrollment that is not paused.
fn active(
    listed: Option<&[String]>,
    exit_on: &[String],
    raises: &[String],
    inbox: Option<&Inbox>,
    action: OooAction,
) -> Route {
    if let Some(event) = raises.iter().find(|r| exit_on.contains(r)) {
        return Route::Exit(ExitCause::ExitOn {
            event: event.clone(),
        });
    }
    if let Some(event) = listed.and_then(|l| pick(l, raises)) {
        return Route::Wake {
            event: event.to_string(),
        };
    }
    if let Some(Inbox::OutOfOffice { .. }) = inbox {
        return match action {
            OooAction::PauseUntilReturn => Route::PauseAway,
            OooAction::Exit => Route::Exit(ExitCause::OutOfOffice),
            OooAction::Ignore => Route::Buffer,
        };
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
    fn inbox_rules() {
        let reply = v(&["reply", "reply:email"]);
        let ooo = v(&["out_of_office", "auto_reply"]);
        let auto = v(&["auto_reply"]);
        let bounced = v(&["bounced"]);
        let listed = v(&["reply"]);
        let lists_ooo = v(&["out_of_office", "reply"]);
        let away_inbox = Inbox::OutOfOffice {
            return_date: None,
            note: None,
        };
        let exit_on_ooo = v(&["out_of_office"]);
        let none: Vec<String> = Vec::new();
        type InboxCase<'a> = (
            &'a str,
            Waiting<'a>,
            &'a [String],
            &'a [String],
            Option<Inbox>,
            OooAction,
            Route,
        );
        let buffered = Route::Buffer;
        let cases: Vec<InboxCase> = vec![
            (
                "an out-of-office pauses by default",
                Waiting::ForEvents(&listed),
                &none,
                &ooo,
                Some(away_inbox.clone()),
                OooAction::PauseUntilReturn,
                Route::PauseAway,
            ),
            (
                "action exit",
                Waiting::NotWaiting,
                &none,
                &ooo,
                Some(away_inbox.clone()),
                OooAction::Exit,
                Route::Exit(ExitCause::OutOfOffice),
            ),
            (
                "action ignore buffers",
                Waiting::ForEvents(&listed),
                &none,
                &ooo,
                Some(away_inbox.clone()),
                OooAction::Ignore,
                buffered.clone(),
            ),
            (
                "a wait listing out_of_office takes it",
                Waiting::ForEvents(&lists_ooo),
                &none,
                &ooo,
                Some(away_inbox.clone()),
                OooAction::PauseUntilReturn,
                Route::Wake {
                    event: "out_of_office".into(),
                },
            ),
            (
                "exit_on out_of_office exits first",
                Waiting::ForEvents(&lists_ooo),
                &exit_on_ooo,
                &ooo,
                Some(away_inbox.clone()),
                OooAction::PauseUntilReturn,
                Route::Exit(ExitCause::ExitOn {
                    event: "out_of_office".into(),
                }),
            ),
            (
                "an auto-reply never wakes a reply wait",
                Waiting::ForEvents(&listed),
                &none,
                &auto,
                Some(Inbox::AutoReply),
                OooAction::PauseUntilReturn,
                buffered.clone(),
            ),
            (
                "a hard bounce exits even a paused enrollment",
                Waiting::Paused,
                &none,
                &bounced,
                Some(Inbox::HardBounce),
                OooAction::PauseUntilReturn,
                Route::Exit(ExitCause::Bounced),
            ),
            (
                "a soft bounce buffers",
                Waiting::NotWaiting,
                &none,
                &bounced,
                Some(Inbox::SoftBounce),
                OooAction::PauseUntilReturn,
                buffered.clone(),
            ),
            (
                "while away, another auto-reply is only noted",
                Waiting::Away(Some(&listed)),
                &none,
                &ooo,
                Some(away_inbox.clone()),
                OooAction::PauseUntilReturn,
                Route::Noted("an automatic answer while out of office".into()),
            ),
            (
                "while away, a reply returns and wakes",
                Waiting::Away(Some(&listed)),
                &none,
                &reply,
                None,
                OooAction::PauseUntilReturn,
                Route::Return(Box::new(Route::Wake {
                    event: "reply".into(),
                })),
            ),
            (
                "while away, a reply with no wait returns and buffers",
                Waiting::Away(None),
                &none,
                &reply,
                None,
                OooAction::PauseUntilReturn,
                Route::Return(Box::new(Route::Buffer)),
            ),
            (
                "while away, exit_on exits",
                Waiting::Away(None),
                &listed,
                &reply,
                None,
                OooAction::PauseUntilReturn,
                Route::Exit(ExitCause::ExitOn {
                    event: "reply".into(),
                }),
            ),
            (
                "an operator's pause ignores an out-of-office",
                Waiting::Paused,
                &none,
                &ooo,
                Some(away_inbox.clone()),
                OooAction::PauseUntilReturn,
                Route::IgnoredPaused,
            ),
            (
                "an opt-in is noted",
                Waiting::ForEvents(&listed),
                &none,
                &none,
                Some(Inbox::OptIn {
                    channel: "sms".into(),
                }),
                OooAction::PauseUntilReturn,
                Route::Noted("the contact opted back into sms".into()),
            ),
        ];
        for (name, w, exit_on, raises, inbox, action, want) in cases {
            assert_eq!(
                route(w, exit_on, raises, None, inbox.as_ref(), action),
                want,
                "{name}"
            );
        }
        // An opt-out while away exits.
        assert_eq!(
            route(
                Waiting::Away(None),
                &none,
                &none,
                Some("email"),
                None,
                OooAction::PauseUntilReturn
            ),
            Route::Exit(ExitCause::OptOut {
                channel: "email".into()
            })
        );
    }

    #[test]
    fn exit_reasons() {
        assert_eq!(ExitCause::Bounced.reason(), "BOUNCED");
        assert_eq!(ExitCause::OutOfOffice.reason(), "OUT_OF_OFFICE");
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
