//! Repeated runs, each run one value: is one side's statistic worse than the other's moved by
//! a margin?
//!
//! A single run cannot show how much its configuration varies from one run to the next (a
//! machine that changes between runs looks like a real change). Several runs of each side
//! measure that variation directly: each run gives one value of a statistic (its p99, say),
//! and the two sides' values are compared on a logarithmic scale, where a regression is a
//! factor and run-to-run variation is roughly symmetric.

use statrs::distribution::{ContinuousCDF, StudentsT};

/// Welch's comparison of the logarithms of two sets of per-run values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LogWelch {
    /// Mean log of the candidate minus mean log of the baseline: the log of the ratio of
    /// geometric means.
    pub log_shift: f64,
    /// Standard error of `log_shift`.
    pub se: f64,
    /// Degrees of freedom (Welch–Satterthwaite; with one run on a side, the other side's).
    pub df: f64,
    /// Run-to-run variation as a standard deviation of the logarithms, pooled over both sides.
    pub log_sd: f64,
}

impl LogWelch {
    /// Compares `baseline` with `candidate` (positive values; others are left out). Each side
    /// needs two runs to measure its own variation; a side with a single run borrows the
    /// other side's. `None` when neither side has two runs.
    pub fn of(baseline: &[f64], candidate: &[f64]) -> Option<LogWelch> {
        let logs = |v: &[f64]| -> Vec<f64> {
            v.iter()
                .filter(|x| x.is_finite() && **x > 0.0)
                .map(|x| x.ln())
                .collect()
        };
        let (la, lb) = (logs(baseline), logs(candidate));
        if la.is_empty() || lb.is_empty() || (la.len() < 2 && lb.len() < 2) {
            return None;
        }
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        let var = |v: &[f64]| {
            let m = mean(v);
            (v.len() > 1)
                .then(|| v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (v.len() - 1) as f64)
        };
        let (na, nb) = (la.len() as f64, lb.len() as f64);
        let log_shift = mean(&lb) - mean(&la);
        let (se, df, log_sd) = match (var(&la), var(&lb)) {
            (Some(va), Some(vb)) => {
                let (sa, sb) = (va / na, vb / nb);
                let se = (sa + sb).sqrt();
                let df = if se == 0.0 {
                    na + nb - 2.0
                } else {
                    (sa + sb).powi(2) / (sa.powi(2) / (na - 1.0) + sb.powi(2) / (nb - 1.0))
                };
                (se, df, ((va + vb) / 2.0).sqrt())
            }
            // One run on a side: the other side's variation stands for both.
            (Some(v), None) | (None, Some(v)) => (
                (v * (1.0 / na + 1.0 / nb)).sqrt(),
                na.max(nb) - 1.0,
                v.sqrt(),
            ),
            (None, None) => return None,
        };
        Some(LogWelch {
            log_shift,
            se,
            df,
            log_sd,
        })
    }

    /// Two-sided p-value of "the geometric means differ".
    pub fn p_two_sided(&self) -> f64 {
        (2.0 * self.sf(self.log_shift.abs() / self.se)).min(1.0)
    }

    /// One-sided p-value of "the candidate is worse than the baseline × (1 + margin)".
    pub fn p_worse_beyond(&self, margin: f64) -> f64 {
        self.sf((self.log_shift - margin.ln_1p()) / self.se)
    }

    /// The candidate's geometric mean against the baseline's: +0.25 is 25 % higher.
    pub fn change(&self) -> f64 {
        self.log_shift.exp_m1()
    }

    /// Run-to-run variation as a relative spread: 0.3 is ± 30 % per run.
    pub fn spread(&self) -> f64 {
        self.log_sd.exp_m1()
    }

    /// The smallest change (as a relative increase) that these runs, with their variation,
    /// would declare worse beyond `margin` at level `alpha` nine times in ten.
    pub fn detectable(&self, margin: f64, alpha: f64) -> f64 {
        let t = self.t_dist();
        let reach = match &t {
            Some(t) => t.inverse_cdf(1.0 - alpha) + t.inverse_cdf(0.9),
            None => 0.0,
        };
        (margin.ln_1p() + reach * self.se).exp_m1()
    }

    /// Runs per side that would declare a change as large as the one measured, nine times in
    /// ten (normal approximation); `None` when the measured change is within the margin.
    pub fn runs_to_decide(&self, margin: f64, alpha: f64) -> Option<usize> {
        let beyond = self.log_shift - margin.ln_1p();
        if beyond <= 0.0 {
            return None;
        }
        let normal = statrs::distribution::Normal::new(0.0, 1.0).ok()?;
        let reach = normal.inverse_cdf(1.0 - alpha) + normal.inverse_cdf(0.9);
        let n = 2.0 * (self.log_sd * reach / beyond).powi(2);
        Some((n.ceil() as usize).max(2))
    }

