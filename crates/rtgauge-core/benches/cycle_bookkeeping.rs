//! Per-cycle bookkeeping of the cyclic probe besides the sleep: one clock read, three
//! records (latency, period, jitter) and the live-view publish — compared with the cost of
//! one clock read. Target: the bookkeeping costs at most two clock reads.
use criterion::{criterion_group, criterion_main, Criterion};
use rtgauge_core::clock::now_ns;
use rtgauge_core::live::LiveCell;
use rtgauge_stats::Recorder;
use std::hint::black_box;

fn bookkeeping(c: &mut Criterion) {
    c.bench_function("clock_read", |b| b.iter(|| black_box(now_ns())));

    let (mut latency, mut period, mut jitter) = (
        Recorder::default(),
        Recorder::default(),
        Recorder::default(),
    );
    let live = LiveCell::new("bench".into());
    let start = now_ns();
    let mut previous = start;
    let mut programmed = start;
    c.bench_function("cycle_bookkeeping", |b| {
        b.iter(|| {
            let woke = now_ns();
            programmed += 1_000;
            let lat = woke.saturating_sub(programmed) % 100_000;
            let at = woke - start;
            latency.record(lat, at);
            let p = woke - previous;
            period.record(p, at);
            jitter.record(p.abs_diff(1_000), at);
            live.publish(lat, 0);
            previous = woke;
        })
    });
}

criterion_group!(benches, bookkeeping);
criterion_main!(benches);
