//! Checks the extreme-value prediction against what happened next, on a result document:
//! the run's interval maxima are cut into windows of PREDICT + OBSERVE seconds; in each, the
//! first PREDICT seconds predict the maximum of the next OBSERVE seconds, which is then read.
//!
//! ```text
//! cargo run --release -p rtgauge-stats --example evt_validate -- RESULT.json PREDICT_S OBSERVE_S [SERIES]
//! ```
//!
//! SERIES is the series name (default `latency`). One line per window and series, then how
//! often the observed maximum stayed at or below the predicted bound (docs/validation.md).

use rtgauge_stats::evt::{estimate, Input};
use rtgauge_stats::SerializedIntervals;
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Deserialize)]
struct Document {
    runs: Vec<Run>,
}

#[derive(Deserialize)]
struct Run {
    probe: String,
    load: String,
    series: Vec<Series>,
}

#[derive(Deserialize)]
struct Series {
    name: String,
    labels: BTreeMap<String, String>,
    stats: Stats,
}

#[derive(Deserialize)]
struct Stats {
    count: u64,
    intervals: SerializedIntervals,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 3 {
        eprintln!("usage: evt_validate RESULT.json PREDICT_S OBSERVE_S [SERIES]");
        std::process::exit(1);
    }
    let text = std::fs::read_to_string(&args[0])
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", args[0]));
    let doc: Document =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not a result: {e}", args[0]));
    let seconds = |s: &str| -> f64 { s.parse().expect("PREDICT_S and OBSERVE_S are seconds") };
    let (predict_s, observe_s) = (seconds(&args[1]), seconds(&args[2]));
    let wanted = args.get(3).map_or("latency", String::as_str);
    let (mut pairs, mut held, mut refused) = (0, 0, 0);
    for run in &doc.runs {
        for series in run.series.iter().filter(|s| s.name == wanted) {
            let iv = &series.stats.intervals;
            let block_s = iv.interval_ns as f64 / 1e9;
            let predict = (predict_s / block_s).round() as usize;
            let observe = (observe_s / block_s).round() as usize;
            // Samples per interval over the whole run: the per-cycle levels need it.
            let filled = iv.max_ns.iter().flatten().count().max(1);
            let cycles = series.stats.count as f64 / filled as f64;
            let mut start = 0;
            while start + predict + observe <= iv.max_ns.len() {
                let past: Vec<u64> = iv.max_ns[start..start + predict]
                    .iter()
                    .flatten()
                    .copied()
                    .collect();
                let future = iv.max_ns[start + predict..start + predict + observe]
                    .iter()
                    .flatten()
                    .copied()
                    .max()
                    .unwrap_or(0);
                let past_max = past.iter().copied().max().unwrap_or(0);
                let wc = estimate(&Input {
                    maxima: &past,
                    block_ns: iv.interval_ns,
                    cycles_per_block: Some(cycles),
                    horizon_ns: (observe as f64 * iv.interval_ns as f64) as u64,
                });
                let at = format!(
                    "{} {} {:?} t={:.0}s ({} maxima of {block_s} s)",
                    run.probe,
                    run.load,
                    series.labels,
                    start as f64 * block_s,
                    past.len()
                );
                match wc.estimate() {
                    Some(e) => {
                        pairs += 1;
                        let ok = future <= e.predicted_max_ns;
                        held += ok as u32;
                        println!(
                            "{at}: {} shape {:.2}, max so far {} us, predicted max of next {observe_s} s <= {:.1} us, observed {:.1} us: {}",
                            e.model,
                            e.shape,
                            past_max as f64 / 1e3,
                            e.predicted_max_ns as f64 / 1e3,
                            future as f64 / 1e3,
                            if ok { "held" } else { "EXCEEDED" }
                        );
                    }
                    None => {
                        refused += 1;
                        let tests: Vec<String> = wc
                            .diagnostics
                            .iter()
                            .map(|d| format!("{} p={:.2e}", d.test, d.p_value))
                            .collect();
                        println!(
                            "{at}: no estimate: {} [{}]; max so far {:.1} us, observed next {:.1} us",
                            wc.refusal().unwrap_or_default(),
                            tests.join(", "),
                            past_max as f64 / 1e3,
                            future as f64 / 1e3
                        );
                    }
                }
                start += predict + observe;
            }
        }
    }
    println!("estimated {pairs}, refused {refused}; the bound held in {held} of {pairs}");
}
