//! What the interpreter asks the outside world to do or record. The storage layer writes all of
//! them in the same transaction as the new state (docs/service.md, "Delivery": the outbox is written with the step
//! transition), so a crash never separates a transition from its dispatch.

use crate::code::Code;
use crate::engine::state::Run;
use crate::engine::SignalFacts;
use crate::routing::Dropped;
use crate::timing::{Channel, ClosedBy};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// A message for the delivery side (docs/service.md, "Delivery"). Created exactly once per run: the idempotency key
/// is the enrollment and the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dispatch {
    /// `<enrollment>:<run>`.
    pub idempotency_key: String,
    /// The run that sends it: one dispatch per run, whatever retries happen.
    pub run: u64,
    /// The step's key in the flow, for people reading the outbox.
    pub step: String,
    /// `email` or `sms`: the channel of the step.
    pub channel: Channel,
    /// The address or E.164 number.
    pub recipient: String,
    /// The step's `params.template`.
    pub template: String,
    /// The enrollment input, for the template.
    pub input: serde_json::Value,
    /// The step's optional channel details (`params.channel`, e.g. a subject line), copied
    /// unchanged for the delivery side.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel_params: Option<serde_json::Map<String, serde_json::Value>>,
    /// For email: the `Message-ID` nudge assigned, `<enrollment.run@nudge>`; replies are matched
    /// to the thread by it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    /// The capacity slot this send took (docs/capacity.md), when its sender has caps on the channel: the
    /// store writes it to the ledger in the same transaction as the dispatch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reservation: Option<crate::capacity::Entry>,
    /// The step's variant this contact got, when the step has variants (its `params` are the
    /// ones sent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
}

/// The `Message-ID` nudge assigns to the email of run `run` of enrollment `enrollment`:
/// `<enrollment.run@nudge>`. Inbound mail is matched to its enrollment by
/// [`parse_message_id`] on `In-Reply-To` / `References`.
pub fn message_id(enrollment: &str, run: u64) -> String {
    // Spelled by hand: `format!` was a tenth of the interpreter's instructions for a send.
    let mut id = String::with_capacity(enrollment.len() + 28);
    id.push('<');
    id.push_str(enrollment);
    id.push('.');
    push_decimal(&mut id, run);
    id.push_str("@nudge>");
    id
}

/// Appends `n` in decimal, as `Display` writes it (itoa: no `fmt`, and no UTF-8 check of the
/// digits).
pub fn push_decimal(out: &mut String, n: u64) {
    out.push_str(itoa::Buffer::new().format(n));
}

/// The enrollment and run of a `Message-ID` nudge assigned, or `None` for any other id. The run
/// is read from the right, so an enrollment id containing a `.` still round-trips.
pub fn parse_message_id(text: &str) -> Option<(String, u64)> {
    let inner = text.trim().strip_prefix('<')?.strip_suffix("@nudge>")?;
    let (enrollment, run) = inner.rsplit_once('.')?;
    if enrollment.is_empty() {
        return None;
    }
    Some((enrollment.to_string(), run.parse().ok()?))
}

/// A task for a person or a dialer (`ListTasks`), created when due.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Task {
    /// `<enrollment>:<run>`.
    pub idempotency_key: String,
    /// The task run: what a reported outcome names, so a late outcome of an old task is
    /// refused instead of moving a newer step.
    pub run: u64,
    /// The step's key in the flow.
    pub step: String,
    /// The step's `type`: `call`, `linkedin_connect`, `linkedin_message`.
    #[serde(rename = "type")]
    pub step_type: String,
    /// The step's params (template, notes, `connected_outcomes`, …) as written.
    pub params: serde_json::Value,
    /// The enrollment input, for the person doing the task.
    pub input: serde_json::Value,
    /// When the task times out, if it has a timeout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub due_by: Option<DateTime<Utc>>,
    /// The capacity slot this task took (docs/capacity.md: tasks count when created).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reservation: Option<crate::capacity::Entry>,
    /// The step's variant this contact got, when the step has variants (its `params` are the
    /// ones shown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
}

