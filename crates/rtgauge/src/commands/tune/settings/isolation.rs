//! Isolation: what runs on the measured CPUs besides the loop (interrupts, timers, unbound
//! work, RCU callbacks), moved to the housekeeping CPUs.

use super::*;
use rtgauge_sysinfo::format_cpu_list;

pub(super) fn cpu_isolation(s: &Scope) -> Finding {
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

pub(super) fn rcu_kthreads(s: &Scope) -> Finding {
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

#[cfg(test)]
mod tests {
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
