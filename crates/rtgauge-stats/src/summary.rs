//! The serialisable statistics of one series of samples.

use crate::blocks::{BlockHistograms, SerializedBlocks};
use crate::interval::SerializedIntervals;
use crate::{Recorder, HISTOGRAM_SIGNIFICANT_DIGITS};
use serde::{Deserialize, Serialize};

/// Whether `count` samples support reporting quantile `q`: at least one sample must lie
/// beyond it, i.e. count ≥ 1 / (1 − q). p99.99 needs 10,000 samples, p99.999 100,000.
pub fn percentile_supported(q: f64, count: u64) -> bool {
    if q >= 1.0 {
        return count > 0;
    }
    count as f64 * (1.0 - q) >= 1.0 - 1e-9
}

/// High percentiles; a percentile is absent when the sample count does not support it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Percentiles {
    pub p90_ns: Option<u64>,
    pub p99_ns: Option<u64>,
    pub p99_9_ns: Option<u64>,
    pub p99_99_ns: Option<u64>,
    pub p99_999_ns: Option<u64>,
}

impl Percentiles {
    /// (label, quantile, value) for each percentile, in increasing order.
    pub fn entries(&self) -> [(&'static str, f64, Option<u64>); 5] {
        [
            ("p90", 0.90, self.p90_ns),
            ("p99", 0.99, self.p99_ns),
            ("p99.9", 0.999, self.p99_9_ns),
            ("p99.99", 0.9999, self.p99_99_ns),
            ("p99.999", 0.99999, self.p99_999_ns),
        ]
    }
}

/// Non-empty buckets of the HDR histogram: `[lowest value of the bucket, count]` pairs.
/// Re-recording each pair reproduces the histogram exactly.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SparseHistogram {
    pub significant_digits: u8,
    pub buckets: Vec<(u64, u64)>,
}

/// Statistics of one series: what every table, report and comparison is built from.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Summary {
    pub count: u64,
    pub min_ns: Option<u64>,
    pub max_ns: Option<u64>,
    /// Time since the start of measurement at which the maximum happened.
    pub max_at_ns: u64,
    /// Mean, rounded to whole nanoseconds.
    pub mean_ns: Option<u64>,
    /// Corrected sample standard deviation, rounded to whole nanoseconds.
    pub stddev_ns: Option<u64>,
    /// Standard uncertainty of the mean: stddev / √n.
    pub sem_ns: Option<u64>,
    pub median_ns: Option<u64>,
    pub p25_ns: Option<u64>,
    pub p75_ns: Option<u64>,
    pub iqr_ns: Option<u64>,
    pub percentiles: Percentiles,
    pub histogram: SparseHistogram,
    pub intervals: SerializedIntervals,
    /// A coarse histogram per 100-ms block, from which comparisons count the samples above
    /// another run's percentiles block by block (docs/compare.md). Absent in documents written
    /// before rtgauge kept them, and in imported results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocks: Option<SerializedBlocks>,
}

impl Summary {
    pub(crate) fn from_recorder(r: &Recorder) -> Summary {
        let n = r.count();
        let quantile = |q: f64| {
            if percentile_supported(q, n) {
                r.value_at_quantile(q)
            } else {
                None
            }
        };
        let (p25, p75) = (r.value_at_quantile(0.25), r.value_at_quantile(0.75));
        let stddev = r.stddev();
        let h = r.histogram();
        Summary {
            count: n,
            min_ns: r.min(),
            max_ns: r.max(),
            max_at_ns: if n > 0 { r.max_at_ns() } else { 0 },
            mean_ns: r.mean().map(|m| m.round() as u64),
            stddev_ns: stddev.map(|s| s.round() as u64),
            sem_ns: stddev.map(|s| (s / (n as f64).sqrt()).round() as u64),
            median_ns: r.value_at_quantile(0.5),
            p25_ns: p25,
            p75_ns: p75,
            iqr_ns: p25.zip(p75).map(|(a, b)| b.saturating_sub(a)),
            percentiles: Percentiles {
                p90_ns: quantile(0.90),
                p99_ns: quantile(0.99),
                p99_9_ns: quantile(0.999),
                p99_99_ns: quantile(0.9999),
                p99_999_ns: quantile(0.99999),
            },
            histogram: SparseHistogram {
                significant_digits: HISTOGRAM_SIGNIFICANT_DIGITS,
                buckets: h
                    .iter_recorded()
                    .map(|v| {
                        (
                            h.lowest_equivalent(v.value_iterated_to()),
                            v.count_at_value(),
                        )
                    })
                    .collect(),
            },
            intervals: r.intervals().to_serialized(),
            blocks: (n > 0).then(|| r.blocks().to_serialized()),
        }
    }

