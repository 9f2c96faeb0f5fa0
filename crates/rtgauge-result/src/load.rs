//! What each background load achieved, as the document records it (rtgauge-load produces it).

use serde::{Deserialize, Serialize};

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
    pub fn not_started(name: impl Into<String>, error: impl std::fmt::Display) -> LoadReport {
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
