//! The always-valid test of a step experiment: GrowthBook's sequential two-sided test on two
//! proportions (the asymptotic confidence sequences of Waudby-Smith et al., 2023, eq. 9 and
//! 155), so the interval and the p-value stay valid however often a team looks at them.
//!
//! For a control `A` and a variant `B` with `n` exposed and `x` converted each, rates
//! `p = x / n`, `N = n_A + n_B`, `SE² = p_A(1−p_A)/n_A + p_B(1−p_B)/n_B`, `s² = SE²·N`,
//! `ρ = sqrt((−2 ln α + ln(1 − 2 ln α)) / S)` for the tuning `S` (the sample size the interval
//! is tightest at):
//!
//! - the difference `θ = p_B − p_A`,
//! - the interval `θ ± sqrt(s²) · sqrt(2(Nρ²+1) · ln(sqrt(Nρ²+1)/α) / (Nρ)²)`,
//! - the p-value `min(1, 1/E)` with `E = exp(ρ²Nθ² / (2 SE² (Nρ²+1))) / sqrt(Nρ²+1)`.
//!
//! Checked against GrowthBook's own Python engine (`gbstats`) by
//! `scripts/gen_experiment_stats.py` → `fixtures/experiments/sequential.jsonl`.
//! Pure: no I/O.

use statrs::function::gamma::checked_gamma_ur;

/// One variant's counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Arm {
    /// Contacts exposed (their message acknowledged as sent).
    pub exposed: u64,
    /// Of those, the ones that converted.
    pub converted: u64,
}

impl Arm {
    /// The conversion rate; 0 with nobody exposed.
    pub fn rate(self) -> f64 {
        if self.exposed == 0 {
            0.0
        } else {
            self.converted as f64 / self.exposed as f64
        }
    }

    fn variance(self) -> f64 {
        let p = self.rate();
        p * (1.0 - p)
    }
}

/// A variant against the control.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Comparison {
    /// `p_B − p_A`.
    pub difference: f64,
    /// The always-valid interval of the difference at `1 − alpha`.
    pub ci_low: f64,
    pub ci_high: f64,
    /// The always-valid p-value of "no difference" at this look.
    pub p_value: f64,
}

/// Why there is no comparison yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotYet {
    /// Fewer than [`MIN_EXPOSED`] exposed in one of the two arms: the normal approximation the
    /// confidence sequence rests on does not hold that early.
    TooFewExposed,
    /// Neither arm varies (every rate 0 or 1): the interval would have no width.
    NoVariation,
}

impl NotYet {
    /// What the statistics say instead of a number.
    pub fn as_str(self) -> &'static str {
        match self {
            NotYet::TooFewExposed => {
                "not enough data yet: fewer than 30 contacts exposed to a variant"
            }
            NotYet::NoVariation => {
                "not enough data yet: no variant's rate varies (all converted or none)"
            }
        }
    }
}

/// The fewest exposed contacts in each arm before a comparison is reported.
pub const MIN_EXPOSED: u64 = 30;

/// The test's `ρ` for error rate `alpha` and `tuning` (GrowthBook's
/// `sequential_tuning_parameter`).
pub fn rho(alpha: f64, tuning: f64) -> f64 {
    let l = -2.0 * alpha.ln();
    ((l + (l + 1.0).ln()) / tuning).sqrt()
}

/// The sequential test of `variant` against `control`, with no minimum sample: the formulas
/// alone, as `gbstats` computes them (`None` when the variance is zero).
pub fn sequential(control: Arm, variant: Arm, alpha: f64, tuning: f64) -> Option<Comparison> {
    if control.exposed == 0 || variant.exposed == 0 {
        return None;
    }
    let se2 =
        control.variance() / control.exposed as f64 + variant.variance() / variant.exposed as f64;
    if se2 <= 0.0 || !se2.is_finite() {
        return None;
    }
    let n = (control.exposed + variant.exposed) as f64;
    let rho = rho(alpha, tuning);
    let theta = variant.rate() - control.rate();
    let s2 = se2 * n;
    let tr2p1 = n * rho * rho + 1.0;
    let width = s2.sqrt() * (2.0 * tr2p1 * (tr2p1.sqrt() / alpha).ln() / (n * rho).powi(2)).sqrt();
    let st2 = theta * theta * n / se2;
    let e = (rho * rho * st2 / (2.0 * tr2p1)).exp() / tr2p1.sqrt();
    Some(Comparison {
        difference: theta,
        ci_low: theta - width,
        ci_high: theta + width,
        p_value: (1.0 / e).min(1.0),
    })
}

