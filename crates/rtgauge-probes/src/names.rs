//! The names of the built-in probes: each probe's identity in plans, suites, `--set` keys and
//! result documents (`ProbeRun::probe`), defined once, here.
//!
//! Each probe's `About` takes its name from this module. Code outside this crate that must
//! name a probe (the binary's commands for one probe, the importers that write a probe's runs)
//! uses these constants; renderers and the result document never name a probe: they ask the
//! registered probe (its `SummaryRows`) or read what the document carries.
//! `tests/probe_names.rs` refuses probe-name strings anywhere else in the workspace.
//!
//! A new probe needs no line here unless code outside this crate must name it: its file can
//! name it in its `About`.

/// Periodic wake-up latency and period jitter.
pub const CYCLIC: &str = "cyclic";
/// Latency from an event to the real-time handler waiting for it.
pub const RESPONSE: &str = "response";
/// Context-switch time between two threads.
pub const SWITCH: &str = "switch";
/// Execution time of one call of a synchronisation or communication primitive.
pub const PRIMITIVE: &str = "primitive";
/// Allocation and free time.
pub const ALLOC: &str = "alloc";
/// Memory operation (copy, set) time.
pub const MEMOP: &str = "memop";
/// Clock read cost, resolution and monotonicity.
pub const CLOCK: &str = "clock";
/// I/O port read and write time.
pub const IOPORT: &str = "ioport";
/// Gaps in a CPU's execution.
pub const NOISE: &str = "noise";
/// The kernel's own timer latency (the timerlat tracer).
pub const TIMERLAT: &str = "timerlat";
/// An application's own instrumentation points.
pub const APP: &str = "app";
/// The user's periodic task set.
pub const TASKSET: &str = "taskset";
/// This clock's offset from its synchronisation references.
pub const CLOCKSYNC: &str = "clocksync";

/// Whether `probe` (as given on a command line: `NAME` or `NAME@VARIANT`) selects the probe
/// called `name`.
pub fn selects(probe: &str, name: &str) -> bool {
    probe
        .strip_prefix(name)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('@'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_probe_is_selected_by_its_name_or_a_variant_of_it() {
        assert!(selects("taskset", TASKSET));
        assert!(selects("taskset@two", TASKSET));
        assert!(!selects("tasksets", TASKSET));
        assert!(!selects("app", TASKSET));
    }
}
