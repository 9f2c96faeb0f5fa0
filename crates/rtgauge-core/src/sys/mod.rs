//! The kernel interfaces whose wrappers speak in probe errors (GPIO lines, measuring memory).
//! Everything else of the system layer is the `rtgauge-os` crate, used by every crate.

pub mod gpio;
pub mod memory;
