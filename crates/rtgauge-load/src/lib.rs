//! Background loads (placeholder until the load generators land).

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
    pub operations_per_second: Option<f64>,
    pub bytes_per_second: Option<f64>,
}
