//! Did a statistic of one run move past another run's by more than a margin? Judged from the
//! baseline's own block-to-block variation, with the power of the comparison stated.
//!
//! Why this way (docs/compare.md has the measured error rates): latency samples are not
//! independent — a stall delays a stretch of consecutive wake-ups — so a test that counts
//! samples as independent draws calls every pair of runs different. And a run under a new load
//! is itself far more variable than its baseline, so an allowance built from the spread of both
//! runs grows with the regression it should catch. Here the null hypothesis is "the candidate
//! is no worse than the baseline moved by the margin", tested block by block (100 ms):
//!
//! - **A percentile p** (median, p99, p99.9…): per block, the share of the baseline's samples
//!   above its own percentile, and the share of the candidate's above that percentile × (1 +
//!   margin). Were the candidate's percentile exactly there, its blocks would look like the
//!   baseline's; a one-sided Mann–Whitney test on the two sets of block shares says whether they
//!   lie above. Counting per block keeps the clustering of late samples.
//! - **The maximum**: the candidate's block maxima against the baseline's × (1 + margin), with
//!   the same rank test.
//!
//! The test's variance widens by the larger design effect of the two runs (neighbouring blocks
//! alike; one-second stretches that differ, as on a machine that changes under the runs): only
//! the shape of the correlation may come from the candidate, never the magnitude of its
//! variation. A statistic is declared beyond the margin when the one-sided p-value is below the
//! level ([`ALPHA`] unless the caller shares it among several tests). The power: the smallest
//! change (the baseline's distribution stretched by a factor, its late samples spread evenly
//! over the blocks) that the pair would declare nine times in ten ([`POWER`]).

use crate::blocks::SerializedBlocks;
use crate::Summary;
use serde::Serialize;
use statrs::distribution::{ContinuousCDF, Normal};

/// One-sided significance level of every test.
pub const ALPHA: f64 = 0.01;
/// Probability of declaring a change of the stated detectable size.
pub const POWER: f64 = 0.9;
/// Blocks each run needs before it is tested: fewer cannot show its variation.
pub const MIN_BLOCKS: usize = 8;

/// What is compared.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Statistic {
    /// A percentile of the samples: 0.5 for the median, 0.99 for p99.
    Quantile(f64),
    /// The maximum, compared through the maxima of the runs' blocks.
    BlockMax,
}

/// Which way the candidate is tested to have moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Larger than the baseline's value × (1 + margin).
    Worse,
    /// Smaller than the baseline's value ÷ (1 + margin).
    Better,
}

/// The outcome of one test.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ShiftTest {
    pub statistic: Statistic,
    pub direction: Direction,
    pub margin: f64,
    /// The baseline's value moved by the margin, ns (raw samples, not per operation).
    pub threshold_ns: f64,
    /// Share of the candidate's samples (or blocks) above the threshold if its statistic were
    /// exactly at the threshold.
    pub expected: f64,
    /// The candidate's share above the threshold.
    pub observed: f64,
    /// The rank test's z: the candidate's blocks against the baseline's moved by the margin,
    /// widened by the baseline's correlation from block to block.
    pub z: f64,
    /// One-sided p-value of "moved no further than the margin".
    pub p_value: f64,
    /// p-value below [`ALPHA`].
    pub declared: bool,
    /// The candidate's share lies beyond the expected one: as measured, the statistic moved
    /// past the margin, whether or not the test can tell it from variation.
    pub beyond_margin: bool,
    /// Smallest relative change of the statistic (0.35 = +35 %, or −35 % for `Better`) this
    /// pair of runs declares with probability [`POWER`]; `None` when no change could be.
    pub detectable: Option<f64>,
    /// Blocks of the baseline and the candidate.
    pub blocks: [usize; 2],
    /// Width of the blocks compared.
    pub block_ns: u64,
    /// The candidate's statistic against the baseline's, relative (+0.5 = 50 % larger): the
    /// percentiles of the two runs, or the medians of their block maxima.
    pub change: Option<f64>,
}

