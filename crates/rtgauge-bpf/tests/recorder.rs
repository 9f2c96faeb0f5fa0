//! The flight recorder in a real kernel: a thread pinned to one CPU sleeps and wakes, and the
//! CPU's ring must hold its switches and wake-ups with its name, thread id and priority, on
//! CLOCK_MONOTONIC; loopback UDP and a vmstat refresh must show as a NET_RX softirq and a
//! work item. Skips (saying why) when not root or when the kernel cannot load it.

use rtgauge_bpf::ring::{comm, Kind, RawRecord, RING_LEN};
use rtgauge_bpf::{to_event, Error, Recorder, Symbols};
use rtgauge_trace::EventKind;
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
    // Under disk or network load a CPU records 100,000 events/s and more (softirqs and work
    // items included), so 512 records hold only a few ms: the thread copies the ring after
    // each sleep, and the copies are joined by the records' sequence numbers.
    let (sleeper_tid, snapshots) = std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("bpf-sleeper".into())
            .spawn_scoped(scope, || {
                pin_to(cpu);
                let mut snapshots = Vec::new();
                for _ in 0..20 {
                    std::thread::sleep(Duration::from_micros(500));
                    snapshots.push(recorder.snapshot(cpu).unwrap());
                }
                (tid(), snapshots)
            })
            .unwrap()
            .join()
            .unwrap()
    });
    let end = monotonic_ns();
    let mut joined = std::collections::BTreeMap::new();
    for ring in &snapshots {
        // The oldest slots may be written again while the ring is copied: left out.
        for seq in ring.head.saturating_sub(RING_LEN as u64 - 16)..ring.head {
            joined.insert(seq, ring.recs[seq as usize % RING_LEN]);
        }
    }
    let records: Vec<RawRecord> = joined.into_values().collect();
    assert!(!records.is_empty(), "CPU {cpu} recorded nothing");
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
    // Softirqs and work items run with interrupts on: an interrupt's record can take the
    // next slot before theirs is stamped (recorder.bpf.c), so only the others are in order.
    let ordered: Vec<u64> = records
        .iter()
        .filter(|r| !interruptible(r))
        .map(|r| r.ts)
        .collect();
    assert!(
        ordered.windows(2).all(|w| w[0] <= w[1]),
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
    // Every timer callback is a function, named from /proc/kallsyms (root reads its
    // addresses); the sleeper's are hrtimer_wakeup, as tracefs names them.
    let callbacks: Vec<String> = records
        .iter()
        .filter_map(|r| match to_event(cpu, r)?.kind {
            EventKind::HrtimerEntry { function, .. } => Some(function),
            _ => None,
        })
        .collect();
    assert!(!Symbols::kernel().is_empty(), "no symbols read as root");
    assert!(
        callbacks.iter().all(|f| !f.starts_with("0x")),
        "{callbacks:?}"
    );
    assert!(
        callbacks.iter().any(|f| f == "hrtimer_wakeup"),
        "{callbacks:?}"
    );
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

/// Records of programs that run with interrupts on, or in an NMI.
fn interruptible(r: &RawRecord) -> bool {
    matches!(
        r.kind(),
        Some(Kind::SoftirqEntry | Kind::SoftirqExit | Kind::WorkStart | Kind::WorkEnd | Kind::Nmi)
    )
}

/// Sends `count` UDP datagrams over loopback to a socket of its own and reads them back: the
/// loopback device hands each to the NET_RX softirq of the sending CPU.
fn loopback_udp(count: usize) {
    let rx = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    rx.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
    let tx = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut buf = [0u8; 64];
    for i in 0..count {
        tx.send_to(&[i as u8; 32], rx.local_addr().unwrap())
            .unwrap();
        rx.recv(&mut buf).unwrap();
    }
}

/// The address of kernel function `name` in /proc/kallsyms (0 when hidden: kptr_restrict).
fn kernel_symbol(name: &str) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/kallsyms").ok()?;
    text.lines().find_map(|line| {
        let mut fields = line.split_whitespace();
        let address = fields.next()?;
        let _kind = fields.next()?;
        (fields.next()? == name).then(|| u64::from_str_radix(address, 16).ok())?
    })
}

