//! Many spikes explained in one pass over a trace ([`attribute_all`], [`attribute_each`]) give
//! what [`attribute`] gives for each spike on its own, in the order the spikes were given.

use rtgauge_trace::{
    attribute, attribute_all, attribute_each, parse_trace, AttributionConfig, Spike, TraceEvent,
};

const FIXTURES: [&str; 5] = [
    include_str!("fixtures/culprit.trace"),
    include_str!("fixtures/softirq.trace"),
    include_str!("fixtures/irq.trace"),
    include_str!("fixtures/threaded_irq.trace"),
    include_str!("fixtures/gap.trace"),
];

/// Spikes all over the trace: every `step` ns from its first event to its last, each
/// `length` ns long (overlapping when `length` > `step`), on the CPU of the first event and
/// on one that recorded nothing; given in reverse order.
fn spikes_over(events: &[TraceEvent], step: u64, length: u64) -> Vec<Spike> {
    let first = events.iter().map(|e| e.ts_ns).min().unwrap();
    let last = events.iter().map(|e| e.ts_ns).max().unwrap();
    let cpu = events[0].cpu;
    let mut spikes: Vec<Spike> = (first.saturating_sub(step)..last + step)
        .step_by(step as usize)
        .flat_map(|at| {
            [cpu, cpu + 7].map(|cpu| Spike {
                cpu,
                programmed_ns: at,
                woke_ns: at + length,
                thread_pid: 18516,
            })
        })
        .collect();
    spikes.reverse();
    spikes
}

fn configs() -> [AttributionConfig; 2] {
    [
        AttributionConfig::default(),
        AttributionConfig {
            woken_by_timer: false,
            ..AttributionConfig::default()
        },
    ]
}

#[test]
fn one_pass_gives_what_each_spike_gives_on_its_own() {
    for text in FIXTURES {
        let (events, lost) = parse_trace(text);
        for config in configs() {
            for (step, length) in [(50_000, 120_000), (400_000, 350_000), (23_000, 3_000)] {
                let spikes = spikes_over(&events, step, length);
                let all = attribute_all(&spikes, &events, lost, &config);
                assert_eq!(all.len(), spikes.len());
                for (spike, a) in spikes.iter().zip(&all) {
                    assert_eq!(
                        a,
                        &attribute(spike, &events, lost, &config),
                        "spike {spike:?}"
                    );
                }
            }
        }
    }
}

#[test]
fn events_out_of_time_order_give_what_each_spike_gives_on_its_own() {
    let (mut events, lost) = parse_trace(FIXTURES[0]);
    // Two halves swapped: recording order is no longer time order.
    let half = events.len() / 2;
    events.rotate_left(half);
    let spikes = spikes_over(&events, 50_000, 120_000);
    let all = attribute_all(&spikes, &events, lost, &AttributionConfig::default());
    for (spike, a) in spikes.iter().zip(&all) {
        assert_eq!(
            a,
            &attribute(spike, &events, lost, &AttributionConfig::default())
        );
    }
}

#[test]
fn each_spike_is_visited_once_in_order_of_cpu_and_time() {
    let (events, lost) = parse_trace(FIXTURES[0]);
    let spikes = spikes_over(&events, 50_000, 120_000);
    let mut visited = Vec::new();
    attribute_each(
        &spikes,
        &events,
        lost,
        &AttributionConfig::default(),
        |index, a| {
            assert_eq!(a.programmed_ns, spikes[index].programmed_ns);
            visited.push(index);
        },
    );
    let keys: Vec<(u32, u64)> = visited
        .iter()
        .map(|&i| (spikes[i].cpu, spikes[i].programmed_ns))
        .collect();
    assert!(keys.windows(2).all(|w| w[0] <= w[1]), "in order");
    visited.sort_unstable();
    assert_eq!(visited, (0..spikes.len()).collect::<Vec<_>>());
}

#[test]
fn a_whole_trace_gives_what_the_events_up_to_the_wake_up_give() {
    // The state a window opens in comes from every earlier event, as if only those were given.
    let (events, lost) = parse_trace(FIXTURES[0]);
    let spikes = spikes_over(&events, 400_000, 350_000);
    let all = attribute_all(&spikes, &events, lost, &AttributionConfig::default());
    for (spike, a) in spikes.iter().zip(&all) {
        let upto: Vec<TraceEvent> = events
            .iter()
            .filter(|e| e.ts_ns <= spike.woke_ns)
            .cloned()
            .collect();
        assert_eq!(
            a,
            &attribute(spike, &upto, lost, &AttributionConfig::default())
        );
    }
}
