//! The extreme-value estimate in words: one line per series for the summary, `compare` and
//! the HTML report, and how long a run would have to be to see a rare latency directly.

use crate::plots::{scale_of, unit_for, Chart, ChartKind, Line, Scale};
use rtgauge_result::units::format_duration_ns;
use rtgauge_result::{ProbeRun, Series, WorstCase};
use rtgauge_stats::evt::{Estimate, Gev, ReturnLevel, HOUR_NS};

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

/// Refused for too few maxima: a run too short to say anything, whatever the series.
pub fn too_few(wc: &WorstCase) -> bool {
    wc.estimate().is_none() && wc.maxima < rtgauge_stats::evt::MIN_MAXIMA as u64
}

/// `predicted 1-h max ≤ 6.1ms (95 %)` or `no estimate: REASON`.
pub fn verdict_text(wc: &WorstCase) -> String {
    match (wc.estimate(), wc.refusal()) {
        (Some(e), _) => format!(
            "predicted {} max ≤ {} ({:.0} %)",
            horizon_label(e.horizon_ns),
            short_duration(e.predicted_max_ns),
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
        long_duration(ns)
    }
}

/// A summary line: `p99.9 13us, max 5.3ms in 10 min; predicted 1-h max ≤ 6.1ms (95 %)`.
pub fn line(series: &Series, wc: &WorstCase, measured_ns: u64) -> String {
    let mut parts = Vec::new();
    if let Some(p) = series.stats.percentiles.p99_9_ns {
        parts.push(format!("p99.9 {}", short_duration(p)));
    }
    if let Some(max) = series.stats.max_ns {
        parts.push(format!(
            "max {} in {}",
            short_duration(max),
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
        short_duration(level.level_ns)
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

/// A latency to three significant digits: `519us`, `5.8ms`, `11.7us`, `950ns`.
pub fn short_duration(ns: u64) -> String {
    let (value, unit) = match ns {
        0..1_000 => return format!("{ns}ns"),
        1_000..1_000_000 => (ns as f64 / 1e3, "us"),
        1_000_000..1_000_000_000 => (ns as f64 / 1e6, "ms"),
        _ => (ns as f64 / 1e9, "s"),
    };
    let decimals = if value >= 100.0 {
        0
    } else if value >= 10.0 {
        1
    } else {
        2
    };
    let text = format!("{value:.decimals$}");
    let text = if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    };
    format!("{text}{unit}")
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

/// The return-level plot of a series with an estimate (or a refusal): its block maxima at
/// their empirical return periods (Gringorten plotting positions), and where there is an
/// estimate the fitted curve with its 5–95 % bootstrap band, out to 10⁶ hours.
pub(crate) fn chart(
    id: &str,
    probe: &str,
    what: &str,
    label: &str,
    series: &Series,
) -> Option<Chart> {
    if !HEADLINE_SERIES.contains(&series.name.as_str()) {
        return None;
    }
    let wc = series.worst_case.as_ref()?;
    let batch = series.batch.max(1) as f64;
    let mut maxima: Vec<f64> = series
        .stats
        .intervals
        .max_ns
        .iter()
        .flatten()
        .map(|&v| v as f64 / batch)
        .collect();
    let block = series.stats.intervals.interval_ns.max(1) as f64;
    if maxima.len() < 2 {
        return None;
    }
    maxima.sort_by(f64::total_cmp);
    let n = maxima.len() as f64;
    // Return periods in ns: observed ones, then the fitted curve's beyond them.
    let observed: Vec<(f64, f64)> = maxima
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let f = (i as f64 + 1.0 - 0.44) / (n + 0.12);
            (block / (1.0 - f), v)
        })
        .collect();
    let estimate = wc.estimate();
    let last_observed = observed.last().map_or(block, |o| o.0);
    let mut xs: Vec<f64> = observed.iter().map(|o| o.0).collect();
    if let Some(e) = estimate {
        xs.extend(
            e.curve
                .iter()
                .map(|p| p.return_period_ns as f64)
                .filter(|&t| t > last_observed),
        );
    }
    let hi = xs
        .iter()
        .map(|&t| estimate.map_or(0.0, |e| band_at(e, t).1 / batch))
        .chain(maxima.iter().copied())
        .filter(|v| v.is_finite())
        .fold(0.0f64, f64::max);
    let unit = unit_for(hi);
    let scale = scale_of(unit);
    let mut lines = vec![Line {
        label: format!("{label} block maxima").trim().to_string(),
        values: xs
            .iter()
            .enumerate()
            .map(|(i, _)| observed.get(i).map(|o| o.1 / scale))
            .collect(),
        color: 0,
        dashed: false,
    }];
    if let Some(e) = estimate {
        let model = Gev {
            location: e.location_ns / batch,
            scale: e.scale_ns / batch,
            shape: e.shape,
        };
        let finite = |v: f64| (v.is_finite() && v >= 0.0).then_some(v / scale);
        lines.push(Line {
            label: format!("{} fit", e.model),
            values: xs
                .iter()
                .map(|&t| finite(model.return_level(t / block)))
                .collect(),
            color: 1,
            dashed: false,
        });
        for (name, pick) in [("95 % bound", 1usize), ("5 % bound", 0)] {
            lines.push(Line {
                label: name.into(),
                values: xs
                    .iter()
                    .map(|&t| {
                        let (lo, up) = band_at(e, t);
                        finite(if pick == 1 { up } else { lo } / batch)
                    })
                    .collect(),
                color: 1,
                dashed: true,
            });
        }
    }
    let lo = maxima.first().copied().unwrap_or(1.0);
    let mut note = format!(
        "Each {} block maximum at its return period (the mean time between maxima that high){}. {}.",
        format_duration_ns(block as u64),
        if estimate.is_some() { ", the extreme-value fit and its 5–95 % band" } else { "" },
        verdict_text(wc)
    );
    if let Some(advice) = estimate.and_then(advice) {
        let mut chars = advice.chars();
        let first: String = chars
            .next()
            .into_iter()
            .flat_map(char::to_uppercase)
            .collect();
        note.push_str(&format!(" {first}{}.", chars.as_str()));
    }
    Some(Chart {
        id: id.to_string(),
        probe: probe.to_string(),
        title: format!(
            "Worst case beyond the run: {what}{}",
            if label.is_empty() {
                String::new()
            } else {
                format!(" · {label}")
            }
        ),
        note,
        x_label: "return period (h)".into(),
        y_label: format!("{} ({})", series.name, unit.label()),
        ..Chart::of_lines(
            ChartKind::ReturnLevels,
            Scale::Log,
            xs.iter().map(|t| t / HOUR_NS as f64).collect(),
            lines,
            (lo, hi),
        )
    })
}

/// The bootstrap band (5 %, 95 %) at return period `t` ns, interpolated in log(period)
/// between the stored curve points (clamped at its ends).
fn band_at(e: &Estimate, t: f64) -> (f64, f64) {
    let points = &e.curve;
    let Some(first) = points.first() else {
        return (f64::NAN, f64::NAN);
    };
    let at = |p: &rtgauge_stats::evt::CurvePoint| (p.lower_ns as f64, p.upper_ns as f64);
    if t <= first.return_period_ns as f64 {
        return at(first);
    }
    for pair in points.windows(2) {
        let (a, b) = (
            pair[0].return_period_ns as f64,
            pair[1].return_period_ns as f64,
        );
        if t <= b && b > a {
            let w = (t.ln() - a.ln()) / (b.ln() - a.ln());
            let (la, ua) = at(&pair[0]);
            let (lb, ub) = at(&pair[1]);
            return (la + w * (lb - la), ua + w * (ub - ua));
        }
    }
    points.last().map_or((f64::NAN, f64::NAN), at)
}

/// Estimates the worst case of every headline series that has interval maxima but no
/// estimate (a result written before rtgauge made them); estimates already stored are kept.
pub fn estimate_missing(result: &mut rtgauge_result::RunResult) {
    for series in result.runs.iter_mut().flat_map(|r| r.series.iter_mut()) {
        if series.worst_case.is_none() && HEADLINE_SERIES.contains(&series.name.as_str()) {
            series.worst_case = rtgauge_stats::evt::estimate_summary(&series.stats);
        }
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
        assert_eq!(short_duration(518_779), "519us");
        assert_eq!(short_duration(5_798_000), "5.8ms");
        assert_eq!(short_duration(11_655), "11.7us");
        assert_eq!(short_duration(950), "950ns");
    }
}
