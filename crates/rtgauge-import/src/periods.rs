//! Periods an imported periodic thread lost, from what its tool reported: the `overruns`
//! counter rtgauge's own `cyclic` keeps, or a note that the file cannot tell.

use crate::Reported;
use rtgauge_result::{Series, Warning};

/// Periods a periodic thread lost, from what its tool reported. cyclictest's thread (like
/// rtgauge's `cyclic`) skips the periods a late wake-up overslept: its next wake-up is the
/// first period boundary after it woke, so a sample late by `v` lost ⌊v / period⌋ periods.
/// `None` when the source cannot tell: samples beyond the histogram whose lateness spans
/// more than one multiple of the period, samples missing from it, or no histogram and a
/// maximum of a period or more.
pub(crate) fn lost_periods(r: &Reported, period_ns: u64) -> Option<u64> {
    if period_ns == 0 {
        return None;
    }
    if r.max_ns.is_some_and(|max| max < period_ns) {
        return Some(0);
    }
    let in_histogram: u64 = r.buckets.iter().fold(0u64, |a, b| a.saturating_add(b.1));
    if in_histogram == 0 {
        return None;
    }
    let width = r.bucket_ns.max(r.unit_ns);
    let mut lost = 0u64;
    for &(lower, count) in r.buckets.iter().filter(|b| b.1 > 0) {
        let mut upper = lower.saturating_add(width).saturating_sub(r.unit_ns);
        if let Some(max) = r.max_ns {
            upper = upper.min(max).max(lower);
        }
        // A bucket spanning a multiple of the period: its samples lost different numbers.
        if lower / period_ns != upper / period_ns {
            return None;
        }
        lost = lost.saturating_add(count.saturating_mul(lower / period_ns));
    }
    let total = r
        .count
        .max(in_histogram.saturating_add(r.overflow.unwrap_or(0)));
    let beyond = total - in_histogram;
    match (r.limit_ns, r.max_ns) {
        // The maximum lies beyond the histogram and the file does not say how many do.
        (Some(limit), Some(max)) if beyond == 0 && r.overflow.is_none() && max >= limit => None,
        _ if beyond == 0 => Some(lost),
        // Every sample beyond the histogram lost as many periods as its limit and the
        // maximum: known only when those are the same.
        (Some(limit), Some(max)) if limit / period_ns == max / period_ns => {
            Some(lost.saturating_add(beyond.saturating_mul(limit / period_ns)))
        }
        _ => None,
    }
}

/// Sets the `overruns` counter (periods lost) of an imported periodic series where the
/// source tells them ([`lost_periods`]); where it cannot, says so instead of leaving a 0 to
/// be read as "lost no period".
pub(crate) fn count_lost_periods(
    series: &mut Series,
    r: &Reported,
    period_ns: u64,
    warnings: &mut Vec<Warning>,
    what: &str,
) {
    match lost_periods(r, period_ns) {
        Some(lost) => {
            series.counters.insert("overruns".into(), lost);
        }
        None => {
            let d = rtgauge_result::units::format_duration_ns;
            let message = match r.max_ns {
                Some(max) => format!(
                    "{what}: woke up up to {} late at a {} period; the file does not say how many periods were lost",
                    d(max),
                    d(period_ns)
                ),
                None => format!(
                    "{what}: no maximum, so the file does not say whether periods were lost"
                ),
            };
            warnings.push(Warning::new("imported_lost_periods_unknown", message));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lost_periods_come_from_the_histogram_or_are_not_claimed() {
        let ms = 1_000_000;
        // 1 ms period; samples at 10 µs ×90, 1.2 ms ×2 (1 period each), 2.016 ms ×1 (2).
        let r = Reported {
            buckets: vec![(10_000, 90), (1_200_000, 2), (2_016_000, 1)],
            count: 93,
            max_ns: Some(2_016_000),
            ..Default::default()
        };
        assert_eq!(lost_periods(&r, ms), Some(4));
        // Everything below one period: none lost, even without a histogram.
        let quiet = Reported {
            count: 10,
            max_ns: Some(900_000),
            ..Default::default()
        };
        assert_eq!(lost_periods(&quiet, ms), Some(0));
        // No histogram and a maximum past the period: not known.
        let late = Reported {
            count: 10,
            max_ns: Some(2_016_000),
            ..Default::default()
        };
        assert_eq!(lost_periods(&late, ms), None);
        // 3 samples beyond a 1.5 ms histogram, the maximum 1.9 ms: each lost exactly one.
        let beyond = Reported {
            buckets: vec![(10_000, 90)],
            count: 93,
            overflow: Some(3),
            limit_ns: Some(1_500_000),
            max_ns: Some(1_900_000),
            ..Default::default()
        };
        assert_eq!(lost_periods(&beyond, ms), Some(3));
        // …but beyond a 400 µs histogram they may have lost none or two.
        let wide = Reported {
            limit_ns: Some(400_000),
            max_ns: Some(2_016_000),
            ..beyond
        };
        assert_eq!(lost_periods(&wide, ms), None);
    }
}