    /// One distribution from consecutive stretches of one measurement (the windows of a soak
    /// run): `parts` are each stretch's start, counted from the first one's start, and its
    /// summary, in time order. Counts, extremes, the histogram and the percentiles read from
    /// it are those of all the samples recorded as one; the mean and standard deviation are
    /// pooled from the parts' (each stored to the nanosecond); the interval maxima continue
    /// one after the other from each stretch's start.
    pub fn concatenate(parts: &[(u64, &Summary)]) -> Summary {
        let interval_ns = parts
            .first()
            .map_or(crate::DEFAULT_INTERVAL_NS, |(_, s)| s.intervals.interval_ns);
        let mut whole = Recorder::new(interval_ns);
        // Blocks as wide as the widest part's, so a long part's merged blocks are not spread
        // over narrower, partly empty ones.
        if let Some(width) = parts
            .iter()
            .filter_map(|(_, s)| s.blocks.as_ref())
            .map(|b| b.block_ns)
            .max()
        {
            whole.blocks = BlockHistograms::new(width);
        }
        for &(start_ns, part) in parts {
            let (Some(min), Some(max)) = (part.min_ns, part.max_ns) else {
                continue;
            };
            for &(value, count) in &part.histogram.buckets {
                whole.histogram.saturating_record_n(value, count);
            }
            if whole.count == 0 || max > whole.max {
                whole.max = max;
                whole.max_at_ns = start_ns + part.max_at_ns;
            }
            whole.min = whole.min.min(min);
            // Σx and Σx² rebuilt from the part's count, mean and deviation: in integers, so a
            // single part comes back with exactly its own mean and deviation.
            let n = u128::from(part.count);
            let mean = u128::from(part.mean_ns.unwrap_or(min));
            let stddev = u128::from(part.stddev_ns.unwrap_or(0));
            whole.count += part.count;
            whole.sum += n * mean;
            whole.sum_squares += n.saturating_sub(1) * stddev * stddev + n * mean * mean;
            if let Some(blocks) = &part.blocks {
                whole.blocks.append(blocks, start_ns);
            }
            let width = part.intervals.interval_ns;
            for (i, interval_max) in part.intervals.max_ns.iter().enumerate() {
                if let Some(value) = *interval_max {
                    whole.intervals.record(value, start_ns + i as u64 * width);
                }
            }
        }
        Summary::from_recorder(&whole)
    }

    /// The largest percentile this many samples support, as a label (e.g. "p99.9").
    pub fn highest_supported_percentile(&self) -> Option<&'static str> {
        self.percentiles
            .entries()
            .iter()
            .rev()
            .find(|(_, q, _)| percentile_supported(*q, self.count))
            .map(|(label, _, _)| *label)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_need_enough_samples() {
        assert!(percentile_supported(0.99, 100));
        assert!(!percentile_supported(0.999, 999));
        assert!(percentile_supported(0.99999, 100_000));
        let mut r = Recorder::default();
        for v in 0..1000 {
            r.record(v, 0);
        }
        let s = r.summary();
        assert!(s.percentiles.p99_9_ns.is_some());
        assert!(s.percentiles.p99_99_ns.is_none());
        assert_eq!(s.highest_supported_percentile(), Some("p99.9"));
    }

    #[test]
    fn sparse_histogram_round_trips_counts() {
        let mut r = Recorder::default();
        for v in [1u64, 1, 5000, 5001, 123_456_789] {
            r.record(v, 0);
        }
        let s = r.summary();
        assert_eq!(s.histogram.buckets.iter().map(|b| b.1).sum::<u64>(), 5);
        let mut again = Recorder::default();
        for &(v, c) in &s.histogram.buckets {
            for _ in 0..c {
                again.record(v, 0);
            }
        }
        assert_eq!(again.summary().histogram, s.histogram);
    }

