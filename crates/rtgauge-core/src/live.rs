//! Live statistics for the progress display, published without locks.
//!
//! Each measuring thread owns one [`LiveCell`] and writes it with relaxed atomic stores (a
//! plain store on x86, no lock, no allocation); a display thread reads the cells. A reader may
//! see a sample count and a sum from neighbouring cycles; the final numbers never come from
//! here.
//!
//! A monitor's board also keeps the causes of recent spikes ([`LiveBoard::publish_cause`]),
//! written by the trace reader thread under a lock (never by a measuring thread), so the
//! monitor can name the cause of each interval's maximum ([`LiveBoard::cause_of`]).

use std::collections::VecDeque;
use std::sync::atomic::{
    AtomicU64,
    Ordering::{Acquire, Relaxed, Release},
};
use std::sync::Arc;

#[derive(Debug)]
pub struct LiveCell {
    pub label: String,
    count: AtomicU64,
    last: AtomicU64,
    min: AtomicU64,
    max: AtomicU64,
    sum: AtomicU64,
    overruns: AtomicU64,
    /// With a board made by [`LiveBoard::exporting`] (`rtgauge monitor`): the histogram and
    /// interval maxima the exporter reads.
    export: Option<Box<ExportCell>>,
}

impl LiveCell {
    pub fn new(label: String) -> Self {
        LiveCell {
            label,
            count: AtomicU64::new(0),
            last: AtomicU64::new(0),
            min: AtomicU64::new(u64::MAX),
            max: AtomicU64::new(0),
            sum: AtomicU64::new(0),
            overruns: AtomicU64::new(0),
            export: None,
        }
    }

    /// The exporter's view of this cell, when the board exports.
    pub fn export(&self) -> Option<&ExportCell> {
        self.export.as_deref()
    }

    /// [`LiveCell::publish`], and for an exporting board, the sample counted in its
    /// histogram bucket and in the maximum of the interval holding `now_ns` (CLOCK_MONOTONIC).
    /// Called by the owning thread only; no allocation, no lock, no read-modify-write.
    #[inline]
    pub fn publish_at(&self, value: u64, overruns: u64, now_ns: u64) {
        self.publish(value, overruns);
        if let Some(export) = &self.export {
            export.record(value, now_ns);
        }
    }

    /// Called by the owning thread only, so read-modify-write is not needed.
    #[inline]
    pub fn publish(&self, value: u64, overruns: u64) {
        let count = self.count.load(Relaxed) + 1;
        self.count.store(count, Relaxed);
        self.last.store(value, Relaxed);
        if value < self.min.load(Relaxed) {
            self.min.store(value, Relaxed);
        }
        if value > self.max.load(Relaxed) {
            self.max.store(value, Relaxed);
        }
        self.sum
            .store(self.sum.load(Relaxed).wrapping_add(value), Relaxed);
        self.overruns.store(overruns, Relaxed);
    }

