//! The catalogue of probes.

pub mod alloc;
pub mod clocks;
pub mod cyclic;
pub mod ioport;
pub mod memop;
pub mod primitive;
pub mod response;
pub mod switch;

use crate::probe::Probe;

/// Every probe, in the order suites and listings show them.
pub fn all() -> Vec<&'static dyn Probe> {
    vec![
        &cyclic::Cyclic,
        &response::Response,
        &switch::Switch,
        &primitive::Primitive,
        &alloc::Alloc,
        &memop::Memop,
        &clocks::ClockProbe,
        &ioport::IoPort,
    ]
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