    #[test]
    fn summary_serialises_with_ns_fields() {
        let mut r = Recorder::default();
        r.record(1500, 0);
        let json = serde_json::to_value(r.summary()).unwrap();
        assert_eq!(json["max_ns"], 1500);
        assert!(json["percentiles"]["p99_ns"].is_null());
    }

    /// Samples `STEP_NS` apart in each window; every window starts on an interval boundary, as
    /// a soak's windows do relative to each other only approximately, so the interval maxima
    /// can be compared slot for slot.
    const STEP_NS: u64 = 7_000_000;
    const INTERVAL_NS: u64 = 100_000_000;

    fn windows_and_whole(windows: &[Vec<u64>]) -> (Vec<(u64, Summary)>, Summary) {
        let mut whole = Recorder::new(INTERVAL_NS);
        let mut parts = Vec::new();
        let mut start_ns = 0;
        for samples in windows {
            let mut part = Recorder::new(INTERVAL_NS);
            for (i, &value) in samples.iter().enumerate() {
                let at_ns = i as u64 * STEP_NS;
                part.record(value, at_ns);
                whole.record(value, start_ns + at_ns);
            }
            parts.push((start_ns, part.summary()));
            let length_ns = samples.len() as u64 * STEP_NS;
            start_ns += (length_ns / INTERVAL_NS + 1) * INTERVAL_NS;
        }
        (parts, whole.summary())
    }

    proptest::proptest! {
        #[test]
        fn concatenated_windows_are_the_whole_measurement(
            windows in proptest::collection::vec(
                proptest::collection::vec(0u64..3_000_000_000, 0..300), 1..6),
        ) {
            let (parts, whole) = windows_and_whole(&windows);
            let refs: Vec<(u64, &Summary)> = parts.iter().map(|(at, s)| (*at, s)).collect();
            let joined = Summary::concatenate(&refs);
            // Exact: what the histogram and the extremes hold.
            proptest::prop_assert_eq!(joined.count, whole.count);
            proptest::prop_assert_eq!(joined.min_ns, whole.min_ns);
            proptest::prop_assert_eq!(joined.max_ns, whole.max_ns);
            proptest::prop_assert_eq!(joined.max_at_ns, whole.max_at_ns);
            proptest::prop_assert_eq!(&joined.histogram, &whole.histogram);
            proptest::prop_assert_eq!(&joined.percentiles, &whole.percentiles);
            proptest::prop_assert_eq!(joined.median_ns, whole.median_ns);
            proptest::prop_assert_eq!(joined.iqr_ns, whole.iqr_ns);
            proptest::prop_assert_eq!(&joined.intervals, &whole.intervals);
            // Pooled from moments stored to the nanosecond: each part's mean is off by at most
            // 0.5 ns and its deviation by 0.5 ns, so the pooled figures by at most 1 and 2 ns.
            let off = |a: Option<u64>, b: Option<u64>| a.unwrap_or(0).abs_diff(b.unwrap_or(0));
            proptest::prop_assert!(off(joined.mean_ns, whole.mean_ns) <= 1, "{:?} vs {:?}", joined.mean_ns, whole.mean_ns);
            proptest::prop_assert!(off(joined.stddev_ns, whole.stddev_ns) <= 2, "{:?} vs {:?}", joined.stddev_ns, whole.stddev_ns);
        }

        #[test]
        fn one_window_concatenates_to_itself(
            samples in proptest::collection::vec(0u64..3_000_000_000, 0..500),
        ) {
            let (parts, whole) = windows_and_whole(&[samples]);
            let mut joined = Summary::concatenate(&[(0, &parts[0].1)]);
            // The uncertainty of the mean comes from the deviation as stored, to the nanosecond.
            let sem_off = joined.sem_ns.unwrap_or(0).abs_diff(whole.sem_ns.unwrap_or(0));
            proptest::prop_assert!(sem_off <= 1, "{:?} vs {:?}", joined.sem_ns, whole.sem_ns);
            joined.sem_ns = whole.sem_ns;
            proptest::prop_assert_eq!(joined, whole);
        }
    }
}
