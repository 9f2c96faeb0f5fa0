//! Doctor verdicts on recorded and hand-made machines (tests/fixtures/*), on throwaway roots
//! for single edge cases, and (guarded) on the live system.

use rtgauge_sysinfo::{
    collect, collect_from, doctor, doctor_with, exit_code, render_fix_hints, render_text,
    run_warnings, Check, DoctorSettings, Fingerprint, Status, SysRoot,
};
use std::path::Path;

const IDS: &[&str] = &[
    "preempt_rt",
    "rt_throttling",
    "rt_cgroup",
    "clocksource",
    "hres_timers",
    "cpu_governor",
    "cstates",
    "smt",
    "isolated_cpus",
    "nohz_full",
    "rcu_nocbs",
    "irq_affinity",
    "irqbalance",
    "thp",
    "swap",
    "rtprio_permission",
    "memlock_permission",
    "rt_tasks",
    "timer_migration",
    "virtualization",
    "container",
    "mitigations",
    "time_sync",
];

fn fixture(name: &str) -> SysRoot {
    SysRoot::at(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name),
    )
}

fn get<'a>(checks: &'a [Check], id: &str) -> &'a Check {
    checks
        .iter()
        .find(|c| c.id == id)
        .unwrap_or_else(|| panic!("no check {id}"))
}

/// Asserts the status of each listed check, showing the whole check on failure.
fn expect(checks: &[Check], want: &[(&str, Status)]) {
    for (id, status) in want {
        let c = get(checks, id);
        assert_eq!(c.status, *status, "{id}: {c:#?}");
    }
}

fn has(c: &Check, text: &str) -> bool {
    c.found.contains(text)
}

fn fix(c: &Check) -> &str {
    c.fix.as_deref().unwrap_or("")
}

/// A scratch root with the given files.
fn scratch(files: &[(&str, &str)]) -> (tempfile::TempDir, SysRoot) {
    let dir = tempfile::tempdir().expect("temp dir");
    for (path, content) in files {
        let p = dir.path().join(path.trim_start_matches('/'));
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(&p, content).expect("write");
    }
    let root = SysRoot::at(dir.path());
    (dir, root)
}

#[test]
fn every_fixture_yields_every_check_once_in_order() {
    for name in ["this-vm", "preempt-rt", "bad", "empty"] {
        let checks = doctor(&fixture(name), &[]);
        let ids: Vec<&str> = checks.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, IDS, "{name}");
        for c in &checks {
            assert!(!c.found.is_empty() && !c.why.is_empty(), "{name}: {c:#?}");
            assert!(!c.title.is_empty());
        }
    }
}

#[test]
fn this_vm_is_a_dynamic_kvm_guest_with_throttling_and_no_isolation() {
    let checks = doctor(&fixture("this-vm"), &[]);
    expect(
        &checks,
        &[
            ("preempt_rt", Status::Warn),
            ("rt_throttling", Status::Warn),
            ("rt_cgroup", Status::Ok),
            ("clocksource", Status::Ok),
            ("hres_timers", Status::Ok),
            // No cpufreq in a guest: the host decides, so unknown rather than ok or warn.
            ("cpu_governor", Status::Unknown),
            ("cstates", Status::Ok),
            ("smt", Status::Ok),
            ("isolated_cpus", Status::Warn),
            ("nohz_full", Status::Warn),
            ("rcu_nocbs", Status::Warn),
            ("irq_affinity", Status::Warn),
            ("irqbalance", Status::Ok),
            ("thp", Status::Ok),
            ("swap", Status::Ok),
            ("rtprio_permission", Status::Ok),
            ("memlock_permission", Status::Ok),
            ("rt_tasks", Status::Ok),
            ("timer_migration", Status::Warn),
            ("virtualization", Status::Warn),
            // A lone /.dockerenv in a Firecracker VM: undecided, not "docker".
            ("container", Status::Unknown),
            ("mitigations", Status::Ok),
        ],
    );
    let p = get(&checks, "preempt_rt");
    assert!(
        has(p, "PREEMPT_DYNAMIC") && has(p, "current mode none"),
        "{p:#?}"
    );
    assert!(fix(p).contains("linux-image-rt-amd64") && fix(p).contains("preempt=full"));
    // debugfs is not mounted here: the hint that writes to it says how to mount it.
    assert!(
        fix(p).contains("`mount -t debugfs none /sys/kernel/debug`, then `echo full > /sys/kernel/debug/sched/preempt`"),
        "{}",
        fix(p)
    );
    let t = get(&checks, "rt_throttling");
    assert!(has(t, "950000") && fix(t).contains("kernel.sched_rt_runtime_us=-1"));
    assert!(
        has(
            get(&checks, "rt_cgroup"),
            "the root cpu cgroup (cgroup v1): RT budget 950000 µs of every 1000000 µs"
        ),
        "{:#?}",
        get(&checks, "rt_cgroup")
    );
    let i = get(&checks, "isolated_cpus");
    assert!(fix(i).contains("isolcpus=domain,managed_irq,1") && fix(i).contains("irqaffinity=0"));
    assert!(has(
        get(&checks, "irq_affinity"),
        "every online CPU is measured"
    ));
    assert!(has(get(&checks, "virtualization"), "kvm"));
    assert!(has(get(&checks, "nohz_full"), "CONFIG_NO_HZ_FULL"));
    assert!(has(
        get(&checks, "rt_tasks"),
        "migration/N kthreads at 99 (expected)"
    ));
    assert_eq!(exit_code(&checks), 0);

    // Measuring only CPU 1 makes the IRQ check concrete.
    let one = doctor(&fixture("this-vm"), &[1]);
    let irq = get(&one, "irq_affinity");
    assert_eq!(irq.status, Status::Warn);
    assert!(has(irq, "may target measured CPU 1"), "{irq:#?}");
    assert!(fix(irq).contains("echo 0 > /proc/irq/$i/smp_affinity_list"));
}

