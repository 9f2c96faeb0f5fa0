//! The recorder's records as the tracefs parser's [`TraceEvent`]s, so that attribution reads a
//! window from the kernel's rings exactly as it reads one from tracefs.

use crate::ring::{comm, softirq_name, vector_name, Kind, RawRecord};
use crate::symbols::{name_or_hex, Symbols};
use crate::Spike;
use rtgauge_trace::{CpuTrace, EventKind, Task, TraceEvent};
use std::time::Duration;

/// The kernel's report states (`TASK_REPORT` bits, in the order tracefs prints them).
const STATE_LETTERS: [&str; 7] = ["S", "D", "T", "t", "X", "Z", "P"];
/// `TASK_UNINTERRUPTIBLE | TASK_NOLOAD`: an idle kernel thread, printed "I".
const TASK_IDLE: u32 = 0x402;

/// The previous task's state as sched_switch prints it (`__trace_sched_switch_state`): "R+"
/// when it was preempted, "R" when runnable, else the letter of its highest report state.
pub fn state_letter(raw: u32, preempted: bool) -> &'static str {
    if preempted {
        return "R+";
    }
    if raw == TASK_IDLE {
        return "I";
    }
    let report = raw & 0x7f;
    if report == 0 {
        return "R";
    }
    STATE_LETTERS[(31 - report.leading_zeros()) as usize]
}

/// The name of task `pid` on `cpu`: as recorded, except the idle task's, which the program
/// leaves out (pid 0 is "swapper/N" on CPU N, as the kernel names it).
fn name(cpu: u32, comm_raw: &[u8; 16], pid: u32) -> String {
    if pid == 0 {
        format!("swapper/{cpu}")
    } else {
        comm(comm_raw)
    }
}

fn task(cpu: u32, comm_raw: &[u8; 16], pid: u32, prio: i32) -> Task {
    Task {
        comm: name(cpu, comm_raw, pid),
        pid,
        prio,
    }
}

/// One record as an event of `cpu`, its functions named from the running kernel's
/// /proc/kallsyms ([`Symbols::kernel`]); `None` for a slot never written.
pub fn to_event(cpu: u32, r: &RawRecord) -> Option<TraceEvent> {
    to_event_named(cpu, r, Symbols::kernel())
}

/// [`to_event`] with the functions (hrtimer callbacks, work functions, NMI handlers) named
/// from `symbols`, as the tracefs parser reads them: the bare name of a callback or handler
/// (a module's too), a work function as `%ps` prints it ("name [module]" for a module's).
/// An address where no function starts stays in hex.
pub fn to_event_named(cpu: u32, r: &RawRecord, symbols: &Symbols) -> Option<TraceEvent> {
    let current = || name(cpu, &r.a_comm, r.a_pid);
    let (comm_now, pid_now, kind) = match r.kind()? {
        Kind::Switch => (
            current(),
            r.a_pid,
            EventKind::Switch {
                prev: task(cpu, &r.a_comm, r.a_pid, r.a_prio),
                prev_state: state_letter(r.arg, r.preempted()).to_owned(),
                next: task(cpu, &r.b_comm, r.b_pid, r.b_prio),
            },
        ),
        Kind::Wakeup => (
            name(cpu, &r.b_comm, r.b_pid),
            r.b_pid,
            EventKind::Wakeup {
                task: task(cpu, &r.a_comm, r.a_pid, r.a_prio),
                target_cpu: Some(r.arg),
                waking: false,
            },
        ),
        Kind::IrqEntry => (
            current(),
            r.a_pid,
            EventKind::IrqEntry {
                irq: r.arg,
                name: comm(&r.b_comm),
            },
        ),
        Kind::IrqExit => (current(), r.a_pid, EventKind::IrqExit { irq: r.arg }),
        Kind::VectorEntry => (
            current(),
            r.a_pid,
            EventKind::VectorEntry {
                name: vector_name(r.arg).to_owned(),
            },
        ),
        Kind::VectorExit => (
            current(),
            r.a_pid,
            EventKind::VectorExit {
                name: vector_name(r.arg).to_owned(),
            },
        ),
        Kind::HrtimerEntry => {
            let address = r.hrtimer_function();
            let function = name_or_hex(symbols.function(address), address);
            (
                current(),
                r.a_pid,
                EventKind::HrtimerEntry {
                    function,
                    // Not recorded: the timestamp is in nanoseconds already (tracefs
                    // gives microseconds, which the expiry's own reading refines).
                    now_ns: None,
                },
            )
        }
        Kind::SoftirqEntry => (
            current(),
            r.a_pid,
            EventKind::SoftirqEntry {
                vec: r.arg,
                name: softirq_name(r.arg).into_owned(),
            },
        ),
        Kind::SoftirqExit => (
            current(),
            r.a_pid,
            EventKind::SoftirqExit {
                vec: r.arg,
                name: softirq_name(r.arg).into_owned(),
            },
        ),
        Kind::WorkStart => (
            current(),
            r.a_pid,
            EventKind::WorkStart {
                function: name_or_hex(symbols.printed(r.function()), r.function()),
            },
        ),
        Kind::WorkEnd => (current(), r.a_pid, EventKind::WorkEnd),
        Kind::Nmi => (
            current(),
            r.a_pid,
            EventKind::Nmi {
                handler: name_or_hex(symbols.function(r.function()), r.function()),
                delta_ns: r.nmi_delta_ns(),
            },
        ),
    };
    Some(TraceEvent {
        ts_ns: r.ts,
        cpu,
        comm: comm_now,
        pid: pid_now,
        kind,
    })
}

