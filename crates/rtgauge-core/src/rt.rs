//! The real-time execution context every probe runs in: scheduling policy and priority, CPU
//! affinity, memory locking with stack prefault, `/dev/cpu_dma_latency`, timer slack.
//!
//! A setting that cannot be applied is an [`RtError`] whose message names the cause and the
//! fix. With best effort the shortfall is recorded instead, so a result always says what was
//! really obtained.

use rtgauge_os::process::{self, Limit};
use rtgauge_os::sched::{self, ThreadPolicy};
use rtgauge_result::Obtained;
use std::fs::{self, File, OpenOptions};
use std::io::Write;

/// Scheduling policy of the measuring threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    Other,
    Fifo,
    Rr,
    /// SCHED_DEADLINE reservation (runtime ≤ deadline ≤ period).
    Deadline {
        runtime_ns: u64,
        deadline_ns: u64,
        period_ns: u64,
    },
}

impl Policy {
    pub fn name(&self) -> &'static str {
        match self {
            Policy::Other => "other",
            Policy::Fifo => "fifo",
            Policy::Rr => "rr",
            Policy::Deadline { .. } => "deadline",
        }
    }

    pub fn is_realtime(&self) -> bool {
        !matches!(self, Policy::Other)
    }
}

/// A named execution context: the seeds' "user soft RT" (`normal`), "user hard RT" (`rt`),
/// and `deadline`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mode {
    pub name: String,
    pub policy: Policy,
    pub priority: i32,
    pub lock_memory: bool,
    pub pin: bool,
    pub pm_qos: bool,
    /// Timer slack to request; None keeps the default (50 µs for SCHED_OTHER threads).
    pub timer_slack_ns: Option<u64>,
}

pub use rtgauge_os::sched::DEFAULT_PRIORITY;
pub const MODE_NAMES: &str = "normal, rt, deadline";

impl Mode {
    /// SCHED_OTHER, nothing locked, not pinned: what an ordinary process gets.
    pub fn normal() -> Mode {
        Mode {
            name: "normal".into(),
            policy: Policy::Other,
            priority: 0,
            lock_memory: false,
            pin: true,
            pm_qos: false,
            timer_slack_ns: None,
        }
    }

    /// FIFO at `priority`, memory locked, pinned, PM QoS held, 1 ns timer slack.
    pub fn rt(priority: i32, policy: Policy) -> Mode {
        Mode {
            name: "rt".into(),
            policy,
            priority,
            lock_memory: true,
            pin: true,
            pm_qos: true,
            timer_slack_ns: Some(1),
        }
    }

    /// SCHED_DEADLINE with a reservation; not pinned, because the kernel refuses deadline
    /// tasks whose affinity is narrower than their root domain.
    pub fn deadline(runtime_ns: u64, deadline_ns: u64, period_ns: u64) -> Mode {
        Mode {
            name: "deadline".into(),
            policy: Policy::Deadline {
                runtime_ns,
                deadline_ns,
                period_ns,
            },
            priority: 0,
            lock_memory: true,
            pin: false,
            pm_qos: true,
            timer_slack_ns: Some(1),
        }
    }
}

/// A real-time setting that could not be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RtError {
    #[error("cannot run at {what}: {cause}; fix: {fix}")]
    Scheduling {
        what: String,
        cause: String,
        fix: String,
    },
    #[error("cannot lock memory (mlockall): {cause}; fix: {fix}")]
    MemoryLock { cause: String, fix: String },
    #[error(
        "cannot pin to CPU {cpu}: {cause}; fix: choose online CPUs with --cpus (online: {online})"
    )]
    Affinity {
        cpu: usize,
        cause: String,
        online: String,
    },
    #[error("cannot hold /dev/cpu_dma_latency: {cause}; fix: run as root, or add --best-effort and accept C-state exit latency in the numbers")]
    DmaLatency { cause: String },
}

