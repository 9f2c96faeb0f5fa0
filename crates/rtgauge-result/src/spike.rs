//! Why a wake-up was late, as the kernel saw it (`--trace`): the attributions stored in
//! [`crate::ProbeRun::spikes`], and the grouping by dominant cause that the summary line,
//! `compare` and `check` count.
//!
//! The attribution itself is made by the trace crate, which depends on this one (the document
//! depends on no producer); it re-exports these types under their old paths.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What took the CPU between the programmed and the actual wake-up.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Cause {
    /// A hard interrupt handler (number and name as in /proc/interrupts).
    Irq { irq: u32, name: String },
    /// A system vector: local timer, reschedule, call-function, irq_work, …
    Vector { name: String },
    /// A softirq (TIMER, NET_RX, RCU, …).
    Softirq { vector: String },
    /// An NMI handler.
    Nmi { handler: String },
    /// A task. `prio` is the kernel priority (0–99 real-time, 99 − rtprio; 100–139 normal);
    /// `work` is the work item a kworker was executing.
    Thread {
        comm: String,
        pid: u32,
        prio: Option<i32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        work: Option<String>,
    },
    /// An interrupt handled in its own thread (`irq/NN-name`, as on PREEMPT_RT).
    ThreadedIrq {
        comm: String,
        pid: u32,
        prio: Option<i32>,
        irq: Option<u32>,
    },
    /// The CPU was idle.
    Idle,
    /// The measured thread was ready to run but its CPU's real-time class was held back:
    /// `server` is `RT throttling` (its budget was used up: the CPU idles or runs normal
    /// tasks) or `fair server` (the deadline server ran normal tasks).
    Throttled { server: String },
    /// The CPU recorded nothing where Linux would have: time outside Linux (hypervisor, SMI,
    /// firmware) or an interrupts-off stretch; `idle` says the CPU was idle before it.
    Gap { idle: bool },
    /// Nothing was recorded on the CPU at all, so nothing can be said.
    Unknown,
}

/// The total time one cause held the CPU inside the window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Contributor {
    pub cause: Cause,
    /// Time inside [programmed, woke], ns.
    pub duration_ns: u64,
    /// Separate stretches it ran in.
    pub count: u32,
    /// Longest single stretch, ns.
    pub longest_ns: u64,
}

/// One stretch of the timeline; `contributor` indexes [`Attribution::contributors`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Segment {
    pub start_ns: u64,
    pub end_ns: u64,
    pub contributor: usize,
}

/// Why one wake-up was late, as the kernel saw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Attribution {
    pub cpu: u32,
    pub programmed_ns: u64,
    pub woke_ns: u64,
    pub latency_ns: u64,
    /// When the timer that wakes the thread ran; `None` when no timer event was recorded.
    pub timer_irq_ns: Option<u64>,
    /// Programmed wake-up → timer (rtla timerlat's "IRQ latency").
    pub irq_latency_ns: Option<u64>,
    /// Timer → the thread reading its clock (rtla timerlat's "thread latency").
    pub thread_latency_ns: Option<u64>,
    /// Longest contributor first.
    pub contributors: Vec<Contributor>,
    /// Index into `contributors` of the dominant cause (the measuring thread itself excluded).
    pub dominant: Option<usize>,
    /// The timeline, in order, adjacent stretches of one cause merged.
    pub segments: Vec<Segment>,
    /// The ring buffer overwrote events, so part of the window may be missing.
    pub events_lost: bool,
    /// Recording was stopped (for reading an earlier spike) inside the window, so what ran
    /// then is missing.
    #[serde(default)]
    pub recording_stopped: bool,
    /// Events recorded on the CPU inside the window.
    pub events_in_window: u32,
    /// The measuring thread whose sample this is: the thread contributor with this pid is
    /// its own time (never the dominant cause). Absent in documents written before rtgauge
    /// recorded it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_pid: Option<u32>,
}

impl Attribution {
    /// The dominant contributor.
    pub fn dominant_contributor(&self) -> Option<&Contributor> {
        self.dominant.and_then(|i| self.contributors.get(i))
    }
}

/// A short human name of a cause ("irq 36 virtio1-req.0", "softirq NET_RX", "culprit/1234").
pub fn cause_name(cause: &Cause) -> String {
    match cause {
        Cause::Irq { irq, name } if name.is_empty() => format!("irq {irq}"),
        Cause::Irq { irq, name } => format!("irq {irq} {name}"),
        Cause::Vector { name } => format!("{name} interrupt"),
        Cause::Softirq { vector } => format!("softirq {vector}"),
        Cause::Nmi { handler } => format!("NMI {handler}"),
        Cause::Thread {
            comm,
            pid,
            work: Some(work),
            ..
        } => format!("{comm}/{pid} ({work})"),
        Cause::Thread { comm, pid, .. } | Cause::ThreadedIrq { comm, pid, .. } => {
            format!("{comm}/{pid}")
        }
        Cause::Idle => "idle".to_string(),
        Cause::Throttled { server } => server.clone(),
        Cause::Gap { idle: true } => "gap (from idle)".to_string(),
        Cause::Gap { idle: false } => "gap".to_string(),
        Cause::Unknown => "unknown".to_string(),
    }
}

/// Spikes that share a dominant cause.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CauseGroup {
    /// `gap outside Linux`, `softirq NET_RX`, `kworker/0:1` (a task by name, not thread id,
    /// so the causes of two runs can be compared), `unexplained`.
    pub label: String,
    /// The short kind a check spec names: irq, vector, softirq, nmi, thread, threaded_irq,
    /// idle, throttling, gap, unknown.
    pub kind: &'static str,
    pub count: usize,
    /// Longest time the cause held the CPU in one of these spikes, ns.
    pub longest_ns: u64,
}

/// The short kind of a cause, as a check spec names it (`cause = "gap"`).
pub fn cause_kind(cause: &Cause) -> &'static str {
    match cause {
        Cause::Irq { .. } => "irq",
        Cause::Vector { .. } => "vector",
        Cause::Softirq { .. } => "softirq",
        Cause::Nmi { .. } => "nmi",
        Cause::Thread { .. } => "thread",
        Cause::ThreadedIrq { .. } => "threaded_irq",
        Cause::Idle => "idle",
        Cause::Throttled { .. } => "throttling",
        Cause::Gap { .. } => "gap",
        Cause::Unknown => "unknown",
    }
}

fn label(cause: &Cause) -> String {
    match cause {
        Cause::Thread { comm, .. } | Cause::ThreadedIrq { comm, .. } => comm.clone(),
        Cause::Gap { .. } => "gap outside Linux".to_string(),
        other => cause_name(other),
    }
}

/// `spikes` grouped by dominant cause, most frequent first (then longest).
pub fn dominant_causes(spikes: &[Attribution]) -> Vec<CauseGroup> {
    let mut groups: Vec<CauseGroup> = Vec::new();
    for spike in spikes {
        let (label, kind, held) = match spike.dominant_contributor() {
            Some(c) => (label(&c.cause), cause_kind(&c.cause), c.duration_ns),
            None => ("unexplained".to_string(), "unknown", 0),
        };
        match groups.iter_mut().find(|g| g.label == label) {
            Some(g) => {
                g.count += 1;
                g.longest_ns = g.longest_ns.max(held);
            }
            None => groups.push(CauseGroup {
                label,
                kind,
                count: 1,
                longest_ns: held,
            }),
        }
    }
    groups.sort_by(|a, b| {
        b.count
            .cmp(&a.count)
            .then(b.longest_ns.cmp(&a.longest_ns))
            .then(a.label.cmp(&b.label))
    });
    groups
}
