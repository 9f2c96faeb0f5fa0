//! Application instrumentation: named points an application records into shared memory,
//! and the reader rtgauge's collector drains them with. The layout lives in [`layout`], once.
//!
//! ```no_run
//! use rtgauge_app::Point;
//! let compute = Point::interval("servo.compute")?;
//! let cycles = Point::counter("servo.cycles")?;
//! loop {
//!     let _timed = compute.begin(); // recorded when dropped
//!     cycles.count(1);
//!     # break;
//! }
//! # Ok::<(), rtgauge_app::AppError>(())
//! ```
//!
//! Recording never blocks, allocates, locks or calls the kernel: a record goes into the
//! calling thread's ring, or is dropped and counted when the ring is full. A disabled point
//! (`RTGAUGE_POINTS`) costs one branch. See docs/app-instrumentation.md.

pub mod clock;
pub mod ffi;
pub mod layout;
mod names;
mod producer;
mod reader;

pub use layout::{Kind, Record};
pub use names::{validate_name, Selection};
pub use producer::{file_path, shutdown, thread_init, Interval, Point};
pub use reader::{Drained, PointInfo, Reader};

/// What went wrong, in one line that names the input and the fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AppError {
    #[error("point name '{name}' is refused: {reason}; use 1 to 63 ASCII letters, digits, '_' or '-', with '.' between levels (servo.read)")]
    InvalidName { name: String, reason: String },
    #[error("{origin}: pattern '{pattern}' is refused: {reason}")]
    InvalidPattern {
        /// Where the globs came from: RTGAUGE_POINTS, or the collector's `points` parameter.
        origin: &'static str,
        pattern: String,
        reason: String,
    },
    #[error("point '{name}' is already registered as {registered}, not {asked}; give the other one another name")]
    KindMismatch {
        name: String,
        registered: &'static str,
        asked: &'static str,
    },
    #[error(
        "point '{name}' cannot be registered: all {max} points are taken; register fewer points"
    )]
    TableFull { name: String, max: usize },
    #[error("cannot {what} {path}: {message}; set RTGAUGE_APP_DIR to a writable tmpfs directory")]
    SharedMemory {
        what: &'static str,
        path: String,
        message: String,
    },
    #[error("no instrumented application at {path}: is the process running, linked with rtgauge-app, and has it registered a point (and does RTGAUGE_APP_DIR match)?")]
    NotFound { path: String },
    #[error("{path} is not readable as rtgauge-app shared memory ({reason}); rebuild the application against this version of rtgauge")]
    Incompatible { path: String, reason: String },
    #[error("RTGAUGE_APP_CLOCK='{value}' is refused; use monotonic or counter (the CPU's counter, x86_64 and aarch64 only), or unset it")]
    InvalidClock { value: String },
    #[error("point '{name}' cannot be registered in a child forked by an instrumented process: its shared memory is the parent's; register points in the parent, or in the child after it execs")]
    ForkedChild { name: String },
    #[error("process {pid} is already being collected by rtgauge process {collector}; stop that one first")]
    Busy { pid: u32, collector: u32 },
}
