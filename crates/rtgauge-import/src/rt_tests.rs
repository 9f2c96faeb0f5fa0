//! An rtgauge result as rt-tests JSON (`rtgauge show RESULT --format rt-tests`): the fields
//! cyclictest `--json` writes, so scripts that read cyclictest JSON read rtgauge results
//! unchanged.
//!
//! Every series with samples becomes one entry of `thread`, numbered in the order of the
//! result; of a run with `latency` rows only those (the cyclic probe's period and jitter
//! rows would read as more threads). Probes that time a sender waking a receiver (`response`) take the layout of
//! ptsematest and pmqtest (`sender` with `samples`, `receiver` with `min`, `avg`, `max`);
//! every other probe the layout of cyclictest (`cycles`, `min`, `avg`, `max`, `cpu`,
//! `node`, `histogram` in 1 µs buckets). As cyclictest, `min` and `max` are whole µs
//! (truncated) and `avg` has two decimals; each entry's `rtgauge` object adds what the
//! rt-tests layout cannot hold: the exact figures in ns and the series' probe, name and
//! labels and its run's mode and load, so `rtgauge import` of the file gives back count,
//! min, max and mean exactly.
//! `return_code` is 1 when the run did not complete or a probe failed, else 0.

use rtgauge_probes::names::RESPONSE;
use rtgauge_result::{ProbeStatus, RunResult, RunStatus, Series};
use serde_json::{json, Map, Value};

/// The probes whose series take the sender/receiver layout.
const PAIRED: &[&str] = &[RESPONSE];

fn rfc2822(ns: u64) -> Option<String> {
    (ns > 0).then(|| {
        chrono::DateTime::from_timestamp((ns / 1_000_000_000) as i64, (ns % 1_000_000_000) as u32)
            .map(|t| t.to_rfc2822())
    })?
}

/// A duration parameter (`250us`, `1ms`, `1000000ns`, `1s`) in whole µs.
fn period_us(text: &str) -> Option<u64> {
    let digits: String = text.chars().take_while(|c| c.is_ascii_digit()).collect();
    let n: u64 = digits.parse().ok()?;
    let factor_ns = match &text[digits.len()..] {
        "ns" => 1,
        "us" | "µs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        _ => return None,
    };
    Some(n * factor_ns / 1000)
}

fn us_whole(ns: Option<u64>) -> Value {
    ns.map_or(Value::Null, |v| json!(v / 1000))
}

fn us_avg(ns: Option<u64>) -> Value {
    ns.map_or(Value::Null, |v| json!((v as f64 / 10.0).round() / 100.0))
}

fn histogram_us(series: &Series) -> Value {
    let mut buckets: std::collections::BTreeMap<u64, u64> = Default::default();
    for &(value, count) in &series.stats.histogram.buckets {
        let b = buckets.entry(value / 1000).or_default();
        *b = b.saturating_add(count);
    }
    let mut map = Map::new();
    for (us, count) in buckets {
        map.insert(us.to_string(), json!(count));
    }
    Value::Object(map)
}

/// The rt-tests JSON text of `result`.
pub fn export(result: &RunResult) -> String {
    let mut threads = Map::new();
    for run in &result.runs {
        let paired = PAIRED.contains(&run.probe.as_str());
        let interval = run
            .params
            .get("period")
            .and_then(|p| period_us(p))
            .unwrap_or(0);
        // A run's latency rows are what cyclictest's threads hold; its other rows (the
        // period and jitter beside the cyclic probe's latency) would read as more threads.
        let has_latency = run.series.iter().any(|s| s.name == "latency");
        for series in run
            .series
            .iter()
            .filter(|s| s.stats.count > 0 && (!has_latency || s.name == "latency"))
        {
            let s = &series.stats;
            let cpu: i64 = series
                .labels
                .get("cpu")
                .and_then(|c| c.parse().ok())
                .unwrap_or(-1);
            let own = json!({
                "probe": run.probe,
                "mode": run.mode,
                "load": run.load,
                "series": series.name,
                "labels": series.labels,
                "min_ns": s.min_ns,
                "max_ns": s.max_ns,
                "mean_ns": s.mean_ns,
            });
            let entry = if paired {
                json!({
                    "sender": {
                        "cpu": cpu,
                        "priority": run.obtained.priority,
                        "samples": s.count,
                        "interval": interval,
                    },
                    "receiver": {
                        "cpu": cpu,
                        "priority": run.obtained.priority,
                        "min": us_whole(s.min_ns),
                        "avg": us_avg(s.mean_ns),
                        "max": us_whole(s.max_ns),
                        "histogram": histogram_us(series),
                    },
                    "rtgauge": own,
                })
            } else {
                json!({
                    "histogram": histogram_us(series),
                    "cycles": s.count,
                    "min": us_whole(s.min_ns),
                    "max": us_whole(s.max_ns),
                    "avg": us_avg(s.mean_ns),
                    "cpu": cpu,
                    "node": -1,
                    "rtgauge": own,
                })
            };
            threads.insert(threads.len().to_string(), entry);
        }
    }
    let failed = result.status != RunStatus::Complete
        || result
            .runs
            .iter()
            .any(|r| matches!(r.status, ProbeStatus::Failed { .. }));
    let f = &result.fingerprint;
    let mut doc = Map::new();
    doc.insert("file_version".into(), json!(1));
    doc.insert("cmdline:".into(), json!(result.command_line.join(" ")));
    doc.insert(
        "rt_test_version:".into(),
        json!(format!("{} {}", result.tool.name, result.tool.version)),
    );
    if let Some(t) = rfc2822(result.started_unix_ns) {
        doc.insert("start_time".into(), json!(t));
    }
    if let Some(t) = rfc2822(result.finished_unix_ns) {
        doc.insert("end_time".into(), json!(t));
    }
    doc.insert("return_code".into(), json!(i32::from(failed)));
    doc.insert(
        "sysinfo".into(),
        json!({
            "sysname": "Linux",
            "nodename": f.hostname,
            "release": f.kernel_release,
            "version": f.kernel_version,
            "machine": f.architecture,
            "realtime": i32::from(f.preempt_rt),
        }),
    );
    doc.insert("num_threads".into(), json!(threads.len()));
    doc.insert("resolution_in_ns".into(), json!(0));
    doc.insert("thread".into(), Value::Object(threads));
    let mut text = serde_json::to_string_pretty(&Value::Object(doc)).unwrap_or_default();
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn periods_read_in_whole_microseconds() {
        assert_eq!(period_us("250us"), Some(250));
        assert_eq!(period_us("1ms"), Some(1000));
        assert_eq!(period_us("1s"), Some(1_000_000));
        assert_eq!(period_us("fast"), None);
    }

    #[test]
    fn averages_have_two_decimals_and_extremes_are_whole_microseconds() {
        assert_eq!(us_avg(Some(13_456)), json!(13.46));
        assert_eq!(us_whole(Some(130_999)), json!(130));
        assert_eq!(us_whole(None), Value::Null);
    }
}