/// The most of a signal's payload a journey entry (or an enrollment's [`Woken`]) records, in
/// bytes of JSON text. A custom event may carry 64 KiB (docs/signals.md, "Custom events") and up to 1,000 signals can
/// wait in one buffer; the journey keeps what people read, the stored signal keeps it all.
pub const MAX_RECORDED_PAYLOAD: usize = 4 * 1024;

/// A signal's payload as the journey records it: the payload itself when its JSON fits in
/// [`MAX_RECORDED_PAYLOAD`] bytes, else only its size (`payload_truncated`), never an error.
/// `{}` (no payload) is not written at all.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedPayload {
    /// The payload, when there is one and it fits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<serde_json::Value>,
    /// Instead of `payload` when it did not fit: its size in bytes of JSON text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload_truncated: Option<usize>,
}

/// The reading stored in a signal's payload (under [`crate::inbound::intent::PAYLOAD_KEY`]),
/// if its words were read.
pub fn reading_of(payload: &serde_json::Value) -> Option<crate::inbound::intent::ReplyIntent> {
    payload
        .get(crate::inbound::intent::PAYLOAD_KEY)
        .and_then(|v| serde_json::from_value(v.clone()).ok())
}

impl RecordedPayload {
    /// What the journey records of `payload`: all of it but a reply's reading, which its entry
    /// shows as `intent`.
    pub fn of(payload: &serde_json::Value) -> RecordedPayload {
        if let Some(map) = payload
            .as_object()
            .filter(|m| m.contains_key(crate::inbound::intent::PAYLOAD_KEY))
        {
            let mut rest = map.clone();
            rest.remove(crate::inbound::intent::PAYLOAD_KEY);
            return RecordedPayload::of(&serde_json::Value::Object(rest));
        }
        if payload.as_object().is_some_and(|o| o.is_empty()) || payload.is_null() {
            return RecordedPayload::default();
        }
        let size = payload.to_string().len();
        if size > MAX_RECORDED_PAYLOAD {
            RecordedPayload {
                payload: None,
                payload_truncated: Some(size),
            }
        } else {
            RecordedPayload {
                payload: Some(payload.clone()),
                payload_truncated: None,
            }
        }
    }
}

/// The signal that ended the last `wait_for` run (it woke the run, or the run consumed it from
/// the buffer): docs/signals.md, "Custom events"'s "the wait completes with the payload", kept on the enrollment so
/// `GetEnrollment` shows it, and what `signal.*` reads. A `wait_for` run that closes any other
/// way (its timeout, an operator's move, an exit) clears it: a later step never reads the signal
/// of an earlier wait.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Woken {
    /// The `wait_for` run it closed.
    pub run: u64,
    /// That run's step.
    pub step: String,
    /// The stored signal's id (the run's `woken_by`).
    pub signal: String,
    /// The event it took (the `next` key).
    pub branch: String,
    /// Its payload, capped like the journey's.
    #[serde(flatten)]
    pub payload: RecordedPayload,
    /// What `signal.*` reads of it (its channel, a reply's intent, `resume_on`, a referral).
    /// Absent in states stored before signals carried facts: they read as none.
    #[serde(default, skip_serializing_if = "SignalFacts::is_empty")]
    pub facts: SignalFacts,
}

