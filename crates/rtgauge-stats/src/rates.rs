//! Lost periods (overruns, missed deadlines) compared as rates: is the candidate's rate of an
//! event per period higher than the baseline's moved by a margin?
//!
//! A count is not a distribution statistic: a run that lost 13 of 10,000 periods and one that
//! lost none differ in how often something happened, and how sure that is depends on how many
//! periods each measured. Given the total count of both sides, the candidate's share of it is
//! binomial when each period loses independently (a Poisson rate per period); the test asks
//! whether that share is larger than the one the baseline's rate × (1 + margin) predicts.
//!
//! Periods are not independent: one stall of a millisecond loses ten 100-µs periods in a row,
//! and two runs of one configuration differ by more than their counts suggest. With repeated
//! runs on both sides the variation between runs is measured (the quasi-Poisson dispersion:
//! how much more the per-run counts vary than a Poisson rate would) and the counts are shrunk
//! by it before the test, so a configuration whose runs lose 0, 20 and 0 periods does not
//! declare a change from three runs that lose 10 each. A single run on a side has no such
//! measure, but it shows how long its worst stall was: a stall that held the thread for N
//! periods can lose N periods at once, so the counts of single runs are taken in bursts of
//! up to that many (a dispersion of N: the variance of a count made of bursts of at most N
//! is at most N times its mean). Runs whose longest stall stayed within a period are taken
//! as independent periods. Measured on this VM: two identical 2-s runs at 1 ms lost 0 and 8
//! periods, with wake-ups of up to 8 ms; as independent periods that would read as a change.

use statrs::function::beta::beta_reg;

/// One run's count of an event and the periods it measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Count {
    pub events: u64,
    pub periods: u64,
    /// The most periods one stall of this run could have lost (its longest wake-up in
    /// periods, at least 1): how much its count may come in bursts.
    pub burst: f64,
}

impl Count {
    /// Events per period (0 without periods).
    pub fn rate(&self) -> f64 {
        if self.periods == 0 {
            0.0
        } else {
            self.events as f64 / self.periods as f64
        }
    }
}

/// The candidate's rate against the baseline's moved by a margin.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateTest {
    /// Both sides summed over their runs.
    pub baseline: Count,
    pub candidate: Count,
    /// Runs per side (baseline, candidate).
    pub runs: [usize; 2],
    /// How much more the per-run counts vary than a Poisson rate would (≥ 1); 1 unless both
    /// sides have at least two runs.
    pub dispersion: f64,
    /// One-sided p-value of "the candidate's rate is at most the baseline's × (1 + margin)".
    pub p_worse: f64,
    /// One-sided p-value of "the candidate's rate is at least the baseline's ÷ (1 + margin)".
    pub p_better: f64,
}

impl RateTest {
    /// Whether the candidate's rate as measured is above the baseline's × (1 + `margin`).
    pub fn worse_beyond(&self, margin: f64) -> bool {
        self.candidate.rate() > self.baseline.rate() * (1.0 + margin)
    }

    /// Whether the dispersion was measured from repeated runs rather than assumed.
    pub fn dispersion_measured(&self) -> bool {
        self.runs[0] >= 2 && self.runs[1] >= 2
    }

    /// (candidate − baseline) / baseline of the rates; `None` when the baseline lost nothing.
    pub fn change(&self) -> Option<f64> {
        let a = self.baseline.rate();
        (a > 0.0).then(|| (self.candidate.rate() - a) / a)
    }
}

/// P(X ≥ k) for X binomial(n, p), continuous in `k` and `n` (scaled counts): the regularised
/// incomplete beta function.
fn upper_tail(k: f64, n: f64, p: f64) -> f64 {
    if k <= 0.0 {
        return 1.0;
    }
    if k > n || p <= 0.0 {
        return 0.0;
    }
    if p >= 1.0 {
        return 1.0;
    }
    beta_reg(k, n - k + 1.0, p).clamp(0.0, 1.0)
}

/// Pearson's dispersion of per-run counts around each side's pooled rate (≥ 1) with two runs
/// on each side; without them, the longest burst a stall of these runs could cause.
fn dispersion(baseline: &[Count], candidate: &[Count]) -> f64 {
    if baseline.len() < 2 || candidate.len() < 2 {
        return baseline
            .iter()
            .chain(candidate)
            .map(|c| c.burst)
            .filter(|b| b.is_finite())
            .fold(1.0, f64::max);
    }
    let mut chi2 = 0.0;
    for side in [baseline, candidate] {
        let events = side.iter().fold(0u64, |s, c| s.saturating_add(c.events));
        let periods = side.iter().fold(0u64, |s, c| s.saturating_add(c.periods));
        if events == 0 || periods == 0 {
            continue;
        }
        let rate = events as f64 / periods as f64;
        for c in side {
            let expected = rate * c.periods as f64;
            if expected > 0.0 {
                chi2 += (c.events as f64 - expected).powi(2) / expected;
            }
        }
    }
    let df = (baseline.len() + candidate.len()) as f64 - 2.0;
    (chi2 / df).max(1.0)
}

