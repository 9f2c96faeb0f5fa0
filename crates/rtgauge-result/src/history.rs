//! What the run history gives back about one series over time: the type the store fills and
//! `rtgauge trend` renders, defined here so neither depends on the other.

use serde::Serialize;

/// One stored run's figures for a series (ns per operation).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrendPoint {
    pub run_id: i64,
    pub started_unix_ns: u64,
    pub kernel_release: String,
    pub machine_key: String,
    pub median_ns: Option<u64>,
    pub p99_ns: Option<u64>,
    pub max_ns: Option<u64>,
}
