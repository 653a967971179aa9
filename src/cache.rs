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
    inner: Arc<Mutex<Inner<V>>>,
}

#[derive(Debug)]
struct Inner<V> {
    entries: HashMap<String, (Instant, V)>,
    /// The size at which the next `put` drops the expired entries. Dropping them walks the
    /// whole map under the lock, so it waits until the map has doubled since the last walk:
    /// a put costs the same with one account or a hundred thousand sending (walking at every
    /// put made each one cost as many steps as entries were held).
    sweep_at: usize,
    /// Entries walked by sweeps so far (what the sweep rule bounds; tests read it).
    walked: u64,
}

/// The size below which a map is never swept: walking a small map costs less than keeping
/// track of when to.
const MIN_SWEEP: usize = 1024;

/// When to sweep next, with `live` entries left by the last sweep: once the map has doubled,
/// but not below [`MIN_SWEEP`], and at `max` at the latest.
fn next_sweep(live: usize, max: usize) -> usize {
    (2 * live).max(MIN_SWEEP).min(max)
}

impl<V: Clone> TtlCache<V> {
    pub fn new(ttl: Duration, max: usize) -> TtlCache<V> {
        TtlCache {
            ttl,
            max,
            inner: Arc::new(Mutex::new(Inner {
                entries: HashMap::new(),
                sweep_at: next_sweep(0, max),
                walked: 0,
            })),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner<V>> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The value put under `key` less than the TTL before `now`.
    pub fn get(&self, key: &str, now: Instant) -> Option<V> {
        let inner = self.lock();
        inner
            .entries
            .get(key)
            .filter(|(put, _)| now.saturating_duration_since(*put) < self.ttl)
            .map(|(_, value)| value.clone())
    }

    /// Remembers `value` under `key` as of `now`; when the map has grown to its next sweep,
    /// drops the expired entries first (and everything, when all `max` are live).
    pub fn put(&self, key: &str, value: &V, now: Instant) {
        let mut inner = self.lock();
        if inner.entries.len() >= inner.sweep_at && !inner.entries.contains_key(key) {
            inner.walked += inner.entries.len() as u64;
            let ttl = self.ttl;
            inner
                .entries
                .retain(|_, (put, _)| now.saturating_duration_since(*put) < ttl);
            if inner.entries.len() >= self.max {
                inner.entries.clear();
            }
            inner.sweep_at = next_sweep(inner.entries.len(), self.max);
        }
        inner.entries.insert(key.to_string(), (now, value.clone()));
    }

    /// Forgets `key`: the next `get` reads the source again (a secret changed in this process).
    pub fn forget(&self, key: &str) {
        self.lock().entries.remove(key);
    }

    /// How many entries it holds, expired ones included.
    pub fn len(&self) -> usize {
        self.lock().entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TTL: Duration = Duration::from_secs(1);

    #[test]
    fn a_put_walks_a_bounded_share_of_the_map_however_many_keys_are_live() {
        // 100,000 accounts each sending within the TTL: every entry stays live. Walking the
        // map at every put would walk about n² / 2 = 5,000,000,000 entries here.
        let n = 100_000;
        let cache = TtlCache::new(TTL, 200_000);
        let t0 = Instant::now();
        for i in 0..n {
            cache.put(&format!("a{i}"), &i, t0);
        }
        let walked = cache.lock().walked;
        assert!(
            walked <= 2 * n as u64,
            "{walked} entries walked for {n} puts"
        );
        assert_eq!(cache.len(), n);
        assert_eq!(cache.get("a0", t0), Some(0));
        assert_eq!(cache.get(&format!("a{}", n - 1), t0), Some(n - 1));
    }

    #[test]
    fn expired_entries_are_never_answered_and_go_when_the_map_grows() {
        let cache = TtlCache::new(TTL, 100_000);
        let t0 = Instant::now();
        for i in 0..5_000 {
            cache.put(&format!("old{i}"), &i, t0);
        }
        assert_eq!(cache.get("old1", t0 + TTL), None, "expired at the TTL");
        // Keys put after the TTL: the first sweep drops every old one.
        let later = t0 + 2 * TTL;
        for i in 0..5_000 {
            cache.put(&format!("new{i}"), &i, later);
        }
        assert!(cache.len() < 10_000, "{} entries held", cache.len());
        assert_eq!(cache.get("new4999", later), Some(4_999));
        assert_eq!(cache.get("old4999", later), None);
    }

    #[test]
    fn a_full_map_of_live_entries_starts_over_and_stays_within_its_bound() {
        let cache = TtlCache::new(TTL, 3_000);
        let t0 = Instant::now();
        for i in 0..10_000 {
            cache.put(&format!("k{i}"), &i, t0);
            assert!(cache.len() <= 3_000, "{} entries after {i}", cache.len());
        }
        assert_eq!(cache.get("k9999", t0), Some(9_999));
    }

    #[test]
    fn a_key_put_again_is_updated_in_place() {
        let cache = TtlCache::new(TTL, 10);
        let t0 = Instant::now();
        cache.put("a", &1, t0);
        cache.put("a", &2, t0 + TTL / 2);
        assert_eq!(
            cache.get("a", t0 + TTL),
            Some(2),
            "trusted from its last put"
        );
        cache.forget("a");
        assert_eq!(cache.get("a", t0), None);
        assert!(cache.is_empty());
    }
}
