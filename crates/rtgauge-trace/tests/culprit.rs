//! End to end on this machine's kernel (needs root and tracefs; otherwise prints why and
//! passes): a culprit process `rtg-culprit` at SCHED_FIFO 99 spins 300 µs at random times on
//! the measured CPU while a measuring thread written here wakes every 1 ms at FIFO 95. Every
//! wake-up later than 200 µs is handed to a reader thread, which reads the trace window at
//! once. The culprit reports when it spun; for the spikes it caused (it ran for at least half of
//! the latency) and whose window holds recorded events, it must be named the dominant cause of
//! at least 90 %, with its run time within 10 % of its own account; windows without recorded
//! events (recording stopped for an earlier read, or nothing recorded: the virtual CPU not run
//! by its host) may be at most 25 % (9–17 % measured in CI rehearsals on this VM).

use std::process::{Command, Stdio};
use std::sync::mpsc::sync_channel;

use rtgauge_trace::testing::{
    last_cpu, periodic_sleeper, pin_fifo, session_or_skip, thread_id, CulpritSpins, Wakeup,
};
use rtgauge_trace::{attribute_trace, cause_name, AttributionConfig, Cause, Spike};

const HELPER: &str = env!("CARGO_BIN_EXE_rtgauge-trace-helper");
const LATE_NS: u64 = 200_000;
const MARGIN_NS: u64 = 1_000_000;
const DURATION_MS: u64 = 15_000;

#[test]
fn fifo_99_culprit_is_named_as_the_dominant_cause_of_its_spikes() {
    if last_cpu() == 0 {
        eprintln!("skipped: needs two CPUs (one measured, one for reading the trace)");
        return;
    }
    let cpu = last_cpu();
    let Some(session) = session_or_skip(vec![cpu]) else {
        return;
    };
    // Up to three attempts, every one printed: on a shared machine another real-time test can
    // take the measured CPU for part of a run (seen: a second rtgauge at FIFO 95 there).
    let mut failures = Vec::new();
    for attempt in 1..=3 {
        match one_attempt(cpu, &session) {
            Ok(()) => return,
            Err(why) => {
                eprintln!("attempt {attempt}: {why}");
                failures.push(why);
            }
        }
    }
    panic!("every attempt failed: {failures:?}");
}

