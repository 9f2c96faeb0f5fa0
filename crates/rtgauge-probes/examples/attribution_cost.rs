//! What explaining a run's stalls costs after measuring (pure: no root, no tracefs); the
//! figures are recorded in docs/trace.md.
//!
//! Builds the text trace a busy CPU leaves (timer and device interrupts, softirqs, a
//! SCHED_FIFO thread and a kworker preempting the measuring thread, stalls with no event at
//! all), at `RATE` stalls per measured second for `SECONDS` seconds, parses it and explains
//! every stall the way the probes do:
//! - `noise`: every stall of the measuring thread (it never sleeps), against the whole trace;
//! - `cyclic`: a 1 ms timer sleeper's late wake-ups with a 1 ms margin (timer-woken);
//! - `response`: the same wake-ups, woken by an event another thread fired.
//!
//! `per-spike` explains each spike on its own (the noise probe against the whole trace, the
//! spike reader on a window filtered from the whole trace), `one-pass` goes over the trace
//! once ([`attribute_all`]; windows found by binary search).
//!
//! Prints the time per measured second and a digest of the results (so two builds can be
//! checked to explain the same trace the same way). It lives with the probes because it
//! explains stalls the way each of them does (the argument names the probe imitated).
//!
//! cargo run --release -p rtgauge-probes --example attribution_cost -- noise|cyclic|response SECONDS RATE one-pass|per-spike

use std::fmt::Write as _;
use std::time::Instant;

use rtgauge_trace::{
    attribute, attribute_all, parse_trace, Attribution, AttributionConfig, Cause, Spike,
};

const NOISE_PID: u32 = 1000;
const SLEEPER_PID: u32 = 1001;
const CULPRIT_PID: u32 = 2000;
const KWORKER_PID: u32 = 50;

/// Appends one event line in the kernel's text form.
fn line(out: &mut String, ts_ns: u64, comm: &str, pid: u32, what: &str) {
    let _ = writeln!(
        out,
        "{:>16}-{:<7} [001] d.h1. {:>6}.{:06}: {what}",
        comm,
        pid,
        ts_ns / 1_000_000_000,
        ts_ns % 1_000_000_000 / 1_000
    );
}

fn switch(out: &mut String, ts: u64, prev: (&str, u32, i32), next: (&str, u32, i32)) {
    let what = format!(
        "sched_switch: prev_comm={} prev_pid={} prev_prio={} prev_state=R ==> next_comm={} next_pid={} next_prio={}",
        prev.0, prev.1, prev.2, next.0, next.1, next.2
    );
    line(out, ts, prev.0, prev.1, &what);
}

/// One interruption of `task` starting at `t` (kind chosen by `i`); returns its length (ns).
fn interruption(out: &mut String, t: u64, i: u64, task: (&str, u32, i32)) -> u64 {
    let (comm, pid, _) = task;
    match i % 6 {
        0 => {
            line(out, t, comm, pid, "local_timer_entry: vector=236");
            line(
                out,
                t + 1_000,
                comm,
                pid,
                &format!("hrtimer_expire_entry: hrtimer=00000000f8b989eb function=tick_nohz_handler now={}", t + 1_000),
            );
            line(
                out,
                t + 4_000,
                comm,
                pid,
                "hrtimer_expire_exit: hrtimer=00000000f8b989eb",
            );
            line(out, t + 6_000, comm, pid, "local_timer_exit: vector=236");
            6_000
        }
        1 => {
            line(out, t, comm, pid, "softirq_entry: vec=1 [action=TIMER]");
            line(
                out,
                t + 9_000,
                comm,
                pid,
                "softirq_exit: vec=1 [action=TIMER]",
            );
            9_000
        }
        2 => {
            line(
                out,
                t,
                comm,
                pid,
                "irq_handler_entry: irq=24 name=virtio0-input.0",
            );
            line(
                out,
                t + 12_000,
                comm,
                pid,
                "irq_handler_exit: irq=24 ret=handled",
            );
            12_000
        }
        3 => {
            let culprit = ("rtg-culprit", CULPRIT_PID, 0);
            line(
                out,
                t,
                comm,
                pid,
                &format!("sched_waking: comm=rtg-culprit pid={CULPRIT_PID} prio=0 target_cpu=001"),
            );
            switch(out, t + 1_000, task, culprit);
            switch(out, t + 41_000, culprit, task);
            41_000
        }
        4 => {
            let kworker = ("kworker/1:1", KWORKER_PID, 120);
            switch(out, t, task, kworker);
            line(
                out,
                t + 1_000,
                kworker.0,
                kworker.1,
                "workqueue_execute_start: work struct 0000000065e47bdf: function vmstat_update",
            );
            line(
                out,
                t + 14_000,
                kworker.0,
                kworker.1,
                "workqueue_execute_end: work struct 0000000065e47bdf: function vmstat_update",
            );
            switch(out, t + 15_000, kworker, task);
            15_000
        }
        // Nothing recorded: time outside Linux.
        _ => 30_000,
    }
}

