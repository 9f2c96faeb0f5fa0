//! The trials document of `rtgauge tune` (see [`rtgauge_result::tune`]): its figures in words,
//! as the terminal table prints them, and drawn in an HTML page — for every trial the two
//! sides' rounds (max, tail, missed periods) A against B with the verdict, the combination,
//! and the ranked table.

use rtgauge_result::tune::Effect;
use rtgauge_result::units::format_duration_ns;

/// A time in ns for people (`1.241s`, `92µs`); `-` for what is not a time.
pub fn ns(v: f64) -> String {
    if v.is_finite() && v >= 0.0 {
        format_duration_ns(v.round() as u64)
    } else {
        "-".into()
    }
}

/// A relative change for people: `-35 %`, `+12 %`, and a large drop as a factor (`÷221`).
pub fn change_text(change: f64) -> String {
    if change <= -0.5 {
        format!("÷{:.0}", 1.0 / (1.0 + change).max(1e-9))
    } else {
        format!("{:+.0} %", change * 100.0)
    }
}

/// One effect: `max 1.241s → 7.745ms (÷160, p 0.002)`; missed periods as totals.
pub fn effect_text(e: &Effect) -> String {
    let p = crate::compare::format_p(e.p);
    if e.figure == "missed" {
        // Counts: the numbers say it; a factor of counts plus one would not.
        return format!(
            "missed {:.0} → {:.0} in all rounds (p {p})",
            e.before, e.after
        );
    }
    format!(
        "{} {} → {} ({}, p {p})",
        e.figure,
        ns(e.before),
        ns(e.after),
        change_text(e.change)
    )
}
