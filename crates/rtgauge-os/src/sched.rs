//! Scheduling: priorities, policies, sched_setattr(2) and CPU affinity.

/// The measuring priority of `rt` mode unless `--priority` says otherwise: high, but below 99
/// where the kernel's own housekeeping threads run. The one definition (plan, CLI, doctor).
pub const DEFAULT_PRIORITY: i32 = 95;
/// The real-time priorities Linux accepts for SCHED_FIFO and SCHED_RR.
pub const PRIORITY_RANGE: std::ops::RangeInclusive<i32> = 1..=99;

/// Makes the calling thread SCHED_FIFO at `priority`.
pub fn set_fifo(priority: i32) -> std::io::Result<()> {
    set_scheduler(ThreadPolicy::Fifo, priority)
}

/// The policies a thread is given with a priority (sched_setscheduler(2)); SCHED_DEADLINE,
/// which takes a reservation instead, is set with [`set_deadline`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThreadPolicy {
    /// SCHED_OTHER: the time-sharing default (its priority is always 0).
    Other,
    /// SCHED_FIFO at a priority from [`PRIORITY_RANGE`].
    Fifo,
    /// SCHED_RR at a priority from [`PRIORITY_RANGE`].
    Rr,
}

/// Puts the calling thread under `policy` at `priority` (ignored for
/// [`ThreadPolicy::Other`]). The kernel's refusal comes back as its error: EINVAL
/// ([`std::io::ErrorKind::InvalidInput`]) for a priority out of range, EPERM without the
/// privilege.
pub fn set_scheduler(policy: ThreadPolicy, priority: i32) -> std::io::Result<()> {
    let (policy, priority) = match policy {
        ThreadPolicy::Other => (libc::SCHED_OTHER, 0),
        ThreadPolicy::Fifo => (libc::SCHED_FIFO, priority),
        ThreadPolicy::Rr => (libc::SCHED_RR, priority),
    };
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: valid param; pid 0 is the calling thread.
    if unsafe { libc::sched_setscheduler(0, policy, &param) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Gives the calling thread back to SCHED_OTHER (helper threads and children that must never
/// compete with measuring threads). A refusal leaves the policy it had: nothing to report.
pub fn set_other() {
    let _ = set_scheduler(ThreadPolicy::Other, 0);
}

/// pthread_setschedparam(3) on the calling thread, `policy` being the kernel's policy number
/// (`SCHED_FIFO`, `SCHED_RR`); false when refused. Inlined and nothing else: the primitive
/// probe times exactly this call.
#[inline(always)]
pub fn set_own_sched_param(policy: i32, priority: i32) -> bool {
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: pthread_self is always valid for the calling thread; param outlives the call.
    unsafe { libc::pthread_setschedparam(libc::pthread_self(), policy, &param) == 0 }
}

/// SCHED_DEADLINE's policy number (libc has no constant for it).
pub const SCHED_DEADLINE: u32 = 6;

/// Puts the calling thread under SCHED_DEADLINE with a reservation of `runtime_ns` every
/// `period_ns`, due `deadline_ns` after each period starts. The kernel refuses (EINVAL,
/// EBUSY) a reservation that breaks runtime ≤ deadline ≤ period or does not fit the RT
/// bandwidth.
pub fn set_deadline(runtime_ns: u64, deadline_ns: u64, period_ns: u64) -> std::io::Result<()> {
    let attr = SchedAttr {
        policy: SCHED_DEADLINE,
        runtime: runtime_ns,
        deadline: deadline_ns,
        period: period_ns,
        ..SchedAttr::default()
    };
    if sched_setattr(&attr) {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// The kernel's `struct sched_attr` (SCHED_ATTR_SIZE_VER0, 48 bytes): libc has no binding and
/// glibc no wrapper for sched_setattr/sched_getattr.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct SchedAttr {
    pub size: u32,
    pub policy: u32,
    pub flags: u64,
    pub nice: i32,
    pub priority: u32,
    pub runtime: u64,
    pub deadline: u64,
    pub period: u64,
}

impl Default for SchedAttr {
    /// All zero but the size, which the kernel checks.
    fn default() -> Self {
        SchedAttr {
            size: std::mem::size_of::<SchedAttr>() as u32,
            policy: 0,
            flags: 0,
            nice: 0,
            priority: 0,
            runtime: 0,
            deadline: 0,
            period: 0,
        }
    }
}

/// sched_setattr(2) for the calling thread; false with errno set when the kernel refuses.
#[inline(always)]
pub fn sched_setattr(attr: &SchedAttr) -> bool {
    // SAFETY: attr is a valid sched_attr of the size it declares; pid 0 is the calling thread.
    unsafe { libc::syscall(libc::SYS_sched_setattr, 0, attr as *const SchedAttr, 0u32) == 0 }
}

/// The CPUs thread `tid` (of any process) may run on.
pub fn affinity_of(tid: u32) -> std::io::Result<Vec<usize>> {
    // SAFETY: cpu_set_t is plain data, filled by the kernel; CPU_ISSET reads within it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        let size = std::mem::size_of::<libc::cpu_set_t>();
        if libc::sched_getaffinity(tid as libc::pid_t, size, &mut set) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok((0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect())
    }
}

/// Scheduling policy (`other`, `fifo`, `rr`, `deadline`; batch and idle are `other`) and
/// real-time priority of thread `tid` of any process.
pub fn scheduling_of(tid: u32) -> std::io::Result<(&'static str, i32)> {
    // SAFETY: plain queries of another thread; sched_param is plain data.
    unsafe {
        let policy = libc::sched_getscheduler(tid as libc::pid_t);
        if policy < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let mut param: libc::sched_param = std::mem::zeroed();
        if libc::sched_getparam(tid as libc::pid_t, &mut param) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let name = match policy & !libc::SCHED_RESET_ON_FORK {
            libc::SCHED_FIFO => "fifo",
            libc::SCHED_RR => "rr",
            p if p as u32 == SCHED_DEADLINE => "deadline",
            _ => "other",
        };
        Ok((name, param.sched_priority))
    }
}

/// How many CPUs an affinity set can name: [`set_affinity`] refuses any CPU from here on.
pub const CPU_SET_SIZE: usize = libc::CPU_SETSIZE as usize;

/// Restricts the calling thread (and the threads and processes it creates later) to `cpus`;
/// `EINVAL` for a CPU beyond the kernel's CPU set size.
pub fn set_affinity(cpus: &[usize]) -> std::io::Result<()> {
    set_affinity_of(0, cpus)
}

/// Pins the thread `tid` (0: the calling thread) to `cpus`; the kernel refuses a thread bound
/// to its CPU (EINVAL) and another user's thread without CAP_SYS_NICE (EPERM).
pub fn set_affinity_of(tid: u32, cpus: &[usize]) -> std::io::Result<()> {
    if cpus.iter().any(|&c| c >= CPU_SET_SIZE) {
        return Err(std::io::Error::from_raw_os_error(libc::EINVAL));
    }
    // SAFETY: cpu_set_t is plain data; CPU_SET is only given indices below CPU_SETSIZE.
    let rc = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus {
            libc::CPU_SET(c, &mut set);
        }
        libc::sched_setaffinity(
            tid as libc::pid_t,
            std::mem::size_of::<libc::cpu_set_t>(),
            &set,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn affinity_set_is_read_back_and_impossible_cpus_are_refused() {
        let before = affinity_of(0).unwrap();
        let first = before[0];
        std::thread::spawn(move || {
            set_affinity(&[first]).unwrap();
            assert_eq!(affinity_of(0).unwrap(), [first]);
            assert!(set_affinity(&[libc::CPU_SETSIZE as usize]).is_err());
        })
        .join()
        .unwrap();
        assert!(PRIORITY_RANGE.contains(&DEFAULT_PRIORITY) && DEFAULT_PRIORITY < 99);
    }
}