/// What a signal did in this enrollment (docs/service.md, "The journey").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "effect", rename_all = "snake_case")]
pub enum SignalEffect {
    /// It closed the waiting run on `branch`.
    Woke {
        /// The `wait_for` run it closed.
        run: u64,
        /// The event it took (the `next` key), picked by precedence.
        branch: String,
        /// The signal's payload (capped).
        #[serde(flatten)]
        payload: RecordedPayload,
    },
    /// Nobody waited for it: kept for a later `wait_for`.
    Buffered {
        /// The signal's payload (capped).
        #[serde(flatten)]
        payload: RecordedPayload,
    },
    /// A `wait_for` took it from the buffer when entered.
    Consumed {
        /// The `wait_for` run that took it.
        run: u64,
        /// The event it took (the `next` key).
        branch: String,
        /// The signal's payload (capped).
        #[serde(flatten)]
        payload: RecordedPayload,
    },
    /// It left the buffer unconsumed (7 days passed, or the buffer was full).
    Expired {
        /// Too old, or pushed out by a newer signal.
        why: Dropped,
        /// When it left the buffer.
        at: DateTime<Utc>,
    },
    /// The enrollment was paused.
    IgnoredPaused,
    /// Journal-only (docs/signals.md, "Inbox signals"): an automatic answer while away, an SMS `HELP`, a delayed
    /// delivery, an opt-in.
    Noted {
        /// What it was.
        what: String,
    },
    /// An out-of-office notice paused the enrollment until `until`.
    Paused {
        /// When it resumes by itself.
        until: DateTime<Utc>,
    },
    /// It ended the enrollment (`exit_on` or opt-out).
    Exited {
        /// `opt_out:<channel>` or `exit_on:<event>`, as on the enrollment.
        reason: String,
    },
}

