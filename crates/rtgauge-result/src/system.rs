//! What the document records about the machine: its fingerprint and the doctor's verdicts.
//!
//! These types belong to the document (rtgauge-sysinfo produces them, renderers only read
//! them), so that reading a result never needs the code that audits a machine.

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
    /// Machine architecture as the kernel reports it (x86_64, aarch64, armv7l, ...); under
    /// user-mode emulation, the binary's and the kernel's: `aarch64 (on an x86_64 kernel)`.
    pub architecture: String,
    /// Board or system model: the device-tree model on ARM boards, else the DMI vendor and
    /// product name. Empty when the machine names itself nowhere.
    pub board: String,
    /// Firmware (BIOS/UEFI) vendor, version and date from DMI; empty on boards without DMI.
    pub firmware: String,
    /// Memory the kernel manages (MemTotal), in bytes.
    pub memory_bytes: Option<u64>,
    /// Distinct CPU microcode revisions, comma-separated; empty when the CPU reports none.
    pub microcode: String,
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

/// The verdict of one check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Nothing here weakens a real-time measurement.
    Ok,
    /// Results are valid but describe a less-than-ideal setup, or are noisier than needed.
    Warn,
    /// Measurements on this machine would be invalid (e.g. no high-resolution timers).
    Fail,
    /// The fact could not be read; `found` says why.
    Unknown,
}

impl Status {
    /// The short tag used in text output.
    /// The status as it is serialised: ok, warn, fail, unknown.
    pub fn name(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Warn => "warn",
            Status::Fail => "fail",
            Status::Unknown => "unknown",
        }
    }

    pub fn tag(self) -> &'static str {
        match self {
            Status::Ok => "OK",
            Status::Warn => "WARN",
            Status::Fail => "FAIL",
            Status::Unknown => "??",
        }
    }
}

/// One audited aspect of the machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Check {
    /// Stable identifier (`preempt_rt`, `rt_throttling`, ...), for scripts and tests.
    pub id: String,
    /// Short human title.
    pub title: String,
    pub status: Status,
    /// What was seen, or why it could not be seen.
    pub found: String,
    /// Why it matters for latency.
    pub why: String,
    /// A concrete remedy: boot parameter, sysctl or command. Never executed by rtgauge.
    pub fix: Option<String>,
}

impl Check {
    /// A verdict without a fix.
    pub fn new(id: &str, title: &str, status: Status, found: impl Into<String>, why: &str) -> Self {
        Self {
            id: id.into(),
            title: title.into(),
            status,
            found: found.into(),
            why: why.into(),
            fix: None,
        }
    }

    /// The same verdict with a concrete remedy.
    pub fn fix(mut self, fix: impl Into<String>) -> Self {
        self.fix = Some(fix.into());
        self
    }
}
