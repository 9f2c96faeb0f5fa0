//! The preemption map of a CPU: the platform's rules that take it from real-time tasks
//! (RT throttling, the cgroup's RT budget, the fair server, the deadline bandwidth already
//! admitted) and everything else that may run there ahead of a task: real-time and deadline
//! threads whose affinity includes the CPU (kernel and user), device interrupts routed to it
//! (threaded or not), the tick. Read through `rtgauge-sysinfo`; the demand of each thread
//! is measured from its scheduler statistics over a calibration window ([`Calibration`]).

use super::analysis::{self, Overheads};
use super::platform::{CpuPlatform, Preemptor, Server, ServerKind};
use super::spec::TaskSet;
use rtgauge_core::probe::ProbeOutput;
use rtgauge_core::units::format_duration_ns;
use rtgauge_sysinfo::{platform, procs, Fact, SysRoot};
use std::collections::BTreeMap;

/// A thread or interrupt on the map.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub preemptor: Preemptor,
    /// `thread` (kernel thread), `user thread`, `interrupt`, `tick`.
    pub kind: &'static str,
    /// `FIFO 50`, `DEADLINE`, `hard interrupt`.
    pub policy: String,
    /// The thread's ids (pid, tid), for the calibration.
    pub ids: Option<(u32, u32)>,
    /// The interrupt's number, for the traced calibration.
    pub irq: Option<u32>,
    /// Detail for the full map: `pid 812`, `threaded: irq/24-eth0 FIFO 50`, `HZ 250`.
    pub detail: String,
}

/// The map of one CPU.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CpuMap {
    pub cpu: usize,
    pub servers: Vec<Server>,
    /// Facts not read, or rules read and how they stand, one line each
    /// (`fair server: not readable without root and debugfs (...)`).
    pub notes: Vec<String>,
    pub entries: Vec<Entry>,
    /// Normal (SCHED_OTHER) threads that may run there: they preempt real-time tasks only in
    /// the servers' time.
    pub normal_threads: usize,
    /// The kernel's tick rate (CONFIG_HZ), when known.
    pub hz: Option<u64>,
}

impl CpuMap {
    /// What the analysis counts: the servers and the entries.
    pub fn platform(&self) -> CpuPlatform {
        CpuPlatform {
            servers: self.servers.clone(),
            preemptors: self.entries.iter().map(|e| e.preemptor.clone()).collect(),
        }
    }

    /// The entries whose demand was not measured (interrupts, the tick, threads whose
    /// statistics could not be read).
    pub fn not_measured(&self) -> Vec<&Entry> {
        self.entries
            .iter()
            .filter(|e| e.preemptor.demand.is_none())
            .collect()
    }
}

/// Reads the map of `cpu`, leaving out the threads of this process (the set's own).
pub fn read(root: &SysRoot, cpu: usize) -> CpuMap {
    let mut map = CpuMap {
        cpu,
        ..CpuMap::default()
    };
    read_servers(root, cpu, &mut map);
    let own = std::process::id();
    let tasks = procs::tasks(root);
    match &tasks {
        Ok(tasks) => {
            for t in tasks.iter().filter(|t| t.pid != own) {
                let allowed =
                    procs::affinity(root, t.pid, t.tid).map_or(true, |a| a.contains(&cpu));
                if !allowed {
                    continue;
                }
                if !t.is_rt() {
                    map.normal_threads += 1;
                    continue;
                }
                map.entries.push(thread_entry(root, t));
            }
        }
        Err(u) => map.notes.push(format!("threads: not read ({u})")),
    }
    match procs::irqs(root) {
        Ok(irqs) => {
            for irq in irqs.iter().filter(|i| i.affinity.contains(&cpu)) {
                let thread = tasks.as_ref().ok().and_then(|ts| {
                    ts.iter()
                        .find(|t| t.comm.starts_with(&format!("irq/{}-", irq.irq)))
                });
                let detail = match thread {
                    Some(t) => format!(
                        "threaded: its handler runs in {} ({} {})",
                        t.comm,
                        t.policy_name(),
                        t.rt_priority
                    ),
                    None => "not threaded: its handler runs in interrupt context".into(),
                };
                let count = irq.counts.get(&cpu).copied().unwrap_or(0);
                map.entries.push(Entry {
                    preemptor: Preemptor {
                        name: format!("irq {} {}", irq.irq, irq.name),
                        priority: Preemptor::ABOVE_ALL,
                        thread: false,
                        realtime: false,
                        demand: None,
                    },
                    kind: "interrupt",
                    policy: "above every thread".into(),
                    ids: None,
                    irq: Some(irq.irq),
                    detail: format!("{detail}; {count} taken on CPU {cpu} so far"),
                });
            }
        }
        Err(u) => map.notes.push(format!("device interrupts: not read ({u})")),
    }
    let hz = rtgauge_sysinfo::kernel::kernel_config(root)
        .ok()
        .and_then(|c| c.get("CONFIG_HZ").and_then(|v| v.parse::<u64>().ok()));
    map.hz = hz;
    map.entries.push(Entry {
        preemptor: Preemptor {
            name: "tick".into(),
            priority: Preemptor::ABOVE_ALL,
            thread: false,
            realtime: false,
            demand: None,
        },
        kind: "tick",
        policy: "above every thread".into(),
        ids: None,
        irq: None,
        detail: match hz {
            Some(hz) => format!(
                "the scheduler tick, every {} (HZ {hz}) while the CPU is busy, unless it is a nohz_full CPU running one task",
                format_duration_ns(1_000_000_000 / hz.max(1))
            ),
            None => "the scheduler tick (HZ unknown)".into(),
        },
    });
    map
}

