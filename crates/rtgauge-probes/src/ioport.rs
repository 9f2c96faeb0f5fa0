//! `ioport`: x86 I/O port read and write time (Moryc's I/O port times), on port 0x80, the
//! POST-code port, which every PC decodes and nothing reads back: writing it is what the
//! kernel itself does for a short I/O delay, so the probe disturbs no device.
//!
//! One sample is one `in al, dx` (series `inb`) or one `out dx, al` (series `outb`) between
//! two clock reads. On bare metal that is an ISA/LPC bus cycle (about a microsecond); in a
//! virtual machine every port access traps to the hypervisor, so the time is the VM exit and
//! the emulation of the port — that is what it measures there, and the probe says so.
//!
//! Port access needs ioperm(2), which needs CAP_SYS_RAWIO (root), is refused under kernel
//! lockdown, and does not exist on kernels built without CONFIG_X86_IOPL_IOPERM (some cloud
//! and microVM kernels); the I/O permission bitmap is per thread, so the measuring thread asks
//! for it itself. Without it, or on another architecture, the probe is skipped with the
//! reason, never reported as zeros.
//!
//! Budget: `loops` is samples per series; a duration (and the warm-up) is split between them.

use rtgauge_core::probe::{About, ParamSpec, ProbeContext, ProbeError, ProbeOutput, TypedProbe};
use rtgauge_core::threads::{describe_split, on_first_cpu, split, Cell};
use rtgauge_result::Series;
// The measuring loop's needs: it exists on x86 only.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
use {
    rtgauge_core::clock::now_ns,
    rtgauge_core::threads::warm_up,
    rtgauge_stats::{Recorder, DEFAULT_INTERVAL_NS},
};

const PROBE: &str = crate::names::IOPORT;
/// The POST-code port.
pub const PORT: u16 = 0x80;
const DESCRIPTION: &str =
    "x86 I/O port read/write time on port 0x80 (in a VM: the trap to the hypervisor)";
const ABOUT: About = About::new(PROBE, DESCRIPTION, &PARAMS);
const PARAMS: [ParamSpec; 0] = [];
const CAP_SYS_RAWIO: u32 = 17;

pub struct IoPort;

impl TypedProbe for IoPort {
    const ABOUT: About = ABOUT;
    type Config = ();

    fn availability(&self) -> Result<(), String> {
        match no_access_reason() {
            Some(reason) => Err(reason),
            None => Ok(()),
        }
    }

    fn measure(&self, ctx: &ProbeContext, _: &mut ()) -> Result<ProbeOutput, ProbeError> {
        if let Some(reason) = no_access_reason() {
            return Err(ProbeError::Unavailable(reason));
        }
        let cell = split(ctx, 2);
        let (obtained, (series, measured_ns)) =
            on_first_cpu(PROBE, ctx, |_, _| measure(ctx, cell))?;
        let mut out = ProbeOutput::measured(obtained, series, Vec::new(), measured_ns);
        out.params.insert("port".into(), format!("{PORT:#x}"));
        out.params
            .insert("budget-per-cell".into(), describe_split(&cell));
        let virt = rtgauge_sysinfo::collect().virtualization;
        if !virt.is_empty() {
            out.warnings.push(format!(
                "running under virtualisation ({virt}): every port access traps to the hypervisor, so inb/outb time the VM exit and port emulation, not a bus cycle"
            ));
        }
        Ok(out)
    }
}

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
mod port {
    use core::arch::asm;

    #[inline(always)]
    pub fn inb(port: u16) -> u8 {
        let value: u8;
        // SAFETY: the caller holds ioperm for `port`; reading the POST port has no effect.
        unsafe {
            asm!("in al, dx", out("al") value, in("dx") port, options(nomem, nostack, preserves_flags));
        }
        value
    }

    #[inline(always)]
    pub fn outb(port: u16, value: u8) {
        // SAFETY: the caller holds ioperm for `port`; the POST port only latches the value.
        unsafe {
            asm!("out dx, al", in("dx") port, in("al") value, options(nomem, nostack, preserves_flags));
        }
    }

    /// Whether this kernel lets user space have port access at all: giving up a permission
    /// never held succeeds without privileges where ioperm exists, and fails with ENOSYS on
    /// kernels built without CONFIG_X86_IOPL_IOPERM.
    pub fn kernel_supports() -> bool {
        request(0x80, false).map_or_else(|e| e.raw_os_error() != Some(libc::ENOSYS), |_| true)
    }

    /// Asks the kernel for access to `port` for the calling thread.
    pub fn request(port: u16, on: bool) -> std::io::Result<()> {
        // SAFETY: ioperm has no pointer arguments.
        if unsafe { libc::ioperm(port.into(), 1, i32::from(on)) } == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    }
}

