//! Process-level facts from /proc: tasks and their scheduling, device interrupts and their
//! affinity, and what the calling process is allowed to do.

use crate::root::{Fact, SysRoot, Unknown};
use std::collections::{BTreeMap, BTreeSet};

/// SCHED_FIFO as numbered in `/proc/<pid>/stat` (field 41).
pub const SCHED_FIFO: u32 = 1;
/// SCHED_RR as numbered in `/proc/<pid>/stat`.
pub const SCHED_RR: u32 = 2;
/// SCHED_DEADLINE as numbered in `/proc/<pid>/stat`; it outranks every FIFO/RR priority.
pub const SCHED_DEADLINE: u32 = 6;

/// One task (thread) and how it is scheduled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Task {
    /// The process (thread group) id.
    pub pid: u32,
    /// The thread id (equal to `pid` for a process's main thread or a kthread).
    pub tid: u32,
    /// The command name, at most 15 bytes, as the kernel keeps it.
    pub comm: String,
    /// Field 40 of stat: 1..99 for SCHED_FIFO/RR, 0 otherwise.
    pub rt_priority: u32,
    /// Field 41 of stat.
    pub policy: u32,
    /// Field 39 of stat: the CPU it last ran on.
    pub last_cpu: Option<usize>,
}

impl Task {
    /// Whether the task runs in a real-time class (FIFO, RR or DEADLINE).
    pub fn is_rt(&self) -> bool {
        matches!(self.policy, SCHED_FIFO | SCHED_RR | SCHED_DEADLINE)
    }

    /// `FIFO`, `RR`, `DEADLINE`, `OTHER`, ...
    pub fn policy_name(&self) -> &'static str {
        match self.policy {
            0 => "OTHER",
            SCHED_FIFO => "FIFO",
            SCHED_RR => "RR",
            3 => "BATCH",
            5 => "IDLE",
            SCHED_DEADLINE => "DEADLINE",
            _ => "?",
        }
    }
}

/// Parses a `/proc/<pid>/stat` line. The command name sits in parentheses and may itself
/// contain spaces and parentheses, so fields are counted from the *last* `)`.
pub fn parse_stat(line: &str) -> Option<Task> {
    let open = line.find('(')?;
    let close = line.rfind(')')?;
    if close < open {
        return None;
    }
    let pid: u32 = line[..open].trim().parse().ok()?;
    let comm = line[open + 1..close].to_string();
    // Field 3 (state) is the first word after ')'; field N is at index N - 3.
    let rest: Vec<&str> = line[close + 1..].split_whitespace().collect();
    let field = |n: usize| rest.get(n - 3).copied();
    Some(Task {
        pid,
        tid: pid,
        comm,
        rt_priority: field(40)?.parse().ok()?,
        policy: field(41)?.parse().ok()?,
        last_cpu: field(39).and_then(|c| c.parse().ok()),
    })
}

fn numeric_entries(root: &SysRoot, dir: &str) -> Fact<Vec<u32>> {
    let mut ids: Vec<u32> = root
        .list(dir)?
        .iter()
        .filter_map(|n| n.parse().ok())
        .collect();
    ids.sort_unstable();
    Ok(ids)
}

/// Every task on the system: the threads of each process where `/proc/<pid>/task` is
/// readable, else the process itself. Tasks that vanish while scanning are skipped.
pub fn tasks(root: &SysRoot) -> Fact<Vec<Task>> {
    let pids = numeric_entries(root, "/proc")?;
    if pids.is_empty() {
        return Err(Unknown::new("/proc: no process directories"));
    }
    let mut out = Vec::new();
    for pid in pids {
        let tids = numeric_entries(root, &format!("/proc/{pid}/task")).unwrap_or_default();
        let mut any = false;
        for tid in tids {
            if let Ok(line) = root.read(&format!("/proc/{pid}/task/{tid}/stat")) {
                if let Some(mut t) = parse_stat(&line) {
                    t.pid = pid;
                    t.tid = tid;
                    out.push(t);
                    any = true;
                }
            }
        }
        if !any {
            let stat = root.read(&format!("/proc/{pid}/stat")).ok();
            if let Some(mut t) = stat.as_deref().and_then(parse_stat) {
                if let Ok(comm) = root.read_trimmed(&format!("/proc/{pid}/comm")) {
                    t.comm = comm;
                }
                out.push(t);
            }
        }
    }
    if out.is_empty() {
        return Err(Unknown::new("/proc/<pid>/stat: none readable"));
    }
    Ok(out)
}