fn thread_entry(root: &SysRoot, t: &procs::Task) -> Entry {
    let deadline = t.policy == procs::SCHED_DEADLINE;
    // A kernel thread has no command line.
    let kernel = root
        .read(&format!("/proc/{}/cmdline", t.pid))
        .is_ok_and(|c| c.is_empty());
    Entry {
        preemptor: Preemptor {
            name: t.comm.clone(),
            priority: if deadline {
                Preemptor::ABOVE_ALL
            } else {
                t.rt_priority as i32
            },
            thread: true,
            realtime: !deadline,
            demand: None,
        },
        kind: if kernel {
            "kernel thread"
        } else {
            "user thread"
        },
        policy: if deadline {
            "DEADLINE".into()
        } else {
            format!("{} {}", t.policy_name(), t.rt_priority)
        },
        ids: Some((t.pid, t.tid)),
        irq: None,
        detail: if t.pid == t.tid {
            format!("pid {}", t.pid)
        } else {
            format!("pid {} thread {}", t.pid, t.tid)
        },
    }
}

/// RT throttling (global and the cgroup's budget), the fair server, the deadline bandwidth.
fn read_servers(root: &SysRoot, cpu: usize, map: &mut CpuMap) {
    match platform::rt_throttling(root) {
        Ok((runtime, period)) if runtime >= 0 => {
            let period = period.unwrap_or(1_000_000).max(0) as u64;
            if (runtime as u64) < period {
                map.servers.push(Server {
                    kind: ServerKind::RtThrottling,
                    runtime_ns: runtime as u64 * 1_000,
                    period_ns: period * 1_000,
                    source: "kernel.sched_rt_runtime_us".into(),
                });
            } else {
                map.notes.push(
                    "RT throttling: the budget covers the whole window (never throttles)".into(),
                );
            }
        }
        Ok(_) => map
            .notes
            .push("RT throttling: off (kernel.sched_rt_runtime_us = -1)".into()),
        Err(u) => map.notes.push(format!("RT throttling: not read ({u})")),
    }
    match platform::rt_group_budget(root) {
        Ok(Some(g)) if g.runtime_us < g.period_us => map.servers.push(Server {
            kind: ServerKind::RtThrottling,
            runtime_ns: g.runtime_us as u64 * 1_000,
            period_ns: g.period_us as u64 * 1_000,
            source: format!("cpu cgroup {}", g.group),
        }),
        Ok(_) => {}
        Err(u) => map
            .notes
            .push(format!("the cgroup's RT budget: not read ({u})")),
    }
    match platform::fair_server(root, cpu) {
        Ok((runtime, period)) if runtime > 0 && period > 0 => map.servers.push(Server {
            kind: ServerKind::FairServer,
            runtime_ns: runtime,
            period_ns: period,
            source: format!("sched/fair_server/cpu{cpu}"),
        }),
        Ok(_) => map.notes.push("fair server: off (runtime 0)".into()),
        Err(u) if has_fair_server(root) => {
            // Linux 6.12 on starts every CPU's fair server at 50 ms per 1 s: unread, the
            // default is what is counted, and said so.
            map.servers.push(Server {
                kind: ServerKind::FairServer,
                runtime_ns: 50_000_000,
                period_ns: 1_000_000_000,
                source: "the kernel's default, assumed".into(),
            });
            map.notes.push(format!(
                "fair server: {u}; its default (50ms per 1s) is assumed"
            ));
        }
        Err(_) => map
            .notes
            .push("fair server: none (a kernel before 6.12)".into()),
    }
    match platform::deadline_bandwidth(root, cpu) {
        Ok((total, max)) => map.notes.push(format!(
            "deadline bandwidth admitted in CPU {cpu}'s root domain: {:.1} % of one CPU (fair servers included), of {:.1} % per CPU allowed",
            total * 100.0,
            max * 100.0
        )),
        Err(u) => map.notes.push(format!("deadline bandwidth admitted: {u}")),
    }
}