const PRIVILEGE_FIX: &str = "run as root, or grant the binary the capabilities with `sudo setcap cap_sys_nice,cap_ipc_lock+ep $(command -v rtgauge)`, or raise the limits in /etc/security/limits.conf (`@realtime - rtprio 98` and `@realtime - memlock unlimited`); or use --mode normal, or --best-effort to continue without it";

/// Facts about this process's privileges that explain a refusal.
#[derive(Debug, Clone, Default)]
pub struct Privileges {
    pub euid: u32,
    pub cap_sys_nice: bool,
    pub cap_ipc_lock: bool,
    pub rlimit_rtprio: u64,
    pub rlimit_memlock: u64,
}

impl Privileges {
    pub fn current() -> Privileges {
        let caps = fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("CapEff:"))
                    .and_then(|l| u64::from_str_radix(l[7..].trim(), 16).ok())
            })
            .unwrap_or(0);
        Privileges {
            euid: process::euid(),
            cap_sys_nice: caps & (1 << 23) != 0,
            cap_ipc_lock: caps & (1 << 14) != 0,
            rlimit_rtprio: process::soft_limit(Limit::RtPrio).unwrap_or(0),
            rlimit_memlock: process::soft_limit(Limit::MemLock).unwrap_or(0),
        }
    }

    pub fn is_root(&self) -> bool {
        self.euid == 0
    }
}

/// Explains why the kernel refused a real-time policy.
fn diagnose_scheduling(priority: i32, err: &std::io::Error) -> (String, String) {
    let p = Privileges::current();
    if err.kind() == std::io::ErrorKind::InvalidInput {
        return (
            format!("priority {priority} is out of range for this policy"),
            format!("use a priority between 1 and 99 ({DEFAULT_PRIORITY} is the default; 99 belongs to kernel housekeeping)"),
        );
    }
    if !p.is_root() && !p.cap_sys_nice && p.rlimit_rtprio < priority as u64 {
        return (
            format!(
                "not root, no CAP_SYS_NICE, and RLIMIT_RTPRIO is {}",
                p.rlimit_rtprio
            ),
            PRIVILEGE_FIX.into(),
        );
    }
    let runtime = fs::read_to_string("/proc/sys/kernel/sched_rt_runtime_us").unwrap_or_default();
    if runtime.trim() == "0" {
        return (
            "kernel.sched_rt_runtime_us is 0, so no real-time task may run".into(),
            "`sysctl -w kernel.sched_rt_runtime_us=950000` (or -1 to disable RT throttling)".into(),
        );
    }
    (
        "the RT bandwidth of this cgroup or container is 0 (privileges are present)".into(),
        "give the cgroup real-time runtime (cgroup v1 cpu.rt_runtime_us), or start the container with `--cap-add SYS_NICE --cpu-rt-runtime=950000 --ulimit rtprio=99`".into(),
    )
}

/// Sets the scheduling policy of the calling thread.
fn set_thread_policy(policy: Policy, priority: i32) -> Result<(), RtError> {
    let what = match policy {
        Policy::Deadline { .. } => "SCHED_DEADLINE".to_string(),
        _ => format!("SCHED_{} priority {priority}", policy.name().to_uppercase()),
    };
    let applied = match policy {
        Policy::Deadline {
            runtime_ns,
            deadline_ns,
            period_ns,
        } => sched::set_deadline(runtime_ns, deadline_ns, period_ns),
        Policy::Fifo => sched::set_scheduler(ThreadPolicy::Fifo, priority),
        Policy::Rr => sched::set_scheduler(ThreadPolicy::Rr, priority),
        Policy::Other => sched::set_scheduler(ThreadPolicy::Other, 0),
    };
    let Err(err) = applied else {
        return Ok(());
    };
    let (cause, fix) = match policy {
        Policy::Deadline { .. }
            if matches!(
                err.kind(),
                std::io::ErrorKind::InvalidInput | std::io::ErrorKind::ResourceBusy
            ) =>
        {
            (
            "the kernel refused the reservation (runtime ≤ deadline ≤ period is required, and the total must fit the RT bandwidth)".to_string(),
            "pass a smaller --dl-runtime or a longer --period".to_string(),
            )
        }
        _ => diagnose_scheduling(priority, &err),
    };
    Err(RtError::Scheduling { what, cause, fix })
}

