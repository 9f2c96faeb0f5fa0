//! rtgauge's flight recorder in the kernel. BPF programs on `sched_switch`, `sched_wakeup`,
//! `irq_handler_entry` and `irq_handler_exit` (tp_btf) keep, for each recorded CPU, a ring of
//! the last [`ring::RING_LEN`] events in a BPF array map. Nothing leaves the kernel while
//! samples are on time; after a late one, user space copies the CPU's ring out
//! ([`Recorder::snapshot`]). Timestamps are `bpf_ktime_get_ns`, i.e. CLOCK_MONOTONIC, the clock
//! rtgauge's samples are taken on.
//!
//! The program is compiled from src/bpf/recorder.bpf.c at build time (build.rs, clang) and
//! relocated at load time against the running kernel's BTF (CO-RE), so one binary serves every
//! kernel with /sys/kernel/btf/vmlinux. Where BPF, BTF or the privilege is missing,
//! [`Recorder::start`] says so in one line and the caller keeps tracefs.

mod events;
pub mod ring;
mod watch;

pub use events::{state_letter, to_event};
pub use watch::{Spike, Watch};

use aya::maps::{Array, Map, MapData, RingBuf};
use aya::programs::BtfTracePoint;
use aya::{Btf, Ebpf, EbpfLoader};
use ring::RawRing;

/// Why the recorder cannot run here.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(
        "this rtgauge was built without the BPF flight recorder (clang was missing at build time)"
    )]
    NotBuilt,
    #[error("the kernel has no BTF (/sys/kernel/btf/vmlinux): the BPF flight recorder needs a kernel built with CONFIG_DEBUG_INFO_BTF")]
    NoBtf,
    #[error("the kernel has no BPF system call (a kernel built without CONFIG_BPF_SYSCALL, or an emulator)")]
    NoBpf,
    #[error("loading BPF programs needs root (or CAP_BPF and CAP_PERFMON)")]
    NotPermitted,
    #[error("CPU {0} cannot be recorded: the flight recorder covers CPUs 0-255")]
    CpuOutOfRange(u32),
    #[error("the kernel refused the BPF flight recorder: {0}")]
    Kernel(String),
}

#[cfg(rtgauge_bpf_object)]
static OBJECT: &[u8] = aya::include_bytes_aligned!(concat!(env!("OUT_DIR"), "/recorder.bpf.o"));
#[cfg(not(rtgauge_bpf_object))]
static OBJECT: &[u8] = &[];

/// Events the tracefs session records for attribution and the recorder does not (as the
/// session names them): time spent in them is counted in the stretch around them.
pub const NOT_RECORDED: &[&str] = &[
    "irq:softirq_entry",
    "irq:softirq_exit",
    "workqueue:workqueue_execute_start",
    "workqueue:workqueue_execute_end",
    "nmi:nmi_handler",
];

/// The tracepoints and the programs attached to them; the optional ones (x86's interrupt
/// vectors) are skipped where the kernel has no such tracepoint.
const PROGRAMS: [(&str, &str, bool); 13] = [
    ("on_switch", "sched_switch", false),
    ("on_wakeup", "sched_wakeup", false),
    ("on_irq_entry", "irq_handler_entry", false),
    ("on_irq_exit", "irq_handler_exit", false),
    ("on_hrtimer_entry", "hrtimer_expire_entry", false),
    ("on_local_timer_entry", "local_timer_entry", true),
    ("on_local_timer_exit", "local_timer_exit", true),
    ("on_reschedule_entry", "reschedule_entry", true),
    ("on_reschedule_exit", "reschedule_exit", true),
    ("on_call_function_entry", "call_function_entry", true),
    ("on_call_function_exit", "call_function_exit", true),
    (
        "on_call_function_single_entry",
        "call_function_single_entry",
        true,
    ),
    (
        "on_call_function_single_exit",
        "call_function_single_exit",
        true,
    ),
];

/// The loaded and attached recorder; detached when dropped.
pub struct Recorder {
    rings: Array<MapData, RawRing>,
    // Behind a lock so the recorder can be shared: the measuring threads hold its watch
    // slots while the reader thread takes the spikes out.
    spikes: std::sync::Mutex<RingBuf<MapData>>,
    // Declared before the map it maps, so it is unmapped first.
    watches: watch::WatchMapping,
    _watch_map: Map,
    // Owns the programs and their links: dropping it detaches them.
    _ebpf: Ebpf,
}

