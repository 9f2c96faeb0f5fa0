//! Every load starts for real, achieves a non-zero rate over a short run, reports it, and
//! leaves nothing behind when stopped.

mod common;

use std::time::Duration;

use common::{options, processes_in_groups, scratch_dirs};
use rtgauge_load::{catalogue, LoadError, LoadReport, LoadSpec, RunningLoad};

/// How long each load runs in these tests: long enough for a rate, short for a 2-core CI.
const RUN: Duration = Duration::from_millis(600);

/// Starts `spec`, lets it run, stops it, and checks the hygiene every load shares.
fn run(spec: &str) -> Result<LoadReport, LoadError> {
    run_for(spec, RUN)
}

fn run_for(spec: &str, duration: Duration) -> Result<LoadReport, LoadError> {
    let root = tempfile::tempdir().expect("temp dir");
    let spec: LoadSpec = spec.parse()?;
    let load = RunningLoad::start(&spec, &options(root.path()))?;
    let groups = load.pids();
    assert!(!groups.is_empty(), "{spec}: no worker started");
    // Running when start returns: every worker is alive right now.
    assert!(processes_in_groups(&groups).len() >= groups.len(), "{spec}");
    std::thread::sleep(duration);
    let report = load.stop();
    // stop() reaps the workers and kills their groups before it returns.
    assert_eq!(
        processes_in_groups(&groups),
        Vec::<String>::new(),
        "{spec}: left processes"
    );
    assert_eq!(
        scratch_dirs(root.path()),
        Vec::<String>::new(),
        "{spec}: left scratch"
    );
    assert!(report.started, "{spec}");
    assert!(
        report.duration_ns >= duration.as_nanos() as u64,
        "{spec}: {report:?}"
    );
    assert_eq!(report.error, None, "{spec}");
    assert!(!report.metrics.is_empty(), "{spec}");
    println!(
        "{}: {:?} {:?}, {:?} B/s, warnings {:?}",
        report.name,
        report.operations_per_second,
        report.unit,
        report.bytes_per_second,
        report.warnings
    );
    Ok(report)
}

fn metric(report: &LoadReport, name: &str) -> u64 {
    report
        .metrics
        .iter()
        .find(|m| m.name == name)
        .unwrap_or_else(|| panic!("no metric `{name}` in {report:?}"))
        .total
}

fn assert_ops(report: &LoadReport) {
    let ops = report.operations_per_second.expect("an operation rate");
    assert!(ops > 0.0, "{report:?}");
    assert!(report.unit.is_some(), "{report:?}");
    assert_eq!(report.policy, "SCHED_OTHER", "{report:?}");
}

fn available(name: &str) -> Result<(), String> {
    catalogue()
        .into_iter()
        .find(|l| l.name == name)
        .expect("in the catalogue")
        .available
}

#[test]
fn cpu_defaults_to_one_worker_per_cpu() {
    let report = run("cpu").unwrap();
    assert_ops(&report);
    let online = std::thread::available_parallelism().unwrap().get();
    assert_eq!(report.processes as usize, online);
    assert_eq!(report.cpus.len(), online);
}

#[test]
fn syscall_load_makes_system_calls() {
    let report = run("syscall:1").unwrap();
    assert_ops(&report);
    assert_eq!(report.cpus.len(), 1, "one pinned worker");
}

#[test]
fn memory_load_copies_and_writes() {
    let report = run("memory:1").unwrap();
    assert_ops(&report);
    assert!(metric(&report, "copied") > 0);
    assert!(metric(&report, "written") > 0, "{report:?}");
    assert!(report.bytes_per_second.unwrap() > 0.0);
}

#[test]
fn messaging_load_passes_messages() {
    let report = run("messaging:1").unwrap();
    assert_ops(&report);
    assert!(metric(&report, "transferred") > 0);
}

#[test]
fn io_load_writes_syncs_and_walks() {
    let report = run("io:1").unwrap();
    assert_ops(&report);
    assert!(metric(&report, "written") > 0);
    assert!(metric(&report, "fsyncs") > 0);
    assert!(metric(&report, "entries walked") > 0);
}