#[test]
fn this_vm_fingerprint() {
    let f = collect_from(&fixture("this-vm"));
    assert_eq!(f.preemption_model, "dynamic");
    assert!(!f.preempt_rt);
    assert_eq!(f.preempt_dynamic_mode, "none");
    // HZ comes from /proc/config.gz: proves the gzip path.
    assert_eq!(f.hz, Some(250));
    assert_eq!(f.virtualization, "kvm");
    assert_eq!(f.container, "docker?");
    assert_eq!(f.rt_runtime_us, Some(950_000));
    assert_eq!(f.rt_period_us, Some(1_000_000));
    assert_eq!(f.cpus_online, vec![0, 1]);
    assert_eq!(f.clocksource, "tsc");
    assert_eq!(f.hres_active, Some(true));
    assert_eq!(f.smt_active, Some(false));
    assert_eq!(f.thp, "madvise");
    assert_eq!(f.swap_active, Some(false));
    assert_eq!(f.timer_migration, Some(true));
    assert_eq!(f.cstate_max_latency_us, Some(1));
    assert_eq!(f.governor, "");
    assert!(f.isolated_cpus.is_empty() && f.nohz_full.is_empty() && f.rcu_nocbs.is_empty());
    assert!(f.mitigations_known && f.mitigations.contains("spectre_v2=Mitigation"));
}

#[test]
fn preempt_rt_box_is_all_ok_on_its_isolated_cpus() {
    let checks = doctor(&fixture("preempt-rt"), &[2, 3]);
    for c in &checks {
        assert_eq!(c.status, Status::Ok, "{c:#?}");
    }
    assert_eq!(exit_code(&checks), 0);
    assert!(run_warnings(&checks).is_empty());
    assert!(render_fix_hints(&checks).contains("## nothing to fix"));
    assert!(has(get(&checks, "preempt_rt"), "/sys/kernel/realtime = 1"));
    // Debian's kernels are built without RT group scheduling.
    assert!(has(
        get(&checks, "rt_cgroup"),
        "without CONFIG_RT_GROUP_SCHED"
    ));
    // Permission through limits.conf-style limits, not root.
    assert!(has(get(&checks, "rtprio_permission"), "RLIMIT_RTPRIO 98"));
    // Per-CPU kthreads of other CPUs and the migration threads do not count against us.
    assert!(has(get(&checks, "rt_tasks"), "ktimers/2 1"));
}

