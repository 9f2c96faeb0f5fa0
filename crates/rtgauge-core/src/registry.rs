//! The catalogue of probes the plan, the runner and the listings look probes up in.
//!
//! The core knows no probe: the built-in ones live in the `rtgauge-probes` crate and the
//! binary registers them at start (`rtgauge_probes::register_built_in`); tests and embedders
//! register their own the same way.

use crate::probe::Probe;
use std::sync::RwLock;

/// Every registered probe, in registration order (the order suites and listings show them).
static REGISTERED: RwLock<Vec<&'static dyn Probe>> = RwLock::new(Vec::new());

/// Adds a probe to the catalogue: plans, the runner and listings find it by name. A name
/// already taken is ignored (the first probe of a name wins), so registering twice is harmless.
pub fn register(probe: &'static dyn Probe) {
    let mut probes = REGISTERED.write().unwrap_or_else(|e| e.into_inner());
    if !probes.iter().any(|p| p.name() == probe.name()) {
        probes.push(probe);
    }
}

/// Every registered probe, in the order suites and listings show them.
pub fn all() -> Vec<&'static dyn Probe> {
    REGISTERED.read().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Looks a probe up by name.
pub fn find(name: &str) -> Option<&'static dyn Probe> {
    all().into_iter().find(|p| p.name() == name)
}

/// Names of all probes, for error messages.
pub fn names() -> String {
    all()
        .iter()
        .map(|p| p.name())
        .collect::<Vec<_>>()
        .join(", ")
}
