//! Durations and sizes as people write and read them (`50us`, `1.5ms`, `4KiB`).
//!
//! Accepts exactly the duration syntax of `rtgauge run` (rtgauge-core's `units`), so a spec
//! limit is written like a `--period`; kept here so the renderers do not depend on the
//! measuring machinery.

use std::fmt;

/// A value that is not of the accepted form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnitError {
    pub input: String,
    pub expected: &'static str,
}

impl fmt::Display for UnitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "'{}' is not {}", self.input, self.expected)
    }
}

impl std::error::Error for UnitError {}

const DURATION_FORM: &str =
    "a positive duration with a unit: ns, us, ms, s, m or h (e.g. 25us, 1ms, 10s)";

fn split_number(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let number: f64 = s[..end].parse().ok()?;
    Some((number, s[end..].trim()))
}

/// Parses a strictly positive duration into nanoseconds.
pub fn parse_duration_ns(input: &str) -> Result<u64, UnitError> {
    let err = || UnitError {
        input: input.to_string(),
        expected: DURATION_FORM,
    };
    let (number, unit) = split_number(input).ok_or_else(err)?;
    let scale = match unit {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "m" | "min" => 60e9,
        "h" => 3600e9,
        _ => return Err(err()),
    };
    let ns = (number * scale).round();
    if !(ns >= 1.0 && ns < u64::MAX as f64) {
        return Err(err());
    }
    Ok(ns as u64)
}

/// Parses a size label (`64`, `4096`, `4KiB`, `1MiB`) into bytes.
pub fn parse_size(input: &str) -> Option<u64> {
    let (number, unit) = split_number(input)?;
    let scale: u64 = match unit {
        "" | "B" => 1,
        "K" | "KiB" | "k" => 1 << 10,
        "M" | "MiB" => 1 << 20,
        "G" | "GiB" => 1 << 30,
        _ => return None,
    };
    let bytes = number * scale as f64;
    (bytes.fract() == 0.0 && bytes >= 1.0 && bytes < u64::MAX as f64).then_some(bytes as u64)
}

fn trim(s: String) -> String {
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// `950ns`, `12.3us`, `1.5ms`, `2s`.
pub fn format_duration_ns(ns: u64) -> String {
    if ns < 1_000 {
        format!("{ns}ns")
    } else if ns < 1_000_000 {
        trim(format!("{:.3}", ns as f64 / 1e3)) + "us"
    } else if ns < 1_000_000_000 {
        trim(format!("{:.3}", ns as f64 / 1e6)) + "ms"
    } else {
        trim(format!("{:.3}", ns as f64 / 1e9)) + "s"
    }
}

/// `64B`, `4KiB`, `1.5MiB`.
pub fn format_size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    trim(format!("{value:.2}")) + UNITS[unit]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration_ns("50us"), Ok(50_000));
        assert_eq!(parse_duration_ns("1.5ms"), Ok(1_500_000));
        assert_eq!(parse_duration_ns("100 ns"), Ok(100));
        for bad in ["0", "0us", "-5ms", "10", "5 parsecs", ""] {
            assert!(parse_duration_ns(bad).is_err(), "{bad}");
        }
        assert_eq!(format_duration_ns(153_727), "153.727us");
        assert_eq!(format_duration_ns(950), "950ns");
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("4KiB"), Some(4096));
        assert_eq!(parse_size("x"), None);
        assert_eq!(format_size(65_536), "64KiB");
    }
}
