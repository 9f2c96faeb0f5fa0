//! A coarse histogram per short time block (100 ms) over a run, in bounded memory.
//!
//! Why: two single runs are compared statistic by statistic against the baseline's own
//! variation (docs/compare.md). Samples are not independent — a stall delays a stretch of
//! consecutive wake-ups — so the variation of "how many samples lie above the baseline's p99"
//! must come from time blocks, and the threshold is only known after the run. Keeping a coarse
//! histogram per block lets the comparison count, block by block, the samples above any
//! threshold later.
//!
//! Buckets: four per power of two (each at most 25 % wide), values 0–3 exactly; a value is
//! counted inside its bucket and read back with linear interpolation. The block's exact
//! maximum is kept beside it.
//!
//! Memory is constant: at most [`BLOCK_SLOTS`] finished blocks holding at most
//! [`ENTRY_CAPACITY`] non-empty buckets between them. When a run outgrows either, neighbouring
//! blocks are merged pairwise and the block width doubles, as [`crate::IntervalMaxima`] does.
//! Recording is an increment into the open block's dense array; closing a block copies its
//! non-empty buckets (a few dozen) into the preallocated store.

use serde::{Deserialize, Serialize};

/// Width of a block at the start of a run.
pub const BLOCK_NS: u64 = 100_000_000;
/// Finished blocks kept before neighbours are merged (102.4 s at 100 ms).
pub const BLOCK_SLOTS: usize = 1024;
/// Non-empty buckets kept over all finished blocks before neighbours are merged.
pub const ENTRY_CAPACITY: usize = 32 * 1024;
/// Buckets per power of two.
pub const BUCKETS_PER_OCTAVE: u32 = 4;
/// Values at or above this are counted in the last bucket (the histogram's own limit).
const VALUE_LIMIT: u64 = crate::HISTOGRAM_MAX_NS;
/// Number of buckets: values 0..3, then four per octave up to 2^40.
pub const BUCKETS: usize = (41 * BUCKETS_PER_OCTAVE) as usize;

/// The bucket a value falls in.
#[inline]
pub fn bucket_of(value: u64) -> usize {
    let v = value.min(VALUE_LIMIT - 1);
    if v < 4 {
        return v as usize;
    }
    let octave = 63 - v.leading_zeros();
    let sub = (v >> (octave - 2)) & 3;
    (octave * BUCKETS_PER_OCTAVE) as usize + sub as usize
}

/// The values `[low, high)` of a bucket. Buckets 4–7 are never used.
pub fn bucket_range(bucket: usize) -> (u64, u64) {
    if bucket < 4 {
        return (bucket as u64, bucket as u64 + 1);
    }
    let octave = bucket as u32 / BUCKETS_PER_OCTAVE;
    let sub = bucket as u64 % 4;
    let step = 1u64 << (octave.max(2) - 2);
    ((4 + sub) * step, (5 + sub) * step)
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Finished {
    /// First of its entries in `entries`.
    first: u32,
    len: u32,
    count: u64,
    /// `None` for a block without samples.
    max: Option<u64>,
}

/// Per-block coarse histograms of one series, recorded as samples arrive.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockHistograms {
    block_ns: u64,
    finished: Vec<Finished>,
    /// `(bucket, count)` of every finished block, block after block.
    entries: Vec<(u16, u32)>,
    /// Index of the open block, in blocks of `block_ns` from the start.
    open_index: u64,
    open: Box<[u32]>,
    open_count: u64,
    open_max: Option<u64>,
    /// Range of buckets touched in the open block, so closing it scans only those.
    open_low: usize,
    open_high: usize,
    /// Room for one merged block while folding, so a fold allocates nothing.
    scratch: Vec<(u16, u32)>,
}

impl Default for BlockHistograms {
    fn default() -> Self {
        Self::new(BLOCK_NS)
    }
}

