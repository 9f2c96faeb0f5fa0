//! The statistics of rtgauge: one recorder type used by every probe.
//!
//! A [`Recorder`] is created (and its memory touched) before a hot loop starts; inside the loop
//! [`Recorder::record`] only does integer arithmetic on preallocated memory. Afterwards the
//! recorders of several threads can be merged and turned into a serialisable [`Summary`].
//!
//! Exactness: count, min, max, sum and sum of squares are exact integers, so mean and the
//! corrected sample standard deviation are exact up to the final division. Percentiles come
//! from a log-linear (HDR) histogram whose buckets are at most [`RELATIVE_ERROR`] wide relative
//! to their value; it uses constant memory and 64-bit counts, so it never overflows. Values
//! above [`HISTOGRAM_MAX_NS`] are counted in the top bucket (and in `max_ns` exactly).

pub mod blocks;
pub mod evt;
mod interval;
pub mod ks;
pub mod rates;
pub mod runs;
pub mod shift;
mod summary;

pub use interval::{IntervalMaxima, SerializedIntervals, INTERVAL_SLOTS};
pub use summary::{percentile_supported, Percentiles, SparseHistogram, Summary};

use hdrhistogram::Histogram;

/// Highest value the histogram resolves (2^40 ns, about 18 minutes).
pub const HISTOGRAM_MAX_NS: u64 = 1 << 40;
/// Significant decimal digits kept by the histogram.
pub const HISTOGRAM_SIGNIFICANT_DIGITS: u8 = 3;
/// Worst relative width of a histogram bucket (1/1024 with 3 significant digits).
pub const RELATIVE_ERROR: f64 = 1.0 / 1024.0;
/// Default width of one interval of the interval maxima.
pub const DEFAULT_INTERVAL_NS: u64 = 1_000_000_000;

/// Records nanosecond samples in constant memory; mergeable across threads.
#[derive(Clone)]
pub struct Recorder {
    histogram: Histogram<u64>,
    count: u64,
    min: u64,
    max: u64,
    max_at_ns: u64,
    sum: u128,
    sum_squares: u128,
    intervals: IntervalMaxima,
    blocks: blocks::BlockHistograms,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder")
            .field("count", &self.count)
            .field("min", &self.min)
            .field("max", &self.max)
            .finish_non_exhaustive()
    }
}

impl Default for Recorder {
    fn default() -> Self {
        Self::new(DEFAULT_INTERVAL_NS)
    }
}

impl Recorder {
    /// A recorder whose interval maxima start `interval_ns` wide.
    ///
    /// All memory is allocated and written here so the first samples cost no page faults.
    pub fn new(interval_ns: u64) -> Self {
        let mut histogram =
            Histogram::new_with_bounds(1, HISTOGRAM_MAX_NS, HISTOGRAM_SIGNIFICANT_DIGITS)
                .expect("constant histogram bounds are valid");
        // Writing every counter faults the pages in now rather than in the hot loop.
        histogram.reset();
        Recorder {
            histogram,
            count: 0,
            min: u64::MAX,
            max: 0,
            max_at_ns: 0,
            sum: 0,
            sum_squares: 0,
            intervals: IntervalMaxima::new(interval_ns),
            blocks: blocks::BlockHistograms::default(),
        }
    }

    /// Records one sample taken `at_ns` after the measurement started.
    ///
    /// Hot-loop safe: no allocation, no locking, no I/O.
    #[inline]
    pub fn record(&mut self, value_ns: u64, at_ns: u64) {
        self.histogram.saturating_record(value_ns);
        self.count += 1;
        if value_ns < self.min {
            self.min = value_ns;
        }
        if value_ns > self.max || self.count == 1 {
            self.max = value_ns;
            self.max_at_ns = at_ns;
        }
        let v = value_ns as u128;
        self.sum += v;
        self.sum_squares += v * v;
        self.intervals.record(value_ns, at_ns);
        self.blocks.record(value_ns, at_ns);
    }

    /// Adds the samples of `other` (another thread's recorder of the same quantity).
    pub fn merge(&mut self, other: &Recorder) {
        if other.count == 0 {
            return;
        }
        self.histogram
            .add(&other.histogram)
            .expect("recorders share the same histogram bounds");
        if self.count == 0 || other.max > self.max {
            self.max = other.max;
            self.max_at_ns = other.max_at_ns;
        }
        self.min = self.min.min(other.min);
        self.count += other.count;
        self.sum += other.sum;
        self.sum_squares += other.sum_squares;
        self.intervals.merge(&other.intervals);
        self.blocks.merge(&other.blocks);
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    /// Smallest sample, `None` before the first one.
    pub fn min(&self) -> Option<u64> {
        (self.count > 0).then_some(self.min)
    }

    pub fn max(&self) -> Option<u64> {
        (self.count > 0).then_some(self.max)
    }

    /// Mean, exact up to the division.
    pub fn mean(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum as f64 / self.count as f64)
    }

    /// Corrected sample standard deviation (n − 1 in the denominator).
    pub fn stddev(&self) -> Option<f64> {
        if self.count < 2 {
            return None;
        }
        let n = self.count as u128;
        // n·Σx² − (Σx)² is computed exactly in integers; i128 guards a wrap for absurd inputs.
        let numerator = (n * self.sum_squares).checked_sub(self.sum * self.sum)?;
        Some((numerator as f64 / (n * (n - 1)) as f64).sqrt())
    }