/// One journey entry (docs/service.md, "The journey") besides the runs themselves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum JourneyEntry {
    /// The enrollment started.
    Enrolled {
        /// The flow's `start` step, entered next.
        step: String,
    },
    /// An operator paused it, or an out-of-office notice did (`reason` `OUT_OF_OFFICE`, with
    /// `until`, docs/signals.md, "Inbox signals").
    Paused {
        /// Why, when not an operator: `OUT_OF_OFFICE`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<PauseReason>,
        /// When it resumes by itself.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        until: Option<DateTime<Utc>>,
        /// How `until` was found (`returns 2027-01-05`, or why the default pause applies).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
    },
    /// An operator resumed it, or the out-of-office pause ended (`reason` `OUT_OF_OFFICE`: by
    /// itself at its `until`, or early, by a person's signal).
    Resumed {
        /// Which pause ended, when not an operator's.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<PauseReason>,
    },
    /// An operator moved it to another step.
    Moved {
        /// The step it was in, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        from: Option<String>,
        /// The step entered.
        to: String,
    },
    /// An operator moved it to another version of its flow.
    Migrated {
        /// The version it ran.
        from_version: u32,
        /// The version it runs now.
        to_version: u32,
        /// The step it was at, in the old version.
        from_step: String,
        /// The same run's step in the new version.
        to_step: String,
    },
    /// It left early (a signal's exit or an operator's).
    Exited {
        /// Why: `opt_out:sms`, `exit_on:meeting_booked`, an operator's reason.
        reason: String,
    },
    /// It finished.
    Completed {
        /// The `end` step's (or the operator's) outcome.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        outcome: Option<String>,
    },
    /// It could not go on.
    Failed {
        /// Which rule stopped it (`WAIT_EXCEEDS_LIMIT`, `LOOP_GUARD`, …).
        code: Code,
        /// The step that could not be run, when one was: its run is not in the journey,
        /// since a failed transition commits nothing but the failure (docs/service.md, "Errors").
        #[serde(default, skip_serializing_if = "Option::is_none")]
        step: Option<String>,
        /// What happened and what to fix.
        message: String,
    },
    /// The gate found the window closed at execution (docs/timing.md, "Send windows" step 4), or the sender's capacity
    /// full (docs/capacity.md).
    Deferred {
        /// The run deferred.
        run: u64,
        /// Its step.
        step: String,
        /// The next opening, when the gate tries again.
        to: DateTime<Utc>,
        /// Why: `send_window`, `holiday` or `quiet_hours` (docs/timing.md, "Send windows" and "Holiday calendars and quiet hours").
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<ClosedBy>,
        /// The quiet-hours place rule that decided (`US-FL`), when one did.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rule: Option<String>,
        /// A capacity deferral: the cap that held it (`CAP_DAILY`, …, docs/capacity.md). Absent when
        /// only a window did.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cap: Option<crate::capacity::CapReason>,
    },
    /// The step cannot be planned: `ZONE_UNKNOWN` or `NO_OPENING`. Nothing is sent; the run
    /// stays open until the contact changes or an operator acts.
    Held {
        /// The run held.
        run: u64,
        /// Its step.
        step: String,
        /// `ZONE_UNKNOWN`, `NO_OPENING`, or the timing code of a zone that no longer parses.
        code: Code,
        /// What to fix (usually the contact's zone or phone).
        message: String,
    },
    /// A held step was planned again, now that the contact's zone or number allows it.
    Released {
        /// The run released.
        run: u64,
        /// Its step.
        step: String,
        /// When it goes (or its task is created): the next opening from the change.
        scheduled: DateTime<Utc>,
    },
    /// An outreach step passed over without sending (the contact opted out of the channel, or
    /// has no address for it); the flow went on.
    Skipped {
        /// The run skipped.
        run: u64,
        /// Its step.
        step: String,
        /// Why it could not send (`the contact opted out of sms`, …).
        reason: String,
    },
    /// A task's outcome was applied.
    TaskOutcome {
        /// The task run.
        run: u64,
        /// Its step.
        step: String,
        /// The outcome reported.
        outcome: String,
    },
    /// What a signal did here.
    Signal {
        /// The stored signal's id.
        signal: String,
        /// What a human reply's words said (its intent, confidence, language, evidence, and a
        /// `resume_on` date or a referral when it named one): shown here rather than inside
        /// the recorded payload, so every entry of the signal carries it, whatever it did.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        intent: Option<crate::inbound::intent::ReplyIntent>,
        /// Woke, buffered, consumed, expired, ignored or exited.
        #[serde(flatten)]
        effect: SignalEffect,
    },
    /// An input that could not apply (an unknown step to move to, an outcome for a task that
    /// is no longer open); the state is unchanged.
    Rejected {
        /// The input's name (`move_to`, `task_outcome`, …).
        input: String,
        /// Why it could not apply, and what would.
        reason: String,
    },
    /// A `fetch` attempt ended (docs/flows.md, "fetch"): one entry per attempt.
    FetchAttempt {
        /// The fetch run.
        run: u64,
        /// Which attempt, from 1.
        attempt: u32,
        /// The HTTP status, when the peer answered.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        status: Option<u16>,
        /// What went wrong otherwise (`timeout`, a refused address, …).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        /// How long it took.
        ms: u64,
    },
    /// A person decided an approval.
    Decided {
        /// The approval run.
        run: u64,
        /// `approved` or `rejected`.
        decision: crate::engine::outside::Decision,
        /// The form's values.
        input: serde_json::Value,
        /// Who decided, when given.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        by: Option<String>,
    },
    /// The delivery side acknowledged the run's dispatch (`AckDispatch`): one entry per
    /// attempt, so retries show. Written by the dispatch service, not the interpreter: an ack
    /// changes the outbox, never the enrollment's state.
    DispatchAcked {
        /// The run whose dispatch it is.
        run: u64,
        /// Its step.
        step: String,
        /// The dispatch's id.
        dispatch: String,
        /// Which attempt (claim) this was, from 1.
        attempt: u32,
        /// What the delivery side said.
        outcome: AckOutcome,
        /// Sent: the provider's message id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        provider_message_id: Option<String>,
        /// Retry or failed: why it was not sent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        failure: Option<String>,
        /// Retry: when it is due again.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        retry_at: Option<DateTime<Utc>>,
        /// Failed because a retry was asked for after the last allowed attempt.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        gave_up: bool,
    },
    /// The provider reported that a dispatch it took was not delivered (a Twilio status
    /// callback `undelivered` or `failed`; docs/providers.md). Written by the provider webhook, like an
    /// ack: it changes the outbox, never the enrollment's state.
    DeliveryFailed {
        /// The run whose dispatch it is.
        run: u64,
        /// Its step.
        step: String,
        /// The dispatch's id.
        dispatch: String,
        /// Who reported it (`twilio`).
        provider: String,
        /// The provider's status (`undelivered`, `failed`).
        status: String,
        /// The provider's error code (`30003`), when given.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error_code: Option<u32>,
        /// The provider's words, when given.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
}

