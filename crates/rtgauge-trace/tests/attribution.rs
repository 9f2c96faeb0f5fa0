//! Attribution of late wake-ups on recorded trace fixtures (tests/fixtures): one recorded on a
//! real machine (a FIFO 99 culprit, a kworker, a stall outside Linux) and synthetic ones for
//! what that machine cannot produce (IRQ handler, softirq, threaded IRQ, a gap with no events).

use rtgauge_trace::{attribute, parse_trace, Attribution, AttributionConfig, Cause, Spike};

const MARGIN_NS: u64 = 1_000_000;

struct Fixture {
    spikes: Vec<Spike>,
    spins: Vec<(u64, u64)>,
    attributions: Vec<Attribution>,
}

/// Reads the "# spike CPU PID PROGRAMMED WOKE" and "# spin START END" header lines and
/// attributes every spike from the fixture's events.
fn fixture(text: &str) -> Fixture {
    let mut spikes = Vec::new();
    let mut spins = Vec::new();
    for line in text.lines() {
        let words: Vec<u64> = line
            .split_whitespace()
            .skip(2)
            .filter_map(|w| w.parse().ok())
            .collect();
        if line.starts_with("# spike ") {
            spikes.push(Spike {
                cpu: words[0] as u32,
                thread_pid: words[1] as u32,
                programmed_ns: words[2],
                woke_ns: words[3],
            });
        } else if line.starts_with("# spin ") {
            spins.push((words[0], words[1]));
        }
    }
    let (events, lost) = parse_trace(text);
    assert!(!events.is_empty(), "the fixture has events");
    // What a session's read_window hands over: the CPU's events from a margin before the
    // programmed time to the wake-up (the fixtures hold several windows).
    let attributions = spikes
        .iter()
        .map(|spike| {
            let window: Vec<_> = events
                .iter()
                .filter(|e| e.ts_ns + MARGIN_NS >= spike.programmed_ns && e.ts_ns <= spike.woke_ns)
                .cloned()
                .collect();
            attribute(spike, &window, lost, &AttributionConfig::default())
        })
        .collect();
    Fixture {
        spikes,
        spins,
        attributions,
    }
}

fn dominant(a: &Attribution) -> &Cause {
    &a.dominant_contributor().expect("a dominant cause").cause
}

fn us(ns: u64) -> f64 {
    ns as f64 / 1000.0
}

#[test]
fn every_nanosecond_of_the_window_is_attributed_once() {
    for text in [
        include_str!("fixtures/culprit.trace"),
        include_str!("fixtures/softirq.trace"),
        include_str!("fixtures/irq.trace"),
        include_str!("fixtures/threaded_irq.trace"),
        include_str!("fixtures/gap.trace"),
    ] {
        for a in fixture(text).attributions {
            let total: u64 = a.contributors.iter().map(|c| c.duration_ns).sum();
            assert_eq!(total, a.latency_ns, "{a:#?}");
            let mut at = a.programmed_ns;
            for segment in &a.segments {
                assert_eq!(segment.start_ns, at, "segments are contiguous");
                assert!(segment.end_ns > segment.start_ns);
                at = segment.end_ns;
            }
            assert_eq!(at, a.woke_ns);
            if let (Some(irq), Some(thread)) = (a.irq_latency_ns, a.thread_latency_ns) {
                assert_eq!(irq + thread, a.latency_ns);
            }
        }
    }
}

