//! Parsing the text form of tracefs (`per_cpu/cpuN/trace`) into typed events.
//!
//! Why text and not `trace_pipe_raw`: the text needs no knowledge of the binary event layouts
//! (which differ between kernel versions and are described only by each event's `format`
//! file), and with `trace_clock` set to `mono` it gives CLOCK_MONOTONIC timestamps with 1 µs
//! resolution. The spikes worth explaining are tens of microseconds and more, so 1 µs is
//! enough; what is lost is sub-microsecond ordering of events that share a timestamp, and
//! the text keeps file order for those.
//!
//! A line looks like (the task name may contain spaces and dashes):
//! ```text
//!  opt dxygvsabf4b-28572   [001] d.h..   475.413174: irq_handler_entry: irq=36 name=virtio1-req.0
//! ```
//! The parser never panics: a line it does not understand is `None`, an event it does not
//! know is [`EventKind::Other`], and `CPU:N [LOST M EVENTS]` lines are reported as such.

/// One event recorded by the kernel on one CPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceEvent {
    /// CLOCK_MONOTONIC time in nanoseconds (1 µs resolution in the text form).
    pub ts_ns: u64,
    /// CPU that recorded the event.
    pub cpu: u32,
    /// Name of the task that was current when the event was recorded (in IRQ context: the
    /// interrupted task).
    pub comm: String,
    /// Its thread id (0 for idle).
    pub pid: u32,
    /// What happened.
    pub kind: EventKind,
}

/// The events attribution understands; everything else is kept as [`EventKind::Other`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventKind {
    /// `sched_switch`: `prev` leaves the CPU, `next` runs.
    Switch {
        prev: Task,
        prev_state: String,
        next: Task,
    },
    /// `sched_waking` (`waking` true) or `sched_wakeup`.
    Wakeup {
        task: Task,
        target_cpu: Option<u32>,
        waking: bool,
    },
    /// `irq_handler_entry`.
    IrqEntry { irq: u32, name: String },
    /// `irq_handler_exit`.
    IrqExit { irq: u32 },
    /// `softirq_entry`; `name` is the vector name (TIMER, NET_RX, RCU, …).
    SoftirqEntry { vec: u32, name: String },
    /// `softirq_exit`.
    SoftirqExit { vec: u32, name: String },
    /// `softirq_raise` (an instant: the softirq will run later).
    SoftirqRaise { vec: u32, name: String },
    /// An `irq_vectors` entry (`local_timer`, `reschedule`, `call_function`, …).
    VectorEntry { name: String },
    /// An `irq_vectors` exit.
    VectorExit { name: String },
    /// `hrtimer_expire_entry`: a high-resolution timer's callback starts; `now_ns` is the
    /// kernel's nanosecond reading of the same clock when the event prints one.
    HrtimerEntry {
        function: String,
        now_ns: Option<u64>,
    },
    /// `hrtimer_expire_exit`.
    HrtimerExit,
    /// `workqueue_execute_start`: a kworker starts a work item.
    WorkStart { function: String },
    /// `workqueue_execute_end`.
    WorkEnd,
    /// `nmi_handler`: an NMI handler that ran for `delta_ns` before this timestamp.
    Nmi { handler: String, delta_ns: u64 },
    /// Any other event (`ipi_send_cpu`, `sched_migrate_task`, …), kept by name.
    Other { name: String, detail: String },
}

/// A task as named by scheduler events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Task {
    pub comm: String,
    pub pid: u32,
    /// Kernel priority (0–99 real-time, inverted: 99 − rtprio; 100–139 normal).
    pub prio: i32,
}

/// One line of the text form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    Event(TraceEvent),
    /// The ring buffer overwrote events of this CPU before they were read: `CPU:N [LOST M
    /// EVENTS]`, or `CPU:N [LOST EVENTS]` (count unknown) when the writer overtook a reader
    /// that reads while recording goes on.
    Lost {
        cpu: u32,
        count: Option<u64>,
    },
}

