//! The system layer: thin, safe wrappers over the Linux interfaces rtgauge uses, one each,
//! written once for every crate (core, probes, loads, sysinfo, trace). They hold no
//! measuring logic and depend on no other rtgauge crate.
//!
//! - [`cpus`]: kernel CPU lists (parsed with a bound, formatted), the online CPUs;
//! - [`sched`]: scheduling policies and priorities, `sched_setattr`, CPU affinity;
//! - [`clock`]: reading CLOCK_MONOTONIC and the other clocks, absolute sleeps;
//! - [`io`]: descriptors, pipes, futex words, interrupted calls;
//! - [`mqueue`]: POSIX message queues;
//! - [`process`]: memory locking, timer slack, the effective user, resource limits.
//! - [`sync`]: mutexes with a priority protocol (inheritance or none).
//! - [`ptp`]: PTP hardware clocks' cross-timestamps with the system clock, the kernel's time status.

pub mod clock;
pub mod cpus;
pub mod io;
pub mod mqueue;
pub mod process;
pub mod ptp;
pub mod sched;
pub mod sync;
