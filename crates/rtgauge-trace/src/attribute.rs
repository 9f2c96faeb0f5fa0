//! Attribution of one late wake-up to what the CPU did instead (pure: no I/O).
//!
//! The latency is split the way rtla timerlat does: **timer IRQ latency**, from the programmed
//! wake-up to the moment the kernel ran the timer that wakes the thread (`hrtimer_expire_entry`,
//! or the local timer interrupt when the hrtimer event is missing), and **thread latency**,
//! from there to the thread's own clock read after it was switched in.
//!
//! Every nanosecond of [programmed, woke] is given to exactly one cause: the innermost open
//! hard IRQ / vector / softirq handler, else the task on the CPU, except for **gaps**.
//!
//! A gap is a silence of at least [`DEFAULT_GAP_THRESHOLD_NS`] (no event recorded on the CPU)
//! that cannot be explained inside Linux: either the CPU was idle, or it lies before the timer
//! interrupt was taken, when any task running with interrupts enabled would have been
//! interrupted at the programmed time. What remains is time outside Linux (hypervisor, SMI,
//! firmware), or a long interrupts-off section that these events cannot see; deep idle-state
//! exit is counted too and is told apart by `idle` in the gap. A thread woken by an event another
//! thread fired (a response handler: [`AttributionConfig::woken_by_timer`] false) has no timer
//! to split the latency at and no moment at which its CPU had to take an interrupt, so there
//! silence while a task runs is that task's time and only idle silence is a gap. The threshold is 20 µs: twenty
//! times the 1 µs resolution of the timestamps, above the few microseconds that entering an
//! interrupt takes on bare metal, and below the spikes worth explaining (tens of µs and more).

use std::collections::HashMap;

use rtgauge_result::spike::{Attribution, Cause, Contributor, Segment};

use crate::parse::{EventKind, TraceEvent};

/// Silence (ns) from which unexplained time counts as a gap; see the module documentation.
pub const DEFAULT_GAP_THRESHOLD_NS: u64 = 20_000;
/// Resolution of the text timestamps: events may be stamped up to this much early.
const TIMESTAMP_SLACK_NS: u64 = 1_000;

/// One late wake-up to explain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spike {
    /// CPU the thread was measured on.
    pub cpu: u32,
    /// Programmed wake-up time (CLOCK_MONOTONIC, ns).
    pub programmed_ns: u64,
    /// Time the thread read after waking (CLOCK_MONOTONIC, ns).
    pub woke_ns: u64,
    /// Thread id of the measuring thread.
    pub thread_pid: u32,
}

/// Tuning of [`attribute`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AttributionConfig {
    pub gap_threshold_ns: u64,
    /// The thread was woken by a timer on its own CPU at the programmed time (cyclic); false
    /// when an event another thread fired woke it (response: the programmed time is when the event
    /// was fired), which leaves the IRQ/thread split out and silence inside a task alone.
    pub woken_by_timer: bool,
}

impl Default for AttributionConfig {
    fn default() -> Self {
        Self {
            gap_threshold_ns: DEFAULT_GAP_THRESHOLD_NS,
            woken_by_timer: true,
        }
    }
}

