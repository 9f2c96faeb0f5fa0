//! Records a real trace fixture: a culprit (`rtg-culprit`, SCHED_FIFO 99) spinning 300 µs at
//! random times on a CPU while a 1 ms periodic sleeper at FIFO 95 runs on the same CPU.
//! Writes, in the format of tests/fixtures, the spikes above 200 µs ("# spike CPU PID
//! PROGRAMMED WOKE"), the culprit's own spin times ("# spin START END") and the instance's text
//! around those spikes to OUT_FILE (needs root and tracefs).
//!
//! cargo build -p rtgauge-trace && \
//! cargo run -p rtgauge-trace --example record_fixture -- CPU OUT_FILE target/debug/rtgauge-trace-helper

use std::fmt::Write as _;
use std::process::Command;

use rtgauge_trace::testing::{periodic_sleeper, pin_fifo, thread_id};
use rtgauge_trace::{TraceConfig, TraceSession};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [cpu, out, helper] = &args[..] else {
        eprintln!("usage: record_fixture CPU OUT_FILE HELPER");
        std::process::exit(2);
    };
    let cpu: usize = cpu.parse().expect("CPU is a number");
    let session = TraceSession::start(&TraceConfig::new(vec![cpu])).expect("trace session");
    let culprit = Command::new(helper)
        .args(["culprit", &cpu.to_string(), "300", "20000", "2000"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("culprit helper");
    let sleeper = std::thread::spawn(move || {
        pin_fifo(cpu, 95).expect("FIFO 95");
        (
            thread_id(),
            periodic_sleeper(1_000_000, 2000, u64::MAX, |_| {}),
        )
    });
    let (pid, wakeups) = sleeper.join().unwrap();
    let spins = String::from_utf8(culprit.wait_with_output().unwrap().stdout).unwrap();
    session.pause().unwrap();
    let text = std::fs::read_to_string(
        session
            .instance_dir()
            .join(format!("per_cpu/cpu{cpu}/trace")),
    )
    .unwrap();
    let spikes: Vec<_> = wakeups
        .iter()
        .filter(|w| w.latency_ns() > 200_000)
        .take(4)
        .collect();
    let mut fixture = String::new();
    for s in &spikes {
        writeln!(
            fixture,
            "# spike {cpu} {pid} {} {}",
            s.programmed_ns, s.woke_ns
        )
        .unwrap();
    }
    for spin in spins.lines() {
        writeln!(fixture, "# {spin}").unwrap();
    }
    for line in text.lines() {
        let keep = match rtgauge_trace::parse_line(line) {
            Some(rtgauge_trace::Line::Event(e)) => spikes
                .iter()
                .any(|s| e.ts_ns + 2_000_000 >= s.programmed_ns && e.ts_ns <= s.woke_ns + 200_000),
            _ => false,
        };
        if keep {
            fixture.push_str(line);
            fixture.push('\n');
        }
    }
    std::fs::write(out, fixture).unwrap();
    println!(
        "{} spikes above 200 us of {} wake-ups",
        spikes.len(),
        wakeups.len()
    );
}
