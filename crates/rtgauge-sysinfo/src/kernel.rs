//! Kernel facts: build configuration, preemption model, clocksource, high-resolution timers,
//! boot parameters.

use crate::root::{Fact, SysRoot, Unknown};
use std::collections::BTreeMap;
use std::io::Read;

/// The kernel build configuration (`CONFIG_*` options), from /proc/config.gz or /boot.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KernelConfig {
    /// Where it was read from (`/proc/config.gz` or `/boot/config-<release>`).
    pub source: String,
    options: BTreeMap<String, String>,
}

impl KernelConfig {
    /// Parses the text of a kernel `.config`.
    pub fn parse(source: &str, text: &str) -> Self {
        let mut options = BTreeMap::new();
        for line in text.lines().map(str::trim) {
            if let Some(rest) = line.strip_prefix("# ") {
                if let Some(name) = rest.strip_suffix(" is not set") {
                    options.insert(name.to_string(), "n".to_string());
                }
            } else if let Some((name, value)) = line.split_once('=') {
                if name.starts_with("CONFIG_") {
                    options.insert(name.to_string(), value.trim_matches('"').to_string());
                }
            }
        }
        Self {
            source: source.to_string(),
            options,
        }
    }

    /// The value of an option (`y`, `m`, `n`, a number or a string), if the config names it.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.options.get(name).map(String::as_str)
    }

    /// Whether an option is built in or a module. An option the config does not mention is
    /// off: Kconfig omits options whose dependencies are not met.
    pub fn enabled(&self, name: &str) -> bool {
        matches!(self.get(name), Some("y") | Some("m"))
    }
}

/// Reads the kernel configuration: /proc/config.gz first (it is the running kernel's own),
/// then `/boot/config-<release>`.
pub fn kernel_config(root: &SysRoot) -> Fact<KernelConfig> {
    let gz = root.read_bytes("/proc/config.gz").and_then(|bytes| {
        let mut text = String::new();
        flate2::read::GzDecoder::new(bytes.as_slice())
            .read_to_string(&mut text)
            .map_err(|e| Unknown::new(format!("/proc/config.gz: cannot decompress ({e})")))?;
        Ok(KernelConfig::parse("/proc/config.gz", &text))
    });
    let gz_err = match gz {
        Ok(config) => return Ok(config),
        Err(e) => e,
    };
    let release = root
        .read_trimmed("/proc/sys/kernel/osrelease")
        .map_err(|e| {
            Unknown::new(format!(
                "kernel config not readable ({gz_err}; release unknown: {e})"
            ))
        })?;
    let boot = format!("/boot/config-{release}");
    root.read(&boot)
        .map(|text| KernelConfig::parse(&boot, &text))
        .map_err(|e| Unknown::new(format!("kernel config not readable ({gz_err}; {e})")))
}

/// The kernel command line as booted (init's arguments after `--` included; see
/// [`cmdline_param`]).
pub fn kernel_cmdline(root: &SysRoot) -> Fact<String> {
    root.read_trimmed("/proc/cmdline")
}

/// The value of the last `key=value` kernel parameter (the kernel lets the last one win).
/// `Some("")` for a bare `key`. Arguments after `--` belong to init and are ignored.
pub fn cmdline_param(cmdline: &str, key: &str) -> Option<String> {
    let mut found = None;
    for word in cmdline.split_whitespace() {
        if word == "--" {
            break;
        }
        match word.split_once('=') {
            Some((k, v)) if k == key => found = Some(v.to_string()),
            None if word == key => found = Some(String::new()),
            _ => {}
        }
    }
    found
}

/// A CPU-list boot parameter such as `isolcpus=domain,managed_irq,2-3` or `nohz_full=2-3`:
/// the flags (non-numeric words) and the CPUs. `all` expands to `online`.
pub fn param_cpus(value: &str, online: &[usize]) -> (Vec<String>, Option<Vec<usize>>) {
    let mut flags = Vec::new();
    let mut list = Vec::new();
    for part in value.split(',').filter(|p| !p.is_empty()) {
        if part.starts_with(|c: char| c.is_ascii_digit()) {
            list.push(part);
        } else if part == "all" {
            return (flags, Some(online.to_vec()));
        } else {
            flags.push(part.to_string());
        }
    }
    let cpus = rtgauge_os::cpus::cpu_list(&list.join(",")).ok();
    (flags, cpus)
}