    /// The value at quantile `q` (0..=1) from the histogram: the highest value equivalent to
    /// the bucket holding the sample of rank ⌈q·n⌉, so within [`RELATIVE_ERROR`] of the truth,
    /// and never above the exact maximum.
    pub fn value_at_quantile(&self, q: f64) -> Option<u64> {
        if self.count == 0 {
            return None;
        }
        // The top rank is the maximum, which is known exactly (the histogram saturates).
        if (q * self.count as f64).ceil() as u64 >= self.count {
            return Some(self.max);
        }
        Some(
            self.histogram
                .value_at_quantile(q)
                .min(self.max)
                .max(self.min),
        )
    }

    pub fn intervals(&self) -> &IntervalMaxima {
        &self.intervals
    }

    pub fn blocks(&self) -> &blocks::BlockHistograms {
        &self.blocks
    }

    /// The serialisable summary of everything recorded.
    pub fn summary(&self) -> Summary {
        Summary::from_recorder(self)
    }

    pub(crate) fn histogram(&self) -> &Histogram<u64> {
        &self.histogram
    }

    pub(crate) fn max_at_ns(&self) -> u64 {
        self.max_at_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn brute_quantile(sorted: &[u64], q: f64) -> u64 {
        let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
        sorted[rank - 1]
    }

    #[test]
    fn empty_recorder_has_no_statistics() {
        let r = Recorder::default();
        assert_eq!(r.count(), 0);
        assert_eq!(r.min(), None);
        assert_eq!(r.mean(), None);
        assert_eq!(r.stddev(), None);
        assert_eq!(r.value_at_quantile(0.5), None);
    }

    #[test]
    fn values_beyond_the_histogram_range_saturate_but_max_stays_exact() {
        let mut r = Recorder::default();
        r.record(HISTOGRAM_MAX_NS * 4, 0);
        r.record(10, 1);
        assert_eq!(r.max(), Some(HISTOGRAM_MAX_NS * 4));
        assert_eq!(r.count(), 2);
        assert_eq!(r.value_at_quantile(1.0), Some(HISTOGRAM_MAX_NS * 4));
    }

    #[test]
    fn max_remembers_when_it_happened() {
        let mut r = Recorder::default();
        r.record(5, 100);
        r.record(50, 200);
        r.record(7, 300);
        assert_eq!(r.summary().max_at_ns, 200);
    }

    proptest! {
        #[test]
        fn moments_match_brute_force(samples in prop::collection::vec(0u64..5_000_000_000, 1..2000)) {
            let mut r = Recorder::default();
            for (i, &s) in samples.iter().enumerate() {
                r.record(s, i as u64 * 1000);
            }
            let n = samples.len() as f64;
            let mean = samples.iter().map(|&s| s as f64).sum::<f64>() / n;
            prop_assert_eq!(r.count(), samples.len() as u64);
            prop_assert_eq!(r.min(), samples.iter().copied().min());
            prop_assert_eq!(r.max(), samples.iter().copied().max());
            prop_assert!((r.mean().unwrap() - mean).abs() <= 1e-6 * mean.max(1.0));
            if samples.len() > 1 {
                let var = samples.iter().map(|&s| (s as f64 - mean).powi(2)).sum::<f64>() / (n - 1.0);
                let sd = r.stddev().unwrap();
                prop_assert!((sd - var.sqrt()).abs() <= 1e-6 * var.sqrt().max(1.0), "{} vs {}", sd, var.sqrt());
            }
        }

        #[test]
        fn percentiles_are_within_the_stated_relative_error(
            samples in prop::collection::vec(0u64..2_000_000_000, 1..3000),
            q in 0.0f64..=1.0,
        ) {
            let mut r = Recorder::default();
            for &s in &samples {
                r.record(s, 0);
            }
            let mut sorted = samples.clone();
            sorted.sort_unstable();
            let truth = brute_quantile(&sorted, q);
            let got = r.value_at_quantile(q).unwrap();
            let tolerance = (truth as f64 * RELATIVE_ERROR).ceil() as u64;
            prop_assert!(got.abs_diff(truth) <= tolerance, "q={} got {} truth {}", q, got, truth);
        }

        #[test]
        fn merging_equals_recording_everything_in_one(
            a in prop::collection::vec(0u64..10_000_000, 0..500),
            b in prop::collection::vec(0u64..10_000_000, 0..500),
        ) {
            let (mut ra, mut rb, mut all) = (Recorder::default(), Recorder::default(), Recorder::default());
            let mut events = Vec::new();
            for (i, &s) in a.iter().enumerate() { ra.record(s, i as u64 * 7_000_000); events.push((i as u64 * 7_000_000, s)); }
            for (i, &s) in b.iter().enumerate() { rb.record(s, i as u64 * 3_000_000); events.push((i as u64 * 3_000_000, s)); }
            // One recorder sees samples in time order, as a measuring thread does.
            events.sort_by_key(|e| e.0);
            for (at, s) in events { all.record(s, at); }
            ra.merge(&rb);
            prop_assert_eq!(ra.summary(), all.summary());
        }
    }
}
