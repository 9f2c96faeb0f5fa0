//! The recorder's records as the tracefs parser's [`TraceEvent`]s, so that attribution reads a
//! window from the kernel's rings exactly as it reads one from tracefs.

use crate::ring::{comm, vector_name, Kind, RawRecord};
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

fn task(comm_raw: &[u8; 16], pid: u32, prio: i32) -> Task {
    Task {
        comm: comm(comm_raw),
        pid,
        prio,
    }
}

/// One record as an event of `cpu`; `None` for a slot never written.
pub fn to_event(cpu: u32, r: &RawRecord) -> Option<TraceEvent> {
    let (comm_now, pid_now, kind) = match r.kind()? {
        Kind::Switch => (
            comm(&r.a_comm),
            r.a_pid,
            EventKind::Switch {
                prev: task(&r.a_comm, r.a_pid, r.a_prio),
                prev_state: state_letter(r.arg, r.preempted()).to_owned(),
                next: task(&r.b_comm, r.b_pid, r.b_prio),
            },
        ),
        Kind::Wakeup => (
            comm(&r.b_comm),
            r.b_pid,
            EventKind::Wakeup {
                task: task(&r.a_comm, r.a_pid, r.a_prio),
                target_cpu: Some(r.arg),
                waking: false,
            },
        ),
        Kind::IrqEntry => (
            comm(&r.a_comm),
            r.a_pid,
            EventKind::IrqEntry {
                irq: r.arg,
                name: comm(&r.b_comm),
            },
        ),
        Kind::IrqExit => (comm(&r.a_comm), r.a_pid, EventKind::IrqExit { irq: r.arg }),
        Kind::VectorEntry => (
            comm(&r.a_comm),
            r.a_pid,
            EventKind::VectorEntry {
                name: vector_name(r.arg).to_owned(),
            },
        ),
        Kind::VectorExit => (
            comm(&r.a_comm),
            r.a_pid,
            EventKind::VectorExit {
                name: vector_name(r.arg).to_owned(),
            },
        ),
        Kind::HrtimerEntry => {
            let (now, function) = r.hrtimer();
            // The callback by address until names come from /proc/kallsyms.
            let function = format!("{function:#x}");
            (
                comm(&r.a_comm),
                r.a_pid,
                EventKind::HrtimerEntry {
                    function,
                    now_ns: Some(now),
                },
            )
        }
        Kind::HrtimerExit => (comm(&r.a_comm), r.a_pid, EventKind::HrtimerExit),
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
    /// The window `from_ns ..= to_ns` of this spike's ring as attribution's input.
    /// `events_lost` when the ring had already dropped records from inside the window.
    pub fn window(&self, from_ns: u64, to_ns: u64) -> CpuTrace {
        let records = self.ring.ordered();
        let wrapped = self.ring.head as usize > records.len();
        let events_lost = wrapped && records.first().is_some_and(|r| r.ts > from_ns);
        let events = records
            .iter()
            .filter(|r| (from_ns..=to_ns).contains(&r.ts))
            .filter_map(|r| to_event(self.cpu, r))
            .collect();
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
        let mut r = record(7, 5);
        r.b_comm[..8].copy_from_slice(&1234u64.to_ne_bytes());
        r.b_comm[8..].copy_from_slice(&0xffff_ffff_8100_0000u64.to_ne_bytes());
        let e = to_event(1, &r).unwrap();
        assert_eq!(
            e.kind,
            EventKind::HrtimerEntry {
                function: "0xffffffff81000000".to_owned(),
                now_ns: Some(1234)
            }
        );
        assert_eq!(
            to_event(1, &record(8, 5)).unwrap().kind,
            EventKind::HrtimerExit
        );
    }

    #[test]
    fn unwritten_slots_are_no_events() {
        assert!(to_event(0, &record(0, 5)).is_none());
    }
}