/// A device interrupt line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Irq {
    /// The interrupt number (`/proc/irq/<n>`).
    pub irq: u32,
    /// The handler names (`nvme0q1`, `eth0-rx-0`), else the chip name.
    pub name: String,
    /// CPUs that may receive it: effective affinity where the kernel exposes it, else the
    /// requested one.
    pub affinity: Vec<usize>,
    /// Interrupts received so far, per CPU.
    pub counts: BTreeMap<usize, u64>,
}

/// Parses /proc/interrupts into (irq number, per-CPU counts, name) for numbered lines.
/// Per-CPU lines such as `LOC:` (local timer) cannot be steered and are left out.
pub fn parse_interrupts(text: &str) -> Vec<(u32, BTreeMap<usize, u64>, String)> {
    let mut lines = text.lines();
    let cpus: Vec<usize> = lines
        .next()
        .unwrap_or("")
        .split_whitespace()
        .filter_map(|c| c.strip_prefix("CPU")?.parse().ok())
        .collect();
    let mut out = Vec::new();
    for line in lines {
        let Some((head, rest)) = line.split_once(':') else {
            continue;
        };
        let Ok(irq) = head.trim().parse::<u32>() else {
            continue;
        };
        let words: Vec<&str> = rest.split_whitespace().collect();
        let n = cpus.len().min(words.len());
        let counts = cpus
            .iter()
            .zip(&words[..n])
            .filter_map(|(&cpu, w)| Some((cpu, w.parse().ok()?)))
            .collect();
        // After the counts: chip, hardware irq/trigger, then the action names.
        let tail = &words[n..];
        let name = if tail.len() > 2 {
            tail[2..].join(" ")
        } else {
            tail.join(" ")
        };
        out.push((irq, counts, name));
    }
    out
}

/// Device interrupts with their affinity.
pub fn irqs(root: &SysRoot) -> Fact<Vec<Irq>> {
    let text = root.read("/proc/interrupts")?;
    let mut out = Vec::new();
    let mut unreadable = Vec::new();
    for (irq, counts, name) in parse_interrupts(&text) {
        let eff = root.read_trimmed(&format!("/proc/irq/{irq}/effective_affinity_list"));
        let req = root.read_trimmed(&format!("/proc/irq/{irq}/smp_affinity_list"));
        let list = match eff.ok().filter(|s| !s.is_empty()).or(req.ok()) {
            Some(l) => l,
            None => {
                unreadable.push(irq);
                continue;
            }
        };
        match rtgauge_os::cpus::cpu_list(&list).ok() {
            Some(affinity) => out.push(Irq {
                irq,
                name,
                affinity,
                counts,
            }),
            None => unreadable.push(irq),
        }
    }
    if out.is_empty() && !unreadable.is_empty() {
        return Err(Unknown::new(format!(
            "/proc/irq/<n>/smp_affinity_list: not readable for irqs {unreadable:?}"
        )));
    }
    Ok(out)
}

/// The CPUs a thread may run on (`Cpus_allowed_list` of its status).
pub fn affinity(root: &SysRoot, pid: u32, tid: u32) -> Fact<Vec<usize>> {
    let path = format!("/proc/{pid}/task/{tid}/status");
    let text = root.read(&path)?;
    let list = text
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .ok_or_else(|| Unknown::new(format!("{path}: no Cpus_allowed_list line")))?;
    rtgauge_os::cpus::cpu_list(list.trim()).map_err(|_| Unknown::unexpected(&path, list))
}

/// A thread's time on a CPU so far and how many times it was switched in
/// (`/proc/<pid>/task/<tid>/schedstat`: run ns, wait ns, timeslices).
pub fn schedstat(root: &SysRoot, pid: u32, tid: u32) -> Fact<(u64, u64)> {
    let path = format!("/proc/{pid}/task/{tid}/schedstat");
    let text = root.read_trimmed(&path)?;
    let w: Vec<u64> = text
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    match w.as_slice() {
        [run, _, slices, ..] => Ok((*run, *slices)),
        _ => Err(Unknown::unexpected(&path, &text)),
    }
}

/// What the calling process (or the recorded one, on a fixture) may do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Privileges {
    /// Effective user id (root bypasses RLIMIT_RTPRIO only with CAP_SYS_NICE, which a
    /// container's root may lack, so capabilities are what the checks look at).
    pub euid: u32,
    /// Effective capability mask.
    pub cap_eff: u64,
    /// RLIMIT_RTPRIO soft limit (`None` = unlimited).
    pub rtprio_soft: Option<u64>,
    /// RLIMIT_RTPRIO hard limit (`None` = unlimited).
    pub rtprio_hard: Option<u64>,
    /// RLIMIT_MEMLOCK soft limit in bytes (`None` = unlimited).
    pub memlock_soft: Option<u64>,
    /// RLIMIT_MEMLOCK hard limit in bytes (`None` = unlimited).
    pub memlock_hard: Option<u64>,
}

