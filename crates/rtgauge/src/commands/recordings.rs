//! Raw-sample recordings beside a result, decimated for the HTML report's time series.

use rtgauge_report::{Decimator, RecordingPlot};
use rtgauge_result::{RunKey, RunResult, SeriesKey};
use std::path::Path;

/// Most points per plotted series: min/max envelopes keep every spike visible while a
/// browser stays fluid with millions of underlying samples.
const POINTS_PER_SERIES: usize = 4000;

/// One plot per recorded series of `result`, whose document is at `result_path`. A recording
/// that cannot be read is reported on stderr and left out; the report is still written.
pub fn plots(result: &RunResult, result_path: &Path) -> Vec<RecordingPlot> {
    let mut plots = Vec::new();
    for info in &result.recordings {
        let path = result_path.with_file_name(&info.path);
        match read(&path) {
            Ok(mut p) => plots.append(&mut p),
            Err(e) => eprintln!("warning: recording left out of the report: {e}"),
        }
    }
    plots
}

fn read(path: &Path) -> Result<Vec<RecordingPlot>, rtgauge_record::RecordError> {
    let recording = rtgauge_record::Recording::open(path)?;
    let h = &recording.header;
    let count = |id: u16, dropped: bool| {
        recording
            .trailer
            .iter()
            .flat_map(|t| &t.series)
            .find(|c| c.id == id)
            .map(|c| if dropped { c.dropped } else { c.written })
            .unwrap_or(0)
    };
    let mut decimators: Vec<Decimator> = h
        .series
        .iter()
        .map(|s| {
            let key = SeriesKey {
                run: RunKey::from_title(&h.probe, &h.mode, &h.load),
                name: s.name.clone(),
                labels: s.labels.clone(),
            };
            Decimator::new(key, count(s.id, false), POINTS_PER_SERIES)
        })
        .collect();
    let mut samples = recording.samples()?;
    let mut batch = Vec::with_capacity(1 << 16);
    loop {
        samples.next_batch(&mut batch, 1 << 16)?;
        if batch.is_empty() {
            break;
        }
        for s in &batch {
            decimators[s.series as usize].push(s.at_ns, s.value_ns);
        }
    }
    Ok(decimators
        .into_iter()
        .zip(&h.series)
        .map(|(d, s)| d.finish(count(s.id, true)))
        .collect())
}
