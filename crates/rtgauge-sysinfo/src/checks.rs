//! The doctor: turns system facts into verdicts a real-time engineer can act on.
//!
//! Each check reads through a [`SysRoot`], so the same code audits the live machine and test
//! fixtures. A fact that cannot be read yields [`Status::Unknown`] with the reason; no check
//! concludes "ok" from a missing file.

use crate::cpu;
use crate::format_cpu_list;
use crate::kernel::{self, KernelConfig};
use crate::platform::{self, cpu_cgroup, group_and_ancestors, CpuCgroup, Virtualization};
use crate::procs::{self, Task, CAP_IPC_LOCK, CAP_SYS_NICE};
use crate::root::{Fact, SysRoot, Unknown};
use std::collections::BTreeSet;

/// rtgauge's default measuring priority (product rule: 95, never 99, which belongs to
/// kernel housekeeping). Tasks at or above it compete with the measurement thread.
pub const MEASURE_PRIORITY: u32 = rtgauge_os::sched::DEFAULT_PRIORITY as u32;

/// An idle state whose exit latency exceeds this many microseconds counts as deep. C1 is
/// typically 1-2 µs and C1E about 10 µs; C3 and deeper take tens to hundreds.
pub const DEEP_CSTATE_US: u64 = 10;

pub use rtgauge_result::{Check, Status};

/// What stays the same across one check's verdicts: its id, title and why it matters. Each
/// check names these once and then only says what it found.
#[derive(Clone, Copy)]
struct About {
    id: &'static str,
    title: &'static str,
    why: &'static str,
}

impl About {
    const fn new(id: &'static str, title: &'static str, why: &'static str) -> Self {
        About { id, title, why }
    }

    fn verdict(self, status: Status, found: impl Into<String>) -> Check {
        Check::new(self.id, self.title, status, found, self.why)
    }

    fn ok(self, found: impl Into<String>) -> Check {
        self.verdict(Status::Ok, found)
    }

    fn warn(self, found: impl Into<String>) -> Check {
        self.verdict(Status::Warn, found)
    }

    fn fail(self, found: impl Into<String>) -> Check {
        self.verdict(Status::Fail, found)
    }

    /// An unknown verdict; suggests running as root when the reason is a permission problem.
    fn unknown(self, u: &Unknown) -> Check {
        unknown_check(self.id, self.title, self.why, u)
    }
}

/// An unknown verdict for a check whose reason text is computed (see [`About::unknown`]).
fn unknown_check(id: &str, title: &str, why: &str, u: &Unknown) -> Check {
    let c = Check::new(id, title, Status::Unknown, format!("unknown: {u}"), why);
    if u.reason.contains("permission denied") {
        c.fix("run `rtgauge doctor` as root to read it")
    } else {
        c
    }
}

/// Shared facts, read once.
struct Ctx<'a> {
    root: &'a SysRoot,
    /// The priority the measurement will run at.
    priority: u32,
    online: Fact<Vec<usize>>,
    /// The CPUs that will be measured (the requested ones, else all online ones).
    measured: Vec<usize>,
    /// Requested CPUs that are not online (left out of `measured`).
    not_online: Vec<usize>,
    /// Every online CPU is measured, so nothing can be moved away from the measured ones.
    all_measured: bool,
    config: Fact<KernelConfig>,
    cmdline: Fact<String>,
    cpuinfo: Fact<String>,
    clocksource: Fact<kernel::Clocksource>,
    virt: Fact<Virtualization>,
    tasks: Fact<Vec<Task>>,
    isolated: Fact<Vec<usize>>,
    nohz_full: Fact<Vec<usize>>,
}

impl<'a> Ctx<'a> {
    fn new(root: &'a SysRoot, settings: &DoctorSettings) -> Self {
        let measured_cpus = settings.cpus.as_slice();
        let online = cpu::online(root);
        let mut measured: Vec<usize> = if measured_cpus.is_empty() {
            online.clone().unwrap_or_default()
        } else {
            measured_cpus.to_vec()
        };
        measured.sort_unstable();
        measured.dedup();
        // CPUs that are not online have nothing to audit; judging them would only produce
        // misleading "absent" verdicts.
        let mut not_online = Vec::new();
        if let Ok(on) = &online {
            (measured, not_online) = measured.iter().partition(|c| on.contains(c));
        }
        let all_measured = match &online {
            Ok(on) => !on.is_empty() && on.iter().all(|c| measured.contains(c)),
            Err(_) => measured_cpus.is_empty(),
        };
        let clocksource = kernel::clocksource(root);
        let available = clocksource
            .as_ref()
            .map(|c| c.available.clone())
            .unwrap_or_default();
        Self {
            root,
            priority: settings.priority,
            measured,
            not_online,
            all_measured,
            config: kernel::kernel_config(root),
            cmdline: kernel::kernel_cmdline(root),
            cpuinfo: root.read("/proc/cpuinfo"),
            virt: platform::virtualization(root, &available),
            tasks: procs::tasks(root),
            isolated: cpu::isolated(root),
            nohz_full: cpu::nohz_full(root),
            clocksource,
            online,
        }
    }

    fn config(&self) -> Option<&KernelConfig> {
        self.config.as_ref().ok()
    }

    fn param(&self, key: &str) -> Option<String> {
        self.cmdline
            .as_ref()
            .ok()
            .and_then(|c| kernel::cmdline_param(c, key))
    }

    fn in_vm(&self) -> Option<bool> {
        self.virt.as_ref().ok().map(|v| !v.hypervisor.is_empty())
    }

    fn measured_str(&self) -> String {
        format_cpu_list(&self.measured)
    }

    /// CPUs to isolate and CPUs to keep for housekeeping, for fix suggestions: the measured
    /// CPUs and the rest, or (when everything is measured) all but the first CPU.
    fn split(&self) -> (Vec<usize>, Vec<usize>) {
        let online = self
            .online
            .clone()
            .unwrap_or_else(|_| self.measured.clone());
        if !self.all_measured {
            let hk: Vec<usize> = online
                .iter()
                .copied()
                .filter(|c| !self.measured.contains(c))
                .collect();
            if !hk.is_empty() {
                return (self.measured.clone(), hk);
            }
        }
        match online.split_first() {
            Some((first, rest)) if !rest.is_empty() => (rest.to_vec(), vec![*first]),
            _ => (Vec::new(), online),
        }
    }

    /// `isolcpus=... nohz_full=... rcu_nocbs=... irqaffinity=...` naming concrete CPUs.
    fn isolation_params(&self) -> Option<String> {
        let (iso, hk) = self.split();
        if iso.is_empty() {
            return None;
        }
        let (i, h) = (format_cpu_list(&iso), format_cpu_list(&hk));
        // A parameter the kernel was built without is ignored at boot: suggesting it would
        // promise an effect that never comes (the nohz_full and rcu_nocbs checks say so).
        let built_with = |option: &str| self.config().is_none_or(|c| c.enabled(option));
        let mut params = format!("isolcpus=domain,managed_irq,{i}");
        if built_with("CONFIG_NO_HZ_FULL") {
            params.push_str(&format!(" nohz_full={i}"));
        }
        if built_with("CONFIG_RCU_NOCB_CPU") {
            params.push_str(&format!(" rcu_nocbs={i}"));
        }
        params.push_str(&format!(" irqaffinity={h}"));
        Some(params)
    }

    /// How to add boot parameters, with the concrete ones.
    fn boot_fix(&self, what: &str) -> String {
        match self.isolation_params() {
            Some(p) => {
                let (iso, hk) = self.split();
                let measure = if self.all_measured {
                    format!(
                        "; then measure with --cpus {} (CPU {} stays for housekeeping)",
                        format_cpu_list(&iso),
                        format_cpu_list(&hk)
                    )
                } else {
                    String::new()
                };
                format!(
                    "add to the kernel command line ({what}): {p}\n\
                     (Debian/Ubuntu: GRUB_CMDLINE_LINUX in /etc/default/grub, then update-grub; \
                     Fedora/RHEL: grubby --update-kernel=ALL --args=\"...\"; reboot){measure}"
                )
            }
            None => "only one CPU is online: nothing can be isolated; measure on a machine with \
                     at least two CPUs"
                .to_string(),
        }
    }
}