impl Spike {
    /// The window `from_ns ..= to_ns` of this spike's ring as attribution's input, in time
    /// order, functions named from the running kernel's /proc/kallsyms. `events_lost` when
    /// the ring had already dropped records from inside the window.
    pub fn window(&self, from_ns: u64, to_ns: u64) -> CpuTrace {
        self.window_named(from_ns, to_ns, Symbols::kernel())
    }

    /// [`Spike::window`] with the functions named from `symbols`.
    pub fn window_named(&self, from_ns: u64, to_ns: u64, symbols: &Symbols) -> CpuTrace {
        let records = self.ring.ordered();
        let wrapped = self.ring.head as usize > records.len();
        // The oldest by time, not by slot: a program interrupted (by an interrupt's or an
        // NMI's program) after taking its slot stamps its record after the interrupting one's.
        let oldest = records.iter().map(|r| r.ts).min();
        let events_lost = wrapped && oldest.is_some_and(|ts| ts > from_ns);
        let mut events: Vec<TraceEvent> = records
            .iter()
            .filter(|r| (from_ns..=to_ns).contains(&r.ts))
            .filter_map(|r| to_event_named(self.cpu, r, symbols))
            .collect();
        // Stable: records of the same nanosecond keep the order they were written in.
        events.sort_by_key(|e| e.ts_ns);
        CpuTrace {
            cpu: self.cpu as usize,
            events,
            events_lost,
            paused_for: Duration::ZERO,
            window_incomplete: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tests' kernel: a few functions at fixed addresses, on whatever machine runs them.
    const KALLSYMS: &str = "\
ffffffff81100000 t hrtimer_wakeup
ffffffff8100abcd t perf_event_nmi_handler
ffffffff81234560 t vmstat_update
ffffffffc0a01000 t e1000_watchdog\t[e1000e]
";

    fn symbols() -> &'static Symbols {
        static SYMBOLS: std::sync::OnceLock<Symbols> = std::sync::OnceLock::new();
        SYMBOLS.get_or_init(|| Symbols::parse(KALLSYMS))
    }

    /// The conversion with the tests' kernel, not the machine's.
    fn to_event(cpu: u32, r: &RawRecord) -> Option<TraceEvent> {
        to_event_named(cpu, r, symbols())
    }

    #[test]
    fn states_read_as_tracefs_prints_them() {
        assert_eq!(state_letter(0, false), "R");
        assert_eq!(state_letter(0, true), "R+");
        assert_eq!(state_letter(1, false), "S");
        // TASK_INTERRUPTIBLE | TASK_FREEZABLE, seen on this VM for sleeping threads.
        assert_eq!(state_letter(0x2001, false), "S");
        assert_eq!(state_letter(2, false), "D");
        assert_eq!(state_letter(TASK_IDLE, false), "I");
        assert_eq!(state_letter(0x40, false), "P");
    }

    fn record(kind: u32, ts: u64) -> RawRecord {
        let mut a_comm = [0u8; 16];
        a_comm[..4].copy_from_slice(b"prev");
        let mut b_comm = [0u8; 16];
        b_comm[..4].copy_from_slice(b"next");
        RawRecord {
            ts,
            kind,
            arg: 1,
            a_pid: 10,
            a_prio: 120,
            b_pid: 20,
            b_prio: 4,
            a_comm,
            b_comm,
        }
    }

    #[test]
    fn a_switch_is_recorded_by_the_task_leaving() {
        let e = to_event(1, &record(1, 5)).unwrap();
        assert_eq!((e.ts_ns, e.cpu, e.comm.as_str(), e.pid), (5, 1, "prev", 10));
        let EventKind::Switch {
            prev,
            prev_state,
            next,
        } = e.kind
        else {
            panic!("{:?}", e.kind)
        };
        assert_eq!(
            (prev.pid, prev_state.as_str(), next.comm.as_str(), next.prio),
            (10, "S", "next", 4)
        );
    }

    #[test]
    fn a_wakeup_is_recorded_by_the_waker() {
        let e = to_event(0, &record(2, 5)).unwrap();
        assert_eq!((e.comm.as_str(), e.pid), ("next", 20));
        let EventKind::Wakeup {
            task,
            target_cpu,
            waking,
        } = e.kind
        else {
            panic!("{:?}", e.kind)
        };
        assert_eq!((task.pid, target_cpu, waking), (10, Some(1), false));
    }

    #[test]
    fn vectors_and_hrtimers_read_as_tracefs_names_them() {
        let e = to_event(1, &record(5, 5)).unwrap();
        assert_eq!(
            e.kind,
            EventKind::VectorEntry {
                name: "reschedule".to_owned()
            }
        );
        assert_eq!((e.comm.as_str(), e.pid), ("prev", 10));
        // tracefs: "hrtimer_expire_entry: hrtimer=… function=hrtimer_wakeup now=…".
        let mut r = record(7, 5);
        r.b_comm[..8].copy_from_slice(&0xffff_ffff_8110_0000u64.to_ne_bytes());
        let e = to_event(1, &r).unwrap();
        assert_eq!(
            e.kind,
            EventKind::HrtimerEntry {
                function: "hrtimer_wakeup".to_owned(),
                now_ns: None
            }
        );
        // Where no function starts, and with no table (kallsyms hidden): the address.
        r.b_comm[..8].copy_from_slice(&0xffff_ffff_8110_0008u64.to_ne_bytes());
        let EventKind::HrtimerEntry { function, .. } = to_event(1, &r).unwrap().kind else {
            panic!()
        };
        assert_eq!(function, "0xffffffff81100008");
        r.b_comm[..8].copy_from_slice(&0xffff_ffff_8110_0000u64.to_ne_bytes());
        let hidden = Symbols::default();
        let EventKind::HrtimerEntry { function, .. } = to_event_named(1, &r, &hidden).unwrap().kind
        else {
            panic!()
        };
        assert_eq!(function, "0xffffffff81100000");
    }

    #[test]
    fn softirqs_read_as_tracefs_names_them() {
        let mut r = record(9, 5);
        r.arg = 3;
        let e = to_event(1, &r).unwrap();
        assert_eq!(
            e.kind,
            EventKind::SoftirqEntry {
                vec: 3,
                name: "NET_RX".to_owned()
            }
        );
        // Recorded by the task the softirq interrupted (or ksoftirqd), as tracefs shows it.
        assert_eq!((e.comm.as_str(), e.pid), ("prev", 10));
        r.kind = 10;
        r.arg = 9;
        assert_eq!(
            to_event(1, &r).unwrap().kind,
            EventKind::SoftirqExit {
                vec: 9,
                name: "RCU".to_owned()
            }
        );
        // A vector number the kernel's table does not have is kept as a number.
        r.arg = 42;
        assert_eq!(
            to_event(1, &r).unwrap().kind,
            EventKind::SoftirqExit {
                vec: 42,
                name: "42".to_owned()
            }
        );
    }

    #[test]
    fn work_items_are_named_by_their_function() {
        // tracefs: "workqueue_execute_start: work struct …: function vmstat_update".
        let mut r = record(11, 5);
        r.b_comm[..8].copy_from_slice(&0xffff_ffff_8123_4560u64.to_ne_bytes());
        r.b_comm[8..].fill(0);
        let e = to_event(1, &r).unwrap();
        assert_eq!(
            e.kind,
            EventKind::WorkStart {
                function: "vmstat_update".to_owned()
            }
        );
        assert_eq!((e.comm.as_str(), e.pid), ("prev", 10));
        // A module's as `%ps` prints it and the parser keeps it (the rest of the line).
        r.b_comm[..8].copy_from_slice(&0xffff_ffff_c0a0_1000u64.to_ne_bytes());
        assert_eq!(
            to_event(1, &r).unwrap().kind,
            EventKind::WorkStart {
                function: "e1000_watchdog [e1000e]".to_owned()
            }
        );
        r.b_comm[..8].copy_from_slice(&0xffff_ffff_c0a0_1001u64.to_ne_bytes());
        assert_eq!(
            to_event(1, &r).unwrap().kind,
            EventKind::WorkStart {
                function: "0xffffffffc0a01001".to_owned()
            }
        );
        let e = to_event(1, &record(12, 6)).unwrap();
        assert_eq!((e.kind, e.pid, e.ts_ns), (EventKind::WorkEnd, 10, 6));
    }

    #[test]
    fn an_nmi_gives_its_handler_and_how_long_it_ran() {
        let mut r = record(13, 5_000);
        r.b_comm[..8].copy_from_slice(&0xffff_ffff_8100_abcdu64.to_ne_bytes());
        r.b_comm[8..].copy_from_slice(&1_234i64.to_ne_bytes());
        // tracefs: "nmi_handler: perf_event_nmi_handler() delta_ns: 1234 handled: 1".
        let e = to_event(0, &r).unwrap();
        assert_eq!(
            e.kind,
            EventKind::Nmi {
                handler: "perf_event_nmi_handler".to_owned(),
                delta_ns: 1_234
            }
        );
        // A module's handler bare, as the parser keeps the first word.
        r.b_comm[..8].copy_from_slice(&0xffff_ffff_c0a0_1000u64.to_ne_bytes());
        let EventKind::Nmi { handler, .. } = to_event(0, &r).unwrap().kind else {
            panic!()
        };
        assert_eq!(handler, "e1000_watchdog");
        assert_eq!((e.comm.as_str(), e.pid, e.ts_ns), ("prev", 10, 5_000));
    }

    /// Whatever bytes a record holds (one overwritten half-way by an interrupting program),
    /// converting it never panics.
    #[test]
    fn any_bytes_convert_without_panicking() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..20_000 {
            let mut r = record(0, 0);
            r.ts = next();
            r.kind = (next() % 20) as u32 | (next() as u32 & 0xffff_ff00);
            r.arg = next() as u32;
            (r.a_pid, r.b_pid) = (next() as u32 % 3, next() as u32);
            (r.a_prio, r.b_prio) = (next() as i32, next() as i32);
            r.a_comm = (u128::from(next()) << 64 | u128::from(next())).to_ne_bytes();
            r.b_comm = (u128::from(next()) << 64 | u128::from(next())).to_ne_bytes();
            let _ = to_event(next() as u32, &r);
        }
    }