/// Sets the demand of the map's interrupts and of the tick from the kernel's trace of the
/// calibration window (`window_ns` long): each one's handler time per interrupt (the tick: the
/// local timer vector's), once per the window over its count. One that did not come has none.
pub fn measure_interrupts(map: &mut CpuMap, events: &[rtgauge_trace::TraceEvent], window_ns: u64) {
    use rtgauge_trace::EventKind;
    use std::collections::HashMap;
    // (time in handlers, handlers run) per IRQ number; the tick as u32::MAX.
    const TICK: u32 = u32::MAX;
    let mut open: HashMap<u32, u64> = HashMap::new();
    let mut took: HashMap<u32, (u64, u64)> = HashMap::new();
    for e in events {
        let (key, entry) = match &e.kind {
            EventKind::IrqEntry { irq, .. } => (*irq, true),
            EventKind::IrqExit { irq } => (*irq, false),
            EventKind::VectorEntry { name } if name == "local_timer" => (TICK, true),
            EventKind::VectorExit { name } if name == "local_timer" => (TICK, false),
            _ => continue,
        };
        if entry {
            open.insert(key, e.ts_ns);
        } else if let Some(start) = open.remove(&key) {
            let t = took.entry(key).or_default();
            t.0 += e.ts_ns.saturating_sub(start);
            t.1 += 1;
        }
    }
    let window_ns = window_ns.max(1);
    for e in map.entries.iter_mut().filter(|e| !e.preemptor.thread) {
        let key = match (e.kind, e.irq) {
            ("tick", _) => TICK,
            (_, Some(irq)) => irq,
            _ => continue,
        };
        // On a busy CPU the tick comes every 1/HZ, however rarely it came while measuring.
        let busy_tick = match (key, map.hz) {
            (TICK, Some(hz)) if hz > 0 => Some(1_000_000_000 / hz),
            _ => None,
        };
        e.preemptor.demand = Some(match took.get(&key) {
            // The trace's timestamps are µs: a handler shorter than that counts as 1 µs.
            Some(&(ns, n)) if n > 0 => (
                (ns / n).max(1_000),
                (window_ns / n).min(busy_tick.unwrap_or(u64::MAX)),
            ),
            _ => (0, window_ns),
        });
    }
}

/// Whether the running kernel has the deadline fair server (Linux 6.12 on).
fn has_fair_server(root: &SysRoot) -> bool {
    let release = root
        .read_trimmed("/proc/sys/kernel/osrelease")
        .unwrap_or_default();
    let mut parts = release
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|p| p.parse::<u32>().ok());
    matches!((parts.next(), parts.next()), (Some(major), Some(minor)) if (major, minor) >= (6, 12))
}

/// `the tick and 8 interrupts`, or the names when they are few.
pub fn count_of(entries: &[&Entry]) -> String {
    if entries.len() <= 3 {
        return entries
            .iter()
            .map(|e| e.preemptor.name.as_str())
            .collect::<Vec<_>>()
            .join(", ");
    }
    let irqs = entries.iter().filter(|e| e.kind == "interrupt").count();
    let tick = entries.iter().any(|e| e.kind == "tick");
    let threads = entries.len() - irqs - usize::from(tick);
    let mut parts = Vec::new();
    if tick {
        parts.push("the tick".to_string());
    }
    if irqs > 0 {
        parts.push(format!(
            "{irqs} interrupt{}",
            if irqs == 1 { "" } else { "s" }
        ));
    }
    if threads > 0 {
        parts.push(format!(
            "{threads} thread{}",
            if threads == 1 { "" } else { "s" }
        ));
    }
    parts.join(" and ")
}