/// Audits the system under `root` for real-time readiness.
///
/// `measured_cpus` are the CPUs a measurement will use; empty means every online CPU. Checks
/// about CPU-local state (governor, C-states, isolation, interrupts) look at those CPUs only
/// and say when they cannot apply (e.g. interrupts cannot be steered away when every CPU is
/// measured). Requested CPUs that are not online are left out; when none remains, those
/// checks are unknown and say so. The checks come in a fixed order with stable ids. Only
/// reads files; never changes the system.
pub fn doctor(root: &SysRoot, measured_cpus: &[usize]) -> Vec<Check> {
    doctor_with(root, &DoctorSettings::for_cpus(measured_cpus))
}

/// The settings of the run the doctor judges the machine for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DoctorSettings {
    /// CPUs the measurement will use; empty means every online CPU.
    pub cpus: Vec<usize>,
    /// The real-time priority the measuring threads will run at (`--priority`): a permission
    /// limit below it, or a task at or above it on the measured CPUs, weakens the run.
    pub priority: u32,
}

impl Default for DoctorSettings {
    fn default() -> Self {
        DoctorSettings {
            cpus: Vec::new(),
            priority: MEASURE_PRIORITY,
        }
    }
}

impl DoctorSettings {
    /// The default priority on these CPUs.
    pub fn for_cpus(cpus: &[usize]) -> Self {
        DoctorSettings {
            cpus: cpus.to_vec(),
            ..DoctorSettings::default()
        }
    }

    /// The same settings at another measuring priority.
    pub fn at_priority(mut self, priority: u32) -> Self {
        self.priority = priority;
        self
    }
}

/// [`doctor`], judging against the settings of a particular run rather than the defaults.
pub fn doctor_with(root: &SysRoot, settings: &DoctorSettings) -> Vec<Check> {
    let ctx = Ctx::new(root, settings);
    vec![
        preempt_rt(&ctx),
        rt_throttling(&ctx),
        rt_cgroup(&ctx),
        clocksource(&ctx),
        hres_timers(&ctx),
        cpu_governor(&ctx),
        cstates(&ctx),
        smt(&ctx),
        isolated_cpus(&ctx),
        nohz_full(&ctx),
        rcu_nocbs(&ctx),
        irq_affinity(&ctx),
        irqbalance(&ctx),
        thp(&ctx),
        swap(&ctx),
        rtprio_permission(&ctx),
        memlock_permission(&ctx),
        rt_tasks(&ctx),
        timer_migration(&ctx),
        virtualization(&ctx),
        container(&ctx),
        mitigations(&ctx),
        crate::timesync::check(ctx.root),
    ]
}

fn preempt_rt(ctx: &Ctx) -> Check {
    const ID: &str = "preempt_rt";
    const TITLE: &str = "Kernel preemption model";
    const WHY: &str = "Without PREEMPT_RT, code under spinlocks, softirq processing and interrupt \
        handlers runs with preemption disabled: a high-priority task that wakes meanwhile waits \
        until they finish, which under disk or network load means hundreds of microseconds to \
        milliseconds. PREEMPT_RT makes those sections preemptible (sleeping locks with priority \
        inheritance, threaded interrupts), which bounds the wait.";
    const ABOUT: About = About::new(ID, TITLE, WHY);
    let p = match kernel::preemption(ctx.root, ctx.config()) {
        Ok(p) => p,
        Err(u) => return ABOUT.unknown(&u),
    };
    if p.rt {
        let mut how = Vec::new();
        if ctx.root.read_trimmed("/sys/kernel/realtime").as_deref() == Ok("1") {
            how.push("/sys/kernel/realtime = 1");
        }
        if p.version.split_whitespace().any(|w| w == "PREEMPT_RT") {
            how.push("version string says PREEMPT_RT");
        }
        if ctx.config().is_some_and(|c| c.enabled("CONFIG_PREEMPT_RT")) {
            how.push("CONFIG_PREEMPT_RT=y");
        }
        return ABOUT.ok(format!("PREEMPT_RT ({})", how.join(", ")));
    }
    let found = match p.model.as_str() {
        "dynamic" => match &p.dynamic_mode {
            Some(mode) => format!(
                "not PREEMPT_RT: PREEMPT_DYNAMIC, current mode {mode} ({})",
                p.dynamic_source
            ),
            None => format!(
                "not PREEMPT_RT: PREEMPT_DYNAMIC, current mode unknown ({})",
                p.dynamic_source
            ),
        },
        "unknown" => format!(
            "not PREEMPT_RT: no PREEMPT in the version string {:?} (none or voluntary; kernel config not readable)",
            p.version
        ),
        m => format!("not PREEMPT_RT: preemption model {m} (version {:?})", p.version),
    };
    let weak_mode = match p.model.as_str() {
        "dynamic" => matches!(p.dynamic_mode.as_deref(), Some("none" | "voluntary")),
        m => matches!(m, "none" | "voluntary" | "unknown"),
    };
    let mut fix = "boot a PREEMPT_RT kernel: Debian `apt install linux-image-rt-amd64` (arm64: \
        linux-image-rt-arm64), Ubuntu `pro enable realtime-kernel`, RHEL-like `dnf install \
        kernel-rt`, or build Linux >= 6.12 with CONFIG_PREEMPT_RT=y"
        .to_string();
    if p.model == "dynamic" && weak_mode {
        // The switch is in debugfs: say how to mount it where it is not.
        let mount = if ctx.root.path("/sys/kernel/debug/sched").is_dir() {
            ""
        } else {
            "`mount -t debugfs none /sys/kernel/debug`, then "
        };
        fix.push_str(&format!(
            "\nmeanwhile, add `preempt=full` to the kernel command line of this PREEMPT_DYNAMIC \
             kernel (or {mount}`echo full > /sys/kernel/debug/sched/preempt`)"
        ));
    }
    let mut c = ABOUT.warn(found).fix(fix);
    if weak_mode {
        c.why.push_str(
            " The current mode is not even fully preemptible: kernel code runs until it \
             reaches an explicit scheduling point, however long that takes.",
        );
    }
    c
}

fn rt_throttling(ctx: &Ctx) -> Check {
    const ID: &str = "rt_throttling";
    const TITLE: &str = "RT throttling";
    const WHY: &str = "Once real-time tasks on a CPU have used sched_rt_runtime_us of a \
        sched_rt_period_us window, all of them are stopped until the window ends. A sleeping \
        measurement thread rarely exhausts the budget, but an RT load or a runaway RT task does, \
        and the stall then appears as an outlier that says nothing about kernel latency; runs \
        with and without throttling are not comparable. (Recent kernels also have a deadline \
        \"fair server\" that reserves time for starved normal tasks.)";
    const ABOUT: About = About::new(ID, TITLE, WHY);
    const SYSCTL: &str = "sysctl -w kernel.sched_rt_runtime_us=-1\n\
        only where every RT task is trusted (throttling is the last guard against a spinning \
        SCHED_FIFO task locking up a CPU), persist it: \
        echo 'kernel.sched_rt_runtime_us = -1' > /etc/sysctl.d/90-rt.conf";
    let (runtime, period) = match platform::rt_throttling(ctx.root) {
        Ok(v) => v,
        Err(u) => return ABOUT.unknown(&u),
    };
    if runtime < 0 {
        return ABOUT.ok("off (kernel.sched_rt_runtime_us = -1)");
    }
    if runtime == 0 {
        return Check::new(
            ID,
            TITLE,
            Status::Fail,
            "kernel.sched_rt_runtime_us = 0: real-time tasks get no CPU time at all",
            "With a zero budget every SCHED_FIFO/SCHED_RR task is throttled at once: the \
             measurement thread could only run when nothing else wants the CPU, so its \
             latencies would measure the throttle, not the kernel.",
        )
        .fix(SYSCTL);
    }
    match period {
        Some(p) if runtime >= p => ABOUT.ok(format!(
            "budget covers the whole period ({runtime} of {p} µs): never throttles"
        )),
        Some(p) => ABOUT
            .warn(format!(
                "on: RT tasks may use {runtime} µs of every {p} µs, then stop for {} µs",
                p - runtime
            ))
            .fix(SYSCTL),
        None => ABOUT
            .warn(format!(
                "on: kernel.sched_rt_runtime_us = {runtime} (period unknown)"
            ))
            .fix(SYSCTL),
    }
}

