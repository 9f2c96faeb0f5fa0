//! Two-sample Kolmogorov–Smirnov test on binned data (the result's histograms).
//!
//! Both histograms use the same log-linear bucket layout, so their cumulative distributions
//! can be compared exactly at every bucket boundary. Binning can only merge samples that lie in
//! one bucket (at most 1/1024 of their value apart), which can only lower D: the test is
//! slightly conservative, never anti-conservative. The p-value is the asymptotic Kolmogorov
//! distribution with the small-sample correction of Stephens (Numerical Recipes §14.3).

use crate::dist::Dist;
use serde::Serialize;
// The Kolmogorov distribution is shared with the extreme-value estimate in the statistics crate.
pub use rtgauge_stats::ks::{kolmogorov_q, ks_p_value};

/// The outcome of a two-sample KS test of `a` (baseline) against `b` (candidate).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct KsTest {
    /// max |F_a − F_b|: the effect size, between 0 (same) and 1 (disjoint).
    pub d: f64,
    /// max (F_a − F_b): how far b lies to the right (slower) of a.
    pub d_slower: f64,
    /// max (F_b − F_a): how far b lies to the left (faster) of a.
    pub d_faster: f64,
    /// Probability of a D at least this large if both samples came from one distribution.
    pub p_value: f64,
    /// The same with each run's time blocks (intervals with samples) as its independent
    /// units: samples within a run are correlated in time, so the sample count overstates
    /// the evidence. This is the p-value the verdict uses; 1 until blocks are set.
    pub p_value_blocks: f64,
    pub n_a: u64,
    pub n_b: u64,
}

/// Runs the test on two distributions (per-operation values, so batches may differ).
pub fn ks_test(a: &Dist, b: &Dist) -> KsTest {
    let (n_a, n_b) = (a.count(), b.count());
    let ba: Vec<(f64, u64)> = a.buckets().collect();
    let bb: Vec<(f64, u64)> = b.buckets().collect();
    // The histograms may hold fewer samples than `count` if edited; normalise by what they hold.
    let total_a = ba.iter().map(|x| x.1).sum::<u64>().max(1) as f64;
    let total_b = bb.iter().map(|x| x.1).sum::<u64>().max(1) as f64;
    let (mut i, mut j) = (0usize, 0usize);
    let (mut ca, mut cb) = (0u64, 0u64);
    let (mut d_slower, mut d_faster) = (0.0f64, 0.0f64);
    while i < ba.len() || j < bb.len() {
        // Advance past every bucket at the next boundary value in either histogram.
        let x = match (ba.get(i), bb.get(j)) {
            (Some(p), Some(q)) => p.0.min(q.0),
            (Some(p), None) => p.0,
            (None, Some(q)) => q.0,
            (None, None) => break,
        };
        while i < ba.len() && ba[i].0 <= x {
            ca += ba[i].1;
            i += 1;
        }
        while j < bb.len() && bb[j].0 <= x {
            cb += bb[j].1;
            j += 1;
        }
        let diff = ca as f64 / total_a - cb as f64 / total_b;
        d_slower = d_slower.max(diff);
        d_faster = d_faster.max(-diff);
    }
    let d = d_slower.max(d_faster);
    KsTest {
        d,
        d_slower,
        d_faster,
        p_value: ks_p_value(d, n_a, n_b),
        p_value_blocks: 1.0,
        n_a,
        n_b,
    }
}

impl KsTest {
    /// Sets [`KsTest::p_value_blocks`] for runs of `blocks_a` and `blocks_b` time blocks
    /// (never more units than samples).
    pub fn with_blocks(mut self, blocks_a: u64, blocks_b: u64) -> KsTest {
        self.p_value_blocks = ks_p_value(
            self.d,
            blocks_a.clamp(1, self.n_a.max(1)),
            blocks_b.clamp(1, self.n_b.max(1)),
        );
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtgauge_stats::Recorder;

    fn dist(values: impl IntoIterator<Item = u64>) -> Dist {
        let mut r = Recorder::default();
        for v in values {
            r.record(v, 0);
        }
        Dist::from_summary(&r.summary(), 1).unwrap()
    }

    /// Brute-force D from raw samples.
    fn brute_d(a: &[u64], b: &[u64]) -> f64 {
        let mut xs: Vec<u64> = a.iter().chain(b).copied().collect();
        xs.sort_unstable();
        xs.iter()
            .map(|&x| {
                let fa = a.iter().filter(|&&v| v <= x).count() as f64 / a.len() as f64;
                let fb = b.iter().filter(|&&v| v <= x).count() as f64 / b.len() as f64;
                (fa - fb).abs()
            })
            .fold(0.0, f64::max)
    }

    #[test]
    fn kolmogorov_distribution_matches_tabulated_critical_values() {
        // λ = 1.358 is the 5 % critical value, 1.628 the 1 %, 1.224 the 10 %.
        assert!((kolmogorov_q(1.358) - 0.05).abs() < 0.001);
        assert!((kolmogorov_q(1.628) - 0.01).abs() < 0.0005);
        assert!((kolmogorov_q(1.224) - 0.10).abs() < 0.001);
        assert_eq!(kolmogorov_q(0.0), 1.0);
        assert!(kolmogorov_q(5.0) < 1e-20);
    }

    #[test]
    fn identical_samples_do_not_differ() {
        let a = dist((0..5000).map(|i| 1000 + i % 700));
        let t = ks_test(&a, &a.clone());
        assert_eq!(t.d, 0.0);
        assert_eq!(t.p_value, 1.0);
    }

    #[test]
    fn disjoint_samples_differ_and_say_which_way() {
        let a = dist((0..1000).map(|i| 1000 + i % 100));
        let b = dist((0..1000).map(|i| 5000 + i % 100));
        let t = ks_test(&a, &b);
        assert_eq!(t.d, 1.0);
        assert_eq!(t.d_slower, 1.0);
        assert!(t.p_value < 1e-10);
        let back = ks_test(&b, &a);
        assert_eq!(back.d_faster, 1.0);
    }

    #[test]
    fn binned_d_equals_raw_d_when_buckets_are_exact() {
        // Values below 2048 ns have buckets one nanosecond wide: binning loses nothing.
        let a: Vec<u64> = (0..3000u64).map(|i| 100 + (i * 37) % 1500).collect();
        let b: Vec<u64> = (0..2000u64).map(|i| 300 + (i * 53) % 1200).collect();
        let t = ks_test(&dist(a.clone()), &dist(b.clone()));
        assert!(
            (t.d - brute_d(&a, &b)).abs() < 1e-12,
            "{} vs {}",
            t.d,
            brute_d(&a, &b)
        );
    }

    #[test]
    fn p_value_shrinks_as_samples_grow_for_the_same_d() {
        assert!(ks_p_value(0.05, 100, 100) > 0.5);
        assert!(ks_p_value(0.05, 100_000, 100_000) < 1e-10);
    }
}
