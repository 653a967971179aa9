//! The closed sets of names the engine's output is stored and answered under: an enrollment's
//! [`Status`] read back from text, the [`JourneyKind`] of each effect, and the
//! [`DeliveryEffect`] a signal had in one enrollment. One spelling each, shared by the store,
//! the services and the wire.

use super::effect::{Effect, JourneyEntry, SignalEffect};
use super::state::Status;

impl Status {
    /// Every status, in lifecycle order.
    pub const ALL: [Status; 5] = [
        Status::Active,
        Status::Paused,
        Status::Completed,
        Status::Exited,
        Status::Failed,
    ];
    /// The statuses a signal still reaches and a duplicate check still counts.
    pub const LIVE: [Status; 2] = [Status::Active, Status::Paused];

    /// The status spelled `text` (`active`, …), if it is one.
    pub fn parse(text: &str) -> Option<Status> {
        Status::ALL.into_iter().find(|s| s.as_str() == text)
    }
}

/// What a signal did in one enrollment, without its details (docs/service.md, "The journey"): the `effect` of a
/// delivery row and of the answer to a signal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DeliveryEffect {
    /// It closed the waiting run on a branch.
    Woke,
    /// Nobody waited for it: kept for a later `wait_for`.
    Buffered,
    /// A `wait_for` took it from the buffer.
    Consumed,
    /// It left the buffer unconsumed.
    Expired,
    /// The enrollment was paused.
    IgnoredPaused,
    /// It ended the enrollment.
    Exited,
    /// Journal-only (an automatic answer while away, `HELP`, a delayed delivery, an opt-in).
    Noted,
    /// An out-of-office notice paused the enrollment.
    Paused,
    /// It reached an enrollment that had finished meanwhile: nothing happened.
    None,
}

impl DeliveryEffect {
    /// Every effect.
    pub const ALL: [DeliveryEffect; 9] = [
        DeliveryEffect::Woke,
        DeliveryEffect::Buffered,
        DeliveryEffect::Consumed,
        DeliveryEffect::Expired,
        DeliveryEffect::IgnoredPaused,
        DeliveryEffect::Exited,
        DeliveryEffect::Noted,
        DeliveryEffect::Paused,
        DeliveryEffect::None,
    ];

    /// The stored and wire spelling (`woke`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryEffect::Woke => "woke",
            DeliveryEffect::Buffered => "buffered",
            DeliveryEffect::Consumed => "consumed",
            DeliveryEffect::Expired => "expired",
            DeliveryEffect::IgnoredPaused => "ignored_paused",
            DeliveryEffect::Exited => "exited",
            DeliveryEffect::Noted => "noted",
            DeliveryEffect::Paused => "paused",
            DeliveryEffect::None => "none",
        }
    }

    /// The effect spelled `text`, if it is one.
    pub fn parse(text: &str) -> Option<DeliveryEffect> {
        DeliveryEffect::ALL.into_iter().find(|e| e.as_str() == text)
    }

    /// The effect of the signal `signal_id` among a step's `effects`, and the branch when it
    /// woke or was consumed by a wait; `None` when the step did not mention it.
    pub fn of(signal_id: &str, effects: &[Effect]) -> (DeliveryEffect, Option<String>) {
        effects
            .iter()
            .find_map(|e| match e {
                Effect::Journey(JourneyEntry::Signal { signal, effect, .. })
                    if signal == signal_id =>
                {
                    Some(DeliveryEffect::from_signal_effect(effect))
                }
                _ => None,
            })
            .unwrap_or((DeliveryEffect::None, None))
    }

    fn from_signal_effect(effect: &SignalEffect) -> (DeliveryEffect, Option<String>) {
        match effect {
            SignalEffect::Woke { branch, .. } => (DeliveryEffect::Woke, Some(branch.clone())),
            SignalEffect::Buffered { .. } => (DeliveryEffect::Buffered, None),
            SignalEffect::Consumed { branch, .. } => {
                (DeliveryEffect::Consumed, Some(branch.clone()))
            }
            SignalEffect::Expired { .. } => (DeliveryEffect::Expired, None),
            SignalEffect::IgnoredPaused => (DeliveryEffect::IgnoredPaused, None),
            SignalEffect::Exited { .. } => (DeliveryEffect::Exited, None),
            SignalEffect::Noted { .. } => (DeliveryEffect::Noted, None),
            SignalEffect::Paused { .. } => (DeliveryEffect::Paused, None),
        }
    }
}