#[test]
fn preempt_rt_box_measured_everywhere_points_at_its_isolated_cpus() {
    let checks = doctor(&fixture("preempt-rt"), &[]);
    for id in ["isolated_cpus", "nohz_full", "rcu_nocbs", "irq_affinity"] {
        assert_eq!(get(&checks, id).status, Status::Warn, "{id}");
    }
    assert!(fix(get(&checks, "isolated_cpus")).contains("--cpus 2-3"));
    assert!(fix(get(&checks, "nohz_full")).contains("--cpus 2-3"));
    assert!(fix(get(&checks, "rcu_nocbs")).contains("--cpus 2-3"));
    assert_eq!(get(&checks, "preempt_rt").status, Status::Ok);
}

#[test]
fn preempt_rt_fingerprint() {
    let f = collect_from(&fixture("preempt-rt"));
    assert!(f.preempt_rt);
    assert_eq!(f.preemption_model, "rt");
    // HZ from /boot/config-<release>: proves the fallback path.
    assert_eq!(f.hz, Some(1000));
    assert_eq!(f.isolated_cpus, vec![2, 3]);
    assert_eq!(f.nohz_full, vec![2, 3]);
    assert_eq!(f.rcu_nocbs, vec![2, 3]);
    assert_eq!(f.rt_runtime_us, Some(-1));
    assert_eq!(f.governor, "performance");
    assert_eq!(f.cstate_max_latency_us, Some(10));
    assert_eq!(f.virtualization, "");
    assert_eq!(f.container, "");
    assert_eq!(f.timer_migration, Some(false));
    assert_eq!(f.hostname, "rt-box");
    assert_eq!(f.cpu_model, "Intel(R) Xeon(R) Gold 5415+");
    // What tells this box from another with the same kernel.
    assert_eq!(f.architecture, "x86_64");
    assert_eq!(f.board, "Supermicro SYS-511E-WR");
    assert_eq!(f.firmware, "American Megatrends International, LLC. 2.1");
    assert_eq!(f.memory_bytes, Some(65_536_000 * 1024));
    assert_eq!(f.microcode, "0x2b0004d0");
}

#[test]
fn arm_board_is_named_by_its_device_tree_model() {
    let (_dir, root) = scratch(&[
        ("/proc/sys/kernel/arch", "aarch64\n"),
        (
            "/proc/device-tree/model",
            "Raspberry Pi 5 Model B Rev 1.0\0",
        ),
        ("/proc/meminfo", "MemTotal:        8245000 kB\n"),
        (
            "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
            "ondemand\n",
        ),
        ("/sys/devices/system/cpu/online", "0\n"),
    ]);
    let f = collect_from(&root);
    assert_eq!(f.architecture, "aarch64");
    assert_eq!(f.board, "Raspberry Pi 5 Model B Rev 1.0");
    assert_eq!(f.firmware, "");
    assert_eq!(f.memory_bytes, Some(8_245_000 * 1024));
    assert_eq!(f.governor, "ondemand");
}

