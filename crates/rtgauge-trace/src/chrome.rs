//! Attributed windows as Chrome trace-event JSON, which ui.perfetto.dev and chrome://tracing
//! open offline.
//!
//! One process per CPU ("CPU n"); inside it one lane (thread) per kind of cause: hard IRQs and
//! system vectors, softirqs, tasks, and gaps outside Linux. Each stretch is a complete event
//! (`"ph": "X"`) with `ts` and `dur` in microseconds; the programmed and the actual wake-up are
//! instant events (`"ph": "i"`) on the tasks lane.

use serde_json::{json, Value};

use rtgauge_result::spike::{cause_name, Attribution, Cause};

/// Lanes (Chrome "threads") inside each CPU, in display order.
const LANES: [(u32, &str); 4] = [
    (1, "IRQ"),
    (2, "softirq"),
    (3, "tasks"),
    (4, "outside Linux (gaps)"),
];

fn lane(cause: &Cause) -> u32 {
    match cause {
        Cause::Irq { .. } | Cause::Vector { .. } | Cause::Nmi { .. } => 1,
        Cause::Softirq { .. } => 2,
        Cause::Thread { .. } | Cause::ThreadedIrq { .. } | Cause::Idle | Cause::Unknown => 3,
        Cause::Gap { .. } | Cause::Throttled { .. } => 4,
    }
}

fn micros(ns: u64) -> f64 {
    ns as f64 / 1000.0
}

/// The Chrome trace-event document of `windows`.
pub fn chrome_trace(windows: &[Attribution]) -> Value {
    let mut events = Vec::new();
    let mut cpus: Vec<u32> = windows.iter().map(|w| w.cpu).collect();
    cpus.sort_unstable();
    cpus.dedup();
    for &cpu in &cpus {
        events.push(json!({
            "ph": "M", "name": "process_name", "pid": cpu, "tid": 0,
            "args": { "name": format!("CPU {cpu}") }
        }));
        for (tid, name) in LANES {
            events.push(json!({
                "ph": "M", "name": "thread_name", "pid": cpu, "tid": tid,
                "args": { "name": name }
            }));
            events.push(json!({
                "ph": "M", "name": "thread_sort_index", "pid": cpu, "tid": tid,
                "args": { "sort_index": tid }
            }));
        }
    }
    for window in windows {
        for segment in &window.segments {
            let Some(contributor) = window.contributors.get(segment.contributor) else {
                continue;
            };
            events.push(json!({
                "ph": "X",
                "name": cause_name(&contributor.cause),
                "cat": lane_name(lane(&contributor.cause)),
                "pid": window.cpu,
                "tid": lane(&contributor.cause),
                "ts": micros(segment.start_ns),
                "dur": micros(segment.end_ns - segment.start_ns),
                "args": { "cause": &contributor.cause },
            }));
        }
        for (name, ts) in [
            ("programmed wake-up", window.programmed_ns),
            ("woke", window.woke_ns),
        ] {
            events.push(json!({
                "ph": "i", "s": "p", "name": name, "pid": window.cpu, "tid": 3,
                "ts": micros(ts),
                "args": { "latency_us": micros(window.latency_ns) },
            }));
        }
    }
    json!({ "traceEvents": events, "displayTimeUnit": "ns" })
}

fn lane_name(tid: u32) -> &'static str {
    LANES
        .iter()
        .find(|(id, _)| *id == tid)
        .map_or("other", |(_, name)| name)
}
