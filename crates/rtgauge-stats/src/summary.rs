//! The serialisable statistics of one series of samples.

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
        }
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
}
