//! The always-valid test against GrowthBook's own stats engine: every case of
//! `fixtures/experiments/sequential.jsonl` (written by `scripts/gen_experiment_stats.py` with
//! `gbstats`) gets the same difference, interval and p-value from nudge, and every sample-ratio
//! case the same chi-square p-value; and the test's invariants on generated counts.

use nudge::experiment::stats::{compare, sample_ratio_p, sequential, Arm, MIN_EXPOSED};
use proptest::prelude::*;
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Case {
    Sequential {
        control: (u64, u64),
        variant: (u64, u64),
        alpha: f64,
        tuning: f64,
        difference: f64,
        ci_low: f64,
        ci_high: f64,
        p_value: f64,
    },
    SampleRatio {
        exposed: Vec<u64>,
        weights: Vec<f64>,
        p_value: f64,
    },
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1e-6)
}

fn arm((exposed, converted): (u64, u64)) -> Arm {
    Arm { exposed, converted }
}

#[test]
fn every_case_gets_gbstats_figures() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/experiments/sequential.jsonl"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let (mut tests, mut ratios) = (0, 0);
    for line in text.lines() {
        match serde_json::from_str::<Case>(line).unwrap() {
            Case::Sequential {
                control,
                variant,
                alpha,
                tuning,
                difference,
                ci_low,
                ci_high,
                p_value,
            } => {
                let c = sequential(arm(control), arm(variant), alpha, tuning)
                    .unwrap_or_else(|| panic!("no figures for {line}"));
                assert!(close(c.difference, difference), "{c:?} for {line}");
                assert!(close(c.ci_low, ci_low), "{c:?} for {line}");
                assert!(close(c.ci_high, ci_high), "{c:?} for {line}");
                assert!((c.p_value - p_value).abs() <= 1e-9, "{c:?} for {line}");
                tests += 1;
            }
            Case::SampleRatio {
                exposed,
                weights,
                p_value,
            } => {
                let p = sample_ratio_p(&exposed, &weights);
                assert!((p - p_value).abs() <= 1e-9, "{p} for {line}");
                ratios += 1;
            }
        }
    }
    assert!(
        tests >= 500 && ratios >= 200,
        "{tests} tests, {ratios} ratios"
    );
}

proptest! {
    /// The interval holds the difference, the p-value is a probability, and an interval that
    /// leaves out 0 goes with a p-value under alpha (the two are the same test).
    #[test]
    fn interval_and_p_value_agree(
        na in MIN_EXPOSED..200_000u64, nb in MIN_EXPOSED..200_000u64,
        ra in 0.0..1.0f64, rb in 0.0..1.0f64,
        alpha in prop::sample::select(vec![0.01, 0.05, 0.1]),
    ) {
        let a = Arm { exposed: na, converted: (na as f64 * ra) as u64 };
        let b = Arm { exposed: nb, converted: (nb as f64 * rb) as u64 };
        if let Ok(c) = compare(a, b, alpha, 5000.0) {
            prop_assert!(c.ci_low <= c.difference && c.difference <= c.ci_high);
            prop_assert!((0.0..=1.0).contains(&c.p_value));
            let excludes_zero = c.ci_low > 0.0 || c.ci_high < 0.0;
            if excludes_zero {
                prop_assert!(c.p_value < alpha + 1e-9, "{c:?}");
            } else {
                prop_assert!(c.p_value >= alpha - 1e-9, "{c:?}");
            }
        }
    }

    /// Swapping control and variant mirrors the interval and keeps the p-value.
    #[test]
    fn the_test_is_symmetric(
        na in MIN_EXPOSED..50_000u64, nb in MIN_EXPOSED..50_000u64,
        ra in 0.01..0.99f64, rb in 0.01..0.99f64,
    ) {
        let a = Arm { exposed: na, converted: (na as f64 * ra) as u64 };
        let b = Arm { exposed: nb, converted: (nb as f64 * rb) as u64 };
        if let (Ok(x), Ok(y)) = (compare(a, b, 0.05, 5000.0), compare(b, a, 0.05, 5000.0)) {
            prop_assert!((x.difference + y.difference).abs() < 1e-12);
            prop_assert!((x.ci_low + y.ci_high).abs() < 1e-12);
            prop_assert!((x.p_value - y.p_value).abs() < 1e-12);
        }
    }
}
