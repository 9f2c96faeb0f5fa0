//! The flight recorder in a real kernel: a thread pinned to one CPU sleeps and wakes, and the
//! CPU's ring must hold its switches and wake-ups with its name, thread id and priority, on
//! CLOCK_MONOTONIC. Skips (saying why) when not root or when the kernel cannot load it.

use rtgauge_bpf::ring::{comm, Kind};
use rtgauge_bpf::{to_event, Error, Recorder};
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

/// The recorder on the last CPU, or None (printed why) where it cannot run.
fn recorder_on_last_cpu() -> Option<(Recorder, u32)> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: loading BPF programs needs root");
        return None;
    }
    let cpu = (std::thread::available_parallelism().map_or(1, |n| n.get()) - 1) as u32;
    match Recorder::start(&[cpu]) {
        Ok(r) => Some((r, cpu)),
        Err(e @ (Error::NotBuilt | Error::NoBtf | Error::NoBpf)) => {
            eprintln!("skipped: {e}");
            None
        }
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn records_the_switches_and_wakeups_of_a_sleeping_thread() {
    let Some((recorder, cpu)) = recorder_on_last_cpu() else {
        return;
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
    // The idle task's name is left out in the kernel and given from the CPU when converted.
    for r in &records {
        if r.kind() == Some(Kind::Switch) && r.a_pid == 0 {
            assert_eq!(comm(&r.a_comm), "", "a switch out of idle carries a name");
            let event = to_event(cpu, r).unwrap();
            assert_eq!((event.comm, event.pid), (format!("swapper/{cpu}"), 0));
        }
    }
    // No program records the end of an hrtimer callback (kind 8 once).
    assert!(records.iter().all(|r| r.kind & 0xff != 8));
}

/// Runs `periods` sleeps of 300 µs on `cpu`, telling the watch before each that the wake-up was
/// asked for `ask_ns(now)`; returns the thread's id and the programmed times it gave.
fn watched_sleeper(
    recorder: &Recorder,
    cpu: u32,
    periods: usize,
    ask: fn(u64) -> u64,
) -> (u32, Vec<u64>) {
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                pin_to(cpu);
                let watch = recorder.watch(cpu).expect("a slot for the CPU");
                watch.start(tid(), 100_000);
                let mut asked = Vec::new();
                for _ in 0..periods {
                    let programmed = ask(monotonic_ns());
                    watch.programmed(programmed);
                    asked.push(programmed);
                    std::thread::sleep(Duration::from_micros(300));
                }
                // One more switch out, so the last period's window is sent too.
                watch.programmed(0);
                std::thread::sleep(Duration::from_micros(300));
                watch.stop();
                (tid(), asked)
            })
            .join()
            .unwrap()
    })
}

#[test]
fn sends_the_window_of_a_late_wakeup_and_nothing_for_on_time_ones() {
    let Some((recorder, cpu)) = recorder_on_last_cpu() else {
        return;
    };
    // On time: the wake-up asked for is 10 s away, so none of these is late.
    let (_, _) = watched_sleeper(&recorder, cpu, 5, |now| now + 10_000_000_000);
    assert!(
        recorder.next_spike().is_none(),
        "an on-time wake-up sent a window"
    );

    // Late: each wake-up is said to have been asked for 2 ms before the sleep began.
    let (sleeper, asked) = watched_sleeper(&recorder, cpu, 5, |now| now - 2_000_000);
    let mut spikes = Vec::new();
    while let Some(spike) = recorder.next_spike() {
        spikes.push(spike);
    }
    assert!(
        spikes.len() >= 4,
        "expected a window for (nearly) every late period, got {}",
        spikes.len()
    );
    for spike in &spikes {
        assert_eq!((spike.cpu, spike.tid), (cpu, sleeper));
        assert!(
            asked.contains(&spike.programmed_ns),
            "a spike for a wake-up never asked for"
        );
        assert!(spike.woke_ns > spike.programmed_ns + 2_000_000);
        let records = spike.ring.ordered();
        assert!(
            records.iter().any(|r| r.kind() == Some(Kind::Switch)
                && r.b_pid == sleeper
                && r.ts == spike.woke_ns),
            "the window holds the late switch in"
        );
    }
}
