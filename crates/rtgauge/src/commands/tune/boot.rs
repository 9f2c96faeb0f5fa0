//! The fixes that need a reboot: a PREEMPT_RT kernel and the kernel command line (isolation,
//! tick, RCU callbacks, interrupts, idle states). tune cannot try them while running; it lists
//! them with the exact parameters and how to set them on each family of distributions.

use rtgauge_sysinfo::kernel::{self, KernelConfig};
use rtgauge_sysinfo::{format_cpu_list, SysRoot};
use serde::Serialize;

/// One boot-time fix.
#[derive(Debug, Clone, Serialize)]
pub struct BootFix {
    pub what: String,
    /// Kernel command-line words (empty for a fix that is a different kernel).
    pub param: String,
    pub why: String,
}

/// How to add parameters to the kernel command line, per family of distributions.
pub fn how_to_set(params: &str) -> Vec<(&'static str, String)> {
    vec![
        (
            "Debian, Ubuntu",
            format!(
                "add `{params}` to GRUB_CMDLINE_LINUX in /etc/default/grub, then `update-grub` \
                 and reboot"
            ),
        ),
        (
            "Fedora, RHEL, Rocky, Alma",
            format!("grubby --update-kernel=ALL --args=\"{params}\", then reboot"),
        ),
        (
            "openSUSE",
            format!(
                "add `{params}` to GRUB_CMDLINE_LINUX_DEFAULT in /etc/default/grub, then \
                 `grub2-mkconfig -o /boot/grub2/grub.cfg` and reboot"
            ),
        ),
        (
            "systemd-boot (Arch, …)",
            format!(
                "append `{params}` to /etc/kernel/cmdline (or the `options` line of \
                 /boot/loader/entries/*.conf), then `kernel-install` or reboot"
            ),
        ),
        (
            "Raspberry Pi OS",
            format!(
                "append `{params}` to the single line of /boot/firmware/cmdline.txt, then reboot"
            ),
        ),
    ]
}

/// The boot-time fixes this machine lacks for a loop on `measured`.
pub fn fixes(measured: &[usize], housekeeping: &[usize]) -> Vec<BootFix> {
    let root = SysRoot::live();
    let config = kernel::kernel_config(&root).ok();
    let cmdline = kernel::kernel_cmdline(&root).unwrap_or_default();
    let mut out = Vec::new();
    preemption(&root, config.as_ref(), &cmdline, &mut out);
    if !housekeeping.is_empty() {
        isolation(config.as_ref(), &cmdline, measured, housekeeping, &mut out);
    }
    idle(&root, measured, &cmdline, &mut out);
    out
}

fn has(cmdline: &str, key: &str) -> bool {
    kernel::cmdline_param(cmdline, key).is_some()
}

fn preemption(
    root: &SysRoot,
    config: Option<&KernelConfig>,
    cmdline: &str,
    out: &mut Vec<BootFix>,
) {
    let Ok(p) = kernel::preemption(root, config) else {
        return;
    };
    if p.rt {
        return;
    }
    out.push(BootFix {
        what: "a PREEMPT_RT kernel".into(),
        param: String::new(),
        why: "Debian `apt install linux-image-rt-amd64` (arm64: linux-image-rt-arm64), Ubuntu \
              `pro enable realtime-kernel`, RHEL-like `dnf install kernel-rt`, or Linux >= 6.12 \
              built with CONFIG_PREEMPT_RT=y: makes spinlock sections, softirqs and interrupt \
              handlers preemptible"
            .into(),
    });
    let weak = matches!(p.dynamic_mode.as_deref(), Some("none" | "voluntary"));
    if p.model == "dynamic" && weak && !has(cmdline, "preempt") {
        out.push(BootFix {
            what: "full preemption of this PREEMPT_DYNAMIC kernel".into(),
            param: "preempt=full".into(),
            why: "meanwhile, kernel code can be preempted anywhere outside locked sections".into(),
        });
    }
}