fn one_attempt(cpu: usize, session: &rtgauge_trace::TraceSession) -> Result<(), String> {
    let culprit = Command::new(HELPER)
        .args([
            "culprit",
            &cpu.to_string(),
            "300",
            "40000",
            &DURATION_MS.to_string(),
        ])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();

    let (late_tx, late_rx) = sync_channel::<Wakeup>(1024);
    let (pid_tx, pid_rx) = sync_channel::<u32>(1);
    let measuring = std::thread::spawn(move || {
        pin_fifo(cpu, 95).expect("SCHED_FIFO 95");
        pid_tx.send(thread_id()).unwrap();
        periodic_sleeper(1_000_000, DURATION_MS as usize, LATE_NS, |w| {
            // try_send never blocks the measuring thread; a full queue drops the spike.
            let _ = late_tx.try_send(w);
        })
    });
    let thread_pid = pid_rx.recv().unwrap();
    // The reader runs off the measured CPU, promptly (the ring buffer keeps the latest events).
    pin_fifo(0, 50).expect("SCHED_FIFO 50 on CPU 0");
    let mut windows = Vec::new();
    while let Ok(first) = late_rx.recv() {
        // Spikes that come within 20 ms share one read: fewer stops of recording, fewer spikes
        // that fall into one (the buffer holds far more than 20 ms).
        std::thread::sleep(std::time::Duration::from_millis(20));
        let batch: Vec<Wakeup> = std::iter::once(first).chain(late_rx.try_iter()).collect();
        let ranges: Vec<(u64, u64)> = batch
            .iter()
            .map(|w| (w.programmed_ns - MARGIN_NS, w.woke_ns))
            .collect();
        let read_at = rtgauge_trace::testing::now_ns();
        let traces = session.read_windows(cpu, &ranges).unwrap();
        windows.extend(batch.into_iter().zip(traces).map(|(w, t)| (w, t, read_at)));
    }
    let wakeups = measuring.join().unwrap();
    let spins = CulpritSpins::parse(
        &String::from_utf8(culprit.wait_with_output().unwrap().stdout).unwrap(),
    );
    assert!(spins.len() > 100, "the culprit spun: {}", spins.len());

    let (mut caused, mut unrecorded, mut named, mut accurate) = (0, 0, 0, 0);
    for &(wakeup, ref trace, read_at) in &windows {
        let spike = Spike {
            cpu: cpu as u32,
            programmed_ns: wakeup.programmed_ns,
            woke_ns: wakeup.woke_ns,
            thread_pid,
        };
        let truth = spins.spun_within(spike.programmed_ns, spike.woke_ns);
        let a = attribute_trace(&spike, trace, &AttributionConfig::default());
        let dominant = a.dominant_contributor();
        eprintln!(
            "spike {:>6.1} us at {}: culprit spun {:>6.1} us in it; dominant {} {:.1} us (IRQ latency {:?} ns; {} events{}, read {:.1} ms after){}",
            a.latency_ns as f64 / 1000.0,
            spike.programmed_ns,
            truth as f64 / 1000.0,
            dominant.map_or("none".to_string(), |c| cause_name(&c.cause)),
            dominant.map_or(0.0, |c| c.duration_ns as f64 / 1000.0),
            a.irq_latency_ns,
            trace.events.len(),
            if trace.events_lost { ", some lost" } else { "" },
            read_at.saturating_sub(spike.woke_ns) as f64 / 1e6,
            if a.recording_stopped { " [recording was stopped in the window]" } else { "" },
        );
        if truth * 2 < a.latency_ns {
            continue;
        }
        caused += 1;
        // Windows the tool itself reports as holding nothing to explain: recording was stopped
        // for an earlier read, or no event at all was recorded on the CPU (seen on the shared
        // virtual machine, see docs/trace.md). They are counted apart and bounded below.
        if a.recording_stopped || a.events_in_window == 0 {
            unrecorded += 1;
            continue;
        }
        let culprit = dominant
            .filter(|c| matches!(&c.cause, Cause::Thread { comm, .. } if comm == "rtg-culprit"));
        named += usize::from(culprit.is_some());
        if culprit.is_some_and(|c| {
            spins.attributed_right(spike.programmed_ns, spike.woke_ns, c.duration_ns)
        }) {
            accurate += 1;
        } else {
            // A miss: everything that ran, for the reader of the test log.
            for c in &a.contributors {
                eprintln!(
                    "    {} {:.1} us",
                    cause_name(&c.cause),
                    c.duration_ns as f64 / 1000.0
                );
            }
        }
    }
    let late = wakeups.iter().filter(|w| w.latency_ns() > LATE_NS).count();
    let recorded = caused - unrecorded;
    eprintln!(
        "{} wake-ups, {late} later than 200 us ({} read), {} culprit spins; the culprit caused {caused}, {unrecorded} without recorded events; of the {recorded} others it was named in {named}, with its run time within 10 % in {accurate}",
        wakeups.len(),
        windows.len(),
        spins.len()
    );
    if recorded < 10 {
        return Err(format!(
            "enough recorded spikes caused by the culprit to judge: {recorded}"
        ));
    }
    if unrecorded * 4 > caused {
        return Err(format!(
            "at most 25 % of the windows without recorded events: {unrecorded} of {caused}"
        ));
    }
    if accurate * 10 < recorded * 9 {
        return Err(format!(
            "named with its run time within 10 % in {accurate} of {recorded}"
        ));
    }
    Ok(())
}
