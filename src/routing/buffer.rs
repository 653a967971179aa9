//! The signal buffer of one enrollment (docs/signals.md, "Routing" rule 4, from seed 001).
//!
//! A signal that no step is waiting for is kept, so a reply that arrives a second before the
//! `wait_for` is entered is not lost. The rules: a later `wait_for` takes the **oldest** buffered
//! signal that raises one of its events; each signal is consumed by one wait; at most
//! [`BUFFER_CAP`] are kept (the oldest dropped first); each is dropped [`BUFFER_TTL_DAYS`] days
//! after it arrived. A signal that arrives after a wait timed out is buffered like any other.

use crate::engine::SignalFacts;
use crate::routing::precedence::pick;
use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// At most this many signals are kept per enrollment.
pub const BUFFER_CAP: usize = 1_000;
/// A buffered signal nobody claims is dropped this many days after it arrived.
pub const BUFFER_TTL_DAYS: i64 = 7;

/// A signal kept for a later wait.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BufferedSignal {
    /// The signal id (the journey's `woken_by` when a wait consumes it).
    pub id: String,
    /// The events it raises (`reply`, `reply:sms`, `payment.42`, …).
    pub raises: Vec<String>,
    /// The payload a custom event carried (`{}` when none).
    #[serde(default)]
    pub payload: serde_json::Value,
    /// When it arrived; the 7-day expiry counts from here.
    #[serde(with = "crate::engine::instant::stored")]
    pub at: DateTime<Utc>,
    /// What `signal.*` reads of it once a wait consumes it, kept from when it arrived. Absent
    /// in states stored before signals carried facts: they read as none.
    #[serde(default, skip_serializing_if = "SignalFacts::is_empty")]
    pub facts: SignalFacts,
}

impl BufferedSignal {
    /// The instant it is dropped if nobody consumed it.
    pub fn expires_at(&self) -> DateTime<Utc> {
        self.at + Duration::days(BUFFER_TTL_DAYS)
    }
}

/// Why a buffered signal left the buffer without being consumed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Dropped {
    /// Seven days passed.
    Expired,
    /// A newer signal arrived while 1,000 were kept.
    BufferFull,
}

/// The buffered signals of one enrollment, oldest first.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SignalBuffer {
    items: VecDeque<BufferedSignal>,
}

