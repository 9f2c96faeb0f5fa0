//! Durations and sizes as people write and read them (`50us`, `1.5ms`, `4KiB`): the same
//! syntax as `rtgauge run`, so a spec limit is written like a `--period`.

pub use rtgauge_result::units::{format_duration_ns, format_size, parse_duration_ns, UnitError};

/// A size such as `4096` or `4KiB`, or None when it is not one.
pub fn parse_size(input: &str) -> Option<u64> {
    rtgauge_result::units::parse_size(input).ok()
}