/// [`sequential`], reported only once each arm has [`MIN_EXPOSED`] contacts and some variation.
pub fn compare(control: Arm, variant: Arm, alpha: f64, tuning: f64) -> Result<Comparison, NotYet> {
    if control.exposed < MIN_EXPOSED || variant.exposed < MIN_EXPOSED {
        return Err(NotYet::TooFewExposed);
    }
    sequential(control, variant, alpha, tuning).ok_or(NotYet::NoVariation)
}

/// The sample-ratio check: the chi-square test's p-value that `exposed` were drawn with
/// `weights` (GrowthBook's `check_srm`; 1 with nobody exposed). Variants with weight 0 (a
/// stopped variant takes no new contacts) are left out of the sum but keep their degree of
/// freedom, as `gbstats` does.
pub fn sample_ratio_p(exposed: &[u64], weights: &[f64]) -> f64 {
    let total: u64 = exposed.iter().sum();
    if total == 0 || exposed.len() < 2 {
        return 1.0;
    }
    let weight: f64 = weights.iter().sum();
    let mut x = 0.0;
    for (&o, &w) in exposed.iter().zip(weights) {
        if w <= 0.0 {
            continue;
        }
        let e = w / weight * total as f64;
        x += (o as f64 - e).powi(2) / e;
    }
    if x <= 0.0 {
        // A perfect split: the survival function at 0.
        return 1.0;
    }
    let df = (exposed.len() - 1) as f64;
    // The chi-square survival function: the regularised upper incomplete gamma.
    checked_gamma_ur(df / 2.0, x / 2.0).unwrap_or(1.0)
}

/// The sample-ratio p-value under which the counts are called broken.
pub const SAMPLE_RATIO_ALPHA: f64 = 0.001;

#[cfg(test)]
mod tests {
    use super::*;

    fn arm(exposed: u64, converted: u64) -> Arm {
        Arm { exposed, converted }
    }

    /// The published reference point: A 50/1000, B 80/1000, α 0.05, S 5000.
    #[test]
    fn the_reference_point() {
        let c = compare(arm(1000, 50), arm(1000, 80), 0.05, 5000.0).unwrap();
        assert!((c.difference - 0.03).abs() < 1e-12);
        assert!((c.ci_low - -0.0043758).abs() < 5e-7, "{c:?}");
        assert!((c.ci_high - 0.0643758).abs() < 5e-7, "{c:?}");
        assert!((c.p_value - 0.121082).abs() < 5e-7, "{c:?}");
    }

    #[test]
    fn too_little_data_is_said_as_such() {
        assert_eq!(
            compare(arm(29, 3), arm(500, 80), 0.05, 5000.0),
            Err(NotYet::TooFewExposed)
        );
        assert_eq!(
            compare(arm(100, 0), arm(100, 0), 0.05, 5000.0),
            Err(NotYet::NoVariation)
        );
    }

    #[test]
    fn the_interval_narrows_as_contacts_come() {
        let mut last = f64::INFINITY;
        for n in [100u64, 1_000, 10_000, 100_000] {
            let c = compare(arm(n, n / 20), arm(n, n / 20), 0.05, 5000.0).unwrap();
            let width = c.ci_high - c.ci_low;
            assert!(width < last, "{n}: {width} after {last}");
            assert!(c.ci_low < 0.0 && c.ci_high > 0.0);
            last = width;
        }
    }

    #[test]
    fn sample_ratio_matches_the_chi_square() {
        // 1 degree of freedom: the survival function is erfc(sqrt(x/2)); x = 10 at 550/450.
        let p = sample_ratio_p(&[550, 450], &[1.0, 1.0]);
        assert!((p - 0.0015654022580025).abs() < 1e-12, "{p}");
        assert_eq!(sample_ratio_p(&[0, 0], &[1.0, 1.0]), 1.0);
        assert!(sample_ratio_p(&[5000, 5000], &[1.0, 1.0]) > 0.99);
    }
}