#[test]
fn bad_machine_fails_what_invalidates_and_warns_the_rest() {
    let checks = doctor(&fixture("bad"), &[1]);
    expect(
        &checks,
        &[
            ("preempt_rt", Status::Warn),
            ("rt_throttling", Status::Fail),
            ("rt_cgroup", Status::Fail),
            ("clocksource", Status::Fail),
            ("hres_timers", Status::Fail),
            ("cpu_governor", Status::Warn),
            ("cstates", Status::Warn),
            ("smt", Status::Warn),
            ("isolated_cpus", Status::Warn),
            ("nohz_full", Status::Warn),
            ("rcu_nocbs", Status::Warn),
            ("irq_affinity", Status::Warn),
            ("irqbalance", Status::Warn),
            ("thp", Status::Warn),
            ("swap", Status::Warn),
            ("rtprio_permission", Status::Warn),
            ("memlock_permission", Status::Warn),
            ("rt_tasks", Status::Warn),
            ("timer_migration", Status::Warn),
            ("virtualization", Status::Warn),
            ("container", Status::Warn),
            ("mitigations", Status::Ok),
        ],
    );
    assert_eq!(exit_code(&checks), 2);
    // preempt=voluntary comes before the `--`; init's arguments after it are ignored.
    assert!(has(get(&checks, "preempt_rt"), "current mode voluntary"));
    assert!(has(get(&checks, "isolated_cpus"), "isolcpus=3"));
    assert!(has(get(&checks, "clocksource"), "jiffies"));
    assert!(has(get(&checks, "cstates"), "C6 (200 µs)"));
    let rt = get(&checks, "rt_tasks");
    assert!(has(rt, "ktimersoftd/1 (FIFO 99"), "{rt:#?}");
    // comm with spaces and parentheses parsed from the last ')'.
    assert!(has(rt, "evil (rt) app (FIFO 98"), "{rt:#?}");
    assert!(has(rt, "audio) 1 2 (x 60"), "{rt:#?}");
    // Bound to CPU 0, which is not measured.
    assert!(!has(rt, "ktimersoftd/0"), "{rt:#?}");
    let irq = get(&checks, "irq_affinity");
    assert!(
        has(irq, "30 eth0-rx-0 (CPU 1, 48213 so far)") && !has(irq, "ttyS0"),
        "{irq:#?}"
    );
    assert!(has(get(&checks, "container"), "docker"));
    let cg = get(&checks, "rt_cgroup");
    assert!(
        has(
            cg,
            "this process's cpu cgroup /docker/0123456789ab has cpu.rt_runtime_us = 0"
        ),
        "{cg:#?}"
    );
    assert!(fix(cg).contains("--cpu-rt-runtime"));
    assert!(has(get(&checks, "virtualization"), "QEMU"));
    assert!(has(get(&checks, "swap"), "/dev/sda2"));
    assert!(has(get(&checks, "thp"), "enabled=always"));
    assert!(has(get(&checks, "smt"), "0-1"));

    let warnings = run_warnings(&checks);
    assert_eq!(warnings.len(), 21);
    assert!(warnings
        .iter()
        .any(|w| w.starts_with("RT throttling (invalidates results): ")));
    let hints = render_fix_hints(&checks);
    assert!(hints.contains("\n# sysctl -w kernel.sched_rt_runtime_us=-1\n"));
    assert!(hints.lines().all(|l| l.is_empty() || l.starts_with('#')));
    let text = render_text(&checks, false);
    assert!(text.contains("[FAIL] Clocksource"));
    assert!(
        text.ends_with("2 ok, 17 warn, 4 fail, 0 unknown\n"),
        "{text}"
    );
}

#[test]
fn empty_root_is_all_unknown_with_reasons() {
    for cpus in [&[][..], &[0][..], &[0, 5][..]] {
        let checks = doctor(&fixture("empty"), cpus);
        for c in &checks {
            assert_eq!(c.status, Status::Unknown, "{cpus:?}: {c:#?}");
            assert!(c.found.len() > 10, "{c:#?}");
        }
        assert_eq!(exit_code(&checks), 0);
        assert!(run_warnings(&checks).is_empty());
    }
    let f = collect_from(&fixture("empty"));
    assert_eq!(
        f,
        Fingerprint {
            preemption_model: "unknown".into(),
            ..Fingerprint::default()
        }
    );
}

#[test]
fn a_root_that_does_not_exist_is_all_unknown() {
    let root = SysRoot::at("/nonexistent/rtgauge-sysinfo-root");
    assert!(doctor(&root, &[])
        .iter()
        .all(|c| c.status == Status::Unknown));
}