    #[test]
    fn unwritten_slots_and_unknown_kinds_are_no_events() {
        assert!(to_event(0, &record(0, 5)).is_none());
        // 8 was the hrtimer callback's end, no longer recorded.
        assert!(to_event(0, &record(8, 5)).is_none());
    }

    /// The program leaves the idle task's name out (pid 0, empty name).
    fn idle(mut r: RawRecord, a: bool, b: bool) -> RawRecord {
        if a {
            (r.a_pid, r.a_comm) = (0, [0; 16]);
        }
        if b {
            (r.b_pid, r.b_comm) = (0, [0; 16]);
        }
        r
    }

    #[test]
    fn the_idle_task_is_named_after_its_cpu() {
        // Out of idle: the switch from pid 0 names it swapper/N, as the kernel does.
        let e = to_event(3, &idle(record(1, 5), true, false)).unwrap();
        assert_eq!((e.comm.as_str(), e.pid), ("swapper/3", 0));
        let EventKind::Switch { prev, next, .. } = e.kind else {
            panic!("{:?}", e.kind)
        };
        assert_eq!((prev.comm.as_str(), prev.pid), ("swapper/3", 0));
        assert_eq!((next.comm.as_str(), next.pid), ("next", 20));
        // Into idle.
        let e = to_event(1, &idle(record(1, 5), false, true)).unwrap();
        let EventKind::Switch { next, .. } = e.kind else {
            panic!("{:?}", e.kind)
        };
        assert_eq!((next.comm.as_str(), next.pid), ("swapper/1", 0));
        // The timer interrupt and the wake-up it makes, recorded in idle.
        for kind in [3, 5, 6, 7] {
            let e = to_event(1, &idle(record(kind, 5), true, false)).unwrap();
            assert_eq!((e.comm.as_str(), e.pid), ("swapper/1", 0), "kind {kind}");
        }
        let e = to_event(1, &idle(record(2, 5), false, true)).unwrap();
        assert_eq!((e.comm.as_str(), e.pid), ("swapper/1", 0));
        // A task that is not idle keeps the name recorded.
        let e = to_event(1, &record(5, 5)).unwrap();
        assert_eq!((e.comm.as_str(), e.pid), ("prev", 10));
    }

