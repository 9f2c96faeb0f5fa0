//! rtgauge's measuring engine: the real-time execution context, the clock, the probe
//! interface and its registry, the plan and the runner that produces a result document. The
//! built-in probes live in the `rtgauge-probes` crate, which registers them here.
//!
//! Data flows one way: [`plan`] → [`runner`] (which applies [`rt`], starts loads, runs each
//! [`probe`]) → a [`rtgauge_result::RunResult`].

pub mod clock;
pub mod cpus;
pub mod live;
pub mod plan;
pub mod probe;
pub mod registry;
pub mod rt;
pub mod runner;
pub mod signals;
pub mod spikes;
pub mod sys;
pub mod threads;
pub mod trace_source;
/// Durations and sizes as users write them (shared with the renderers).
pub use rtgauge_result::units;
