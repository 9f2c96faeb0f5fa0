//! The flight recorder in a real kernel: a thread pinned to one CPU sleeps and wakes, and the
//! CPU's ring must hold its switches and wake-ups with its name, thread id and priority, on
//! CLOCK_MONOTONIC. Skips (saying why) when not root or when the kernel cannot load it.

use rtgauge_bpf::ring::{comm, Kind};
use rtgauge_bpf::{Error, Recorder};
use std::time::Duration;

fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid pointer to a timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn pin_to(cpu: u32) {
    // SAFETY: a zeroed cpu_set_t is an empty set; the calls only read it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu as usize, &mut set);
        assert_eq!(
            libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set),
            0
        );
    }
}

fn tid() -> u32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() as u32 }
}

#[test]
fn records_the_switches_and_wakeups_of_a_sleeping_thread() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: loading BPF programs needs root");
        return;
    }
    let cpu = (std::thread::available_parallelism().map_or(1, |n| n.get()) - 1) as u32;
    let recorder = match Recorder::start(&[cpu]) {
        Ok(r) => r,
        Err(e @ (Error::NotBuilt | Error::NoBtf | Error::NoBpf)) => {
            eprintln!("skipped: {e}");
            return;
        }
        Err(e) => panic!("{e}"),
    };
    let start = monotonic_ns();
    let sleeper = std::thread::Builder::new()
        .name("bpf-sleeper".into())
        .spawn(move || {
            pin_to(cpu);
            for _ in 0..20 {
                std::thread::sleep(Duration::from_micros(500));
            }
            tid()
        })
        .unwrap();
    let sleeper_tid = sleeper.join().unwrap();
    let end = monotonic_ns();
    let ring = recorder.snapshot(cpu).unwrap();
    let records = ring.ordered();
    assert!(ring.head > 0, "CPU {cpu} recorded nothing");
    let ours: Vec<_> = records
        .iter()
        .filter(|r| r.ts >= start && r.ts <= end)
        .filter(|r| r.kind() == Some(Kind::Switch) && r.b_pid == sleeper_tid)
        .collect();
    assert!(
        ours.len() >= 10,
        "expected at least 10 switches to bpf-sleeper ({sleeper_tid}) on CPU {cpu}, found {} among {} records",
        ours.len(),
        records.len()
    );
    // The thread names itself after it starts: its first switch may still carry the
    // spawner's name; every switch after its sleeps carries its own.
    let named = ours
        .iter()
        .filter(|r| comm(&r.b_comm) == "bpf-sleeper")
        .count();
    assert!(
        named >= ours.len() - 1,
        "{named} of {} switches carry the name bpf-sleeper",
        ours.len()
    );
    for r in &ours {
        assert_eq!(
            r.b_prio, 120,
            "a SCHED_OTHER thread at nice 0 has kernel priority 120"
        );
    }
    let wakeups = records
        .iter()
        .filter(|r| r.kind() == Some(Kind::Wakeup) && r.a_pid == sleeper_tid)
        .count();
    assert!(
        wakeups >= 10,
        "expected the sleeper's wake-ups, found {wakeups}"
    );
    assert!(
        records.windows(2).all(|w| w[0].ts <= w[1].ts),
        "the ring is not in time order"
    );
}