/// The scheduler statistics of the map's threads at one moment, to measure their demand
/// over a window ([`Calibration::finish`]).
pub struct Calibration {
    at_ns: u64,
    stats: Vec<Option<(u64, u64)>>,
}

impl Calibration {
    pub fn start(root: &SysRoot, map: &CpuMap) -> Calibration {
        Calibration {
            at_ns: rtgauge_core::clock::now_ns(),
            stats: map.entries.iter().map(|e| stat(root, e).ok()).collect(),
        }
    }

    /// Sets each thread's demand from what it ran since [`Calibration::start`]: its time on
    /// the CPU per activation, once per the window's length over its activations (the
    /// average; a thread that did not run has none).
    pub fn finish(self, root: &SysRoot, map: &mut CpuMap) {
        let window = rtgauge_core::clock::now_ns()
            .saturating_sub(self.at_ns)
            .max(1);
        for (e, before) in map.entries.iter_mut().zip(self.stats) {
            let (Some((run0, n0)), Ok((run1, n1))) = (before, stat(root, e)) else {
                continue;
            };
            let (ran, times) = (run1.saturating_sub(run0), n1.saturating_sub(n0));
            e.preemptor.demand = Some(match (ran.checked_div(times), window.checked_div(times)) {
                (Some(work), Some(per)) => (work, per),
                _ => (0, window),
            });
        }
    }
}

fn stat(root: &SysRoot, e: &Entry) -> Fact<(u64, u64)> {
    match e.ids {
        Some((pid, tid)) => procs::schedstat(root, pid, tid),
        None => Err(rtgauge_sysinfo::Unknown::new(
            "an interrupt has no scheduler statistics",
        )),
    }
}

/// The full map, one line each: the rules, then each thread and interrupt, highest first,
/// with what it preempts among `tasks` (name, fixed priority; None for a task outside the
/// fixed priorities).
pub fn map_lines(map: &CpuMap, tasks: &[(String, Option<i32>)]) -> Vec<String> {
    let mut lines = vec![format!("CPU {}:", map.cpu)];
    for s in &map.servers {
        lines.push(format!(
            "  {}: real-time tasks may run {} of every {} ({}); beyond that they are stopped for {} per window",
            s.name(),
            format_duration_ns(s.allowance_ns()),
            format_duration_ns(s.period_ns),
            s.source,
            format_duration_ns(s.blackout_ns())
        ));
    }
    for n in &map.notes {
        lines.push(format!("  {n}"));
    }
    let mut entries: Vec<&Entry> = map.entries.iter().collect();
    entries.sort_by(|a, b| {
        b.preemptor
            .priority
            .cmp(&a.preemptor.priority)
            .then(a.preemptor.name.cmp(&b.preemptor.name))
    });
    lines.push(format!(
        "  may preempt a real-time task here ({} threads and interrupts; {} normal threads run only in the servers' time or when no real-time task wants the CPU):",
        entries.len(),
        map.normal_threads
    ));
    for e in entries {
        let preempts: Vec<&str> = tasks
            .iter()
            .filter(|(_, p)| p.is_some_and(|p| e.preemptor.preempts(p)))
            .map(|(n, _)| n.as_str())
            .collect();
        let whom = match (tasks.is_empty(), preempts.len()) {
            (true, _) => String::new(),
            (false, 0) => "; preempts none of the tasks".into(),
            (false, n) if n == tasks.len() => "; preempts every task".into(),
            (false, _) => format!("; preempts {}", preempts.join(", ")),
        };
        let demand = match e.preemptor.demand {
            Some((0, _)) => "; did not run while measured".to_string(),
            Some((w, per)) => format!(
                "; measured {} per {}",
                format_duration_ns(w),
                format_duration_ns(per)
            ),
            None => "; not measured".to_string(),
        };
        lines.push(format!(
            "    {} ({}, {}, {}){demand}{whom}",
            e.preemptor.name, e.kind, e.policy, e.detail
        ));
    }
    lines
}

