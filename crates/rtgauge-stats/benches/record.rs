//! Cost of recording one sample (the hot loop's bookkeeping besides the clock read).
use criterion::{criterion_group, criterion_main, Criterion};
use rtgauge_stats::Recorder;
use std::hint::black_box;

fn record(c: &mut Criterion) {
    let mut r = Recorder::default();
    let mut t = 0u64;
    c.bench_function("recorder_record", |b| {
        b.iter(|| {
            t += 1_000;
            r.record(black_box(t % 50_000), black_box(t));
        })
    });
}

criterion_group!(benches, record);
criterion_main!(benches);