#[test]
fn recorded_fifo_99_culprit_is_named_with_its_run_time() {
    let f = fixture(include_str!("fixtures/culprit.trace"));
    let mut culprit_spikes = 0;
    for (spike, a) in f.spikes.iter().zip(&f.attributions) {
        // The culprit's own account of when it spun, clipped to the window.
        let truth: u64 = f
            .spins
            .iter()
            .map(|&(start, end)| {
                end.min(spike.woke_ns)
                    .saturating_sub(start.max(spike.programmed_ns))
            })
            .sum();
        if truth == 0 {
            continue;
        }
        culprit_spikes += 1;
        let Cause::Thread { comm, prio, .. } = dominant(a) else {
            panic!("the culprit is a thread: {a:#?}")
        };
        assert_eq!(comm, "rtg-culprit");
        assert_eq!(*prio, Some(0), "FIFO 99 is kernel priority 0");
        let attributed = a.dominant_contributor().unwrap().duration_ns;
        let error = attributed.abs_diff(truth) as f64 / truth as f64;
        assert!(
            error < 0.10,
            "culprit ran {} us by its own account, attributed {} us",
            us(truth),
            us(attributed)
        );
        // It was already woken by its timer, so the measuring thread waited as a thread.
        assert!(a.thread_latency_ns.unwrap() > a.irq_latency_ns.unwrap());
    }
    assert_eq!(
        culprit_spikes, 2,
        "the fixture holds two spikes of the culprit"
    );
}

#[test]
fn recorded_kworker_running_a_work_item_is_named() {
    let f = fixture(include_str!("fixtures/culprit.trace"));
    let a = &f.attributions[1];
    assert_eq!(
        dominant(a),
        &Cause::Thread {
            comm: "kworker/1:0".into(),
            pid: 11720,
            prio: Some(120),
            work: Some("vmstat_update".into()),
        }
    );
}

#[test]
fn recorded_stall_with_no_events_before_a_late_timer_is_a_gap() {
    let f = fixture(include_str!("fixtures/culprit.trace"));
    let a = &f.attributions[2];
    assert_eq!(dominant(a), &Cause::Gap { idle: false });
    assert!(a.irq_latency_ns.unwrap() > 300_000, "{a:#?}");
}

#[test]
fn softirq_after_the_timer_interrupt_is_named_by_vector() {
    let a = &fixture(include_str!("fixtures/softirq.trace")).attributions[0];
    assert_eq!(
        dominant(a),
        &Cause::Softirq {
            vector: "NET_RX".into()
        }
    );
    assert_eq!(a.dominant_contributor().unwrap().duration_ns, 173_000);
    assert_eq!(
        a.irq_latency_ns,
        Some(2_100),
        "from the hrtimer's own clock reading"
    );
    assert_eq!(a.thread_latency_ns, Some(187_900));
}

#[test]
fn irq_handler_holding_off_the_timer_is_named_with_number_and_name() {
    let a = &fixture(include_str!("fixtures/irq.trace")).attributions[0];
    assert_eq!(
        dominant(a),
        &Cause::Irq {
            irq: 24,
            name: "eth0".into()
        }
    );
    assert_eq!(a.dominant_contributor().unwrap().duration_ns, 140_000);
    assert!(a.irq_latency_ns.unwrap() > a.thread_latency_ns.unwrap());
}

#[test]
fn threaded_irq_is_a_thread_with_its_irq_number() {
    let a = &fixture(include_str!("fixtures/threaded_irq.trace")).attributions[0];
    assert_eq!(
        dominant(a),
        &Cause::ThreadedIrq {
            comm: "irq/24-eth0".into(),
            pid: 120,
            prio: Some(49),
            irq: Some(24),
        }
    );
    assert!(a.dominant_contributor().unwrap().duration_ns >= 240_000);
}

#[test]
fn silence_before_a_late_timer_is_a_gap_outside_linux() {
    let a = &fixture(include_str!("fixtures/gap.trace")).attributions[0];
    assert_eq!(dominant(a), &Cause::Gap { idle: false });
    assert_eq!(a.dominant_contributor().unwrap().duration_ns, 400_000);
    assert_eq!(a.irq_latency_ns, Some(400_800));
}

#[test]
fn silence_shorter_than_the_threshold_is_not_a_gap() {
    let f = fixture(include_str!("fixtures/gap.trace"));
    let config = AttributionConfig {
        gap_threshold_ns: 500_000,
        ..AttributionConfig::default()
    };
    let (events, _) = parse_trace(include_str!("fixtures/gap.trace"));
    let a = attribute(&f.spikes[0], &events, false, &config);
    assert!(matches!(dominant(&a), Cause::Thread { comm, .. } if comm == "worker"));
}