fn rt_cgroup(ctx: &Ctx) -> Check {
    const ID: &str = "rt_cgroup";
    const TITLE: &str = "RT runtime of this cgroup";
    const WHY: &str = "With RT group scheduling (CONFIG_RT_GROUP_SCHED) every cgroup of the \
        cpu controller has its own real-time budget, cpu.rt_runtime_us, and a new group's is 0. \
        In a group whose budget (or an ancestor's) is 0 the kernel refuses SCHED_FIFO and \
        SCHED_RR with EPERM even to root, so rt mode cannot start; a small budget throttles the \
        measurement thread as the system-wide RT throttling does. Container runtimes and \
        systemd put processes in such groups.";
    const ABOUT: About = About::new(ID, TITLE, WHY);
    const V1_FIX: &str = "give the group (and each ancestor first) a budget, e.g. echo 950000 > \
        /sys/fs/cgroup/cpu/<group>/cpu.rt_runtime_us; for Docker: docker run --cpu-rt-runtime=950000 \
        --cap-add SYS_NICE (with the daemon's --cpu-rt-runtime set); or run rtgauge from the \
        root group: echo $$ > /sys/fs/cgroup/cpu/cgroup.procs";
    let text = match ctx.root.read("/proc/self/cgroup") {
        Ok(t) => t,
        Err(u) => return ABOUT.unknown(&u),
    };
    let rt_group = ctx.config().map(|c| c.enabled("CONFIG_RT_GROUP_SCHED"));
    if rt_group == Some(false) {
        return ABOUT.ok(
            "kernel built without CONFIG_RT_GROUP_SCHED: cgroups set no RT budget, only the \
             system-wide one applies",
        );
    }
    if ctx.param("rt_group_sched").as_deref() == Some("0") {
        return ABOUT.ok(
            "RT group scheduling disabled at boot (rt_group_sched=0): only the system-wide \
             budget applies",
        );
    }
    let group = match cpu_cgroup(&text) {
        Some(g) => g,
        None => {
            return unknown_check(
                ID,
                TITLE,
                WHY,
                &Unknown::unexpected("/proc/self/cgroup", &text),
            )
        }
    };
    match group {
        CpuCgroup::V1(path) => {
            let Some(mount) = ["/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"]
                .into_iter()
                .find(|m| ctx.root.read(&format!("{m}/cpu.rt_runtime_us")).is_ok())
            else {
                return unknown_check(
                    ID,
                    TITLE,
                    WHY,
                    &Unknown::new(format!(
                        "process in cpu cgroup {path}, but no cpu.rt_runtime_us under \
                         /sys/fs/cgroup/cpu or /sys/fs/cgroup/cpu,cpuacct"
                    )),
                );
            };
            let file = |g: &str| {
                let dir = if g == "/" {
                    String::new()
                } else {
                    g.to_string()
                };
                format!("{mount}{dir}/cpu.rt_runtime_us")
            };
            let levels: Vec<(String, Fact<i64>)> = group_and_ancestors(&path)
                .into_iter()
                .map(|g| {
                    let v = ctx.root.read_parsed::<i64>(&file(&g));
                    (g, v)
                })
                .collect();
            if let Some((g, _)) = levels.iter().find(|(_, v)| v.as_ref().ok() == Some(&0)) {
                let whose = if *g == path {
                    format!("this process's cpu cgroup {path}")
                } else {
                    format!("cpu cgroup {g}, an ancestor of this process's group {path},")
                };
                return ABOUT
                    .fail(format!(
                        "{whose} has cpu.rt_runtime_us = 0: SCHED_FIFO/SCHED_RR are refused \
                         (EPERM) here"
                    ))
                    .fix(V1_FIX);
            }
            match &levels[0].1 {
                Ok(runtime) => {
                    let period = ctx
                        .root
                        .read_parsed::<i64>(&file(&path).replace("rt_runtime_us", "rt_period_us"))
                        .map(|p| format!(" of every {p} µs"))
                        .unwrap_or_default();
                    let name = if path == "/" {
                        "the root cpu cgroup".to_string()
                    } else {
                        format!("cpu cgroup {path}")
                    };
                    let budget = if *runtime < 0 {
                        "unlimited".to_string()
                    } else {
                        format!("{runtime} µs{period}")
                    };
                    ABOUT.ok(format!("{name} (cgroup v1): RT budget {budget}"))
                }
                Err(u) => ABOUT.unknown(u),
            }
        }
        CpuCgroup::V2(path) => {
            if path == "/" {
                return ABOUT.ok("root cgroup (cgroup v2): the system-wide RT budget applies");
            }
            let controllers = ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"]
                .into_iter()
                .find_map(|m| ctx.root.read(&format!("{m}{path}/cgroup.controllers")).ok());
            let Some(controllers) = controllers else {
                return unknown_check(
                    ID,
                    TITLE,
                    WHY,
                    &Unknown::new(format!(
                        "cgroup v2 group {path}: {path}/cgroup.controllers not readable under \
                         /sys/fs/cgroup"
                    )),
                );
            };
            if !controllers.split_whitespace().any(|c| c == "cpu") {
                return ABOUT.ok(format!(
                    "cgroup v2 group {path} without the cpu controller: the system-wide RT \
                         budget applies"
                ));
            }
            let (status, found) = if rt_group == Some(true) {
                (
                    Status::Fail,
                    format!(
                        "cgroup v2 group {path} has the cpu controller and the kernel has RT \
                         group scheduling, whose budget cgroup v2 cannot set (it stays 0): \
                         SCHED_FIFO/SCHED_RR are refused (EPERM) here"
                    ),
                )
            } else {
                (
                    Status::Unknown,
                    format!(
                        "cgroup v2 group {path} has the cpu controller; whether the kernel has \
                         RT group scheduling (which would refuse SCHED_FIFO here) is unknown \
                         without its config"
                    ),
                )
            };
            ABOUT.verdict(status, found).fix(
                "run rtgauge from the root cgroup (echo $$ > /sys/fs/cgroup/cgroup.procs), or \
                 boot with rt_group_sched=0 where the kernel offers it, or use a kernel built \
                 without CONFIG_RT_GROUP_SCHED (most distribution kernels)",
            )
        }
    }
}

fn clocksource(ctx: &Ctx) -> Check {
    const ID: &str = "clocksource";
    const TITLE: &str = "Clocksource";
    const WHY: &str = "Every timestamp and every timer expiry goes through the clocksource. \
        On x86 the TSC is read in a few nanoseconds from user space (vDSO); hpet and acpi_pm \
        need a system call and an uncached device read of about a microsecond, paravirtual \
        clocks add scaling by host-supplied parameters, and jiffies only advances once per \
        tick.";
    const ABOUT: About = About::new(ID, TITLE, WHY);
    let cs = match &ctx.clocksource {
        Ok(cs) => cs,
        Err(u) => return ABOUT.unknown(u),
    };
    let flags = ctx
        .cpuinfo
        .as_deref()
        .map(platform::cpu_flags)
        .unwrap_or_default();
    let tsc_flags: Vec<&str> = ["constant_tsc", "nonstop_tsc", "tsc_reliable"]
        .into_iter()
        .filter(|f| flags.iter().any(|x| x == f))
        .collect();
    let found = format!(
        "{} (available: {}{})",
        cs.current,
        if cs.available.is_empty() {
            "unknown".to_string()
        } else {
            cs.available.join(" ")
        },
        if tsc_flags.is_empty() {
            String::new()
        } else {
            format!("; CPU flags: {}", tsc_flags.join(" "))
        }
    );
    if cs.current.contains("jiffies") {
        return Check::new(
            ID,
            TITLE,
            Status::Fail,
            found,
            "jiffies advances once per tick (1/HZ, e.g. 4 ms at HZ=250): timestamps and \
             timers are too coarse to measure microsecond latencies, so every result would be \
             quantised to the tick.",
        )
        .fix(
            "`dmesg | grep -i clocksource` shows why the kernel rejected every better \
             clocksource; select one listed as available: echo tsc > \
             /sys/devices/system/clocksource/clocksource0/current_clocksource",
        );
    }
    if cs.current == "tsc" {
        return ABOUT.ok(found);
    }
    let x86 = ctx.cpuinfo.as_deref().is_ok_and(platform::is_x86)
        || cs.available.iter().any(|c| c == "tsc");
    if !x86 {
        if ctx.cpuinfo.is_err() && cs.available.is_empty() {
            return ABOUT.verdict(Status::Unknown, format!("{found}; architecture unknown, so cannot tell whether a better clocksource exists"));
        }
        return ABOUT.ok(found);
    }
    let fix = if cs.available.iter().any(|c| c == "tsc") {
        "echo tsc > /sys/devices/system/clocksource/clocksource0/current_clocksource\n\
         at boot: clocksource=tsc (add tsc=reliable only for an invariant TSC, constant_tsc + \
         nonstop_tsc, and if losing the clocksource watchdog is acceptable)"
            .to_string()
    } else {
        "the kernel did not offer tsc, i.e. it judged the TSC unstable: `dmesg | grep -i -e tsc \
         -e clocksource` says why (BIOS, unsynchronised sockets); in a VM, give the guest an \
         invariant TSC (QEMU/libvirt: -cpu host,+invtsc)"
            .to_string()
    };
    ABOUT.warn(format!("{found}: not tsc on x86")).fix(fix)
}