/// Pins the calling thread to `cpu`.
fn pin_thread(cpu: usize) -> Result<(), RtError> {
    if cpu >= sched::CPU_SET_SIZE {
        return Err(affinity_error(cpu, "beyond the CPU set size".into()));
    }
    sched::set_affinity(&[cpu]).map_err(|e| affinity_error(cpu, e.to_string()))
}

fn affinity_error(cpu: usize, cause: String) -> RtError {
    RtError::Affinity {
        cpu,
        cause,
        online: crate::cpus::format_cpu_list(&rtgauge_os::cpus::online_cpus()),
    }
}

/// Pins the calling thread to any of `cpus` (used to keep helper threads off measured CPUs).
pub fn pin_thread_to_set(cpus: &[usize]) -> bool {
    let settable: Vec<usize> = cpus
        .iter()
        .copied()
        .filter(|&c| c < sched::CPU_SET_SIZE)
        .collect();
    !settable.is_empty() && sched::set_affinity(&settable).is_ok()
}

/// Touches `STACK_PREFAULT` bytes of stack so the hot loop never faults on a fresh stack page.
#[inline(never)]
pub fn prefault_stack() {
    const STACK_PREFAULT: usize = 256 * 1024;
    let mut buf = [0u8; STACK_PREFAULT];
    std::hint::black_box(&mut buf);
}

/// The process-wide part of a mode: memory lock and the PM QoS request. Released on drop.
pub struct ProcessContext {
    dma_latency: Option<File>,
    memory_locked: bool,
    shortfalls: Vec<String>,
}

impl ProcessContext {
    pub fn enter(mode: &Mode, best_effort: bool) -> Result<ProcessContext, RtError> {
        let mut ctx = ProcessContext {
            dma_latency: None,
            memory_locked: false,
            shortfalls: Vec::new(),
        };
        if mode.lock_memory {
            if let Err(e) = process::lock_memory() {
                let p = Privileges::current();
                let err = RtError::MemoryLock {
                    cause: format!(
                        "{e} (RLIMIT_MEMLOCK is {} bytes, CAP_IPC_LOCK {})",
                        p.rlimit_memlock,
                        if p.cap_ipc_lock { "held" } else { "missing" }
                    ),
                    fix: PRIVILEGE_FIX.into(),
                };
                ctx.shortfall(err, best_effort)?;
            } else {
                ctx.memory_locked = true;
            }
        } else {
            // Undoes a previous mode's lock.
            process::unlock_memory();
        }
        if mode.pm_qos {
            match OpenOptions::new().write(true).open("/dev/cpu_dma_latency") {
                Ok(mut f) => {
                    // The request is a binary s32 in µs; it holds while the file stays open.
                    if f.write_all(&0i32.to_ne_bytes()).is_ok() {
                        ctx.dma_latency = Some(f);
                    }
                }
                Err(e) => ctx.shortfall(
                    RtError::DmaLatency {
                        cause: e.to_string(),
                    },
                    best_effort,
                )?,
            }
        }
        Ok(ctx)
    }

    fn shortfall(&mut self, err: RtError, best_effort: bool) -> Result<(), RtError> {
        if best_effort {
            self.shortfalls.push(err.to_string());
            Ok(())
        } else {
            Err(err)
        }
    }

    pub fn memory_locked(&self) -> bool {
        self.memory_locked
    }

    pub fn dma_latency_held(&self) -> bool {
        self.dma_latency.is_some()
    }

    pub fn shortfalls(&self) -> &[String] {
        &self.shortfalls
    }
}

