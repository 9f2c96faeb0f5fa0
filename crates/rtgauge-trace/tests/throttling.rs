//! RT throttling and the fair server in a trace (fixtures/throttled.trace): time during which
//! the measured real-time thread was ready to run while its CPU idled or ran a normal task is
//! named "RT throttling" (or "fair server" with throttling off), never an idle gap or the
//! interrupt that happened to come in it; a sleeping thread's idle CPU is not throttling.

use rtgauge_trace::{attribute, cause_name, parse_trace, Attribution, AttributionConfig, Spike};

const MARGIN_NS: u64 = 1_000_000;

fn attributions(config: &AttributionConfig) -> Vec<Attribution> {
    let text = include_str!("fixtures/throttled.trace");
    let spikes: Vec<Spike> = text
        .lines()
        .filter(|l| l.starts_with("# spike "))
        .map(|l| {
            let w: Vec<u64> = l[8..]
                .split_whitespace()
                .map(|w| w.parse().unwrap())
                .collect();
            Spike {
                cpu: w[0] as u32,
                thread_pid: w[1] as u32,
                programmed_ns: w[2],
                woke_ns: w[3],
            }
        })
        .collect();
    let (events, lost) = parse_trace(text);
    spikes
        .iter()
        .map(|spike| {
            let window: Vec<_> = events
                .iter()
                .filter(|e| e.ts_ns + MARGIN_NS >= spike.programmed_ns && e.ts_ns <= spike.woke_ns)
                .cloned()
                .collect();
            attribute(spike, &window, lost, config)
        })
        .collect()
}

/// The share of a window's time given to a cause named `name`.
fn share(a: &Attribution, name: &str) -> f64 {
    let named: u64 = a
        .contributors
        .iter()
        .filter(|c| cause_name(&c.cause) == name)
        .map(|c| c.duration_ns)
        .sum();
    named as f64 / a.latency_ns as f64
}

#[test]
fn a_runnable_thread_on_an_idle_cpu_is_held_by_rt_throttling() {
    let a = &attributions(&AttributionConfig::default())[0];
    assert!(share(a, "RT throttling") >= 0.99, "{a:#?}");
    assert_eq!(
        cause_name(&a.dominant_contributor().unwrap().cause),
        "RT throttling"
    );
    assert!(
        a.contributors
            .iter()
            .all(|c| !cause_name(&c.cause).starts_with("gap")),
        "{:#?}",
        a.contributors
    );
}

#[test]
fn a_normal_task_running_ahead_of_a_woken_rt_thread_is_throttling_or_the_fair_server() {
    // Behind a normal task a wait becomes throttling once it lasted 1 ms (a non-preemptible
    // kernel section looks the same for less), and then the whole of it is.
    let on = &attributions(&AttributionConfig::default())[1];
    assert!(share(on, "RT throttling") >= 0.99, "{on:#?}");
    let off = &attributions(&AttributionConfig {
        rt_throttling: false,
        ..AttributionConfig::default()
    })[1];
    assert!(share(off, "fair server") >= 0.99, "{off:#?}");
}

#[test]
fn a_sleeping_thread_on_an_idle_cpu_is_not_throttled() {
    let a = &attributions(&AttributionConfig::default())[2];
    assert_eq!(share(a, "RT throttling"), 0.0, "{a:#?}");
}
