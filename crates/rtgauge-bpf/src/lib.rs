//! rtgauge's flight recorder in the kernel. BPF programs on the scheduler's switches and
//! wake-ups, interrupt handlers, x86's system vectors, hrtimer expiries, softirqs, work items
//! and NMI handlers (tp_btf) keep, for each recorded CPU, a ring of
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
mod symbols;
mod watch;

pub use events::{state_letter, to_event, to_event_named};
pub use symbols::Symbols;
pub use watch::{Spike, Watch};

use aya::maps::{Array, Map, MapData, RingBuf};
use aya::programs::{BtfTracePoint, ProgramError};
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

/// A program and the tracepoint it is attached to.
struct Program {
    name: &'static str,
    /// The tracepoint's name in the kernel's BTF (`btf_trace_<tracepoint>`).
    tracepoint: &'static str,
    /// Its system in tracefs (`irq`, `workqueue`, …), to name it as the session does.
    system: &'static str,
    /// Skipped where the kernel has no such tracepoint (x86's vectors and NMI handlers on
    /// other architectures; softirqs and work items, which every kernel with BTF has, so a
    /// kernel without them loses only their events).
    optional: bool,
}

const fn program(
    name: &'static str,
    tracepoint: &'static str,
    system: &'static str,
    optional: bool,
) -> Program {
    Program {
        name,
        tracepoint,
        system,
        optional,
    }
}

/// The programs, attached in this order.
const PROGRAMS: [Program; 32] = [
    program("on_switch", "sched_switch", "sched", false),
    program("on_wakeup", "sched_wakeup", "sched", false),
    program("on_irq_entry", "irq_handler_entry", "irq", false),
    program("on_irq_exit", "irq_handler_exit", "irq", false),
    program("on_hrtimer_entry", "hrtimer_expire_entry", "timer", false),
    program(
        "on_local_timer_entry",
        "local_timer_entry",
        "irq_vectors",
        true,
    ),
    program(
        "on_local_timer_exit",
        "local_timer_exit",
        "irq_vectors",
        true,
    ),
    program(
        "on_reschedule_entry",
        "reschedule_entry",
        "irq_vectors",
        true,
    ),
    program("on_reschedule_exit", "reschedule_exit", "irq_vectors", true),
    program(
        "on_call_function_entry",
        "call_function_entry",
        "irq_vectors",
        true,
    ),
    program(
        "on_call_function_exit",
        "call_function_exit",
        "irq_vectors",
        true,
    ),
    program(
        "on_call_function_single_entry",
        "call_function_single_entry",
        "irq_vectors",
        true,
    ),
    program(
        "on_call_function_single_exit",
        "call_function_single_exit",
        "irq_vectors",
        true,
    ),
    program("on_irq_work_entry", "irq_work_entry", "irq_vectors", true),
    program("on_irq_work_exit", "irq_work_exit", "irq_vectors", true),
    program(
        "on_x86_platform_ipi_entry",
        "x86_platform_ipi_entry",
        "irq_vectors",
        true,
    ),
    program(
        "on_x86_platform_ipi_exit",
        "x86_platform_ipi_exit",
        "irq_vectors",
        true,
    ),
    program(
        "on_thermal_apic_entry",
        "thermal_apic_entry",
        "irq_vectors",
        true,
    ),
    program(
        "on_thermal_apic_exit",
        "thermal_apic_exit",
        "irq_vectors",
        true,
    ),
    program(
        "on_threshold_apic_entry",
        "threshold_apic_entry",
        "irq_vectors",
        true,
    ),
    program(
        "on_threshold_apic_exit",
        "threshold_apic_exit",
        "irq_vectors",
        true,
    ),
    program(
        "on_deferred_error_apic_entry",
        "deferred_error_apic_entry",
        "irq_vectors",
        true,
    ),
    program(
        "on_deferred_error_apic_exit",
        "deferred_error_apic_exit",
        "irq_vectors",
        true,
    ),
    program(
        "on_error_apic_entry",
        "error_apic_entry",
        "irq_vectors",
        true,
    ),
    program("on_error_apic_exit", "error_apic_exit", "irq_vectors", true),
    program(
        "on_spurious_apic_entry",
        "spurious_apic_entry",
        "irq_vectors",
        true,
    ),
    program(
        "on_spurious_apic_exit",
        "spurious_apic_exit",
        "irq_vectors",
        true,
    ),
    program("on_softirq_entry", "softirq_entry", "irq", true),
    program("on_softirq_exit", "softirq_exit", "irq", true),
    program(
        "on_work_start",
        "workqueue_execute_start",
        "workqueue",
        true,
    ),
    program("on_work_end", "workqueue_execute_end", "workqueue", true),
    program("on_nmi", "nmi_handler", "nmi", true),
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
    /// The optional tracepoints this kernel does not have, as tracefs names them.
    skipped: Vec<String>,
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
        let mut skipped = Vec::new();
        for p in &PROGRAMS {
            let program: &mut BtfTracePoint = ebpf
                .program_mut(p.name)
                .ok_or_else(|| Error::Kernel(format!("the object has no program {}", p.name)))?
                .try_into()
                .map_err(kernel_error)?;
            match program.load(p.tracepoint, &btf) {
                Ok(()) => {}
                // Not in this kernel's BTF (another architecture, an older kernel): recorded
                // without it. Any other failure (the verifier's) is the kernel's refusal.
                Err(ProgramError::Btf(_)) if p.optional => {
                    skipped.push(format!("{}:{}", p.system, p.tracepoint));
                    continue;
                }
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
        // The functions' names, read now rather than at the first late wake-up.
        Symbols::kernel();
        Ok(Recorder {
            rings,
            spikes: std::sync::Mutex::new(spikes),
            watches,
            _watch_map: watch_map,
            skipped,
            _ebpf: ebpf,
        })
    }

    /// The events attribution wants and this recorder does not record here: the optional
    /// tracepoints this kernel does not have, as tracefs names them (the session would miss
    /// them too).
    pub fn events_missing(&self) -> Vec<String> {
        self.skipped.clone()
    }

    /// The name, run count and total run time of each attached program, as the kernel counts
    /// them while its BPF statistics are on (`aya::sys::enable_stats`, or
    /// /proc/sys/kernel/bpf_stats_enabled); zero while they are off.
    pub fn program_stats(&self) -> Vec<(String, u64, std::time::Duration)> {
        self._ebpf
            .programs()
            .filter_map(|(name, program)| {
                let info = program.info().ok()?;
                Some((name.to_owned(), info.run_count(), info.run_time()))
            })
            .collect()
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
