//! Step-variant assignment against GrowthBook itself: every case of
//! `fixtures/experiments/assignment.jsonl` (written by `scripts/gen_variant_cases.py` with the
//! `growthbook` package) gets the same bucket and the same variant from nudge; and the
//! assignment's invariants on generated inputs.

use nudge::experiment::{assign, bucket};
use proptest::prelude::*;
use serde::Deserialize;

#[derive(Deserialize)]
struct Case {
    seed: String,
    contact_id: String,
    weights: Vec<f64>,
    bucket: f64,
    variant: usize,
}

#[test]
fn every_case_gets_growthbooks_bucket_and_variant() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/experiments/assignment.jsonl"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let mut n = 0;
    for line in text.lines() {
        let c: Case = serde_json::from_str(line).unwrap();
        assert_eq!(
            bucket(&c.seed, &c.contact_id),
            c.bucket,
            "bucket of {:?} in {:?}",
            c.contact_id,
            c.seed
        );
        let stopped = vec![false; c.weights.len()];
        assert_eq!(
            assign(&c.seed, &c.contact_id, &c.weights, &stopped).index,
            c.variant,
            "variant of {:?} in {:?} with {:?}",
            c.contact_id,
            c.seed,
            c.weights
        );
        n += 1;
    }
    assert!(n >= 1_000, "{n} cases");
}

fn weights() -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(0.01f64..100.0, 2..8)
}

proptest! {
    /// A bucket is in [0, 1) with four decimals; the variant is one of the listed ones, the
    /// same every time; a stopped variant takes no one unless every variant is stopped; a
    /// contact of a running variant keeps it whatever else stops.
    #[test]
    fn assignment_invariants(
        seed in "[a-z/_: ]{1,20}",
        contact in "\\PC{1,30}",
        weights in weights(),
        stop_mask in any::<u8>(),
    ) {
        let b = bucket(&seed, &contact);
        prop_assert!((0.0..1.0).contains(&b));
        prop_assert_eq!((b * 10_000.0).round() / 10_000.0, b);
        let none = vec![false; weights.len()];
        let first = assign(&seed, &contact, &weights, &none);
        prop_assert!(first.index < weights.len());
        prop_assert!(!first.rebucketed);
        prop_assert_eq!(assign(&seed, &contact, &weights, &none), first);
        let stopped: Vec<bool> = (0..weights.len()).map(|i| stop_mask & (1 << i) != 0).collect();
        let after = assign(&seed, &contact, &weights, &stopped);
        if stopped.iter().all(|s| *s) {
            prop_assert_eq!(after.index, first.index);
        } else {
            prop_assert!(!stopped[after.index]);
            if !stopped[first.index] {
                prop_assert_eq!(after.index, first.index);
            }
        }
    }
}