fn cap_effective(cap: u32) -> Option<bool> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("CapEff:"))?;
    let mask = u64::from_str_radix(line["CapEff:".len()..].trim(), 16).ok()?;
    Some(mask & (1 << cap) != 0)
}

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
const NO_KERNEL_SUPPORT: &str = "ioport: this kernel gives user space no I/O port access (ioperm returns ENOSYS: built without CONFIG_X86_IOPL_IOPERM); run on a kernel built with it";
const NO_ACCESS_FIX: &str = "port access needs CAP_SYS_RAWIO: run as root, or grant it with `sudo setcap cap_sys_rawio+ep $(command -v rtgauge)`";

/// Why the process cannot reach I/O ports here, if it cannot.
fn no_access_reason() -> Option<String> {
    if !cfg!(any(target_arch = "x86", target_arch = "x86_64")) {
        return Some(format!(
            "ioport: I/O ports exist only on x86; this is {}",
            std::env::consts::ARCH
        ));
    }
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    if !port::kernel_supports() {
        return Some(NO_KERNEL_SUPPORT.to_string());
    }
    (cap_effective(CAP_SYS_RAWIO) == Some(false))
        .then(|| format!("ioport: no I/O port access: {NO_ACCESS_FIX}"))
}

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
fn measure(ctx: &ProbeContext, cell: Cell) -> Result<(Vec<Series>, u64), ProbeError> {
    if let Err(e) = port::request(PORT, true) {
        let reason = if e.raw_os_error() == Some(libc::ENOSYS) {
            NO_KERNEL_SUPPORT.to_string()
        } else if e.raw_os_error() == Some(libc::EPERM)
            && cap_effective(CAP_SYS_RAWIO) == Some(true)
        {
            format!(
                "ioport: ioperm({PORT:#x}) refused ({e}) although CAP_SYS_RAWIO is held: kernel lockdown forbids port access (see /sys/kernel/security/lockdown)"
            )
        } else {
            format!("ioport: ioperm({PORT:#x}) refused ({e}): {NO_ACCESS_FIX}")
        };
        return Err(ProbeError::Unavailable(reason));
    }
    let live = ctx.live.register("ioport".into());
    let mut series = Vec::new();
    let mut measured = 0u64;
    for name in ["inb", "outb"] {
        if ctx.stopped() {
            break;
        }
        let read = name == "inb";
        let op = || {
            if read {
                std::hint::black_box(port::inb(PORT));
            } else {
                port::outb(PORT, 0);
            }
        };
        let mut rec = Recorder::new(DEFAULT_INTERVAL_NS);
        warm_up(ctx, cell.warmup_ns, 16, op);
        let start = now_ns();
        let mut now = start;
        while !ctx.stopped() && !cell.budget.done(start, now, rec.count()) {
            let t0 = now_ns();
            op();
            let t1 = now_ns();
            rec.record(t1 - t0, t0 - start);
            live.publish(t1 - t0, 0);
            now = t1;
        }
        measured += now - start;
        series.push(Series::new(name, rec.summary()).label("port", format!("{PORT:#x}")));
    }
    // Give the permission back; the thread ends right after, which would drop it too.
    let _ = port::request(PORT, false);
    Ok((series, measured))
}

#[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
fn measure(_ctx: &ProbeContext, _cell: Cell) -> Result<(Vec<Series>, u64), ProbeError> {
    Err(ProbeError::Unavailable(
        no_access_reason().unwrap_or_default(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtgauge_core::probe::{Params, Probe};

    #[test]
    fn refuses_parameters_it_does_not_have() {
        let p = Params::new(
            PROBE,
            [("port".to_string(), "0x3f8".to_string())]
                .into_iter()
                .collect(),
        );
        assert!(IoPort
            .validate(&p)
            .unwrap_err()
            .to_string()
            .contains("unknown parameter 'port'"));
    }

    #[test]
    fn availability_agrees_with_capabilities() {
        let x86 = cfg!(any(target_arch = "x86", target_arch = "x86_64"));
        let rawio = cap_effective(CAP_SYS_RAWIO).unwrap_or(true);
        let kernel = x86 && port_supported();
        assert_eq!(Probe::availability(&IoPort).is_ok(), x86 && kernel && rawio);
        if x86 && !kernel {
            assert!(Probe::availability(&IoPort)
                .unwrap_err()
                .contains("CONFIG_X86_IOPL_IOPERM"));
        }
    }

    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    fn port_supported() -> bool {
        port::kernel_supports()
    }

    #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
    fn port_supported() -> bool {
        false
    }
}
