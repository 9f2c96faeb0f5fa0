//! The Chrome trace-event export of attributed windows: the structure ui.perfetto.dev and
//! chrome://tracing read (traceEvents with ph, ts and dur in µs, pid, tid, name).

use rtgauge_trace::{attribute, chrome_trace, parse_trace, AttributionConfig, Spike};
use serde_json::Value;

fn windows() -> Vec<rtgauge_trace::Attribution> {
    let mut out = Vec::new();
    for (text, cpu, pid, programmed, woke) in [
        (
            include_str!("fixtures/softirq.trace"),
            0,
            500,
            100_000_000_000,
            100_000_190_000,
        ),
        (
            include_str!("fixtures/irq.trace"),
            0,
            500,
            100_000_000_000,
            100_000_155_000,
        ),
        (
            include_str!("fixtures/culprit.trace"),
            1,
            18516,
            753_191_093_892,
            753_191_328_188,
        ),
    ] {
        let (events, lost) = parse_trace(text);
        let spike = Spike {
            cpu,
            programmed_ns: programmed,
            woke_ns: woke,
            thread_pid: pid,
        };
        let window: Vec<_> = events
            .into_iter()
            .filter(|e| e.ts_ns + 1_000_000 >= programmed && e.ts_ns <= woke)
            .collect();
        out.push(attribute(
            &spike,
            &window,
            lost,
            &AttributionConfig::default(),
        ));
    }
    out
}

#[test]
fn export_has_the_fields_trace_viewers_read() {
    let document = chrome_trace(&windows());
    // It is plain JSON a viewer can load.
    let text = serde_json::to_string(&document).unwrap();
    let document: Value = serde_json::from_str(&text).unwrap();
    let events = document["traceEvents"].as_array().unwrap();
    assert!(!events.is_empty());
    for event in events {
        let ph = event["ph"].as_str().unwrap();
        assert!(["X", "i", "M"].contains(&ph), "{event}");
        assert!(event["pid"].is_u64() && event["tid"].is_u64(), "{event}");
        assert!(event["name"].is_string(), "{event}");
        if ph != "M" {
            assert!(event["ts"].as_f64().unwrap() > 0.0, "{event}");
        }
        if ph == "X" {
            assert!(event["dur"].as_f64().unwrap() > 0.0, "{event}");
        }
    }
}

#[test]
fn each_cpu_is_a_process_with_irq_softirq_task_and_gap_lanes() {
    let document = chrome_trace(&windows());
    let events = document["traceEvents"].as_array().unwrap();
    let names = |kind: &str, pid: u64| -> Vec<String> {
        events
            .iter()
            .filter(|e| e["ph"] == "M" && e["name"] == kind && e["pid"] == pid)
            .map(|e| e["args"]["name"].as_str().unwrap().to_string())
            .collect()
    };
    for cpu in [0, 1] {
        assert_eq!(names("process_name", cpu), [format!("CPU {cpu}")]);
        assert_eq!(
            names("thread_name", cpu),
            ["IRQ", "softirq", "tasks", "outside Linux (gaps)"]
        );
    }
    let lane_of = |name: &str| {
        events
            .iter()
            .find(|e| e["ph"] == "X" && e["name"] == name)
            .unwrap_or_else(|| panic!("{name} exported"))["tid"]
            .as_u64()
            .unwrap()
    };
    assert_eq!(lane_of("irq 24 eth0"), 1);
    assert_eq!(lane_of("softirq NET_RX"), 2);
    assert_eq!(lane_of("rtg-culprit/18515"), 3);
}

#[test]
fn stretches_of_a_window_cover_its_latency_in_microseconds() {
    for window in &windows() {
        let document = chrome_trace(std::slice::from_ref(window));
        let events = document["traceEvents"].as_array().unwrap();
        let from = window.programmed_ns as f64 / 1000.0;
        let to = window.woke_ns as f64 / 1000.0;
        let covered: f64 = events
            .iter()
            .filter(|e| e["ph"] == "X" && e["pid"] == window.cpu)
            .filter(|e| {
                let ts = e["ts"].as_f64().unwrap();
                ts >= from - 1e-6 && ts < to
            })
            .map(|e| e["dur"].as_f64().unwrap())
            .sum();
        assert!(
            (covered - window.latency_ns as f64 / 1000.0).abs() < 0.01,
            "{covered} us of {} ns",
            window.latency_ns
        );
        let instants = events
            .iter()
            .filter(|e| e["ph"] == "i" && e["pid"] == window.cpu)
            .filter(|e| {
                let ts = e["ts"].as_f64().unwrap();
                (ts - from).abs() < 1e-3 || (ts - to).abs() < 1e-3
            })
            .count();
        assert_eq!(instants, 2, "programmed and actual wake-up are marked");
    }
}
