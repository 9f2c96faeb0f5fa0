//! Scheduling: the RT budgets (system-wide, the root cpu group's, the loop's group) and the
//! preemption mode of a PREEMPT_DYNAMIC kernel.

use super::*;

pub(super) const RT_RUNTIME: &str = "/proc/sys/kernel/sched_rt_runtime_us";

pub(super) const RT_PERIOD: &str = "/proc/sys/kernel/sched_rt_period_us";

/// The root group of the cgroup v1 cpu controller (RT group scheduling keeps its own budget).
pub(super) const ROOT_CPU_GROUP: &str = "/sys/fs/cgroup/cpu";

/// The loop's cgroup in the v1 cpu hierarchy (`/` for the root group), if it has one.
pub(super) fn v1_cpu_group(s: &Scope) -> Option<String> {
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

pub(super) fn rt_throttling(s: &Scope) -> Finding {
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

pub(super) fn rt_cgroup(s: &Scope) -> Finding {
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

pub(super) fn preempt_mode(s: &Scope) -> Finding {
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

#[cfg(test)]
mod tests {
    use super::super::tests::{fixture, scope};
    use super::*;

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
}
