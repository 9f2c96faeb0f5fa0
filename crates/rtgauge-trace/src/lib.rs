//! The kernel's view of a late wake-up.
//!
//! rtgauge measures how late a thread woke; this crate says why. It runs a tracefs session of
//! rtgauge's own ([`TraceSession`]: an instance `rtgauge-<pid>`, the `mono` clock, a bounded
//! overwriting ring buffer on the measured CPUs, the scheduler, IRQ, softirq, vector, hrtimer,
//! workqueue, IPI and NMI events the kernel has), reads the events of one CPU around a spike
//! ([`TraceSession::read_window`], parsed by [`parse_trace`]), and explains the spike
//! ([`attribute`], pure): timer IRQ latency vs thread latency as rtla timerlat splits them, what
//! ran in between with durations, gaps in which the CPU recorded nothing, and the dominant
//! cause. [`chrome_trace`] writes attributed windows for ui.perfetto.dev / chrome://tracing.
//!
//! # How the runner is meant to use it
//! ```no_run
//! use rtgauge_trace::{attribute, remove_stale, AttributionConfig, Spike, TraceConfig, TraceSession};
//! # fn run() -> Result<(), rtgauge_trace::TraceError> {
//! let _ = remove_stale(); // instances left by a run killed with SIGKILL
//! let session = TraceSession::start(&TraceConfig::new(vec![1]))?; // before the probes start
//! // ... the probe thread (tid 4242 on CPU 1) records a sample 300 µs late ...
//! let spike = Spike { cpu: 1, programmed_ns: 1_000_000, woke_ns: 1_300_000, thread_pid: 4242 };
//! // Read on a helper thread (never the measuring one), margin 1 ms before the programmed time:
//! let trace = session.read_window(1, spike.programmed_ns - 1_000_000, spike.woke_ns)?;
//! let why = attribute(&spike, &trace.events, trace.events_lost, &AttributionConfig::default());
//! println!("{:?}", why.dominant_contributor());
//! drop(session); // removes the instance
//! # Ok(()) }
//! ```
//! Reading stops the instance's recording for the time it takes (see docs/trace.md), so the
//! runner reads only for the spikes it attributes, from a thread off the measured CPUs, and
//! should read soon after the spike: the ring buffer keeps only the latest events.

mod attribute;
mod chrome;
mod error;
mod parse;
mod session;
#[doc(hidden)]
pub mod testing;

pub use attribute::{
    attribute, Attribution, AttributionConfig, Cause, Contributor, Segment, Spike,
    DEFAULT_GAP_THRESHOLD_NS,
};
pub use chrome::{cause_name, chrome_trace};
pub use error::TraceError;
pub use parse::{parse_line, parse_trace, EventKind, Line, Task, TraceEvent};
pub use session::{
    cpumask, instance_pid, lockdown_forbids_tracing, remove_stale, remove_stale_in,
    tracefs_in_mount_table, CpuTrace, TraceConfig, TraceSession, DEFAULT_BUFFER_SIZE_KB,
    INSTANCE_PREFIX, TRACEFS_PATHS, WANTED_EVENTS,
};
