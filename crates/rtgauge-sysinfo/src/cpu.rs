//! CPU facts from /sys/devices/system/cpu: online set, frequency scaling, idle states, SMT,
//! isolation masks, vulnerability mitigations.

use crate::root::{Fact, SysRoot, Unknown};
use std::collections::BTreeMap;

const CPU_DIR: &str = "/sys/devices/system/cpu";

/// Reads a CPU-list file (`0-3,8`). An empty file or `(null)` (older kernels' way of
/// printing an unset mask) is an empty list.
pub fn cpu_list_file(root: &SysRoot, path: &str) -> Fact<Vec<usize>> {
    let text = root.read_trimmed(path)?;
    if text.is_empty() || text == "(null)" {
        return Ok(Vec::new());
    }
    rtgauge_os::cpus::cpu_list(&text)
        .ok()
        .ok_or_else(|| Unknown::unexpected(path, &text))
}

/// The online CPUs.
pub fn online(root: &SysRoot) -> Fact<Vec<usize>> {
    cpu_list_file(root, &format!("{CPU_DIR}/online"))
}

/// Frequency scaling of one CPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cpufreq {
    /// `performance`, `powersave`, `schedutil`, ...
    pub governor: String,
    /// `intel_pstate`, `amd-pstate-epp`, `acpi-cpufreq`, ... (empty if unreadable).
    pub driver: String,
    /// Current scaling limits in kHz.
    pub min_khz: Option<u64>,
    pub max_khz: Option<u64>,
    /// Hardware limits in kHz.
    pub hw_min_khz: Option<u64>,
    pub hw_max_khz: Option<u64>,
    /// intel_pstate / amd-pstate energy-performance preference, if exposed.
    pub epp: Option<String>,
}

/// cpufreq state of one CPU; unknown when the CPU has no cpufreq directory (no driver, or a
/// guest whose host owns the frequency).
pub fn cpufreq(root: &SysRoot, cpu: usize) -> Fact<Cpufreq> {
    let dir = format!("{CPU_DIR}/cpu{cpu}/cpufreq");
    let governor = root.read_trimmed(&format!("{dir}/scaling_governor"))?;
    let num = |f: &str| root.read_parsed::<u64>(&format!("{dir}/{f}")).ok();
    Ok(Cpufreq {
        governor,
        driver: root
            .read_trimmed(&format!("{dir}/scaling_driver"))
            .unwrap_or_default(),
        min_khz: num("scaling_min_freq"),
        max_khz: num("scaling_max_freq"),
        hw_min_khz: num("cpuinfo_min_freq"),
        hw_max_khz: num("cpuinfo_max_freq"),
        epp: root
            .read_trimmed(&format!("{dir}/energy_performance_preference"))
            .ok(),
    })
}

/// One idle state of one CPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdleState {
    /// `state3`.
    pub dir: String,
    /// `C6`, `POLL`, ...
    pub name: String,
    /// Exit latency in microseconds, as the driver declares it.
    pub latency_us: u64,
    /// Disabled through sysfs (`disable` = 1) or by the driver.
    pub disabled: bool,
}

/// The idle states of one CPU, in driver order (shallow to deep).
pub fn idle_states(root: &SysRoot, cpu: usize) -> Fact<Vec<IdleState>> {
    let dir = format!("{CPU_DIR}/cpu{cpu}/cpuidle");
    let mut names: Vec<String> = root
        .list(&dir)?
        .into_iter()
        .filter(|n| n.starts_with("state"))
        .collect();
    names.sort_by_key(|n| n["state".len()..].parse::<u32>().unwrap_or(u32::MAX));
    let mut states = Vec::new();
    for n in names {
        let p = format!("{dir}/{n}");
        states.push(IdleState {
            name: root.read_trimmed(&format!("{p}/name"))?,
            latency_us: root.read_parsed(&format!("{p}/latency"))?,
            disabled: root.read_trimmed(&format!("{p}/disable"))? != "0",
            dir: n,
        });
    }
    if states.is_empty() {
        return Err(Unknown::new(format!("{dir}: no idle states")));
    }
    Ok(states)
}

/// The cpuidle driver (`intel_idle`, `acpi_idle`, `haltpoll`, `none`).
pub fn idle_driver(root: &SysRoot) -> Fact<String> {
    root.read_trimmed(&format!("{CPU_DIR}/cpuidle/current_driver"))
}

/// SMT state: `active` (siblings running) and `control` (`on`, `off`, `forceoff`,
/// `notsupported`, `notimplemented`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Smt {
    /// Sibling threads are online and running.
    pub active: bool,
    /// The control knob's state, empty if unreadable.
    pub control: String,
}

/// Reads /sys/devices/system/cpu/smt.
pub fn smt(root: &SysRoot) -> Fact<Smt> {
    let active = root.read_trimmed(&format!("{CPU_DIR}/smt/active"))?;
    let active = match active.as_str() {
        "1" => true,
        "0" => false,
        other => {
            return Err(Unknown::unexpected(
                "/sys/devices/system/cpu/smt/active",
                other,
            ))
        }
    };
    Ok(Smt {
        active,
        control: root
            .read_trimmed(&format!("{CPU_DIR}/smt/control"))
            .unwrap_or_default(),
    })
}

/// The hardware threads sharing a core with `cpu` (itself included).
pub fn thread_siblings(root: &SysRoot, cpu: usize) -> Fact<Vec<usize>> {
    cpu_list_file(
        root,
        &format!("{CPU_DIR}/cpu{cpu}/topology/thread_siblings_list"),
    )
}

/// CPUs the kernel isolated from the scheduler (isolcpus=).
pub fn isolated(root: &SysRoot) -> Fact<Vec<usize>> {
    cpu_list_file(root, &format!("{CPU_DIR}/isolated"))
}

/// CPUs running tickless (nohz_full=); the file exists only with CONFIG_NO_HZ_FULL.
pub fn nohz_full(root: &SysRoot) -> Fact<Vec<usize>> {
    cpu_list_file(root, &format!("{CPU_DIR}/nohz_full"))
}

/// Vulnerability name to the kernel's status line (`Not affected`, `Mitigation: ...`,
/// `Vulnerable`).
pub fn vulnerabilities(root: &SysRoot) -> Fact<BTreeMap<String, String>> {
    let dir = format!("{CPU_DIR}/vulnerabilities");
    let mut map = BTreeMap::new();
    for name in root.list(&dir)? {
        if let Ok(v) = root.read_trimmed(&format!("{dir}/{name}")) {
            map.insert(name, v);
        }
    }
    if map.is_empty() {
        return Err(Unknown::new(format!("{dir}: no readable entries")));
    }
    Ok(map)
}

/// A compact, comparable summary of the mitigations: the affected entries as
/// `name=Mitigation|Vulnerable|...` (first word of the status), sorted; empty when every
/// entry is `Not affected`.
pub fn mitigation_summary(v: &BTreeMap<String, String>) -> String {
    v.iter()
        .filter(|(_, s)| !s.starts_with("Not affected"))
        .map(|(n, s)| {
            let word = s.split([':', ' ', ';']).next().unwrap_or(s);
            format!("{n}={word}")
        })
        .collect::<Vec<_>>()
        .join(",")
}