fn hres_timers(ctx: &Ctx) -> Check {
    const ID: &str = "hres_timers";
    const TITLE: &str = "High-resolution timers";
    const WHY: &str = "Without high-resolution mode timers expire only at the next tick, so \
        every clock_nanosleep() wake-up is late by up to 1/HZ (milliseconds), which swamps any \
        real latency: measurements would be invalid.";
    const ABOUT: About = About::new(ID, TITLE, WHY);
    const FIX: &str = "use a kernel with CONFIG_HIGH_RES_TIMERS=y, remove `highres=off` from \
        the kernel command line, and check `dmesg | grep -i -e 'high resolution' -e \
        clockevent` for a clock event device that supports one-shot mode";
    if let Some(c) = ctx.config() {
        if !c.enabled("CONFIG_HIGH_RES_TIMERS") {
            return ABOUT
                .fail(format!(
                    "kernel built without CONFIG_HIGH_RES_TIMERS ({})",
                    c.source
                ))
                .fix(FIX);
        }
    }
    let highres_off = ctx.param("highres").as_deref() == Some("off");
    let map = match cpu_or_unknown(kernel::hres_active(ctx.root), ctx) {
        Ok(m) => m,
        Err(u) => {
            if highres_off {
                return ABOUT
                    .fail("disabled by `highres=off` on the kernel command line")
                    .fix(FIX);
            }
            let built = ctx
                .config()
                .map(|c| format!(" (built with CONFIG_HIGH_RES_TIMERS=y per {})", c.source))
                .unwrap_or_default();
            let mut c = ABOUT.unknown(&u);
            c.found = format!("unknown whether active{built}: {u}");
            return c;
        }
    };
    let off: Vec<usize> = ctx
        .measured
        .iter()
        .copied()
        .filter(|c| map.get(c) == Some(&false))
        .collect();
    let seen: Vec<usize> = ctx
        .measured
        .iter()
        .copied()
        .filter(|c| map.contains_key(c))
        .collect();
    if !off.is_empty() {
        return ABOUT
            .fail(format!(
                "not active on measured {} (/proc/timer_list .hres_active = 0)",
                cpus(&off)
            ))
            .fix(FIX);
    }
    if seen.is_empty() {
        return ABOUT.verdict(
            Status::Unknown,
            format!(
                "/proc/timer_list has no entry for the measured {}",
                cpus(&ctx.measured)
            ),
        );
    }
    ABOUT.ok(format!("active on {}", cpus(&seen)))
}

/// `CPU 3` or `CPUs 0-3`.
fn cpus(list: &[usize]) -> String {
    match list {
        [one] => format!("CPU {one}"),
        _ => format!("CPUs {}", format_cpu_list(list)),
    }
}

/// `CPU 3 is` or `CPUs 0-3 are`.
fn cpus_are(list: &[usize]) -> String {
    match list {
        [_] => format!("{} is", cpus(list)),
        _ => format!("{} are", cpus(list)),
    }
}

/// Passes a fact through, but turns an empty measured-CPU set into an unknown.
fn cpu_or_unknown<T>(fact: Fact<T>, ctx: &Ctx) -> Fact<T> {
    if ctx.measured.is_empty() {
        let why = match &ctx.online {
            Err(u) => format!("which CPUs are online is unknown ({u})"),
            Ok(on) if !ctx.not_online.is_empty() => format!(
                "measured {} not online (online: {})",
                cpus_are(&ctx.not_online),
                format_cpu_list(on)
            ),
            Ok(_) => "no CPU to check".to_string(),
        };
        return Err(Unknown::new(why));
    }
    fact
}

fn cpu_governor(ctx: &Ctx) -> Check {
    const ID: &str = "cpu_governor";
    const TITLE: &str = "CPU frequency scaling";
    const WHY: &str = "A scaling governor lowers the clock of CPUs that look idle, and a \
        sleeping RT thread makes its CPU look idle: every wake-up then runs slowly until the \
        governor ramps up, and frequency transitions themselves stall the core. The \
        performance governor keeps the request at the maximum, so latencies do not depend on \
        what ran before.";
    const ABOUT: About = About::new(ID, TITLE, WHY);
    if let Err(u) = cpu_or_unknown(Ok(()), ctx) {
        return ABOUT.unknown(&u);
    }
    let mut by_gov: std::collections::BTreeMap<String, Vec<usize>> = Default::default();
    let mut missing = Vec::new();
    let mut limits = BTreeSet::new();
    for &c in &ctx.measured {
        match cpu::cpufreq(ctx.root, c) {
            Ok(f) => {
                let key = if f.driver.is_empty() {
                    f.governor.clone()
                } else {
                    format!("{} ({})", f.governor, f.driver)
                };
                by_gov.entry(key).or_default().push(c);
                if let (Some(lo), Some(hi)) = (f.min_khz, f.max_khz) {
                    limits.insert(format!("{}-{} MHz", lo / 1000, hi / 1000));
                }
            }
            Err(_) => missing.push(c),
        }
    }
    if by_gov.is_empty() {
        let found = format!(
            "no cpufreq on measured {} (/sys/devices/system/cpu/cpuN/cpufreq absent)",
            cpus(&ctx.measured)
        );
        return match ctx.in_vm() {
            Some(true) => ABOUT.verdict(Status::Unknown, format!("{found}: this guest cannot see or set the frequency, the host decides it"))
            .fix("on the host: performance governor (and shallow C-states) for the CPUs that run this guest's vCPUs"),
            Some(false) => ABOUT.warn(format!("{found}: no cpufreq driver, frequency is left to the firmware"))
            .fix("set the firmware (BIOS/UEFI) power profile to maximum performance, or load the platform's cpufreq driver (intel_pstate, amd-pstate, acpi-cpufreq) and select the performance governor"),
            None => ABOUT.verdict(Status::Unknown, format!("{found}; whether this is a VM is unknown too")),
        };
    }
    let mut parts: Vec<String> = by_gov
        .iter()
        .map(|(g, c)| format!("{g} on {}", cpus(c)))
        .collect();
    if !missing.is_empty() {
        parts.push(format!("no cpufreq on {}", cpus(&missing)));
    }
    let mut found = parts.join("; ");
    if !limits.is_empty() {
        found.push_str(&format!(
            " (limits {})",
            limits.into_iter().collect::<Vec<_>>().join(", ")
        ));
    }
    let slow: Vec<usize> = by_gov
        .iter()
        .filter(|(g, _)| !g.starts_with("performance"))
        .flat_map(|(_, cpus)| cpus.iter().copied())
        .collect();
    if slow.is_empty() {
        return ABOUT.ok(found);
    }
    let list = format_cpu_list(&slow);
    ABOUT.warn(found).fix(format!(
        "cpupower -c {list} frequency-set -g performance\n\
         or: for c in {}; do echo performance > /sys/devices/system/cpu/cpu$c/cpufreq/scaling_governor; done",
        slow.iter()
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join(" ")
    ))
}