    /// A record as the program writes it: `a` is the task recorded (the one leaving, the
    /// woken one, the interrupted one), `b` the next task or the waker.
    fn rec(ts: u64, kind: u32, arg: u32, a: (u32, &str, i32), b: (u32, &str, i32)) -> RawRecord {
        let name = |pid: u32, s: &str| {
            let mut raw = [0u8; 16];
            if pid != 0 {
                raw[..s.len()].copy_from_slice(s.as_bytes());
            }
            raw
        };
        RawRecord {
            ts,
            kind,
            arg,
            a_pid: a.0,
            a_prio: a.2,
            b_pid: b.0,
            b_prio: b.2,
            a_comm: name(a.0, a.1),
            b_comm: name(b.0, b.1),
        }
    }

    /// The hrtimer callback's end is not recorded: with it (as tracefs gives it) and without
    /// it, a late wake-up behind a spinning task is attributed the same (causes, durations,
    /// the IRQ/thread split); only the number of events in the window differs.
    #[test]
    fn the_end_of_an_hrtimer_callback_changes_no_attribution() {
        use rtgauge_trace::{attribute_trace, AttributionConfig, Spike};
        const US: u64 = 1_000;
        let idle = (0, "", 120);
        let hog = (700, "hog", 9);
        let thread = (800, "sleeper", 19);
        let t0 = 1_000_000 * US;
        let records = [
            rec(t0, 1, 1, thread, idle),                 // the thread sleeps
            rec(t0 + 100 * US, 1, 0, idle, hog),         // the hog runs
            rec(t0 + 1_000 * US, 5, 0, hog, idle),       // local_timer entry
            rec(t0 + 1_002 * US, 7, 0, hog, idle),       // hrtimer entry
            rec(t0 + 1_003 * US, 2, 1, thread, hog),     // wakeup of the thread
            rec(t0 + 1_005 * US, 6, 0, hog, idle),       // local_timer exit
            rec(t0 + 4_000 * US, 1, 0x100, hog, thread), // the hog is preempted at last
        ];
        let mut events: Vec<TraceEvent> = records.iter().filter_map(|r| to_event(1, r)).collect();
        assert_eq!(events[2].comm, "hog");
        assert_eq!(events[0].kind, to_event(1, &records[0]).unwrap().kind);
        let spike = Spike {
            cpu: 1,
            programmed_ns: t0 + 1_000 * US,
            woke_ns: t0 + 4_001 * US,
            thread_pid: 800,
        };
        let window = |events: Vec<TraceEvent>| CpuTrace {
            cpu: 1,
            events,
            events_lost: false,
            paused_for: Duration::ZERO,
            window_incomplete: false,
        };
        let config = AttributionConfig::default();
        let without = attribute_trace(&spike, &window(events.clone()), &config);
        let mut exit = events[3].clone();
        exit.ts_ns = t0 + 1_004 * US;
        exit.kind = EventKind::HrtimerExit;
        events.insert(5, exit);
        let mut with = attribute_trace(&spike, &window(events), &config);
        assert_eq!(with.events_in_window, without.events_in_window + 1);
        with.events_in_window = without.events_in_window;
        assert_eq!(with, without);
        let dominant = without.dominant_contributor().unwrap();
        assert!(
            rtgauge_trace::cause_name(&dominant.cause).contains("hog"),
            "{:?}",
            dominant.cause
        );
        assert_eq!(without.timer_irq_ns, Some(t0 + 1_002 * US));
    }