#[test]
fn a_thread_woken_by_another_threads_event_gets_no_gap_for_a_silent_task_and_no_irq_split() {
    // The gap fixture's silent 400 µs of `worker`, but the spike is an answer to an event
    // another thread fired: nothing had to interrupt `worker`, so it is the cause.
    let f = fixture(include_str!("fixtures/gap.trace"));
    let (events, _) = parse_trace(include_str!("fixtures/gap.trace"));
    let config = AttributionConfig {
        woken_by_timer: false,
        ..AttributionConfig::default()
    };
    let a = attribute(&f.spikes[0], &events, false, &config);
    assert!(
        matches!(dominant(&a), Cause::Thread { comm, .. } if comm == "worker"),
        "{a:?}"
    );
    assert!(a
        .contributors
        .iter()
        .all(|c| !matches!(c.cause, Cause::Gap { .. })));
    assert_eq!((a.irq_latency_ns, a.thread_latency_ns), (None, None));
    let total: u64 = a.contributors.iter().map(|c| c.duration_ns).sum();
    assert_eq!(total, a.latency_ns);
}

#[test]
fn no_events_at_all_names_no_cause() {
    let spike = Spike {
        cpu: 3,
        programmed_ns: 1_000,
        woke_ns: 500_000,
        thread_pid: 1,
    };
    let a = attribute(&spike, &[], false, &AttributionConfig::default());
    assert_eq!(a.dominant, None);
    assert_eq!(a.contributors[0].cause, Cause::Unknown);
}

#[test]
fn attribution_round_trips_through_json() {
    for a in fixture(include_str!("fixtures/culprit.trace")).attributions {
        let json = serde_json::to_string(&a).unwrap();
        let back: Attribution = serde_json::from_str(&json).unwrap();
        assert_eq!(back, a);
    }
}

#[test]
fn attribution_has_a_json_schema_for_the_result_document() {
    let schema = serde_json::to_value(schemars::schema_for!(Attribution)).unwrap();
    let properties = schema["properties"].as_object().unwrap();
    for field in [
        "irq_latency_ns",
        "thread_latency_ns",
        "contributors",
        "dominant",
        "segments",
    ] {
        assert!(properties.contains_key(field), "{field} in the schema");
    }
    assert!(
        schema.to_string().contains("threaded_irq"),
        "causes are tagged by kind"
    );
}

#[test]
fn nmi_handler_time_is_taken_from_its_recorded_duration() {
    // A perf NMI of 60 µs (it is recorded at its end) while the thread was already woken.
    let text = "\
        worker-77 [000] d.h.. 100.000001: local_timer_entry: vector=236
        worker-77 [000] d.h.. 100.000001: hrtimer_expire_entry: hrtimer=1 function=hrtimer_wakeup now=100000001000
        worker-77 [000] d.h.. 100.000002: sched_waking: comm=cyclic pid=500 prio=4 target_cpu=000
        worker-77 [000] d.h.. 100.000003: local_timer_exit: vector=236
        worker-77 [000] d.Z.. 100.000075: nmi_handler: perf_event_nmi_handler() delta_ns: 60000 handled: 1
        worker-77 [000] d..2. 100.000080: sched_switch: prev_comm=worker prev_pid=77 prev_prio=120 prev_state=R+ ==> next_comm=cyclic next_pid=500 next_prio=4
";
    let (events, _) = parse_trace(text);
    let spike = Spike {
        cpu: 0,
        programmed_ns: 100_000_000_000,
        woke_ns: 100_000_082_000,
        thread_pid: 500,
    };
    let a = attribute(&spike, &events, false, &AttributionConfig::default());
    assert_eq!(
        dominant(&a),
        &Cause::Nmi {
            handler: "perf_event_nmi_handler".into()
        }
    );
    assert_eq!(a.dominant_contributor().unwrap().duration_ns, 60_000);
    let total: u64 = a.contributors.iter().map(|c| c.duration_ns).sum();
    assert_eq!(total, a.latency_ns);
}