fn cstates(ctx: &Ctx) -> Check {
    const ID: &str = "cstates";
    const TITLE: &str = "CPU idle states (C-states)";
    const WHY: &str = "Waking a core from an idle state takes its exit latency, plus cache \
        refill after the deepest ones, before the woken task runs. rtgauge holds \
        /dev/cpu_dma_latency while measuring, which keeps the idle governor out of states \
        slower than the requested latency: its results exclude this cost, and an application \
        that does not do the same pays it on every wake-up from idle.";
    const ABOUT: About = About::new(ID, TITLE, WHY);
    if let Err(u) = cpu_or_unknown(Ok(()), ctx) {
        return ABOUT.unknown(&u);
    }
    let driver = cpu::idle_driver(ctx.root).ok();
    let mut deep: std::collections::BTreeMap<String, Vec<usize>> = Default::default();
    let mut deepest: Option<(u64, String)> = None;
    let mut seen = Vec::new();
    let mut last_err = None;
    for &c in &ctx.measured {
        match cpu::idle_states(ctx.root, c) {
            Ok(states) => {
                seen.push(c);
                for s in states.iter().filter(|s| !s.disabled) {
                    if deepest.as_ref().is_none_or(|(l, _)| s.latency_us > *l) {
                        deepest = Some((s.latency_us, s.name.clone()));
                    }
                    if s.latency_us > DEEP_CSTATE_US {
                        deep.entry(format!("{} ({} µs)", s.name, s.latency_us))
                            .or_default()
                            .push(c);
                    }
                }
            }
            Err(u) => last_err = Some(u),
        }
    }
    let drv = driver
        .as_deref()
        .map(|d| format!(", driver {d}"))
        .unwrap_or_default();
    if seen.is_empty() {
        let reason = last_err.map(|u| u.reason).unwrap_or_default();
        let vm = if ctx.in_vm() == Some(true) {
            "; in a guest the host's idle states matter as well"
        } else {
            ""
        };
        return ABOUT.verdict(
            Status::Unknown,
            match &driver {
                // cpuidle is there but offers no states: the arch default idle is used.
                Some(_) => format!(
                    "no idle states exposed for {}{drv} ({reason}): the CPU idles with the \
                     architecture default (HLT/WFI), whose exit latency the kernel does not \
                     report{vm}",
                    cpus(&ctx.measured)
                ),
                None => format!("unknown: {reason}"),
            },
        );
    }
    let deepest_txt = deepest
        .map(|(l, n)| format!("deepest enabled state {n}, exit latency {l} µs"))
        .unwrap_or_else(|| "all states disabled".into());
    if deep.is_empty() {
        return ABOUT.ok(format!("{deepest_txt} on {}{drv}", cpus(&seen)));
    }
    let list: Vec<String> = deep
        .iter()
        .map(|(s, c)| format!("{s} on {}", cpus(c)))
        .collect();
    let measured = ctx.measured_str();
    ABOUT.warn(format!("deep states enabled: {}{drv}", list.join(", ")))
    .fix(format!(
        "disable the states with exit latency above {DEEP_CSTATE_US} µs, until reboot: cpupower -c {measured} idle-set -D {}\n\
         at boot: intel_idle.max_cstate=1 processor.max_cstate=1 (or idle=poll for the lowest \
         latency at full power draw)\n\
         or have the application hold /dev/cpu_dma_latency open with a low value, as rtgauge does",
        DEEP_CSTATE_US + 1
    ))
}

fn smt(ctx: &Ctx) -> Check {
    const ID: &str = "smt";
    const TITLE: &str = "Simultaneous multithreading (SMT)";
    const WHY: &str = "Hardware threads of one core share its execution units, caches and \
        buffers: whatever runs on the sibling slows the RT thread by a varying amount, and \
        some vulnerability mitigations add flushes when the sibling switches tasks.";
    const ABOUT: About = About::new(ID, TITLE, WHY);
    let s = match cpu::smt(ctx.root) {
        Ok(s) => s,
        Err(u) => return ABOUT.unknown(&u),
    };
    if !s.active {
        let ctl = if s.control.is_empty() {
            String::new()
        } else {
            format!(" (control: {})", s.control)
        };
        return ABOUT.ok(format!("inactive{ctl}"));
    }
    let mut pairs = BTreeSet::new();
    for &c in &ctx.measured {
        if let Ok(sib) = cpu::thread_siblings(ctx.root, c) {
            if sib.len() > 1 {
                pairs.insert(format_cpu_list(&sib));
            }
        }
    }
    let found = if pairs.is_empty() {
        "active".to_string()
    } else {
        format!(
            "active; measured CPUs share cores with siblings: {}",
            pairs.into_iter().collect::<Vec<_>>().join(" ")
        )
    };
    ABOUT.warn(found).fix(
        "boot with `nosmt`, or now: echo off > /sys/devices/system/cpu/smt/control\n\
         or keep each measured CPU's sibling idle by isolating it too (name both siblings in isolcpus=)",
    )
}

fn covered(measured: &[usize], set: &[usize]) -> (Vec<usize>, Vec<usize>) {
    measured.iter().partition(|c| set.contains(c))
}

fn isolated_cpus(ctx: &Ctx) -> Check {
    const ID: &str = "isolated_cpus";
    const TITLE: &str = "CPU isolation (isolcpus)";
    const WHY: &str = "On a CPU shared with the rest of the system the scheduler also runs \
        other tasks, kernel threads and their timers there, and load balancing keeps pulling \
        work in. Even at top RT priority the measurement thread waits for the non-preemptible \
        sections of whatever ran before it. isolcpus=domain takes CPUs out of load balancing \
        so only tasks pinned there run there.";
    const ABOUT: About = About::new(ID, TITLE, WHY);
    let asked = ctx.param("isolcpus");
    let asked_txt = asked
        .as_ref()
        .map(|a| format!("; command line: isolcpus={a}"))
        .unwrap_or_default();
    let iso = match cpu_or_unknown(ctx.isolated.clone(), ctx) {
        Ok(i) => i,
        Err(u) => {
            let mut c = ABOUT.unknown(&u);
            c.found.push_str(&asked_txt);
            return c;
        }
    };
    let (isolated, not) = covered(&ctx.measured, &iso);
    if not.is_empty() {
        return ABOUT.ok(format!(
            "measured {} isolated{asked_txt}",
            cpus_are(&isolated)
        ));
    }
    let found = if iso.is_empty() {
        match &asked {
            Some(a) => format!("no CPU isolated, although the command line has isolcpus={a}"),
            None => "no CPU isolated (no isolcpus= on the kernel command line)".to_string(),
        }
    } else {
        format!(
            "measured {} not isolated (isolated: {}){asked_txt}",
            cpus_are(&not),
            format_cpu_list(&iso)
        )
    };
    let found = if ctx.all_measured && iso.is_empty() {
        format!("{found}; every online CPU is measured, so none could be isolated for it")
    } else {
        found
    };
    let fix = if !iso.is_empty() {
        format!(
            "measure on the isolated CPUs: --cpus {}\nto isolate the measured ones instead, {}",
            format_cpu_list(&iso),
            ctx.boot_fix("isolation")
        )
    } else {
        ctx.boot_fix("isolation")
    };
    ABOUT.warn(found).fix(fix)
}

fn nohz_full(ctx: &Ctx) -> Check {
    const ID: &str = "nohz_full";
    const TITLE: &str = "Tickless CPUs (nohz_full)";
    let hz = ctx
        .config()
        .and_then(|c| c.get("CONFIG_HZ"))
        .map(|h| format!(" (HZ={h} here)"))
        .unwrap_or_default();
    let why = format!(
        "The scheduler tick interrupts a busy CPU HZ times a second{hz} for accounting, RCU and \
         timer work, a few microseconds each time. nohz_full stops it while a single task runs \
         on the CPU. A sleeping measurement loop is already tickless while idle (NO_HZ_IDLE), \
         so the gain shows most for busy-polling RT code and under load."
    );
    let why = why.as_str();
    if let Some(c) = ctx.config() {
        if !c.enabled("CONFIG_NO_HZ_FULL") {
            return Check::new(
                ID,
                TITLE,
                Status::Warn,
                format!(
                    "kernel built without CONFIG_NO_HZ_FULL ({}): the tick always runs on busy CPUs",
                    c.source
                ),
                why,
            )
            .fix("use a kernel built with CONFIG_NO_HZ_FULL=y, then boot with nohz_full= naming the measured CPUs");
        }
    }
    if let Err(u) = cpu_or_unknown(Ok(()), ctx) {
        return unknown_check(ID, TITLE, why, &u);
    }
    let asked = ctx.param("nohz_full");
    let active = match &ctx.nohz_full {
        Ok(list) => list.clone(),
        // The sysfs file exists only with CONFIG_NO_HZ_FULL; without it and without the boot
        // parameter nothing can be tickless.
        Err(_) if ctx.cmdline.is_ok() && asked.is_none() => Vec::new(),
        Err(u) => {
            let mut c = unknown_check(ID, TITLE, why, u);
            if let Some(a) = &asked {
                c.found
                    .push_str(&format!("; command line asks nohz_full={a}"));
            }
            return c;
        }
    };
    let (ok, not) = covered(&ctx.measured, &active);
    if not.is_empty() {
        return Check::new(
            ID,
            TITLE,
            Status::Ok,
            format!("measured {} nohz_full", cpus_are(&ok)),
            why,
        );
    }
    let found = match (&asked, active.is_empty()) {
        (None, true) => "no nohz_full CPUs (no nohz_full= on the kernel command line)".to_string(),
        (Some(a), true) => format!("command line has nohz_full={a} but no CPU is tickless"),
        (_, false) => format!(
            "measured {} not nohz_full (nohz_full: {})",
            cpus_are(&not),
            format_cpu_list(&active)
        ),
    };
    let fix = if active.is_empty() {
        ctx.boot_fix("tickless CPUs")
    } else {
        format!(
            "measure on the tickless CPUs: --cpus {}\nto make the measured ones tickless instead, {}",
            format_cpu_list(&active),
            ctx.boot_fix("tickless CPUs")
        )
    };
    Check::new(ID, TITLE, Status::Warn, found, why).fix(fix)
}