fn normal() -> Normal {
    Normal::standard()
}

/// The z a test at level `alpha` must exceed to declare a change.
pub fn z_to_declare(alpha: f64) -> f64 {
    z_of(alpha)
}

/// z of a one-sided level.
fn z_of(p: f64) -> f64 {
    normal().inverse_cdf(1.0 - p)
}

/// Samples of a summary's histogram above `threshold` (raw ns).
fn share_above(s: &Summary, threshold: f64) -> Option<f64> {
    let total: u64 = s.histogram.buckets.iter().map(|b| b.1).sum();
    if total == 0 {
        return None;
    }
    let above: u64 = s
        .histogram
        .buckets
        .iter()
        .filter(|b| b.0 as f64 > threshold)
        .map(|b| b.1)
        .sum();
    Some(above as f64 / total as f64)
}

/// The share of the samples in `threshold`'s coarse block bucket that lie above it, from the
/// run's exact histogram: blocks keep only coarse buckets, and a threshold inside a crowded
/// bucket would otherwise count a slice of the body as tail.
fn bucket_share_above(s: &Summary, threshold: f64) -> Option<f64> {
    let (low, high) = crate::blocks::bucket_range(crate::blocks::bucket_of(threshold as u64));
    let (mut inside, mut above) = (0u64, 0u64);
    for &(value, count) in &s.histogram.buckets {
        if value >= low && value < high {
            inside += count;
            if value as f64 > threshold {
                above += count;
            }
        }
    }
    (inside > 0).then(|| above as f64 / inside as f64)
}

/// The value below which a share `q` of the summary's samples lie, from its histogram.
fn quantile(s: &Summary, q: f64) -> Option<f64> {
    let total: u64 = s.histogram.buckets.iter().map(|b| b.1).sum();
    if total == 0 || !(0.0..=1.0).contains(&q) {
        return None;
    }
    let rank = ((q * total as f64).ceil() as u64).max(1);
    let mut seen = 0;
    for &(value, count) in &s.histogram.buckets {
        seen += count;
        if seen >= rank {
            return Some(value as f64);
        }
    }
    s.max_ns.map(|m| m as f64)
}

