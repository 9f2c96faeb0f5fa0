//! The environment record stored with every result, so two runs can be compared knowing
//! what differed between their machines.

use crate::root::SysRoot;
use crate::{cpu, kernel, platform, procs};
use serde::{Deserialize, Serialize};

/// The environment a result was measured in; stored in every result document.
///
/// Every field has a serde default so documents written before a field existed still parse.
/// Values that could not be read stay empty / `None` rather than guessed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct Fingerprint {
    pub hostname: String,
    pub kernel_release: String,
    pub kernel_version: String,
    /// none, voluntary, full, lazy, dynamic, rt or unknown.
    pub preemption_model: String,
    pub preempt_rt: bool,
    /// With PREEMPT_DYNAMIC: the mode in force (none, voluntary, full, lazy), empty if unknown
    /// or not a dynamic kernel.
    pub preempt_dynamic_mode: String,
    /// CONFIG_HZ, when the kernel config is readable.
    pub hz: Option<u32>,
    pub cmdline: String,
    pub cpu_model: String,
    pub cpus_online: Vec<usize>,
    pub clocksource: String,
    pub clocksources_available: Vec<String>,
    /// High-resolution timers active on every online CPU (needs root on many kernels).
    pub hres_active: Option<bool>,
    pub isolated_cpus: Vec<usize>,
    /// CPUs running tickless (nohz_full).
    pub nohz_full: Vec<usize>,
    /// CPUs whose RCU callbacks are offloaded: rcu_nocbs= plus nohz_full (which implies it).
    pub rcu_nocbs: Vec<usize>,
    /// sched_rt_runtime_us; -1 means RT throttling is off.
    pub rt_runtime_us: Option<i64>,
    pub rt_period_us: Option<i64>,
    /// kernel.timer_migration.
    pub timer_migration: Option<bool>,
    /// Whether sibling hardware threads are running.
    pub smt_active: Option<bool>,
    /// Distinct cpufreq governors of the online CPUs, comma-separated; empty without cpufreq.
    pub governor: String,
    /// Largest exit latency (µs) among the enabled idle states of the online CPUs.
    pub cstate_max_latency_us: Option<u64>,
    /// Transparent huge pages mode (always, madvise, never).
    pub thp: String,
    pub swap_active: Option<bool>,
    pub irqbalance_running: Option<bool>,
    /// Affected vulnerabilities as `name=Mitigation|Vulnerable`, comma-separated; empty when
    /// none is affected or unknown (see `mitigations_known`).
    pub mitigations: String,
    pub mitigations_known: bool,
    /// Hypervisor name, empty on bare metal (containers: see `container`).
    pub virtualization: String,
    /// Container runtime (docker, podman, kubernetes, lxc, ...); a trailing `?` marks a lone
    /// weak sign. Empty when none was seen.
    pub container: String,
}

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
