//! Live statistics for the progress display, published without locks.
//!
//! Each measuring thread owns one [`LiveCell`] and writes it with relaxed atomic stores (a
//! plain store on x86, no lock, no allocation); a display thread reads the cells. A reader may
//! see a sample count and a sum from neighbouring cycles; the final numbers never come from
//! here.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
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
}

impl LiveBoard {
    /// Registers a cell before its thread starts measuring (never from a hot loop).
    pub fn register(&self, label: String) -> Arc<LiveCell> {
        let cell = Arc::new(LiveCell::new(label));
        if let Ok(mut g) = self.cells.lock() {
            g.1.push(cell.clone());
        }
        cell
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
