//! Power management and watchdogs: idle states, frequency, lockup detectors.

use super::*;

pub(super) fn cstates(s: &Scope) -> Finding {
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

pub(super) fn cpufreq_governor(s: &Scope) -> Finding {
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

pub(super) fn watchdogs(s: &Scope) -> Finding {
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