impl SignalBuffer {
    /// An empty buffer.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many signals are kept.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether nothing is kept.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The kept signals, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = &BufferedSignal> {
        self.items.iter()
    }

    /// Drops every signal that is 7 days old or older at `now`, and returns them (oldest first)
    /// so the journey can record `expired`.
    pub fn expire(&mut self, now: DateTime<Utc>) -> Vec<BufferedSignal> {
        // Every step asks, and most buffers are empty or keep everything: nothing to move.
        if !self.items.iter().any(|s| s.expires_at() <= now) {
            return Vec::new();
        }
        let (gone, kept): (Vec<_>, Vec<_>) =
            self.items.drain(..).partition(|s| s.expires_at() <= now);
        self.items = kept.into();
        gone
    }

    /// Keeps `signal` as the newest; returns the signals dropped to stay within [`BUFFER_CAP`].
    pub fn push(&mut self, signal: BufferedSignal) -> Vec<BufferedSignal> {
        self.items.push_back(signal);
        let mut dropped = Vec::new();
        while self.items.len() > BUFFER_CAP {
            dropped.extend(self.items.pop_front());
        }
        dropped
    }

    /// Removes and returns the oldest signal that raises one of `listed`, with the event it
    /// picks by the precedence rule (an SMS reply picks `reply:sms` over `reply` when both are
    /// listed).
    pub fn take_oldest(&mut self, listed: &[String]) -> Option<(BufferedSignal, String)> {
        let (index, event) = self
            .items
            .iter()
            .enumerate()
            .find_map(|(i, s)| pick(listed, &s.raises).map(|e| (i, e.to_string())))?;
        self.items.remove(index).map(|s| (s, event))
    }

    /// The earliest instant at which a kept signal expires (so a caller can show it).
    pub fn next_expiry(&self) -> Option<DateTime<Utc>> {
        self.items.iter().map(BufferedSignal::expires_at).min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn t0() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 12, 1, 12, 0, 0).unwrap()
    }

    fn sig(id: &str, raises: &[&str], at: DateTime<Utc>) -> BufferedSignal {
        BufferedSignal {
            id: id.into(),
            raises: raises.iter().map(|s| s.to_string()).collect(),
            payload: serde_json::json!({}),
            at,
            facts: SignalFacts::default(),
        }
    }

    fn listed(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn oldest_match_first_and_consumed_once() {
        let mut b = SignalBuffer::new();
        b.push(sig("m1", &["meeting_booked"], t0()));
        b.push(sig(
            "r1",
            &["reply", "reply:email"],
            t0() + Duration::minutes(1),
        ));
        b.push(sig(
            "r2",
            &["reply", "reply:sms"],
            t0() + Duration::minutes(2),
        ));
        let want = listed(&["reply", "reply:sms"]);
        // r1 is older than r2, so it is taken first even though r2 would pick the exact event.
        let (s, e) = b.take_oldest(&want).unwrap();
        assert_eq!((s.id.as_str(), e.as_str()), ("r1", "reply"));
        let (s, e) = b.take_oldest(&want).unwrap();
        assert_eq!((s.id.as_str(), e.as_str()), ("r2", "reply:sms"));
        assert!(
            b.take_oldest(&want).is_none(),
            "each signal is consumed once"
        );
        assert_eq!(b.len(), 1, "the unmatched signal stays");
    }

    #[test]
    fn cap_drops_the_oldest() {
        let mut b = SignalBuffer::new();
        for i in 0..BUFFER_CAP {
            assert!(b.push(sig(&format!("s{i}"), &["reply"], t0())).is_empty());
        }
        let dropped = b.push(sig("newest", &["reply"], t0()));
        assert_eq!(dropped.len(), 1);
        assert_eq!(dropped[0].id, "s0");
        assert_eq!(b.len(), BUFFER_CAP);
        assert_eq!(b.iter().next().unwrap().id, "s1");
        assert_eq!(b.iter().last().unwrap().id, "newest");
    }

    #[test]
    fn seven_day_expiry() {
        let mut b = SignalBuffer::new();
        b.push(sig("old", &["reply"], t0()));
        b.push(sig("new", &["reply"], t0() + Duration::days(1)));
        let just_before = t0() + Duration::days(7) - Duration::milliseconds(1);
        assert!(b.expire(just_before).is_empty());
        let gone = b.expire(t0() + Duration::days(7));
        assert_eq!(
            gone.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(),
            ["old"]
        );
        assert_eq!(b.next_expiry(), Some(t0() + Duration::days(8)));
        assert_eq!(b.expire(t0() + Duration::days(30)).len(), 1);
        assert!(b.is_empty());
    }

    #[test]
    fn facts_are_kept_and_optional_on_the_wire() {
        use crate::inbound::intent::{Intent, Referral};
        let mut with_facts = sig("r1", &["reply", "reply:email"], t0());
        with_facts.facts = SignalFacts {
            channel: Some("email".into()),
            intent: Some(Intent::NotNow),
            resume_on: chrono::NaiveDate::from_ymd_opt(2027, 3, 1),
            referral: Some(Referral {
                email: "bo@example.com".into(),
                name: Some("Bo".into()),
            }),
        };
        let json = serde_json::to_value(&with_facts).unwrap();
        assert_eq!(
            json["facts"],
            serde_json::json!({"channel": "email", "intent": "not_now", "resume_on": "2027-03-01",
                               "referral": {"email": "bo@example.com", "name": "Bo"}})
        );
        assert_eq!(
            serde_json::from_value::<BufferedSignal>(json).unwrap(),
            with_facts
        );
        let packed = rmp_serde::to_vec_named(&with_facts).unwrap();
        assert_eq!(
            rmp_serde::from_slice::<BufferedSignal>(&packed).unwrap(),
            with_facts
        );
        // No facts: nothing written, so a state stays as it was before signals carried them…
        let plain = sig("p1", &["payment.done"], t0());
        let json = serde_json::to_value(&plain).unwrap();
        assert!(json.get("facts").is_none(), "{json}");
        // …and one written before (no `facts` key), in either encoding, reads as none.
        let mut before = json.clone();
        before.as_object_mut().unwrap().remove("facts");
        assert_eq!(
            serde_json::from_value::<BufferedSignal>(before.clone()).unwrap(),
            plain
        );
        let packed = rmp_serde::to_vec_named(&plain).unwrap();
        assert_eq!(
            rmp_serde::from_slice::<BufferedSignal>(&packed).unwrap(),
            plain
        );
    }

    #[test]
    fn consumed_signals_keep_their_facts() {
        let mut b = SignalBuffer::new();
        let mut r = sig("r1", &["reply"], t0());
        r.facts.channel = Some("sms".into());
        b.push(sig("m1", &["meeting_booked"], t0()));
        b.push(r.clone());
        let (taken, event) = b.take_oldest(&listed(&["reply"])).unwrap();
        assert_eq!((taken, event.as_str()), (r, "reply"));
    }

    #[test]
    fn serializes_as_a_plain_list() {
        let mut b = SignalBuffer::new();
        b.push(sig("r1", &["reply"], t0()));
        let json = serde_json::to_value(&b).unwrap();
        assert!(json.is_array());
        let back: SignalBuffer = serde_json::from_value(json).unwrap();
        assert_eq!(back, b);
    }
}
