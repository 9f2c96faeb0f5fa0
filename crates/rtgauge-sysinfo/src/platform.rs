//! Platform facts: hypervisor, container, memory management, scheduler sysctls, CPU model.

use crate::root::{Fact, SysRoot, Unknown};

/// The first `model name` (x86) or `Model`/`CPU part` line of /proc/cpuinfo.
pub fn cpu_model(cpuinfo: &str) -> String {
    ["model name", "Model", "cpu model", "Processor"]
        .iter()
        .find_map(|key| {
            cpuinfo
                .lines()
                .find(|l| l.split(':').next().map(str::trim) == Some(*key))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_default()
}

/// CPU feature flags (x86 `flags`, Arm `Features`) of the first CPU.
pub fn cpu_flags(cpuinfo: &str) -> Vec<String> {
    cpuinfo
        .lines()
        .find(|l| {
            let k = l.split(':').next().map(str::trim);
            k == Some("flags") || k == Some("Features")
        })
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.split_whitespace().map(String::from).collect())
        .unwrap_or_default()
}

/// Whether the machine is x86 (where TSC is the clocksource to expect).
pub fn is_x86(cpuinfo: &str) -> bool {
    cpuinfo.lines().any(|l| {
        l.starts_with("vendor_id")
            && (l.contains("GenuineIntel")
                || l.contains("AuthenticAMD")
                || l.contains("HygonGenuine")
                || l.contains("CentaurHauls"))
    })
}

/// What the machine runs on, as far as the guest can see.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Virtualization {
    /// Hypervisor name (`kvm`, `QEMU`, `VMware`, `Microsoft Hyper-V`, `xen`, `vm`), empty on
    /// bare metal.
    pub hypervisor: String,
    /// The evidence, for the report.
    pub evidence: Vec<String>,
    /// Steal time so far, in USER_HZ ticks (time the host did not run our vCPUs).
    pub steal_ticks: Option<u64>,
}

const DMI_VM_VENDORS: &[(&str, &str)] = &[
    ("QEMU", "QEMU"),
    ("KVM", "kvm"),
    ("VMware", "VMware"),
    ("innotek", "VirtualBox"),
    ("VirtualBox", "VirtualBox"),
    ("Xen", "xen"),
    ("Amazon EC2", "Amazon EC2"),
    ("Google", "Google Compute Engine"),
    ("Microsoft Corporation", "Microsoft Hyper-V"),
    ("Parallels", "Parallels"),
    ("Bochs", "Bochs"),
    ("OpenStack", "OpenStack"),
    ("Firecracker", "Firecracker"),
    ("Cloud Hypervisor", "Cloud Hypervisor"),
];

/// Detects a hypervisor from the cpuinfo `hypervisor` flag, DMI strings, /sys/hypervisor
/// and paravirtual clocksources. Unknown only when none of these could be read.
pub fn virtualization(root: &SysRoot, clocksources: &[String]) -> Fact<Virtualization> {
    let cpuinfo = root.read("/proc/cpuinfo");
    let vendor = root.read_trimmed("/sys/class/dmi/id/sys_vendor");
    let product = root.read_trimmed("/sys/class/dmi/id/product_name");
    let hv_type = root.read_trimmed("/sys/hypervisor/type");
    if cpuinfo.is_err() && vendor.is_err() && product.is_err() && hv_type.is_err() {
        return Err(Unknown::new(format!(
            "{} and no DMI or /sys/hypervisor information",
            cpuinfo.err().map(|e| e.reason).unwrap_or_default()
        )));
    }
    let mut v = Virtualization::default();
    let mut names = Vec::new();
    if let Ok(info) = &cpuinfo {
        if cpu_flags(info).iter().any(|f| f == "hypervisor") {
            v.evidence.push("cpuinfo has the hypervisor flag".into());
            names.push("vm".to_string());
        }
    }
    let dmi = format!(
        "{} {}",
        vendor.as_deref().unwrap_or(""),
        product.as_deref().unwrap_or("")
    );
    if let Some((_, name)) = DMI_VM_VENDORS.iter().find(|(k, _)| dmi.contains(k)) {
        // Hyper-V's vendor is the generic "Microsoft Corporation"; only "Virtual Machine"
        // as product tells it from a Surface laptop.
        if *name != "Microsoft Hyper-V" || dmi.contains("Virtual Machine") {
            v.evidence.push(format!("DMI says {:?}", dmi.trim()));
            names.insert(0, name.to_string());
        }
    }
    if let Ok(t) = &hv_type {
        v.evidence.push(format!("/sys/hypervisor/type = {t}"));
        names.insert(0, t.clone());
    }
    for (cs, name) in [
        ("kvm-clock", "kvm"),
        ("hyperv_clocksource_tsc_page", "Microsoft Hyper-V"),
        ("xen", "xen"),
    ] {
        if clocksources.iter().any(|c| c == cs) {
            v.evidence
                .push(format!("paravirtual clocksource {cs} offered"));
            // A paravirtual clock names the hypervisor better than the bare flag does.
            if names.first().is_none_or(|n| n == "vm") {
                names.insert(0, name.to_string());
            }
        }
    }
    v.hypervisor = names.into_iter().next().unwrap_or_default();
    v.steal_ticks = root.read("/proc/stat").ok().and_then(|s| {
        let cpu = s.lines().find(|l| l.starts_with("cpu "))?;
        cpu.split_whitespace().nth(8)?.parse().ok()
    });
    Ok(v)
}

