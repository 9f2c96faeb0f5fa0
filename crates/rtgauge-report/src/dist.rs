//! A distribution rebuilt from a summary's sparse histogram: quantiles and the cumulative
//! distribution, with exactly the semantics of the recorder that wrote it, so a percentile read
//! here agrees with the one stored in the result and shown in the tables.

use rtgauge_result::Series;
use rtgauge_stats::{percentile_supported, Summary};

/// The recorded distribution of one series, per operation (sample value ÷ batch).
#[derive(Debug, Clone)]
pub struct Dist {
    /// (lowest value of the bucket in ns per sample, cumulative count up to and including it).
    cumulative: Vec<(u64, u64)>,
    count: u64,
    min_ns: u64,
    max_ns: u64,
    batch: u64,
    significant_digits: u8,
}

impl Dist {
    /// `None` when the series has no samples.
    pub fn of(series: &Series) -> Option<Dist> {
        Dist::from_summary(&series.stats, series.batch)
    }

    pub fn from_summary(s: &Summary, batch: u64) -> Option<Dist> {
        let (min_ns, max_ns) = (s.min_ns?, s.max_ns?);
        if s.count == 0 {
            return None;
        }
        let mut buckets = s.histogram.buckets.clone();
        buckets.sort_unstable_by_key(|b| b.0);
        let mut total = 0u64;
        let cumulative = buckets
            .iter()
            .filter(|b| b.1 > 0)
            .map(|&(v, c)| {
                total += c;
                (v, total)
            })
            .collect();
        Some(Dist {
            cumulative,
            count: s.count,
            min_ns,
            max_ns,
            batch: batch.max(1),
            significant_digits: s.histogram.significant_digits.max(1),
        })
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn batch(&self) -> u64 {
        self.batch
    }

    /// Smallest and largest sample, per operation.
    pub fn min(&self) -> f64 {
        self.per_op(self.min_ns)
    }

    pub fn max(&self) -> f64 {
        self.per_op(self.max_ns)
    }

    fn per_op(&self, ns: u64) -> f64 {
        ns as f64 / self.batch as f64
    }

    /// Whether the sample count supports quantile `q` (at least one sample beyond it).
    pub fn supports(&self, q: f64) -> bool {
        percentile_supported(q, self.count)
    }

    /// The value at quantile `q` in ns per sample, as the recorder computes it: the highest
    /// value equivalent to the bucket that holds the sample of rank ⌈q·n⌉, clamped to the exact
    /// min and max; the top rank is the exact maximum.
    pub fn quantile_ns(&self, q: f64) -> u64 {
        let q = q.clamp(0.0, 1.0);
        let n = self.count;
        if (q * n as f64).ceil() as u64 >= n {
            return self.max_ns;
        }
        let target = ((q * n as f64).ceil() as u64).max(1);
        let total = self.cumulative.last().map_or(0, |c| c.1);
        // A hand-edited or partial histogram may hold fewer samples than `count`.
        let target = target.min(total.max(1));
        let i = self.cumulative.partition_point(|c| c.1 < target);
        let Some(&(v, _)) = self.cumulative.get(i) else {
            return self.max_ns;
        };
        let value = if q == 0.0 {
            v
        } else {
            highest_equivalent(v, self.significant_digits)
        };
        value.min(self.max_ns).max(self.min_ns)
    }

    /// The value at quantile `q`, per operation.
    pub fn quantile(&self, q: f64) -> f64 {
        self.per_op(self.quantile_ns(q))
    }

    /// Per-operation bucket values and counts, in increasing order of value.
    pub fn buckets(&self) -> impl Iterator<Item = (f64, u64)> + '_ {
        let mut previous = 0u64;
        self.cumulative.iter().map(move |&(v, c)| {
            let count = c - previous;
            previous = c;
            (self.per_op(v), count)
        })
    }
}

/// The highest value an HDR histogram with `digits` significant digits (unit 1) counts in the
/// same bucket as `value` — the formula of the `hdrhistogram` crate, which the recorder uses.
pub fn highest_equivalent(value: u64, digits: u8) -> u64 {
    let largest_single_unit = 2 * 10u64.pow(u32::from(digits.min(5)));
    let sub_bucket_count_magnitude = (largest_single_unit as f64).log2().ceil() as u32;
    let half_magnitude = sub_bucket_count_magnitude.max(1) - 1;
    let mask = (1u64 << sub_bucket_count_magnitude) - 1;
    let leading_zero_count_base = 64 - half_magnitude - 1;
    let bucket = leading_zero_count_base - (value | mask).leading_zeros();
    let lowest = (value >> bucket) << bucket;
    lowest.saturating_add((1u64 << bucket) - 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtgauge_stats::Recorder;

    fn summary(values: &[u64]) -> Summary {
        let mut r = Recorder::default();
        for (i, &v) in values.iter().enumerate() {
            r.record(v, i as u64);
        }
        r.summary()
    }

    #[test]
    fn quantiles_agree_with_the_stored_percentiles() {
        // A spread over several HDR bucket magnitudes, with a heavy tail.
        let values: Vec<u64> = (0..20_000u64)
            .map(|i| 1_000 + (i * 7919) % 50_000 + if i % 997 == 0 { 3_000_000 } else { 0 })
            .collect();
        let s = summary(&values);
        let d = Dist::from_summary(&s, 1).unwrap();
        assert_eq!(Some(d.quantile_ns(0.5)), s.median_ns);
        assert_eq!(Some(d.quantile_ns(0.25)), s.p25_ns);
        assert_eq!(Some(d.quantile_ns(0.75)), s.p75_ns);
        for (_, q, v) in s.percentiles.entries() {
            if let Some(v) = v {
                assert_eq!(d.quantile_ns(q), v, "q={q}");
            }
        }
        assert_eq!(Some(d.quantile_ns(1.0)), s.max_ns);
        assert_eq!(Some(d.quantile_ns(0.0)), s.min_ns);
    }

    #[test]
    fn highest_equivalent_matches_bucket_widths() {
        // Below 2048 every value is its own bucket; above, buckets double in width.
        assert_eq!(highest_equivalent(5, 3), 5);
        assert_eq!(highest_equivalent(2047, 3), 2047);
        assert_eq!(highest_equivalent(2048, 3), 2049);
        assert_eq!(highest_equivalent(4096, 3), 4099);
        assert_eq!(highest_equivalent(1_000_000, 3), 1_000_447);
    }

    #[test]
    fn highest_equivalent_is_the_hdrhistogram_formula() {
        let h = hdrhistogram::Histogram::<u64>::new_with_bounds(1, 1 << 40, 3).unwrap();
        let mut v = 0u64;
        while v < 1 << 40 {
            assert_eq!(highest_equivalent(v, 3), h.highest_equivalent(v), "{v}");
            v = v * 3 / 2 + 1;
        }
    }

    #[test]
    fn batches_scale_to_per_operation_values() {
        let s = summary(&[1000, 2000, 3000]);
        let d = Dist::from_summary(&s, 10).unwrap();
        assert_eq!(d.min(), 100.0);
        assert_eq!(d.max(), 300.0);
        assert_eq!(d.buckets().map(|b| b.1).sum::<u64>(), 3);
    }

    #[test]
    fn empty_series_has_no_distribution() {
        assert!(Dist::from_summary(&Summary::default(), 1).is_none());
    }
}