/// Parses every line of a trace text; lines that are not events are skipped.
/// Returns the events and whether the buffer reported lost events.
pub fn parse_trace(text: &str) -> (Vec<TraceEvent>, bool) {
    let (events, losses) = parse_trace_with_losses(text);
    (events, !losses.is_empty())
}

/// Like [`parse_trace`], but says where events were lost: each index `i` means that events
/// are missing between `events[i - 1]` and `events[i]` (before the first, for 0; after the
/// last, for `events.len()`).
pub fn parse_trace_with_losses(text: &str) -> (Vec<TraceEvent>, Vec<usize>) {
    let mut events = Vec::new();
    let mut losses = Vec::new();
    for line in text.lines() {
        match parse_line(line) {
            Some(Line::Event(event)) => events.push(event),
            Some(Line::Lost { .. }) => losses.push(events.len()),
            None => {}
        }
    }
    (events, losses)
}

/// Parses one line; `None` for headers, blank or malformed lines.
pub fn parse_line(line: &str) -> Option<Line> {
    let trimmed = line.trim_start();
    if trimmed.starts_with('#') || trimmed.is_empty() {
        return None;
    }
    if let Some(rest) = trimmed.strip_prefix("CPU:") {
        // "CPU:1 [LOST 123 EVENTS]", or "CPU:1 [LOST EVENTS]"
        let (cpu, rest) = rest.split_once(' ')?;
        let rest = rest.strip_prefix("[LOST ")?;
        let count = match rest {
            "EVENTS]" => None,
            _ => Some(rest.strip_suffix(" EVENTS]")?.parse().ok()?),
        };
        return Some(Line::Lost {
            cpu: cpu.parse().ok()?,
            count,
        });
    }
    // The CPU column " [NNN]" follows the task; the task name may itself contain " [1]", so
    // every candidate is tried until the rest of the line parses as flags and a timestamp.
    let mut search_from = 0;
    while let Some(offset) = line.get(search_from..)?.find(" [") {
        let open = search_from + offset;
        search_from = open + 2;
        let Some(after) = line.get(open + 2..) else {
            break;
        };
        let Some(close) = after.find(']') else {
            break;
        };
        let digits = &after[..close];
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        if let Some(event) = parse_after_cpu(&line[..open], digits, &after[close + 1..]) {
            return Some(Line::Event(event));
        }
    }
    None
}

fn parse_after_cpu(task: &str, cpu: &str, after_cpu: &str) -> Option<TraceEvent> {
    let (comm, pid) = task.trim().rsplit_once('-')?;
    let pid: u32 = pid.parse().ok()?;
    let cpu: u32 = cpu.parse().ok()?;
    // After the CPU: the optional irq-info flags column ("d.h2."), then
    // "SECS.USECS: name: detail".
    let mut rest = after_cpu.trim_start();
    let (first, tail) = rest.split_once(' ')?;
    if !first.ends_with(':') {
        rest = tail.trim_start();
    }
    let (timestamp, rest) = rest.split_once(": ")?;
    let ts_ns = parse_timestamp(timestamp.trim())?;
    let (name, detail) = match rest.split_once(": ") {
        Some((name, detail)) => (name, detail),
        None => (rest.trim_end_matches(':'), ""),
    };
    if name.is_empty() || name.contains(' ') {
        return None;
    }
    Some(TraceEvent {
        ts_ns,
        cpu,
        comm: comm.to_string(),
        pid,
        kind: parse_kind(name, detail),
    })
}

/// "475.413174" (seconds.microseconds) to nanoseconds.
pub(crate) fn parse_timestamp(text: &str) -> Option<u64> {
    let (secs, frac) = text.split_once('.')?;
    if frac.is_empty() || frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let secs: u64 = secs.parse().ok()?;
    let frac_value: u64 = frac.parse().ok()?;
    let scale = 10u64.pow(9 - frac.len() as u32);
    secs.checked_mul(1_000_000_000)?
        .checked_add(frac_value * scale)
}

