//! hwlatdetect's text output: the parameters (`Latency threshold: 10us`, `test duration 60
//! seconds`), `Max Latency: 19us` (or `Below threshold`), `Samples recorded: N`, and with
//! the tracer detector one line per sample above the threshold (`ts: 1519068452.160767591,
//! inner:15, outer:16` with `, cpu:0` on newer versions). Only samples above the threshold
//! exist: the series is the distribution of those, its count the samples recorded.

use crate::{document, malformed, series_of, shown, ImportError, Reported, Shell};
use rtgauge_result::{RunResult, Warning};
use std::path::Path;

fn us(text: &str) -> Option<u64> {
    text.trim().trim_end_matches("us").trim().parse().ok()
}

pub fn parse(path: &Path, text: &str) -> Result<RunResult, ImportError> {
    let mut shell = Shell {
        tool: "hwlatdetect".into(),
        ..Default::default()
    };
    let mut max = None;
    let mut below = false;
    let mut recorded = None;
    let mut samples: Vec<u64> = Vec::new();
    let mut threshold = None;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if let Some(d) = line.strip_prefix("hwlatdetect:  test duration") {
            let secs: Option<u64> = d.split_whitespace().next().and_then(|s| s.parse().ok());
            shell.duration_ns = secs.map(|s| s.saturating_mul(1_000_000_000));
        } else if let Some(t) = line.strip_prefix("Latency threshold:") {
            threshold = us(t);
        } else if let Some(m) = line.strip_prefix("Max Latency:") {
            if m.contains("Below threshold") {
                below = true;
            } else {
                max = Some(us(m).ok_or_else(|| {
                    malformed(
                        path,
                        i + 1,
                        format!("`{}` is not a latency in µs", shown(m.trim())),
                    )
                })?);
            }
        } else if let Some(n) = line.strip_prefix("Samples recorded:") {
            recorded = Some(n.trim().parse::<u64>().map_err(|_| {
                malformed(
                    path,
                    i + 1,
                    format!("`{}` is not a number of samples", shown(n.trim())),
                )
            })?);
        } else if line.starts_with("ts:") {
            let field = |name: &str| {
                line.split(',')
                    .find_map(|f| f.trim().strip_prefix(name).map(|v| v.trim().to_string()))
            };
            let (Some(inner), Some(outer)) = (field("inner:"), field("outer:")) else {
                return Err(malformed(
                    path,
                    i + 1,
                    "a sample line without inner: and outer:",
                ));
            };
            let (Some(inner), Some(outer)) = (us(&inner), us(&outer)) else {
                return Err(malformed(
                    path,
                    i + 1,
                    "inner: and outer: are not latencies in µs",
                ));
            };
            samples.push(inner.max(outer));
        }
    }
    if max.is_none() && !below && recorded.is_none() {
        return Err(malformed(
            path,
            1,
            "no `Max Latency:` or `Samples recorded:` line: not hwlatdetect output",
        ));
    }
    let count = recorded.unwrap_or(samples.len() as u64);
    let mut warnings = Vec::new();
    let complete = !samples.is_empty() && samples.len() as u64 == count;
    let r = Reported {
        count,
        buckets: if complete {
            samples
                .iter()
                .map(|&s| (s.saturating_mul(1000), 1))
                .collect()
        } else {
            Vec::new()
        },
        min_ns: complete
            .then(|| samples.iter().min().map(|m| m.saturating_mul(1000)))
            .flatten(),
        max_ns: max.map(|m| m.saturating_mul(1000)),
        mean_ns: complete.then(|| {
            let sum: f64 = samples.iter().map(|&s| s as f64).sum();
            (sum * 1000.0 / samples.len() as f64).round() as u64
        }),
        ..Default::default()
    };
    let series = vec![series_of("latency", &[], &r, &mut warnings, "hwlatdetect")];
    if let Some(t) = threshold {
        shell.params.insert("threshold".into(), format!("{t}us"));
        warnings.push(Warning::new(
            "imported_threshold",
            format!("hwlatdetect records only gaps above its {t} µs threshold: these figures describe those gaps, not every sample"),
        ));
    }
    Ok(document(path, shell, "hwlat", series, warnings))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lines hwlatdetect prints (its `info` calls and one line per sample of the tracer
    /// detector), not a recorded run: hwlatdetect could not run where this was written.
    const PRINTED: &str = "hwlatdetect:  test duration 60 seconds
   detector: tracer
   parameters:
        Latency threshold: 10us
        Sample window:     1000000us
        Sample width:      500000us
     Non-sampling period:  500000us
        Output File:       None

Starting test
test finished
Max Latency: 19us
Samples recorded: 3
Samples exceeding threshold: 3
ts: 1519068452.160767591, inner:15, outer:16
ts: 1519068453.160767591, inner:19, outer:12, cpu:1
ts: 1519068454.160767591, inner:11, outer:11, cpu:0
";

    #[test]
    fn samples_above_the_threshold_make_the_series() {
        let r = parse(Path::new("hwlat.txt"), PRINTED).unwrap();
        let s = &r.runs[0].series[0];
        assert_eq!(s.stats.count, 3);
        assert_eq!(s.stats.max_ns, Some(19_000));
        assert_eq!(s.stats.min_ns, Some(11_000));
        assert_eq!(s.stats.mean_ns, Some(15_333));
        assert_eq!(r.runs[0].measured_ns, 60_000_000_000);
        assert!(r.warnings.iter().any(|w| w.code == "imported_threshold"));
        let below = "Max Latency: Below threshold\nSamples recorded: 0\n";
        let r = parse(Path::new("hwlat.txt"), below).unwrap();
        assert_eq!(r.runs[0].series[0].stats.count, 0);
    }
}
