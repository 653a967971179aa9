//! Deterministic assignment, compatible with GrowthBook's hashing (version 2).
//!
//! A contact's bucket is `fnv1a32(decimal(fnv1a32(seed + contact_id))) mod 10000 / 10000`,
//! FNV-1a 32 taken over the strings' UTF-16 code units (what JavaScript's `charCodeAt` walks,
//! so a JS SDK agrees on every contact id, including ones outside the Basic Multilingual Plane).
//! The seed is `"<flow name>/<step id>:"`, or `"<experiment name>:"` when steps share one
//! experiment, so a contact gets the same variant at each of them; it holds no version, so a
//! new version of a flow keeps every assignment. The variants' weights, normalised to sum 1,
//! cut `[0, 1)` into consecutive ranges in the order the variants are listed, and the range
//! that holds the bucket is the contact's variant.
//!
//! A variant that was stopped takes no new contacts: a contact whose range is a stopped
//! variant's is placed among the variants still running by the same bucket over their
//! weights alone (normalised again). Contacts of running variants keep theirs.
//!
//! Tested against the `growthbook` package itself (`scripts/gen_variant_cases.py` writes
//! `fixtures/experiments/assignment.jsonl`; the test is `tests/it/experiment_golden.rs`).

/// FNV-1a, 32 bits, over the UTF-16 code units of `text`.
pub fn fnv1a32(text: &str) -> u32 {
    let mut hash: u32 = 0x811c_9dc5;
    for unit in text.encode_utf16() {
        hash ^= u32::from(unit);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    hash
}

/// The contact's place in `[0, 1)` for `seed`: GrowthBook's hash, version 2.
pub fn bucket(seed: &str, contact_id: &str) -> f64 {
    let first = fnv1a32(&format!("{seed}{contact_id}"));
    f64::from(fnv1a32(&first.to_string()) % 10_000) / 10_000.0
}

/// The seed of a step's experiment: `"<experiment name>:"` when the step names a shared
/// experiment, else `"<flow name>/<step id>:"`.
pub fn seed(flow_name: &str, step_id: &str, experiment: Option<&str>) -> String {
    match experiment {
        Some(name) => format!("{name}:"),
        None => format!("{flow_name}/{step_id}:"),
    }
}

/// The ranges `weights` cut `[0, 1)` into, normalised to sum 1, in order: GrowthBook's
/// `getBucketRanges` with full coverage (the same floating-point steps, so a boundary bucket
/// falls the same way).
fn ranges(weights: &[f64]) -> Vec<(f64, f64)> {
    let total: f64 = weights.iter().sum();
    let mut cumulative = 0.0;
    weights
        .iter()
        .map(|w| {
            let w = w / total;
            let start = cumulative;
            cumulative += w;
            (start, start + w)
        })
        .collect()
}

/// The range holding `n`, GrowthBook's `chooseVariation`; a bucket past the last range (the
/// normalised weights summing a rounding error under 1) belongs to the last variant with
/// weight.
fn choose(n: f64, ranges: &[(f64, f64)]) -> usize {
    ranges
        .iter()
        .position(|&(start, end)| start <= n && n < end)
        .unwrap_or_else(|| {
            ranges
                .iter()
                .rposition(|&(start, end)| end > start)
                .unwrap_or(0)
        })
}

/// Which variant a contact gets, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Assigned {
    /// The variant's index, in the order the step lists its variants.
    pub index: usize,
    /// The contact's range was a stopped variant's, so it was placed among the running ones.
    pub rebucketed: bool,
}

/// The variant of `contact_id` among variants of `weights` (positive), `stopped[i]` telling
/// which take no new contacts (at least one must still run; with every one stopped the
/// contact keeps the range its bucket falls in).
pub fn assign(seed: &str, contact_id: &str, weights: &[f64], stopped: &[bool]) -> Assigned {
    let n = bucket(seed, contact_id);
    let index = choose(n, &ranges(weights));
    let is_stopped = |i: usize| stopped.get(i).copied().unwrap_or(false);
    if !is_stopped(index) || (0..weights.len()).all(is_stopped) {
        return Assigned {
            index,
            rebucketed: false,
        };
    }
    let running: Vec<usize> = (0..weights.len()).filter(|&i| !is_stopped(i)).collect();
    let kept: Vec<f64> = running.iter().map(|&i| weights[i]).collect();
    Assigned {
        index: running[choose(n, &ranges(&kept))],
        rebucketed: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// FNV-1a's published test vectors (the empty string, "a", "foobar") hold over UTF-16
    /// code units for ASCII.
    #[test]
    fn fnv1a_published_vectors() {
        assert_eq!(fnv1a32(""), 0x811c_9dc5);
        assert_eq!(fnv1a32("a"), 0xe40c_292c);
        assert_eq!(fnv1a32("foobar"), 0xbf9c_f968);
    }

    /// A character outside the BMP is two code units (a surrogate pair), as in JavaScript.
    #[test]
    fn a_supplementary_character_hashes_as_its_surrogate_pair() {
        let mut by_units: u32 = 0x811c_9dc5;
        for unit in [0xd83d_u32, 0xde00] {
            by_units ^= unit;
            by_units = by_units.wrapping_mul(0x0100_0193);
        }
        assert_eq!(fnv1a32("😀"), by_units);
    }

    #[test]
    fn ranges_follow_the_listed_order_and_normalised_weights() {
        assert_eq!(ranges(&[1.0, 1.0]), vec![(0.0, 0.5), (0.5, 1.0)]);
        let r = ranges(&[1.0, 3.0]);
        assert_eq!(r, vec![(0.0, 0.25), (0.25, 1.0)]);
        assert_eq!(choose(0.25, &r), 1, "a range holds its start");
        assert_eq!(choose(0.2499, &r), 0);
        assert_eq!(choose(0.9999, &r), 1);
    }

    #[test]
    fn a_stopped_variants_contacts_go_to_the_running_ones_and_the_rest_stay() {
        let weights = [1.0, 1.0, 1.0];
        let mut moved = 0;
        for i in 0..3_000 {
            let contact = format!("c{i}");
            let before = assign("f/s:", &contact, &weights, &[false; 3]);
            let after = assign("f/s:", &contact, &weights, &[false, true, false]);
            assert_ne!(after.index, 1, "{contact}: a stopped variant takes no one");
            if before.index == 1 {
                assert!(after.rebucketed);
                moved += 1;
            } else {
                assert_eq!(
                    after, before,
                    "{contact}: a running variant's contact stays"
                );
            }
        }
        assert!(
            (800..1_200).contains(&moved),
            "{moved} of 3,000 were in the stopped third"
        );
    }
}
