//! Raw-sample recording (`rtgauge run --record PROBE`): every sample of a probe streamed to a
//! compact binary file beside the result, and exported to CSV or Parquet.
//!
//! Data flows one way: measuring thread → [`SampleSink::push`] (a wait-free ring push) →
//! writer thread (off the measured CPUs, SCHED_OTHER) → `.rtgr` file ([`format`]) →
//! [`Recording`] (checked, streamed) → [`export()`].
//!
//! This crate knows nothing about probes or the real-time context: the runner passes in the
//! writer's CPUs and the function that pins it.

pub mod error;
pub mod export;
pub mod format;
pub mod hub;
pub mod reader;

pub use error::RecordError;
pub use export::{export, export_recording, ExportFormat, ExportSummary};
pub use format::{Header, Sample, SeriesCount, SeriesDef, Trailer, FORMAT_VERSION};
pub use hub::{
    RecordOptions, RecordingHub, RecordingMeta, RecordingSummary, SampleSink, SinkSlots,
};
pub use reader::{Recording, Samples};

#[cfg(test)]
mod tests;
