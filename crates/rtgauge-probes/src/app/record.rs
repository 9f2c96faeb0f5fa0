//! `--record app`: every record of the application's points as raw samples (`.rtgr`, exported
//! with `rtgauge export` like any probe's), one recording series per point.

use super::series::sample_value;
use rtgauge_app::layout::OBJECT_VALUES;
use rtgauge_app::{Kind, PointInfo, Record};
use rtgauge_core::probe::{ProbeContext, ProbeError, SampleSink, SeriesDef};

/// What the recording's times and values are.
const TIME_ORIGIN: &str = "ns since the app probe's measurement start (the end of its warm-up); interval: its begin and duration; event: its value; counter: its increment; object: one series per snapshot value (label value=0..3), all at the snapshot's time";

pub struct Recording {
    sink: SampleSink,
    /// The first recording series of each point id and how many it has (an object one per
    /// snapshot value; None: not recorded).
    series_of: Vec<Option<(u16, usize)>>,
    start_ns: u64,
    /// Records of points registered after the recording opened.
    unrecorded: u64,
}

impl Recording {
    /// Opens the run's recording (None when the run is not recorded) with a series for each
    /// enabled point in `points`, and one per value for objects (a sample holds one value).
    pub fn open(
        ctx: &ProbeContext,
        points: &[PointInfo],
        start_ns: u64,
    ) -> Result<Option<Recording>, ProbeError> {
        if ctx.record.is_none() {
            return Ok(None);
        }
        let mut defs = Vec::new();
        let mut series_of = vec![None; points.iter().map(|p| p.id as usize + 1).max().unwrap_or(0)];
        for p in points.iter().filter(|p| p.enabled) {
            let values = if p.kind == Kind::Object {
                OBJECT_VALUES
            } else {
                1
            };
            if defs.len() + values > usize::from(u16::MAX) {
                break;
            }
            series_of[p.id as usize] = Some((defs.len() as u16, values));
            for i in 0..values {
                let def = SeriesDef::new(p.name.as_str()).label("kind", p.kind.name());
                defs.push(if p.kind == Kind::Object {
                    def.label("value", i.to_string())
                } else {
                    def
                });
            }
        }
        let Some(sink) = ctx.recording_sinks(defs, 1, TIME_ORIGIN)?.take(0) else {
            return Ok(None);
        };
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
        let at = r.ts_ns - self.start_ns;
        match self.series_of.get(r.point as usize) {
            Some(&Some((first, 1))) => self.sink.push(first, at, sample_value(r)),
            Some(&Some((first, values))) => {
                for (i, &value) in r.values.iter().take(values).enumerate() {
                    self.sink.push(first + i as u16, at, value);
                }
            }
            // A disabled point.
            Some(None) => {}
            None => self.unrecorded += 1,
        }
    }

    pub fn unrecorded(&self) -> u64 {
        self.unrecorded
    }
}