/// Maps a loader error to ours, by the operating-system error at the bottom of its chain.
fn kernel_error(e: impl std::error::Error) -> Error {
    let mut text = e.to_string();
    let mut source = e.source();
    let mut errno = None;
    while let Some(inner) = source {
        if let Some(io) = inner.downcast_ref::<std::io::Error>() {
            errno = io.raw_os_error();
        }
        text.push_str(": ");
        text.push_str(&inner.to_string());
        source = inner.source();
    }
    // SAFETY: geteuid cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    match errno {
        // The verifier refuses a program with EACCES too: for root that is the kernel's
        // refusal, with its log, not a missing privilege.
        Some(libc::EPERM) => Error::NotPermitted,
        Some(libc::EACCES) if !root => Error::NotPermitted,
        Some(libc::ENOSYS) => Error::NoBpf,
        _ => Error::Kernel(text),
    }
}

impl Recorder {
    /// Whether this build carries the BPF object at all.
    pub fn built() -> bool {
        !OBJECT.is_empty()
    }

    /// Loads the programs, records on `cpus` (CPU numbers below 256), attaches them.
    pub fn start(cpus: &[u32]) -> Result<Recorder, Error> {
        if !Self::built() {
            return Err(Error::NotBuilt);
        }
        let mut mask = [0u64; 4];
        for &cpu in cpus {
            if cpu >= 256 {
                return Err(Error::CpuOutOfRange(cpu));
            }
            mask[cpu as usize / 64] |= 1 << (cpu % 64);
        }
        let btf = Btf::from_sys_fs().map_err(|_| Error::NoBtf)?;
        let possible = possible_cpus();
        let mut ebpf = EbpfLoader::new()
            .btf(Some(&btf))
            .map_max_entries("rings", possible)
            .map_max_entries("watches", possible)
            .override_global("cpu_mask", &mask[..], true)
            .load(OBJECT)
            .map_err(kernel_error)?;
        for (name, tracepoint, optional) in PROGRAMS {
            let program: &mut BtfTracePoint = ebpf
                .program_mut(name)
                .ok_or_else(|| Error::Kernel(format!("the object has no program {name}")))?
                .try_into()
                .map_err(kernel_error)?;
            match program.load(tracepoint, &btf) {
                Ok(()) => {}
                // Not in this kernel's BTF (another architecture): recorded without it.
                Err(_) if optional => continue,
                Err(e) => return Err(kernel_error(e)),
            }
            program.attach().map_err(kernel_error)?;
        }
        let map = ebpf
            .take_map("rings")
            .ok_or_else(|| Error::Kernel("the object has no map rings".to_owned()))?;
        let rings = Array::try_from(map).map_err(kernel_error)?;
        let missing = |name: &str| Error::Kernel(format!("the object has no map {name}"));
        let spikes = ebpf.take_map("spikes").ok_or_else(|| missing("spikes"))?;
        let spikes = RingBuf::try_from(spikes).map_err(kernel_error)?;
        let watch_map = ebpf.take_map("watches").ok_or_else(|| missing("watches"))?;
        let Map::Array(data) = &watch_map else {
            return Err(missing("watches"));
        };
        let watches = watch::WatchMapping::new(std::os::fd::AsFd::as_fd(data.fd()), possible)
            .map_err(kernel_error)?;
        Ok(Recorder {
            rings,
            spikes: std::sync::Mutex::new(spikes),
            watches,
            _watch_map: watch_map,
            _ebpf: ebpf,
        })
    }

    /// The watch slot of `cpu`, for the thread measured there.
    pub fn watch(&self, cpu: u32) -> Option<Watch<'_>> {
        self.watches.slot(cpu).map(|slot| Watch { slot })
    }

    /// The next late wake-up the kernel sent, if any (never blocks).
    pub fn next_spike(&self) -> Option<Spike> {
        let mut spikes = self.spikes.lock().unwrap_or_else(|p| p.into_inner());
        let item = spikes.next()?;
        Spike::from_bytes(&item)
    }

    /// A copy of `cpu`'s ring as it is now.
    pub fn snapshot(&self, cpu: u32) -> Result<RawRing, Error> {
        self.rings.get(&cpu, 0).map_err(kernel_error)
    }
}

/// The number of possible CPUs (the ring map's size): /sys/devices/system/cpu/possible's
/// highest CPU plus one.
fn possible_cpus() -> u32 {
    std::fs::read_to_string("/sys/devices/system/cpu/possible")
        .ok()
        .and_then(|s| {
            s.trim()
                .split(',')
                .filter_map(|part| part.rsplit('-').next()?.parse::<u32>().ok())
                .max()
        })
        .map_or(256, |max| max + 1)
}
