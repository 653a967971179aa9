//! A map whose entries are trusted for a fixed time: what the edge remembers of the database
//! between requests (API tokens found, accounts' webhook keys), so a busy caller costs one read
//! per entry per TTL, not one per request. The caller passes `now`, so tests need no clock.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Entries by key, each trusted for `ttl` after it was put; at most `max` of them (past that,
/// the expired go, and if all are live the map starts over). Cheap to clone: clones share it.
#[derive(Debug, Clone)]
pub struct TtlCache<V> {
    ttl: Duration,
    max: usize,
    entries: Arc<Mutex<HashMap<String, (Instant, V)>>>,
}

impl<V: Clone> TtlCache<V> {
    pub fn new(ttl: Duration, max: usize) -> TtlCache<V> {
        TtlCache {
            ttl,
            max,
            entries: Arc::default(),
        }
    }

    /// The value put under `key` less than the TTL before `now`.
    pub fn get(&self, key: &str, now: Instant) -> Option<V> {
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries
            .get(key)
            .filter(|(put, _)| now.saturating_duration_since(*put) < self.ttl)
            .map(|(_, value)| value.clone())
    }

    /// Remembers `value` under `key` as of `now`, dropping the expired entries.
    pub fn put(&self, key: &str, value: &V, now: Instant) {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries.retain(|_, (put, _)| now.saturating_duration_since(*put) < self.ttl);
        if entries.len() >= self.max {
            entries.clear();
        }
        entries.insert(key.to_string(), (now, value.clone()));
    }

    /// Forgets `key`: the next `get` reads the source again (a secret changed in this process).
    pub fn forget(&self, key: &str) {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries.remove(key);
    }

    /// How many entries it holds, expired ones included.
    pub fn len(&self) -> usize {
        self.entries.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