/// How the kernel preempts, and how that was found out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preemption {
    /// `none`, `voluntary`, `full`, `lazy`, `dynamic`, `rt` or `unknown` (no PREEMPT in the
    /// version string and no config to tell none from voluntary).
    pub model: String,
    /// True for a PREEMPT_RT kernel.
    pub rt: bool,
    /// With PREEMPT_DYNAMIC: the mode in force (`none`, `voluntary`, `full`, `lazy`), if known.
    pub dynamic_mode: Option<String>,
    /// Where `dynamic_mode` came from.
    pub dynamic_source: String,
    /// The `/proc/sys/kernel/version` string.
    pub version: String,
}

fn version_has(version: &str, token: &str) -> bool {
    version.split_whitespace().any(|w| w == token)
}

/// Determines the preemption model from /sys/kernel/realtime, the version string, the
/// kernel config and (with PREEMPT_DYNAMIC) the debugfs switch or the `preempt=` parameter.
pub fn preemption(root: &SysRoot, config: Option<&KernelConfig>) -> Fact<Preemption> {
    let realtime = root.read_trimmed("/sys/kernel/realtime").ok();
    let version_fact = root.read_trimmed("/proc/sys/kernel/version");
    if version_fact.is_err() && realtime.is_none() && config.is_none() {
        return Err(Unknown::new(format!(
            "{} and no /sys/kernel/realtime or kernel config",
            version_fact.err().map(|e| e.reason).unwrap_or_default()
        )));
    }
    let version = version_fact.unwrap_or_default();
    let cfg = |name: &str| config.is_some_and(|c| c.enabled(name));
    let rt = realtime.as_deref() == Some("1")
        || version_has(&version, "PREEMPT_RT")
        || cfg("CONFIG_PREEMPT_RT");
    let mut p = Preemption {
        model: "unknown".into(),
        rt,
        dynamic_mode: None,
        dynamic_source: String::new(),
        version: version.clone(),
    };
    if rt {
        p.model = "rt".into();
    } else if version_has(&version, "PREEMPT_DYNAMIC") || cfg("CONFIG_PREEMPT_DYNAMIC") {
        p.model = "dynamic".into();
        let (mode, source) = dynamic_mode(root, config);
        p.dynamic_mode = mode;
        p.dynamic_source = source;
    } else if version_has(&version, "PREEMPT_LAZY") || cfg("CONFIG_PREEMPT_LAZY") {
        p.model = "lazy".into();
    } else if version_has(&version, "PREEMPT") || cfg("CONFIG_PREEMPT") {
        p.model = "full".into();
    } else if cfg("CONFIG_PREEMPT_VOLUNTARY") {
        p.model = "voluntary".into();
    } else if cfg("CONFIG_PREEMPT_NONE") {
        p.model = "none".into();
    }
    Ok(p)
}

/// The current mode of a PREEMPT_DYNAMIC kernel: debugfs shows it (`none (voluntary) full`);
/// otherwise the boot parameter, otherwise the build default, which is what runs unless
/// someone switched it through debugfs.
fn dynamic_mode(root: &SysRoot, config: Option<&KernelConfig>) -> (Option<String>, String) {
    let path = "/sys/kernel/debug/sched/preempt";
    let debugfs = root.read_trimmed(path);
    if let Ok(text) = &debugfs {
        let current = text
            .split_whitespace()
            .find_map(|w| w.strip_prefix('(').and_then(|w| w.strip_suffix(')')));
        if let Some(mode) = current {
            return (Some(mode.to_string()), path.to_string());
        }
    }
    let debugfs_note = match debugfs {
        Ok(text) => format!("{path} unexpected: {text:?}"),
        Err(e) => e.reason,
    };
    if let Ok(cmdline) = kernel_cmdline(root) {
        if let Some(mode) = cmdline_param(&cmdline, "preempt") {
            return (
                Some(mode),
                format!("preempt= boot parameter; {debugfs_note}"),
            );
        }
    }
    if let Some(config) = config {
        let default = [
            ("CONFIG_PREEMPT_NONE", "none"),
            ("CONFIG_PREEMPT_VOLUNTARY", "voluntary"),
            ("CONFIG_PREEMPT", "full"),
            ("CONFIG_PREEMPT_LAZY", "lazy"),
        ]
        .iter()
        .find(|(name, _)| config.enabled(name))
        .map(|(_, mode)| mode.to_string());
        if let Some(mode) = default {
            return (
                Some(mode),
                format!(
                    "build default in {}, no preempt= boot parameter; {debugfs_note}",
                    config.source
                ),
            );
        }
    }
    (None, debugfs_note)
}

