//! The TSC's rate against the disciplined clock (the paper's "calibrated to 40 ppb" figure).

use rtgauge_core::clock::{counter, now_ns, read_ns};
use rtgauge_result::Series;

/// The TSC's rate against the disciplined clock (CLOCK_MONOTONIC) and against the kernel's
/// raw one (MONOTONIC_RAW), from pairs taken at each poll.
pub struct TscRate {
    first: (u64, u64, u64, u64),
    last: (u64, u64, u64, u64),
    /// Per-window rate against the disciplined clock, Welford's running mean and variance.
    windows: u64,
    mean: f64,
    m2: f64,
    brackets_ns: u64,
    pairs: u64,
}

/// (MONOTONIC, MONOTONIC_RAW, TSC, bracket): the best of three `mono, raw, tsc, mono` reads.
fn tsc_pair() -> (u64, u64, u64, u64) {
    (0..3)
        .map(|_| {
            let a = now_ns();
            let raw = read_ns(libc::CLOCK_MONOTONIC_RAW);
            let tsc = counter::read();
            let b = now_ns();
            (a + (b - a) / 2, raw, tsc, b - a)
        })
        .min_by_key(|p| p.3)
        .unwrap_or_default()
}

fn rate(from: (u64, u64, u64, u64), to: (u64, u64, u64, u64), raw: bool) -> Option<f64> {
    let dt = if raw {
        to.1.checked_sub(from.1)?
    } else {
        to.0.checked_sub(from.0)?
    };
    let dc = to.2.checked_sub(from.2)?;
    (dt > 0).then(|| dc as f64 * 1e9 / dt as f64)
}

impl TscRate {
    pub fn start() -> Option<TscRate> {
        if counter::unavailable().is_some() {
            return None;
        }
        let p = tsc_pair();
        Some(TscRate {
            first: p,
            last: p,
            windows: 0,
            mean: 0.0,
            m2: 0.0,
            brackets_ns: p.3,
            pairs: 1,
        })
    }

    pub fn poll(&mut self) {
        let p = tsc_pair();
        if let Some(r) = rate(self.last, p, false) {
            self.windows += 1;
            let d = r - self.mean;
            self.mean += d / self.windows as f64;
            self.m2 += d * (r - self.mean);
        }
        self.brackets_ns += p.3;
        self.pairs += 1;
        self.last = p;
    }

    /// A `tsc_rate` series without samples: its figures are its metrics.
    pub fn series(self) -> Option<Series> {
        let hz = rate(self.first, self.last, false)?;
        let raw_hz = rate(self.first, self.last, true)?;
        let span = self.last.0.saturating_sub(self.first.0).max(1) as f64;
        let mut s = Series::new("tsc_rate", Default::default())
            .label("reference", "tsc")
            .label("source", "CLOCK_MONOTONIC");
        let m = &mut s.metrics;
        m.insert("tsc_hz".into(), hz);
        m.insert("tsc_raw_hz".into(), raw_hz);
        // Positive: the TSC runs faster against the disciplined clock than the kernel's own
        // calibration says (the discipline slows the clock down).
        m.insert("frequency_ppb".into(), (hz / raw_hz - 1.0) * 1e9);
        m.insert(
            "tsc_error_ppb".into(),
            (self.first.3 + self.last.3) as f64 / span * 1e9,
        );
        m.insert("tsc_span_ns".into(), span);
        if self.windows >= 2 {
            let sd = (self.m2 / (self.windows - 1) as f64).sqrt();
            m.insert("tsc_stability_ppb".into(), sd / hz * 1e9);
            let window = span / self.windows as f64;
            m.insert(
                "tsc_window_error_ppb".into(),
                self.brackets_ns as f64 / self.pairs as f64 / window * 1e9,
            );
        }
        Some(s)
    }
}
