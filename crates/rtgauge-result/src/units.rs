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
        write!(f, "'{}' is not {}", quote(&self.input), self.expected)
    }
}

/// The most of a user's value an error message quotes: enough to recognise it, never a
/// screenful (a 100 kB value must not be echoed whole).
pub const QUOTE_CHARS: usize = 40;

/// `input` as an error message quotes it: whole when short, else its first [`QUOTE_CHARS`]
/// characters followed by `…`; line breaks and other control characters
/// are written as escapes (`\n`), so a quoted value cannot break a one-line message.
pub fn quote(input: &str) -> String {
    match input.char_indices().nth(QUOTE_CHARS) {
        None => escape_controls(input),
        Some((cut, _)) => format!("{}…", escape_controls(&input[..cut])),
    }
}

/// `text` with control characters written as escapes.
pub fn escape_controls(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
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

/// A number and its unit: `1.5ms` → ("1.5", "ms").
fn split_number(s: &str) -> (&str, &str) {
    let s = s.trim();
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    (&s[..end], s[end..].trim())
}

/// `number × scale`, exact for whole numbers (any u64, not only what an f64 holds), rounded to
/// whole units for fractions (`1.5us`); None when it is not a number, not positive or too big.
fn scaled(number: &str, scale: u64, fraction_allowed: bool) -> Option<u64> {
    if !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit()) {
        return number
            .parse::<u64>()
            .ok()?
            .checked_mul(scale)
            .filter(|&v| v >= 1);
    }
    let value = number.parse::<f64>().ok()? * scale as f64;
    let value = if fraction_allowed {
        value.round()
    } else {
        value
    };
    (value.fract() == 0.0 && value >= 1.0 && value < u64::MAX as f64).then_some(value as u64)
}

/// Parses a strictly positive duration into nanoseconds.
pub fn parse_duration_ns(input: &str) -> Result<u64, UnitError> {
    let err = || UnitError {
        input: input.to_string(),
        expected: DURATION_FORM,
    };
    let (number, unit) = split_number(input);
    let scale: u64 = match unit {
        "ns" => 1,
        "us" | "µs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "m" | "min" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        _ => return Err(err()),
    };
    scaled(number, scale, true).ok_or_else(err)
}

/// Parses a strictly positive size into bytes.
pub fn parse_size(input: &str) -> Result<u64, UnitError> {
    let err = || UnitError {
        input: input.to_string(),
        expected: SIZE_FORM,
    };
    let (number, unit) = split_number(input);
    let scale: u64 = match unit {
        "" | "B" => 1,
        "K" | "KiB" | "k" => 1 << 10,
        "M" | "MiB" => 1 << 20,
        "G" | "GiB" => 1 << 30,
        _ => return Err(err()),
    };
    scaled(number, scale, false).ok_or_else(err)
}

/// The candidate a mistyped name most likely meant (`cyclc` → `cyclic`, `lastest` →
/// `latest`), for a "did you mean" in a message; None when none is close: at most one edit
/// for short names, a third of the name's length for longer ones.
pub fn closest<'a>(typed: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let typed = typed.to_lowercase();
    candidates
        .into_iter()
        .map(|c| (strsim::damerau_levenshtein(&typed, &c.to_lowercase()), c))
        .filter(|(d, c)| *d <= (c.chars().count() / 3).max(1))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// ` (did you mean `NAME`?)` for a message, or nothing when no candidate is close.
pub fn did_you_mean<'a>(typed: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    closest(typed, candidates)
        .map(|c| format!(" (did you mean `{c}`?)"))
        .unwrap_or_default()
}

/// Formats nanoseconds for people: `950ns`, `12.3µs`, `1.5ms`, `2s`. Microseconds are `µs`,
/// as in every table; the text parses back ([`parse_duration_ns`] reads `µs` and `us`), up to
/// its rounding.
pub fn format_duration_ns(ns: u64) -> String {
    if ns < 1_000 {
        format!("{ns}ns")
    } else if ns < 1_000_000 {
        trim(format!("{:.3}", ns as f64 / 1e3)) + "µs"
    } else if ns < 1_000_000_000 {
        trim(format!("{:.3}", ns as f64 / 1e6)) + "ms"
    } else {
        trim(format!("{:.3}", ns as f64 / 1e9)) + "s"
    }
}