/// Tests the candidate's runs against the baseline's moved by `margin` (0.1 = 10 % more
/// events per period), both ways. `None` when a side measured no period.
pub fn test_rates(baseline: &[Count], candidate: &[Count], margin: f64) -> Option<RateTest> {
    // Saturating: a damaged document's counters must not overflow the sums.
    let sum = |side: &[Count]| Count {
        events: side.iter().fold(0u64, |s, c| s.saturating_add(c.events)),
        periods: side.iter().fold(0u64, |s, c| s.saturating_add(c.periods)),
        burst: side.iter().map(|c| c.burst).fold(1.0, f64::max),
    };
    let (a, b) = (sum(baseline), sum(candidate));
    if a.periods == 0 || b.periods == 0 {
        return None;
    }
    let phi = dispersion(baseline, candidate);
    let (ta, tb) = (a.periods as f64, b.periods as f64);
    let n = (a.events as f64 + b.events as f64) / phi;
    let (ka, kb) = (a.events as f64 / phi, b.events as f64 / phi);
    let factor = 1.0 + margin;
    // The candidate's share of all events if its rate were the baseline's × factor (worse),
    // or ÷ factor (better).
    let share_worse = tb * factor / (ta + tb * factor);
    let share_better = tb / factor / (ta + tb / factor);
    Some(RateTest {
        baseline: a,
        candidate: b,
        runs: [baseline.len(), candidate.len()],
        dispersion: phi,
        p_worse: upper_tail(kb, n, share_worse),
        p_better: upper_tail(ka, n, 1.0 - share_better),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shift::ALPHA;
    use proptest::prelude::*;

    fn one(events: u64, periods: u64) -> Vec<Count> {
        vec![Count {
            events,
            periods,
            burst: 1.0,
        }]
    }

    #[test]
    fn ten_lost_periods_in_ten_thousand_against_none_are_declared() {
        let t = test_rates(&one(0, 10_000), &one(10, 10_000), 0.1).unwrap();
        assert!(t.p_worse < ALPHA, "{t:?}");
        assert!(t.worse_beyond(0.1));
        assert!(t.p_better > 0.5);
        assert_eq!(t.change(), None);
    }

    #[test]
    fn nothing_lost_on_either_side_declares_nothing() {
        let t = test_rates(&one(0, 10_000), &one(0, 9_000), 0.1).unwrap();
        assert_eq!((t.p_worse, t.p_better), (1.0, 1.0));
        assert!(!t.worse_beyond(0.1));
    }

    #[test]
    fn a_few_stray_overruns_are_not_a_change() {
        let t = test_rates(&one(1, 10_000), &one(3, 10_000), 0.1).unwrap();
        assert!(t.p_worse > ALPHA, "{t:?}");
        assert!(t.worse_beyond(0.1));
    }

    #[test]
    fn runs_that_vary_a_lot_need_more_than_their_counts_to_declare() {
        let runs = |counts: &[u64]| -> Vec<Count> {
            counts
                .iter()
                .map(|&events| Count {
                    events,
                    periods: 10_000,
                    burst: 1.0,
                })
                .collect()
        };
        // Poisson-like runs: 30 against 3 events is declared.
        let steady = test_rates(&runs(&[1, 1, 1]), &runs(&[10, 10, 10]), 0.1).unwrap();
        assert!(steady.p_worse < ALPHA, "{steady:?}");
        // The baseline's runs lose 0, 20, 0: its rate is as uncertain as its runs vary.
        let bursty = test_rates(&runs(&[0, 20, 0]), &runs(&[10, 10, 10]), 0.1).unwrap();
        assert!(bursty.dispersion > 5.0, "{bursty:?}");
        assert!(bursty.p_worse > ALPHA, "{bursty:?}");
        assert!(bursty.dispersion_measured());
    }

    #[test]
    fn single_runs_whose_stalls_lasted_several_periods_count_in_bursts() {
        // Identical 2-s runs at 1 ms on this VM: 0 and 8 lost periods, wake-ups up to 8 ms.
        let burst = |events: u64| {
            vec![Count {
                events,
                periods: 2_000,
                burst: 8.0,
            }]
        };
        let t = test_rates(&burst(0), &burst(8), 0.1).unwrap();
        assert_eq!(t.dispersion, 8.0);
        assert!(t.p_worse > ALPHA, "{t:?}");
        // As independent periods the same counts would be declared.
        assert!(
            test_rates(&one(0, 2_000), &one(8, 2_000), 0.1)
                .unwrap()
                .p_worse
                < ALPHA
        );
        // A planted stall of the same length every time still is: 0 against 200 of 20,000.
        let many = |events: u64| {
            vec![Count {
                events,
                periods: 20_000,
                burst: 10.0,
            }]
        };
        assert!(test_rates(&many(0), &many(200), 0.1).unwrap().p_worse < ALPHA);
    }

    #[test]
    fn fewer_events_are_declared_better() {
        let t = test_rates(&one(50, 10_000), &one(2, 10_000), 0.1).unwrap();
        assert!(t.p_better < ALPHA && t.p_worse > 0.5, "{t:?}");
        assert!(test_rates(&one(0, 0), &one(1, 10), 0.1).is_none());
    }

    proptest! {
        #[test]
        fn p_values_are_probabilities_and_more_events_look_worse(
            ka in 0u64..200, kb in 0u64..200, ta in 1u64..100_000, tb in 1u64..100_000,
        ) {
            let ka = ka.min(ta);
            let kb = kb.min(tb);
            let t = test_rates(&one(ka, ta), &one(kb, tb), 0.1).unwrap();
            prop_assert!((0.0..=1.0).contains(&t.p_worse));
            prop_assert!((0.0..=1.0).contains(&t.p_better));
            if kb < tb {
                let more = test_rates(&one(ka, ta), &one(kb + 1, tb), 0.1).unwrap();
                prop_assert!(more.p_worse <= t.p_worse + 1e-12);
            }
        }
    }
}