impl BlockHistograms {
    pub fn new(block_ns: u64) -> Self {
        BlockHistograms {
            block_ns: block_ns.max(1),
            finished: Vec::with_capacity(BLOCK_SLOTS),
            entries: Vec::with_capacity(ENTRY_CAPACITY),
            open_index: 0,
            open: vec![0; BUCKETS].into_boxed_slice(),
            open_count: 0,
            open_max: None,
            open_low: BUCKETS,
            open_high: 0,
            scratch: Vec::with_capacity(BUCKETS),
        }
    }

    pub fn block_ns(&self) -> u64 {
        self.block_ns
    }

    /// Records `value_ns` measured `at_ns` after the start. Samples arrive in time order per
    /// thread; one that arrives late for its block is counted in the open one.
    #[inline]
    pub fn record(&mut self, value_ns: u64, at_ns: u64) {
        self.record_n(value_ns, 1, at_ns);
    }

    #[inline]
    fn record_n(&mut self, value_ns: u64, n: u32, at_ns: u64) {
        let index = at_ns / self.block_ns;
        if index > self.open_index {
            self.advance(at_ns);
        }
        let b = bucket_of(value_ns);
        self.open[b] = self.open[b].saturating_add(n);
        self.open_low = self.open_low.min(b);
        self.open_high = self.open_high.max(b + 1);
        self.open_count += u64::from(n);
        if self.open_max.is_none_or(|m| value_ns > m) {
            self.open_max = Some(value_ns);
        }
    }

    /// Closes the open block and opens the one holding `at_ns`, merging neighbours first when
    /// the store is full. Rare: once per block.
    #[cold]
    fn advance(&mut self, at_ns: u64) {
        self.close_open();
        let mut index = at_ns / self.block_ns;
        while index as usize >= BLOCK_SLOTS || self.entries.len() + BUCKETS > ENTRY_CAPACITY {
            self.fold();
            index = at_ns / self.block_ns;
        }
        // A merge may have joined the block of `at_ns` with the last finished one: reopen it.
        if (index as usize) < self.finished.len() {
            self.reopen_last();
        }
        self.open_index = index;
    }

    /// Moves the open block into the store, with empty blocks for any gap before it.
    fn close_open(&mut self) {
        while (self.finished.len() as u64) < self.open_index {
            self.finished.push(Finished {
                first: self.entries.len() as u32,
                len: 0,
                count: 0,
                max: None,
            });
        }
        let first = self.entries.len() as u32;
        for b in self.open_low..self.open_high {
            let c = std::mem::take(&mut self.open[b]);
            if c > 0 {
                self.entries.push((b as u16, c));
            }
        }
        self.finished.push(Finished {
            first,
            len: self.entries.len() as u32 - first,
            count: self.open_count,
            max: self.open_max,
        });
        self.open_count = 0;
        self.open_max = None;
        self.open_low = BUCKETS;
        self.open_high = 0;
        self.open_index = self.finished.len() as u64;
    }

    /// Takes the last finished block back into the open one.
    fn reopen_last(&mut self) {
        let last = self.finished.pop().expect("a finished block to reopen");
        for i in last.first..last.first + last.len {
            let (b, c) = self.entries[i as usize];
            let b = b as usize;
            self.open[b] = self.open[b].saturating_add(c);
            self.open_low = self.open_low.min(b);
            self.open_high = self.open_high.max(b + 1);
        }
        self.entries.truncate(last.first as usize);
        self.open_count += last.count;
        self.open_max = max_of(self.open_max, last.max);
    }

    /// Halves the resolution in place: finished block i becomes blocks 2i and 2i+1 merged.
    fn fold(&mut self) {
        let mut merged = std::mem::take(&mut self.scratch);
        let mut write = 0usize;
        let pairs = self.finished.len().div_ceil(2);
        for pair in 0..pairs {
            let a = self.finished[2 * pair];
            let b = self.finished.get(2 * pair + 1).copied();
            merged.clear();
            merge_sorted(
                &self.entries[a.first as usize..(a.first + a.len) as usize],
                b.map_or(&[][..], |b| {
                    &self.entries[b.first as usize..(b.first + b.len) as usize]
                }),
                &mut merged,
            );
            // The merged block never holds more entries than the two it replaces, and it is
            // written at or before their start: copying in place is safe.
            let first = write;
            for (i, e) in merged.iter().enumerate() {
                self.entries[first + i] = *e;
            }
            write += merged.len();
            self.finished[pair] = Finished {
                first: first as u32,
                len: merged.len() as u32,
                count: a.count + b.map_or(0, |b| b.count),
                max: max_of(a.max, b.and_then(|b| b.max)),
            };
        }
        merged.clear();
        self.scratch = merged;
        self.finished.truncate(pairs);
        self.entries.truncate(write);
        self.block_ns *= 2;
        self.open_index /= 2;
    }

