//! oslat's text output: a header (`oslat V 2.40`, `Thread priority:`, `CPU list:`), then one
//! column per measured core: `Core:`, one line per µs bucket (`003 (us): 62 14`), the last
//! one counting everything from its value up (`(including overflows)`), `Minimum:`,
//! `Average:`, `Maximum:` in µs and `Duration:` in seconds. oslat 1.x labels the frequency
//! `CPU Freq:`, 2.x `Counter Freq:`; nothing else differs for this reader.
//!
//! What a bucket's label means changed between versions: in 1.x and 2.40 the lowest
//! non-empty bucket is the printed `Minimum` (`001` holds a minimum of 1 µs); some 2.x builds
//! print the latency one below the label (a `Minimum:` of 1 with bucket `001` empty and
//! `002` full). Where a core's lowest non-empty bucket lies above its minimum, every label of
//! the file is read as one µs above the latencies it holds. The figures themselves always
//! come from the summary lines.

use crate::{document, malformed, series_of, shown, to_ns, ImportError, Reported, Shell};
use rtgauge_probes::names::CYCLIC;
use rtgauge_result::RunResult;
use std::path::Path;

pub fn parse_text(path: &Path, text: &str) -> Result<RunResult, ImportError> {
    let mut shell = Shell {
        tool: "oslat".into(),
        // oslat binds each measuring thread to one CPU of its list.
        pinned: Some(true),
        ..Default::default()
    };
    let mut cores: Vec<String> = Vec::new();
    let mut buckets: Vec<(u64, Vec<u64>, bool)> = Vec::new();
    let mut figures: std::collections::BTreeMap<&str, (usize, Vec<f64>)> = Default::default();
    for (i, raw) in text.lines().enumerate() {
        let line_no = i + 1;
        let line = raw.trim();
        if let Some(v) = line.strip_prefix("oslat V") {
            shell.version = v.trim().to_string();
            continue;
        }
        let Some((key, rest)) = line.split_once(':') else {
            continue;
        };
        let key = key.trim();
        let numbers = |what: &str| -> Result<Vec<f64>, ImportError> {
            rest.split_whitespace()
                .filter(|t| !t.starts_with('(') && !t.ends_with(')'))
                .map(|t| {
                    t.parse::<f64>().map_err(|_| {
                        malformed(
                            path,
                            line_no,
                            format!("`{}` in the {what} line is not a number", shown(t)),
                        )
                    })
                })
                .collect()
        };
        match key {
            "Thread priority" => {
                let p = rest.trim();
                if p == "default" {
                    shell.policy = Some("other".into());
                    shell.priority = Some(0);
                } else if let Some(prio) = p.rsplit(':').next().and_then(|v| v.trim().parse().ok())
                {
                    shell.policy = Some("fifo".into());
                    shell.priority = Some(prio);
                }
            }
            "Core" => cores = rest.split_whitespace().map(str::to_string).collect(),
            "Minimum" | "Average" | "Maximum" | "Duration" => {
                figures.insert(
                    match key {
                        "Minimum" => "min",
                        "Average" => "avg",
                        "Maximum" => "max",
                        _ => "duration",
                    },
                    (line_no, numbers(key)?),
                );
            }
            k if k.ends_with("(us)") => {
                let us = k.trim_end_matches("(us)").trim();
                let us: u64 = us.parse().map_err(|_| {
                    malformed(
                        path,
                        line_no,
                        format!("`{}` is not a bucket in µs", shown(k)),
                    )
                })?;
                let counts = numbers("bucket")?;
                if counts.len() != cores.len() {
                    return Err(malformed(
                        path,
                        line_no,
                        format!(
                            "{} counts for {} cores (the Core: line)",
                            counts.len(),
                            cores.len()
                        ),
                    ));
                }
                buckets.push((
                    us,
                    counts.into_iter().map(|c| c as u64).collect(),
                    rest.contains("including overflows"),
                ));
            }
            _ => {}
        }
    }
    if cores.is_empty() || buckets.is_empty() {
        return Err(malformed(
            path,
            1,
            "no `Core:` line and bucket lines: not oslat's text output",
        ));
    }
    for (key, (line, values)) in &figures {
        if values.len() != cores.len() {
            return Err(malformed(
                path,
                *line,
                format!("{} {key} values for {} cores", values.len(), cores.len()),
            ));
        }
    }
    let figure = |key: &str, c: usize| figures.get(key).map(|f| f.1[c]);
    let lowest = |c: usize| {
        buckets
            .iter()
            .find(|(_, counts, over)| !over && counts[c] > 0)
            .map(|b| b.0)
    };
    let shifted = (0..cores.len())
        .any(|c| matches!((lowest(c), figure("min", c)), (Some(l), Some(min)) if l as f64 > min));
    let lower_us = |label: u64| {
        if shifted {
            label.saturating_sub(1)
        } else {
            label
        }
    };
    let mut warnings = Vec::new();
    let mut series = Vec::new();
    for (c, core) in cores.iter().enumerate() {
        let mut r = Reported::default();
        for (us, counts, over) in &buckets {
            let ns = lower_us(*us).saturating_mul(1000);
            if *over {
                r.overflow = Some(counts[c]);
                r.limit_ns = Some(ns);
            } else {
                r.buckets.push((ns, counts[c]));
            }
        }
        r.count = r
            .buckets
            .iter()
            .fold(r.overflow.unwrap_or(0), |a, b| a.saturating_add(b.1));
        r.min_ns = figure("min", c).and_then(|v| to_ns(v, 1000));
        r.mean_ns = figure("avg", c).and_then(|v| to_ns(v, 1000));
        r.max_ns = figure("max", c).and_then(|v| to_ns(v, 1000));
        series.push(series_of(
            "latency",
            &[("cpu", core.clone())],
            &r,
            &mut warnings,
            &format!("oslat core {core}"),
        ));
    }
    shell.duration_ns = (0..cores.len())
        .filter_map(|c| figure("duration", c))
        .fold(None, |a: Option<f64>, d| Some(a.map_or(d, |a| a.max(d))))
        .map(|s| (s * 1e9).round() as u64);
    Ok(document(path, shell, CYCLIC, series, warnings))
}