fn rcu_nocbs(ctx: &Ctx) -> Check {
    const ID: &str = "rcu_nocbs";
    const TITLE: &str = "RCU callback offload (rcu_nocbs)";
    const WHY: &str = "RCU callbacks (deferred frees after a grace period) normally run in \
        softirq context on the CPU that queued them, in bursts that can take tens to hundreds \
        of microseconds after heavy file or network activity. rcu_nocbs= (implied by \
        nohz_full=) moves them into rcuo kthreads that can be pinned to housekeeping CPUs.";
    const ABOUT: About = About::new(ID, TITLE, WHY);
    if let Some(c) = ctx.config() {
        if !c.enabled("CONFIG_RCU_NOCB_CPU") {
            return ABOUT
                .warn(format!(
                    "kernel built without CONFIG_RCU_NOCB_CPU ({})",
                    c.source
                ))
                .fix("use a kernel built with CONFIG_RCU_NOCB_CPU=y, then boot with rcu_nocbs=");
        }
    }
    if let Err(u) = cpu_or_unknown(ctx.cmdline.clone().map(|_| ()), ctx) {
        return ABOUT.unknown(&u);
    }
    let online = ctx.online.clone().unwrap_or_default();
    let mut offloaded: BTreeSet<usize> = BTreeSet::new();
    let asked = ctx.param("rcu_nocbs");
    if let Some(a) = &asked {
        // A bare `rcu_nocbs` (no list) only makes offloading switchable at run time.
        if let (_, Some(cpus)) = kernel::param_cpus(a, &online) {
            offloaded.extend(cpus);
        }
    }
    if let Ok(nf) = &ctx.nohz_full {
        offloaded.extend(nf.iter().copied());
    } else if let Some(nf) = ctx.param("nohz_full") {
        if let (_, Some(cpus)) = kernel::param_cpus(&nf, &online) {
            offloaded.extend(cpus);
        }
    }
    // rcuop/N (rcuos/N on old kernels) kthreads exist exactly for offloaded CPUs.
    let kthreads: Option<BTreeSet<usize>> = ctx.tasks.as_ref().ok().map(|tasks| {
        tasks
            .iter()
            .filter_map(|t| {
                let (name, cpu) = t.comm.split_once('/')?;
                matches!(name, "rcuop" | "rcuos" | "rcuob").then(|| cpu.parse().ok())?
            })
            .collect()
    });
    let offloaded: Vec<usize> = offloaded.into_iter().collect();
    let (ok, not) = covered(&ctx.measured, &offloaded);
    let source = match &asked {
        Some(a) => format!("rcu_nocbs={a}"),
        None => "no rcu_nocbs= on the command line".to_string(),
    };
    if not.is_empty() {
        let missing: Vec<usize> = match &kthreads {
            Some(k) => ok.iter().copied().filter(|c| !k.contains(c)).collect(),
            None => Vec::new(),
        };
        if !missing.is_empty() {
            return ABOUT
                .warn(format!(
                    "requested for measured {} ({source}) but no rcuop kthread exists for {}",
                    cpus(&ok),
                    cpus(&missing)
                ))
                .fix("check `dmesg | grep -i rcu` for why the offload was refused");
        }
        return ABOUT.ok(format!("measured {} offloaded ({source})", cpus(&ok)));
    }
    let (_, hk) = ctx.split();
    let mut fix = format!(
        "{}\nthen pin the rcuo kthreads to housekeeping: for p in $(pgrep rcuo); do taskset -pc {} $p; done",
        ctx.boot_fix("RCU offload"),
        format_cpu_list(&hk)
    );
    if !offloaded.is_empty() {
        fix = format!(
            "measure on the offloaded CPUs: --cpus {}\nto offload the measured ones instead, {fix}",
            format_cpu_list(&offloaded)
        );
    }
    ABOUT
        .warn(format!("measured {} not offloaded ({source})", cpus(&not)))
        .fix(fix)
}

fn irq_affinity(ctx: &Ctx) -> Check {
    const ID: &str = "irq_affinity";
    const TITLE: &str = "Device IRQ affinity";
    const WHY: &str = "A device interrupt preempts whatever runs on the CPU that takes it, \
        whatever its RT priority; without PREEMPT_RT the handler and the softirq work it raises \
        (network receive, block completion) run there before the RT task continues. Steering \
        device interrupts to housekeeping CPUs removes this source of latency from the \
        measured ones.";
    const ABOUT: About = About::new(ID, TITLE, WHY);
    let irqs = match cpu_or_unknown(procs::irqs(ctx.root), ctx) {
        Ok(i) => i,
        Err(u) => return ABOUT.unknown(&u),
    };
    let (iso, hk) = ctx.split();
    let hk_s = format_cpu_list(&hk);
    if ctx.all_measured {
        return ABOUT.warn(format!(
                "cannot apply: every online CPU is measured, so all {} device IRQs land on measured CPUs",
                irqs.len()
            ))
        .fix(if iso.is_empty() {
            "only one CPU is online: interrupts cannot be moved away from it".to_string()
        } else {
            format!(
                "measure a subset (--cpus {}) and boot with irqaffinity={hk_s}",
                format_cpu_list(&iso)
            )
        });
    }
    let hits: Vec<&procs::Irq> = irqs
        .iter()
        .filter(|i| i.affinity.iter().any(|c| ctx.measured.contains(c)))
        .collect();
    if hits.is_empty() {
        return ABOUT.ok(format!(
            "none of {} device IRQs may target measured {}",
            irqs.len(),
            cpus(&ctx.measured)
        ));
    }
    let shown: Vec<String> = hits
        .iter()
        .take(8)
        .map(|i| {
            let on: Vec<usize> = i
                .affinity
                .iter()
                .copied()
                .filter(|c| ctx.measured.contains(c))
                .collect();
            let count: u64 = on.iter().filter_map(|c| i.counts.get(c)).sum();
            format!(
                "{} {} (CPU {}, {count} so far)",
                i.irq,
                i.name,
                format_cpu_list(&on)
            )
        })
        .collect();
    let more = if hits.len() > 8 {
        format!(", and {} more", hits.len() - 8)
    } else {
        String::new()
    };
    let numbers = hits
        .iter()
        .map(|i| i.irq.to_string())
        .collect::<Vec<_>>()
        .join(" ");
    ABOUT
        .warn(format!(
            "{} of {} device IRQs may target measured {}: {}{more}",
            hits.len(),
            irqs.len(),
            cpus(&ctx.measured),
            shown.join(", ")
        ))
        .fix(format!(
            "now: for i in {numbers}; do echo {hk_s} > /proc/irq/$i/smp_affinity_list; done\n\
         at boot: irqaffinity={hk_s} (managed IRQs such as NVMe queues refuse manual moves; \
         isolcpus=managed_irq,{} keeps them off the measured CPUs)\n\
         and stop irqbalance or ban the CPUs from it (IRQBALANCE_BANNED_CPULIST={})",
            ctx.measured_str(),
            ctx.measured_str()
        ))
}

