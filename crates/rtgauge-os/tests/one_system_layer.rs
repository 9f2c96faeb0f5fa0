//! CPU lists, affinity, the monotonic clock, scheduling policies and priorities, memory locking,
//! timer slack and resource limits are reached through this crate alone: no other crate's
//! library code calls libc for them or parses a CPU list itself.

use std::path::{Path, PathBuf};

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn only_the_system_layer_calls_the_kernel_for_cpus_affinity_clocks_and_priorities() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let calls = [
        "sched_setaffinity",
        "sched_getaffinity",
        "clock_gettime(libc::CLOCK_MONOTONIC",
        "libc::pthread_setschedparam",
        "libc::sched_setscheduler",
        "libc::mlockall",
        "libc::munlockall",
        "libc::PR_SET_TIMERSLACK",
        "libc::PR_GET_TIMERSLACK",
        "libc::getrlimit",
        "libc::PR_GET_TSC",
        "devices/system/cpu/online",
        "fn parse_cpu_list",
        "fn format_cpu_list",
        "fn online_cpus",
    ];
    let mut files = Vec::new();
    for entry in std::fs::read_dir(crates).unwrap().flatten() {
        let src = entry.path().join("src");
        if entry.file_name() != "rtgauge-os" && src.is_dir() {
            sources(&src, &mut files);
        }
    }
    assert!(files.len() > 50, "only {} source files found", files.len());
    // No exceptions: a probe that times one of these calls reaches it through an inlined
    // wrapper of rtgauge-os (see `sched::set_own_sched_param`).
    let mut found = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for call in calls.iter().filter(|c| text.contains(*c)) {
            found.push(format!("{}: {call}", file.display()));
        }
    }
    assert!(
        found.is_empty(),
        "call these through rtgauge-os instead:\n{}",
        found.join("\n")
    );
}