    /// The recorder's path end to end in user space: `records` in a spike's ring, its
    /// window from 1 ms before `programmed` to `woke`, attributed as the lead's code does.
    fn attribute_ring(
        records: &[RawRecord],
        thread: u32,
        programmed: u64,
        woke: u64,
    ) -> rtgauge_trace::Attribution {
        let blank = record(0, 0);
        let mut ring = Box::new(crate::ring::RawRing {
            head: records.len() as u64,
            recs: [blank; crate::ring::RING_LEN],
        });
        ring.recs[..records.len()].copy_from_slice(records);
        let spike = Spike {
            cpu: 1,
            tid: thread,
            programmed_ns: programmed,
            woke_ns: woke,
            ring,
        };
        let window = spike.window_named(programmed - 1_000_000, woke, symbols());
        assert!(!window.events_lost);
        let spike = rtgauge_trace::Spike {
            cpu: 1,
            programmed_ns: programmed,
            woke_ns: woke,
            thread_pid: thread,
        };
        rtgauge_trace::attribute_trace(&spike, &window, &Default::default())
    }

    /// A record of softirq `vec` (9: entry, 10: exit) recorded in `current`'s context.
    fn softirq(ts: u64, kind: u32, vec: u32, current: (u32, &str, i32)) -> RawRecord {
        rec(ts, kind, vec, current, (0, "", 0))
    }