fn irqbalance(ctx: &Ctx) -> Check {
    const ID: &str = "irqbalance";
    const TITLE: &str = "irqbalance daemon";
    const WHY: &str = "irqbalance rewrites IRQ affinities every few seconds according to load, \
        so manual steering does not last and interrupts can move onto measured CPUs in the \
        middle of a run. Recent versions leave isolcpus= and nohz_full= CPUs alone, but not \
        CPUs that are merely measured.";
    const ABOUT: About = About::new(ID, TITLE, WHY);
    let names = match procs::process_names(ctx.root) {
        Ok(n) => n,
        Err(u) => return ABOUT.unknown(&u),
    };
    if !names.contains("irqbalance") {
        return ABOUT.ok("not running");
    }
    let mut protected: BTreeSet<usize> = ctx
        .isolated
        .clone()
        .unwrap_or_default()
        .into_iter()
        .collect();
    protected.extend(ctx.nohz_full.clone().unwrap_or_default());
    if !ctx.measured.is_empty() && ctx.measured.iter().all(|c| protected.contains(c)) {
        return ABOUT.ok(format!(
            "running, but measured {} isolated or nohz_full, which it leaves alone",
            cpus_are(&ctx.measured)
        ));
    }
    ABOUT.warn("running").fix(format!(
        "systemctl disable --now irqbalance\n\
         or keep it and ban the measured CPUs: IRQBALANCE_BANNED_CPULIST={} in /etc/default/irqbalance \
         (/etc/sysconfig/irqbalance on RHEL-like systems), then restart it",
        ctx.measured_str()
    ))
}

fn thp(ctx: &Ctx) -> Check {
    const ID: &str = "thp";
    const TITLE: &str = "Transparent huge pages";
    const WHY: &str = "With THP set to always, any page fault may allocate and zero a 2 MiB \
        page and, with synchronous defrag, compact memory first, stalling the faulting task \
        for milliseconds; khugepaged's collapsing also sends TLB-flush IPIs to the CPUs running \
        the affected process. rtgauge prefaults and locks its own memory, but the application \
        you want to run may not.";
    const ABOUT: About = About::new(ID, TITLE, WHY);
    let (enabled, defrag) = match platform::thp(ctx.root) {
        Ok(v) => v,
        Err(u) => return ABOUT.unknown(&u),
    };
    let found = match &defrag {
        Some(d) => format!("enabled={enabled}, defrag={d}"),
        None => format!("enabled={enabled}"),
    };
    if enabled == "always" {
        return ABOUT.warn(found).fix(
            "echo madvise > /sys/kernel/mm/transparent_hugepage/enabled\n\
             echo never > /sys/kernel/mm/transparent_hugepage/defrag\n\
             at boot: transparent_hugepage=madvise (or never)",
        );
    }
    ABOUT.ok(found)
}

fn swap(ctx: &Ctx) -> Check {
    const ID: &str = "swap";
    const TITLE: &str = "Swap";
    const WHY: &str = "rtgauge locks its memory, so it is never swapped out itself; but swapping \
        brings reclaim work, writeback I/O and its interrupts onto the machine, and any RT \
        component that does not lock its memory can take a major fault of milliseconds.";
    const ABOUT: About = About::new(ID, TITLE, WHY);
    let swaps = match platform::swaps(ctx.root) {
        Ok(s) => s,
        Err(u) => return ABOUT.unknown(&u),
    };
    if swaps.is_empty() {
        return ABOUT.ok("no swap active");
    }
    let list: Vec<String> = swaps
        .iter()
        .map(|(n, t, kib)| format!("{n} ({t}, {} MiB)", kib / 1024))
        .collect();
    ABOUT.warn(format!("active: {}", list.join(", ")))
    .fix("swapoff -a\nthen remove or comment out the swap entries in /etc/fstab (or mask the systemd swap units) on a measurement machine")
}

const PRIV_FIX: &str = "run as root (sudo rtgauge ...), or give the binary the capabilities:\n\
    setcap cap_sys_nice,cap_ipc_lock+ep \"$(command -v rtgauge)\"\n\
    or allow a group of yours (here: realtime) in /etc/security/limits.conf, then log in again:\n\
    @realtime  -  rtprio   98\n\
    @realtime  -  memlock  unlimited\n\
    in a container: --cap-add SYS_NICE --cap-add IPC_LOCK --ulimit rtprio=99 --ulimit memlock=-1";

fn limit_txt(v: Option<u64>) -> String {
    v.map_or("unlimited".into(), |n| n.to_string())
}

/// The process's privileges and its user (`root`, `uid 1000`) when it lacks capability
/// `cap`; otherwise `Err` with what was found (`root with CAP_SYS_NICE`) or why the
/// privileges could not be read.
fn capability(
    ctx: &Ctx,
    cap: u32,
    name: &str,
) -> Result<(procs::Privileges, String), Fact<String>> {
    let p = procs::privileges(ctx.root).map_err(Err)?;
    let who = if p.euid == 0 {
        "root".to_string()
    } else {
        format!("uid {}", p.euid)
    };
    if p.has_cap(cap) {
        return Err(Ok(format!("{who} with {name}")));
    }
    Ok((p, who))
}

fn rtprio_permission(ctx: &Ctx) -> Check {
    const ID: &str = "rtprio_permission";
    const TITLE: &str = "Permission for real-time priority";
    const WHY: &str = "Without CAP_SYS_NICE or an RLIMIT_RTPRIO allowance, \
        sched_setscheduler(SCHED_FIFO) fails with EPERM and the measurement thread can only run \
        as a normal task: its numbers then describe the fair scheduler, not real-time latency.";
    const ABOUT: About = About::new(ID, TITLE, WHY);
    let (p, who) = match capability(ctx, CAP_SYS_NICE, "CAP_SYS_NICE") {
        Ok(without) => without,
        Err(found) => return found.map_or_else(|u| ABOUT.unknown(&u), |with| ABOUT.ok(with)),
    };
    let limit = p.rtprio_soft;
    let found = format!(
        "{who} without CAP_SYS_NICE; RLIMIT_RTPRIO {} (hard {})",
        limit_txt(limit),
        limit_txt(p.rtprio_hard)
    );
    match limit {
        None => ABOUT.ok(found),
        Some(n) if n >= u64::from(ctx.priority) => ABOUT.ok(found),
        Some(0) => ABOUT
            .warn(format!("{found}: no RT priority allowed"))
            .fix(PRIV_FIX),
        Some(n) => ABOUT
            .warn(format!(
                "{found}: priorities above {n} refused (rtgauge measures at {})",
                ctx.priority
            ))
            .fix(PRIV_FIX),
    }
}

fn memlock_permission(ctx: &Ctx) -> Check {
    const ID: &str = "memlock_permission";
    const TITLE: &str = "Permission to lock memory";
    const WHY: &str = "Unlocked pages of the measurement loop can be reclaimed, and touching \
        them again costs a page fault, milliseconds for a major one. rtgauge calls mlockall() \
        and prefaults, which needs CAP_IPC_LOCK or an RLIMIT_MEMLOCK larger than the whole \
        process (thread stacks included).";
    const ABOUT: About = About::new(ID, TITLE, WHY);
    let (p, who) = match capability(ctx, CAP_IPC_LOCK, "CAP_IPC_LOCK") {
        Ok(without) => without,
        Err(found) => return found.map_or_else(|u| ABOUT.unknown(&u), |with| ABOUT.ok(with)),
    };
    let found = format!(
        "{who} without CAP_IPC_LOCK; RLIMIT_MEMLOCK {} (hard {})",
        p.memlock_soft
            .map_or("unlimited".into(), |b| format!("{} KiB", b / 1024)),
        p.memlock_hard
            .map_or("unlimited".into(), |b| format!("{} KiB", b / 1024)),
    );
    if p.memlock_soft.is_none() {
        return ABOUT.ok(found);
    }
    ABOUT
        .warn(format!(
            "{found}: mlockall() of the whole process is likely to fail"
        ))
        .fix(PRIV_FIX)
}

/// A per-CPU kernel thread bound to a CPU other than the measured ones cannot preempt the
/// measurement (`ktimers/3` when measuring CPU 1).
fn bound_elsewhere(t: &Task, measured: &[usize]) -> bool {
    t.comm
        .rsplit_once('/')
        .and_then(|(_, n)| n.parse::<usize>().ok())
        .is_some_and(|cpu| !measured.contains(&cpu))
}

