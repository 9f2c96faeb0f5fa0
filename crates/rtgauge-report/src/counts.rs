//! Lost periods in comparisons and gates: the counters a series keeps of periods it lost
//! (overruns: a wake-up more than a period late; missed deadlines), each as a rate over the
//! periods the series measured, tested with [`rtgauge_stats::rates`].

use crate::compare::{format_p, percent};
use rtgauge_result::Series;
use rtgauge_stats::rates::{test_rates, Count, RateTest};
use serde::Serialize;

/// The counters of lost periods, by the names series keep them under (and `--regress-stats`
/// and spec files take).
pub const LOST_PERIODS: [&str; 2] = ["overruns", "deadline_misses"];

/// The periods a series measured: its `cycles` or `jobs` counter, else its samples and its
/// overruns (a period that overran has no sample of its own).
pub fn periods(s: &Series) -> u64 {
    s.counters
        .get("cycles")
        .or_else(|| s.counters.get("jobs"))
        .copied()
        .unwrap_or_else(|| {
            s.stats
                .count
                .saturating_add(s.counters.get("overruns").copied().unwrap_or(0))
        })
}

/// A series' count of `counter` over its periods; `None` when it does not keep the counter.
pub fn count(s: &Series, counter: &str) -> Option<Count> {
    let events = *s.counters.get(counter)?;
    let periods = periods(s).max(events);
    Some(Count {
        events,
        periods,
        burst: burst(s, periods),
    })
}

/// The most periods one stall of `s` could have lost: its longest value over its period
/// (the measured time over the periods), at least 1. 1 when the series does not say how long
/// it measured.
pub fn burst(s: &Series, periods: u64) -> f64 {
    let measured = s
        .stats
        .intervals
        .interval_ns
        .saturating_mul(s.stats.intervals.max_ns.len() as u64);
    match (s.stats.max_ns, measured, periods) {
        (Some(max), m, p) if m > 0 && p > 0 => {
            let period = m as f64 / p as f64;
            (max as f64 / period).ceil().max(1.0)
        }
        _ => 1.0,
    }
}

/// `overruns` → `overruns`, `deadline_misses` → `missed deadlines`: the counter in words.
pub fn words(counter: &str) -> String {
    match counter {
        "deadline_misses" => "missed deadlines".into(),
        other => other.replace('_', " "),
    }
}

/// `0 → 23 per 10,000 periods`: both rates in the unit that reads best.
pub fn rates_text(t: &RateTest) -> String {
    let (a, b) = (t.baseline.rate(), t.candidate.rate());
    let per = |r: f64| {
        let v = r * 10_000.0;
        if v == 0.0 {
            "0".to_string()
        } else if v >= 10.0 {
            format!("{v:.0}")
        } else {
            format!("{v:.2}")
        }
    };
    let mut text = format!("{} → {} per 10,000 periods", per(a), per(b));
    if let Some(c) = t.change() {
        text.push_str(&format!(" ({})", percent(c)));
    }
    text
}

/// `(13 of 20,000 periods against 0 of 20,000)`: the counts behind the rates.
pub fn counts_text(t: &RateTest) -> String {
    let runs = match t.runs {
        [1, 1] => String::new(),
        [a, b] => format!(", {b} vs {a} runs"),
    };
    format!(
        "{} of {} periods against {} of {}{runs}",
        t.candidate.events,
        thousands(t.candidate.periods),
        t.baseline.events,
        thousands(t.baseline.periods)
    )
}

/// `20000` → `20,000`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// What the runs' variation was taken as: measured from repeated runs, or (single runs) the
/// bursts their longest stall could cause, or each period independent.
pub fn variation_text(t: &RateTest) -> String {
    if t.dispersion_measured() {
        format!(
            "runs vary {:.1}× as much as independent periods would",
            t.dispersion.sqrt()
        )
    } else if t.dispersion > 1.0 {
        format!(
            "single runs: a stall here lasted up to {:.0} periods, so counts are taken in bursts of that many",
            t.dispersion
        )
    } else {
        "single runs: periods taken as independent".into()
    }
}

