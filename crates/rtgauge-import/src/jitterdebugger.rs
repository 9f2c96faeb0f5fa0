//! jitterdebugger: its results JSON (`-f FILE`: per measuring thread a histogram µs → count,
//! count, min, max, avg) and its samples as `jittersamples --format csv` writes them
//! (`thread;seconds.nanoseconds;latency_us` per line). The samples keep time, so their
//! per-interval maxima are real, as for a measured run.

use crate::{
    document, json_histogram, malformed, series_of, shown, to_ns, ImportError, Reported, Shell,
};
use rtgauge_probes::names::CYCLIC;
use rtgauge_result::{RunResult, Series};
use rtgauge_stats::Recorder;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// jitterdebugger's files say nothing of its settings or the machine.
fn shell(duration_ns: Option<u64>) -> Shell {
    Shell {
        tool: "jitterdebugger".into(),
        command_line: vec!["jitterdebugger".into()],
        duration_ns,
        ..Default::default()
    }
}

pub fn parse_results(path: &Path, text: &str) -> Result<RunResult, ImportError> {
    let doc: Value = serde_json::from_str(text)
        .map_err(|e| malformed(path, e.line(), format!("not JSON: {e}")))?;
    let threads = doc
        .get("cpu")
        .and_then(Value::as_object)
        .ok_or_else(|| malformed(path, 1, "no \"cpu\" object: not jitterdebugger results"))?;
    let mut warnings = Vec::new();
    let mut series = Vec::new();
    for (index, t) in threads {
        let line = text
            .find(&format!("\"{index}\""))
            .map(|at| text[..at].matches('\n').count() + 1)
            .unwrap_or(1);
        let field = |name: &str| t.get(name).and_then(Value::as_f64);
        let count = field("count")
            .ok_or_else(|| malformed(path, line, format!("thread {index}: no \"count\"")))?;
        let us = |name: &str| {
            t.get(name)
                .and_then(Value::as_f64)
                .and_then(|v| to_ns(v, 1000))
        };
        let r = Reported {
            buckets: json_histogram(
                path,
                line,
                &format!("thread {index}"),
                t.get("histogram"),
                1000,
            )?,
            count: count as u64,
            min_ns: us("min"),
            max_ns: us("max"),
            mean_ns: us("avg"),
            ..Default::default()
        };
        // jitterdebugger numbers its threads, one per CPU of its affinity in order.
        let what = format!("jitterdebugger thread {index}");
        series.push(series_of(
            "latency",
            &[("cpu", index.clone())],
            &r,
            &mut warnings,
            &what,
        ));
    }
    Ok(document(path, shell(None), CYCLIC, series, warnings))
}

pub fn parse_samples(path: &Path, text: &str) -> Result<RunResult, ImportError> {
    let mut samples: Vec<(String, u64, u64)> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let bad = || {
            malformed(
                path,
                i + 1,
                format!(
                    "`{}` is not thread;seconds.nanoseconds;latency_us",
                    shown(line)
                ),
            )
        };
        let mut f = line.split(';');
        let (Some(thread), Some(ts), Some(value), None) = (f.next(), f.next(), f.next(), f.next())
        else {
            return Err(bad());
        };
        let (sec, nsec) = ts.trim().split_once('.').ok_or_else(bad)?;
        let at = sec
            .parse::<u64>()
            .ok()
            .zip(nsec.parse::<u64>().ok())
            .map(|(s, n)| s * 1_000_000_000 + n)
            .ok_or_else(bad)?;
        let us: u64 = value.trim().parse().map_err(|_| bad())?;
        samples.push((thread.trim().to_string(), at, us * 1000));
    }
    let Some(start) = samples.iter().map(|s| s.1).min() else {
        return Err(malformed(path, 1, "no samples"));
    };
    let end = samples.iter().map(|s| s.1).max().unwrap_or(start);
    let mut recorders: BTreeMap<String, Recorder> = BTreeMap::new();
    for (thread, at, value) in &samples {
        recorders
            .entry(thread.clone())
            .or_default()
            .record(*value, at - start);
    }
    let series: Vec<Series> = recorders
        .into_iter()
        .map(|(thread, r)| Series::new("latency", r.summary()).label("cpu", thread))
        .collect();
    // The timestamps are CLOCK_MONOTONIC: they give the duration, not the date.
    Ok(document(
        path,
        shell(Some(end - start)),
        CYCLIC,
        series,
        Vec::new(),
    ))
}