    /// A record whose `b_comm` holds an address (hrtimer entry, work start).
    fn with_function(mut r: RawRecord, function: u64) -> RawRecord {
        r.b_comm = [0; 16];
        r.b_comm[..8].copy_from_slice(&function.to_ne_bytes());
        r
    }

    /// A thread woken by its timer on an idle CPU waits while the interrupt's exit runs a
    /// 2-ms NET_RX softirq: the recorder's records name that softirq.
    #[test]
    fn a_late_wakeup_behind_a_softirq_is_attributed_to_it() {
        const US: u64 = 1_000;
        let idle = (0, "", 120);
        let thread = (800, "sleeper", 19);
        let t0 = 1_000_000 * US;
        let records = [
            rec(t0, 1, 1, thread, idle),            // the thread sleeps
            rec(t0 + 1_000 * US, 5, 0, idle, idle), // local_timer entry
            with_function(
                rec(t0 + 1_002 * US, 7, 0, idle, idle),
                0xffff_ffff_8110_0000,
            ),
            rec(t0 + 1_003 * US, 2, 1, thread, idle), // wakeup of the thread
            rec(t0 + 1_005 * US, 6, 0, idle, idle),   // local_timer exit
            softirq(t0 + 1_006 * US, 9, 3, idle),     // NET_RX on the way out
            softirq(t0 + 3_006 * US, 10, 3, idle),
            rec(t0 + 3_008 * US, 1, 0, idle, thread), // the thread runs at last
        ];
        let a = attribute_ring(&records, 800, t0 + 1_000 * US, t0 + 3_008 * US);
        let dominant = a.dominant_contributor().unwrap();
        assert_eq!(
            dominant.cause,
            rtgauge_trace::Cause::Softirq {
                vector: "NET_RX".to_owned()
            },
            "{a:?}"
        );
        assert!(dominant.duration_ns >= 1_900 * US, "{a:?}");
        assert_eq!(a.timer_irq_ns, Some(t0 + 1_002 * US));
    }

