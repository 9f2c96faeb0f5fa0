//! Parsing of durations (`25us`, `1ms`, `10s`) and sizes (`64`, `4KiB`, `64MiB`) given by users,
//! and the UTC dates of timestamps.

use std::fmt;

/// A value the user typed that is not of the accepted form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnitError {
    pub input: String,
    pub expected: &'static str,
}

impl fmt::Display for UnitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A pasted 100 kB value is named by its start, not echoed whole.
        write!(
            f,
            "'{}' is not {}",
            crate::read::shorten(&self.input),
            self.expected
        )
    }
}

impl std::error::Error for UnitError {}

/// A timestamp (ns since the Unix epoch) as a UTC date in a chrono `strftime` format, e.g.
/// `%Y-%m-%d %H:%M:%S UTC`.
pub fn utc(unix_ns: u64, format: &str) -> String {
    let secs = (unix_ns / 1_000_000_000) as i64;
    let nanos = (unix_ns % 1_000_000_000) as u32;
    chrono::DateTime::from_timestamp(secs, nanos)
        .expect("a u64 of nanoseconds is within chrono's range")
        .format(format)
        .to_string()
}

const DURATION_FORM: &str =
    "a positive duration with a unit: ns, us, ms, s, m or h (e.g. 25us, 1ms, 10s)";
const SIZE_FORM: &str =
    "a positive size in bytes, optionally with K, KiB, M, MiB, G or GiB (e.g. 64, 4KiB, 64MiB)";

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

/// Parses a strictly positive size into bytes.
pub fn parse_size(input: &str) -> Result<u64, UnitError> {
    let err = || UnitError {
        input: input.to_string(),
        expected: SIZE_FORM,
    };
    let (number, unit) = split_number(input).ok_or_else(err)?;
    let scale: u64 = match unit {
        "" | "B" => 1,
        "K" | "KiB" | "k" => 1 << 10,
        "M" | "MiB" => 1 << 20,
        "G" | "GiB" => 1 << 30,
        _ => return Err(err()),
    };
    let bytes = number * scale as f64;
    if bytes.fract() != 0.0 || bytes < 1.0 || bytes > u64::MAX as f64 {
        return Err(err());
    }
    Ok(bytes as u64)
}

/// Formats nanoseconds for people: `950ns`, `12.3us`, `1.5ms`, `2s`.
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

fn trim(s: String) -> String {
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Formats a byte count with binary units: `64B`, `4KiB`, `1.5MiB`.
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
    use proptest::prelude::*;

    #[test]
    fn durations_with_units() {
        assert_eq!(parse_duration_ns("25us"), Ok(25_000));
        assert_eq!(parse_duration_ns("1ms"), Ok(1_000_000));
        assert_eq!(parse_duration_ns("997us"), Ok(997_000));
        assert_eq!(parse_duration_ns("1.5s"), Ok(1_500_000_000));
        assert_eq!(parse_duration_ns("2m"), Ok(120_000_000_000));
    }

    #[test]
    fn bad_durations_are_refused() {
        for bad in ["0", "0ms", "-5ms", "abc", "10", "5 parsecs", ""] {
            assert!(parse_duration_ns(bad).is_err(), "{bad}");
        }
        let e = parse_duration_ns("-5ms").unwrap_err().to_string();
        assert!(e.contains("'-5ms'") && e.contains("e.g. 25us"), "{e}");
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("64"), Ok(64));
        assert_eq!(parse_size("4KiB"), Ok(4096));
        assert_eq!(parse_size("64MiB"), Ok(64 << 20));
        assert!(parse_size("0").is_err());
        assert!(parse_size("1.3").is_err());
        assert_eq!(format_size(1536), "1.5KiB");
    }

    proptest! {
        #[test]
        fn formatted_durations_parse_back_closely(ns in 1u64..10_000_000_000_000) {
            let back = parse_duration_ns(&format_duration_ns(ns)).unwrap();
            prop_assert!((back as f64 - ns as f64).abs() <= ns as f64 * 1e-3 + 1.0);
        }
    }
}