#[test]
fn checks_and_fingerprints_round_trip_through_json() {
    let checks = doctor(&fixture("bad"), &[1]);
    let json = serde_json::to_string(&checks).expect("serialise");
    assert!(json.contains(r#""status":"fail""#) && json.contains(r#""status":"warn""#));
    let back: Vec<Check> = serde_json::from_str(&json).expect("parse");
    assert_eq!(back, checks);

    let f = collect_from(&fixture("preempt-rt"));
    let back: Fingerprint =
        serde_json::from_str(&serde_json::to_string(&f).expect("serialise")).expect("parse");
    assert_eq!(back, f);
    // A document written before the doctor fields existed still parses.
    let old: Fingerprint = serde_json::from_str(
        r#"{"hostname":"h","kernel_release":"6.1","preemption_model":"full","preempt_rt":false,
            "cpus_online":[0,1],"rt_runtime_us":950000,"virtualization":"vm"}"#,
    )
    .expect("old document");
    assert_eq!(old.hostname, "h");
    assert_eq!(old.smt_active, None);
    assert_eq!(old.governor, "");
}

// --- Edge cases on scratch roots -------------------------------------------------------

const X86: &str = "processor\t: 0\nvendor_id\t: GenuineIntel\nflags\t\t: fpu tsc constant_tsc\n";

#[test]
fn hpet_on_x86_warns_and_says_how_to_switch_or_why_tsc_is_missing() {
    let cs = "/sys/devices/system/clocksource/clocksource0";
    let (_d, root) = scratch(&[
        ("/proc/cpuinfo", X86),
        (&format!("{cs}/current_clocksource"), "hpet\n"),
        (&format!("{cs}/available_clocksource"), "tsc hpet acpi_pm\n"),
    ]);
    let c = doctor(&root, &[])
        .into_iter()
        .find(|c| c.id == "clocksource");
    let c = c.expect("clocksource");
    assert_eq!(c.status, Status::Warn);
    assert!(fix(&c).contains("echo tsc >"));

    let (_d, root) = scratch(&[
        ("/proc/cpuinfo", X86),
        (&format!("{cs}/current_clocksource"), "hpet\n"),
        (&format!("{cs}/available_clocksource"), "hpet acpi_pm\n"),
    ]);
    let checks = doctor(&root, &[]);
    let c = get(&checks, "clocksource");
    assert_eq!(c.status, Status::Warn);
    assert!(fix(c).contains("unstable"), "{c:#?}");
}

#[test]
fn arm_architected_timer_is_fine() {
    let cs = "/sys/devices/system/clocksource/clocksource0";
    let (_d, root) = scratch(&[
        (
            "/proc/cpuinfo",
            "processor\t: 0\nFeatures\t: fp asimd evtstrm\n",
        ),
        (&format!("{cs}/current_clocksource"), "arch_sys_counter\n"),
        (&format!("{cs}/available_clocksource"), "arch_sys_counter\n"),
    ]);
    assert_eq!(get(&doctor(&root, &[]), "clocksource").status, Status::Ok);
}

#[test]
fn throttling_budget_equal_to_period_never_throttles() {
    let (_d, root) = scratch(&[
        ("/proc/sys/kernel/sched_rt_runtime_us", "1000000\n"),
        ("/proc/sys/kernel/sched_rt_period_us", "1000000\n"),
    ]);
    assert_eq!(get(&doctor(&root, &[]), "rt_throttling").status, Status::Ok);
}

#[test]
fn with_debugfs_mounted_the_preempt_hint_writes_to_it_without_mounting() {
    let (_d, root) = scratch(&[
        ("/proc/sys/kernel/version", "#1 SMP PREEMPT_DYNAMIC\n"),
        (
            "/sys/kernel/debug/sched/preempt",
            "(none) voluntary full lazy\n",
        ),
    ]);
    let c = get(&doctor(&root, &[]), "preempt_rt").clone();
    assert!(
        fix(&c).contains("(or `echo full > /sys/kernel/debug/sched/preempt`)"),
        "{}",
        fix(&c)
    );
    assert!(!fix(&c).contains("mount -t debugfs"), "{}", fix(&c));
}

#[test]
fn dynamic_kernel_mode_from_debugfs() {
    let (_d, root) = scratch(&[
        ("/proc/sys/kernel/version", "#1 SMP PREEMPT_DYNAMIC\n"),
        ("/proc/cmdline", "quiet preempt=none\n"),
        (
            "/sys/kernel/debug/sched/preempt",
            "none voluntary (full) lazy\n",
        ),
    ]);
    let checks = doctor(&root, &[]);
    let c = get(&checks, "preempt_rt");
    assert_eq!(c.status, Status::Warn);
    // debugfs shows the mode in force and beats the boot parameter.
    assert!(has(c, "current mode full"), "{c:#?}");
    assert!(!fix(c).contains("preempt=full"));
    assert_eq!(collect_from(&root).preempt_dynamic_mode, "full");
}

#[test]
fn plain_preempt_and_unknown_models() {
    let (_d, root) = scratch(&[("/proc/sys/kernel/version", "#1 SMP PREEMPT Tue\n")]);
    assert_eq!(collect_from(&root).preemption_model, "full");
    let (_d, root) = scratch(&[("/proc/sys/kernel/version", "#1 SMP Tue\n")]);
    let checks = doctor(&root, &[]);
    let c = get(&checks, "preempt_rt");
    assert_eq!(c.status, Status::Warn);
    assert!(has(c, "none or voluntary"), "{c:#?}");
}

#[test]
fn kernel_without_high_res_timers_fails() {
    let (_d, root) = scratch(&[
        ("/proc/sys/kernel/osrelease", "6.1.0-x\n"),
        (
            "/boot/config-6.1.0-x",
            "# CONFIG_HIGH_RES_TIMERS is not set\nCONFIG_HZ=100\n",
        ),
    ]);
    let checks = doctor(&root, &[]);
    assert_eq!(get(&checks, "hres_timers").status, Status::Fail);
    assert_eq!(exit_code(&checks), 2);
}

#[test]
fn container_needs_more_than_a_lone_marker() {
    let (_d, root) = scratch(&[
        ("/.dockerenv", ""),
        ("/proc/1/cgroup", "0::/\n"),
        (
            "/proc/self/mountinfo",
            "1 0 8:1 / / rw - ext4 /dev/sda1 rw\n",
        ),
    ]);
    assert_eq!(
        get(&doctor(&root, &[]), "container").status,
        Status::Unknown
    );
    let (_d, root) = scratch(&[("/run/.containerenv", ""), ("/proc/1/cgroup", "0::/\n")]);
    let checks = doctor(&root, &[]);
    let c = get(&checks, "container");
    assert_eq!(c.status, Status::Warn);
    assert!(has(c, "podman"));
    let (_d, root) = scratch(&[("/proc/1/cgroup", "0::/init.scope\n")]);
    assert_eq!(get(&doctor(&root, &[]), "container").status, Status::Ok);
}

#[test]
fn low_rtprio_limit_names_the_ceiling() {
    let limits = "Limit Soft Hard Units\nMax locked memory         unlimited unlimited bytes\nMax realtime priority     50 50\n";
    let (_d, root) = scratch(&[
        (
            "/proc/self/status",
            "Uid:\t1000\t1000\t1000\t1000\nCapEff:\t0000000000000000\n",
        ),
        ("/proc/self/limits", limits),
    ]);
    let checks = doctor(&root, &[]);
    let c = get(&checks, "rtprio_permission");
    assert_eq!(c.status, Status::Warn);
    assert!(has(c, "priorities above 50 refused"), "{c:#?}");
    assert!(fix(c).contains("setcap cap_sys_nice,cap_ipc_lock+ep"));
    assert_eq!(get(&checks, "memlock_permission").status, Status::Ok);
}

#[test]
fn capabilities_without_root_are_enough() {
    // CAP_SYS_NICE (23) and CAP_IPC_LOCK (14): 0x804000.
    let (_d, root) = scratch(&[
        (
            "/proc/self/status",
            "Uid:\t1000\t1000\t1000\t1000\nCapEff:\t0000000000804000\n",
        ),
        (
            "/proc/self/limits",
            "Max locked memory 65536 65536 bytes\nMax realtime priority 0 0\n",
        ),
    ]);
    let checks = doctor(&root, &[]);
    assert_eq!(get(&checks, "rtprio_permission").status, Status::Ok);
    assert_eq!(get(&checks, "memlock_permission").status, Status::Ok);
}

// --- The live system ---------------------------------------------------------------------

fn live_read(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
}

/// On whatever machine runs the tests, the doctor completes, and where the machine plainly
/// is a non-RT, throttled, unisolated guest (like the development VM), it says so.
#[test]
fn live_system_verdicts_match_plain_facts() {
    let checks = doctor(&SysRoot::live(), &[]);
    let ids: Vec<&str> = checks.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, IDS);

    let version = live_read("/proc/sys/kernel/version").unwrap_or_default();
    let realtime = live_read("/sys/kernel/realtime");
    if version.contains("SMP") && realtime.is_none() && !version.contains("PREEMPT_RT") {
        let c = get(&checks, "preempt_rt");
        // The kernel config could still say PREEMPT_RT; only then may this be ok.
        assert!(
            c.status == Status::Warn || has(c, "CONFIG_PREEMPT_RT"),
            "{c:#?}"
        );
    }
    let runtime: Option<i64> =
        live_read("/proc/sys/kernel/sched_rt_runtime_us").and_then(|s| s.parse().ok());
    let period: Option<i64> =
        live_read("/proc/sys/kernel/sched_rt_period_us").and_then(|s| s.parse().ok());
    if let (Some(r), Some(p)) = (runtime, period) {
        if r > 0 && r < p {
            assert_eq!(get(&checks, "rt_throttling").status, Status::Warn);
        }
    }
    let hypervisor_flag = live_read("/proc/cpuinfo").is_some_and(|s| {
        s.lines()
            .any(|l| l.starts_with("flags") && l.split_whitespace().any(|w| w == "hypervisor"))
    });
    if hypervisor_flag {
        assert_eq!(get(&checks, "virtualization").status, Status::Warn);
    }
    if live_read("/sys/devices/system/cpu/isolated").as_deref() == Some("") {
        assert_eq!(get(&checks, "isolated_cpus").status, Status::Warn);
    }

    let f = collect();
    assert_eq!(f.kernel_version, version);
    if hypervisor_flag {
        assert!(!f.virtualization.is_empty());
    }
    assert!(!render_text(&checks, true).is_empty());
}

