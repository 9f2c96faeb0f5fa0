//! The kernel's view of a late wake-up.
//!
//! rtgauge measures how late a thread woke; this crate says why. It runs a tracefs session of
//! rtgauge's own ([`TraceSession`]: an instance `rtgauge-<pid>`, the `mono` clock, a bounded
//! overwriting ring buffer on the measured CPUs, the scheduler, IRQ, softirq, vector, hrtimer,
//! workqueue, IPI and NMI events the kernel has), reads the events of one CPU around a spike
//! ([`TraceSession::read_window`], parsed by [`parse_trace`]), and explains the spike
//! ([`attribute`], pure): timer IRQ latency vs thread latency as rtla timerlat splits them, what
//! ran in between with durations, gaps in which the CPU recorded nothing, and the dominant
//! cause. [`attribute_all`] and [`attribute_each`] explain many spikes from one trace in one
//! pass over it (the noise probe's stalls). [`chrome_trace`] writes attributed windows for
//! ui.perfetto.dev / chrome://tracing.
//!
//! # How the runner is meant to use it
//! ```no_run
//! use rtgauge_trace::{attribute_trace, remove_stale, AttributionConfig, Spike, TraceConfig, TraceSession};
//! # fn run() -> Result<(), rtgauge_trace::TraceError> {
//! let _ = remove_stale(); // instances left by a run killed with SIGKILL
//! let session = TraceSession::start(&TraceConfig::new(vec![1]))?; // before the probes start
//! // ... the probe thread (tid 4242 on CPU 1) records a sample 300 µs late ...
//! let spike = Spike { cpu: 1, programmed_ns: 1_000_000, woke_ns: 1_300_000, thread_pid: 4242 };
//! // On a helper thread (never the measuring one), margin 1 ms before the programmed time:
//! let traces = session.read_windows(1, &[(spike.programmed_ns - 1_000_000, spike.woke_ns)])?;
//! let why = attribute_trace(&spike, &traces[0], &AttributionConfig::default());
//! println!("{:?}", why.dominant_contributor());
//! drop(session); // removes the instance
//! # Ok(()) }
//! ```
//! On Linux 5.7 and later, windows are read while recording goes on (the instance's
//! `pause-on-trace` option is turned off); where the writer overtakes the reader, the kernel
//! marks the loss and windows that span it say their events were lost. On older kernels reading
//! stops the instance's recording for the time it takes (between 1.6 and 5 ms with the default
//! 128 KiB buffer, see docs/trace.md), and a spike during a stop cannot be explained (its window
//! is flagged `window_incomplete`). So the runner:
//! - hands (programmed, woke) of a late sample from the measuring thread to a helper thread
//!   off the measured CPUs (at SCHED_FIFO, so it is not preempted while recording is stopped)
//!   through a preallocated queue (`try_send`), never doing I/O in the hot loop;
//! - collects spikes for about 20 ms and reads them with one [`TraceSession::read_windows`];
//! - reads soon (the ring buffer keeps only the latest events: about a second of a busy CPU)
//!   and attributes a bounded number of spikes per run;
//! - calls [`remove_stale`] at start (and in `doctor`), and drops the session on every exit
//!   path, SIGINT/SIGTERM included (Drop removes the instance).
//!
//! Where tracing is impossible, [`TraceSession::start`] returns a [`TraceError`] whose message
//! is one line with the fix; the run goes on without attribution and records that line.

mod attribute;
mod chrome;
mod error;
mod parse;
mod session;
#[doc(hidden)]
pub mod testing;
mod timerlat;
mod tracefs;

pub use attribute::{
    attribute, attribute_all, attribute_each, attribute_trace, AttributionConfig, Spike,
    DEFAULT_GAP_THRESHOLD_NS,
};
pub use chrome::chrome_trace;
// The attributions are part of the result document, so their types live there (the document
// depends on no producer); re-exported so that the trace crate's users find them here too.
pub use error::TraceError;
pub use parse::{
    parse_line, parse_trace, parse_trace_with_losses, EventKind, Line, Task, TraceEvent,
};
pub use rtgauge_result::spike::{
    cause_kind, cause_name, dominant_causes, Attribution, Cause, CauseGroup, Contributor, Segment,
};
pub use session::{
    cpumask, instance_pid, remove_stale, remove_stale_in, rt_throttling_on, BufferFit, CpuTrace,
    TraceConfig, TraceSession, DEFAULT_BUFFER_SIZE_KB, INSTANCE_PREFIX, WANTED_EVENTS,
};
pub use timerlat::{
    parse_timerlat_line, timerlat_unavailable, TimerlatConfig, TimerlatContext, TimerlatSample,
    TimerlatSession, TIMERLAT, TIMERLAT_PERIOD_US,
};
pub use tracefs::{
    ensure_tracefs, lockdown_forbids_tracing, tracefs_in_mount_table, tracefs_state,
    tracefs_state_in, tracing_check, tracing_check_in, TracefsState, MOUNT_COMMAND, TRACEFS_PATHS,
};