/// One counter of two sides compared by `margin` both ways, for `compare`: the figures and
/// what they say. `None` when neither side keeps the counter.
#[derive(Debug, Clone, Serialize)]
pub struct CountDiff {
    /// `overruns`, `deadline_misses`.
    pub counter: String,
    pub baseline: u64,
    pub baseline_periods: u64,
    pub candidate: u64,
    pub candidate_periods: u64,
    /// Runs per side (baseline, candidate).
    pub runs: [usize; 2],
    /// One-sided p-values: more events per period beyond the margin, fewer beyond it.
    pub p_worse: f64,
    pub p_better: f64,
    /// `more`, `fewer` or `same` (what the test declared at the level given).
    pub verdict: String,
    /// The sentence the notes print.
    pub text: String,
}

/// Compares `counter` over the runs of each side (one series per run); `None` when a side
/// does not keep it or measured no period.
pub fn compare_count(
    baseline: &[&Series],
    candidate: &[&Series],
    counter: &str,
    margin: f64,
    alpha: f64,
) -> Option<CountDiff> {
    let side = |v: &[&Series]| -> Option<Vec<Count>> {
        let counts: Vec<Count> = v.iter().filter_map(|s| count(s, counter)).collect();
        (!counts.is_empty()).then_some(counts)
    };
    let (a, b) = (side(baseline)?, side(candidate)?);
    let t = test_rates(&a, &b, margin)?;
    let beyond = format!("beyond {:.0} %", margin * 100.0);
    let (verdict, said) = if t.p_worse < alpha {
        ("more", format!("more {beyond} (p {})", format_p(t.p_worse)))
    } else if t.p_better < alpha {
        (
            "fewer",
            format!("fewer {beyond} (p {})", format_p(t.p_better)),
        )
    } else if t.baseline.events == 0 && t.candidate.events == 0 {
        ("same", "none on either side".to_string())
    } else {
        (
            "same",
            format!("not told apart from chance ({})", variation_text(&t)),
        )
    };
    Some(CountDiff {
        counter: counter.to_string(),
        baseline: t.baseline.events,
        baseline_periods: t.baseline.periods,
        candidate: t.candidate.events,
        candidate_periods: t.candidate.periods,
        runs: t.runs,
        p_worse: t.p_worse,
        p_better: t.p_better,
        verdict: verdict.into(),
        text: format!(
            "{}: {} ({}); {said}",
            words(counter),
            rates_text(&t),
            counts_text(&t)
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lost(overruns: u64, cycles: u64) -> Series {
        Series::new("latency", Default::default())
            .counter("overruns", overruns)
            .counter("cycles", cycles)
    }

    #[test]
    fn rates_read_per_ten_thousand_periods_with_their_counts() {
        let (a, b) = (lost(0, 20_000), lost(23, 20_000));
        let d = compare_count(&[&a], &[&b], "overruns", 0.1, 0.01).unwrap();
        assert_eq!(d.verdict, "more");
        assert!(
            d.text.starts_with("overruns: 0 → 12 per 10,000 periods (23 of 20,000 periods against 0 of 20,000); more beyond 10 % (p "),
            "{}",
            d.text
        );
        let same = compare_count(&[&a], &[&a], "overruns", 0.1, 0.01).unwrap();
        assert_eq!(same.text, "overruns: 0 → 0 per 10,000 periods (0 of 20,000 periods against 0 of 20,000); none on either side");
        assert!(compare_count(&[&a], &[&b], "deadline_misses", 0.1, 0.01).is_none());
    }

    #[test]
    fn periods_come_from_cycles_jobs_or_samples() {
        assert_eq!(periods(&lost(3, 500)), 500);
        let jobs = Series::new("response", Default::default()).counter("jobs", 80);
        assert_eq!(periods(&jobs), 80);
        let mut plain = Series::new("latency", Default::default()).counter("overruns", 2);
        plain.stats.count = 98;
        assert_eq!(periods(&plain), 100);
        assert_eq!(words("deadline_misses"), "missed deadlines");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(thousands(999), "999");
    }

    #[test]
    fn counters_of_a_damaged_document_do_not_overflow() {
        let mut huge = lost(u64::MAX, u64::MAX);
        huge.stats.intervals.interval_ns = u64::MAX;
        huge.stats.intervals.max_ns = vec![Some(1), Some(2)];
        huge.stats.max_ns = Some(u64::MAX);
        let d = compare_count(&[&huge, &huge], &[&huge], "overruns", 0.1, 0.01).unwrap();
        assert!((0.0..=1.0).contains(&d.p_worse), "{d:?}");
        let mut plain = Series::new("latency", Default::default()).counter("overruns", u64::MAX);
        plain.stats.count = u64::MAX;
        assert_eq!(periods(&plain), u64::MAX);
    }
}
