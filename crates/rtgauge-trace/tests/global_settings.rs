//! The user's global tracing settings are byte-for-byte unchanged by a trace session. A test
//! program of its own, so that no other test's session runs while the settings are compared.
//! Needs root and tracefs; without them it prints why and passes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rtgauge_trace::testing::{last_cpu, now_ns, periodic_sleeper, session_or_skip};
use rtgauge_trace::{tracefs_in_mount_table, TraceConfig, TraceSession};

/// The mounted tracefs, without starting a session unless tracefs must first be mounted.
fn tracefs() -> Option<PathBuf> {
    let mounted = || tracefs_in_mount_table(&std::fs::read_to_string("/proc/self/mounts").ok()?);
    match mounted() {
        // Not root: the mount table is readable, but there is nothing to test.
        // SAFETY: geteuid has no arguments and cannot fail.
        Some(path) if unsafe { libc::geteuid() } == 0 => Some(path),
        _ => session_or_skip(vec![last_cpu()]).and_then(|_| mounted()),
    }
}

/// The top-level tracefs files a session could conceivably affect.
const GLOBAL_FILES: &[&str] = &[
    "current_tracer",
    "trace_clock",
    "tracing_on",
    "buffer_size_kb",
    "buffer_total_size_kb",
    "set_event",
    "set_event_pid",
    "tracing_cpumask",
    "trace_options",
    "tracing_thresh",
    "saved_cmdlines_size",
    "buffer_percent",
    "options/overwrite",
    "options/pause-on-trace",
    "events/enable",
    "events/sched/enable",
    "events/sched/sched_switch/enable",
    "events/sched/sched_switch/filter",
    "events/irq/enable",
    "events/irq_vectors/enable",
    "events/timer/hrtimer_expire_entry/enable",
    "per_cpu/cpu0/buffer_size_kb",
];

fn snapshot(tracefs: &Path) -> BTreeMap<&'static str, String> {
    GLOBAL_FILES
        .iter()
        .filter_map(|f| {
            // The files are ASCII: as text, a difference reads well.
            let bytes = std::fs::read(tracefs.join(f)).ok()?;
            Some((*f, String::from_utf8_lossy(&bytes).into_owned()))
        })
        .collect()
}

#[test]
fn global_tracing_settings_are_byte_for_byte_unchanged_by_a_session() {
    let Some(tracefs) = tracefs() else { return };
    let cpu = last_cpu();
    let before = snapshot(&tracefs);
    assert!(before.len() >= 15, "the files exist: {:?}", before.keys());
    {
        let session = TraceSession::start(&TraceConfig::new(vec![cpu])).unwrap();
        periodic_sleeper(1_000_000, 20, u64::MAX, |_| {});
        session.read_window(cpu, 0, now_ns()).unwrap();
        session.clear().unwrap();
    }
    assert_eq!(snapshot(&tracefs), before);
}