/// The noise probe's view: the measuring thread runs all the time; one stall per period (or
/// right after the previous one when it is longer); returns the trace, the stalls and the
/// time they cover.
fn noise_trace(seconds: u64, rate: u64) -> (String, Vec<Spike>, u64) {
    let period = 1_000_000_000 / rate;
    let task = ("rtgauge-noise", NOISE_PID, 120);
    let mut text = String::new();
    let mut spikes = Vec::new();
    let origin = 100_000_000_000;
    let mut t = origin;
    for i in 0..seconds * rate {
        let length = interruption(&mut text, t, i, task);
        spikes.push(Spike {
            cpu: 1,
            programmed_ns: t,
            woke_ns: t + length + 1_000,
            thread_pid: NOISE_PID,
        });
        t += period.max(length + 2_000);
    }
    (text, spikes, t - origin)
}

/// A 1 ms sleeper woken by its timer; one interruption per period lands on its wake-up,
/// `rate` per second more while it sleeps.
fn cyclic_trace(seconds: u64, rate: u64) -> (String, Vec<Spike>) {
    let sleeper = ("rtg-sleeper", SLEEPER_PID, 4);
    let idle = ("swapper/1", 0, 120);
    let idle_comm = ("<idle>", 0, 120);
    let mut text = String::new();
    let mut spikes = Vec::new();
    let origin = 100_000_000_000;
    let per_ms = (rate / 1000).max(1);
    let mut i = 0;
    for ms in 0..seconds * 1000 {
        let t = origin + ms * 1_000_000;
        // The wake-up: the timer fires, something delays the sleeper, it runs and sleeps.
        line(&mut text, t, "<idle>", 0, "local_timer_entry: vector=236");
        line(
            &mut text,
            t + 1_000,
            "<idle>",
            0,
            &format!(
                "hrtimer_expire_entry: hrtimer=000000003c71c1a8 function=hrtimer_wakeup now={}",
                t + 1_000
            ),
        );
        line(
            &mut text,
            t + 2_000,
            "<idle>",
            0,
            &format!("sched_waking: comm=rtg-sleeper pid={SLEEPER_PID} prio=4 target_cpu=001"),
        );
        line(
            &mut text,
            t + 3_000,
            "<idle>",
            0,
            "hrtimer_expire_exit: hrtimer=000000003c71c1a8",
        );
        line(
            &mut text,
            t + 4_000,
            "<idle>",
            0,
            "local_timer_exit: vector=236",
        );
        i += 1;
        let delay = interruption(&mut text, t + 5_000, i % 3, idle_comm);
        let on = t + 6_000 + delay;
        switch(&mut text, on, idle, sleeper);
        switch(&mut text, on + 3_000, sleeper, idle);
        spikes.push(Spike {
            cpu: 1,
            programmed_ns: t,
            woke_ns: on + 2_000,
            thread_pid: SLEEPER_PID,
        });
        // Interruptions of the idle CPU while the sleeper sleeps.
        for k in 1..per_ms {
            i += 1;
            let at = t + 60_000 + k * (900_000 / per_ms);
            interruption(&mut text, at, i % 3, idle_comm);
        }
    }
    (text, spikes)
}

