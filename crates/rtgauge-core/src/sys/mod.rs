//! The system layer: thin, safe wrappers over the kernel interfaces the probes use, one each.
//! Probes call these; they hold no measuring logic.

pub mod gpio;
pub mod io;
pub mod memory;
pub mod mqueue;
pub mod sched;
