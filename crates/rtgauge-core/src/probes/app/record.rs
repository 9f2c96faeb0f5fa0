//! `--record app`: every record of the application's points as raw samples (`.rtgr`, exported
//! with `rtgauge export` like any probe's), one recording series per point.

use super::series::sample_value;
use crate::probe::{ProbeContext, ProbeError, SampleSink, SeriesDef};
use rtgauge_app::{Kind, PointInfo, Record};

/// What the recording's times and values are.
const TIME_ORIGIN: &str = "ns since the app probe's measurement start (the end of its warm-up); interval: its begin and duration; event: its value; counter: its increment";

pub struct Recording {
    sink: SampleSink,
    /// Recording series of each point id (None: not recorded).
    series_of: Vec<Option<u16>>,
    start_ns: u64,
    /// Records of points registered after the recording opened.
    unrecorded: u64,
}

impl Recording {
    /// Opens the run's recording (None when the run is not recorded) with a series for each
    /// enabled point in `points` but objects (a snapshot is four values, a sample one).
    pub fn open(
        ctx: &ProbeContext,
        points: &[PointInfo],
        start_ns: u64,
    ) -> Result<Option<Recording>, ProbeError> {
        if ctx.record.is_none() {
            return Ok(None);
        }
        let recorded: Vec<&PointInfo> = points
            .iter()
            .filter(|p| p.enabled && p.kind != Kind::Object)
            .take(usize::from(u16::MAX))
            .collect();
        let defs = recorded
            .iter()
            .map(|p| SeriesDef::new(p.name.as_str()).label("kind", p.kind.name()))
            .collect();
        let Some(sink) = ctx.recording_sinks(defs, 1, TIME_ORIGIN)?.take(0) else {
            return Ok(None);
        };
        let mut series_of = vec![None; points.iter().map(|p| p.id as usize + 1).max().unwrap_or(0)];
        for (series, p) in recorded.iter().enumerate() {
            series_of[p.id as usize] = Some(series as u16);
        }
        Ok(Some(Recording {
            sink,
            series_of,
            start_ns,
            unrecorded: 0,
        }))
    }

    /// Records one record of the measurement (warm-up records are not recorded).
    pub fn push(&mut self, r: &Record) {
        if r.ts_ns < self.start_ns {
            return;
        }
        match self.series_of.get(r.point as usize) {
            Some(Some(series)) => {
                let at = r.ts_ns - self.start_ns;
                self.sink.push(*series, at, sample_value(r))
            }
            // An object: not recorded, by design (see `open`).
            Some(None) => {}
            None => self.unrecorded += 1,
        }
    }

    pub fn unrecorded(&self) -> u64 {
        self.unrecorded
    }
}