#[test]
fn net_load_floods_loopback() {
    let report = run("net:1").unwrap();
    assert_ops(&report);
    assert!(metric(&report, "udp datagrams received") > 0);
    let icmp = catalogue()
        .into_iter()
        .find(|l| l.name == "net")
        .unwrap()
        .note;
    match icmp {
        None => assert!(metric(&report, "icmp echo replies") > 0, "{report:?}"),
        Some(reason) => {
            println!("skipping the ICMP check: {reason}");
            assert!(
                report
                    .warnings
                    .iter()
                    .any(|w| w.contains("ICMP echo flood skipped")),
                "the reason must be reported: {report:?}"
            );
        }
    }
}

#[test]
fn compile_load_compiles_or_says_why_not() {
    match available("compile") {
        Ok(()) => {
            // One compilation takes a few tenths of a second alone, and seconds on a 2-core
            // machine that other tests load at the same time.
            let report = run_for("compile:1", Duration::from_millis(2500)).unwrap();
            assert_ops(&report);
        }
        Err(reason) => {
            println!("skipping compile: {reason}");
            let err = run("compile:1").unwrap_err();
            assert!(matches!(err, LoadError::Unavailable { .. }), "{err}");
            assert!(err.to_string().contains("compiler"), "{err}");
        }
    }
}

#[test]
fn rt_memory_runs_fifo_below_the_measuring_priority_or_says_why_not() {
    match available("rt-memory") {
        Ok(()) => {
            let report = run("rt-memory:1").unwrap();
            assert!(report.operations_per_second.unwrap() > 0.0, "{report:?}");
            assert_eq!(report.policy, "SCHED_FIFO 94");
        }
        Err(reason) => {
            println!("skipping rt-memory: {reason}");
            let err = run("rt-memory:1").unwrap_err();
            assert!(matches!(err, LoadError::RtNotPermitted { .. }), "{err}");
            assert!(err.to_string().contains("CAP_SYS_NICE"), "{err}");
        }
    }
}

#[test]
fn exec_load_runs_and_restarts_a_command() {
    let report = run("exec:sleep 0.15").unwrap();
    assert!(report.restarts.unwrap() >= 1, "{report:?}");
    assert!(metric(&report, "runtime") > 0);
    assert_eq!(report.operations_per_second, None);
    let report = run("exec:sleep 30 & sleep 30").unwrap();
    assert_eq!(report.restarts, Some(0), "{report:?}");
}

#[test]
fn exec_of_a_broken_command_fails_at_start_with_the_reason() {
    let err = run("exec:/nonexistent/command").unwrap_err();
    assert!(err.to_string().contains("status 127"), "{err}");
    assert!(!err.to_string().contains('\n'));
}

#[test]
fn a_mix_runs_its_parts_together() {
    let report = run("cpu:1+net:1").unwrap();
    assert!(metric(&report, "cpu: iterations") > 0);
    assert!(metric(&report, "net: udp datagrams sent") > 0);
    assert_eq!(report.processes, 2);
}

#[test]
fn none_starts_nothing() {
    let root = tempfile::tempdir().unwrap();
    let load = RunningLoad::start(&LoadSpec::none(), &options(root.path())).unwrap();
    assert!(load.pids().is_empty());
    let report = load.stop();
    assert_eq!(report.name, "none");
    assert!(report.started);
    assert_eq!(report.operations_per_second, None);
}

#[test]
fn a_load_is_running_as_soon_as_start_returns() {
    let root = tempfile::tempdir().unwrap();
    let load = RunningLoad::start(&"cpu:1".parse().unwrap(), &options(root.path())).unwrap();
    // Short, but several scheduler periods even on a busy 2-core machine.
    std::thread::sleep(Duration::from_millis(250));
    let report = load.stop();
    assert!(report.operations_per_second.unwrap() > 0.0, "{report:?}");
}

#[test]
fn dropping_a_running_load_stops_it() {
    let root = tempfile::tempdir().unwrap();
    let load = RunningLoad::start(&"messaging:1".parse().unwrap(), &options(root.path())).unwrap();
    let groups = load.pids();
    drop(load);
    assert_eq!(processes_in_groups(&groups), Vec::<String>::new());
}

