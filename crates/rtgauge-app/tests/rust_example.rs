//! The Rust servo example (examples/servo.rs, built by `cargo test`) collected through the
//! reader: every cycle arrives, with its compute section and its intended start.

use rtgauge_app::{Kind, Reader};
use std::path::PathBuf;
use std::time::{Duration, Instant};

fn example(name: &str) -> PathBuf {
    let deps = std::env::current_exe().unwrap();
    deps.parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("examples")
        .join(name)
}

#[test]
fn every_cycle_of_the_rust_servo_reaches_the_reader() {
    let dir = tempfile::tempdir().unwrap();
    let mut servo = std::process::Command::new(example("servo"))
        .args(["--cycles", "300", "--busy-us", "50"])
        .env("RTGAUGE_APP_DIR", dir.path())
        .spawn()
        .expect("cargo test builds the examples");
    let path = dir.path().join(format!("rtgauge-app-{}", servo.id()));
    let started = Instant::now();
    let mut reader = loop {
        match Reader::open(&path) {
            Ok(r) => break r,
            Err(e) => {
                assert!(started.elapsed() < Duration::from_secs(10), "{e}");
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    };
    let mut records = Vec::new();
    while servo.try_wait().unwrap().is_none() {
        reader.drain(|r| records.push(*r));
        std::thread::sleep(Duration::from_millis(5));
    }
    reader.drain(|r| records.push(*r));
    assert!(!reader.producer_alive());
    let points = reader.points();
    let id = |name: &str| points.iter().find(|p| p.name == name).unwrap().id;
    let of = |name: &str| {
        records
            .iter()
            .filter(|r| r.point == id(name))
            .collect::<Vec<_>>()
    };
    let compute = of("servo.compute");
    let cycle = of("servo.cycle");
    assert_eq!(compute.len(), 300);
    assert_eq!(cycle.len(), 300);
    assert!(
        compute.iter().all(|r| r.values[0] >= 50_000),
        "busy for 50 us"
    );
    assert!(
        cycle
            .iter()
            .all(|r| r.values[1] != 0 && r.ts_ns >= r.values[1]),
        "begun after the intended start"
    );
    assert!(
        cycle.windows(2).all(|w| w[1].values[1] > w[0].values[1]),
        "deadlines advance"
    );
    let counted: u64 = of("servo.cycles").iter().map(|r| r.values[0]).sum();
    assert_eq!(counted, 300);
    assert!(of("servo.cycles")
        .iter()
        .all(|r| r.kind == Kind::Counter as u32));
    assert_eq!(reader.lost(), 0);
}