fn sorted_quantile(sorted: &[f64], q: f64) -> f64 {
    let pos = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

/// The two runs' blocks at one width (the wider of the two), or `None` without enough.
fn aligned(a: &Summary, b: &Summary) -> Option<(SerializedBlocks, SerializedBlocks)> {
    let (mut x, mut y) = (a.blocks.clone()?, b.blocks.clone()?);
    if x.block_ns == 0 || y.block_ns == 0 {
        return None;
    }
    while x.block_ns < y.block_ns && x.len() > 1 {
        x.fold();
    }
    while y.block_ns < x.block_ns && y.len() > 1 {
        y.fold();
    }
    let enough = |s: &SerializedBlocks| (0..s.len()).filter(|&i| s.count(i) > 0).count();
    (x.block_ns == y.block_ns && enough(&x) >= MIN_BLOCKS && enough(&y) >= MIN_BLOCKS)
        .then_some((x, y))
}

/// Tests whether `candidate`'s `statistic` moved past `baseline`'s by more than `margin`
/// (0.1 = 10 %) in `direction`. `None` when either summary lacks the blocks or samples the
/// test needs (fewer than [`MIN_BLOCKS`] blocks with samples; documents without blocks).
pub fn test_shift(
    baseline: &Summary,
    candidate: &Summary,
    statistic: Statistic,
    direction: Direction,
    margin: f64,
) -> Option<ShiftTest> {
    test_shift_at(baseline, candidate, statistic, direction, margin, ALPHA)
}

/// [`test_shift`] at the one-sided level `alpha` (a comparison that runs several tests on one
/// row divides its level among them).
pub fn test_shift_at(
    baseline: &Summary,
    candidate: &Summary,
    statistic: Statistic,
    direction: Direction,
    margin: f64,
    alpha: f64,
) -> Option<ShiftTest> {
    let (a, b) = aligned(baseline, candidate)?;
    // The candidate is compared with the baseline moved by the margin: stretched for
    // "worse", shrunk for "better".
    let factor = match direction {
        Direction::Worse => 1.0 + margin,
        Direction::Better => 1.0 / (1.0 + margin),
    };
    let sign = match direction {
        Direction::Worse => 1.0,
        Direction::Better => -1.0,
    };
    let used =
        |s: &SerializedBlocks| -> Vec<usize> { (0..s.len()).filter(|&i| s.count(i) > 0).collect() };
    let (ia, ib) = (used(&a), used(&b));
    match statistic {
        Statistic::Quantile(p) => {
            let base = quantile(baseline, p).filter(|v| *v > 0.0)?;
            let threshold = base * factor;
            // Each block's share of samples above a threshold; the share of the threshold's
            // own coarse bucket above it comes from the run's exact histogram.
            let shares = |s: &SerializedBlocks, of: &Summary, index: &[usize], t: f64| {
                let inner = bucket_share_above(of, t);
                index
                    .iter()
                    .map(|&i| s.count_above_split(i, t, inner) / s.count(i) as f64)
                    .collect::<Vec<f64>>()
            };
            let own = shares(&a, baseline, &ia, base);
            let observed_blocks = shares(&b, candidate, &ib, threshold);
            // The candidate's correlation is read at its own percentile, like the baseline's.
            let candidate_own = quantile(candidate, p)
                .map(|q| shares(&b, candidate, &ib, q))
                .unwrap_or_default();
            let deff = design_effect(&own).max(design_effect(&candidate_own));
            let z = sign * rank_z(&own, &observed_blocks) / deff.sqrt();
            // The same comparison with the baseline itself stretched by `stretch` in place of
            // the candidate: how far a change must go before the test sees it.
            // Power: the candidate as the baseline's distribution stretched by `stretch`, its
            // late samples spread evenly over its blocks (a change that is there all the
            // time, as a new load or kernel is): each block's share above the threshold is
            // then binomial around the stretched distribution's share. The blocks take the
            // binomial's quantiles, so the answer is the same every time.
            let block_size = (a_samples(&a, &ia) / ia.len() as f64).round().max(1.0) as u64;
            let z_at = |stretch: f64| {
                let share = share_above(baseline, threshold / stretch).unwrap_or(0.0);
                let even = even_shares(share, block_size, ib.len());
                sign * rank_z(&own, &even) / deff.sqrt()
            };
            let expected = 1.0 - p;
            let observed = share_above(candidate, threshold)?;
            let change = quantile(candidate, p).map(|v| v / base - 1.0);
            Some(ShiftTest {
                statistic,
                direction,
                margin,
                threshold_ns: threshold,
                expected,
                observed,
                z,
                p_value: normal().sf(z),
                declared: normal().sf(z) < alpha,
                beyond_margin: change.is_some_and(|c| beyond(direction, margin, c)),
                detectable: detectable(direction, margin, alpha, z_at),
                blocks: [ia.len(), ib.len()],
                block_ns: a.block_ns,
                change,
            })
        }
        Statistic::BlockMax => {
            let maxima = |s: &SerializedBlocks| -> Vec<f64> {
                s.max_ns.iter().flatten().map(|&v| v as f64).collect()
            };
            let (xa, xb) = (maxima(&a), maxima(&b));
            let median = |v: &[f64]| {
                let mut sorted = v.to_vec();
                sorted.sort_by(f64::total_cmp);
                sorted_quantile(&sorted, 0.5)
            };
            let base = median(&xa);
            let moved = |stretch: f64| xa.iter().map(|v| v * stretch).collect::<Vec<f64>>();
            let reference = moved(factor);
            // Runs of late blocks (a load that comes and goes) make neighbouring blocks alike:
            // the variance widens by the runs' correlation of "above its own median".
            let above_median = |x: &[f64]| {
                let m = median(x);
                x.iter()
                    .map(|&v| if v > m { 1.0 } else { 0.0 })
                    .collect::<Vec<f64>>()
            };
            let deff = design_effect(&above_median(&xa)).max(design_effect(&above_median(&xb)));
            let z = sign * rank_z(&reference, &xb) / deff.sqrt();
            let z_at = |stretch: f64| sign * rank_z(&reference, &moved(stretch)) / deff.sqrt();
            let (threshold, observed_median) = (base * factor, median(&xb));
            Some(ShiftTest {
                statistic,
                direction,
                margin,
                threshold_ns: threshold,
                expected: 0.5,
                observed: xb.iter().filter(|&&v| v > threshold).count() as f64 / xb.len() as f64,
                z,
                p_value: normal().sf(z),
                declared: normal().sf(z) < alpha,
                beyond_margin: base > 0.0
                    && beyond(direction, margin, observed_median / base - 1.0),
                detectable: detectable(direction, margin, alpha, z_at),
                blocks: [xa.len(), xb.len()],
                block_ns: a.block_ns,
                change: (base > 0.0).then(|| observed_median / base - 1.0),
            })
        }
    }
}

/// Samples in the given blocks.
fn a_samples(s: &SerializedBlocks, index: &[usize]) -> f64 {
    index.iter().map(|&i| s.count(i) as f64).sum()
}

/// `blocks` block shares of `size` samples each whose count above a threshold is binomial
/// with probability `share`: the binomial's quantiles at (k + ½) / blocks, as shares.
fn even_shares(share: f64, size: u64, blocks: usize) -> Vec<f64> {
    use statrs::distribution::{Binomial, DiscreteCDF};
    let Ok(binomial) = Binomial::new(share.clamp(0.0, 1.0), size) else {
        return vec![share; blocks];
    };
    (0..blocks)
        .map(|k| binomial.inverse_cdf((k as f64 + 0.5) / blocks as f64) as f64 / size as f64)
        .collect()
}

/// Whether a measured relative change goes past the margin in `direction`.
fn beyond(direction: Direction, margin: f64, change: f64) -> bool {
    match direction {
        Direction::Worse => change > margin,
        Direction::Better => 1.0 + change < 1.0 / (1.0 + margin),
    }
}

/// Blocks per stretch in [`design_effect`]'s long-range term: one second of 100-ms blocks.
const STRETCH_BLOCKS: usize = 10;

/// How much a run's block values resemble their neighbours, as a factor on the variance of
/// their mean: the larger of 1 + 2 × the lag-1 correlation (short runs of late blocks) and
/// the variance of one-second stretches' means against independent blocks' (a machine that
/// changes for seconds at a time, as a shared machine does). Never below 1.
fn design_effect(blocks: &[f64]) -> f64 {
    let short = 1.0 + 2.0 * lag1_correlation(blocks);
    let stretches = blocks.len() / STRETCH_BLOCKS;
    let long = if stretches >= 2 {
        let var = |x: &[f64]| {
            let mean = x.iter().sum::<f64>() / x.len() as f64;
            x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (x.len() - 1) as f64
        };
        let means: Vec<f64> = blocks
            .chunks_exact(STRETCH_BLOCKS)
            .map(|c| c.iter().sum::<f64>() / STRETCH_BLOCKS as f64)
            .collect();
        let per_block = var(blocks);
        if per_block > 0.0 {
            STRETCH_BLOCKS as f64 * var(&means) / per_block
        } else {
            1.0
        }
    } else {
        1.0
    };
    short.max(long).max(1.0)
}

/// The smallest relative change (the baseline stretched, or shrunk for `Better`) whose test
/// statistic reaches the level declared with probability [`POWER`]: `z_at(stretch)` is the
/// test's z with the baseline moved by `stretch` in place of the candidate. `None` when no
/// change up to a factor of 1000 reaches it.
fn detectable(
    direction: Direction,
    margin: f64,
    alpha: f64,
    z_at: impl Fn(f64) -> f64,
) -> Option<f64> {
    let needed = z_of(alpha) + normal().inverse_cdf(POWER);
    let stretch_of = |x: f64| match direction {
        Direction::Worse => 1.0 + x,
        Direction::Better => 1.0 / (1.0 + x),
    };
    // Bisection over the change in log steps; the statistic grows with the change.
    let (mut low, mut high) = (margin, 999.0);
    if z_at(stretch_of(high)) < needed {
        return None;
    }
    for _ in 0..40 {
        let mid = ((1.0 + low) * (1.0 + high)).sqrt() - 1.0;
        if z_at(stretch_of(mid)) >= needed {
            high = mid;
        } else {
            low = mid;
        }
        if high / low.max(1e-9) < 1.01 {
            break;
        }
    }
    Some(match direction {
        Direction::Worse => high,
        Direction::Better => 1.0 - 1.0 / (1.0 + high),
    })
}

/// z of the Mann–Whitney rank test that `b`'s values lie above `a`'s (normal approximation,
/// tie-corrected); 0 when all values tie.
pub fn rank_z(a: &[f64], b: &[f64]) -> f64 {
    let (n1, n2) = (a.len() as f64, b.len() as f64);
    let mut all: Vec<(f64, bool)> = a
        .iter()
        .map(|&v| (v, false))
        .chain(b.iter().map(|&v| (v, true)))
        .collect();
    all.sort_by(|x, y| x.0.total_cmp(&y.0));
    let (mut rank_sum_b, mut tie_term) = (0.0, 0.0);
    let mut i = 0;
    while i < all.len() {
        let mut j = i;
        while j < all.len() && all[j].0 == all[i].0 {
            j += 1;
        }
        // Tied values share the mean of their ranks (1-based).
        let rank = (i + j + 1) as f64 / 2.0;
        let t = (j - i) as f64;
        tie_term += t * t * t - t;
        rank_sum_b += rank * all[i..j].iter().filter(|x| x.1).count() as f64;
        i = j;
    }
    let n = n1 + n2;
    let u = rank_sum_b - n2 * (n2 + 1.0) / 2.0;
    let variance = n1 * n2 / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)));
    if variance <= 0.0 {
        return 0.0;
    }
    (u - n1 * n2 / 2.0) / variance.sqrt()
}

