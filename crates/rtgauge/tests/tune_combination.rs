//! `rtgauge tune` measures the changes that helped together: with a task set throttled by the
//! small RT budget of its own cpu cgroup (cgroup v1, RT group scheduling), lifting the
//! system-wide budget (rt-throttling: `kernel.sched_rt_runtime_us` -1 turns RT bandwidth
//! control off, the groups' included) and raising the group's budget (rt-cgroup) each help
//! alone, so both are then measured together against the machine as it was, and the trials
//! document records that combination with its rounds.
//!
//! Root only. It holds the machine-wide kernel-settings lock /tmp/rtgauge-kernel.lock (flock)
//! like every test that changes kernel settings, and a guard removes the cgroup it made and
//! puts back what it planted even when it fails.

use serde_json::Value;
mod common;
use std::path::Path;

const RT_RUNTIME: &str = "/proc/sys/kernel/sched_rt_runtime_us";
const CPU_ROOT: &str = "/sys/fs/cgroup/cpu";
const GROUP: &str = "/sys/fs/cgroup/cpu/rtgauge-tune-combination";

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|t| t.trim().to_string())
}

/// The lock, the group made for the test, and the values to put back, undone when dropped.
struct Plant {
    _lock: common::KernelSettingsLock,
    originals: Vec<(String, String)>,
}

impl Plant {
    fn take() -> Plant {
        let lock = common::KernelSettingsLock::take();
        assert!(
            !Path::new("/run/rtgauge/tune-state.json").exists(),
            "a state file of an earlier tune is left: run `rtgauge tune --restore`"
        );
        let originals = [RT_RUNTIME, &format!("{CPU_ROOT}/cpu.rt_runtime_us")]
            .iter()
            .filter_map(|p| read(p).map(|v| (p.to_string(), v)))
            .collect();
        Plant {
            _lock: lock,
            originals,
        }
    }
}

impl Drop for Plant {
    fn drop(&mut self) {
        // The group first (its budget counts against its parent's), then the budgets.
        let _ = std::fs::remove_dir(GROUP);
        for _ in 0..2 {
            for (path, value) in self.originals.iter().rev() {
                let _ = std::fs::write(path, value);
            }
        }
    }
}

#[test]
fn two_changes_that_each_help_are_measured_together_and_recorded() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: needs root");
        return;
    }
    let root_budget = format!("{CPU_ROOT}/cpu.rt_runtime_us");
    if read(&root_budget).is_none() {
        eprintln!("skipped: no cgroup v1 cpu controller with RT group scheduling");
        return;
    }
    let plant = Plant::take();
    let (global, root) = (read(RT_RUNTIME).unwrap(), read(&root_budget).unwrap());
    let budget = |v: &str| v.parse::<i64>().unwrap_or(-1);
    if budget(&global) < 600_000 || budget(&root) < 600_000 {
        eprintln!("skipped: the RT budgets ({global}, root group {root}) are already below 60 %");
        return;
    }
    let _ = std::fs::remove_dir(GROUP);
    std::fs::create_dir(GROUP).unwrap();
    // 30 % of every second for the group's RT tasks: the task set needs half of its CPU.
    std::fs::write(format!("{GROUP}/cpu.rt_runtime_us"), "300000").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cpu = read("/sys/devices/system/cpu/online")
        .unwrap()
        .rsplit([',', '-'])
        .next()
        .unwrap()
        .to_string();
    let tasks = dir.path().join("tasks.toml");
    std::fs::write(
        &tasks,
        format!(
            "[[task]]\nname = \"servo\"\nperiod = \"10ms\"\nwork = \"5ms\"\npriority = 80\n\
             cpu = {cpu}\n"
        ),
    )
    .unwrap();
    let mut last = String::new();
    // Bounded retries: a round of this shared machine may be disturbed beyond the throttling.
    for attempt in 1..=2 {
        let out_file = dir.path().join(format!("trials-{attempt}.json"));
        // tune (and so every round) runs in the group: it joins it, then becomes rtgauge.
        let exe = assert_cmd::cargo::cargo_bin("rtgauge");
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!(
                "echo $$ > {GROUP}/cgroup.procs && exec \"$0\" tune --apply --tasks \"$1\" \
                 --only rt-throttling,rt-cgroup --rounds 3 --budget 36s -o \"$2\""
            ))
            .arg(&exe)
            .arg(&tasks)
            .arg(&out_file)
            .env("RTGAUGE_NO_STORE", "1")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        println!(
            "attempt {attempt}:\n{stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.status.code(), Some(0));
        // Everything tune changed is back.
        assert_eq!(read(RT_RUNTIME), Some(global.clone()));
        assert_eq!(read(&root_budget), Some(root.clone()));
        assert_eq!(
            read(&format!("{GROUP}/cpu.rt_runtime_us")).as_deref(),
            Some("300000")
        );
        let doc: Value = serde_json::from_slice(&std::fs::read(&out_file).unwrap()).unwrap();
        let verdicts: Vec<String> = doc["trials"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| format!("{} {}", t["name"], t["judgement"]["verdict"]))
            .collect();
        last = verdicts.join(", ");
        let better = verdicts
            .iter()
            .filter(|v| v.ends_with("\"better\""))
            .count();
        if better < 2 {
            // Not both better: then there must be no combination.
            assert!(doc.get("combination").is_none(), "{doc}");
            println!("attempt {attempt}: {last}");
            continue;
        }
        let c = &doc["combination"];
        assert_eq!(c["name"], "together", "{doc}");
        assert_eq!(c["change"], "rt-throttling + rt-cgroup");
        assert_eq!(c["before"].as_array().unwrap().len(), 3, "{c}");
        assert_eq!(c["after"].as_array().unwrap().len(), 3, "{c}");
        let writes: Vec<&str> = c["writes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w["path"].as_str().unwrap())
            .collect();
        assert!(writes.contains(&RT_RUNTIME), "{writes:?}");
        assert!(
            writes.contains(&format!("{GROUP}/cpu.rt_runtime_us").as_str()),
            "{writes:?}"
        );
        assert_eq!(c["judgement"]["verdict"], "better", "{c}");
        // Its rounds are run results on disk.
        for round in c["before"]
            .as_array()
            .unwrap()
            .iter()
            .chain(c["after"].as_array().unwrap())
        {
            assert!(
                Path::new(round["result"].as_str().unwrap()).is_file(),
                "{round}"
            );
        }
        // The table ranks it first and the verdict line counts both changes.
        assert!(stdout.contains("with 2 changes"), "{stdout}");
        let first = stdout.lines().find(|l| l.starts_with("1   ")).unwrap_or("");
        assert!(first.contains("together"), "{stdout}");
        drop(plant);
        assert!(!Path::new(GROUP).exists(), "the group is removed");
        return;
    }
    panic!("rt-throttling and rt-cgroup were not both better in 2 attempts: {last}");
}
