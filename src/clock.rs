//! The one place nudge reads the wall clock.
//!
//! Everything that stamps a time asks a [`Clock`]. `nudge serve --clock manual` swaps in a
//! [`ManualClock`] that only moves when told to, so tests and demos can walk weeks of virtual
//! time without sleeping (its gRPC service, `TestClockService`, arrives with the planner).

use chrono::{DateTime, Duration, DurationRound, Utc};
use std::sync::{Arc, Mutex};

/// A source of "now". Shared by the server and every request handler.
pub trait Clock: Send + Sync + 'static {
    /// The current instant, truncated to milliseconds (the storage resolution).
    fn now(&self) -> DateTime<Utc>;

    /// The manual clock behind this one, if it is one (`TestClockService` moves it).
    fn as_manual(&self) -> Option<&ManualClock> {
        None
    }
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
}

/// A clock that stands still until it is set or advanced.
#[derive(Debug)]
pub struct ManualClock {
    /// A mutex rather than an atomic: reads are rare and a `DateTime` is not one word.
    now: Mutex<DateTime<Utc>>,
}

impl ManualClock {
    pub fn new(start: DateTime<Utc>) -> Self {
        ManualClock {
            now: Mutex::new(truncate_ms(start)),
        }
    }

    /// Moves the clock to `instant` (backwards too: a test may want to replay).
    pub fn set(&self, instant: DateTime<Utc>) {
        *self.now.lock().expect("clock mutex poisoned") = truncate_ms(instant);
    }

    /// Moves the clock forward by `by` and returns the new instant.
    pub fn advance(&self, by: Duration) -> DateTime<Utc> {
        let mut now = self.now.lock().expect("clock mutex poisoned");
        *now = truncate_ms(*now + by);
        *now
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        *self.now.lock().expect("clock mutex poisoned")
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

    #[test]
    fn millis_round_trip() {
        let t = from_millis(1_774_744_200_123);
        assert_eq!(to_millis(t), 1_774_744_200_123);
    }
}