impl std::fmt::Display for DeliveryEffect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The kind of a journey row: the entry's `event`, or the effect's `kind`, as serialized.
/// Computed from the effect itself, never read back out of its JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JourneyKind {
    /// [`Effect::RunOpened`].
    RunOpened,
    /// [`Effect::RunClosed`].
    RunClosed,
    /// [`Effect::Dispatch`].
    Dispatch,
    /// [`Effect::DispatchHeld`].
    DispatchHeld,
    /// [`Effect::TaskCreated`].
    TaskCreated,
    /// [`Effect::RaiseSignal`].
    RaiseSignal,
    /// [`Effect::FetchRequested`].
    FetchRequested,
    /// [`JourneyEntry::FetchAttempt`].
    FetchAttempt,
    /// [`Effect::ApprovalRequested`].
    ApprovalRequested,
    /// [`JourneyEntry::Decided`].
    Decided,
    /// [`JourneyEntry::Enrolled`].
    Enrolled,
    /// [`JourneyEntry::Paused`].
    Paused,
    /// [`JourneyEntry::Resumed`].
    Resumed,
    /// [`JourneyEntry::Moved`].
    Moved,
    /// [`JourneyEntry::Migrated`].
    Migrated,
    /// [`JourneyEntry::Exited`].
    Exited,
    /// [`JourneyEntry::Completed`].
    Completed,
    /// [`JourneyEntry::Failed`].
    Failed,
    /// [`JourneyEntry::Deferred`].
    Deferred,
    /// [`JourneyEntry::Held`].
    Held,
    /// [`JourneyEntry::Released`].
    Released,
    /// [`JourneyEntry::Skipped`].
    Skipped,
    /// [`JourneyEntry::TaskOutcome`].
    TaskOutcome,
    /// [`JourneyEntry::Signal`].
    Signal,
    /// [`JourneyEntry::Rejected`].
    Rejected,
    /// [`JourneyEntry::DispatchAcked`].
    DispatchAcked,
    /// [`JourneyEntry::DeliveryFailed`].
    DeliveryFailed,
}

impl JourneyKind {
    /// The kind of `effect`.
    pub fn of(effect: &Effect) -> JourneyKind {
        match effect {
            Effect::RunOpened(_) => JourneyKind::RunOpened,
            Effect::RunClosed { .. } => JourneyKind::RunClosed,
            Effect::Dispatch(_) => JourneyKind::Dispatch,
            Effect::DispatchHeld { .. } => JourneyKind::DispatchHeld,
            Effect::TaskCreated(_) => JourneyKind::TaskCreated,
            Effect::RaiseSignal { .. } => JourneyKind::RaiseSignal,
            Effect::FetchRequested(_) => JourneyKind::FetchRequested,
            Effect::ApprovalRequested { .. } => JourneyKind::ApprovalRequested,
            Effect::Journey(entry) => match entry {
                JourneyEntry::Enrolled { .. } => JourneyKind::Enrolled,
                JourneyEntry::Paused { .. } => JourneyKind::Paused,
                JourneyEntry::Resumed { .. } => JourneyKind::Resumed,
                JourneyEntry::Moved { .. } => JourneyKind::Moved,
                JourneyEntry::Migrated { .. } => JourneyKind::Migrated,
                JourneyEntry::Exited { .. } => JourneyKind::Exited,
                JourneyEntry::Completed { .. } => JourneyKind::Completed,
                JourneyEntry::Failed { .. } => JourneyKind::Failed,
                JourneyEntry::Deferred { .. } => JourneyKind::Deferred,
                JourneyEntry::Held { .. } => JourneyKind::Held,
                JourneyEntry::Released { .. } => JourneyKind::Released,
                JourneyEntry::Skipped { .. } => JourneyKind::Skipped,
                JourneyEntry::TaskOutcome { .. } => JourneyKind::TaskOutcome,
                JourneyEntry::Signal { .. } => JourneyKind::Signal,
                JourneyEntry::Rejected { .. } => JourneyKind::Rejected,
                JourneyEntry::DispatchAcked { .. } => JourneyKind::DispatchAcked,
                JourneyEntry::DeliveryFailed { .. } => JourneyKind::DeliveryFailed,
                JourneyEntry::FetchAttempt { .. } => JourneyKind::FetchAttempt,
                JourneyEntry::Decided { .. } => JourneyKind::Decided,
            },
        }
    }

