//! What instrumentation costs the application: an enabled interval (two stamps and one ring
//! write), an enabled event, a disabled point (one branch), and one read of each clock for
//! scale. The process's record clock is the default one (the CPU's counter where the kernel
//! keeps time on it); `RTGAUGE_APP_CLOCK=monotonic cargo bench -p rtgauge-app` measures the
//! other. Only the recording is timed: the rings are drained between batches, outside the
//! timing, so no record is dropped. Figures: docs/app-instrumentation.md.
use criterion::{criterion_group, criterion_main, Criterion};
use rtgauge_app::clock::{counter, now_ns};
use rtgauge_app::layout::RING_RECORDS;
use rtgauge_app::{Point, Reader};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Times `iters` calls of `record`, in batches that fit a ring, draining between batches.
fn timed(reader: &mut Reader, iters: u64, mut record: impl FnMut()) -> Duration {
    let mut total = Duration::ZERO;
    let mut left = iters;
    while left > 0 {
        let batch = left.min(RING_RECORDS as u64 / 2);
        let start = Instant::now();
        for _ in 0..batch {
            record();
        }
        total += start.elapsed();
        reader.drain(|_| {});
        left -= batch;
    }
    total
}

fn overhead(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    // SAFETY: set before any other thread exists or the library reads the environment.
    unsafe {
        std::env::set_var("RTGAUGE_APP_DIR", dir.path());
        std::env::set_var("RTGAUGE_POINTS", "*,-bench.disabled");
    }
    let enabled = Point::interval("bench.interval").unwrap();
    let event = Point::event("bench.event").unwrap();
    let disabled = Point::interval("bench.disabled").unwrap();
    rtgauge_app::thread_init().unwrap();
    let mut reader = Reader::open(rtgauge_app::file_path().unwrap()).unwrap();

    c.bench_function("clock_read", |b| b.iter(|| black_box(now_ns())));
    c.bench_function("counter_read", |b| b.iter(|| black_box(counter())));
    c.bench_function("interval_enabled", |b| {
        b.iter_custom(|iters| {
            timed(&mut reader, iters, || {
                let _timed = black_box(enabled).begin();
            })
        })
    });
    c.bench_function("event_enabled", |b| {
        b.iter_custom(|iters| timed(&mut reader, iters, || black_box(event).event_u64(7)))
    });
    c.bench_function("interval_disabled", |b| {
        b.iter(|| {
            let _timed = black_box(disabled).begin();
        })
    });
    assert_eq!(
        reader.lost(),
        0,
        "the benchmark must not measure dropped records"
    );
    rtgauge_app::shutdown();
}

criterion_group!(benches, overhead);
criterion_main!(benches);