fn isolation(
    config: Option<&KernelConfig>,
    cmdline: &str,
    measured: &[usize],
    housekeeping: &[usize],
    out: &mut Vec<BootFix>,
) {
    let (m, h) = (format_cpu_list(measured), format_cpu_list(housekeeping));
    let built = |option: &str| config.is_none_or(|c| c.enabled(option));
    let mut add = |key: &str, param: String, what: &str, why: &str| {
        if !has(cmdline, key) {
            out.push(BootFix {
                what: what.into(),
                param,
                why: why.into(),
            });
        }
    };
    add(
        "isolcpus",
        format!("isolcpus=domain,managed_irq,{m}"),
        "CPU isolation",
        "the scheduler balances no task onto the measured CPUs, managed interrupts stay off them \
         (the cpu-isolation trial, a cpuset, is its runtime stand-in)",
    );
    if built("CONFIG_NO_HZ_FULL") {
        add(
            "nohz_full",
            format!("nohz_full={m}"),
            "no scheduler tick",
            "a CPU running one task gets no periodic tick",
        );
    }
    if built("CONFIG_RCU_NOCB_CPU") {
        add(
            "rcu_nocbs",
            format!("rcu_nocbs={m}"),
            "RCU callbacks offloaded",
            "RCU callbacks of the measured CPUs run in threads on the housekeeping CPUs",
        );
    }
    add(
        "irqaffinity",
        format!("irqaffinity={h}"),
        "interrupts on housekeeping CPUs from boot",
        "every interrupt starts on the housekeeping CPUs, before any daemon can move it",
    );
}

fn idle(root: &SysRoot, measured: &[usize], cmdline: &str, out: &mut Vec<BootFix>) {
    let deep = measured.iter().any(|&c| {
        rtgauge_sysinfo::cpu::idle_states(root, c).is_ok_and(|states| {
            states
                .iter()
                .any(|s| !s.disabled && s.latency_us > rtgauge_sysinfo::checks::DEEP_CSTATE_US)
        })
    });
    if deep && !has(cmdline, "processor.max_cstate") {
        out.push(BootFix {
            what: "shallow idle states from boot".into(),
            param: "processor.max_cstate=1 intel_idle.max_cstate=1".into(),
            why: "the CPUs never enter idle states slower to leave than C1 (power: higher \
                  idle draw)"
                .into(),
        });
    }
}

/// Gives the isolcpus= fix the measured effect of its runtime stand-in, the cpu-isolation
/// trial, as an estimate (said to be one: a cpuset is not the boot option).
pub fn estimate(fixes: &mut [BootFix], trials: &[super::Trial]) {
    use rtgauge_result::units::format_duration_ns as ns;
    let Some(fix) = fixes.iter_mut().find(|f| f.param.starts_with("isolcpus=")) else {
        return;
    };
    let Some(j) = trials
        .iter()
        .find(|t| t.name == "cpu-isolation")
        .and_then(|t| t.judgement.as_ref())
    else {
        return;
    };
    let Some(max) = j.effects.iter().find(|e| e.figure == "max") else {
        return;
    };
    let ns = |v: f64| {
        if v.is_finite() && v >= 0.0 {
            ns(v.round() as u64)
        } else {
            "-".into()
        }
    };
    fix.why = format!(
        "{}; estimate, measured with its runtime stand-in (an isolated cpuset, not the boot \
         option): max {} → {} ({:+.0} %, {})",
        fix.why
            .trim_end_matches(" (the cpu-isolation trial, a cpuset, is its runtime stand-in)"),
        ns(max.before),
        ns(max.after),
        max.change * 100.0,
        j.verdict.word()
    );
}

/// The command-line words of every fix, in one line.
pub fn command_line(fixes: &[BootFix]) -> String {
    fixes
        .iter()
        .filter(|f| !f.param.is_empty())
        .map(|f| f.param.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}