/// Explains `spike` from the `events` recorded around it (any CPUs, in recording order; those
/// of other CPUs and after the wake-up are ignored). Events before the programmed time
/// (the margin) tell what was running when the window opened.
pub fn attribute(
    spike: &Spike,
    events: &[TraceEvent],
    events_lost: bool,
    config: &AttributionConfig,
) -> Attribution {
    let start = spike.programmed_ns;
    let end = spike.woke_ns.max(start);
    let on_cpu: Vec<&TraceEvent> = events
        .iter()
        .filter(|e| e.cpu == spike.cpu && e.ts_ns <= end)
        .collect();
    let timer_irq_ns = if config.woken_by_timer {
        find_timer_irq(spike, &on_cpu)
    } else {
        None
    };
    // Before the timer interrupt was taken, silence is unexplained; without any timer event
    // the whole window is. Woken by another thread's event, nothing had to interrupt a silent task.
    let timer_deadline = if config.woken_by_timer {
        timer_irq_ns.unwrap_or(end)
    } else {
        start
    };

    let prios = priorities(&on_cpu);
    let mut works: HashMap<u32, String> = HashMap::new();
    let task_of = |comm: &str, pid: u32, works: &HashMap<u32, String>| {
        let mut cause = task_cause(comm, pid, prios.get(&pid).copied());
        if let Cause::Thread { work, .. } = &mut cause {
            *work = works.get(&pid).cloned();
        }
        cause
    };
    let mut timeline = Timeline::default();
    let mut stack: Vec<Cause> = Vec::new();
    let mut previous_ts = start;
    let mut events_in_window = 0u32;
    for event in &on_cpu {
        if event.ts_ns >= start.saturating_sub(TIMESTAMP_SLACK_NS) {
            events_in_window = events_in_window.saturating_add(1);
        }
        // Every event names the task that was on the CPU when it was recorded (in interrupt
        // context, the interrupted one), which is more robust than following sched_switch
        // alone: some kernels drop the switch out of idle. An exit with nothing open is a
        // handler that was running since before the margin.
        let context = stack
            .last()
            .cloned()
            .or_else(|| exit_cause(&event.kind))
            .unwrap_or_else(|| task_of(&event.comm, event.pid, &works));
        // An NMI is recorded when its handler ends, with how long it ran.
        let nmi_start = match &event.kind {
            EventKind::Nmi { delta_ns, .. } => {
                event.ts_ns.saturating_sub(*delta_ns).max(previous_ts)
            }
            _ => event.ts_ns,
        };
        timeline.add_stretch(
            previous_ts.max(start),
            nmi_start.min(end),
            previous_ts,
            context,
            timer_deadline,
            config,
        );
        if let EventKind::Nmi { handler, .. } = &event.kind {
            timeline.push(
                nmi_start.max(start),
                event.ts_ns.min(end),
                Cause::Nmi {
                    handler: handler.clone(),
                },
            );
        }
        previous_ts = previous_ts.max(event.ts_ns);
        apply(event, &mut stack, &mut works);
    }
    // After the last event: the task it switched to, or the one it was recorded in.
    let after_last = on_cpu
        .last()
        .map_or(Cause::Unknown, |event| match &event.kind {
            EventKind::Switch { next, .. } => task_of(&next.comm, next.pid, &works),
            _ => task_of(&event.comm, event.pid, &works),
        });
    let context = stack.last().cloned().unwrap_or(after_last);
    timeline.add_stretch(
        previous_ts.max(start),
        end,
        previous_ts,
        context,
        timer_deadline,
        config,
    );

    let (contributors, segments) = timeline.finish();
    let dominant = contributors
        .iter()
        .enumerate()
        .filter(|(_, c)| !is_thread(&c.cause, spike.thread_pid) && c.cause != Cause::Unknown)
        .max_by_key(|(_, c)| c.duration_ns)
        .map(|(i, _)| i);
    Attribution {
        cpu: spike.cpu,
        programmed_ns: spike.programmed_ns,
        woke_ns: spike.woke_ns,
        latency_ns: spike.woke_ns.saturating_sub(spike.programmed_ns),
        timer_irq_ns,
        irq_latency_ns: timer_irq_ns.map(|t| t.saturating_sub(start)),
        thread_latency_ns: timer_irq_ns.map(|t| end.saturating_sub(t.max(start))),
        contributors,
        dominant,
        segments,
        events_lost,
        recording_stopped: false,
        events_in_window,
    }
}

/// [`attribute`] on a window read by [`crate::TraceSession::read_windows`], carrying over
/// whether events were lost or recording was stopped inside it.
pub fn attribute_trace(
    spike: &Spike,
    trace: &crate::CpuTrace,
    config: &AttributionConfig,
) -> Attribution {
    let mut attribution = attribute(spike, &trace.events, trace.events_lost, config);
    attribution.recording_stopped = trace.window_incomplete;
    attribution
}

fn is_thread(cause: &Cause, pid: u32) -> bool {
    matches!(cause, Cause::Thread { pid: p, .. } if *p == pid)
}

