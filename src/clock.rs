//! The one place nudge reads the wall clock.
//!
//! Everything that stamps a time asks a [`Clock`]. `nudge serve --clock manual` swaps in a
//! [`ManualClock`] that only moves when told to, so tests and demos can walk weeks of virtual
//! time without sleeping (its gRPC service, `TestClockService`, arrives with the planner).
//!
//! Sleeping goes through the clock too ([`Clock::sleep_until`]), so the planner loop can run on
//! a manual clock in tests: its sleep ends when the clock is moved past the instant it waits
//! for, not when real time passes.

use chrono::{DateTime, Duration, DurationRound, Utc};
use futures_util::future::BoxFuture;
use std::sync::Arc;
use tokio::sync::watch;

/// A source of "now". Shared by the server and every request handler.
pub trait Clock: Send + Sync + 'static {
    /// The current instant, truncated to milliseconds (the storage resolution).
    fn now(&self) -> DateTime<Utc>;

    /// The manual clock behind this one, if it is one (`TestClockService` moves it).
    fn as_manual(&self) -> Option<&ManualClock> {
        None
    }

    /// Completes once this clock reads `instant` or later (at once if it already does).
    fn sleep_until(&self, instant: DateTime<Utc>) -> BoxFuture<'static, ()>;
}

/// The clock handle passed around the application.
pub type SharedClock = Arc<dyn Clock>;

/// The host's clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        truncate_ms(Utc::now())
    }

    fn sleep_until(&self, instant: DateTime<Utc>) -> BoxFuture<'static, ()> {
        let wait = (instant - Utc::now()).to_std().unwrap_or_default();
        Box::pin(tokio::time::sleep(wait))
    }
}

/// A clock that stands still until it is set or advanced.
#[derive(Debug)]
pub struct ManualClock {
    /// A watch channel rather than a mutex: each move also wakes the sleepers, which hold its
    /// receivers (a `DateTime` is not one word, so not an atomic either).
    now: watch::Sender<DateTime<Utc>>,
}

impl ManualClock {
    pub fn new(start: DateTime<Utc>) -> Self {
        ManualClock {
            now: watch::Sender::new(truncate_ms(start)),
        }
    }

    /// Moves the clock to `instant` (backwards too: a test may want to replay).
    pub fn set(&self, instant: DateTime<Utc>) {
        self.now.send_replace(truncate_ms(instant));
    }

    /// Moves the clock forward by `by` and returns the new instant.
    pub fn advance(&self, by: Duration) -> DateTime<Utc> {
        let mut moved = DateTime::<Utc>::MIN_UTC;
        self.now.send_modify(|now| {
            *now = truncate_ms(*now + by);
            moved = *now;
        });
        moved
    }

    /// How many [`Clock::sleep_until`] futures are waiting on this clock right now: tests use
    /// it to know that a loop has gone to sleep before they act.
    pub fn sleepers(&self) -> usize {
        self.now.receiver_count()
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        *self.now.borrow()
    }

    fn sleep_until(&self, instant: DateTime<Utc>) -> BoxFuture<'static, ()> {
        let mut moves = self.now.subscribe();
        Box::pin(async move {
            // The sender lives as long as the clock; if it is gone, nothing will move it.
            if moves.wait_for(|now| *now >= instant).await.is_err() {
                std::future::pending::<()>().await;
            }
        })
    }

    fn as_manual(&self) -> Option<&ManualClock> {
        Some(self)
    }
}

/// Instants are stored as epoch milliseconds; dropping finer digits at the source keeps a
/// stored-and-reloaded instant equal to the one in memory.
fn truncate_ms(instant: DateTime<Utc>) -> DateTime<Utc> {
    instant
        .duration_trunc(Duration::milliseconds(1))
        .unwrap_or(instant)
}

/// Epoch milliseconds, the storage form of an instant.
pub fn to_millis(instant: DateTime<Utc>) -> i64 {
    instant.timestamp_millis()
}

/// The instant of stored epoch milliseconds.
pub fn from_millis(ms: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(ms).unwrap_or(DateTime::<Utc>::MIN_UTC)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_moves_only_when_told() {
        let start = DateTime::parse_from_rfc3339("2026-03-29T00:30:00.123456Z")
            .unwrap()
            .with_timezone(&Utc);
        let clock = ManualClock::new(start);
        assert_eq!(clock.now().to_rfc3339(), "2026-03-29T00:30:00.123+00:00");
        assert_eq!(clock.now(), clock.now());
        let later = clock.advance(Duration::hours(2));
        assert_eq!(later.to_rfc3339(), "2026-03-29T02:30:00.123+00:00");
        clock.set(start);
        assert_eq!(clock.now().timestamp_millis(), 1_774_744_200_123);
    }

    #[tokio::test]
    async fn manual_sleep_ends_when_the_clock_reaches_the_instant() {
        let start = DateTime::parse_from_rfc3339("2026-03-29T00:30:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let clock = ManualClock::new(start);
        // Already reached: completes at once.
        clock.sleep_until(start).await;
        let sleep = clock.sleep_until(start + Duration::seconds(5));
        assert_eq!(clock.sleepers(), 1);
        let mut sleep = tokio::spawn(sleep);
        clock.advance(Duration::seconds(4));
        tokio::task::yield_now().await;
        assert!(
            tokio::time::timeout(std::time::Duration::from_millis(20), &mut sleep)
                .await
                .is_err(),
            "4 s of 5: still asleep"
        );
        clock.advance(Duration::seconds(1));
        sleep.await.unwrap();
        assert_eq!(clock.sleepers(), 0);
    }

    #[test]
    fn millis_round_trip() {
        let t = from_millis(1_774_744_200_123);
        assert_eq!(to_millis(t), 1_774_744_200_123);
    }
}