    /// Every kind (Watch's `kinds` filter is checked against them, and the journey's sentences
    /// are tested for each).
    pub const ALL: [JourneyKind; 27] = [
        JourneyKind::RunOpened,
        JourneyKind::RunClosed,
        JourneyKind::Dispatch,
        JourneyKind::DispatchHeld,
        JourneyKind::TaskCreated,
        JourneyKind::RaiseSignal,
        JourneyKind::FetchRequested,
        JourneyKind::FetchAttempt,
        JourneyKind::ApprovalRequested,
        JourneyKind::Decided,
        JourneyKind::Enrolled,
        JourneyKind::Paused,
        JourneyKind::Resumed,
        JourneyKind::Moved,
        JourneyKind::Migrated,
        JourneyKind::Exited,
        JourneyKind::Completed,
        JourneyKind::Failed,
        JourneyKind::Deferred,
        JourneyKind::Held,
        JourneyKind::Released,
        JourneyKind::Skipped,
        JourneyKind::TaskOutcome,
        JourneyKind::Signal,
        JourneyKind::Rejected,
        JourneyKind::DispatchAcked,
        JourneyKind::DeliveryFailed,
    ];

    /// The kind spelled `text`.
    pub fn parse(text: &str) -> Option<JourneyKind> {
        JourneyKind::ALL.into_iter().find(|k| k.as_str() == text)
    }

    /// The stored spelling: serde's tag of the effect or entry (`run_opened`, `signal`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            JourneyKind::RunOpened => "run_opened",
            JourneyKind::RunClosed => "run_closed",
            JourneyKind::Dispatch => "dispatch",
            JourneyKind::DispatchHeld => "dispatch_held",
            JourneyKind::TaskCreated => "task_created",
            JourneyKind::RaiseSignal => "raise_signal",
            JourneyKind::FetchRequested => "fetch_requested",
            JourneyKind::FetchAttempt => "fetch_attempt",
            JourneyKind::ApprovalRequested => "approval_requested",
            JourneyKind::Decided => "decided",
            JourneyKind::Enrolled => "enrolled",
            JourneyKind::Paused => "paused",
            JourneyKind::Resumed => "resumed",
            JourneyKind::Moved => "moved",
            JourneyKind::Migrated => "migrated",
            JourneyKind::Exited => "exited",
            JourneyKind::Completed => "completed",
            JourneyKind::Failed => "failed",
            JourneyKind::Deferred => "deferred",
            JourneyKind::Held => "held",
            JourneyKind::Released => "released",
            JourneyKind::Skipped => "skipped",
            JourneyKind::TaskOutcome => "task_outcome",
            JourneyKind::Signal => "signal",
            JourneyKind::Rejected => "rejected",
            JourneyKind::DispatchAcked => "dispatch_acked",
            JourneyKind::DeliveryFailed => "delivery_failed",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_read_back() {
        for s in Status::ALL {
            assert_eq!(Status::parse(s.as_str()), Some(s));
        }
        assert_eq!(Status::parse("Active"), None);
    }