/// The softirqs and work items of one attempt on `cpu`: (NET_RX entries with an exit after
/// them, work items of `function` with an end after them), between `start` and `end`.
fn softirqs_and_work(records: &[RawRecord], cpu: u32, start: u64, function: u64) -> (usize, usize) {
    let inside: Vec<&RawRecord> = records.iter().filter(|r| r.ts >= start).collect();
    let mut net_rx = 0;
    let mut work = 0;
    for (i, r) in inside.iter().enumerate() {
        let later = &inside[i + 1..];
        match to_event(cpu, r).map(|e| e.kind) {
            Some(EventKind::SoftirqEntry { vec: 3, name }) => {
                assert_eq!(name, "NET_RX");
                let exit = later
                    .iter()
                    .any(|x| x.kind() == Some(Kind::SoftirqExit) && x.arg == 3);
                net_rx += usize::from(exit);
            }
            Some(EventKind::WorkStart { function: f }) if r.function() == function => {
                // Named as tracefs names it, through the product's conversion.
                assert_eq!(f, "refresh_vm_stats");
                assert!(
                    comm(&r.a_comm).starts_with("kworker/"),
                    "{}",
                    comm(&r.a_comm)
                );
                let end = later
                    .iter()
                    .any(|x| x.kind() == Some(Kind::WorkEnd) && x.a_pid == r.a_pid);
                work += usize::from(end);
            }
            _ => {}
        }
    }
    (net_rx, work)
}

/// NET_RX from loopback UDP sent on the recorded CPU, and a work item that runs on every CPU
/// (writing /proc/sys/vm/stat_refresh queues refresh_vm_stats on each and waits for them):
/// both must be in the CPU's ring, the work item found by its function's address and named
/// after it.
#[test]
fn records_softirqs_and_work_items() {
    let Some((recorder, cpu)) = recorder_on_last_cpu() else {
        return;
    };
    if cfg!(target_arch = "x86_64") {
        // On x86 only the rarer vectors may be missing (threshold and deferred-error APIC
        // interrupts exist with machine-check support for AMD processors only).
        let missing = recorder.events_missing();
        assert!(
            missing.iter().all(|e| e.starts_with("irq_vectors:")
                && !e.contains("local_timer")
                && !e.contains("reschedule")
                && !e.contains("call_function")),
            "{missing:?}"
        );
    }
    let refresh = std::path::Path::new("/proc/sys/vm/stat_refresh");
    // None: no work item to look for (the file is missing or the addresses are hidden).
    let function = kernel_symbol("refresh_vm_stats").filter(|&a| a != 0 && refresh.exists());
    if function.is_none() {
        eprintln!("work items not checked: no /proc/sys/vm/stat_refresh or no address of refresh_vm_stats in /proc/kallsyms");
    }
    let mut found = (0, 0);
    for attempt in 1..=3 {
        let start = monotonic_ns();
        std::thread::scope(|scope| {
            scope.spawn(|| {
                pin_to(cpu);
                // The work item last: one record pair, the newest when the ring is copied.
                loopback_udp(20);
                if function.is_some() {
                    std::fs::write(refresh, "1").unwrap();
                }
            });
        });
        let records = recorder.snapshot(cpu).unwrap().ordered();
        found = softirqs_and_work(&records, cpu, start, function.unwrap_or(u64::MAX));
        eprintln!(
            "attempt {attempt}: {} NET_RX softirqs, {} refresh_vm_stats work items on CPU {cpu} ({} records)",
            found.0,
            found.1,
            records.len()
        );
        if found.0 >= 1 && (function.is_none() || found.1 >= 1) {
            return;
        }
    }
    panic!(
        "after 3 attempts: {} NET_RX softirqs (want ≥ 1), {} work items of refresh_vm_stats (want ≥ 1)",
        found.0, found.1
    );
}