    /// A normal thread woken during a kworker's 2.5-ms work item waits for the item's end
    /// (an RT thread behind a normal kworker would read as throttling): the recorder's
    /// records name the kworker and the work function.
    #[test]
    fn a_late_wakeup_behind_a_work_item_names_its_function() {
        const US: u64 = 1_000;
        let idle = (0, "", 120);
        let kworker = (55, "kworker/1:1", 120);
        let thread = (800, "sleeper", 120);
        let t0 = 1_000_000 * US;
        let work = 0xffff_ffff_8123_4560;
        let records = [
            rec(t0, 1, 1, thread, idle),             // the thread sleeps
            rec(t0 + 100 * US, 1, 0, idle, kworker), // the kworker runs
            with_function(rec(t0 + 150 * US, 11, 0, kworker, idle), work), // work start
            rec(t0 + 1_000 * US, 5, 0, kworker, idle), // local_timer entry
            with_function(
                rec(t0 + 1_002 * US, 7, 0, kworker, idle),
                0xffff_ffff_8110_0000,
            ),
            rec(t0 + 1_003 * US, 2, 1, thread, kworker), // wakeup of the thread
            rec(t0 + 1_005 * US, 6, 0, kworker, idle),   // local_timer exit
            rec(t0 + 3_500 * US, 12, 0, kworker, idle),  // work end
            rec(t0 + 3_501 * US, 1, 0x100, kworker, thread), // preempted at last
        ];
        let a = attribute_ring(&records, 800, t0 + 1_000 * US, t0 + 3_501 * US);
        let dominant = a.dominant_contributor().unwrap();
        let rtgauge_trace::Cause::Thread {
            comm, pid, work: w, ..
        } = &dominant.cause
        else {
            panic!("{a:?}")
        };
        assert_eq!(
            (comm.as_str(), *pid, w.as_deref()),
            ("kworker/1:1", 55, Some("vmstat_update")),
            "{a:?}"
        );
        assert!(dominant.duration_ns >= 2_400 * US, "{a:?}");
    }

    /// A program interrupted after taking its slot stamps its record after the interrupting
    /// program's: the window is in time order all the same, and a record stamped late at
    /// the ring's oldest slot does not make the window look wrapped past.
    #[test]
    fn a_window_is_in_time_order_whatever_the_slots() {
        let thread = (800, "sleeper", 19);
        let idle = (0, "", 120);
        let records = [
            rec(100, 1, 1, thread, idle),
            softirq(300, 9, 1, idle), // slot taken before the interrupt, stamped after it
            rec(200, 3, 30, idle, idle),
            rec(250, 4, 30, idle, idle),
        ];
        let mut ring = Box::new(crate::ring::RawRing {
            head: crate::ring::RING_LEN as u64 + 1,
            recs: [rec(150, 1, 1, idle, thread); crate::ring::RING_LEN],
        });
        // The slot after the head's is the oldest by position; its record is the newest.
        ring.recs[1..5].copy_from_slice(&records);
        ring.recs[0].ts = 400;
        let spike = Spike {
            cpu: 1,
            tid: 800,
            programmed_ns: 0,
            woke_ns: 400,
            ring,
        };
        let window = spike.window(100, 400);
        let ts: Vec<u64> = window.events.iter().map(|e| e.ts_ns).collect();
        assert_eq!(ts.len(), crate::ring::RING_LEN);
        assert!(ts.windows(2).all(|w| w[0] <= w[1]), "{ts:?}");
        assert_eq!((ts[0], *ts.last().unwrap()), (100, 400));
        assert!(!window.events_lost);
        assert!(spike.window(50, 400).events_lost);
    }
}