    fn t_dist(&self) -> Option<StudentsT> {
        StudentsT::new(0.0, 1.0, self.df.max(1.0)).ok()
    }

    /// Upper tail of the t distribution at `t`; a zero standard error decides by the sign.
    fn sf(&self, t: f64) -> f64 {
        if self.se == 0.0 || !t.is_finite() {
            return if t > 0.0 { 0.0 } else { 1.0 };
        }
        self.t_dist().map_or(1.0, |d| d.sf(t))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_clear_regression_over_three_runs_is_declared_and_the_same_runs_are_not() {
        let base = [100.0, 110.0, 95.0];
        let worse = [300.0, 320.0, 290.0];
        let w = LogWelch::of(&base, &worse).unwrap();
        assert!(w.p_worse_beyond(0.1) < 0.01, "{w:?}");
        assert!((w.change() - 2.0).abs() < 0.1);
        let same = LogWelch::of(&base, &base).unwrap();
        assert!(same.p_worse_beyond(0.1) > 0.5);
        assert!(same.p_two_sided() > 0.99);
    }

    #[test]
    fn runs_that_vary_a_lot_cannot_declare_a_small_change_and_say_how_many_runs_would() {
        let base = [100.0, 200.0, 60.0];
        let cand = [180.0, 260.0, 120.0];
        let w = LogWelch::of(&base, &cand).unwrap();
        assert!(w.p_worse_beyond(0.1) > 0.01);
        assert!(w.detectable(0.1, 0.01) > w.change());
        let n = w.runs_to_decide(0.1, 0.01).unwrap();
        assert!(n > 3, "{n}");
    }

    #[test]
    fn one_run_on_a_side_borrows_the_other_sides_variation() {
        let w = LogWelch::of(&[100.0], &[300.0, 310.0, 290.0]).unwrap();
        assert_eq!(w.df, 2.0);
        assert!(w.p_worse_beyond(0.1) < 0.01);
        assert!(LogWelch::of(&[100.0], &[300.0]).is_none());
        assert!(LogWelch::of(&[], &[300.0, 1.0]).is_none());
    }

    #[test]
    fn identical_values_on_each_side_decide_by_the_shift_alone() {
        let w = LogWelch::of(&[100.0, 100.0], &[150.0, 150.0]).unwrap();
        assert_eq!(w.p_worse_beyond(0.1), 0.0);
        assert_eq!(w.p_worse_beyond(0.6), 1.0);
    }

    proptest! {
        /// Making the candidate worse never makes the regression less significant.
        #[test]
        fn a_worse_candidate_never_raises_the_p_value(
            base in proptest::collection::vec(1.0f64..1e6, 2..8),
            cand in proptest::collection::vec(1.0f64..1e6, 2..8),
            factor in 1.0f64..10.0,
            margin in 0.0f64..1.0,
        ) {
            let before = LogWelch::of(&base, &cand).unwrap();
            let worse: Vec<f64> = cand.iter().map(|v| v * factor).collect();
            let after = LogWelch::of(&base, &worse).unwrap();
            prop_assert!(after.p_worse_beyond(margin) <= before.p_worse_beyond(margin) + 1e-12);
        }

        /// The detectable change is never below the margin, and grows with the variation.
        #[test]
        fn the_detectable_change_lies_beyond_the_margin(
            base in proptest::collection::vec(1.0f64..1e6, 2..8),
            cand in proptest::collection::vec(1.0f64..1e6, 2..8),
            margin in 0.0f64..1.0,
        ) {
            let w = LogWelch::of(&base, &cand).unwrap();
            prop_assert!(w.detectable(margin, 0.01) >= margin - 1e-12);
        }

        /// Scaling both sides by one factor (a unit change) changes nothing.
        #[test]
        fn the_test_does_not_depend_on_the_unit(
            base in proptest::collection::vec(1.0f64..1e6, 2..8),
            cand in proptest::collection::vec(1.0f64..1e6, 2..8),
            unit in 0.001f64..1000.0,
        ) {
            let w = LogWelch::of(&base, &cand).unwrap();
            let scaled = |v: &[f64]| v.iter().map(|x| x * unit).collect::<Vec<_>>();
            let u = LogWelch::of(&scaled(&base), &scaled(&cand)).unwrap();
            prop_assert!((w.p_worse_beyond(0.1) - u.p_worse_beyond(0.1)).abs() < 1e-9);
        }
    }
}