    pub fn snapshot(&self) -> LiveSnapshot {
        let count = self.count.load(Relaxed);
        LiveSnapshot {
            count,
            last: self.last.load(Relaxed),
            min: if count > 0 { self.min.load(Relaxed) } else { 0 },
            max: self.max.load(Relaxed),
            avg: self.sum.load(Relaxed).checked_div(count).unwrap_or(0),
            overruns: self.overruns.load(Relaxed),
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LiveSnapshot {
    pub count: u64,
    pub last: u64,
    pub min: u64,
    pub max: u64,
    pub avg: u64,
    pub overruns: u64,
}

/// The cells of the probe currently running; the display thread polls it.
#[derive(Debug, Default)]
pub struct LiveBoard {
    cells: std::sync::Mutex<(String, Vec<Arc<LiveCell>>)>,
    /// Interval width of the exported interval maxima; None: the cells export nothing.
    export_interval_ns: Option<u64>,
    /// The latest spikes' causes (exporting boards only), oldest first, at most [`CAUSES`].
    causes: std::sync::Mutex<VecDeque<SpikeCause>>,
}

/// Spike causes a board keeps: a monitor reads them within a few intervals, and each CPU has
/// a handful of candidates per interval (its new maxima).
const CAUSES: usize = 4096;

/// Why one spike of a measuring thread was late, as the trace reader found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpikeCause {
    pub cpu: usize,
    /// The wake-up (CLOCK_MONOTONIC ns) and its latency: the sample's own numbers.
    pub woke_ns: u64,
    pub latency_ns: u64,
    /// The dominant cause, named without thread ids.
    pub cause: String,
}

impl LiveBoard {
    /// Registers a cell before its thread starts measuring (never from a hot loop).
    pub fn register(&self, label: String) -> Arc<LiveCell> {
        let mut cell = LiveCell::new(label);
        cell.export = self
            .export_interval_ns
            .map(|interval| Box::new(ExportCell::new(interval)));
        let cell = Arc::new(cell);
        if let Ok(mut g) = self.cells.lock() {
            g.1.push(cell.clone());
        }
        cell
    }

    /// A board whose cells also keep a histogram in [`EXPORT_BOUNDS_NS`] buckets and the
    /// maxima of `interval_ns` wide intervals, for an exporter (`rtgauge monitor`).
    pub fn exporting(interval_ns: u64) -> LiveBoard {
        LiveBoard {
            cells: Default::default(),
            export_interval_ns: Some(interval_ns.max(1)),
            causes: Default::default(),
        }
    }

    /// The interval of the exported maxima, for a board that exports.
    pub fn export_interval_ns(&self) -> Option<u64> {
        self.export_interval_ns
    }

    /// Keeps a spike's cause (the trace reader, never a measuring thread); the oldest goes
    /// when [`CAUSES`] are kept. Nothing on a board that does not export.
    pub fn publish_cause(&self, cause: SpikeCause) {
        if self.export_interval_ns.is_none() {
            return;
        }
        if let Ok(mut causes) = self.causes.lock() {
            if causes.len() == CAUSES {
                causes.pop_front();
            }
            causes.push_back(cause);
        }
    }

    /// The cause of the sample of `cpu` with latency `latency_ns` that woke in interval `n`
    /// or `n + 1` (a monitor's interval maximum: both numbers come from the same sample, so
    /// the match is exact); the latest such one.
    pub fn cause_of(&self, cpu: usize, n: u64, latency_ns: u64) -> Option<String> {
        let interval = self.export_interval_ns?;
        let causes = self.causes.lock().ok()?;
        causes
            .iter()
            .rev()
            .find(|c| {
                let at = c.woke_ns / interval;
                c.cpu == cpu && c.latency_ns == latency_ns && (at == n || at == n + 1)
            })
            .map(|c| c.cause.clone())
    }

    /// The cells of the running probe (the exporter reads them; never the measuring threads).
    pub fn cells(&self) -> Vec<Arc<LiveCell>> {
        match self.cells.lock() {
            Ok(g) => g.1.clone(),
            Err(_) => Vec::new(),
        }
    }

    /// Starts a new probe: clears the cells and sets the heading.
    pub fn begin(&self, heading: String) {
        if let Ok(mut g) = self.cells.lock() {
            *g = (heading, Vec::new());
        }
    }

    pub fn snapshot(&self) -> (String, Vec<(String, LiveSnapshot)>) {
        match self.cells.lock() {
            Ok(g) => (
                g.0.clone(),
                g.1.iter()
                    .map(|c| (c.label.clone(), c.snapshot()))
                    .collect(),
            ),
            Err(_) => (String::new(), Vec::new()),
        }
    }
}

/// Upper bounds (inclusive, ns) of the exported histogram's buckets: log-linear, 16 per
/// decade (1, 1.2, 1.4, 1.6, 1.8, 2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9 × 10^k) from 1 µs to
/// 9 s, then 10 s; above that the `+Inf` bucket. Each bucket is at most 25 % wide.
pub const EXPORT_BOUNDS_NS: [u64; 113] = export_bounds();
const MANTISSAS: [u64; 16] = [
    10, 12, 14, 16, 18, 20, 25, 30, 35, 40, 45, 50, 60, 70, 80, 90,
];

const fn export_bounds() -> [u64; 113] {
    let mut bounds = [0u64; 113];
    let mut decade = 0;
    let mut scale = 100; // 10 × 100 ns = 1 µs
    while decade < 7 {
        let mut m = 0;
        while m < 16 {
            bounds[decade * 16 + m] = MANTISSAS[m] * scale;
            m += 1;
        }
        scale *= 10;
        decade += 1;
    }
    bounds[112] = 10_000_000_000;
    bounds
}

/// The native histogram's buckets (Prometheus's exponential buckets, for scrapers that ask
/// for them): schema 3, eight buckets per doubling of the value in seconds, bucket `i` holding
/// (2^((i-1)/8), 2^(i/8)] s, each 9 % wide.
pub const NATIVE_SCHEMA: i32 = 3;
/// The first bucket kept: upper bound 2^(-159/8) s ≈ 1.04 µs. Values up to
/// [`NATIVE_ZERO_THRESHOLD_NS`] (2^-20 s ≈ 954 ns) are counted in the zero bucket.
pub const NATIVE_FIRST_INDEX: i32 = -159;
/// The last bucket kept: upper bound 2^10 s (1024 s); longer values are counted in it.
pub const NATIVE_LAST_INDEX: i32 = 80;
/// The zero bucket's threshold in seconds (2^-20 s), and in whole ns (values ≤ it).
pub const NATIVE_ZERO_THRESHOLD_S: f64 = 1.0 / 1_048_576.0;
pub const NATIVE_ZERO_THRESHOLD_NS: u64 = 953;
const NATIVE_BUCKETS: usize = (NATIVE_LAST_INDEX - NATIVE_FIRST_INDEX + 1) as usize;

/// Upper bounds of the native buckets in whole ns (rounded down: an integer value is at most
/// 2^(i/8) s exactly when it is at most this), computed once before any cell records.
static NATIVE_BOUNDS_NS: std::sync::LazyLock<[u64; NATIVE_BUCKETS]> =
    std::sync::LazyLock::new(|| {
        let mut bounds = [0u64; NATIVE_BUCKETS];
        for (k, bound) in bounds.iter_mut().enumerate() {
            let index = NATIVE_FIRST_INDEX + k as i32;
            *bound = (2f64.powf(f64::from(index) / 8.0) * 1e9).floor() as u64;
        }
        bounds
    });

/// The native bucket of `value` ns: `None` for the zero bucket, else its position from
/// [`NATIVE_FIRST_INDEX`] (the last one for values beyond it).
#[inline]
pub fn native_bucket_of(value: u64) -> Option<usize> {
    if value <= NATIVE_ZERO_THRESHOLD_NS {
        return None;
    }
    Some(
        NATIVE_BOUNDS_NS
            .partition_point(|&bound| bound < value)
            .min(NATIVE_BUCKETS - 1),
    )
}

/// Interval slots kept: the exporter has three intervals' time to read a finished one.
const SLOTS: usize = 4;

/// A histogram and the maxima of the latest intervals, written by one measuring thread with
/// plain atomic loads and stores, read by the exporter at any time.
#[derive(Debug)]
pub struct ExportCell {
    interval_ns: u64,
    /// Non-cumulative counts; the last one is above every bound (`+Inf`).
    buckets: [AtomicU64; EXPORT_BOUNDS_NS.len() + 1],
    sum_ns: AtomicU64,
    /// The native histogram: counts per bucket from [`NATIVE_FIRST_INDEX`], and the zero
    /// bucket's.
    native: [AtomicU64; NATIVE_BUCKETS],
    native_zero: AtomicU64,
    /// Per slot: 1 + the interval number whose maximum it holds (0: none yet), and that max.
    slot_interval: [AtomicU64; SLOTS],
    slot_max: [AtomicU64; SLOTS],
}

/// A consistent-enough copy of an [`ExportCell`]: counts may be from neighbouring cycles, but
/// `count` is always the sum of `buckets`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportSnapshot {
    pub buckets: Vec<u64>,
    pub count: u64,
    pub sum_ns: u64,
    /// Native bucket counts from [`NATIVE_FIRST_INDEX`], and the zero bucket's count.
    pub native: Vec<u64>,
    pub native_zero: u64,
}

impl ExportCell {
    fn new(interval_ns: u64) -> ExportCell {
        // The bounds are computed here, before the measuring thread records.
        std::sync::LazyLock::force(&NATIVE_BOUNDS_NS);
        ExportCell {
            interval_ns,
            buckets: [const { AtomicU64::new(0) }; EXPORT_BOUNDS_NS.len() + 1],
            sum_ns: AtomicU64::new(0),
            native: [const { AtomicU64::new(0) }; NATIVE_BUCKETS],
            native_zero: AtomicU64::new(0),
            slot_interval: [const { AtomicU64::new(0) }; SLOTS],
            slot_max: [const { AtomicU64::new(0) }; SLOTS],
        }
    }

