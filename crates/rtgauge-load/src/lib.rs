//! Reproducible background loads run while rtgauge measures.
//!
//! A *load* is a defined background stress (see [`catalogue`]): every load runs in its own
//! worker processes, which are the measuring binary re-executed with `__load-worker` (see
//! [`worker_main`]), so one binary copied to a board carries everything. Workers run at
//! SCHED_OTHER (except `rt-memory`, which is the Arm et al. 2016 real-time load), each in its own
//! process group, and die with the measuring process: nothing survives a run, not even a
//! SIGKILL of the parent.
//!
//! ```no_run
//! use rtgauge_load::{LoadOptions, LoadSpec, RunningLoad};
//! let spec: LoadSpec = "cpu:2".parse()?;
//! let opts = LoadOptions::new(std::env::current_exe()?);
//! let load = RunningLoad::start(&spec, &opts)?; // workers are running when this returns
//! // ... warm up, measure ...
//! let report = load.stop(); // SIGTERM, SIGKILL, reaped, scratch removed
//! println!("{} achieved {:?} ops/s", report.name, report.operations_per_second);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod error;
mod kinds;
mod running;
mod scratch;
mod shared;
mod spec;
mod sys;
mod worker;

pub use error::LoadError;
pub use running::{LoadOptions, RunningLoad};
pub use scratch::cleanup_stale;
pub use spec::{catalogue, expand, parse_list, LoadInfo, LoadSpec, ACCEPTED_FORMS};
pub use worker::{worker_main, WORKER_ARG};

/// The report type lives with the result document (rtgauge-result), which must not depend on
/// the loads; re-exported so callers keep one import.
pub use rtgauge_result::{LoadMetric, LoadReport};

/// Environment variable set on every load process (and inherited by everything an `exec:` load
/// starts): its value is the pid of the measuring process. Lets tests and operators find
/// strays: `grep -l RTGAUGE_LOAD_OWNER= /proc/*/environ`.
pub const MARKER_ENV: &str = "RTGAUGE_LOAD_OWNER";

/// When set (by `rtgauge tune`, whose CPU isolation trial runs the loop in an isolated cpuset
/// and the rest of the machine elsewhere), a cgroup's `cgroup.procs` that every load worker
/// joins before it pins itself: the load belongs with the rest of the machine, not with the
/// loop it disturbs.
pub const LOAD_CGROUP_ENV: &str = "RTGAUGE_LOAD_CGROUP";
