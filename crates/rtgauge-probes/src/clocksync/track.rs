//! What a reference's polls add up to: the |offset| distribution and its signed figures,
//! path delay, reading width, frequency, and the lock, state and source counters.

use super::{Limit, Reading};
use rtgauge_result::Series;
use rtgauge_stats::Recorder;
use std::collections::BTreeMap;

/// Running signed figures (no storage grows with the run).
#[derive(Debug, Clone, Copy, Default)]
pub struct Signed {
    n: u64,
    sum: f64,
    min: f64,
    max: f64,
    last: f64,
}

impl Signed {
    pub fn add(&mut self, v: f64) {
        if self.n == 0 {
            self.min = v;
            self.max = v;
        }
        self.n += 1;
        self.sum += v;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        self.last = v;
    }

    fn into_metrics(self, prefix: &str, unit: &str, m: &mut BTreeMap<String, f64>) {
        if self.n == 0 {
            return;
        }
        m.insert(format!("{prefix}_mean_{unit}"), self.sum / self.n as f64);
        m.insert(format!("{prefix}_min_{unit}"), self.min);
        m.insert(format!("{prefix}_max_{unit}"), self.max);
        m.insert(format!("{prefix}_last_{unit}"), self.last);
    }
}

/// What a reference's polls add up to.
pub struct Track {
    pub offset: Recorder,
    pub delay: Recorder,
    pub width: Recorder,
    pub signed: Signed,
    pub frequency: Signed,
    pub polls: u64,
    pub failed: u64,
    pub first_failure: Option<String>,
    pub lock_losses: u64,
    pub state_changes: u64,
    pub source_losses: u64,
    pub over_limit: u64,
    pub locked_polls: u64,
    pub was_locked: Option<bool>,
    pub state: Option<String>,
    pub sources: BTreeMap<String, bool>,
    pub figures: BTreeMap<&'static str, f64>,
}

impl Track {
    pub fn new(interval_ns: u64) -> Track {
        Track {
            offset: Recorder::new(interval_ns),
            delay: Recorder::new(interval_ns),
            width: Recorder::new(interval_ns),
            signed: Signed::default(),
            frequency: Signed::default(),
            polls: 0,
            failed: 0,
            first_failure: None,
            lock_losses: 0,
            state_changes: 0,
            source_losses: 0,
            over_limit: 0,
            locked_polls: 0,
            was_locked: None,
            state: None,
            sources: BTreeMap::new(),
            figures: BTreeMap::new(),
        }
    }

    /// One poll's answer (or why there was none) at `at_ns` into the run.
    pub fn add(&mut self, answer: Result<Reading, String>, at_ns: u64, limit: Option<Limit>) {
        self.polls += 1;
        let (locked, state) = match answer {
            Ok(r) => {
                self.record(&r, at_ns, limit);
                (r.locked, r.state)
            }
            Err(reason) => {
                self.failed += 1;
                self.first_failure.get_or_insert(reason);
                (false, "no answer".to_string())
            }
        };
        self.locked_polls += u64::from(locked);
        if self.was_locked == Some(true) && !locked {
            self.lock_losses += 1;
        }
        self.was_locked = Some(locked);
        if self.state.as_ref().is_some_and(|s| *s != state) {
            self.state_changes += 1;
        }
        self.state = Some(state);
    }

    fn record(&mut self, r: &Reading, at_ns: u64, limit: Option<Limit>) {
        if let Some(o) = r.offset_ns {
            self.offset.record(o.unsigned_abs(), at_ns);
            self.signed.add(o as f64);
            self.over_limit += u64::from(limit.is_some_and(|l| o.unsigned_abs() > l.ns));
        }
        if let Some(d) = r.path_delay_ns {
            self.delay.record(d.unsigned_abs(), at_ns);
        }
        if let Some(w) = r.width_ns {
            self.width.record(w, at_ns);
        }
        if let Some(f) = r.frequency_ppb {
            self.frequency.add(f);
        }
        for (name, answers) in &r.sources {
            if self.sources.insert(name.clone(), *answers) == Some(true) && !answers {
                self.source_losses += 1;
            }
        }
        self.figures.extend(r.figures.iter().copied());
    }

    /// The reference's series: `offset` always (with its counters), `path_delay` and `width`
    /// where the reference gives them.
    pub fn series(self, name: &str, source: &str) -> Vec<Series> {
        let labelled = |s: Series| s.label("reference", name).label("source", source);
        let mut offset = labelled(Series::new("offset", self.offset.summary()))
            .counter("polls", self.polls)
            .counter("failed_polls", self.failed)
            .counter("lock_losses", self.lock_losses)
            .counter("state_changes", self.state_changes)
            .counter("source_losses", self.source_losses)
            .counter("over_limit", self.over_limit)
            .counter("locked_polls", self.locked_polls);
        self.signed
            .into_metrics("offset", "ns", &mut offset.metrics);
        self.frequency
            .into_metrics("frequency", "ppb", &mut offset.metrics);
        for (k, v) in &self.figures {
            offset.metrics.insert(k.to_string(), *v);
        }
        let mut out = vec![offset];
        if self.delay.count() > 0 {
            out.push(labelled(Series::new("path_delay", self.delay.summary())));
        }
        if self.width.count() > 0 {
            out.push(labelled(Series::new("width", self.width.summary())));
        }
        out
    }
}