    pub fn interval_ns(&self) -> u64 {
        self.interval_ns
    }

    #[inline]
    fn record(&self, value: u64, now_ns: u64) {
        let bucket = &self.buckets[bucket_of(value)];
        bucket.store(bucket.load(Relaxed) + 1, Relaxed);
        let native = native_bucket_of(value).map_or(&self.native_zero, |i| &self.native[i]);
        // Release: a reader that sees this count sees the classic bucket's too.
        native.store(native.load(Relaxed) + 1, Release);
        self.sum_ns
            .store(self.sum_ns.load(Relaxed).wrapping_add(value), Relaxed);
        let tag = now_ns / self.interval_ns + 1;
        let slot = (tag as usize) % SLOTS;
        if self.slot_interval[slot].load(Relaxed) != tag {
            self.slot_max[slot].store(value, Relaxed);
            // Release: a reader that sees the new tag sees this interval's first maximum.
            self.slot_interval[slot].store(tag, Release);
        } else if value > self.slot_max[slot].load(Relaxed) {
            self.slot_max[slot].store(value, Relaxed);
        }
    }

    /// The maximum of interval `n` (the one holding CLOCK_MONOTONIC `n × interval`), if it
    /// had samples and is still kept (the last [`SLOTS`] intervals). Read it once the interval
    /// is over.
    pub fn interval_max(&self, n: u64) -> Option<u64> {
        let tag = n + 1;
        let slot = (tag as usize) % SLOTS;
        if self.slot_interval[slot].load(Acquire) != tag {
            return None;
        }
        let max = self.slot_max[slot].load(Relaxed);
        // Overwritten by a later interval while reading: that interval's value is not ours.
        (self.slot_interval[slot].load(Acquire) == tag).then_some(max)
    }