/// Lag-1 autocorrelation of a sequence; 0 when it has no variation.
fn lag1_correlation(x: &[f64]) -> f64 {
    if x.len() < 3 {
        return 0.0;
    }
    let mean = x.iter().sum::<f64>() / x.len() as f64;
    let var: f64 = x.iter().map(|v| (v - mean).powi(2)).sum();
    if var == 0.0 {
        return 0.0;
    }
    let cov: f64 = x.windows(2).map(|w| (w[0] - mean) * (w[1] - mean)).sum();
    cov / var
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Recorder;
    use proptest::prelude::*;

    /// A run of `seconds` at 1 ms: values from `draw(i)`, one sample per ms.
    fn run(seconds: u64, draw: impl Fn(u64) -> u64) -> Summary {
        let mut r = Recorder::default();
        for i in 0..seconds * 1000 {
            r.record(draw(i), i * 1_000_000);
        }
        r.summary()
    }

    /// A small deterministic generator (xorshift), so tests are repeatable.
    fn noise(seed: u64) -> impl Fn(u64) -> u64 {
        move |i| {
            let mut x = (i + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ seed;
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        }
    }

    /// Latency-like samples: 20 µs ± a few, and a late stretch now and then.
    fn latency(seed: u64, late_every: u64, late_ns: u64) -> impl Fn(u64) -> u64 {
        let n = noise(seed);
        move |i| {
            let body = 20_000 + n(i) % 5_000;
            if late_every > 0 && n(i ^ 0xABCD).is_multiple_of(late_every) {
                body + late_ns + n(i ^ 0x1234) % late_ns.max(1)
            } else {
                body
            }
        }
    }

    #[test]
    fn a_sevenfold_tail_is_declared_and_said_to_be_detectable() {
        let idle = run(5, latency(1, 200, 50_000));
        let loaded = run(5, latency(2, 20, 400_000));
        for stat in [Statistic::Quantile(0.99), Statistic::BlockMax] {
            let t = test_shift(&idle, &loaded, stat, Direction::Worse, 0.1).unwrap();
            assert!(t.declared, "{stat:?}: {t:?}");
            assert!(t.detectable.is_some_and(|d| d < 5.0), "{t:?}");
            let back = test_shift(&loaded, &idle, stat, Direction::Worse, 0.1).unwrap();
            assert!(
                !back.declared && !back.beyond_margin,
                "{stat:?} reversed: {back:?}"
            );
        }
    }

    #[test]
    fn short_runs_are_not_tested() {
        let a = run(0, latency(1, 0, 0));
        assert!(test_shift(&a, &a, Statistic::BlockMax, Direction::Worse, 0.1).is_none());
        let short = {
            let mut r = Recorder::default();
            for i in 0..500 {
                r.record(20_000, i * 1_000_000);
            }
            r.summary()
        };
        assert!(test_shift(
            &short,
            &short,
            Statistic::Quantile(0.5),
            Direction::Worse,
            0.1
        )
        .is_none());
    }

    #[test]
    fn the_detectable_change_shrinks_as_runs_grow() {
        let short = run(2, latency(3, 100, 100_000));
        let long = run(20, latency(4, 100, 100_000));
        let d = |a: &Summary, b: &Summary| {
            test_shift(a, b, Statistic::Quantile(0.99), Direction::Worse, 0.1)
                .unwrap()
                .detectable
                .unwrap_or(f64::INFINITY)
        };
        let (small, large) = (d(&long, &long), d(&short, &short));
        assert!(small < large, "20 s: {small}, 2 s: {large}");
        assert!(small > 0.1, "never below the margin: {small}");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        /// Two runs drawn alike are rarely declared apart: over many seeds, each test errs
        /// about as often as its level says (a generous bound, the runs being short).
        #[test]
        fn runs_drawn_alike_are_rarely_declared_worse(seed in 0u64..1_000_000) {
            let a = run(5, latency(seed, 100, 80_000));
            let b = run(5, latency(seed ^ 0xFFFF, 100, 80_000));
            for stat in [Statistic::Quantile(0.5), Statistic::Quantile(0.99), Statistic::BlockMax] {
                let t = test_shift(&a, &b, stat, Direction::Worse, 0.1).unwrap();
                prop_assert!(t.p_value > 1e-4, "{:?}", t);
            }
        }

        /// A candidate that is the baseline stretched by twice the margin and more is declared
        /// worse in the body and the tail.
        #[test]
        fn a_stretched_run_is_declared_worse(seed in 0u64..1_000_000, stretch in 1.5f64..4.0) {
            let a = run(5, latency(seed, 30, 80_000));
            let draw = latency(seed ^ 0x5555, 30, 80_000);
            let b = run(5, move |i| (draw(i) as f64 * stretch) as u64);
            for stat in [Statistic::Quantile(0.5), Statistic::Quantile(0.99), Statistic::BlockMax] {
                let t = test_shift(&a, &b, stat, Direction::Worse, 0.1).unwrap();
                prop_assert!(t.declared, "{:?} × {}: {:?}", stat, stretch, t);
                let better = test_shift(&b, &a, stat, Direction::Better, 0.1).unwrap();
                prop_assert!(better.declared, "{:?} ÷ {}: {:?}", stat, stretch, better);
            }
        }
    }
}