    /// Combines another thread's blocks measured from the same start (after measuring).
    pub fn merge(&mut self, other: &BlockHistograms) {
        let mut a = self.to_serialized();
        let b = other.to_serialized();
        a.merge(&b);
        *self = BlockHistograms::from_serialized(&a, 0);
    }

    /// Rebuilds the blocks of a stored summary, shifted by `start_ns` (its start in a longer
    /// measurement), into a fresh recorder's blocks.
    pub fn from_serialized(s: &SerializedBlocks, start_ns: u64) -> BlockHistograms {
        let mut h = BlockHistograms::new(s.block_ns);
        h.append(s, start_ns);
        h
    }

    /// Adds the blocks of a stored summary that started `start_ns` after this one.
    pub fn append(&mut self, s: &SerializedBlocks, start_ns: u64) {
        for (i, block) in s.counts.iter().enumerate() {
            let at = start_ns + i as u64 * s.block_ns;
            for pair in block.chunks_exact(2) {
                let (bucket, count) = (pair[0] as usize, pair[1]);
                if bucket < BUCKETS && count > 0 {
                    let (low, _) = bucket_range(bucket);
                    self.record_n(low, count.min(u64::from(u32::MAX)) as u32, at);
                }
            }
            // The exact maximum, which the bucket's low edge does not keep.
            if let Some(Some(max)) = s.max_ns.get(i) {
                self.record_n(*max, 0, at);
            }
        }
    }

    pub fn to_serialized(&self) -> SerializedBlocks {
        let mut s = SerializedBlocks {
            block_ns: self.block_ns,
            buckets_per_octave: BUCKETS_PER_OCTAVE,
            counts: Vec::with_capacity(self.finished.len() + 1),
            max_ns: Vec::with_capacity(self.finished.len() + 1),
        };
        for f in &self.finished {
            let mut pairs = Vec::with_capacity(2 * f.len as usize);
            for &(b, c) in &self.entries[f.first as usize..(f.first + f.len) as usize] {
                pairs.extend([u64::from(b), u64::from(c)]);
            }
            s.counts.push(pairs);
            s.max_ns.push(f.max);
        }
        if self.open_count > 0 || self.open_max.is_some() {
            while (s.counts.len() as u64) < self.open_index {
                s.counts.push(Vec::new());
                s.max_ns.push(None);
            }
            let mut pairs = Vec::new();
            for b in self.open_low..self.open_high {
                if self.open[b] > 0 {
                    pairs.extend([b as u64, u64::from(self.open[b])]);
                }
            }
            s.counts.push(pairs);
            s.max_ns.push(self.open_max);
        }
        s
    }
}

fn max_of(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

/// Merges two bucket lists sorted by bucket, adding the counts of equal buckets.
fn merge_sorted(a: &[(u16, u32)], b: &[(u16, u32)], out: &mut Vec<(u16, u32)>) {
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) if x.0 == y.0 => {
                out.push((x.0, x.1.saturating_add(y.1)));
                i += 1;
                j += 1;
            }
            (Some(x), Some(y)) if x.0 < y.0 => {
                out.push(*x);
                i += 1;
            }
            (Some(x), None) => {
                out.push(*x);
                i += 1;
            }
            (_, Some(y)) => {
                out.push(*y);
                j += 1;
            }
            (None, None) => unreachable!(),
        }
    }
}