    pub fn snapshot(&self) -> ExportSnapshot {
        // The native counts first: a sample is stored in its classic bucket before its native
        // one, so the classic count read after them is never below theirs (Prometheus refuses
        // a native histogram whose buckets hold more than its count).
        let native_zero = self.native_zero.load(Acquire);
        let native: Vec<u64> = self.native.iter().map(|b| b.load(Acquire)).collect();
        let buckets: Vec<u64> = self.buckets.iter().map(|b| b.load(Relaxed)).collect();
        ExportSnapshot {
            count: buckets.iter().sum(),
            buckets,
            sum_ns: self.sum_ns.load(Relaxed),
            native,
            native_zero,
        }
    }
}

/// The bucket of [`EXPORT_BOUNDS_NS`] that counts `value` (bounds are inclusive, as
/// Prometheus's `le`); [`EXPORT_BOUNDS_NS`]`.len()` for values above the last bound.
#[inline]
pub fn bucket_of(value: u64) -> usize {
    EXPORT_BOUNDS_NS.partition_point(|&bound| bound < value)
}

#[cfg(test)]
mod export_tests {
    use super::*;

    fn cause(cpu: usize, woke_ns: u64, latency_ns: u64, name: &str) -> SpikeCause {
        SpikeCause {
            cpu,
            woke_ns,
            latency_ns,
            cause: name.into(),
        }
    }

    #[test]
    fn an_interval_maximum_gets_the_cause_of_the_spike_with_its_latency_on_its_cpu() {
        let board = LiveBoard::exporting(1_000);
        board.publish_cause(cause(1, 1_500, 300, "rtg-culprit"));
        board.publish_cause(cause(2, 1_600, 300, "irq 36 virtio1-req.0"));
        board.publish_cause(cause(1, 1_700, 250, "gap"));
        assert_eq!(board.cause_of(1, 1, 300).as_deref(), Some("rtg-culprit"));
        assert_eq!(
            board.cause_of(2, 1, 300).as_deref(),
            Some("irq 36 virtio1-req.0")
        );
        // The interval before may take its next one's maximum; any other is not it.
        assert_eq!(board.cause_of(1, 0, 250).as_deref(), Some("gap"));
        assert_eq!(board.cause_of(1, 2, 250), None);
        assert_eq!(board.cause_of(1, 1, 301), None);
        assert_eq!(board.cause_of(3, 1, 300), None);
        // Bounded: the oldest go first.
        for i in 0..CAUSES as u64 {
            board.publish_cause(cause(0, 5_000, i, "x"));
        }
        assert_eq!(board.cause_of(1, 1, 300), None);
        assert_eq!(board.cause_of(0, 5, 0).as_deref(), Some("x"));
    }