/// Signs of running inside a container.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Container {
    /// `docker`, `podman`, `kubernetes`, `lxc`, `containerd`, `systemd-nspawn`, `container`;
    /// with a question mark when only one weak sign was seen (`docker?`: a lone /.dockerenv;
    /// `container?`: a lone overlay root, which live-boot media have too); empty when none.
    pub kind: String,
    pub evidence: Vec<String>,
    /// Whether the evidence is conclusive: a lone /.dockerenv marker is not (root
    /// filesystems built with Docker carry it into VMs too).
    pub certain: bool,
}

/// Looks for container markers: /.dockerenv, /run/.containerenv, /run/systemd/container,
/// container paths in /proc/1/cgroup, an overlay filesystem as root.
pub fn container(root: &SysRoot) -> Fact<Container> {
    let mut c = Container::default();
    let mut readable = false;
    let mut strong: Vec<&str> = Vec::new();
    let mut weak: Vec<&str> = Vec::new();
    if let Ok(kind) = root.read_trimmed("/run/systemd/container") {
        readable = true;
        c.evidence.push(format!("/run/systemd/container = {kind}"));
        strong.push(match kind.as_str() {
            "docker" => "docker",
            "podman" => "podman",
            "lxc" | "lxc-libvirt" => "lxc",
            "systemd-nspawn" => "systemd-nspawn",
            _ => "container",
        });
    }
    if let Ok(true) = root.exists("/run/.containerenv") {
        c.evidence.push("/run/.containerenv exists".into());
        strong.push("podman");
    }
    if let Ok(cgroup) = root.read("/proc/1/cgroup") {
        readable = true;
        for (needle, kind) in [
            ("kubepods", "kubernetes"),
            ("/docker", "docker"),
            ("libpod", "podman"),
            ("/lxc", "lxc"),
            ("containerd", "containerd"),
        ] {
            if cgroup.contains(needle) {
                c.evidence
                    .push(format!("/proc/1/cgroup mentions {needle:?}"));
                strong.push(kind);
                break;
            }
        }
    }
    if let Ok(mountinfo) = root.read("/proc/self/mountinfo") {
        readable = true;
        // Fields: id parent major:minor root mountpoint options ... - fstype source opts
        let root_fs = mountinfo.lines().find_map(|l| {
            let (pre, post) = l.split_once(" - ")?;
            (pre.split_whitespace().nth(4)? == "/").then(|| post.split_whitespace().next())?
        });
        if let Some(fs) = root_fs {
            if fs == "overlay" || fs == "aufs" {
                c.evidence.push(format!("root filesystem is {fs}"));
                weak.push("container?");
            }
        }
    }
    // The marker's absence proves little on its own, so it does not make the verdict known.
    if let Ok(true) = root.exists("/.dockerenv") {
        c.evidence.push("/.dockerenv exists".into());
        weak.push("docker?");
    }
    if !readable && c.evidence.is_empty() {
        return Err(Unknown::new(
            "/proc/1/cgroup and /proc/self/mountinfo: not readable",
        ));
    }
    if let Some(k) = strong.first() {
        c.kind = k.to_string();
        c.certain = true;
    } else if weak.len() >= 2 {
        // An overlay root *and* the Docker marker: that is a Docker container.
        c.kind = "docker".into();
        c.certain = true;
    } else if let Some(k) = weak.first() {
        c.kind = k.to_string();
    }
    Ok(c)
}

/// The selected value of a sysfs choice file such as `always [madvise] never`.
pub fn bracketed(text: &str) -> Option<String> {
    text.split_whitespace()
        .find_map(|w| w.strip_prefix('[')?.strip_suffix(']'))
        .map(String::from)
}

/// Transparent huge pages: (enabled, defrag) modes.
pub fn thp(root: &SysRoot) -> Fact<(String, Option<String>)> {
    let path = "/sys/kernel/mm/transparent_hugepage/enabled";
    let text = root.read_trimmed(path)?;
    let enabled = bracketed(&text).ok_or_else(|| Unknown::unexpected(path, &text))?;
    let defrag = root
        .read_trimmed("/sys/kernel/mm/transparent_hugepage/defrag")
        .ok()
        .and_then(|t| bracketed(&t));
    Ok((enabled, defrag))
}

/// Active swap areas: (name, type, size in KiB).
pub fn swaps(root: &SysRoot) -> Fact<Vec<(String, String, u64)>> {
    let text = root.read("/proc/swaps")?;
    Ok(text
        .lines()
        .skip(1)
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            Some((
                w.first()?.to_string(),
                w.get(1)?.to_string(),
                w.get(2)?.parse().ok()?,
            ))
        })
        .collect())
}

/// RT throttling: (sched_rt_runtime_us, sched_rt_period_us).
pub fn rt_throttling(root: &SysRoot) -> Fact<(i64, Option<i64>)> {
    let runtime = root.read_parsed("/proc/sys/kernel/sched_rt_runtime_us")?;
    let period = root.read_parsed("/proc/sys/kernel/sched_rt_period_us").ok();
    Ok((runtime, period))
}

/// kernel.timer_migration.
pub fn timer_migration(root: &SysRoot) -> Fact<bool> {
    let path = "/proc/sys/kernel/timer_migration";
    let v: u32 = root.read_parsed(path)?;
    Ok(v != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bracketed_choice() {
        assert_eq!(
            bracketed("always [madvise] never").as_deref(),
            Some("madvise")
        );
        assert_eq!(bracketed("always madvise never"), None);
    }

    #[test]
    fn cpuinfo_helpers() {
        let info = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC\nflags\t\t: fpu tsc hypervisor\n";
        assert_eq!(cpu_model(info), "AMD EPYC");
        assert!(is_x86(info));
        assert!(cpu_flags(info).contains(&"hypervisor".to_string()));
        assert!(!is_x86("Processor : ARMv8\nFeatures : fp asimd\n"));
    }
}
