//! The platform's own rules on one CPU, as the analysis counts them: the servers that take
//! the CPU from the real-time tasks for part of every window (RT throttling, the deadline
//! fair server) and the platform's threads and interrupts that can preempt a task (the
//! preemption map, [`super::preemption`]). Pure data and arithmetic here; what is read from
//! /proc and /sys is read by `rtgauge-sysinfo` ([`rtgauge_sysinfo::sched`]).

use rtgauge_core::units::format_duration_ns;

/// Which rule a [`Server`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerKind {
    /// RT throttling: the real-time class may run `runtime_ns` of every `period_ns`, then
    /// every real-time task of the CPU is stopped until the window ends.
    RtThrottling,
    /// The deadline fair server: `runtime_ns` of every `period_ns` reserved for normal
    /// (SCHED_OTHER) tasks, taken from the real-time ones when those leave too little.
    FairServer,
}

/// A rule that takes a CPU from its real-time tasks for part of each window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Server {
    pub kind: ServerKind,
    pub runtime_ns: u64,
    pub period_ns: u64,
    /// Where the figures come from, in words (`kernel.sched_rt_runtime_us`, `cpu cgroup /a`).
    pub source: String,
}

impl Server {
    /// The name the task lines and the attribution use.
    pub fn name(&self) -> &'static str {
        match self.kind {
            ServerKind::RtThrottling => "RT throttling",
            ServerKind::FairServer => "fair server",
        }
    }

    /// How long the real-time tasks are kept off the CPU per window once the rule acts.
    pub fn blackout_ns(&self) -> u64 {
        match self.kind {
            ServerKind::RtThrottling => self.period_ns.saturating_sub(self.runtime_ns),
            ServerKind::FairServer => self.runtime_ns.min(self.period_ns),
        }
    }

    /// How much real-time demand per window the rule lets through before it acts.
    pub fn allowance_ns(&self) -> u64 {
        self.period_ns - self.blackout_ns()
    }

    /// The fix, and what it costs.
    pub fn fix(&self) -> &'static str {
        match self.kind {
            ServerKind::RtThrottling => "sysctl kernel.sched_rt_runtime_us=-1 (it costs the last guard against a runaway real-time task: one spinning at high priority then locks up its CPU for good)",
            ServerKind::FairServer => "echo 0 > /sys/kernel/debug/sched/fair_server/cpuN/runtime (it costs the guarantee that normal tasks, kernel workers among them, ever run on that CPU while real-time tasks keep it busy)",
        }
    }

    /// `RT throttling 50ms per 1s`.
    pub fn describe(&self) -> String {
        format!(
            "{} {} per {}",
            self.name(),
            format_duration_ns(self.blackout_ns()),
            format_duration_ns(self.period_ns)
        )
    }
}

/// A thread or interrupt of the platform (not one of the set's tasks) that can preempt the
/// tasks of a CPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preemptor {
    /// `irq/24-eth0`, `ksoftirqd/1`, `helper (pid 4242)`, `tick`.
    pub name: String,
    /// The fixed priority it runs at; [`Preemptor::ABOVE_ALL`] for what preempts every
    /// fixed-priority task (a hard interrupt, the tick, a SCHED_DEADLINE thread).
    pub priority: i32,
    /// A thread (each preemption costs two context switches), not an interrupt.
    pub thread: bool,
    /// A real-time thread: its run time counts against the RT throttling budget.
    pub realtime: bool,
    /// Its measured demand: (work, per window) in ns; None: not measured.
    pub demand: Option<(u64, u64)>,
}

impl Preemptor {
    /// The priority of what preempts every fixed-priority task.
    pub const ABOVE_ALL: i32 = i32::MAX;

    /// Whether it can preempt (or, at equal priority, queue ahead of) a fixed-priority task
    /// at `priority`.
    pub fn preempts(&self, priority: i32) -> bool {
        self.priority >= priority
    }
}

/// The rules and preemptors of one CPU.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CpuPlatform {
    pub servers: Vec<Server>,
    pub preemptors: Vec<Preemptor>,
}

/// One term of a prediction beyond the set's own tasks: `+ RT throttling 50ms per 1s`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Term {
    pub name: String,
    /// Time taken per window, in ns (a preempting thread's includes its two switches).
    pub work_ns: u64,
    pub per_ns: u64,
}

impl Term {
    /// `+ irq/24-eth0 12µs per 1ms`.
    pub fn describe(&self) -> String {
        format!("+ {}", self.describe_plain())
    }

    /// `irq/24-eth0 12µs per 1ms`.
    pub fn describe_plain(&self) -> String {
        format!(
            "{} {} per {}",
            self.name,
            format_duration_ns(self.work_ns),
            format_duration_ns(self.per_ns)
        )
    }

    /// The interference of this term in a window of `w` ns: one whole take per window
    /// started (the worst case has the take begin with the window).
    pub fn interference(&self, w: u64) -> u64 {
        w.div_ceil(self.per_ns.max(1)).saturating_mul(self.work_ns)
    }
}
