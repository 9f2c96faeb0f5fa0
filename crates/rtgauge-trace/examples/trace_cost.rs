//! What tracing costs (needs root and tracefs); the figures are recorded in docs/trace.md.
//!
//! 1. Reading a window: stopping the instance's recording, reading and parsing one CPU's
//!    buffer, resuming, for several buffer sizes, with the buffer filled by a busy 1 ms sleeper.
//! 2. The observer effect: a 1 ms periodic sleeper at SCHED_FIFO 95 on the CPU, with the trace
//!    session off and on, in interleaved rounds; median and p99 of its wake-up latency.
//!
//! cargo run --release -p rtgauge-trace --example trace_cost -- CPU ROUNDS SAMPLES_PER_ROUND
//! (2 CPUs at least: the reader runs on another CPU than the measured one)

use std::time::Instant;

use rtgauge_trace::testing::{median_p99, periodic_sleeper, pin_fifo};
use rtgauge_trace::{TraceConfig, TraceSession};

fn sleeper_latencies(cpu: usize, samples: usize) -> Vec<u64> {
    std::thread::spawn(move || {
        pin_fifo(cpu, 95).expect("SCHED_FIFO 95 needs root");
        periodic_sleeper(1_000_000, samples, u64::MAX, |_| {})
            .iter()
            .map(|w| w.latency_ns())
            .collect()
    })
    .join()
    .unwrap()
}

fn us(ns: u64) -> f64 {
    ns as f64 / 1000.0
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("numbers: CPU ROUNDS SAMPLES_PER_ROUND"))
        .collect();
    let (cpu, rounds, samples) = match args[..] {
        [cpu, rounds, samples] => (cpu, rounds, samples),
        _ => (1, 10, 5000),
    };

    // The reader runs off the measured CPU at SCHED_FIFO 50, as a runner's helper thread
    // would: at SCHED_OTHER on a loaded machine it is preempted while recording is stopped.
    let reader_cpu = if cpu == 0 { 1 } else { 0 };
    pin_fifo(reader_cpu, 50).expect("SCHED_FIFO 50 needs root");
    println!("reading one CPU (stop, read the buffer, resume; then parse), reader at FIFO 50 on CPU {reader_cpu}:");
    for buffer_size_kb in [64, 256, 1024, 4096] {
        let session = TraceSession::start(&TraceConfig {
            cpus: vec![cpu],
            buffer_size_kb,
        })
        .expect("trace session");
        // Fill the buffer: a sleeper on the CPU for 3 s, plus whatever the machine does.
        sleeper_latencies(cpu, 3000);
        let started = Instant::now();
        let full = session.read_cpu(cpu).expect("read");
        let full_total = started.elapsed();
        // Then reads every 100 ms while the sleeper keeps the CPU busy (each reads the whole
        // buffer again: reading does not consume).
        let busy = std::thread::spawn(move || sleeper_latencies(cpu, 1700));
        let mut paused = Vec::new();
        for _ in 0..15 {
            std::thread::sleep(std::time::Duration::from_millis(100));
            paused.push(session.read_cpu(cpu).expect("read").paused_for.as_nanos() as u64);
        }
        busy.join().unwrap();
        let (median, _) = median_p99(paused.clone());
        println!(
            "  buffer {buffer_size_kb:>5} KiB: full buffer {:>6} events, recording stopped {:.1} ms, with parsing {:.1} ms; reads every 100 ms: stopped {:.2} ms median ({:.2} max)",
            full.events.len(),
            full.paused_for.as_secs_f64() * 1000.0,
            full_total.as_secs_f64() * 1000.0,
            us(median) / 1000.0,
            us(*paused.iter().max().unwrap()) / 1000.0
        );
    }

    println!("observer effect, 1 ms sleeper at FIFO 95 on CPU {cpu}, {rounds} interleaved rounds of {samples}:");
    let mut off = Vec::new();
    let mut on = Vec::new();
    for round in 0..rounds {
        let off_round = sleeper_latencies(cpu, samples);
        let session = TraceSession::start(&TraceConfig::new(vec![cpu])).expect("trace session");
        let on_round = sleeper_latencies(cpu, samples);
        drop(session);
        let (off_median, off_p99) = median_p99(off_round.clone());
        let (on_median, on_p99) = median_p99(on_round.clone());
        println!(
            "  round {round:>2}: off median {:>6.1} us p99 {:>7.1} us | on median {:>6.1} us p99 {:>7.1} us",
            us(off_median),
            us(off_p99),
            us(on_median),
            us(on_p99)
        );
        off.extend(off_round);
        on.extend(on_round);
    }
    if rounds == 0 {
        return;
    }
    let (off_median, off_p99) = median_p99(off.clone());
    let (on_median, on_p99) = median_p99(on.clone());
    println!(
        "  all: off median {:.1} us p99 {:.1} us max {:.1} us | on median {:.1} us p99 {:.1} us max {:.1} us",
        us(off_median),
        us(off_p99),
        us(*off.iter().max().unwrap()),
        us(on_median),
        us(on_p99),
        us(*on.iter().max().unwrap())
    );
}