#[test]
fn loads_outlive_the_thread_that_started_them() {
    // The parent-death signal fires when the spawning *thread* exits; the workers must tell
    // that from the death of the measuring process and keep running.
    let root = tempfile::tempdir().unwrap();
    let opts = options(root.path());
    let load = std::thread::spawn(move || RunningLoad::start(&"cpu:1".parse().unwrap(), &opts))
        .join()
        .unwrap()
        .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let groups = load.pids();
    assert_eq!(
        processes_in_groups(&groups).len(),
        groups.len(),
        "workers died with the thread"
    );
    let report = load.stop();
    assert_eq!(report.error, None);
    assert!(report.operations_per_second.unwrap() > 0.0);
}

#[test]
fn a_disk_cap_too_small_is_refused_with_a_fix() {
    let root = tempfile::tempdir().unwrap();
    let mut opts = options(root.path());
    opts.disk_cap_bytes = 1024;
    let err = RunningLoad::start(&"io:1".parse().unwrap(), &opts).unwrap_err();
    assert!(err.to_string().contains("raise the disk cap"), "{err}");
    let err = RunningLoad::start(&"all".parse().unwrap(), &opts).unwrap_err();
    assert!(err.to_string().contains("expand"), "{err}");
}

#[test]
fn bad_options_are_refused_with_a_fix() {
    let root = tempfile::tempdir().unwrap();
    let mut opts = options(root.path());
    opts.cpus = vec![100_000];
    let err = RunningLoad::start(&"cpu".parse().unwrap(), &opts).unwrap_err();
    assert!(err.to_string().contains("not online"), "{err}");
    let mut opts = options(root.path());
    opts.exe = "/nonexistent/rtgauge".into();
    let err = RunningLoad::start(&"cpu".parse().unwrap(), &opts).unwrap_err();
    assert!(err.to_string().contains("LoadOptions::exe"), "{err}");
    let mut opts = options(root.path());
    opts.rt_priority_below = 1;
    let err = RunningLoad::start(&"rt-memory".parse().unwrap(), &opts).unwrap_err();
    assert!(err.to_string().contains("priority"), "{err}");
}

/// As root, the unprivileged paths are checked by dropping to `nobody`: rt-memory must fail
/// with the fix, and the net load must run its UDP flood and say why ICMP was skipped.
#[test]
fn without_privileges_rt_memory_and_icmp_say_why() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        println!(
            "skipping: needs root to drop to nobody (the unprivileged case is then this user)"
        );
        return;
    }
    let setpriv = |args: &[&str]| {
        let root = tempfile::tempdir().unwrap();
        std::fs::set_permissions(
            root.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o777),
        )
        .unwrap();
        std::process::Command::new("setpriv")
            .args([
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                "--inh-caps=-all",
            ])
            .arg(common::exe())
            .arg("run")
            .args(args)
            .arg(root.path())
            .output()
    };
    let Ok(out) = setpriv(&["0.3", "rt-memory:1"]) else {
        println!("skipping: setpriv is not installed");
        return;
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("Permission denied") && stderr.contains("exec") {
        println!("skipping: nobody cannot execute the test binary here: {stderr}");
        return;
    }
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("SCHED_FIFO") && stderr.contains("CAP_SYS_NICE"),
        "{stderr}"
    );

    let out = setpriv(&["0.3", "net:1"]).unwrap();
    let report: LoadReport = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    assert!(report.operations_per_second.unwrap() > 0.0, "{report:?}");
    let ping_allowed = std::fs::read_to_string("/proc/sys/net/ipv4/ping_group_range")
        .map(|r| {
            let v: Vec<u64> = r
                .split_whitespace()
                .filter_map(|s| s.parse().ok())
                .collect();
            v.len() == 2 && v[0] <= 65534 && 65534 <= v[1]
        })
        .unwrap_or(false);
    if !ping_allowed {
        assert!(
            report
                .warnings
                .iter()
                .any(|w| w.contains("ICMP echo flood skipped") && w.contains("CAP_NET_RAW")),
            "{report:?}"
        );
    }
}
