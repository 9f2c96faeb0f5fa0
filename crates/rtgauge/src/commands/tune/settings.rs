//! The settings `tune` may change: for each, whether it applies to this machine and these
//! CPUs, its current value, the value to try, and how to put it back.
//!
//! Every setting is a short list of file writes (sysctl, sysfs, procfs, debugfs), each with
//! the value read before anything changed. Applying writes the new values in order; restoring
//! writes the originals back in the reverse order, and only where the file no longer reads
//! as its original. That one shape is what the state file stores, so a restore after SIGKILL
//! needs nothing but the file.

use rtgauge_sysinfo::format_cpu_list;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// An exit latency above this many µs makes an idle state one to disable (as doctor judges).
const DEEP_CSTATE_US: u64 = rtgauge_sysinfo::checks::DEEP_CSTATE_US;

/// What went wrong with one setting: a line for the user.
#[derive(Debug, thiserror::Error)]
pub enum SettingError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("writing {value} to {path} was refused: {source}")]
    Write {
        path: PathBuf,
        value: String,
        source: std::io::Error,
    },
}

/// One file, its value before tune touched it, and the value tune tries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Write {
    pub path: PathBuf,
    pub original: String,
    pub target: String,
    /// A write the kernel may refuse for one member only (a managed interrupt): the others
    /// are still tried, and the refusal is reported rather than undoing the setting.
    #[serde(default)]
    pub optional: bool,
}

/// A setting that applies here and differs from its real-time value.
#[derive(Debug, Clone, Serialize)]
pub struct Candidate {
    /// Stable name, as --only and --skip take it.
    pub name: &'static str,
    /// The doctor check that calls for it (empty: doctor has none; tune judges it itself).
    pub check: &'static str,
    /// What it is, for the table.
    pub title: &'static str,
    /// What the change costs.
    pub cost: &'static str,
    /// `before → after` in the user's terms.
    pub change: String,
    pub writes: Vec<Write>,
    /// The file is in debugfs, mounted for the trial when it is not.
    pub needs_debugfs: bool,
}

/// A setting that is not tried, and why.
#[derive(Debug, Clone, Serialize)]
pub struct Skipped {
    pub name: &'static str,
    pub reason: String,
}

/// What the catalogue found for one setting.
pub enum Finding {
    Try(Candidate),
    Skip(Skipped),
}

/// Every setting name, in the order they are tried.
pub const NAMES: [&str; 14] = [
    "rt-throttling",
    "rt-cgroup",
    "preempt-mode",
    "cpu-isolation",
    "irq-affinity",
    "timer-migration",
    "cstates",
    "cpufreq-governor",
    "watchdogs",
    "thp",
    "ksm",
    "vmstat-interval",
    "workqueue-cpumask",
    "rcu-kthreads",
];

/// The machine's files below `base` (`/` live; a directory of fixtures in unit tests).
#[derive(Debug, Clone)]
pub struct Root {
    base: PathBuf,
}

impl Root {
    pub fn live() -> Self {
        Root { base: "/".into() }
    }

    #[cfg(test)]
    pub fn at(base: &Path) -> Self {
        Root { base: base.into() }
    }

    fn full(&self, path: &Path) -> PathBuf {
        self.base.join(path.strip_prefix("/").unwrap_or(path))
    }

    /// The file's value as a setting sees it: the selected word of `a [b] c` or `a (b) c`,
    /// else the trimmed text.
    pub fn value(&self, path: &Path) -> Result<String, SettingError> {
        std::fs::read_to_string(self.full(path))
            .map(|t| selected(&t))
            .map_err(|source| SettingError::Read {
                path: path.into(),
                source,
            })
    }

    pub fn write(&self, path: &Path, value: &str) -> Result<(), SettingError> {
        use std::io::Write as _;
        let err = |source| SettingError::Write {
            path: path.into(),
            value: value.into(),
            source,
        };
        // One write(2) of the whole value: sysfs and procfs take a value per write call.
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(self.full(path))
            .map_err(err)?;
        f.write_all(value.as_bytes()).map_err(err)
    }