    #[test]
    fn all_lists_every_journey_kind() {
        // No wildcard: a new variant stops this compiling, the reminder to add it to `ALL`.
        let place = |k: JourneyKind| match k {
            JourneyKind::RunOpened => 0,
            JourneyKind::RunClosed => 1,
            JourneyKind::Dispatch => 2,
            JourneyKind::DispatchHeld => 3,
            JourneyKind::TaskCreated => 4,
            JourneyKind::RaiseSignal => 5,
            JourneyKind::FetchRequested => 6,
            JourneyKind::FetchAttempt => 7,
            JourneyKind::ApprovalRequested => 8,
            JourneyKind::Decided => 9,
            JourneyKind::Enrolled => 10,
            JourneyKind::Paused => 11,
            JourneyKind::Resumed => 12,
            JourneyKind::Moved => 13,
            JourneyKind::Migrated => 14,
            JourneyKind::Exited => 15,
            JourneyKind::Completed => 16,
            JourneyKind::Failed => 17,
            JourneyKind::Deferred => 18,
            JourneyKind::Held => 19,
            JourneyKind::Released => 20,
            JourneyKind::Skipped => 21,
            JourneyKind::TaskOutcome => 22,
            JourneyKind::Signal => 23,
            JourneyKind::Rejected => 24,
            JourneyKind::DispatchAcked => 25,
            JourneyKind::DeliveryFailed => 26,
        };
        let mut seen = [false; JourneyKind::ALL.len()];
        for k in JourneyKind::ALL {
            assert!(!seen[place(k)], "{k:?} is listed twice");
            seen[place(k)] = true;
            assert_eq!(JourneyKind::parse(k.as_str()), Some(k));
        }
        assert!(seen.iter().all(|s| *s), "a kind is missing from ALL");
    }

    #[test]
    fn delivery_effects_read_back() {
        for e in DeliveryEffect::ALL {
            assert_eq!(DeliveryEffect::parse(e.as_str()), Some(e));
        }
    }

    /// The kind is the tag serde writes, for one example of every entry and effect the
    /// serializer knows: a new variant with another tag fails here.
    #[test]
    fn journey_kind_is_the_serialized_tag() {
        let examples = vec![
            Effect::Journey(JourneyEntry::Paused {
                reason: None,
                until: None,
                note: None,
            }),
            Effect::Journey(JourneyEntry::Resumed { reason: None }),
            Effect::Journey(JourneyEntry::Enrolled { step: "a".into() }),
            Effect::Journey(JourneyEntry::Exited { reason: "r".into() }),
            Effect::Journey(JourneyEntry::Completed { outcome: None }),
            Effect::Journey(JourneyEntry::Moved {
                from: None,
                to: "b".into(),
            }),
            Effect::Journey(JourneyEntry::Migrated {
                from_version: 1,
                to_version: 2,
                from_step: "a".into(),
                to_step: "b".into(),
            }),
            Effect::Journey(JourneyEntry::Rejected {
                input: "resume".into(),
                reason: "x".into(),
            }),
            Effect::Journey(JourneyEntry::Signal {
                signal: "sg".into(),
                intent: None,
                effect: SignalEffect::Buffered {
                    payload: Default::default(),
                },
            }),
            Effect::Journey(JourneyEntry::DispatchAcked {
                run: 1,
                step: "email_1".into(),
                dispatch: "dp_1".into(),
                attempt: 1,
                outcome: crate::engine::effect::AckOutcome::Retry,
                provider_message_id: None,
                failure: Some("421 try later".into()),
                retry_at: None,
                gave_up: false,
            }),
            Effect::Journey(JourneyEntry::DeliveryFailed {
                run: 1,
                step: "sms_1".into(),
                dispatch: "dp_1".into(),
                provider: "twilio".into(),
                status: "undelivered".into(),
                error_code: Some(30003),
                error: None,
            }),
            Effect::RaiseSignal {
                run: 1,
                raises: vec![],
            },
        ];
        for effect in examples {
            let value = match &effect {
                Effect::Journey(entry) => serde_json::to_value(entry),
                other => serde_json::to_value(other),
            }
            .unwrap();
            let tag = value
                .get("event")
                .or_else(|| value.get("kind"))
                .and_then(|k| k.as_str())
                .unwrap();
            assert_eq!(JourneyKind::of(&effect).as_str(), tag, "{effect:?}");
        }
    }
}
