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

/// Where this process sits in the cgroup that sets its RT budget.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CpuCgroup {
    /// cgroup v1 with the `cpu` controller: the group's path in that hierarchy.
    V1(String),
    /// cgroup v2 only: the group's path in the unified hierarchy.
    V2(String),
}

pub fn cpu_cgroup(text: &str) -> Option<CpuCgroup> {
    let mut v2 = None;
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        if controllers.split(',').any(|c| c == "cpu") {
            return Some(CpuCgroup::V1(path.to_string()));
        }
        if id == "0" && controllers.is_empty() {
            v2 = Some(CpuCgroup::V2(path.to_string()));
        }
    }
    v2
}

/// The group and its ancestors, innermost first: `/a/b` → `/a/b`, `/a`, `/`.
pub fn group_and_ancestors(path: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut p = path.trim_end_matches('/').to_string();
    while !p.is_empty() {
        out.push(p.clone());
        p.truncate(p.rfind('/').unwrap_or(0));
    }
    out.push("/".to_string());
    out
}

/// An RT budget set by a cpu cgroup (RT group scheduling, cgroup v1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupBudget {
    /// The group whose budget is the tightest: this process's, or an ancestor's.
    pub group: String,
    pub runtime_us: i64,
    pub period_us: i64,
}

/// The RT budget this process's cpu cgroup gives its real-time threads with RT group
/// scheduling: the tightest (smallest share) of the group and its ancestors below the root,
/// whose budget is the system-wide one. None when the process is in the root group, on
/// cgroup v2 (which cannot set one) or when no group file is there (no RT group scheduling).
pub fn rt_group_budget(root: &SysRoot) -> Fact<Option<GroupBudget>> {
    let text = root.read("/proc/self/cgroup")?;
    let Some(CpuCgroup::V1(path)) = cpu_cgroup(&text) else {
        return Ok(None);
    };
    let Some(mount) = ["/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"]
        .into_iter()
        .find(|m| root.read(&format!("{m}/cpu.rt_runtime_us")).is_ok())
    else {
        return Ok(None);
    };
    let mut tightest: Option<GroupBudget> = None;
    for group in group_and_ancestors(&path).into_iter().filter(|g| g != "/") {
        let runtime: i64 = root.read_parsed(&format!("{mount}{group}/cpu.rt_runtime_us"))?;
        let period: i64 = root.read_parsed(&format!("{mount}{group}/cpu.rt_period_us"))?;
        if runtime < 0 || period <= 0 {
            continue;
        }
        let share = |b: &GroupBudget| b.runtime_us as f64 / b.period_us as f64;
        let this = GroupBudget {
            group,
            runtime_us: runtime,
            period_us: period,
        };
        if tightest.as_ref().is_none_or(|t| share(&this) < share(t)) {
            tightest = Some(this);
        }
    }
    Ok(tightest)
}

/// The deadline fair server of `cpu` (Linux 6.12 on): (runtime, period) in ns, from debugfs.
pub fn fair_server(root: &SysRoot, cpu: usize) -> Fact<(u64, u64)> {
    let dir = format!("/sys/kernel/debug/sched/fair_server/cpu{cpu}");
    let read = |file: &str| {
        root.read_parsed::<u64>(&format!("{dir}/{file}"))
            .map_err(|u| debugfs_unknown(root, u))
    };
    Ok((read("runtime")?, read("period")?))
}

/// Why a debugfs file could not be read, with what would make it readable: debugfs not
/// mounted, not root, or the kernel refusing even root (lockdown).
fn debugfs_unknown(root: &SysRoot, u: Unknown) -> Unknown {
    let mounted = root.read("/proc/mounts").is_ok_and(|m| {
        m.lines()
            .any(|l| l.split_whitespace().nth(2) == Some("debugfs"))
    });
    if u.reason.contains("refuses") {
        Unknown::new(format!("not readable from debugfs: {u}"))
    } else if !mounted {
        Unknown::new(format!(
            "not readable: debugfs is not mounted ({u}; as root: mount -t debugfs none /sys/kernel/debug)"
        ))
    } else {
        Unknown::new(format!("not readable without root and debugfs ({u})"))
    }
}

/// The SCHED_DEADLINE bandwidth admitted in the root domain of `cpu` and the most it may
/// admit, as shares of one CPU (the kernel's `dl_bw->total_bw` and `dl_bw->bw`, read from
/// debugfs `sched/debug`; the fair servers' reservations are part of the total).
pub fn deadline_bandwidth(root: &SysRoot, cpu: usize) -> Fact<(f64, f64)> {
    let path = "/sys/kernel/debug/sched/debug";
    let text = root.read(path).map_err(|u| debugfs_unknown(root, u))?;
    let head = format!("dl_rq[{cpu}]:");
    let section = text
        .split_once(&head)
        .map(|(_, rest)| rest)
        .ok_or_else(|| Unknown::new(format!("{path}: no {head} section")))?;
    let field = |name: &str| -> Fact<f64> {
        section
            .lines()
            .skip(1)
            .take_while(|l| !l.trim().is_empty())
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                (k.trim() == name).then(|| v.trim().parse::<f64>().ok())?
            })
            .ok_or_else(|| Unknown::new(format!("{path}: no {name} under {head}")))
    };
    // Bandwidths are fixed point with 20 fractional bits (BW_SHIFT).
    let unit = (1u64 << 20) as f64;
    Ok((
        field(".dl_bw->total_bw")? / unit,
        field(".dl_bw->bw")? / unit,
    ))
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

    #[test]
    fn scheduler_budgets_read_from_a_fixture() {
        let dir = tempfile::tempdir().unwrap();
        let put = |path: &str, text: &str| {
            let p = dir.path().join(path.trim_start_matches('/'));
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        put("/proc/self/cgroup", "3:cpu,cpuacct:/rt/app\n0::/\n");
        put("/sys/fs/cgroup/cpu/cpu.rt_runtime_us", "950000\n");
        put("/sys/fs/cgroup/cpu/rt/cpu.rt_runtime_us", "400000\n");
        put("/sys/fs/cgroup/cpu/rt/cpu.rt_period_us", "1000000\n");
        put("/sys/fs/cgroup/cpu/rt/app/cpu.rt_runtime_us", "300000\n");
        put("/sys/fs/cgroup/cpu/rt/app/cpu.rt_period_us", "500000\n");
        put("/sys/kernel/debug/sched/debug", "rt_rq[1]:/\n  .rt_runtime : 950.0\n\ndl_rq[1]:\n  .dl_nr_running : 0\n  .dl_bw->bw : 996147\n  .dl_bw->total_bw : 104856\n\n");
        let root = SysRoot::at(dir.path());
        let g = rt_group_budget(&root).unwrap().unwrap();
        assert_eq!(
            (g.group.as_str(), g.runtime_us, g.period_us),
            ("/rt", 400000, 1000000)
        );
        let e = fair_server(&root, 1).unwrap_err().reason;
        assert!(e.starts_with("not readable"), "{e}");
        put(
            "/sys/kernel/debug/sched/fair_server/cpu1/runtime",
            "50000000\n",
        );
        put(
            "/sys/kernel/debug/sched/fair_server/cpu1/period",
            "1000000000\n",
        );
        assert_eq!(fair_server(&root, 1), Ok((50_000_000, 1_000_000_000)));
        let (total, max) = deadline_bandwidth(&root, 1).unwrap();
        assert!(
            (total - 0.1).abs() < 1e-3 && (max - 0.95).abs() < 1e-3,
            "{total} {max}"
        );
        assert!(deadline_bandwidth(&root, 0).is_err());
    }
}
