//! The environment record stored with every result, so two runs can be compared knowing
//! what differed between their machines.

use crate::root::SysRoot;
use crate::{cpu, hardware, kernel, platform, procs};
pub use rtgauge_result::Fingerprint;

/// Collects the fingerprint of the running system.
pub fn collect() -> Fingerprint {
    collect_from(&SysRoot::live())
}

/// Collects the fingerprint of the system under `root` (the live system or a fixture).
pub fn collect_from(root: &SysRoot) -> Fingerprint {
    let config = kernel::kernel_config(root).ok();
    let preemption = kernel::preemption(root, config.as_ref()).ok();
    let cpuinfo = root.read("/proc/cpuinfo").unwrap_or_default();
    let cmdline = kernel::kernel_cmdline(root).unwrap_or_default();
    let online = cpu::online(root).unwrap_or_default();
    let clocksource = kernel::clocksource(root).ok();
    let available = clocksource
        .as_ref()
        .map(|c| c.available.clone())
        .unwrap_or_default();
    let (rt_runtime_us, rt_period_us) = match platform::rt_throttling(root) {
        Ok((r, p)) => (Some(r), p),
        Err(_) => (None, None),
    };
    let nohz_full = cpu::nohz_full(root).unwrap_or_default();
    let mut rcu_nocbs: Vec<usize> = kernel::cmdline_param(&cmdline, "rcu_nocbs")
        .and_then(|v| kernel::param_cpus(&v, &online).1)
        .unwrap_or_default();
    rcu_nocbs.extend(&nohz_full);
    rcu_nocbs.sort_unstable();
    rcu_nocbs.dedup();

    let hres_active = kernel::hres_active(root)
        .ok()
        .filter(|m| online.iter().all(|c| m.contains_key(c)))
        .map(|m| online.iter().all(|c| m[c]));
    let mut governors: Vec<String> = online
        .iter()
        .filter_map(|&c| cpu::cpufreq(root, c).ok().map(|f| f.governor))
        .collect();
    governors.sort();
    governors.dedup();
    let cstate_max_latency_us = online
        .iter()
        .filter_map(|&c| cpu::idle_states(root, c).ok())
        .flatten()
        .filter(|s| !s.disabled)
        .map(|s| s.latency_us)
        .max();
    let vulns = cpu::vulnerabilities(root).ok();

    Fingerprint {
        hostname: root
            .read_trimmed("/proc/sys/kernel/hostname")
            .unwrap_or_default(),
        kernel_release: root
            .read_trimmed("/proc/sys/kernel/osrelease")
            .unwrap_or_default(),
        kernel_version: root
            .read_trimmed("/proc/sys/kernel/version")
            .unwrap_or_default(),
        preemption_model: preemption
            .as_ref()
            .map_or_else(|| "unknown".to_string(), |p| p.model.clone()),
        preempt_rt: preemption.as_ref().is_some_and(|p| p.rt),
        preempt_dynamic_mode: preemption
            .as_ref()
            .and_then(|p| p.dynamic_mode.clone())
            .unwrap_or_default(),
        hz: config
            .as_ref()
            .and_then(|c| c.get("CONFIG_HZ"))
            .and_then(|h| h.parse().ok()),
        architecture: hardware::architecture(root),
        board: hardware::board(root),
        firmware: hardware::firmware(root),
        memory_bytes: hardware::memory_bytes(root),
        microcode: hardware::microcode(root, &cpuinfo),
        cpu_model: platform::cpu_model(&cpuinfo),
        clocksource: clocksource.map(|c| c.current).unwrap_or_default(),
        clocksources_available: available.clone(),
        hres_active,
        isolated_cpus: cpu::isolated(root).unwrap_or_default(),
        nohz_full,
        rcu_nocbs,
        rt_runtime_us,
        rt_period_us,
        timer_migration: platform::timer_migration(root).ok(),
        smt_active: cpu::smt(root).ok().map(|s| s.active),
        governor: governors.join(","),
        cstate_max_latency_us,
        thp: platform::thp(root).map(|t| t.0).unwrap_or_default(),
        swap_active: platform::swaps(root).ok().map(|s| !s.is_empty()),
        irqbalance_running: procs::process_names(root)
            .ok()
            .map(|n| n.contains("irqbalance")),
        mitigations: vulns
            .as_ref()
            .map(cpu::mitigation_summary)
            .unwrap_or_default(),
        mitigations_known: vulns.is_some(),
        virtualization: platform::virtualization(root, &available)
            .map(|v| v.hypervisor)
            .unwrap_or_default(),
        container: platform::container(root)
            .map(|c| c.kind)
            .unwrap_or_default(),
        cmdline,
        cpus_online: online,
    }
}