impl Drop for ProcessContext {
    fn drop(&mut self) {
        if self.memory_locked {
            process::unlock_memory();
        }
        // Closing the file releases the PM QoS request.
        self.dma_latency.take();
    }
}

/// Applies the per-thread part of `mode` to the calling thread: affinity, policy, timer
/// slack and stack prefault. Returns what was obtained.
pub fn enter_thread(
    mode: &Mode,
    cpu: Option<usize>,
    best_effort: bool,
) -> Result<Obtained, RtError> {
    // Every measuring thread comes through here: a stop request must be able to interrupt
    // its sleeps and blocking waits.
    crate::signals::wake_on_stop();
    let mut obtained = Obtained {
        policy: "other".into(),
        ..Obtained::default()
    };
    let shortfall = |err: RtError, obtained: &mut Obtained| {
        if best_effort {
            obtained.shortfalls.push(err.to_string());
            Ok(())
        } else {
            Err(err)
        }
    };
    if let (true, Some(cpu)) = (mode.pin, cpu) {
        match pin_thread(cpu) {
            Ok(()) => obtained.pinned = true,
            // A CPU that does not exist is never acceptable, even with best effort.
            Err(e) => return Err(e),
        }
    }
    match set_thread_policy(mode.policy, mode.priority) {
        Ok(()) => {
            obtained.policy = mode.policy.name().into();
            obtained.priority = if matches!(mode.policy, Policy::Fifo | Policy::Rr) {
                mode.priority
            } else {
                0
            };
        }
        Err(e) => shortfall(e, &mut obtained)?,
    }
    if let Some(slack) = mode.timer_slack_ns {
        process::set_timer_slack_ns(slack);
    }
    obtained.timer_slack_ns = Some(process::timer_slack_ns());
    prefault_stack();
    Ok(obtained)
}

/// Puts the calling thread back to SCHED_OTHER (used after a permission preflight).
pub fn leave_thread() {
    let _ = set_thread_policy(Policy::Other, 0);
}

/// Combines the process and thread parts of what was obtained.
pub fn combine(process: &ProcessContext, thread: Obtained) -> Obtained {
    let mut o = thread;
    o.memory_locked = process.memory_locked();
    o.cpu_dma_latency_held = process.dma_latency_held();
    let mut shortfalls = process.shortfalls().to_vec();
    shortfalls.append(&mut o.shortfalls);
    o.shortfalls = shortfalls;
    o
}

/// Checks, before anything is measured or written, that `mode` can be applied here:
/// a throwaway thread tries the policy and gives it back.
pub fn preflight(mode: &Mode) -> Result<(), RtError> {
    let mode = mode.clone();
    std::thread::spawn(move || {
        let r = set_thread_policy(mode.policy, mode.priority);
        leave_thread();
        r
    })
    .join()
    .unwrap_or(Ok(()))?;
    // The process part is entered and released at once.
    ProcessContext::enter(&mode, false).map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_mode_always_applies() {
        let o = std::thread::spawn(|| enter_thread(&Mode::normal(), Some(0), false))
            .join()
            .unwrap()
            .unwrap();
        assert_eq!(o.policy, "other");
        assert!(o.pinned);
        assert!(o.shortfalls.is_empty());
    }

    #[test]
    fn a_missing_cpu_is_refused_even_with_best_effort() {
        let e = std::thread::spawn(|| enter_thread(&Mode::normal(), Some(4000), true))
            .join()
            .unwrap()
            .unwrap_err();
        assert!(e.to_string().contains("cannot pin to CPU 4000"), "{e}");
        assert!(e.to_string().contains("--cpus"), "{e}");
    }

    #[test]
    fn out_of_range_priority_names_the_accepted_range() {
        let e = std::thread::spawn(|| set_thread_policy(Policy::Fifo, 150))
            .join()
            .unwrap()
            .unwrap_err();
        assert!(e.to_string().contains("between 1 and 99"), "{e}");
    }
}
