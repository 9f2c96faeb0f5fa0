//! The worker side: what runs in `rtgauge __load-worker KIND CONFIG`.
//!
//! A worker reads its configuration, ties its life to the measuring process, maps its counter
//! slot, pins itself, and runs its load until it is killed; it never exits on its own unless
//! it fails, and then it says why in its slot.

use std::convert::Infallible;
use std::path::PathBuf;
use std::sync::atomic::{AtomicI32, Ordering};

use serde::{Deserialize, Serialize};

use crate::kinds::Kind;
use crate::shared::{Region, Slot};
use crate::sys;

mod compile;
mod cpu;
mod exec;
mod io;
mod memory;
mod messaging;
pub(crate) mod net;
mod rt_memory;
mod syscall;

/// The hidden sub-command that runs a worker: `rtgauge __load-worker KIND CONFIG`.
pub const WORKER_ARG: &str = "__load-worker";

/// Sent to a worker when the thread that spawned it exits. SIGHUP (not SIGKILL) because a
/// thread of the measuring process may exit while the process lives on; the handler tells
/// the two apart with getppid and only then kills the worker's whole group, including
/// programs an `exec:` or `compile` load started, which SIGKILL alone would orphan.
pub(crate) const PDEATH_SIGNAL: i32 = libc::SIGHUP;

/// What one worker does; sent by the parent as JSON in one argument.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct WorkerConfig {
    pub kind: Kind,
    /// Index of this worker's counter slot, also its rank among the load's workers.
    pub slot: usize,
    pub workers: usize,
    /// Affinity of the worker and everything it starts.
    pub cpus: Vec<usize>,
    /// Pid of the measuring process: when it dies, the worker dies.
    pub parent: u32,
    /// This worker's own scratch directory (loads that write files).
    pub scratch: Option<PathBuf>,
    /// Bytes this worker may keep on disk.
    pub disk_budget: u64,
    /// SCHED_FIFO priority of `rt-memory`.
    pub rt_priority: i32,
    /// Command of an `exec:` load.
    pub command: Option<String>,
    /// C compiler of `compile`.
    pub compiler: Option<PathBuf>,
    /// Descriptor of the shared counters file, inherited across exec. Its number in the
    /// parent is kept (not moved to a fixed one), so it cannot collide with a descriptor the
    /// standard library uses while spawning.
    pub counters_fd: i32,
}

/// What a load's `run` gets.
pub(crate) struct Ctx {
    pub cfg: WorkerConfig,
    pub slot: &'static Slot,
}

/// A load's main loop returns only when it fails.
pub(crate) type Outcome = Result<Infallible, String>;

static EXPECTED_PARENT: AtomicI32 = AtomicI32::new(0);