/// Sums of the results: identical for two builds that explain the trace the same way.
fn digest(attributions: &[Attribution]) -> String {
    let mut per_kind = [0u64; 6];
    let mut dominant = 0u64;
    let mut segments = 0usize;
    let mut irq_split = 0u64;
    for a in attributions {
        for c in &a.contributors {
            let slot = match c.cause {
                Cause::Irq { .. } | Cause::Vector { .. } => 0,
                Cause::Softirq { .. } | Cause::Nmi { .. } => 1,
                Cause::Thread { .. } | Cause::ThreadedIrq { .. } => 2,
                Cause::Gap { .. } | Cause::Throttled { .. } => 3,
                Cause::Idle => 4,
                Cause::Unknown => 5,
            };
            per_kind[slot] += c.duration_ns * c.count as u64 + c.longest_ns;
        }
        dominant += a.dominant.map_or(0, |d| d as u64 + 1) * a.events_in_window as u64;
        segments += a.segments.len();
        irq_split += a.irq_latency_ns.unwrap_or(7) ^ a.thread_latency_ns.unwrap_or(3);
    }
    format!("{per_kind:?} dominant {dominant} segments {segments} split {irq_split}")
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: attribution_cost noise|cyclic|response SECONDS RATE one-pass|per-spike";
    let [shape, seconds, rate, how] = &args[..] else {
        panic!("{usage}");
    };
    let one_pass = match how.as_str() {
        "one-pass" => true,
        "per-spike" => false,
        _ => panic!("{usage}"),
    };
    let seconds: u64 = seconds.parse().expect(usage);
    let rate: u64 = rate.parse().expect(usage);
    let (text, spikes, config, margin, span_ns) = match shape.as_str() {
        "noise" => {
            let (text, spikes, span) = noise_trace(seconds, rate);
            (text, spikes, AttributionConfig::default(), 0, span)
        }
        "cyclic" | "response" => {
            let (text, spikes) = cyclic_trace(seconds, rate);
            let config = AttributionConfig {
                woken_by_timer: shape == "cyclic",
                ..AttributionConfig::default()
            };
            (text, spikes, config, 1_000_000, seconds * 1_000_000_000)
        }
        _ => panic!("{usage}"),
    };
    let started = Instant::now();
    let (events, lost) = parse_trace(&text);
    let parsed = started.elapsed();
    // The noise probe explains its stalls against the whole trace; the spike reader reads
    // the window of each spike (a margin before it to its wake-up) and explains it.
    let attributions: Vec<Attribution> = match (margin, one_pass) {
        (0, true) => attribute_all(&spikes, &events, lost, &config),
        (0, false) => spikes
            .iter()
            .map(|s| attribute(s, &events, lost, &config))
            .collect(),
        (_, true) => spikes
            .iter()
            .map(|s| {
                // What the session's read_windows does: two binary searches in the sorted
                // events of the CPU.
                let from = events.partition_point(|e| e.ts_ns < s.programmed_ns - margin);
                let to = events.partition_point(|e| e.ts_ns <= s.woke_ns);
                attribute(s, &events[from..to], lost, &config)
            })
            .collect(),
        (_, false) => spikes
            .iter()
            .map(|s| {
                let from = s.programmed_ns - margin;
                let window: Vec<_> = events
                    .iter()
                    .filter(|e| e.ts_ns >= from && e.ts_ns <= s.woke_ns)
                    .cloned()
                    .collect();
                attribute(s, &window, lost, &config)
            })
            .collect(),
    };
    let total = started.elapsed();
    let measured_s = span_ns as f64 / 1e9;
    let per_s = |d: std::time::Duration| d.as_secs_f64() * 1000.0 / measured_s;
    println!(
        "{shape} {how}: {measured_s:.2} s measured, {:.0} stalls/s: {} events, {} spikes; parse {:.1} ms, total {:.1} ms = {:.2} ms per measured second",
        spikes.len() as f64 / measured_s,
        events.len(),
        spikes.len(),
        parsed.as_secs_f64() * 1000.0,
        total.as_secs_f64() * 1000.0,
        per_s(total)
    );
    println!("digest {}", digest(&attributions));
}
