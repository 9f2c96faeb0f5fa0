//! Attaches the flight recorder to the CPUs given (`flight_recorder CPUS SECONDS [--dump]
//! [--stats]`, e.g. `flight_recorder 1 30`), keeps it attached for SECONDS, then prints how
//! many events each CPU recorded and, with --dump, the last 20 of each. With --stats (root) it
//! turns the kernel's BPF statistics on while attached (off again when it exits) and prints
//! each program's runs and mean time per run, over all CPUs (a CPU not recorded returns after
//! the mask test). Used to measure the recorder's cost on a cyclic run (docs in the crate's
//! README).

use rtgauge_bpf::ring::{comm, softirq_name, vector_name, Kind};
use rtgauge_bpf::{Recorder, Symbols};
use std::time::Duration;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(cpus), Some(seconds)) = (args.first(), args.get(1)) else {
        eprintln!("usage: flight_recorder CPUS SECONDS [--dump]  (CPUS: 1 or 0,1)");
        std::process::exit(1);
    };
    let cpus: Vec<u32> = cpus
        .split(',')
        .map(|c| c.parse().expect("a CPU number"))
        .collect();
    let seconds: f64 = seconds.parse().expect("a number of seconds");
    let recorder = match Recorder::start(&cpus) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("flight_recorder: {e}");
            std::process::exit(1);
        }
    };
    let stats = args.iter().any(|a| a == "--stats").then(|| {
        aya::sys::enable_stats(aya::sys::Stats::RunTime).unwrap_or_else(|e| {
            eprintln!("flight_recorder: cannot turn the kernel's BPF statistics on: {e}");
            std::process::exit(1);
        })
    });
    std::thread::sleep(Duration::from_secs_f64(seconds));
    if stats.is_some() {
        println!("{:<32} {:>10} {:>10}", "program", "runs", "ns/run");
        for (name, runs, time) in recorder.program_stats() {
            let per_run = time.as_nanos() as u64 / runs.max(1);
            println!("{name:<32} {runs:>10} {per_run:>10}");
        }
    }
    drop(stats);
    let missing = recorder.events_missing();
    if !missing.is_empty() {
        println!("not recorded: {}", missing.join(", "));
    }
    for &cpu in &cpus {
        let ring = recorder.snapshot(cpu).expect("a CPU the recorder covers");
        println!("CPU {cpu}: {} events", ring.head);
        // What the ring holds now, by kind: which events a periodic wake-up leaves.
        let mut kinds: Vec<(String, usize)> = Vec::new();
        for r in ring.ordered() {
            let kind = r
                .kind()
                .map_or("unwritten".to_owned(), |k| format!("{k:?}"));
            match kinds.iter_mut().find(|(k, _)| *k == kind) {
                Some((_, n)) => *n += 1,
                None => kinds.push((kind, 1)),
            }
        }
        let kinds: Vec<String> = kinds.iter().map(|(k, n)| format!("{k} {n}")).collect();
        println!(
            "  last {} records: {}",
            ring.head.min(512),
            kinds.join(", ")
        );
        if args.iter().any(|a| a == "--dump") {
            let records = ring.ordered();
            for r in &records[records.len().saturating_sub(20)..] {
                let what = match r.kind() {
                    Some(Kind::Switch) => format!(
                        "switch {}:{} [{}] state {}{} => {}:{} [{}]",
                        comm(&r.a_comm),
                        r.a_pid,
                        r.a_prio,
                        r.arg,
                        if r.preempted() { " (preempted)" } else { "" },
                        comm(&r.b_comm),
                        r.b_pid,
                        r.b_prio
                    ),
                    Some(Kind::Wakeup) => format!(
                        "wakeup {}:{} [{}] target CPU {} by {}:{}",
                        comm(&r.a_comm),
                        r.a_pid,
                        r.a_prio,
                        r.arg,
                        comm(&r.b_comm),
                        r.b_pid
                    ),
                    Some(Kind::IrqEntry) => format!(
                        "irq {} ({}) entry, interrupting {}:{}",
                        r.arg,
                        comm(&r.b_comm),
                        comm(&r.a_comm),
                        r.a_pid
                    ),
                    Some(Kind::IrqExit) => format!("irq {} exit ret {}", r.arg, r.b_pid),
                    Some(Kind::VectorEntry) => format!("{} entry", vector_name(r.arg)),
                    Some(Kind::VectorExit) => format!("{} exit", vector_name(r.arg)),
                    Some(Kind::HrtimerEntry) => {
                        format!("hrtimer {} expires", function(r.hrtimer_function()))
                    }
                    Some(Kind::SoftirqEntry) => format!("softirq {} entry", softirq_name(r.arg)),
                    Some(Kind::SoftirqExit) => format!("softirq {} exit", softirq_name(r.arg)),
                    Some(Kind::WorkStart) => format!(
                        "work {} starts in {}:{}",
                        function(r.function()),
                        comm(&r.a_comm),
                        r.a_pid
                    ),
                    Some(Kind::WorkEnd) => format!("work ends in {}:{}", comm(&r.a_comm), r.a_pid),
                    Some(Kind::Nmi) => format!(
                        "nmi handler {} ran {} ns",
                        function(r.function()),
                        r.nmi_delta_ns()
                    ),
                    None => "(unwritten)".to_owned(),
                };
                println!(
                    "  {}.{:09} {what}",
                    r.ts / 1_000_000_000,
                    r.ts % 1_000_000_000
                );
            }
        }
    }
}

/// The function starting at `address` (/proc/kallsyms, as root), else the address.
fn function(address: u64) -> String {
    Symbols::kernel()
        .printed(address)
        .map_or_else(|| format!("{address:#x}"), str::to_owned)
}