/// Entry point of the hidden `__load-worker` sub-command. Give it the arguments after
/// `__load-worker` (`&argv[2..]`); the whole `argv` is accepted too. Returns the process exit
/// status; in normal operation it never returns, because the worker runs until its parent
/// stops it.
pub fn worker_main(args: &[String]) -> i32 {
    let args = match args.iter().position(|a| a == WORKER_ARG) {
        Some(i) if i <= 1 => &args[i + 1..],
        _ => args,
    };
    let Some(json) = args.last() else {
        eprintln!("{WORKER_ARG}: missing worker configuration; this sub-command is started by rtgauge itself");
        return 2;
    };
    let cfg: WorkerConfig = match serde_json::from_str(json) {
        Ok(cfg) => cfg,
        Err(e) => {
            eprintln!("{WORKER_ARG}: invalid worker configuration ({e}); this sub-command is started by rtgauge itself");
            return 2;
        }
    };
    EXPECTED_PARENT.store(cfg.parent as i32, Ordering::Relaxed);
    install_signal_handlers();
    // The parent may have died before the handlers were in place.
    if parent_gone() {
        return 1;
    }
    let region = match Region::open(cfg.counters_fd) {
        Ok(region) => region,
        Err(e) => {
            eprintln!(
                "{WORKER_ARG}: cannot map the counters on fd {}: {e}",
                cfg.counters_fd
            );
            return 2;
        }
    };
    // The mapping lives as long as the process; forked children share it.
    let region: &'static Region = Box::leak(Box::new(region));
    let Some(slot) = region.slot(cfg.slot) else {
        eprintln!("{WORKER_ARG}: counter slot {} does not exist", cfg.slot);
        return 2;
    };
    if let Some(procs) = std::env::var_os(crate::LOAD_CGROUP_ENV) {
        // "0": this process, single-threaded so far; what it starts follows it.
        if let Err(e) = std::fs::write(&procs, "0") {
            slot.fail(&format!(
                "cannot join the cgroup {}: {e}",
                procs.to_string_lossy()
            ));
            return 3;
        }
    }
    if let Err(e) = sys::set_affinity(&cfg.cpus) {
        slot.fail(&format!("cannot run on CPUs {:?}: {e}", cfg.cpus));
        return 3;
    }
    let ctx = Ctx { cfg, slot };
    let outcome = match ctx.cfg.kind {
        Kind::Cpu => cpu::run(&ctx),
        Kind::Syscall => syscall::run(&ctx),
        Kind::Memory => memory::run(&ctx),
        Kind::RtMemory => rt_memory::run(&ctx),
        Kind::Messaging => messaging::run(&ctx),
        Kind::Io => io::run(&ctx),
        Kind::Net => net::run(&ctx),
        Kind::Compile => compile::run(&ctx),
        Kind::Exec => exec::run(&ctx),
    };
    let Err(reason) = outcome;
    slot.fail(&reason);
    3
}

fn parent_gone() -> bool {
    // SAFETY: getppid has no preconditions.
    unsafe { libc::getppid() != EXPECTED_PARENT.load(Ordering::Relaxed) }
}

/// SIGTERM/SIGINT (stop) kill the worker's whole process group at once: counters are already
/// in shared memory and the parent removes the scratch directory, so there is nothing to
/// flush. SIGHUP (parent death) does the same unless the parent is still there.
extern "C" fn on_stop(_: libc::c_int) {
    // SAFETY: kill is async-signal-safe; 0 = the caller's process group.
    unsafe {
        libc::kill(0, libc::SIGKILL);
    }
}

extern "C" fn on_parent_death(_: libc::c_int) {
    if parent_gone() {
        on_stop(0);
    }
}

fn install_signal_handlers() {
    let handlers: [(libc::c_int, extern "C" fn(libc::c_int)); 3] = [
        (libc::SIGTERM, on_stop),
        (libc::SIGINT, on_stop),
        (PDEATH_SIGNAL, on_parent_death),
    ];
    for (signal, handler) in handlers {
        // SAFETY: the handlers only call async-signal-safe functions; sigaction is given a
        // fully initialised struct.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = handler as usize;
            // A spurious parent-death signal (a parent thread exited) must not fail the
            // worker's blocking calls with EINTR.
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
}

/// For processes a worker starts (compiler, shell, forked children): die with the worker.
/// Runs between fork and exec, so only async-signal-safe calls.
pub(crate) fn die_with_parent(parent: libc::pid_t) -> std::io::Result<()> {
    // SAFETY: prctl/getppid/_exit are async-signal-safe and take no pointers.
    unsafe {
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) == -1 {
            return Err(std::io::Error::last_os_error());
        }
        if libc::getppid() != parent {
            libc::_exit(1);
        }
    }
    Ok(())
}

/// The calling process's pid.
pub(crate) fn own_pid() -> libc::pid_t {
    std::process::id() as libc::pid_t
}

/// Fills `buf` with a cheap pseudo-random pattern (not zeros, which some file systems compress
/// or skip).
pub(crate) fn fill_pattern(buf: &mut [u8], seed: u64) {
    let mut x = seed | 1;
    for chunk in buf.chunks_mut(8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let bytes = x.to_le_bytes();
        chunk.copy_from_slice(&bytes[..chunk.len()]);
    }
}
