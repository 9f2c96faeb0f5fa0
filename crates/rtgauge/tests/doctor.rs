//! `rtgauge doctor` through the binary. The verdicts themselves are unit-tested
//! against /proc and /sys fixtures in rtgauge-sysinfo; here: the command, its JSON, its exit
//! status, and what it says about this kind of machine.

mod common;
use common::{read_json, rtgauge, scratch_result};
use serde_json::Value;

fn doctor(args: &[&str]) -> (Option<i32>, String) {
    let out = rtgauge().arg("doctor").args(args).output().unwrap();
    (out.status.code(), String::from_utf8(out.stdout).unwrap())
}

#[test]
fn doctor_json_has_every_check_with_status_and_fix() {
    let (code, stdout) = doctor(&["--json"]);
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    let checks = doc["checks"].as_array().unwrap();
    let failed = checks.iter().any(|c| c["status"] == "fail");
    // 2 exactly when a check fails, so doctor can gate a CI stage.
    assert_eq!(code, Some(if failed { 2 } else { 0 }));
    for id in [
        "preempt_rt",
        "rt_throttling",
        "clocksource",
        "cstates",
        "isolated_cpus",
        "irq_affinity",
        "rt_tasks",
        "virtualization",
        "mitigations",
    ] {
        let c = checks
            .iter()
            .find(|c| c["id"] == id)
            .unwrap_or_else(|| panic!("no check {id}"));
        assert!(["ok", "warn", "fail", "unknown"].contains(&c["status"].as_str().unwrap()));
        assert!(
            !c["found"].as_str().unwrap().is_empty(),
            "{id} says nothing"
        );
        if c["status"] == "warn" || c["status"] == "fail" {
            assert!(
                c["fix"].as_str().is_some_and(|f| !f.is_empty()),
                "{id} has no fix"
            );
        }
    }
    assert!(doc["fingerprint"]["kernel_release"].is_string());
}

/// On a machine like the one this project is built on (a VM, stock kernel, throttling on,
/// nothing isolated) doctor must name each of those with its fix.
#[test]
fn doctor_names_what_limits_this_machine() {
    let (_, stdout) = doctor(&["--json"]);
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    let check = |id: &str| {
        doc["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == id)
            .unwrap()
            .clone()
    };
    let realtime = std::fs::read_to_string("/sys/kernel/realtime").unwrap_or_default();
    if realtime.trim() != "1" {
        assert_eq!(check("preempt_rt")["status"], "warn");
        assert!(check("preempt_rt")["fix"]
            .as_str()
            .unwrap()
            .contains("linux-image-rt"));
    }
    let runtime =
        std::fs::read_to_string("/proc/sys/kernel/sched_rt_runtime_us").unwrap_or_default();
    if runtime.trim().parse::<i64>().is_ok_and(|r| r > 0) {
        assert_eq!(check("rt_throttling")["status"], "warn");
        assert!(check("rt_throttling")["fix"]
            .as_str()
            .unwrap()
            .contains("sched_rt_runtime_us=-1"));
    }
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    if cpuinfo.contains(" hypervisor") {
        assert_eq!(check("virtualization")["status"], "warn");
    }
    let isolated = std::fs::read_to_string("/sys/devices/system/cpu/isolated").unwrap_or_default();
    if isolated.trim().is_empty() {
        assert_eq!(check("isolated_cpus")["status"], "warn");
        assert!(check("isolated_cpus")["fix"]
            .as_str()
            .unwrap()
            .contains("isolcpus="));
    }
}

#[test]
fn doctor_text_and_fix_hints_change_nothing() {
    let (_, text) = doctor(&[]);
    assert!(
        text.contains("RT throttling") && text.contains("Clocksource"),
        "{text}"
    );
    let (_, hints) = doctor(&["--fix-hint"]);
    // Hints are printed as comments, never as commands that would run if piped to sh.
    for line in hints.lines().filter(|l| !l.trim().is_empty()) {
        assert!(line.trim_start().starts_with('#'), "not a comment: {line}");
    }
}

#[test]
fn run_results_carry_the_doctor_verdicts() {
    let (_dir, out) = scratch_result();
    rtgauge()
        .args([
            "run", "cyclic", "--mode", "normal", "-d", "200ms", "--warmup", "50ms", "-q", "-o",
        ])
        .arg(&out)
        .assert()
        .success();
    let r = read_json(&out);
    let checks = r["checks"].as_array().unwrap();
    assert!(checks.iter().any(|c| c["id"] == "preempt_rt"));
    // Every non-ok verdict is also a warning of the run, coded by the check id.
    for c in checks
        .iter()
        .filter(|c| c["status"] == "warn" || c["status"] == "fail")
    {
        assert!(
            r["warnings"]
                .as_array()
                .unwrap()
                .iter()
                .any(|w| w["code"] == c["id"]),
            "{}",
            c["id"]
        );
    }
}

#[test]
fn doctor_priority_flag_judges_competing_tasks_at_that_priority() {
    let rt_tasks_found = |priority: &str| {
        let (_, stdout) = doctor(&["--json", "--priority", priority]);
        let doc: Value = serde_json::from_str(&stdout).unwrap();
        doc["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == "rt_tasks")
            .expect("rt_tasks check")["found"]
            .as_str()
            .unwrap()
            .to_string()
    };
    for priority in ["1", "60", "95"] {
        let found = rt_tasks_found(priority);
        assert!(
            found.contains(&format!("at or above priority {priority}")),
            "--priority {priority}: {found}"
        );
    }
    let out = rtgauge()
        .args(["doctor", "--priority", "0"])
        .output()
        .unwrap();
    assert!(!out.status.success(), "priority 0 is refused");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("between 1 and 99"), "{err}");
}

/// With --cpus, doctor prints the preemption map of those CPUs: the platform's rules, then
/// every thread and interrupt that may run ahead of a real-time task there, the tick among
/// them; with --json, the same lines under `preemption_map`. Without --cpus, no map.
#[test]
fn doctor_prints_the_preemption_map_of_the_cpus_asked_for() {
    let cpu = *rtgauge_sysinfo::online_cpus().last().unwrap();
    let (_, text) = doctor(&["--cpus", &cpu.to_string()]);
    let map = text
        .split_once("preemption map")
        .unwrap_or_else(|| panic!("no preemption map: {text}"))
        .1;
    assert!(map.contains(&format!("CPU {cpu}:")), "{map}");
    assert!(map.contains("RT throttling"), "{map}");
    assert!(map.contains("fair server"), "{map}");
    assert!(map.contains("tick (tick, above every thread"), "{map}");
    let (_, json) = doctor(&["--json", "--cpus", &cpu.to_string()]);
    let doc: Value = serde_json::from_str(&json).unwrap();
    let lines = doc["preemption_map"][cpu.to_string()].as_array().unwrap();
    assert_eq!(lines[0], format!("CPU {cpu}:"));
    let (_, all) = doctor(&[]);
    assert!(!all.contains("preemption map"), "{all}");
}
