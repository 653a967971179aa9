//! What happened to an enrollment: the `input` of [`crate::engine::step`].
//!
//! There is no "dispatch failed" input on purpose: an outreach step hands its dispatch to the
//! outbox and moves on at once (docs/flows.md), delivery is at-least-once with retries (docs/service.md, "Delivery"), and a
//! final failure is recorded on the dispatch, not fed back into the flow's timing.

use serde::{Deserialize, Serialize};

/// A signal as it reaches one enrollment (docs/signals.md, "Kinds of signal and the events they raise"): the storage layer has already matched it
/// to the contact, deduplicated it by provider id and turned it into the events it raises.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Signal {
    /// The stored signal's id: the journey's `woken_by`.
    pub id: String,
    /// The events it raises: `["reply", "reply:sms"]`, `["call_connected", "reply"]`,
    /// `["meeting_booked"]`, `["payment.42"]`. Empty for a bare opt-out.
    #[serde(default)]
    pub raises: Vec<String>,
    /// `Some(channel)` when it is an opt-out (unsubscribe, SMS `STOP`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opt_out: Option<String>,
    /// A custom event's payload; `{}` when none (a null never means anything but a timeout).
    #[serde(default)]
    pub payload: serde_json::Value,
    /// What an inbox signal is (an auto-reply, an out-of-office, a bounce, …), docs/signals.md, "Inbox signals".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inbox: Option<crate::routing::Inbox>,
    /// What `signal.*` reads when it closes a `wait_for`: its channel, and for a classified
    /// reply what the words said.
    #[serde(default, skip_serializing_if = "SignalFacts::is_empty")]
    pub facts: SignalFacts,
}

/// What expressions and branches read of the signal that closed the last `wait_for`
/// (`signal.channel`, `signal.intent`, `signal.resume_on`, `signal.referral.*`). A field the
/// signal did not carry is absent, so a flow tests it with `exists` before it relies on it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignalFacts {
    /// The channel it came on (`email`, `sms`, `linkedin`, `call`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<String>,
    /// A human reply's intent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intent: Option<crate::inbound::intent::Intent>,
    /// The date a `not_now` reply named, a calendar date in the contact's zone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume_on: Option<chrono::NaiveDate>,
    /// Another person the reply pointed to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub referral: Option<crate::inbound::intent::Referral>,
}

impl SignalFacts {
    /// True when it carries nothing (a custom event, a meeting).
    pub fn is_empty(&self) -> bool {
        *self == SignalFacts::default()
    }

    /// The facts of a reply on `channel` that its words classified as `reading`.
    pub fn of_reply(channel: &str, reading: Option<&crate::inbound::intent::ReplyIntent>) -> Self {
        SignalFacts {
            channel: Some(channel.to_string()),
            intent: reading.map(|r| r.intent),
            resume_on: reading.and_then(|r| r.resume_on),
            referral: reading.and_then(|r| r.referral.clone()),
        }
    }
}

impl Signal {
    /// A reply on `channel`: raises `reply` and `reply:<channel>`.
    pub fn reply(id: impl Into<String>, channel: &str) -> Signal {
        Signal::raising(id, &["reply", &format!("reply:{channel}")])
    }

    /// A connected call reported by a dialer: raises `call_connected` and `reply`.
    pub fn call_connected(id: impl Into<String>) -> Signal {
        Signal::raising(id, &["call_connected", "reply"])
    }

    /// An opt-out on `channel`.
    pub fn opt_out(id: impl Into<String>, channel: &str) -> Signal {
        Signal {
            id: id.into(),
            raises: Vec::new(),
            opt_out: Some(channel.to_string()),
            payload: serde_json::json!({}),
            inbox: None,
            facts: SignalFacts::default(),
        }
    }

    /// A signal raising exactly `events`, with an empty payload.
    pub fn raising(id: impl Into<String>, events: &[&str]) -> Signal {
        Signal {
            id: id.into(),
            raises: events.iter().map(|e| e.to_string()).collect(),
            opt_out: None,
            payload: serde_json::json!({}),
            inbox: None,
            facts: SignalFacts::default(),
        }
    }

    /// This signal, with what it is in the inbox.
    pub fn with_inbox(mut self, inbox: Option<crate::routing::Inbox>) -> Signal {
        self.inbox = inbox;
        self
    }
}

/// What happened. Each variant is one call of [`crate::engine::step`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Input {
    /// The contact was enrolled: enter the flow's `start` step.
    Start,
    /// The planner found `now >= next_run_at`. An early or stale wake does nothing.
    Wake,
    /// A signal reached this enrollment (docs/signals.md, "Routing").
    Signal(Signal),
    /// A task (`call`, `linkedin_*`) was completed with `outcome`. `run` names the task run, so a
    /// late completion of an old task cannot move a newer step.
    TaskOutcome {
        /// The task's run, as `ListTasks` showed it.
        run: u64,
        /// The outcome name (`connected`, `no_answer`, …): a `next` key or `then`.
        outcome: String,
    },
    /// An operator paused the enrollment. Timers keep running (a past target is handled at
    /// resume, docs/timing.md, "A target already in the past").
    Pause,
    /// An operator resumed it; a target that passed meanwhile fires at once.
    Resume,
    /// An operator ended it.
    Exit {
        /// Why, in the operator's words: the journey's and the enrollment's `reason`.
        reason: String,
    },
    /// An operator moved it: the current run closes on branch `moved`, the step is entered.
    MoveTo {
        /// The step to enter: a key of the flow's `steps`, refused otherwise.
        step: String,
    },
    /// An operator moved it to another version of its flow (`MigrateEnrollments`): the flow
    /// stepping it is `to_version`'s, its current run becomes step `step` of it with its wake
    /// time, timeout, buffered signals and holds kept — nothing is entered again, so nothing is
    /// sent twice; what changed applies from the next step entered. A `wait_for` listens for
    /// the new version's events from now on (a buffered one that matches is taken as on entry).
    Migrate {
        /// The version moved to.
        to_version: u32,
        /// The run's step in that version (the same type as the step it was at).
        step: String,
    },
    /// An operator completed it.
    Complete {
        /// The enrollment's outcome, as an `end` step's `outcome` would set it.
        #[serde(default)]
        outcome: Option<String>,
    },
    /// The contact changed (a zone set, a phone added). The new view is kept, and a step held
    /// with `ZONE_UNKNOWN` or `NO_OPENING` is planned again from now.
    ContactChanged(crate::engine::state::ContactView),
    /// A `fetch` attempt's answer, recorded after the request was made outside the
    /// transaction. An answer for another run or attempt (a duplicate) is refused.
    FetchAnswer {
        /// The fetch run.
        run: u64,
        /// The attempt answered.
        attempt: u32,
        /// What came back.
        answer: crate::engine::outside::FetchAnswer,
    },
    /// A person decided the waiting approval (docs/flows.md, "approval"), through its link or `Decide`.
    Decide {
        /// The run the link was made for; `None` (the API's `Decide`): the current one.
        #[serde(default)]
        run: Option<u64>,
        /// Approved or rejected: the branch.
        decision: crate::engine::outside::Decision,
        /// The form's values, already checked against `params.input`.
        #[serde(default)]
        input: serde_json::Value,
        /// Who decided, when given.
        #[serde(default)]
        by: Option<String>,
    },
    /// A slot of the enrollment's sender on `channel` was given back (a dispatch acked as not
    /// sent, docs/capacity.md): a step deferred by a cap on that channel is planned again now, against
    /// the ledger without that slot. Anything else ignores it.
    SlotFreed {
        /// The channel whose slot came back.
        channel: crate::timing::Channel,
    },
}