/// The clocksource in use and the ones the kernel considers usable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clocksource {
    /// The clocksource timekeeping uses now (`tsc`, `hpet`, `kvm-clock`, `arch_sys_counter`).
    pub current: String,
    /// Those the kernel would accept (empty if unreadable).
    pub available: Vec<String>,
}

const CLOCKSOURCE_DIR: &str = "/sys/devices/system/clocksource/clocksource0";

/// Reads the current and available clocksources.
pub fn clocksource(root: &SysRoot) -> Fact<Clocksource> {
    let current = root.read_trimmed(&format!("{CLOCKSOURCE_DIR}/current_clocksource"))?;
    let available = root
        .read_trimmed(&format!("{CLOCKSOURCE_DIR}/available_clocksource"))
        .map(|s| s.split_whitespace().map(String::from).collect())
        .unwrap_or_default();
    Ok(Clocksource { current, available })
}

/// Per-CPU high-resolution timer state from /proc/timer_list (root-only on many kernels).
pub fn hres_active(root: &SysRoot) -> Fact<BTreeMap<usize, bool>> {
    let text = root.read("/proc/timer_list")?;
    let mut cpu = None;
    let mut map = BTreeMap::new();
    let mut resolution_ns: Option<u64> = None;
    for line in text.lines() {
        let line = line.trim();
        if let Some(n) = line.strip_prefix("cpu:") {
            cpu = n.trim().parse::<usize>().ok();
        } else if let Some(v) = line.strip_prefix(".hres_active") {
            let v = v.trim_start_matches([' ', ':', '\t']).trim();
            if let (Some(c), Ok(v)) = (cpu, v.parse::<u8>()) {
                map.insert(c, v != 0);
            }
        } else if let Some(v) = line.strip_prefix(".resolution:") {
            if let Some(ns) = v.split_whitespace().next().and_then(|n| n.parse().ok()) {
                resolution_ns = Some(resolution_ns.map_or(ns, |r: u64| r.max(ns)));
            }
        }
    }
    if map.is_empty() {
        // Old layouts lack .hres_active; a 1 ns resolution still means hrtimers are high-res
        // (without them the resolution is a tick, e.g. 4000000 ns).
        if let Some(ns) = resolution_ns {
            return Err(Unknown::new(format!(
                "/proc/timer_list has no .hres_active (clock resolution {ns} ns)"
            )));
        }
        return Err(Unknown::unexpected("/proc/timer_list", &text));
    }
    Ok(map)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cmdline_params_stop_at_init_args_and_last_wins() {
        let c = "quiet isolcpus=1 nohz_full=2-3 isolcpus=domain,2-3 nosmt -- isolcpus=9";
        assert_eq!(cmdline_param(c, "isolcpus").as_deref(), Some("domain,2-3"));
        assert_eq!(cmdline_param(c, "nosmt").as_deref(), Some(""));
        assert_eq!(cmdline_param(c, "rcu_nocbs"), None);
        let (flags, cpus) = param_cpus("domain,managed_irq,2-3,5", &[0, 1]);
        assert_eq!(flags, vec!["domain", "managed_irq"]);
        assert_eq!(cpus, Some(vec![2, 3, 5]));
        assert_eq!(param_cpus("all", &[0, 1]).1, Some(vec![0, 1]));
    }

    #[test]
    fn config_parses_set_unset_and_values() {
        let c = KernelConfig::parse(
            "x",
            "CONFIG_PREEMPT_NONE=y\n# CONFIG_PREEMPT is not set\nCONFIG_HZ=250\nCONFIG_X=\"a\"\n",
        );
        assert!(c.enabled("CONFIG_PREEMPT_NONE"));
        assert!(!c.enabled("CONFIG_PREEMPT"));
        assert!(!c.enabled("CONFIG_ABSENT"));
        assert_eq!(c.get("CONFIG_HZ"), Some("250"));
        assert_eq!(c.get("CONFIG_X"), Some("a"));
    }
}