/// The timer that woke the thread: the last hrtimer expiry before the thread's wake-up event
/// (falling back to the local timer interrupt), inside the window.
fn find_timer_irq(spike: &Spike, events: &[&TraceEvent]) -> Option<u64> {
    let earliest = spike.programmed_ns.saturating_sub(TIMESTAMP_SLACK_NS);
    let in_window = |e: &&&TraceEvent| e.ts_ns >= earliest;
    let wake_index = events.iter().position(|e| {
        e.ts_ns >= earliest
            && matches!(&e.kind, EventKind::Wakeup { task, .. } if task.pid == spike.thread_pid)
    });
    let before_wake = &events[..wake_index.unwrap_or(events.len())];
    let last_of = |wanted: fn(&EventKind) -> bool| {
        before_wake
            .iter()
            .rev()
            .filter(in_window)
            .find(|e| wanted(&e.kind))
            .map(|e| e.ts_ns)
    };
    let hrtimer = before_wake
        .iter()
        .rev()
        .filter(in_window)
        .find_map(|e| match &e.kind {
            // The expiry's own nanosecond clock reading, when it is consistent with the
            // microsecond timestamp (same clock: mono), is the more precise time.
            EventKind::HrtimerEntry { now_ns, .. } => Some(
                now_ns
                    .filter(|n| n.abs_diff(e.ts_ns) < TIMESTAMP_SLACK_NS)
                    .unwrap_or(e.ts_ns),
            ),
            _ => None,
        });
    let local_timer =
        last_of(|k| matches!(k, EventKind::VectorEntry { name } if name == "local_timer"));
    let timer = hrtimer.or(local_timer);
    // Without a wake-up event, the first timer interrupt after the programmed time.
    let timer = if wake_index.is_none() {
        events
            .iter()
            .filter(in_window)
            .find(|e| {
                matches!(&e.kind, EventKind::HrtimerEntry { .. })
                    || matches!(&e.kind, EventKind::VectorEntry { name } if name == "local_timer")
            })
            .map(|e| e.ts_ns)
    } else {
        timer
    };
    timer.map(|t| t.clamp(spike.programmed_ns, spike.woke_ns.max(spike.programmed_ns)))
}

/// Priorities named by scheduler events, so a task seen only as "comm-pid" gets one.
fn priorities(events: &[&TraceEvent]) -> HashMap<u32, i32> {
    let mut prios = HashMap::new();
    for event in events {
        match &event.kind {
            EventKind::Switch { prev, next, .. } => {
                prios.insert(prev.pid, prev.prio);
                prios.insert(next.pid, next.prio);
            }
            EventKind::Wakeup { task, .. } => {
                prios.insert(task.pid, task.prio);
            }
            _ => {}
        }
    }
    prios
}

fn task_cause(comm: &str, pid: u32, prio: Option<i32>) -> Cause {
    if pid == 0 {
        return Cause::Idle;
    }
    if let Some(rest) = comm.strip_prefix("irq/") {
        let irq = rest.split(['-', '_']).next().and_then(|n| n.parse().ok());
        return Cause::ThreadedIrq {
            comm: comm.to_string(),
            pid,
            prio,
            irq,
        };
    }
    Cause::Thread {
        comm: comm.to_string(),
        pid,
        prio,
        work: None,
    }
}

/// The handler an exit event closes, for an exit whose entry came before the margin.
fn exit_cause(kind: &EventKind) -> Option<Cause> {
    match kind {
        EventKind::IrqExit { irq } => Some(Cause::Irq {
            irq: *irq,
            name: String::new(),
        }),
        EventKind::SoftirqExit { name, .. } => Some(Cause::Softirq {
            vector: name.clone(),
        }),
        EventKind::VectorExit { name } => Some(Cause::Vector { name: name.clone() }),
        _ => None,
    }
}

