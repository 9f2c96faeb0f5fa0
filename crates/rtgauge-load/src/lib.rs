//! Reproducible background loads run while rtgauge measures.
//!
//! A *load* is a defined background stress (see [`catalogue`]): every load runs in its own
//! worker processes, which are the measuring binary re-executed with `__load-worker` (see
//! [`worker_main`]), so one binary copied to a board carries everything. Workers run at
//! SCHED_OTHER (except `rt-memory`, which is the seed 000 real-time load), each in its own
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

use serde::{Deserialize, Serialize};

/// Environment variable set on every load process (and inherited by everything an `exec:` load
/// starts): its value is the pid of the measuring process. Lets tests and operators find
/// strays: `grep -l RTGAUGE_LOAD_OWNER= /proc/*/environ`.
pub const MARKER_ENV: &str = "RTGAUGE_LOAD_OWNER";

/// What a load achieved while it ran, stored in the result document.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct LoadReport {
    /// The load as the user named it (`cpu`, `exec:hackbench`, ...).
    pub name: String,
    pub started: bool,
    /// Why the load could not start or failed, when it did.
    pub error: Option<String>,
    pub duration_ns: u64,
    /// Rate of the load's main operation (see `unit`); none for `exec:` loads and mixes.
    pub operations_per_second: Option<f64>,
    /// Bytes moved per second (copied, written, sent), when the load moves data.
    pub bytes_per_second: Option<f64>,
    /// What one operation is (`loop iterations`, `system calls`, `messages`, ...).
    pub unit: Option<String>,
    /// CPUs the load's processes were allowed to run on.
    pub cpus: Vec<usize>,
    /// Worker processes started (children of workers, like hackbench-style senders, not
    /// counted).
    pub processes: u32,
    /// Scheduling of the load: `SCHED_OTHER`, or `SCHED_FIFO <prio>` for `rt-memory`.
    pub policy: String,
    /// Every counter the load keeps, with its achieved rate.
    pub metrics: Vec<LoadMetric>,
    /// For `exec:` loads: how often the command exited early and was restarted.
    pub restarts: Option<u64>,
    /// Parts of the load that could not run, with the reason (e.g. the ICMP flood without raw
    /// sockets), while the rest of the load ran.
    pub warnings: Vec<String>,
}

impl LoadReport {
    /// The report of a load that could not start, for the result document: the run goes on
    /// (or fails) as the user chose, and the reason stays on record.
    pub fn not_started(name: impl Into<String>, error: &LoadError) -> LoadReport {
        LoadReport {
            name: name.into(),
            started: false,
            error: Some(error.to_string()),
            ..LoadReport::default()
        }
    }
}

/// One counter of a load and its achieved rate over the load's duration.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct LoadMetric {
    /// What is counted (`copied`, `udp datagrams sent`, ...); prefixed by the load in a mix.
    pub name: String,
    /// Unit of `total` (`bytes`, `messages`, `ns`, ...).
    pub unit: String,
    pub total: u64,
    pub per_second: f64,
}