/// CAP_IPC_LOCK's bit (linux/capability.h): lock memory beyond RLIMIT_MEMLOCK.
pub const CAP_IPC_LOCK: u32 = 14;
/// CAP_SYS_NICE's bit: real-time policies and priorities beyond RLIMIT_RTPRIO.
pub const CAP_SYS_NICE: u32 = 23;

impl Privileges {
    /// Whether capability bit `cap` is in the effective set.
    pub fn has_cap(&self, cap: u32) -> bool {
        self.cap_eff & (1u64 << cap) != 0
    }
}

/// Parses `/proc/self/status` and `/proc/self/limits`.
pub fn privileges(root: &SysRoot) -> Fact<Privileges> {
    let status = root.read("/proc/self/status")?;
    let limits = root.read("/proc/self/limits")?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map(str::trim)
    };
    let euid = field("Uid:")
        .and_then(|u| u.split_whitespace().nth(1))
        .and_then(|u| u.parse().ok())
        .ok_or_else(|| Unknown::new("/proc/self/status: no Uid line"))?;
    let cap_eff = field("CapEff:")
        .and_then(|c| u64::from_str_radix(c, 16).ok())
        .ok_or_else(|| Unknown::new("/proc/self/status: no CapEff line"))?;
    let limit = |name: &str| -> Fact<(Option<u64>, Option<u64>)> {
        let line = limits
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .ok_or_else(|| Unknown::new(format!("/proc/self/limits: no {name:?} line")))?;
        let mut w = line.split_whitespace();
        let parse = |v: Option<&str>| -> Fact<Option<u64>> {
            match v {
                Some("unlimited") => Ok(None),
                Some(n) => n
                    .parse()
                    .map(Some)
                    .map_err(|_| Unknown::unexpected("/proc/self/limits", line)),
                None => Err(Unknown::unexpected("/proc/self/limits", line)),
            }
        };
        Ok((parse(w.next())?, parse(w.next())?))
    };
    let (rtprio_soft, rtprio_hard) = limit("Max realtime priority")?;
    let (memlock_soft, memlock_hard) = limit("Max locked memory")?;
    Ok(Privileges {
        euid,
        cap_eff,
        rtprio_soft,
        rtprio_hard,
        memlock_soft,
        memlock_hard,
    })
}

/// Names of running processes, from `/proc/<pid>/comm`.
pub fn process_names(root: &SysRoot) -> Fact<BTreeSet<String>> {
    let pids = numeric_entries(root, "/proc")?;
    let names: BTreeSet<String> = pids
        .iter()
        .filter_map(|p| root.read_trimmed(&format!("/proc/{p}/comm")).ok())
        .collect();
    if names.is_empty() {
        return Err(Unknown::new("/proc/<pid>/comm: none readable"));
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stat_line(comm: &str, prio: u32, policy: u32) -> String {
        // 52 fields as in Linux 5+; fields 39..41 = processor, rt_priority, policy.
        let mut f: Vec<String> = (3..=52).map(|_| "0".to_string()).collect();
        f[0] = "S".into();
        f[39 - 3] = "3".into();
        f[40 - 3] = prio.to_string();
        f[41 - 3] = policy.to_string();
        format!("42 ({comm}) {}", f.join(" "))
    }

    #[test]
    fn stat_parsing_survives_hostile_comm() {
        let t = parse_stat(&stat_line("a) (b c) 7 8", 99, 1)).unwrap();
        assert_eq!(t.comm, "a) (b c) 7 8");
        assert_eq!((t.rt_priority, t.policy, t.last_cpu), (99, 1, Some(3)));
        assert!(t.is_rt());
        assert_eq!(parse_stat("garbage"), None);
        assert_eq!(parse_stat("1 (short) S 0"), None);
    }

    #[test]
    fn interrupts_parse_counts_and_names() {
        let text = "           CPU0       CPU1\n  26:   0   12  IO-APIC   4-edge      ttyS0\n 130: 5 6 IR-PCI-MSI 524288-edge nvme0q0, extra\nLOC: 1 2 Local timer interrupts\nERR: 0\n";
        let v = parse_interrupts(text);
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].0, 26);
        assert_eq!(v[0].1.get(&1), Some(&12));
        assert_eq!(v[0].2, "ttyS0");
        assert_eq!(v[1].2, "nvme0q0, extra");
    }
}