/// Formats nanoseconds exactly, in the largest unit that divides them: `1234567ns`, `25us`,
/// `1ms`, `10s`. This is the form of a duration *parameter* in a result: it parses back to the
/// same number of nanoseconds ([`parse_duration_ns`]), which the rounded
/// [`format_duration_ns`] does not promise.
pub fn format_duration_exact(ns: u64) -> String {
    const UNITS: [(u64, &str); 3] = [(1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "us")];
    UNITS
        .iter()
        .find(|(scale, _)| ns != 0 && ns.is_multiple_of(*scale))
        .map_or_else(
            || format!("{ns}ns"),
            |(scale, unit)| format!("{}{unit}", ns / scale),
        )
}

/// Formats a byte count exactly, in the largest binary unit that divides it: `3001B`, `4KiB`,
/// `1536B`… `64MiB`. The form of a size parameter or a size label: two sizes never share one.
pub fn format_size_exact(bytes: u64) -> String {
    const UNITS: [(u64, &str); 3] = [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
    UNITS
        .iter()
        .find(|(scale, _)| bytes != 0 && bytes.is_multiple_of(*scale))
        .map_or_else(
            || format!("{bytes}B"),
            |(scale, unit)| format!("{}{unit}", bytes / scale),
        )
}

/// A list of sizes, each exact, comma-separated: `64B,3001B,4KiB`.
pub fn format_size_list(sizes: &[u64]) -> String {
    sizes
        .iter()
        .map(|&s| format_size_exact(s))
        .collect::<Vec<_>>()
        .join(",")
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

    #[test]
    fn closest_names_the_likely_meant_candidate_or_none() {
        let probes = ["cyclic", "response", "switch", "noise", "clock"];
        assert_eq!(closest("cyclc", probes), Some("cyclic"));
        assert_eq!(closest("respnose", probes), Some("response"));
        assert_eq!(closest("Noise", probes), Some("noise"));
        assert_eq!(closest("lastest", ["latest", "previous"]), Some("latest"));
        assert_eq!(
            closest("quik", ["quick", "standard", "full"]),
            Some("quick")
        );
        assert_eq!(closest("banana", probes), None);
        assert_eq!(did_you_mean("xyz", probes), "");
        assert_eq!(did_you_mean("cyclc", probes), " (did you mean `cyclic`?)");
    }

    #[test]
    fn durations_for_people_write_microseconds_as_in_the_tables() {
        assert_eq!(format_duration_ns(950), "950ns");
        assert_eq!(format_duration_ns(12_300), "12.3µs");
        assert_eq!(format_duration_ns(1_500_000), "1.5ms");
        assert_eq!(format_duration_ns(2_000_000_000), "2s");
        assert_eq!(parse_duration_ns(&format_duration_ns(12_300)), Ok(12_300));
    }

    #[test]
    fn exact_forms() {
        assert_eq!(format_duration_exact(1_234_567), "1234567ns");
        assert_eq!(format_duration_exact(1_000_000), "1ms");
        assert_eq!(format_duration_exact(25_000), "25us");
        assert_eq!(format_duration_exact(10_000_000_000), "10s");
        assert_eq!(format_duration_exact(0), "0ns");
        assert_eq!(format_size_exact(3001), "3001B");
        assert_eq!(format_size_exact(3000), "3000B");
        assert_eq!(format_size_exact(4096), "4KiB");
        assert_eq!(format_size_exact(1536), "1536B");
        assert_eq!(format_size_exact(64 << 20), "64MiB");
    }

    #[test]
    fn a_huge_bad_value_is_quoted_short() {
        let input = "x".repeat(100_000);
        let e = parse_duration_ns(&input).unwrap_err().to_string();
        assert!(e.len() < 200, "{} bytes", e.len());
        assert!(
            e.starts_with(&format!("'{}…'", "x".repeat(QUOTE_CHARS))),
            "{e}"
        );
        // Short values are quoted whole; a cut never splits a character.
        assert_eq!(quote("5 parsecs"), "5 parsecs");
        assert_eq!(
            quote(&"µ".repeat(50)),
            format!("{}…", "µ".repeat(QUOTE_CHARS))
        );
    }

    proptest! {
        #[test]
        fn exact_durations_parse_back_unchanged(ns in 1u64..) {
            prop_assert_eq!(parse_duration_ns(&format_duration_exact(ns)), Ok(ns));
        }

        #[test]
        fn exact_sizes_parse_back_unchanged(bytes in 1u64..) {
            prop_assert_eq!(parse_size(&format_size_exact(bytes)), Ok(bytes));
        }

        #[test]
        fn formatted_durations_parse_back_closely(ns in 1u64..10_000_000_000_000) {
            let back = parse_duration_ns(&format_duration_ns(ns)).unwrap();
            prop_assert!((back as f64 - ns as f64).abs() <= ns as f64 * 1e-3 + 1.0);
        }
    }
}