    #[test]
    fn bounds_rise_and_each_bucket_is_at_most_a_quarter_wide() {
        assert_eq!(EXPORT_BOUNDS_NS[0], 1_000);
        assert_eq!(EXPORT_BOUNDS_NS[16], 10_000);
        assert_eq!(EXPORT_BOUNDS_NS[111], 9_000_000_000);
        for pair in EXPORT_BOUNDS_NS.windows(2) {
            assert!(pair[0] < pair[1], "{pair:?}");
            assert!(pair[1] * 4 <= pair[0] * 5, "{pair:?}");
        }
    }

    #[test]
    fn values_land_in_the_bucket_whose_bound_is_the_first_at_or_above_them() {
        assert_eq!(bucket_of(0), 0);
        assert_eq!(bucket_of(1_000), 0);
        assert_eq!(bucket_of(1_001), 1);
        assert_eq!(bucket_of(10_000_000_000), 112);
        assert_eq!(bucket_of(10_000_000_001), 113);
        assert_eq!(bucket_of(u64::MAX), 113);
    }

    #[test]
    fn native_buckets_hold_the_values_between_their_powers_of_two() {
        let bound = |i: i32| 2f64.powf(f64::from(i) / 8.0) * 1e9;
        assert_eq!(native_bucket_of(0), None);
        assert_eq!(native_bucket_of(953), None);
        assert_eq!(native_bucket_of(954), Some(0));
        // 1 ms: 2^(-79.7/8) s, in bucket -79 (upper bound 2^(-79/8) s ≈ 1.05 ms).
        let i = native_bucket_of(1_000_000).unwrap() as i32 + NATIVE_FIRST_INDEX;
        assert_eq!(i, -79);
        assert!(bound(i - 1) < 1e6 && 1e6 <= bound(i));
        // Every bound is in its own bucket, one ns more is in the next.
        for k in 0..NATIVE_BUCKETS - 1 {
            let b = NATIVE_BOUNDS_NS[k];
            assert_eq!(native_bucket_of(b), Some(k), "{b}");
            assert_eq!(native_bucket_of(b + 1), Some(k + 1), "{b}");
        }
        assert_eq!(native_bucket_of(u64::MAX), Some(NATIVE_BUCKETS - 1));
        assert!((NATIVE_ZERO_THRESHOLD_S * 1e9).floor() as u64 == NATIVE_ZERO_THRESHOLD_NS);
    }

    #[test]
    fn interval_maxima_are_kept_per_interval_and_forgotten_after_four() {
        let board = LiveBoard::exporting(1_000);
        let cell = board.register("cpu0".into());
        let export = cell.export().unwrap();
        cell.publish_at(5, 0, 100);
        cell.publish_at(9, 0, 900);
        cell.publish_at(3, 0, 950);
        cell.publish_at(4, 0, 1_500);
        assert_eq!(export.interval_max(0), Some(9));
        assert_eq!(export.interval_max(1), Some(4));
        assert_eq!(export.interval_max(2), None);
        // Interval 4 reuses interval 0's slot.
        cell.publish_at(7, 0, 4_100);
        assert_eq!(export.interval_max(0), None);
        // A plain board keeps no causes.
        LiveBoard::default().publish_cause(SpikeCause {
            cpu: 0,
            woke_ns: 0,
            latency_ns: 0,
            cause: "x".into(),
        });
        assert_eq!(LiveBoard::default().cause_of(0, 0, 0), None);
        assert_eq!(export.interval_max(4), Some(7));
        let snap = export.snapshot();
        assert_eq!(snap.count, 5);
        assert_eq!(snap.sum_ns, 28);
        assert_eq!(snap.buckets[0], 5);
        assert_eq!(snap.native_zero, 5);
        assert_eq!(snap.native.iter().sum::<u64>(), 0);
        // A plain board's cells export nothing.
        assert!(LiveBoard::default().register("x".into()).export().is_none());
    }
}