fn parse_kind(name: &str, detail: &str) -> EventKind {
    let parsed = match name {
        "sched_switch" => parse_switch(detail),
        "sched_waking" | "sched_wakeup" => parse_wakeup(detail, name == "sched_waking"),
        "irq_handler_entry" => (|| {
            Some(EventKind::IrqEntry {
                irq: field(detail, "irq")?.parse().ok()?,
                name: field(detail, "name").unwrap_or("").to_string(),
            })
        })(),
        "irq_handler_exit" => (|| {
            Some(EventKind::IrqExit {
                irq: field(detail, "irq")?.parse().ok()?,
            })
        })(),
        "softirq_entry" | "softirq_exit" | "softirq_raise" => {
            parse_softirq(detail).map(|(vec, vector)| match name {
                "softirq_entry" => EventKind::SoftirqEntry { vec, name: vector },
                "softirq_exit" => EventKind::SoftirqExit { vec, name: vector },
                _ => EventKind::SoftirqRaise { vec, name: vector },
            })
        }
        "hrtimer_expire_entry" => Some(EventKind::HrtimerEntry {
            function: field(detail, "function").unwrap_or("").to_string(),
            now_ns: field(detail, "now").and_then(|n| n.parse().ok()),
        }),
        "hrtimer_expire_exit" => Some(EventKind::HrtimerExit),
        "workqueue_execute_start" => Some(EventKind::WorkStart {
            function: detail
                .split_once("function ")
                .map(|(_, f)| f.trim().to_string())
                .unwrap_or_default(),
        }),
        "workqueue_execute_end" => Some(EventKind::WorkEnd),
        "nmi_handler" => (|| {
            // "perf_event_nmi_handler() delta_ns: 1234 handled: 1"
            let handler = detail.split_whitespace().next()?.trim_end_matches("()");
            let delta = detail
                .split_once("delta_ns: ")?
                .1
                .split_whitespace()
                .next()?;
            Some(EventKind::Nmi {
                handler: handler.to_string(),
                delta_ns: delta.parse().ok()?,
            })
        })(),
        _ => {
            if let Some(vector) = name.strip_suffix("_entry").filter(|_| is_vector(detail)) {
                Some(EventKind::VectorEntry {
                    name: vector.to_string(),
                })
            } else {
                name.strip_suffix("_exit")
                    .filter(|_| is_vector(detail))
                    .map(|vector| EventKind::VectorExit {
                        name: vector.to_string(),
                    })
            }
        }
    };
    parsed.unwrap_or_else(|| EventKind::Other {
        name: name.to_string(),
        detail: detail.to_string(),
    })
}

/// irq_vectors events print exactly "vector=N".
fn is_vector(detail: &str) -> bool {
    detail
        .strip_prefix("vector=")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The value of `key=` in a space-separated detail (values without spaces).
fn field<'a>(detail: &'a str, key: &str) -> Option<&'a str> {
    detail.split(' ').find_map(|word| {
        word.strip_prefix(key)
            .and_then(|rest| rest.strip_prefix('='))
    })
}

/// "vec=9 [action=RCU]"
fn parse_softirq(detail: &str) -> Option<(u32, String)> {
    let vec = field(detail, "vec")?.parse().ok()?;
    let name = detail
        .split_once("[action=")
        .map(|(_, rest)| rest.trim_end_matches(']').to_string())
        .unwrap_or_default();
    Some((vec, name))
}

/// Task names may contain spaces, so each value runs up to the next known key.
fn parse_task(detail: &str, prefix: &str) -> Option<Task> {
    let comm_key = format!("{prefix}comm=");
    let pid_key = format!(" {prefix}pid=");
    let prio_key = format!(" {prefix}prio=");
    let after_comm = detail.strip_prefix(&comm_key)?;
    let (comm, after_pid) = after_comm.rsplit_once(&pid_key)?;
    let (pid, after_prio) = after_pid.split_once(&prio_key)?;
    let prio = after_prio.split(' ').next()?;
    Some(Task {
        comm: comm.to_string(),
        pid: pid.parse().ok()?,
        prio: prio.parse().ok()?,
    })
}