/// One line per CPU for the task-set summary: `CPU 1: RT throttling 950ms of 1s; fair server
/// not readable; 14 threads and 3 interrupts may preempt (helper FIFO 95 measured 300µs per
/// 5ms, ...)`.
pub fn compact_line(map: &CpuMap) -> String {
    let servers: Vec<String> = map
        .servers
        .iter()
        .map(|s| format!("{} ({})", s.describe(), s.source))
        .collect();
    let threads = map.entries.iter().filter(|e| e.preemptor.thread).count();
    let irqs = map.entries.iter().filter(|e| e.kind == "interrupt").count();
    // What ran while measured, the largest share of the CPU first, four at most.
    let mut ran: Vec<(&Entry, u64, u64)> = map
        .entries
        .iter()
        .filter_map(|e| match e.preemptor.demand {
            Some((w, per)) if w > 0 => Some((e, w, per)),
            _ => None,
        })
        .collect();
    ran.sort_by(|a, b| (b.1 as f64 / b.2 as f64).total_cmp(&(a.1 as f64 / a.2 as f64)));
    let mut busy: Vec<String> = ran
        .iter()
        .take(4)
        .map(|(e, w, per)| {
            let policy = if e.preemptor.thread {
                format!(" {}", e.policy)
            } else {
                String::new()
            };
            format!(
                "{}{policy} {} per {}",
                e.preemptor.name,
                format_duration_ns(*w),
                format_duration_ns(*per)
            )
        })
        .collect();
    if ran.len() > 4 {
        busy.push(format!("{} more", ran.len() - 4));
    }
    let mut parts = vec![if servers.is_empty() {
        "no RT throttling".to_string()
    } else {
        servers.join(", ")
    }];
    parts.extend(
        map.notes
            .iter()
            .filter(|n| {
                n.starts_with("fair server")
                    || n.starts_with("RT throttling")
                    || n.contains("not read")
            })
            .map(|n| n.split(" (").next().unwrap_or(n).to_string()),
    );
    parts.push(format!(
        "{threads} real-time threads, {irqs} interrupts and the tick may preempt{}",
        if busy.is_empty() {
            String::new()
        } else {
            format!(" ({} ran while measured: {})", ran.len(), busy.join(", "))
        }
    ));
    format!("CPU {}: {}", map.cpu, parts.join("; "))
}

/// Metric-name prefixes of a prediction's platform terms: `term_ns:RT throttling` (taken
/// per window) and `term_per_ns:RT throttling` (the window).
pub const TERM_NS: &str = "term_ns:";
pub const TERM_PER_NS: &str = "term_per_ns:";

