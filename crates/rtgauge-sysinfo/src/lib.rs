//! System facts that decide whether a real-time measurement can be trusted.
//!
//! Everything here only reads /proc and /sys (never changes the system).

use serde::{Deserialize, Serialize};
use std::fs;

/// The environment a result was measured in; stored in every result document.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct Fingerprint {
    pub hostname: String,
    pub kernel_release: String,
    pub kernel_version: String,
    /// none, voluntary, full, dynamic, rt or unknown.
    pub preemption_model: String,
    pub preempt_rt: bool,
    pub cmdline: String,
    pub cpu_model: String,
    pub cpus_online: Vec<usize>,
    pub clocksource: String,
    pub isolated_cpus: Vec<usize>,
    /// sched_rt_runtime_us; -1 means RT throttling is off.
    pub rt_runtime_us: Option<i64>,
    pub rt_period_us: Option<i64>,
    /// Hypervisor or container name, empty on bare metal.
    pub virtualization: String,
}

fn read_trimmed(path: &str) -> Option<String> {
    fs::read_to_string(path).ok().map(|s| s.trim().to_string())
}

/// Parses a kernel CPU list such as `0-3,8,10-11`.
pub fn parse_cpu_list(list: &str) -> Option<Vec<usize>> {
    let mut cpus = Vec::new();
    for part in list.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
                if a > b {
                    return None;
                }
                cpus.extend(a..=b);
            }
            None => cpus.push(part.trim().parse().ok()?),
        }
    }
    Some(cpus)
}

/// Online CPUs of this machine, from /sys (falls back to CPU 0 alone).
pub fn online_cpus() -> Vec<usize> {
    read_trimmed("/sys/devices/system/cpu/online")
        .and_then(|s| parse_cpu_list(&s))
        .unwrap_or_else(|| vec![0])
}

/// The preemption model from the kernel version string and /sys/kernel/realtime.
fn preemption_model(version: &str) -> (String, bool) {
    let rt = read_trimmed("/sys/kernel/realtime").as_deref() == Some("1")
        || version.contains("PREEMPT_RT");
    let model = if rt {
        "rt"
    } else if version.contains("PREEMPT_DYNAMIC") {
        "dynamic"
    } else if version.contains("PREEMPT") {
        "full"
    } else {
        "unknown"
    };
    (model.to_string(), rt)
}

/// Collects the fingerprint of the running system.
pub fn collect() -> Fingerprint {
    let kernel_version = read_trimmed("/proc/sys/kernel/version").unwrap_or_default();
    let (preemption_model, preempt_rt) = preemption_model(&kernel_version);
    let cpu_model = fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_default();
    let hypervisor = fs::read_to_string("/proc/cpuinfo")
        .map(|s| s.contains(" hypervisor"))
        .unwrap_or(false);
    let virtualization = read_trimmed("/sys/class/dmi/id/sys_vendor")
        .filter(|_| hypervisor)
        .unwrap_or_else(|| {
            if hypervisor {
                "vm".into()
            } else {
                String::new()
            }
        });
    Fingerprint {
        hostname: read_trimmed("/proc/sys/kernel/hostname").unwrap_or_default(),
        kernel_release: read_trimmed("/proc/sys/kernel/osrelease").unwrap_or_default(),
        kernel_version,
        preemption_model,
        preempt_rt,
        cmdline: read_trimmed("/proc/cmdline").unwrap_or_default(),
        cpu_model,
        cpus_online: online_cpus(),
        clocksource: read_trimmed(
            "/sys/devices/system/clocksource/clocksource0/current_clocksource",
        )
        .unwrap_or_default(),
        isolated_cpus: read_trimmed("/sys/devices/system/cpu/isolated")
            .and_then(|s| parse_cpu_list(&s))
            .unwrap_or_default(),
        rt_runtime_us: read_trimmed("/proc/sys/kernel/sched_rt_runtime_us")
            .and_then(|s| s.parse().ok()),
        rt_period_us: read_trimmed("/proc/sys/kernel/sched_rt_period_us")
            .and_then(|s| s.parse().ok()),
        virtualization,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_parse() {
        assert_eq!(parse_cpu_list("0-3,8"), Some(vec![0, 1, 2, 3, 8]));
        assert_eq!(parse_cpu_list(""), Some(vec![]));
        assert_eq!(parse_cpu_list("3-1"), None);
        assert_eq!(parse_cpu_list("x"), None);
    }
}