fn parse_switch(detail: &str) -> Option<EventKind> {
    let (prev_part, next_part) = detail.split_once(" ==> ")?;
    let (prev_part, prev_state) = prev_part.rsplit_once(" prev_state=")?;
    let prev = parse_task(prev_part, "prev_")?;
    let next = parse_task(next_part, "next_")?;
    Some(EventKind::Switch {
        prev,
        prev_state: prev_state.to_string(),
        next,
    })
}

fn parse_wakeup(detail: &str, waking: bool) -> Option<EventKind> {
    // "comm=sleep pid=28573 prio=120 target_cpu=000"
    let (task_part, target) = match detail.rsplit_once(" target_cpu=") {
        Some((task, target)) => (task, target.trim().parse().ok()),
        None => (detail, None),
    };
    let task = parse_task(task_part, "")?;
    Some(EventKind::Wakeup {
        task,
        target_cpu: target,
        waking,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn event(line: &str) -> TraceEvent {
        match parse_line(line) {
            Some(Line::Event(event)) => event,
            other => panic!("not an event: {other:?}"),
        }
    }

    #[test]
    fn task_names_with_spaces_and_dashes_are_kept_whole() {
        let e = event(" opt dxygvsabf4b-28572   [001] d.h..   475.413174: irq_handler_entry: irq=36 name=virtio1-req.0");
        assert_eq!(e.comm, "opt dxygvsabf4b");
        assert_eq!(e.pid, 28572);
        assert_eq!(e.cpu, 1);
        assert_eq!(e.ts_ns, 475_413_174_000);
        assert_eq!(
            e.kind,
            EventKind::IrqEntry {
                irq: 36,
                name: "virtio1-req.0".into()
            }
        );
        let e = event("  kworker/u8:2-36 [1] x-y-41    [002] .....   475.840083: workqueue_execute_start: work struct 00000000d505ec0d: function kfree_rcu_monitor");
        assert_eq!(e.comm, "kworker/u8:2-36 [1] x-y");
        assert_eq!(e.cpu, 2);
        assert_eq!(
            e.kind,
            EventKind::WorkStart {
                function: "kfree_rcu_monitor".into()
            }
        );
    }

    #[test]
    fn sched_switch_with_spaced_names_is_parsed() {
        let e = event(" opt dxygvsabf4b-28572   [001] d..2.   475.416055: sched_switch: prev_comm=opt dxygvsabf4b prev_pid=28572 prev_prio=120 prev_state=R ==> next_comm=opt 8cuep9h551z next_pid=28557 next_prio=120");
        let EventKind::Switch {
            prev,
            prev_state,
            next,
        } = e.kind
        else {
            panic!("not a switch")
        };
        assert_eq!(
            prev,
            Task {
                comm: "opt dxygvsabf4b".into(),
                pid: 28572,
                prio: 120
            }
        );
        assert_eq!(prev_state, "R");
        assert_eq!(next.comm, "opt 8cuep9h551z");
        assert_eq!(next.pid, 28557);
    }

    #[test]
    fn softirq_vectors_timers_and_wakeups_are_parsed() {
        let e = event(" opt-1   [001] ..s..   475.413182: softirq_entry: vec=4 [action=BLOCK]");
        assert_eq!(
            e.kind,
            EventKind::SoftirqEntry {
                vec: 4,
                name: "BLOCK".into()
            }
        );
        let e = event(" opt-1   [001] d.h..   475.416029: local_timer_entry: vector=236");
        assert_eq!(
            e.kind,
            EventKind::VectorEntry {
                name: "local_timer".into()
            }
        );
        let e = event(" opt-1   [001] d.h..   475.416031: hrtimer_expire_entry: hrtimer=000000003de2b346 function=hrtimer_wakeup now=475416030065");
        assert_eq!(
            e.kind,
            EventKind::HrtimerEntry {
                function: "hrtimer_wakeup".into(),
                now_ns: Some(475416030065)
            }
        );
        let e = event(" opt-1   [001] d.s3.   475.413191: sched_waking: comm=sleep pid=28573 prio=120 target_cpu=000");
        assert_eq!(
            e.kind,
            EventKind::Wakeup {
                task: Task {
                    comm: "sleep".into(),
                    pid: 28573,
                    prio: 120
                },
                target_cpu: Some(0),
                waking: true
            }
        );
        let e = event("  <idle>-0   [000] d.Z..  12.000001: nmi_handler: perf_event_nmi_handler() delta_ns: 1234 handled: 1");
        assert_eq!(
            e.kind,
            EventKind::Nmi {
                handler: "perf_event_nmi_handler".into(),
                delta_ns: 1234
            }
        );
    }

    #[test]
    fn headers_lost_markers_and_garbage_are_not_events() {
        assert_eq!(parse_line("# tracer: nop"), None);
        assert_eq!(parse_line(""), None);
        assert_eq!(parse_line("garbage [12] here"), None);
        assert_eq!(
            parse_line("CPU:1 [LOST 123 EVENTS]"),
            Some(Line::Lost {
                cpu: 1,
                count: Some(123)
            })
        );
        assert_eq!(
            parse_line("CPU:0 [LOST EVENTS]"),
            Some(Line::Lost {
                cpu: 0,
                count: None
            })
        );
        let (events, lost) =
            parse_trace("# x\nCPU:0 [LOST 5 EVENTS]\n a-1 [000] ..... 1.000001: foo: bar\n");
        assert!(lost);
        assert_eq!(events.len(), 1);
        let (_, losses) = parse_trace_with_losses(
            " a-1 [000] ..... 1.000001: foo: bar\nCPU:0 [LOST EVENTS]\n a-1 [000] ..... 1.000009: foo: bar\n",
        );
        assert_eq!(losses, [1], "the loss lies between the two events");
        assert_eq!(
            events[0].kind,
            EventKind::Other {
                name: "foo".into(),
                detail: "bar".into()
            }
        );
    }

    #[test]
    fn lines_without_the_flags_column_are_parsed() {
        let e = event(" bash-12 [003]   10.500000: irq_handler_exit: irq=5 ret=handled");
        assert_eq!(e.ts_ns, 10_500_000_000);
        assert_eq!(e.kind, EventKind::IrqExit { irq: 5 });
    }

    proptest! {
        #[test]
        fn parser_never_panics_on_arbitrary_text(line in "\\PC{0,200}") {
            let _ = parse_line(&line);
        }

        #[test]
        fn parser_never_panics_on_mutated_trace_lines(
            prefix in "[ a-z0-9/:.<>-]{0,20}",
            cpu in "[0-9\\]\\[ ]{0,5}",
            ts in "[0-9.: ]{0,16}",
            name in "(sched_switch|sched_waking|irq_handler_entry|irq_handler_exit|softirq_entry|local_timer_entry|hrtimer_expire_entry|nmi_handler|workqueue_execute_start|x)",
            detail in "[ a-z0-9=_\\[\\]>:()-]{0,80}",
        ) {
            let line = format!("{prefix}-{cpu} [{cpu}] d.h.. {ts}: {name}: {detail}");
            let _ = parse_line(&line);
        }

        #[test]
        fn well_formed_lines_round_trip(
            comm in "[a-zA-Z0-9/:_<>-]([a-zA-Z0-9 /:_<>\\[\\]-]{0,13}[a-zA-Z0-9/:_<>-])?",
            pid in 0u32..4_000_000,
            cpu in 0u32..4096,
            secs in 0u64..10_000_000,
            usecs in 0u64..1_000_000,
            irq in 0u32..10_000,
        ) {
            let line = format!("{comm:>16}-{pid:<7} [{cpu:03}] d.h..  {secs}.{usecs:06}: irq_handler_entry: irq={irq} name=x");
            let e = event(&line);
            prop_assert_eq!(e.comm, comm);
            prop_assert_eq!(e.pid, pid);
            prop_assert_eq!(e.cpu, cpu);
            prop_assert_eq!(e.ts_ns, secs * 1_000_000_000 + usecs * 1000);
            prop_assert_eq!(e.kind, EventKind::IrqEntry { irq, name: "x".into() });
        }
    }
}
