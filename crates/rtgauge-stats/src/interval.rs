//! Maximum per time interval over a run, in bounded memory.

use serde::{Deserialize, Serialize};

/// Number of interval slots kept; when a run outgrows them, neighbouring intervals are merged
/// pairwise and the interval width doubles, so a run of any length fits in constant memory.
pub const INTERVAL_SLOTS: usize = 2048;
const EMPTY: u64 = u64::MAX;

/// Maximum value seen in each interval of the run.
#[derive(Debug, Clone, PartialEq)]
pub struct IntervalMaxima {
    interval_ns: u64,
    slots: Vec<u64>,
    used: usize,
}

impl IntervalMaxima {
    pub fn new(interval_ns: u64) -> Self {
        IntervalMaxima {
            interval_ns: interval_ns.max(1),
            slots: vec![EMPTY; INTERVAL_SLOTS],
            used: 0,
        }
    }

    pub fn interval_ns(&self) -> u64 {
        self.interval_ns
    }

    /// Records `value_ns` at `at_ns` since the start. No allocation: on overflow the existing
    /// slots are folded in place.
    #[inline]
    pub fn record(&mut self, value_ns: u64, at_ns: u64) {
        let mut index = (at_ns / self.interval_ns) as usize;
        while index >= INTERVAL_SLOTS {
            self.fold();
            index = (at_ns / self.interval_ns) as usize;
        }
        let slot = &mut self.slots[index];
        if *slot == EMPTY || value_ns > *slot {
            *slot = value_ns;
        }
        self.used = self.used.max(index + 1);
    }

    /// Halves the resolution: slot i becomes max(slot 2i, slot 2i+1).
    fn fold(&mut self) {
        for i in 0..INTERVAL_SLOTS / 2 {
            self.slots[i] = combine(self.slots[2 * i], self.slots[2 * i + 1]);
        }
        self.slots[INTERVAL_SLOTS / 2..].fill(EMPTY);
        self.used = self.used.div_ceil(2);
        self.interval_ns *= 2;
    }

    /// Combines another thread's maxima measured from the same start.
    pub fn merge(&mut self, other: &IntervalMaxima) {
        let mut other = other.clone();
        while other.interval_ns < self.interval_ns {
            other.fold();
        }
        while self.interval_ns < other.interval_ns {
            self.fold();
        }
        for i in 0..other.used {
            self.slots[i] = combine(self.slots[i], other.slots[i]);
        }
        self.used = self.used.max(other.used);
    }

    /// Maxima of the intervals so far; `None` for an interval without samples.
    pub fn maxima(&self) -> Vec<Option<u64>> {
        self.slots[..self.used]
            .iter()
            .map(|&v| (v != EMPTY).then_some(v))
            .collect()
    }

    pub fn to_serialized(&self) -> SerializedIntervals {
        SerializedIntervals {
            interval_ns: self.interval_ns,
            max_ns: self.maxima(),
        }
    }
}

fn combine(a: u64, b: u64) -> u64 {
    match (a == EMPTY, b == EMPTY) {
        (true, _) => b,
        (_, true) => a,
        _ => a.max(b),
    }
}

/// Interval maxima as stored in a result document.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SerializedIntervals {
    pub interval_ns: u64,
    /// One entry per interval from the start of measurement; null where nothing was recorded.
    pub max_ns: Vec<Option<u64>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_one_maximum_per_interval() {
        let mut m = IntervalMaxima::new(10);
        m.record(3, 0);
        m.record(9, 5);
        m.record(4, 25);
        assert_eq!(m.maxima(), vec![Some(9), None, Some(4)]);
    }

    #[test]
    fn long_runs_fold_instead_of_growing() {
        let mut m = IntervalMaxima::new(1);
        for t in 0..(INTERVAL_SLOTS as u64 * 5) {
            m.record(t, t);
        }
        assert!(m.maxima().len() <= INTERVAL_SLOTS);
        assert_eq!(m.interval_ns(), 8);
        assert_eq!(
            m.maxima().last().copied().flatten(),
            Some(INTERVAL_SLOTS as u64 * 5 - 1)
        );
        assert_eq!(m.maxima()[0], Some(7));
    }

    #[test]
    fn merge_aligns_widths() {
        let mut a = IntervalMaxima::new(1);
        let mut b = IntervalMaxima::new(1);
        for t in 0..(INTERVAL_SLOTS as u64 + 10) {
            a.record(1, t);
        }
        b.record(100, 3);
        a.merge(&b);
        assert_eq!(a.interval_ns(), 2);
        assert_eq!(a.maxima()[1], Some(100));
    }
}
