//! Tasks as rt-app describes them when they are more than a periodic job: phases, each an
//! ordered list of events (run, sleep, timer, locks, condition variables, barriers,
//! suspend/resume, fork …) repeated `loops` times. Read from rt-app JSON ([`super::rtapp`]),
//! run by [`super::steps`], measured per pass through a phase as rt-app logs it (period,
//! run, timer wake-up latency), and outside the response-time analysis.

use super::spec::TaskPolicy;

/// Where a timer's next expiry is kept: shared by every task naming it, or the task's own
/// (rt-app's `unique…` timers are one per thread).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimerRef {
    Shared(usize),
    Own(usize),
}

/// One rt-app event. Indices point into [`Objects`]' lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// A fixed amount of work: `ns` of this thread's CPU time (rt-app `run`).
    Run(u64),
    /// Busy for `ns` of wall time, whatever the CPU gives (rt-app `runtime`).
    Runtime(u64),
    Sleep(u64),
    /// Sleeps until the timer's next expiry, `period_ns` after its last one; `absolute`
    /// keeps the schedule when late, else it restarts from now (rt-app's relative mode).
    Timer {
        timer: TimerRef,
        period_ns: u64,
        absolute: bool,
    },
    Lock(usize),
    Unlock(usize),
    /// pthread_cond_wait on `cond` with `mutex` (which a `lock` event holds).
    Wait {
        cond: usize,
        mutex: usize,
    },
    Signal(usize),
    Broad(usize),
    /// Signal then wait, atomically with respect to `mutex`.
    Sync {
        cond: usize,
        mutex: usize,
    },
    Barrier(usize),
    Suspend(usize),
    Resume(usize),
    Yield,
    /// Writes this many bytes into the task's memory buffer.
    Mem(u64),
    /// Writes this many bytes to the I/O device (`/dev/null` unless `io_device`).
    IoRun(u64),
    /// Starts another thread running the task at this index of [`Programs::tasks`].
    Fork(usize),
}

impl Step {
    /// Whether the step can wait for another thread (so the end of the run must be able to
    /// interrupt it).
    pub fn blocks(&self) -> bool {
        matches!(
            self,
            Step::Lock(_)
                | Step::Wait { .. }
                | Step::Sync { .. }
                | Step::Barrier(_)
                | Step::Suspend(_)
        )
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Phase {
    pub name: String,
    pub loops: u64,
    pub steps: Vec<Step>,
}

/// One thread of an rt-app task (an `instance`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgramTask {
    /// The series' label: the rt-app task's name, `-N` added per instance when there are
    /// several.
    pub name: String,
    pub policy: TaskPolicy,
    /// 1..=99 for fifo and rr.
    pub priority: i32,
    /// The nice value of a SCHED_OTHER task (rt-app's `priority` for that policy).
    pub nice: i32,
    /// SCHED_DEADLINE: runtime, deadline, period.
    pub reservation: Option<(u64, u64, u64)>,
    /// None: wherever the kernel places it (rt-app's default, all CPUs).
    pub cpu: Option<usize>,
    pub delay_ns: u64,
    /// Passes through all phases; None: until the run ends.
    pub loops: Option<u64>,
    pub phases: Vec<Phase>,
    /// False for rt-app's `instance: 0`: the task runs only when another forks it.
    pub starts: bool,
    /// How many timers of its own (`unique…`) it keeps.
    pub own_timers: usize,
    /// Bytes of the buffer its `mem` and `iorun` events write (0: none used).
    pub buffer_bytes: usize,
}

/// The named objects the tasks' events share.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Objects {
    pub mutexes: Vec<String>,
    /// Condition variables: `wait`/`signal`/`broad`/`sync` references and `suspend`/`resume`
    /// names (each with a mutex of its own for suspend and resume).
    pub conds: Vec<String>,
    /// Each barrier's name and how many threads use it.
    pub barriers: Vec<(String, usize)>,
    pub timers: Vec<String>,
    /// Mutexes inherit the priority of their highest waiter (rt-app's `pi_enabled`).
    pub priority_inheritance: bool,
    /// Where `iorun` writes.
    pub io_device: String,
}

/// The rt-app tasks that are not a periodic job, with what they share.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Programs {
    pub tasks: Vec<ProgramTask>,
    pub objects: Objects,
    /// What was read from the file but is not applied the same way, one phrase each.
    pub notes: Vec<String>,
}

impl Programs {
    /// One line per task for the run's parameters: `browser: 3 phases, SCHED_OTHER`.
    pub fn describe(&self) -> String {
        self.tasks
            .iter()
            .filter(|t| t.starts)
            .map(|t| {
                let steps: usize = t.phases.iter().map(|p| p.steps.len()).sum();
                format!(
                    "{} {} phase{} of {steps} event{} on {}",
                    t.name,
                    t.phases.len(),
                    if t.phases.len() == 1 { "" } else { "s" },
                    if steps == 1 { "" } else { "s" },
                    t.cpu.map_or("any cpu".to_string(), |c| format!("cpu {c}"))
                )
            })
            .collect::<Vec<_>>()
            .join("; ")
    }
}
