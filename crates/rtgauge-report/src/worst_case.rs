//! The extreme-value estimate in words: one line per series for the summary, `compare` and
//! the HTML report, and how long a run would have to be to see a rare latency directly.

use rtgauge_result::units::format_duration_ns;
use rtgauge_result::{ProbeRun, Series, WorstCase};
use rtgauge_stats::evt::{Estimate, ReturnLevel};

/// Series whose interval maxima are a worst case users ask about: wake-up latency (cyclic,
/// timerlat's IRQ and thread), event response and CPU stalls (noise gaps).
pub const HEADLINE_SERIES: [&str; 5] = ["latency", "irq", "thread", "response", "gap"];

/// The series of `run` whose estimate (or refusal) is worth a line.
pub fn headline(run: &ProbeRun) -> impl Iterator<Item = (&Series, &WorstCase)> {
    run.series.iter().filter_map(|s| {
        let wc = s.worst_case.as_ref()?;
        HEADLINE_SERIES
            .contains(&s.name.as_str())
            .then_some((s, wc))
    })
}

/// `predicted 1-h max ≤ 6.1ms (95 %)` or `no estimate: REASON`.
pub fn verdict_text(wc: &WorstCase) -> String {
    match (wc.estimate(), wc.refusal()) {
        (Some(e), _) => format!(
            "predicted {} max ≤ {} ({:.0} %)",
            horizon_label(e.horizon_ns),
            format_duration_ns(e.predicted_max_ns),
            e.confidence * 100.0
        ),
        (None, reason) => format!("no estimate: {}", reason.unwrap_or_default()),
    }
}

/// `1-h` for an hour, else the duration.
fn horizon_label(ns: u64) -> String {
    if ns == rtgauge_stats::evt::HOUR_NS {
        "1-h".into()
    } else {
        format!("{}", long_duration(ns))
    }
}

/// A summary line: `p99.9 13us, max 5.3ms in 10 min; predicted 1-h max ≤ 6.1ms (95 %)`.
pub fn line(series: &Series, wc: &WorstCase, measured_ns: u64) -> String {
    let mut parts = Vec::new();
    if let Some(p) = series.stats.percentiles.p99_9_ns {
        parts.push(format!("p99.9 {}", format_duration_ns(p)));
    }
    if let Some(max) = series.stats.max_ns {
        parts.push(format!(
            "max {} in {}",
            format_duration_ns(max),
            long_duration(measured_ns)
        ));
    }
    let observed = parts.join(", ");
    if observed.is_empty() {
        verdict_text(wc)
    } else {
        format!("{observed}; {}", verdict_text(wc))
    }
}

/// The per-cycle return level a run would have to be long enough to see directly.
pub const ADVICE_PROBABILITY: f64 = 1e-6;

/// The return level behind the `--duration` advice: one in a million cycles.
pub fn advice_level(e: &Estimate) -> Option<&ReturnLevel> {
    e.return_levels
        .iter()
        .find(|l| l.per == "cycle" && l.probability == ADVICE_PROBABILITY)
}

/// `seeing the 1-in-a-million-cycles latency (≈ 480us) directly takes --duration 50m`.
pub fn advice(e: &Estimate) -> Option<String> {
    let level = advice_level(e)?;
    let text = match level.run_needed_ns {
        Some(ns) => format!("takes --duration {}", duration_flag(ns)),
        None => "takes centuries".into(),
    };
    Some(format!(
        "seeing the 1-in-a-million-cycles latency (≈ {}) directly {text}",
        format_duration_ns(level.level_ns)
    ))
}

/// A `--duration` value rounded up to a whole unit: `50m`, `3h`, `12d`.
fn duration_flag(ns: u64) -> String {
    const MINUTE: u64 = 60_000_000_000;
    for (unit, size) in [("d", 24 * 60 * MINUTE), ("h", 60 * MINUTE), ("m", MINUTE)] {
        if ns >= size {
            return format!("{}{unit}", ns.div_ceil(size));
        }
    }
    format!("{}s", ns.div_ceil(1_000_000_000).max(1))
}

/// Durations people read: `45 s`, `10 min`, `1.5 h`, `3.2 days`, `12 years`.
pub fn long_duration(ns: u64) -> String {
    let s = ns as f64 / 1e9;
    let trim = |v: f64| {
        let t = format!("{v:.1}");
        t.strip_suffix(".0").map(str::to_string).unwrap_or(t)
    };
    if s < 120.0 {
        format!("{} s", trim(s))
    } else if s < 2.0 * 3600.0 {
        format!("{} min", trim(s / 60.0))
    } else if s < 2.0 * 86_400.0 {
        format!("{} h", trim(s / 3600.0))
    } else if s < 2.0 * 365.25 * 86_400.0 {
        format!("{} days", trim(s / 86_400.0))
    } else {
        format!("{} years", trim(s / (365.25 * 86_400.0)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_naturally() {
        assert_eq!(long_duration(45_000_000_000), "45 s");
        assert_eq!(long_duration(600_000_000_000), "10 min");
        assert_eq!(long_duration(5_400_000_000_000), "90 min");
        assert_eq!(long_duration(3 * 86_400_000_000_000), "3 days");
        assert_eq!(duration_flag(3_001_000_000_000), "51m");
        assert_eq!(duration_flag(7_200_000_000_000), "2h");
        assert_eq!(duration_flag(1), "1s");
    }
}