    fn list(&self, dir: &str) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.full(Path::new(dir)))
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort_by_key(|n| natural(n));
        names
    }
}

fn natural(s: &str) -> (String, u64) {
    let digits: String = s.chars().filter(char::is_ascii_digit).collect();
    let text: String = s.chars().filter(|c| !c.is_ascii_digit()).collect();
    (text, digits.parse().unwrap_or(0))
}

/// `always [madvise] never` → `madvise`; `none voluntary (full)` → `full`; else trimmed.
pub fn selected(text: &str) -> String {
    let t = text.trim();
    for (open, close) in [('[', ']'), ('(', ')')] {
        if t.split_whitespace().count() > 1 {
            if let (Some(a), Some(b)) = (t.find(open), t.find(close)) {
                if a < b {
                    return t[a + 1..b].to_string();
                }
            }
        }
    }
    t.to_string()
}

/// Two readings of one value are the same setting: hex masks compare without leading zeros
/// and the commas between their words.
pub fn same(a: &str, b: &str) -> bool {
    let norm = |s: &str| {
        let s = s.trim();
        if !s.is_empty() && s.chars().all(|c| c.is_ascii_hexdigit() || c == ',') {
            let hex: String = s.chars().filter(|c| *c != ',').collect();
            let hex = hex.trim_start_matches('0').to_ascii_lowercase();
            if hex.is_empty() {
                "0".to_string()
            } else {
                hex
            }
        } else {
            s.to_string()
        }
    };
    norm(a) == norm(b)
}

/// A CPU set as the hexadecimal mask sysfs writes (`0,2` → `5`), in 32-bit words.
pub fn cpu_mask(cpus: &[usize]) -> String {
    let top = cpus.iter().max().copied().unwrap_or(0);
    let mut words = vec![0u32; top / 32 + 1];
    for &c in cpus {
        words[c / 32] |= 1 << (c % 32);
    }
    let mut out: Vec<String> = Vec::new();
    for (i, w) in words.iter().enumerate().rev() {
        if i == words.len() - 1 {
            out.push(format!("{w:x}"));
        } else {
            out.push(format!("{w:08x}"));
        }
    }
    out.join(",")
}

/// What the catalogue needs to know about the run being tuned.
pub struct Scope<'a> {
    pub root: &'a Root,
    /// The CPUs the loop runs on.
    pub measured: Vec<usize>,
    /// The online CPUs not measured: where housekeeping can go (empty: nowhere).
    pub housekeeping: Vec<usize>,
    /// The kernel's build options, when /proc/config.gz could be read.
    pub config: Option<rtgauge_sysinfo::kernel::KernelConfig>,
}

impl Scope<'_> {
    fn enabled(&self, option: &str) -> Option<bool> {
        self.config.as_ref().map(|c| c.enabled(option))
    }

    fn no_housekeeping(&self, name: &'static str) -> Option<Finding> {
        self.housekeeping.is_empty().then(|| {
            skip(
                name,
                "every online CPU is measured: there is no CPU to move the work to (measure a \
                 subset with --cpus)",
            )
        })
    }
}

fn skip(name: &'static str, reason: impl Into<String>) -> Finding {
    Finding::Skip(Skipped {
        name,
        reason: reason.into(),
    })
}

fn write(path: &str, original: impl Into<String>, target: impl Into<String>) -> Write {
    Write {
        path: path.into(),
        original: original.into(),
        target: target.into(),
        optional: false,
    }
}