fn rt_tasks(ctx: &Ctx) -> Check {
    const ID: &str = "rt_tasks";
    const TITLE: &str = "Other real-time tasks";
    const WHY: &str = "A task at a higher real-time priority preempts the measurement thread \
        (at --priority, 95 by default) and one at the same priority is not preempted by it, so their run time on a \
        measured CPU becomes measured latency; a SCHED_DEADLINE task outranks every FIFO task. \
        Priority 99 is meant for kernel housekeeping such as migration/N, which rtgauge \
        tolerates; anything else up there deserves a look.";
    const ABOUT: About = About::new(ID, TITLE, WHY);
    let tasks = match &ctx.tasks {
        Ok(t) => t,
        Err(u) => return ABOUT.unknown(u),
    };
    let rt: Vec<&Task> = tasks.iter().filter(|t| t.is_rt()).collect();
    let (competing, lower): (Vec<&Task>, Vec<&Task>) = rt
        .iter()
        .copied()
        .filter(|t| !bound_elsewhere(t, &ctx.measured))
        .filter(|t| !t.comm.starts_with("migration/"))
        .partition(|t| t.policy == procs::SCHED_DEADLINE || t.rt_priority >= ctx.priority);
    let describe = |t: &&Task| {
        let prio = if t.policy == procs::SCHED_DEADLINE {
            String::new()
        } else {
            format!(" {}", t.rt_priority)
        };
        let cpu = t
            .last_cpu
            .map(|c| format!(", last on CPU {c}"))
            .unwrap_or_default();
        format!("{} ({}{prio}, pid {}{cpu})", t.comm, t.policy_name(), t.tid)
    };
    let lower_txt = if lower.is_empty() {
        String::new()
    } else {
        let mut names: Vec<String> = lower
            .iter()
            .map(|t| format!("{} {}", t.comm, t.rt_priority))
            .collect();
        names.dedup();
        let n = names.len();
        names.truncate(6);
        let more = if n > 6 { ", ..." } else { "" };
        format!(
            "; {} at lower RT priorities ({}{more})",
            lower.len(),
            names.join(", ")
        )
    };
    let housekeeping = rt
        .iter()
        .filter(|t| t.comm.starts_with("migration/"))
        .count();
    let hk_txt = if housekeeping > 0 {
        format!("; {housekeeping} migration/N kthreads at 99 (expected)")
    } else {
        String::new()
    };
    if competing.is_empty() {
        return ABOUT.ok(format!(
            "none at or above priority {} that could run on the measured CPUs{lower_txt}{hk_txt}",
            ctx.priority
        ));
    }
    let shown: Vec<String> = competing.iter().take(8).map(describe).collect();
    let more = if competing.len() > 8 {
        format!(", and {} more", competing.len() - 8)
    } else {
        String::new()
    };
    let (_, hk) = ctx.split();
    ABOUT
        .warn(format!(
            "{} at or above priority {}: {}{more}{lower_txt}",
            competing.len(),
            ctx.priority,
            shown.join(", ")
        ))
        .fix(format!(
            "lower them below {} (chrt -f -p {} <pid>, or fix the priority where the service or \
         kthread is configured), or keep them off the measured CPUs (taskset -pc {} <pid>)",
            ctx.priority,
            ctx.priority.saturating_sub(1).max(1),
            format_cpu_list(&hk)
        ))
}

fn timer_migration(ctx: &Ctx) -> Check {
    const ID: &str = "timer_migration";
    const TITLE: &str = "Timer migration";
    const WHY: &str = "With timer migration on, timers armed by CPUs going idle may be moved to \
        and expire on busy CPUs, possibly measured ones, adding timer softirq work there. \
        Real-time tuning guides turn it off so each CPU only runs the timers it armed itself.";
    const ABOUT: About = About::new(ID, TITLE, WHY);
    match platform::timer_migration(ctx.root) {
        Err(u) => ABOUT.unknown(&u),
        Ok(false) => ABOUT.ok("off (kernel.timer_migration = 0)"),
        Ok(true) => ABOUT
            .warn("on (kernel.timer_migration = 1)")
            .fix("sysctl -w kernel.timer_migration=0\npersist it: echo 'kernel.timer_migration = 0' > /etc/sysctl.d/90-rt.conf"),
    }
}

fn virtualization(ctx: &Ctx) -> Check {
    const ID: &str = "virtualization";
    const TITLE: &str = "Virtualisation";
    const WHY: &str = "Each vCPU is a thread on the host: the host scheduler, host interrupts, \
        VM exits (timer programming, IPIs, idle) and other guests delay the guest in ways it \
        cannot see or tune away. Latencies measured in a guest describe this VM on this host \
        at this moment, not the kernel or the hardware.";
    const ABOUT: About = About::new(ID, TITLE, WHY);
    let v = match &ctx.virt {
        Ok(v) => v,
        Err(u) => return ABOUT.unknown(u),
    };
    if v.hypervisor.is_empty() {
        return ABOUT.ok("bare metal (no hypervisor flag or hypervisor DMI strings)");
    }
    let steal = match v.steal_ticks {
        Some(s) if s > 0 => format!("; steal time so far {s} ticks (the host ran something else)"),
        _ => String::new(),
    };
    ABOUT.warn(format!("guest of {} ({}){steal}", v.hypervisor, v.evidence.join(", ")))
    .fix(
        "measure on bare metal to judge the kernel and the hardware; to qualify the VM itself, pin \
         each vCPU to its own isolated host CPU at RT priority, give the guest an invariant TSC, \
         and use an RT kernel on host and guest",
    )
}

fn container(ctx: &Ctx) -> Check {
    const ID: &str = "container";
    const TITLE: &str = "Container";
    const WHY: &str = "A container shares the host kernel: every kernel fact here is the host's, \
        and sysctls, boot parameters, IRQ affinity and isolation can only be changed on the host. \
        Runtimes usually drop CAP_SYS_NICE and CAP_IPC_LOCK, may confine the process to a \
        cpuset, and with RT group scheduling may give its cgroup no RT runtime at all.";
    const ABOUT: About = About::new(ID, TITLE, WHY);
    let c = match platform::container(ctx.root) {
        Ok(c) => c,
        Err(u) => return ABOUT.unknown(&u),
    };
    if c.kind.is_empty() {
        return ABOUT.ok("no container markers");
    }
    if !c.certain {
        return ABOUT.verdict(
            Status::Unknown,
            format!(
                "undecided: only {} (no container cgroup or runtime marker); file systems built \
                 with container tools carry such leftovers into VMs and hosts too",
                c.evidence.join(", ")
            ),
        );
    }
    ABOUT
        .warn(format!("{} ({})", c.kind, c.evidence.join(", ")))
        .fix(format!(
        "measure on the host, or start the container with --cap-add SYS_NICE --cap-add IPC_LOCK \
         --ulimit rtprio=99 --ulimit memlock=-1 --cpuset-cpus {} and tune the host",
        ctx.measured_str()
    ))
}

fn mitigations(ctx: &Ctx) -> Check {
    const ID: &str = "mitigations";
    const TITLE: &str = "CPU vulnerability mitigations";
    const WHY: &str = "Mitigations add work at kernel entry and exit, on context switches and \
        on VM exits (page-table switches, buffer clearing, return thunks): exactly the path a \
        wake-up takes. That is a deliberate security cost, not a fault, but runs are only \
        comparable with the same mitigations.";
    const ABOUT: About = About::new(ID, TITLE, WHY);
    let v = match cpu::vulnerabilities(ctx.root) {
        Ok(v) => v,
        Err(u) => return ABOUT.unknown(&u),
    };
    let pick = |prefix: &str| -> Vec<&str> {
        v.iter()
            .filter(|(_, s)| s.starts_with(prefix))
            .map(|(n, _)| n.as_str())
            .collect()
    };
    let (mitigated, vulnerable) = (pick("Mitigation"), pick("Vulnerable"));
    let unaffected = pick("Not affected").len();
    let other = v.len() - mitigated.len() - vulnerable.len() - unaffected;
    let named = |names: &[&str]| {
        if names.is_empty() {
            String::new()
        } else {
            format!(" ({})", names.join(" "))
        }
    };
    let mut found = format!(
        "{} mitigated{}, {} vulnerable{}, {unaffected} not affected",
        mitigated.len(),
        named(&mitigated),
        vulnerable.len(),
        named(&vulnerable)
    );
    if other > 0 {
        found.push_str(&format!(", {other} other"));
    }
    if let Some(m) = ctx.param("mitigations") {
        found.push_str(&format!("; mitigations={m}"));
    }
    ABOUT.ok(found)
}