/// Per-block histograms as stored in a result document.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SerializedBlocks {
    /// Width of each block; blocks follow each other from the start of measurement.
    pub block_ns: u64,
    /// Buckets per power of two: bucket b ≥ 8 holds the values
    /// `[(4 + b % 4) · 2^(b / 4 − 2), (5 + b % 4) · 2^(b / 4 − 2))`; buckets 0–3 the values 0–3.
    pub buckets_per_octave: u32,
    /// Per block, its non-empty buckets as `bucket, count` pairs in increasing bucket order.
    pub counts: Vec<Vec<u64>>,
    /// Per block, its exact maximum; null for a block without samples.
    pub max_ns: Vec<Option<u64>>,
}

impl SerializedBlocks {
    pub fn len(&self) -> usize {
        self.counts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    /// Samples in block `i`.
    pub fn count(&self, i: usize) -> u64 {
        self.counts[i].chunks_exact(2).map(|p| p[1]).sum()
    }

    /// Samples of block `i` above `threshold` (values spread evenly inside a bucket; never more
    /// than the block's maximum allows).
    pub fn count_above(&self, i: usize, threshold: f64) -> f64 {
        self.count_above_split(i, threshold, None)
    }

    /// As [`Self::count_above`], with the share of the threshold's own bucket that lies above
    /// it given (`inner`, e.g. read from the run's exact histogram) instead of interpolated.
    pub fn count_above_split(&self, i: usize, threshold: f64, inner: Option<f64>) -> f64 {
        if self.max_ns[i].is_some_and(|m| (m as f64) <= threshold) {
            return 0.0;
        }
        self.counts[i]
            .chunks_exact(2)
            .map(|p| {
                let (low, high) = bucket_range(p[0] as usize);
                let (low, high) = (low as f64, high as f64);
                let n = p[1] as f64;
                if threshold < low {
                    n
                } else if threshold >= high {
                    0.0
                } else {
                    n * inner.unwrap_or((high - threshold) / (high - low))
                }
            })
            .sum()
    }

    /// Combines blocks measured over the same time by another thread.
    pub fn merge(&mut self, other: &SerializedBlocks) {
        if other.is_empty() {
            return;
        }
        if self.is_empty() {
            *self = other.clone();
            return;
        }
        let mut other = other.clone();
        while other.block_ns < self.block_ns {
            other.fold();
        }
        while self.block_ns < other.block_ns {
            self.fold();
        }
        let len = self.len().max(other.len());
        self.counts.resize(len, Vec::new());
        self.max_ns.resize(len, None);
        for i in 0..other.len() {
            self.counts[i] = merge_pairs(&self.counts[i], &other.counts[i]);
            self.max_ns[i] = max_of(self.max_ns[i], other.max_ns[i]);
        }
    }

    /// Blocks of twice the width.
    pub fn fold(&mut self) {
        let pairs = self.len().div_ceil(2);
        let mut counts = Vec::with_capacity(pairs);
        let mut max_ns = Vec::with_capacity(pairs);
        for p in 0..pairs {
            let empty = Vec::new();
            let b = self.counts.get(2 * p + 1).unwrap_or(&empty);
            counts.push(merge_pairs(&self.counts[2 * p], b));
            max_ns.push(max_of(
                self.max_ns[2 * p],
                self.max_ns.get(2 * p + 1).copied().flatten(),
            ));
        }
        self.counts = counts;
        self.max_ns = max_ns;
        self.block_ns = self.block_ns.saturating_mul(2);
    }
}

fn merge_pairs(a: &[u64], b: &[u64]) -> Vec<u64> {
    let to = |v: &[u64]| -> Vec<(u16, u32)> {
        v.chunks_exact(2)
            .map(|p| {
                (
                    p[0].min(u64::from(u16::MAX)) as u16,
                    p[1].min(u64::from(u32::MAX)) as u32,
                )
            })
            .collect()
    };
    let mut out = Vec::new();
    merge_sorted(&to(a), &to(b), &mut out);
    out.into_iter()
        .flat_map(|(b, c)| [u64::from(b), u64::from(c)])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn buckets_cover_every_value_once_and_in_order() {
        let mut last = 0;
        for v in (0..5000u64).chain([1 << 20, (1 << 20) + 1, (1 << 39) + 5, u64::MAX]) {
            let b = bucket_of(v);
            assert!(b < BUCKETS);
            assert!(b >= last || v > 5000, "bucket order at {v}");
            last = b;
            let (low, high) = bucket_range(b);
            let clamped = v.min(VALUE_LIMIT - 1);
            assert!(
                low <= clamped && clamped < high,
                "{v} in bucket {b} [{low}, {high})"
            );
            assert!(
                high - low <= 1 || (high - low) as f64 / low as f64 <= 0.25 + 1e-9,
                "bucket {b} is {low}..{high}"
            );
        }
    }

    #[test]
    fn samples_land_in_their_time_block_with_gaps_kept() {
        let mut h = BlockHistograms::new(100);
        h.record(10, 0);
        h.record(20, 50);
        h.record(1000, 350);
        let s = h.to_serialized();
        assert_eq!(s.len(), 4);
        assert_eq!(s.count(0), 2);
        assert_eq!(s.count(1), 0);
        assert_eq!(s.max_ns, vec![Some(20), None, None, Some(1000)]);
        assert_eq!(s.count_above(3, 500.0), 1.0);
        assert!(s.count_above(3, 999.0) < 1.0);
        assert_eq!(s.count_above(0, 20.0), 0.0);
        assert_eq!(s.count_above(0, 5.0), 2.0);
    }

    proptest! {
        /// However long the run, memory stays bounded and every sample is counted once, in a
        /// block that covers its time; counts above a threshold stay within one bucket of the
        /// truth.
        #[test]
        fn long_runs_fold_and_lose_no_sample(
            samples in prop::collection::vec((1u64..10_000_000, 1u64..400), 1..4000),
        ) {
            let mut h = BlockHistograms::new(10);
            let mut at = 0u64;
            let mut times = Vec::new();
            for &(value, step) in &samples {
                at += step;
                h.record(value, at);
                times.push(at);
            }
            prop_assert!(h.finished.len() <= BLOCK_SLOTS);
            prop_assert!(h.entries.len() <= ENTRY_CAPACITY);
            let s = h.to_serialized();
            let total: u64 = (0..s.len()).map(|i| s.count(i)).sum();
            prop_assert_eq!(total, samples.len() as u64);
            // Each block's maximum is the largest sample of its time span.
            for (i, max) in s.max_ns.iter().enumerate() {
                let (from, to) = (i as u64 * s.block_ns, (i as u64 + 1) * s.block_ns);
                let expected = samples.iter().zip(&times)
                    .filter(|(_, &t)| t >= from && t < to)
                    .map(|(&(v, _), _)| v)
                    .max();
                prop_assert_eq!(*max, expected);
            }
            let threshold = samples[samples.len() / 2].0 as f64;
            let above: f64 = (0..s.len()).map(|i| s.count_above(i, threshold)).sum();
            let exact = samples.iter().filter(|(v, _)| (*v as f64) > threshold).count() as f64;
            let near = samples.iter().filter(|(v, _)| {
                let (lo, hi) = bucket_range(bucket_of(threshold as u64));
                *v >= lo && *v < hi
            }).count() as f64;
            prop_assert!((above - exact).abs() <= near + 1e-6, "{above} vs {exact} ± {near}");
        }

        #[test]
        fn merged_threads_count_both_and_serialized_blocks_rebuild(
            a in prop::collection::vec(1u64..1_000_000, 0..500),
            b in prop::collection::vec(1u64..1_000_000, 0..500),
        ) {
            let (mut x, mut y) = (BlockHistograms::new(1000), BlockHistograms::new(1000));
            for (i, &v) in a.iter().enumerate() { x.record(v, i as u64 * 37); }
            for (i, &v) in b.iter().enumerate() { y.record(v, i as u64 * 53); }
            x.merge(&y);
            let s = x.to_serialized();
            let total: u64 = (0..s.len()).map(|i| s.count(i)).sum();
            prop_assert_eq!(total, (a.len() + b.len()) as u64);
            let again = BlockHistograms::from_serialized(&s, 0).to_serialized();
            prop_assert_eq!(again, s);
        }
    }
}
