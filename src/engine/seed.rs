//! The jitter seed of a run (docs/timing.md, "Fixed once"): a stable function of the enrollment id, the run id and
//! a scenario seed, so `Simulate` and reality draw the same delay and a re-processed step draws
//! it again identically. It must not depend on the process (`std`'s `DefaultHasher` is seeded
//! per process and may change between Rust releases), hence FNV-1a and SplitMix64, both fixed,
//! published functions.

/// FNV-1a, 64-bit.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// SplitMix64's finalizer: spreads one bit of difference over the whole word.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The seed for the jitter of run `run` of enrollment `enrollment`; `extra` is the scenario's
/// `seed` in a simulation (0 in production unless the account sets one).
pub fn jitter_seed(enrollment: &str, run: u64, extra: u64) -> u64 {
    mix(mix(fnv1a(enrollment.as_bytes())) ^ mix(run) ^ extra.rotate_left(17))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stable_and_sensitive() {
        // FNV-1a of "a" is the published test vector 0xaf63dc4c8601ec8c.
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        let a = jitter_seed("enr-1", 3, 7);
        assert_eq!(a, jitter_seed("enr-1", 3, 7));
        assert_ne!(a, jitter_seed("enr-1", 4, 7));
        assert_ne!(a, jitter_seed("enr-2", 3, 7));
        assert_ne!(a, jitter_seed("enr-1", 3, 8));
    }
}