/// The platform's part of the run's output: each used CPU's map (compact in the
/// `platform-cpuN` parameter, in full in `preemption-map-cpuN`), the servers that act on the
/// set (a warning naming the budget, its fix and its cost) and what was not measured (a
/// warning: left out of the predictions, never silently).
pub(super) fn report(
    set: &TaskSet,
    first_cpu: usize,
    maps: &BTreeMap<usize, CpuMap>,
    overheads: &BTreeMap<usize, Overheads>,
    realtime: bool,
    out: &mut ProbeOutput,
) {
    let cpu_of = |i: usize| set.tasks[i].cpu.unwrap_or(first_cpu);
    for (&cpu, map) in maps {
        let on: Vec<usize> = (0..set.tasks.len()).filter(|&i| cpu_of(i) == cpu).collect();
        let tasks: Vec<(String, Option<i32>)> = on
            .iter()
            .map(|&i| {
                let t = &set.tasks[i];
                (
                    t.name.clone(),
                    t.policy.fixed_priority().then_some(t.priority),
                )
            })
            .collect();
        out.params
            .insert(format!("platform-cpu{cpu}"), compact_line(map));
        out.params.insert(
            format!("preemption-map-cpu{cpu}"),
            map_lines(map, &tasks).join("\n"),
        );
        if !realtime {
            continue;
        }
        let o = overheads.get(&cpu).copied().unwrap_or_default();
        let p = map.platform();
        for s in analysis::acting_servers(set, first_cpu, cpu, o, Some(&p)) {
            let demand = analysis::realtime_demand(set, first_cpu, cpu, o, Some(&p), s.period_ns);
            out.warnings.push(format!(
                "CPU {cpu}: its real-time tasks need {} of every {}, and {} ({}) lets them run {}: every real-time task there is stopped for {} each window, counted in their predictions; fix: {}",
                format_duration_ns(demand),
                format_duration_ns(s.period_ns),
                s.name(),
                s.source,
                format_duration_ns(s.allowance_ns()),
                format_duration_ns(s.blackout_ns()),
                s.fix()
            ));
        }
        let missing = map.not_measured();
        let mut not_counted: Vec<String> = map
            .notes
            .iter()
            .filter(|n| {
                (n.contains("not read") || n.contains("not traced")) && !n.contains("assumed")
            })
            .filter(|n| !n.starts_with("deadline bandwidth"))
            .map(|n| {
                let short = n.split(" (").next().unwrap_or(n);
                match short.split_once(": ") {
                    Some((what, why)) => format!("{what} ({why})"),
                    None => short.to_string(),
                }
            })
            .collect();
        if !missing.is_empty() {
            not_counted.push(format!("{} (not measured)", count_of(&missing)));
        }
        let idle: Vec<String> = map
            .entries
            .iter()
            .filter(|e| matches!(e.preemptor.demand, Some((0, _))))
            .map(|e| format!("{} {}", e.preemptor.name, e.policy))
            .collect();
        if !idle.is_empty() {
            not_counted.push(format!("{} (did not run while measured)", idle.join(", ")));
        }
        if !not_counted.is_empty() {
            out.params
                .insert(format!("not-counted-cpu{cpu}"), not_counted.join("; "));
        }
        if !missing.is_empty() {
            let names: Vec<String> = missing.iter().map(|e| e.preemptor.name.clone()).collect();
            out.warnings.push(format!(
                "CPU {cpu}: not measured, so left out of the predictions: {} (an interrupt's and the tick's time is read from the kernel's trace, which needs root and tracefs; the wake-up overhead holds what they cost in its window)",
                names.join(", ")
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, kind: &'static str, irq: Option<u32>) -> Entry {
        Entry {
            preemptor: Preemptor {
                name: name.into(),
                priority: Preemptor::ABOVE_ALL,
                thread: false,
                realtime: false,
                demand: None,
            },
            kind,
            policy: "above every thread".into(),
            ids: None,
            irq,
            detail: String::new(),
        }
    }

    /// Two eth0 interrupts of 12 µs and one tick of 5 µs in a 10-ms window: eth0 12 µs per
    /// 5 ms, the tick 5 µs per 4 ms (HZ 250: a busy CPU's rate, not the idle one seen); an
    /// interrupt that did not come has no time.
    #[test]
    fn interrupts_are_measured_from_the_trace_of_the_window() {
        let text = "\
 <idle>-0 [001] d.h..   100.000100: irq_handler_entry: irq=24 name=eth0
 <idle>-0 [001] d.h..   100.000112: irq_handler_exit: irq=24 ret=handled
 <idle>-0 [001] d.h..   100.002000: local_timer_entry: vector=236
 <idle>-0 [001] d.h..   100.002005: local_timer_exit: vector=236
 <idle>-0 [001] d.h..   100.005100: irq_handler_entry: irq=24 name=eth0
 <idle>-0 [001] d.h..   100.005112: irq_handler_exit: irq=24 ret=handled
";
        let (events, _) = rtgauge_trace::parse_trace(text);
        let mut map = CpuMap {
            cpu: 1,
            entries: vec![
                entry("irq 24 eth0", "interrupt", Some(24)),
                entry("irq 26 ttyS0", "interrupt", Some(26)),
                entry("tick", "tick", None),
            ],
            hz: Some(250),
            ..CpuMap::default()
        };
        measure_interrupts(&mut map, &events, 10_000_000);
        let demand: Vec<_> = map.entries.iter().map(|e| e.preemptor.demand).collect();
        assert_eq!(
            demand,
            [
                Some((12_000, 5_000_000)),
                Some((0, 10_000_000)),
                Some((5_000, 4_000_000))
            ]
        );
        assert!(map.not_measured().is_empty());
        assert!(
            compact_line(&map).contains("irq 24 eth0 12µs per 5ms"),
            "{}",
            compact_line(&map)
        );
    }
}
