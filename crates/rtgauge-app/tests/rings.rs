//! The producer and the reader through a real shared-memory file, in one process. One test
//! function: the process has one file, shared by everything it registers.

use rtgauge_app::layout::RING_RECORDS;
use rtgauge_app::{AppError, Kind, Point, Reader};

/// The collector's pid as the file's header holds it.
fn collector_of(path: &std::path::Path) -> u32 {
    let bytes = std::fs::read(path).unwrap();
    let at = std::mem::offset_of!(rtgauge_app::layout::Header, collector_pid);
    u32::from_ne_bytes(bytes[at..at + 4].try_into().unwrap())
}

#[test]
fn records_reach_the_reader_and_losses_are_counted() {
    let dir = tempfile::tempdir().unwrap();
    // SAFETY: set before any thread of this test binary reads the environment.
    unsafe {
        std::env::set_var("RTGAUGE_APP_DIR", dir.path());
        std::env::set_var("RTGAUGE_POINTS", "servo.*,-servo.debug");
    }
    let compute = Point::interval("servo.compute").unwrap();
    let read = Point::periodic("servo.read", 1_000_000).unwrap();
    let debug = Point::interval("servo.debug").unwrap();
    let value = Point::event("servo.error").unwrap();
    let cycles = Point::counter("servo.cycles").unwrap();
    let state = Point::object("servo.state").unwrap();
    assert!(!debug.is_enabled(), "excluded by -servo.debug");
    assert_eq!(
        Point::interval("servo.compute").unwrap(),
        compute,
        "registered once"
    );
    assert!(matches!(
        Point::counter("servo.compute"),
        Err(AppError::KindMismatch { .. })
    ));
    assert!(matches!(
        Point::interval("servo read"),
        Err(AppError::InvalidName { .. })
    ));

    let path = rtgauge_app::file_path().unwrap().to_path_buf();
    assert!(path.starts_with(dir.path()));
    assert!(path.ends_with(format!("rtgauge-app-{}", std::process::id())));
    let mut reader = Reader::open(&path).unwrap();
    assert_eq!(reader.pid(), std::process::id());
    assert!(reader.producer_alive());
    let names: Vec<_> = reader.points().into_iter().map(|p| p.name).collect();
    assert_eq!(
        names,
        [
            "servo.compute",
            "servo.read",
            "servo.debug",
            "servo.error",
            "servo.cycles",
            "servo.state"
        ]
    );
    assert_eq!(reader.points()[1].period_ns, 1_000_000);
    // The same process may open it again (it is the collector already); closing that second
    // reader leaves the first one the collector.
    drop(Reader::open(&path).unwrap());
    assert_eq!(collector_of(&path), std::process::id());

    {
        let _t = compute.begin();
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    let deadline = rtgauge_app::clock::now_ns();
    drop(read.begin_at(deadline));
    drop(debug.begin());
    value.event_u64(42);
    value.event_f64(1.5);
    cycles.count(3);
    state.snapshot(&[1, 2, 3, 4, 5]);
    let mut got = Vec::new();
    let drained = reader.drain(|r| got.push(*r));
    assert_eq!(drained.records, 6, "{got:?}");
    assert_eq!(drained.malformed, 0);
    assert_eq!(got[0].point, compute.id());
    assert!(
        got[0].values[0] >= 2_000_000,
        "slept 2 ms: {}",
        got[0].values[0]
    );
    assert_eq!(got[1].values[1], deadline);
    // Counter stamps are converted to within nanoseconds (1 us allowed).
    assert!(
        got[1].ts_ns + 1_000 >= deadline,
        "{} < {deadline}",
        got[1].ts_ns
    );
    assert_eq!(got[2].values[0], 42);
    assert_eq!(f64::from_bits(got[3].values[0]), 1.5);
    assert_eq!(got[3].kind, Kind::EventF64 as u32);
    assert_eq!((got[4].kind, got[4].values[0]), (Kind::Counter as u32, 3));
    assert_eq!(got[5].values, [1, 2, 3, 4], "a snapshot keeps four values");
    assert_eq!(reader.lost(), 0);

    // A full ring drops and counts; nothing already written is lost.
    for _ in 0..RING_RECORDS + 10 {
        cycles.count(1);
    }
    assert_eq!(reader.lost(), 10);
    assert_eq!(reader.drain(|_| {}).records, RING_RECORDS as u64);
    cycles.count(1);
    assert_eq!(
        reader.drain(|_| {}).records,
        1,
        "space is reused after a drain"
    );

    // Each thread records into its own ring; an exited thread's ring is reused.
    for round in 0..(rtgauge_app::layout::MAX_RINGS * 2) {
        std::thread::spawn(move || cycles.count(round as u64))
            .join()
            .unwrap();
    }
    let mut from_threads = 0;
    reader.drain(|_| from_threads += 1);
    assert_eq!(from_threads, rtgauge_app::layout::MAX_RINGS * 2);
    assert_eq!(reader.lost(), 10, "no thread found the rings exhausted");

    rtgauge_app::shutdown();
    assert!(!path.exists());
}
