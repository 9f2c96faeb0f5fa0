//! Isolation: what runs on the measured CPUs besides the loop (interrupts, timers, unbound
//! work, RCU callbacks), moved to the housekeeping CPUs.

use super::actions;
use super::*;
use rtgauge_sysinfo::format_cpu_list;

pub(super) fn irq_affinity(s: &Scope) -> Finding {
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

pub(super) fn timer_migration(s: &Scope) -> Finding {
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

pub(super) fn workqueue_cpumask(s: &Scope) -> Finding {
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

/// An RCU kernel thread: the grace-period threads (rcu_preempt, rcu_sched, rcu_exp_*,
/// rcu_tasks_*), the callback threads rcu_nocbs= makes (rcuo*, rcuog*), the boost threads
/// (rcub/*) and the per-CPU ones (rcuc/*, which the kernel keeps on their CPU).
fn is_rcu_thread(comm: &str) -> bool {
    comm.starts_with("rcu")
}

pub(super) fn rcu_kthreads(s: &Scope) -> Finding {
    const NAME: &str = "rcu-kthreads";
    if let Some(f) = s.no_housekeeping(NAME) {
        return f;
    }
    let hk = format_cpu_list(&s.housekeeping);
    let (mut writes, mut names, mut bound) = (Vec::new(), Vec::new(), 0);
    for pid in s.root.list("/proc") {
        if pid.parse::<u32>().is_err() {
            continue;
        }
        let task = Path::new("/proc").join(&pid);
        let Ok(comm) = s.root.value(&task.join("comm")) else {
            continue;
        };
        let flags = s.root.task_flags(&task).unwrap_or(0);
        if !is_rcu_thread(&comm) || flags & actions::PF_KTHREAD == 0 {
            continue;
        }
        let Ok(list) = s.root.affinity(&task) else {
            continue;
        };
        let Ok(cpus) = rtgauge_sysinfo::cpu_list(&list) else {
            continue;
        };
        if !cpus.iter().any(|c| s.measured.contains(c)) {
            continue;
        }
        if flags & actions::PF_NO_SETAFFINITY != 0 {
            bound += 1;
            continue;
        }
        names.push(comm);
        writes.push(Write {
            path: task,
            original: list,
            target: hk.clone(),
            optional: true,
            kind: Kind::Affinity,
        });
    }
    let offload = "RCU callbacks run on each CPU unless rcu_nocbs= is given at boot (listed with \
                   the boot-time fixes)";
    if writes.is_empty() {
        return skip(
            NAME,
            if bound > 0 {
                format!(
                    "the {bound} RCU kernel threads that may run on the measured CPUs are bound \
                     to their CPU; {offload}"
                )
            } else {
                format!("no RCU kernel thread may run on the measured CPUs; {offload}")
            },
        );
    }
    let shown = names.iter().take(4).cloned().collect::<Vec<_>>().join(", ");
    let more = if names.len() > 4 { ", …" } else { "" };
    let stay = if bound > 0 {
        format!("; {bound} bound to their CPU stay")
    } else {
        String::new()
    };
    let from: Vec<&str> = writes.iter().map(|w| w.original.as_str()).collect();
    let mut from = from.clone();
    from.dedup();
    Finding::Try(Candidate {
        name: NAME,
        check: "rcu_nocbs",
        title: "RCU kernel threads on the housekeeping CPUs",
        cost: "grace periods and offloaded callbacks compete with the housekeeping CPUs' work",
        change: format!(
            "{} RCU kernel threads ({shown}{more}) CPU {} → {hk}{stay}",
            writes.len(),
            from.join("/"),
        ),
        writes,
        needs_debugfs: false,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn rcu_threads_on_measured_cpus_move_and_bound_ones_are_counted() {
        let stat =
            |pid: u32, comm: &str, flags: u64| format!("{pid} ({comm}) S 2 0 0 0 -1 {flags} 0");
        let kthread = 0x0020_8040;
        let bound = kthread | 0x0400_0000;
        let files = [
            (15, "rcu_preempt", kthread, "0-1"),
            (17, "rcu_exp_gp_kthread_worker", kthread, "0-1"),
            (20, "rcuc/1", bound, "1"),
            (21, "rcuop/0", kthread, "0"),
            (30, "ksoftirqd/1", bound, "1"),
        ];
        let mut owned = Vec::new();
        for (pid, comm, flags, cpus) in files {
            owned.push((format!("/proc/{pid}/comm"), format!("{comm}\n")));
            owned.push((format!("/proc/{pid}/stat"), stat(pid, comm, flags)));
            owned.push((
                format!("/proc/{pid}/status"),
                format!("Name:\t{comm}\nCpus_allowed_list:\t{cpus}\n"),
            ));
        }
        let refs: Vec<(&str, &str)> = owned
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        let dir = fixture(&refs);
        let root = Root::at(dir.path());
        let Finding::Try(c) = rcu_kthreads(&scope(&root)) else {
            panic!("not tried")
        };
        assert_eq!(
            c.change,
            "2 RCU kernel threads (rcu_preempt, rcu_exp_gp_kthread_worker) CPU 0-1 → 0; 1 bound \
             to their CPU stay"
        );
        assert!(c
            .writes
            .iter()
            .all(|w| w.optional && w.kind == Kind::Affinity));
        apply(&root, &c).unwrap();
        assert_eq!(root.affinity(Path::new("/proc/15")).unwrap(), "0");
        assert!(restore(&root, &c.writes).is_empty());
        assert_eq!(root.affinity(Path::new("/proc/15")).unwrap(), "0-1");
        assert_eq!(root.affinity(Path::new("/proc/17")).unwrap(), "0-1");
    }

    use super::super::tests::{fixture, scope};
    use super::*;

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