#[test]
fn measured_cpus_that_are_not_online_are_named() {
    let checks = doctor(&fixture("this-vm"), &[5]);
    for id in ["cstates", "isolated_cpus", "irq_affinity", "hres_timers"] {
        let c = get(&checks, id);
        assert_eq!(c.status, Status::Unknown, "{c:#?}");
        assert!(
            has(c, "measured CPU 5 is not online (online: 0-1)"),
            "{c:#?}"
        );
    }
}

/// RT group scheduling: the budget of the process's own cgroup and its ancestors.
#[test]
fn rt_cgroup_budget_of_the_group_and_its_ancestors() {
    let config = "CONFIG_RT_GROUP_SCHED=y\n";
    // cgroup v1: a group with a budget under a parent without one fails, naming the parent.
    let (_d, root) = scratch(&[
        ("proc/self/cgroup", "3:cpu,cpuacct:/a/b\n0::/\n"),
        ("boot/config-test", config),
        ("proc/sys/kernel/osrelease", "test\n"),
        ("sys/fs/cgroup/cpu/cpu.rt_runtime_us", "950000\n"),
        ("sys/fs/cgroup/cpu/a/cpu.rt_runtime_us", "0\n"),
        ("sys/fs/cgroup/cpu/a/b/cpu.rt_runtime_us", "100000\n"),
    ]);
    let c = doctor(&root, &[])
        .into_iter()
        .find(|c| c.id == "rt_cgroup")
        .unwrap();
    assert_eq!(c.status, Status::Fail, "{c:#?}");
    assert!(
        has(
            &c,
            "cpu cgroup /a, an ancestor of this process's group /a/b"
        ),
        "{c:#?}"
    );

    // A budget all the way up: ok, with the group's own budget and period.
    let (_d, root) = scratch(&[
        ("proc/self/cgroup", "3:cpu,cpuacct:/a/b\n0::/\n"),
        ("sys/fs/cgroup/cpu/cpu.rt_runtime_us", "950000\n"),
        ("sys/fs/cgroup/cpu/a/cpu.rt_runtime_us", "500000\n"),
        ("sys/fs/cgroup/cpu/a/b/cpu.rt_runtime_us", "100000\n"),
        ("sys/fs/cgroup/cpu/a/b/cpu.rt_period_us", "1000000\n"),
    ]);
    let c = doctor(&root, &[])
        .into_iter()
        .find(|c| c.id == "rt_cgroup")
        .unwrap();
    assert_eq!(c.status, Status::Ok, "{c:#?}");
    assert!(has(
        &c,
        "cpu cgroup /a/b (cgroup v1): RT budget 100000 µs of every 1000000 µs"
    ));

    // cgroup v2, a non-root group with the cpu controller, kernel with RT group scheduling:
    // the kernel refuses RT policies there.
    let v2 = |controllers: &str, config: &str| {
        scratch(&[
            ("proc/self/cgroup", "0::/user.slice/session-3.scope\n"),
            ("proc/sys/kernel/osrelease", "test\n"),
            ("boot/config-test", config),
            (
                "sys/fs/cgroup/user.slice/session-3.scope/cgroup.controllers",
                controllers,
            ),
        ])
    };
    let (_d, root) = v2("cpuset cpu io memory pids\n", config);
    let c = doctor(&root, &[])
        .into_iter()
        .find(|c| c.id == "rt_cgroup")
        .unwrap();
    assert_eq!(c.status, Status::Fail, "{c:#?}");
    assert!(fix(&c).contains("/sys/fs/cgroup/cgroup.procs"), "{c:#?}");
    // Without the cpu controller in that group, or without RT group scheduling: ok.
    let (_d, root) = v2("memory pids\n", config);
    let c = doctor(&root, &[])
        .into_iter()
        .find(|c| c.id == "rt_cgroup")
        .unwrap();
    assert_eq!(c.status, Status::Ok, "{c:#?}");
    let (_d, root) = v2("cpu memory\n", "# CONFIG_RT_GROUP_SCHED is not set\n");
    let c = doctor(&root, &[])
        .into_iter()
        .find(|c| c.id == "rt_cgroup")
        .unwrap();
    assert_eq!(c.status, Status::Ok, "{c:#?}");
    // Kernel config unknown: say so rather than guess.
    let (_d, root) = scratch(&[
        ("proc/self/cgroup", "0::/user.slice\n"),
        ("sys/fs/cgroup/user.slice/cgroup.controllers", "cpu\n"),
    ]);
    let c = doctor(&root, &[])
        .into_iter()
        .find(|c| c.id == "rt_cgroup")
        .unwrap();
    assert_eq!(c.status, Status::Unknown, "{c:#?}");
}

