//! What the CPU isolation and RCU thread settings of `rtgauge tune` touch, read for the tests'
//! snapshots: the cpuset hierarchy, which threads are in its root, the CPUs of kernel threads.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|t| t.trim().to_string())
}

/// The cpuset hierarchy tune's CPU isolation uses: v1's own mount, else cgroup2's root when
/// it offers the cpuset controller.
pub fn cpuset_top() -> Option<PathBuf> {
    let mounts = std::fs::read_to_string("/proc/self/mounts").ok()?;
    let mut v2 = None;
    for line in mounts.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let [_, at, kind, options, ..] = f[..] else {
            continue;
        };
        if kind == "cgroup" && options.split(',').any(|o| o == "cpuset") {
            return Some(at.into());
        }
        let controllers = read(&format!("{at}/cgroup.controllers")).unwrap_or_default();
        if kind == "cgroup2" && controllers.split(' ').any(|c| c == "cpuset") {
            v2.get_or_insert_with(|| PathBuf::from(at));
        }
    }
    v2
}

/// The cpuset hierarchy's root files tune may write.
pub fn cpuset_files() -> Vec<String> {
    let Some(top) = cpuset_top() else {
        return Vec::new();
    };
    [
        "cpuset.cpus",
        "cpuset.mems",
        "cpuset.cpu_exclusive",
        "cpuset.sched_load_balance",
        "cgroup.subtree_control",
    ]
    .iter()
    .map(|f| top.join(f).display().to_string())
    .collect()
}

/// The cpuset hierarchy's child cgroups, and which cpuset every thread of the root is in
/// ("task TID" → "in the root cpuset"; the comparison passes over threads that have exited,
/// see [`exited`]).
pub fn cpuset_tree() -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let Some(top) = cpuset_top() else {
        return out;
    };
    let mut dirs: Vec<String> = std::fs::read_dir(&top)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    dirs.sort();
    out.insert("cpuset children".into(), dirs.join(" "));
    let tasks = read(&top.join("tasks").display().to_string())
        .or_else(|| read(&top.join("cgroup.procs").display().to_string()))
        .unwrap_or_default();
    for tid in tasks.split_whitespace() {
        out.insert(format!("task {tid}"), "in the root cpuset".into());
    }
    out
}

/// The CPUs of every kernel thread that can be moved ("kthread PID" → its CPU list): moved to
/// another cpuset and back, or by rcu-kthreads, each must get its own CPUs again.
pub fn kernel_thread_cpus() -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir("/proc").unwrap().filter_map(|e| e.ok()) {
        let pid = e.file_name().to_string_lossy().into_owned();
        if pid.parse::<u32>().is_err() {
            continue;
        }
        let (Some(stat), Some(status)) = (
            read(&format!("/proc/{pid}/stat")),
            read(&format!("/proc/{pid}/status")),
        ) else {
            continue;
        };
        let flags: u64 = stat[stat.rfind(')').unwrap() + 1..]
            .split_whitespace()
            .nth(6)
            .and_then(|f| f.parse().ok())
            .unwrap_or(0);
        // Kernel threads tune can move: not those the kernel keeps where they are
        // (PF_NO_SETAFFINITY: per-CPU threads, workqueue workers, whose names change).
        if flags & 0x0020_0000 == 0 || flags & 0x0400_0000 != 0 {
            continue;
        }
        let cpus = status
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
            .unwrap_or("")
            .trim()
            .to_string();
        out.insert(format!("kthread {pid}"), cpus);
    }
    out
}

/// A thread or process that has exited since the snapshot (gone, or a zombie, which has left
/// its cgroup but not /proc): not a difference.
pub fn exited(key: &str) -> bool {
    let pid = match key.split(' ').collect::<Vec<_>>()[..] {
        ["task", tid] => tid,
        ["kthread", pid] => pid,
        _ => return false,
    };
    let Some(stat) = read(&format!("/proc/{pid}/stat")) else {
        return true;
    };
    let state = stat
        .rfind(')')
        .and_then(|at| stat[at + 1..].split_whitespace().next())
        .unwrap_or("");
    matches!(state, "Z" | "X")
}

/// The RCU kernel threads that may run on the loop's CPU and may be moved: (pid, CPUs).
pub fn movable_rcu_threads(cpu: usize) -> Vec<(String, String)> {
    kernel_thread_cpus()
        .into_iter()
        .filter_map(|(k, cpus)| {
            let pid = k.strip_prefix("kthread ")?;
            let comm = read(&format!("/proc/{pid}/comm"))?;
            let stat = read(&format!("/proc/{pid}/stat"))?;
            let flags: u64 = stat[stat.rfind(')')? + 1..]
                .split_whitespace()
                .nth(6)?
                .parse()
                .ok()?;
            let on = cpu_list(&cpus).contains(&cpu);
            (comm.starts_with("rcu") && on && flags & 0x0400_0000 == 0)
                .then(|| (pid.to_string(), cpus))
        })
        .collect()
}

/// `0-2,5` → [0, 1, 2, 5].
pub fn cpu_list(text: &str) -> Vec<usize> {
    text.split(',')
        .filter(|r| !r.is_empty())
        .flat_map(|r| {
            let (a, b) = r.split_once('-').unwrap_or((r, r));
            a.trim().parse().unwrap_or(1)..=b.trim().parse().unwrap_or(0)
        })
        .collect()
}

/// Which threads of processes named `rtgauge` a cgroup holds ("comm" of each).
pub fn rtgauge_threads_in(cgroup: &Path) -> Vec<String> {
    let tasks = read(&cgroup.join("tasks").display().to_string())
        .or_else(|| read(&cgroup.join("cgroup.threads").display().to_string()))
        .unwrap_or_default();
    tasks
        .split_whitespace()
        .filter_map(|t| read(&format!("/proc/{t}/comm")))
        .filter(|c| c.starts_with("rtgauge"))
        .collect()
}
