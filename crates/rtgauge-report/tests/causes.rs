//! The causes of explained spikes (`run --trace`) in the summary, `compare` and `check`.

mod common;

use rtgauge_report::check::{check_result, Spec};
use rtgauge_report::compare::compare;
use rtgauge_report::summary::spike_line;
use rtgauge_result::spike::{Attribution, Cause, Contributor};
use rtgauge_result::{RunResult, Tracing};
use std::path::Path;

/// A spike of `latency_us` whose dominant cause held the CPU `held_us`.
fn spike(latency_us: u64, cause: Cause, held_us: u64) -> Attribution {
    Attribution {
        cpu: 1,
        programmed_ns: 1_000_000_000,
        woke_ns: 1_000_000_000 + latency_us * 1000,
        latency_ns: latency_us * 1000,
        timer_irq_ns: None,
        irq_latency_ns: None,
        thread_latency_ns: None,
        contributors: vec![Contributor {
            cause,
            duration_ns: held_us * 1000,
            count: 1,
            longest_ns: held_us * 1000,
        }],
        dominant: Some(0),
        segments: Vec::new(),
        events_lost: false,
        recording_stopped: false,
        events_in_window: 12,
        thread_pid: None,
    }
}

fn kworker(pid: u32) -> Cause {
    Cause::Thread {
        comm: "kworker/0:1".into(),
        pid,
        prio: Some(120),
        work: None,
    }
}

fn traced(spikes: Vec<Attribution>) -> RunResult {
    let mut r = common::build(false);
    r.tracing = Some(Tracing {
        active: true,
        reason: None,
        above_ns: Some(100_000),
        max_spikes: 20,
        break_ns: None,
        events_missing: Vec::new(),
        recorder: Some("bpf".into()),
        fallback: None,
        by_default: false,
    });
    let run = r.runs.iter_mut().find(|r| r.probe == "cyclic").unwrap();
    run.spikes = spikes;
    r
}

#[test]
fn summary_line_counts_spikes_by_dominant_cause_most_frequent_first() {
    let r = traced(vec![
        spike(5400, Cause::Gap { idle: false }, 5300),
        spike(
            310,
            Cause::Softirq {
                vector: "NET_RX".into(),
            },
            290,
        ),
        spike(200, Cause::Gap { idle: false }, 180),
        spike(120, kworker(40), 110),
        spike(150, kworker(41), 130),
    ]);
    let run = r.runs.iter().find(|r| !r.spikes.is_empty()).unwrap();
    let line = spike_line(run, false).unwrap();
    assert_eq!(
        line,
        "5 spikes ≥ 120µs: 2 gap outside Linux up to 5.3ms, 2 kworker/0:1 up to 130µs, 1 softirq NET_RX 290µs"
    );
    // At most three causes, the rest counted.
    let mut many = r
        .runs
        .iter()
        .find(|r| !r.spikes.is_empty())
        .unwrap()
        .clone();
    many.spikes.push(spike(130, Cause::Idle, 100));
    let line = spike_line(&many, false).unwrap();
    assert!(line.ends_with(", 2 more causes"), "{line}");
    assert!(line.chars().count() <= rtgauge_report::summary::MAX_WIDTH);
    // Untraced runs have no line.
    assert!(spike_line(&common::build(false).runs[0], false).is_none());
}

#[test]
fn compare_lists_how_each_cause_moved_between_results() {
    let a = traced(vec![spike(500, Cause::Gap { idle: false }, 480)]);
    let b = traced(vec![
        spike(300, kworker(7), 280),
        spike(250, kworker(8), 240),
    ]);
    let c = compare(&[a, b], &["a.json".into(), "b.json".into()]);
    let moves: Vec<(&str, &[usize])> = c
        .causes
        .iter()
        .map(|m| (m.cause.as_str(), m.counts.as_slice()))
        .collect();
    assert_eq!(
        moves,
        [
            ("gap outside Linux", &[1, 0][..]),
            ("kworker/0:1", &[0, 2][..])
        ]
    );
    let text = rtgauge_report::compare::render_text(&c, rtgauge_report::Style::Plain);
    assert!(text.contains("Why spikes were late"), "{text}");
}

#[test]
fn a_cause_limit_fails_when_that_cause_held_the_cpu_longer_than_its_max() {
    let spec = |text: &str| Spec::parse(text, Path::new("spec.toml")).unwrap();
    let r = traced(vec![
        spike(1500, Cause::Gap { idle: false }, 1400),
        spike(300, kworker(7), 280),
    ]);
    let gap = spec("[[limit]]\nprobe = \"cyclic\"\ncause = \"gap\"\nmax = \"1ms\"\n");
    let failed =
        |report: &rtgauge_report::CheckReport| report.cases.iter().filter(|c| !c.passed).count();
    let report = check_result(&r, &gap);
    assert_eq!(failed(&report), 1, "{report:?}");
    let by_name = spec("[[limit]]\ncause = \"kworker/0:1\"\nmax = \"1ms\"\n");
    assert_eq!(failed(&check_result(&r, &by_name)), 0);
    // Nothing explained because the run was not traced: the limit cannot be judged.
    let untraced = common::build(false);
    let report = check_result(&untraced, &gap);
    assert!(failed(&report) >= 1);
    assert!(
        report.cases[0]
            .problem
            .as_deref()
            .unwrap()
            .contains("--trace"),
        "{report:?}"
    );
}