#[test]
fn the_doctor_judges_against_the_runs_priority_not_its_own_default() {
    let at = |priority| {
        doctor_with(
            &fixture("preempt-rt"),
            &DoctorSettings::for_cpus(&[2, 3]).at_priority(priority),
        )
    };
    // RLIMIT_RTPRIO 98: enough for the default 95, not for a run at 99.
    assert_eq!(get(&at(95), "rtprio_permission").status, Status::Ok);
    let checks = at(99);
    let c = get(&checks, "rtprio_permission");
    assert_eq!(c.status, Status::Warn, "{c:#?}");
    assert!(
        has(c, "priorities above 98 refused (rtgauge measures at 99)"),
        "{c:#?}"
    );
    // ktimers/2 runs at 1 on a measured CPU: harmless under a run at 95, a competitor of a
    // run at 1.
    assert_eq!(get(&at(95), "rt_tasks").status, Status::Ok);
    let checks = at(1);
    let c = get(&checks, "rt_tasks");
    assert_eq!(c.status, Status::Warn, "{c:#?}");
    assert!(has(c, "at or above priority 1: "), "{c:#?}");
    assert!(fix(c).contains("lower them below 1"), "{c:#?}");
}

/// Every line of the fix script is a comment: `## ` explanations, or `# ` followed by a
/// command that the shell accepts once the `# ` is removed.
#[test]
fn fix_script_commands_are_valid_shell_and_explanations_stay_comments() {
    let mut commands = Vec::new();
    for name in ["bad", "preempt-rt", "this-vm"] {
        for cpus in [vec![], vec![1], vec![2, 3]] {
            let script = render_fix_hints(&doctor(&fixture(name), &cpus));
            for line in script.lines().skip(1) {
                if line.is_empty() || line.starts_with("## ") {
                    continue;
                }
                let command = line
                    .strip_prefix("# ")
                    .unwrap_or_else(|| panic!("{name} {cpus:?}: not a comment: {line}"));
                commands.push(command.to_string());
            }
        }
    }
    commands.sort();
    commands.dedup();
    assert!(
        commands.iter().any(|c| c.starts_with("sysctl -w")),
        "{commands:#?}"
    );
    for command in &commands {
        let status = std::process::Command::new("sh")
            .args(["-n", "-c", command])
            .status()
            .expect("sh runs");
        assert!(status.success(), "not valid shell: {command}");
    }
}

#[test]
fn isolation_fix_leaves_out_nohz_full_on_a_kernel_built_without_it() {
    // this-vm's /proc/config.gz has no CONFIG_NO_HZ_FULL.
    let checks = doctor(&fixture("this-vm"), &[1]);
    assert!(has(get(&checks, "nohz_full"), "without CONFIG_NO_HZ_FULL"));
    let iso = fix(get(&checks, "isolated_cpus"));
    assert!(iso.contains("isolcpus=domain,managed_irq,1"), "{iso}");
    assert!(!iso.contains("nohz_full="), "{iso}");
    // A kernel built with it still gets it.
    let checks = doctor(&fixture("preempt-rt"), &[]);
    assert!(fix(get(&checks, "isolated_cpus")).contains("nohz_full="));
}