/// Why an enrollment was paused other than by an operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum PauseReason {
    /// An out-of-office notice (docs/signals.md, "Inbox signals").
    #[serde(rename = "OUT_OF_OFFICE")]
    OutOfOffice,
}

/// What an `AckDispatch` said about one attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AckOutcome {
    /// The provider took it.
    Sent,
    /// A transient failure: it is due again later.
    Retry,
    /// It will not be sent.
    Failed,
}

/// One effect of a [`crate::engine::step`] call, in the order they happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Effect {
    /// A step was entered; the run as it was planned.
    RunOpened(Run),
    /// A run ended. `branch` is the `next` key taken (an event name, `timeout`, `then`, a task
    /// outcome), or `exit` / `moved` / `completed` / `skipped` / `failed`; none for `end`.
    RunClosed {
        /// The run closed.
        run: u64,
        /// Its step.
        step: String,
        /// When.
        closed: DateTime<Utc>,
        /// The branch taken (see above).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        branch: Option<String>,
        /// The signal that closed it, when one did.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        woken_by: Option<String>,
    },
    /// Write this to the dispatch outbox.
    Dispatch(Dispatch),
    /// An outreach step is held: show it in the dispatch stream, send nothing.
    DispatchHeld {
        /// The key the dispatch would have had (`<enrollment>:<run>`).
        idempotency_key: String,
        /// The run held.
        run: u64,
        /// `email` or `sms`.
        channel: Channel,
        /// Why it is held (`ZONE_UNKNOWN`, `NO_OPENING`, …).
        code: Code,
        /// What to fix.
        message: String,
    },
    /// Create this task.
    TaskCreated(Task),
    /// A task outcome raised these events (docs/signals.md, "Kinds of signal and the events they raise"): route them, as a signal, to the
    /// contact's *other* enrollments. In this enrollment the outcome already took its branch.
    RaiseSignal {
        /// The task run whose outcome raised them.
        run: u64,
        /// The events raised (`call_connected`, `reply`, …).
        raises: Vec<String>,
    },
    /// Record this `fetch` attempt in the outbox; a worker sends it outside the transaction
    /// and feeds the answer back.
    FetchRequested(crate::engine::outside::FetchRequest),
    /// An approval step was entered (the journey's `approval_requested`, with the link's
    /// expiry, never the token): sign a link for this run and hand it to the delivery side
    /// as a dispatch on channel `approval` (docs/flows.md, "approval"). The interpreter holds no secret, so the
    /// token is made where the secret is.
    ApprovalRequested {
        /// The approval run.
        run: u64,
        /// Its step.
        step: String,
        /// The page's and the dispatch's title.
        title: String,
        /// When the link stops working.
        expires_at: DateTime<Utc>,
    },
    /// Append this to the journey.
    Journey(JourneyEntry),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_ids_round_trip() {
        assert_eq!(message_id("enr-1", 3), "<enr-1.3@nudge>");
        for n in [0, 7, 10, 12_345, u64::MAX] {
            let mut text = String::new();
            push_decimal(&mut text, n);
            assert_eq!(text, n.to_string());
        }
        assert_eq!(
            parse_message_id(" <a.b.7@nudge>"),
            Some(("a.b".to_string(), 7))
        );
        for bad in [
            "<x@gmail.com>",
            "<.3@nudge>",
            "<e.x@nudge>",
            "e.3@nudge",
            "",
        ] {
            assert_eq!(parse_message_id(bad), None, "{bad}");
        }
    }
}