/// Every setting of the catalogue, judged for this machine, in the order of [`NAMES`].
pub fn catalogue(s: &Scope) -> Vec<Finding> {
    vec![
        rt_throttling(s),
        rt_cgroup(s),
        preempt_mode(s),
        cpu_isolation(s),
        irq_affinity(s),
        timer_migration(s),
        cstates(s),
        cpufreq_governor(s),
        watchdogs(s),
        thp(s),
        ksm(s),
        vmstat_interval(s),
        workqueue_cpumask(s),
        rcu_kthreads(s),
    ]
}

/// A sysctl-like file with a wanted value: skipped when absent or already there.
fn single(
    s: &Scope,
    name: &'static str,
    path: &str,
    good: impl Fn(&str) -> bool,
    target: &str,
    about: (&'static str, &'static str, &'static str),
) -> Finding {
    let (check, title, cost) = about;
    match s.root.value(Path::new(path)) {
        Err(e) => skip(
            name,
            format!("this kernel has no {path} ({})", io_reason(&e)),
        ),
        Ok(v) if good(&v) => skip(name, format!("already {v} ({path})")),
        Ok(v) => Finding::Try(Candidate {
            name,
            check,
            title,
            cost,
            change: format!("{v} → {target}"),
            writes: vec![write(path, v, target)],
            needs_debugfs: false,
        }),
    }
}

fn io_reason(e: &SettingError) -> String {
    match e {
        SettingError::Read { source, .. } | SettingError::Write { source, .. } => {
            match source.kind() {
                std::io::ErrorKind::NotFound => "not found".into(),
                _ => source.to_string(),
            }
        }
    }
}

const RT_RUNTIME: &str = "/proc/sys/kernel/sched_rt_runtime_us";
const RT_PERIOD: &str = "/proc/sys/kernel/sched_rt_period_us";
/// The root group of the cgroup v1 cpu controller (RT group scheduling keeps its own budget).
const ROOT_CPU_GROUP: &str = "/sys/fs/cgroup/cpu";

/// The loop's cgroup in the v1 cpu hierarchy (`/` for the root group), if it has one.
fn v1_cpu_group(s: &Scope) -> Option<String> {
    let text = std::fs::read_to_string(s.root.full(Path::new("/proc/self/cgroup"))).ok()?;
    text.lines().find_map(|l| {
        let mut parts = l.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        controllers
            .split(',')
            .any(|c| c == "cpu")
            .then(|| path.to_string())
    })
}

fn rt_throttling(s: &Scope) -> Finding {
    const NAME: &str = "rt-throttling";
    let runtime = match s.root.value(Path::new(RT_RUNTIME)) {
        Ok(v) => v,
        Err(e) => return skip(NAME, format!("{RT_RUNTIME}: {}", io_reason(&e))),
    };
    let period: i64 = s
        .root
        .value(Path::new(RT_PERIOD))
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(1_000_000);
    let throttles = |v: &str| v.parse::<i64>().is_ok_and(|r| r >= 0 && r < period);
    let mut writes = Vec::new();
    let mut change = Vec::new();
    if throttles(&runtime) {
        change.push(format!("{runtime} → -1"));
        writes.push(write(RT_RUNTIME, runtime.clone(), "-1"));
    }
    // With RT group scheduling the root group keeps its own budget, which the sysctl does not
    // lift: the loop in the root group is throttled by it until it is lifted too.
    let group_file = format!("{ROOT_CPU_GROUP}/cpu.rt_runtime_us");
    if s.enabled("CONFIG_RT_GROUP_SCHED") != Some(false) && v1_cpu_group(s).as_deref() == Some("/")
    {
        if let Ok(g) = s.root.value(Path::new(&group_file)) {
            if throttles(&g) {
                if writes.is_empty() {
                    writes.push(write(RT_RUNTIME, runtime.clone(), "-1"));
                    change.push(format!("{runtime} → -1"));
                }
                change.push(format!("root cpu group {g} → -1"));
                writes.push(write(&group_file, g, "-1"));
            }
        }
    }
    if writes.is_empty() {
        return skip(
            NAME,
            format!("RT tasks are not throttled (kernel.sched_rt_runtime_us = {runtime})"),
        );
    }
    Finding::Try(Candidate {
        name: NAME,
        check: "rt_throttling",
        title: "RT throttling",
        cost: "safety: a runaway SCHED_FIFO task can hold its CPU for good",
        change: change.join(", "),
        writes,
        needs_debugfs: false,
    })
}

fn rt_cgroup(s: &Scope) -> Finding {
    const NAME: &str = "rt-cgroup";
    let Some(group) = v1_cpu_group(s) else {
        return skip(
            NAME,
            "no cgroup v1 cpu controller: a cgroup sets no RT budget of its own here",
        );
    };
    if group == "/" {
        return skip(
            NAME,
            "the loop runs in the root cpu cgroup (its budget is part of rt-throttling)",
        );
    }
    if s.enabled("CONFIG_RT_GROUP_SCHED") == Some(false) {
        return skip(NAME, "kernel built without RT group scheduling");
    }
    let file = |g: &str| format!("{ROOT_CPU_GROUP}{g}/cpu.rt_runtime_us");
    let Ok(root_budget) = s.root.value(Path::new(&file(""))) else {
        return skip(NAME, "the root cpu cgroup has no cpu.rt_runtime_us");
    };
    // Top-down: a group's budget may not exceed its parent's.
    let mut levels = Vec::new();
    let mut p = String::new();
    for part in group.trim_matches('/').split('/') {
        p.push('/');
        p.push_str(part);
        levels.push(p.clone());
    }
    let mut writes = Vec::new();
    for g in &levels {
        match s.root.value(Path::new(&file(g))) {
            Ok(v) if v != root_budget => writes.push(write(&file(g), v, root_budget.clone())),
            Ok(_) => {}
            Err(e) => return skip(NAME, io_reason(&e)),
        }
    }
    if writes.is_empty() {
        return skip(
            NAME,
            format!("cpu cgroup {group} has the root group's budget"),
        );
    }
    Finding::Try(Candidate {
        name: NAME,
        check: "rt_cgroup",
        title: "RT budget of the loop's cgroup",
        cost: "other groups' RT tasks share a smaller remainder",
        change: format!(
            "{group}: {} → {root_budget}",
            writes.last().map(|w| w.original.as_str()).unwrap_or("?")
        ),
        writes,
        needs_debugfs: false,
    })
}

pub const PREEMPT_FILE: &str = "/sys/kernel/debug/sched/preempt";
pub const DEBUGFS: &str = "/sys/kernel/debug";

fn preempt_mode(s: &Scope) -> Finding {
    const NAME: &str = "preempt-mode";
    if s.enabled("CONFIG_PREEMPT_RT") == Some(true) {
        return skip(NAME, "PREEMPT_RT kernel: fully preemptible already");
    }
    if s.enabled("CONFIG_PREEMPT_DYNAMIC") == Some(false) {
        return skip(
            NAME,
            "the kernel's preemption model is fixed at build time (no PREEMPT_DYNAMIC): boot a \
             PREEMPT_RT kernel",
        );
    }
    // Whether the file can be read is only known with debugfs mounted; the dry run does not
    // mount it, so it judges from the build and says so.
    let mounted = debugfs_mounted(s.root);
    if s.config.is_none() && !mounted {
        return skip(
            NAME,
            "whether the kernel has PREEMPT_DYNAMIC is unknown (no kernel config readable, \
             debugfs not mounted)",
        );
    }
    let current = if mounted {
        match s.root.value(Path::new(PREEMPT_FILE)) {
            Ok(v) => v,
            Err(e) => {
                return skip(
                    NAME,
                    format!(
                        "the kernel refuses {PREEMPT_FILE} ({}; kernel lockdown restricts \
                         debugfs): boot with preempt=full instead",
                        io_reason(&e)
                    ),
                )
            }
        }
    } else {
        "unknown until debugfs is mounted".to_string()
    };
    if current == "full" || current == "lazy" {
        return skip(NAME, format!("already {current}"));
    }
    Finding::Try(Candidate {
        name: NAME,
        check: "preempt_rt",
        title: "Preemption mode (PREEMPT_DYNAMIC)",
        cost: "throughput: a few % more context switches in kernel-heavy work",
        change: format!("{current} → full"),
        writes: vec![write(PREEMPT_FILE, current, "full")],
        needs_debugfs: !mounted,
    })
}

/// Whether debugfs is mounted at /sys/kernel/debug.
pub fn debugfs_mounted(root: &Root) -> bool {
    std::fs::read_to_string(root.full(Path::new("/proc/self/mounts")))
        .map(|m| {
            m.lines().any(|l| {
                let mut w = l.split_whitespace();
                let (_, at, kind) = (w.next(), w.next(), w.next());
                at == Some(DEBUGFS) && kind == Some("debugfs")
            })
        })
        .unwrap_or(false)
}

fn cpu_isolation(s: &Scope) -> Finding {
    const NAME: &str = "cpu-isolation";
    if let Some(f) = s.no_housekeeping(NAME) {
        return f;
    }
    skip(
        NAME,
        "a cpuset partition moves every task of the machine; tune does not try it yet (isolcpus= \
         is listed with the boot-time fixes)",
    )
}

fn irq_affinity(s: &Scope) -> Finding {
    const NAME: &str = "irq-affinity";
    if let Some(f) = s.no_housekeeping(NAME) {
        return f;
    }
    let hk_list = format_cpu_list(&s.housekeeping);
    let mut writes = Vec::new();
    let mut moved = 0;
    for irq in s.root.list("/proc/irq") {
        if irq.parse::<u32>().is_err() {
            continue;
        }
        let path = format!("/proc/irq/{irq}/smp_affinity_list");
        let Ok(list) = s.root.value(Path::new(&path)) else {
            continue;
        };
        let Ok(cpus) = rtgauge_sysinfo::cpu_list(&list) else {
            continue;
        };
        if cpus.iter().any(|c| s.measured.contains(c)) {
            moved += 1;
            let mut w = write(&path, list, hk_list.clone());
            w.optional = true;
            writes.push(w);
        }
    }
    let default = "/proc/irq/default_smp_affinity";
    let mut change = Vec::new();
    if let Ok(mask) = s.root.value(Path::new(default)) {
        let hk_mask = cpu_mask(&s.housekeeping);
        if !same(&mask, &hk_mask) {
            change.push(format!("default {mask} → {hk_mask}"));
            writes.push(write(default, mask, hk_mask));
        }
    }
    if writes.is_empty() {
        return skip(
            NAME,
            "no device interrupt may target the measured CPUs (nor new ones by default)",
        );
    }
    change.insert(0, format!("{moved} IRQs → CPU {hk_list}"));
    Finding::Try(Candidate {
        name: NAME,
        check: "irq_affinity",
        title: "Device IRQ affinity",
        cost: "throughput: all device interrupts share the housekeeping CPUs",
        change: change.join(", "),
        writes,
        needs_debugfs: false,
    })
}

fn timer_migration(s: &Scope) -> Finding {
    single(
        s,
        "timer-migration",
        "/proc/sys/kernel/timer_migration",
        |v| v == "0",
        "0",
        (
            "timer_migration",
            "Timer migration",
            "power: idle CPUs keep their own timers, so wake more often",
        ),
    )
}

fn cstates(s: &Scope) -> Finding {
    const NAME: &str = "cstates";
    let mut writes = Vec::new();
    let mut names = std::collections::BTreeSet::new();
    let mut any = false;
    for &c in &s.measured {
        let dir = format!("/sys/devices/system/cpu/cpu{c}/cpuidle");
        for state in s.root.list(&dir) {
            any = true;
            let at = |f: &str| format!("{dir}/{state}/{f}");
            let latency: u64 = s
                .root
                .value(Path::new(&at("latency")))
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            let Ok(disable) = s.root.value(Path::new(&at("disable"))) else {
                continue;
            };
            if latency > DEEP_CSTATE_US && disable == "0" {
                names.insert(
                    s.root
                        .value(Path::new(&at("name")))
                        .unwrap_or(state.clone()),
                );
                writes.push(write(&at("disable"), disable, "1"));
            }
        }
    }
    if !any {
        return skip(NAME, "no cpuidle states exposed for the measured CPUs");
    }
    if writes.is_empty() {
        return skip(
            NAME,
            format!("no enabled idle state exits slower than {DEEP_CSTATE_US} µs"),
        );
    }
    Finding::Try(Candidate {
        name: NAME,
        check: "cstates",
        title: "Deep idle states",
        cost: "power: the measured CPUs idle shallowly, drawing more and running warmer",
        change: format!(
            "{} enabled → disabled",
            names.into_iter().collect::<Vec<_>>().join(", ")
        ),
        writes,
        needs_debugfs: false,
    })
}

fn cpufreq_governor(s: &Scope) -> Finding {
    const NAME: &str = "cpufreq-governor";
    let mut writes = Vec::new();
    let mut from = std::collections::BTreeSet::new();
    let mut any = false;
    for &c in &s.measured {
        let path = format!("/sys/devices/system/cpu/cpu{c}/cpufreq/scaling_governor");
        let Ok(g) = s.root.value(Path::new(&path)) else {
            continue;
        };
        any = true;
        if g != "performance" {
            from.insert(g.clone());
            writes.push(write(&path, g, "performance"));
        }
    }
    if !any {
        return skip(
            NAME,
            "no cpufreq on the measured CPUs (a guest, or frequency left to the firmware)",
        );
    }
    if writes.is_empty() {
        return skip(NAME, "already performance");
    }
    Finding::Try(Candidate {
        name: NAME,
        check: "cpu_governor",
        title: "CPU frequency governor",
        cost: "power: the measured CPUs stay at their highest frequency",
        change: format!(
            "{} → performance",
            from.into_iter().collect::<Vec<_>>().join(", ")
        ),
        writes,
        needs_debugfs: false,
    })
}

fn watchdogs(s: &Scope) -> Finding {
    const NAME: &str = "watchdogs";
    let mut writes = Vec::new();
    let mut change = Vec::new();
    for (file, what) in [
        ("/proc/sys/kernel/nmi_watchdog", "NMI"),
        ("/proc/sys/kernel/soft_watchdog", "soft-lockup"),
    ] {
        if let Ok(v) = s.root.value(Path::new(file)) {
            if v != "0" {
                change.push(format!("{what} {v} → 0"));
                writes.push(write(file, v, "0"));
            }
        }
    }
    if writes.is_empty() {
        return skip(NAME, "the NMI and soft-lockup watchdogs are off or absent");
    }
    Finding::Try(Candidate {
        name: NAME,
        check: "",
        title: "Lockup watchdogs",
        cost: "safety: a locked-up CPU is no longer reported",
        change: change.join(", "),
        writes,
        needs_debugfs: false,
    })
}

fn thp(s: &Scope) -> Finding {
    single(
        s,
        "thp",
        "/sys/kernel/mm/transparent_hugepage/enabled",
        |v| v != "always",
        "madvise",
        (
            "thp",
            "Transparent huge pages",
            "throughput: programs that do not ask for huge pages get small ones",
        ),
    )
}

fn ksm(s: &Scope) -> Finding {
    single(
        s,
        "ksm",
        "/sys/kernel/mm/ksm/run",
        |v| v != "1",
        "0",
        (
            "",
            "Kernel same-page merging",
            "memory: identical pages are no longer shared",
        ),
    )
}

fn vmstat_interval(s: &Scope) -> Finding {
    single(
        s,
        "vmstat-interval",
        "/proc/sys/vm/stat_interval",
        |v| v.parse::<u64>().is_ok_and(|i| i >= 10),
        "10",
        (
            "",
            "vm statistics interval",
            "memory counters in /proc are up to 10 s stale",
        ),
    )
}

fn workqueue_cpumask(s: &Scope) -> Finding {
    const NAME: &str = "workqueue-cpumask";
    if let Some(f) = s.no_housekeeping(NAME) {
        return f;
    }
    let path = "/sys/devices/virtual/workqueue/cpumask";
    let hk = cpu_mask(&s.housekeeping);
    match s.root.value(Path::new(path)) {
        Err(e) => skip(NAME, format!("{path}: {}", io_reason(&e))),
        Ok(v) if same(&v, &hk) => skip(NAME, format!("already {v} (housekeeping CPUs only)")),
        Ok(v) => Finding::Try(Candidate {
            name: NAME,
            check: "",
            title: "Unbound workqueue CPUs",
            cost: "throughput: unbound kernel work runs on the housekeeping CPUs only",
            change: format!("{v} → {hk}"),
            writes: vec![write(path, v, hk)],
            needs_debugfs: false,
        }),
    }
}

fn rcu_kthreads(s: &Scope) -> Finding {
    const NAME: &str = "rcu-kthreads";
    if let Some(f) = s.no_housekeeping(NAME) {
        return f;
    }
    let offloaded = s.root.list("/proc").into_iter().any(|pid| {
        pid.parse::<u32>().is_ok()
            && s.root
                .value(Path::new(&format!("/proc/{pid}/comm")))
                .is_ok_and(|c| c.starts_with("rcuo"))
    });
    if offloaded {
        skip(
            NAME,
            "RCU callback threads exist (rcu_nocbs=): move them with `taskset -pc` to the \
             housekeeping CPUs; tune does not try thread placement yet",
        )
    } else {
        skip(
            NAME,
            "no RCU callback threads: callbacks run on each CPU unless rcu_nocbs= is given at \
             boot (listed with the boot-time fixes)",
        )
    }
}

/// Applies a candidate's writes in order. A refused required write undoes the ones before it
/// and fails the setting; a refused optional one is returned and the rest go on.
pub fn apply(root: &Root, c: &Candidate) -> Result<Vec<SettingError>, SettingError> {
    let mut refused = Vec::new();
    for (i, w) in c.writes.iter().enumerate() {
        if let Err(e) = root.write(&w.path, &w.target) {
            if w.optional {
                refused.push(e);
                continue;
            }
            let _ = restore(root, &c.writes[..i]);
            return Err(e);
        }
    }
    Ok(refused)
}

/// Puts originals back, last write first, where the file no longer reads as its original.
/// Every write is tried; the errors are returned.
pub fn restore(root: &Root, writes: &[Write]) -> Vec<SettingError> {
    let mut errors = Vec::new();
    for w in writes.iter().rev() {
        match root.value(&w.path) {
            Ok(now) if same(&now, &w.original) => {}
            // An optional write the kernel refused left the original in place; a file gone
            // (an interrupt freed) has nothing to restore.
            Err(SettingError::Read { source, .. })
                if source.kind() == std::io::ErrorKind::NotFound => {}
            _ => {
                if let Err(e) = root.write(&w.path, &w.original) {
                    errors.push(e);
                }
            }
        }
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selected_word_and_masks() {
        assert_eq!(selected("always [madvise] never\n"), "madvise");
        assert_eq!(selected("none voluntary (full) lazy\n"), "full");
        assert_eq!(selected("950000\n"), "950000");
        assert_eq!(cpu_mask(&[0]), "1");
        assert_eq!(cpu_mask(&[0, 2]), "5");
        assert_eq!(cpu_mask(&[33]), "2,00000000");
        assert!(same("00000003", "3"));
        assert!(same("00000000,00000001", "1"));
        assert!(!same("0-1", "0"));
    }

    fn fixture(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (p, text) in files {
            let at = dir.path().join(p.trim_start_matches('/'));
            std::fs::create_dir_all(at.parent().unwrap()).unwrap();
            std::fs::write(at, text).unwrap();
        }
        dir
    }

    fn scope(root: &Root) -> Scope<'_> {
        Scope {
            root,
            measured: vec![1],
            housekeeping: vec![0],
            config: None,
        }
    }

    #[test]
    fn throttling_in_the_root_group_lifts_both_budgets_and_restores_in_reverse() {
        let dir = fixture(&[
            (RT_RUNTIME, "300000\n"),
            (RT_PERIOD, "1000000\n"),
            ("/sys/fs/cgroup/cpu/cpu.rt_runtime_us", "300000\n"),
            ("/proc/self/cgroup", "2:cpuacct:/\n1:cpu:/\n0::/\n"),
        ]);
        let root = Root::at(dir.path());
        let Finding::Try(c) = rt_throttling(&scope(&root)) else {
            panic!("not found")
        };
        assert_eq!(c.writes.len(), 2);
        assert!(apply(&root, &c).unwrap().is_empty());
        assert_eq!(root.value(Path::new(RT_RUNTIME)).unwrap(), "-1");
        assert!(restore(&root, &c.writes).is_empty());
        assert_eq!(root.value(Path::new(RT_RUNTIME)).unwrap(), "300000");
    }

    #[test]
    fn settings_already_right_or_absent_are_skipped_with_their_reason() {
        let dir = fixture(&[
            (RT_RUNTIME, "-1\n"),
            ("/proc/sys/kernel/timer_migration", "0\n"),
            (
                "/sys/kernel/mm/transparent_hugepage/enabled",
                "always [madvise] never\n",
            ),
            ("/proc/irq/5/smp_affinity_list", "0\n"),
            ("/proc/irq/default_smp_affinity", "1\n"),
        ]);
        let root = Root::at(dir.path());
        let found = catalogue(&scope(&root));
        assert_eq!(found.len(), NAMES.len());
        for (f, name) in found.iter().zip(NAMES) {
            match f {
                Finding::Skip(s) => assert_eq!(s.name, name),
                Finding::Try(c) => panic!("{} tried: {}", c.name, c.change),
            }
        }
        let reason = |n: &str| {
            found.iter().find_map(|f| match f {
                Finding::Skip(s) if s.name == n => Some(s.reason.clone()),
                _ => None,
            })
        };
        assert!(reason("ksm").unwrap().contains("no /sys/kernel/mm/ksm/run"));
        assert!(reason("thp").unwrap().contains("already madvise"));
    }

    #[test]
    fn interrupts_on_measured_cpus_move_and_refusals_are_kept_apart() {
        let dir = fixture(&[
            ("/proc/irq/5/smp_affinity_list", "0-1\n"),
            ("/proc/irq/6/smp_affinity_list", "0\n"),
            ("/proc/irq/default_smp_affinity", "3\n"),
        ]);
        let root = Root::at(dir.path());
        let Finding::Try(c) = irq_affinity(&scope(&root)) else {
            panic!("not found")
        };
        assert_eq!(c.writes.len(), 2, "{:?}", c.writes);
        assert_eq!(c.change, "1 IRQs → CPU 0, default 3 → 1");
        apply(&root, &c).unwrap();
        assert_eq!(
            root.value(Path::new("/proc/irq/5/smp_affinity_list"))
                .unwrap(),
            "0"
        );
        restore(&root, &c.writes);
        assert_eq!(
            root.value(Path::new("/proc/irq/5/smp_affinity_list"))
                .unwrap(),
            "0-1"
        );
    }
}