fn apply(event: &TraceEvent, stack: &mut Vec<Cause>, works: &mut HashMap<u32, String>) {
    match &event.kind {
        // A task switch happens in task context: nothing can still be open.
        EventKind::Switch { .. } => stack.clear(),
        EventKind::IrqEntry { irq, name } => stack.push(Cause::Irq {
            irq: *irq,
            name: name.clone(),
        }),
        EventKind::SoftirqEntry { name, .. } => stack.push(Cause::Softirq {
            vector: name.clone(),
        }),
        EventKind::VectorEntry { name } => stack.push(Cause::Vector { name: name.clone() }),
        EventKind::WorkStart { function } => {
            works.insert(event.pid, function.clone());
        }
        EventKind::WorkEnd => {
            works.remove(&event.pid);
        }
        EventKind::IrqExit { .. }
        | EventKind::SoftirqExit { .. }
        | EventKind::VectorExit { .. } => {
            let closed = exit_cause(&event.kind);
            // Pop up to and including the matching entry; an unmatched exit (its entry was
            // overwritten) leaves the stack alone.
            if let Some(position) = stack
                .iter()
                .rposition(|open| same_handler(open, closed.as_ref()))
            {
                stack.truncate(position);
            }
        }
        _ => {}
    }
}

fn same_handler(open: &Cause, closed: Option<&Cause>) -> bool {
    match (open, closed) {
        (Cause::Irq { irq: a, .. }, Some(Cause::Irq { irq: b, .. })) => a == b,
        (Cause::Softirq { vector: a }, Some(Cause::Softirq { vector: b })) => a == b,
        (Cause::Vector { name: a }, Some(Cause::Vector { name: b })) => a == b,
        _ => false,
    }
}

#[derive(Default)]
struct Timeline {
    stretches: Vec<(u64, u64, Cause)>,
}

impl Timeline {
    /// Adds [from, to) spent in `context`; `silent_since` is the previous event's time, so a
    /// silence of at least the threshold before the timer (or while idle) becomes a gap.
    fn add_stretch(
        &mut self,
        from: u64,
        to: u64,
        silent_since: u64,
        context: Cause,
        timer_deadline: u64,
        config: &AttributionConfig,
    ) {
        if to <= from {
            return;
        }
        let silence = to.saturating_sub(silent_since);
        let in_task = matches!(
            context,
            Cause::Thread { .. } | Cause::ThreadedIrq { .. } | Cause::Idle | Cause::Unknown
        );
        if silence >= config.gap_threshold_ns && in_task {
            let idle = context == Cause::Idle;
            let gap_end = if idle { to } else { to.min(timer_deadline) };
            // The unexplained part itself must reach the threshold: a task that ran silently
            // up to the programmed time, then an interrupt a few µs late, is not a gap.
            let gap_end = if gap_end.saturating_sub(from) >= config.gap_threshold_ns {
                gap_end
            } else {
                from
            };
            if gap_end > from && context != Cause::Unknown {
                self.push(from, gap_end, Cause::Gap { idle });
                self.push(gap_end, to, context);
                return;
            }
        }
        self.push(from, to, context);
    }

    fn push(&mut self, from: u64, to: u64, cause: Cause) {
        if to <= from {
            return;
        }
        match self.stretches.last_mut() {
            Some((_, last_end, last)) if *last_end == from && *last == cause => *last_end = to,
            _ => self.stretches.push((from, to, cause)),
        }
    }

    fn finish(self) -> (Vec<Contributor>, Vec<Segment>) {
        let mut contributors: Vec<Contributor> = Vec::new();
        let mut index_of: HashMap<Cause, usize> = HashMap::new();
        for (from, to, cause) in &self.stretches {
            let index = *index_of.entry(cause.clone()).or_insert_with(|| {
                contributors.push(Contributor {
                    cause: cause.clone(),
                    duration_ns: 0,
                    count: 0,
                    longest_ns: 0,
                });
                contributors.len() - 1
            });
            let c = &mut contributors[index];
            c.duration_ns += to - from;
            c.count += 1;
            c.longest_ns = c.longest_ns.max(to - from);
        }
        // Longest first; remap the segment indices accordingly.
        let mut order: Vec<usize> = (0..contributors.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(contributors[i].duration_ns));
        let mut new_index = vec![0; contributors.len()];
        for (new, &old) in order.iter().enumerate() {
            new_index[old] = new;
        }
        let segments = self
            .stretches
            .iter()
            .map(|(from, to, cause)| Segment {
                start_ns: *from,
                end_ns: *to,
                contributor: new_index[index_of[cause]],
            })
            .collect();
        let sorted = order.iter().map(|&i| contributors[i].clone()).collect();
        (sorted, segments)
    }
}
