//! The report's drawing of explained spikes (`run --trace`): per spike, one timeline of the
//! measured CPU from the programmed to the actual wake-up, with lanes for hard interrupts,
//! softirqs, tasks and time outside Linux. Static SVG scaled to the page width, so it needs
//! no script and fits a phone.

use crate::html::esc;
use rtgauge_result::spike::{cause_name, Attribution, Cause};
use rtgauge_result::units::format_duration_ns;
use rtgauge_result::ProbeRun;
use std::fmt::Write as _;

/// Spikes drawn per probe run; the rest are in the result (`rtgauge export --trace`).
const DRAWN: usize = 5;
const LANES: [&str; 4] = ["IRQ", "softirq", "tasks", "outside Linux"];
const WIDTH: f64 = 640.0;
const LABEL: f64 = 96.0;
const LANE: f64 = 20.0;
const TOP: f64 = 8.0;

fn lane(cause: &Cause) -> usize {
    match cause {
        Cause::Irq { .. } | Cause::Vector { .. } | Cause::Nmi { .. } => 0,
        Cause::Softirq { .. } => 1,
        Cause::Thread { .. } | Cause::ThreadedIrq { .. } | Cause::Idle => 2,
        Cause::Gap { .. } | Cause::Throttled { .. } | Cause::Unknown => 3,
    }
}

fn colour(cause: &Cause) -> &'static str {
    match lane(cause) {
        0 => "#d9534f",
        1 => "#f0ad4e",
        2 => "#5b8bd9",
        _ => "#777777",
    }
}

/// The explained spikes of `runs`, one figure each (largest first), or nothing.
pub fn spikes_html(runs: &[&ProbeRun]) -> String {
    let mut out = String::new();
    for run in runs.iter().filter(|r| !r.spikes.is_empty()) {
        let _ = write!(
            out,
            "<h4>Why it was late: {} {} ({} explained spikes)</h4>",
            esc(&run.mode),
            esc(&run.load),
            run.spikes.len()
        );
        for spike in run.spikes.iter().take(DRAWN) {
            out.push_str(&spike_svg(spike));
        }
        if run.spikes.len() > DRAWN {
            let _ = write!(
                out,
                "<p class=\"note\">{} more in the result; <code>rtgauge export --trace RESULT -o spikes.json</code> opens all of them in ui.perfetto.dev.</p>",
                run.spikes.len() - DRAWN
            );
        }
    }
    out
}

fn spike_svg(a: &Attribution) -> String {
    let start = a.programmed_ns;
    let span = a.woke_ns.saturating_sub(start).max(1) as f64;
    let x =
        |ns: u64| LABEL + (ns.saturating_sub(start) as f64 / span).min(1.0) * (WIDTH - LABEL - 4.0);
    let height = TOP + LANE * LANES.len() as f64 + 8.0;
    let dominant = a
        .dominant_contributor()
        .map(|c| {
            format!(
                "{} ({})",
                cause_name(&c.cause),
                format_duration_ns(c.duration_ns)
            )
        })
        .unwrap_or_else(|| "no cause recorded".into());
    let split = match (a.irq_latency_ns, a.thread_latency_ns) {
        (Some(i), Some(t)) => format!(
            " · timer IRQ latency {}, thread latency {}",
            format_duration_ns(i),
            format_duration_ns(t)
        ),
        _ => String::new(),
    };
    let mut svg = String::new();
    let _ = write!(
        svg,
        "<figure class=\"spike\"><figcaption>CPU {} · {} late · dominant: {}{}</figcaption>\
         <svg viewBox=\"0 0 {WIDTH} {height}\" width=\"100%\" role=\"img\" aria-label=\"timeline of CPU {} between the programmed and the actual wake-up\" style=\"max-width:{WIDTH}px;height:auto\">",
        a.cpu,
        esc(&format_duration_ns(a.latency_ns)),
        esc(&dominant),
        esc(&split),
        a.cpu
    );
    for (i, name) in LANES.iter().enumerate() {
        let y = TOP + LANE * i as f64;
        let _ = write!(
            svg,
            "<text x=\"2\" y=\"{:.1}\" font-size=\"11\">{name}</text><line x1=\"{LABEL}\" x2=\"{WIDTH}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"#ddd\"/>",
            y + 14.0,
            y + LANE,
            y + LANE
        );
    }
    for seg in &a.segments {
        let Some(c) = a.contributors.get(seg.contributor) else {
            continue;
        };
        let (x0, x1) = (x(seg.start_ns), x(seg.end_ns));
        let y = TOP + LANE * lane(&c.cause) as f64 + 3.0;
        let _ = write!(
            svg,
            "<rect x=\"{x0:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{}\"><title>{} {}</title></rect>",
            (x1 - x0).max(0.5),
            LANE - 6.0,
            colour(&c.cause),
            esc(&cause_name(&c.cause)),
            esc(&format_duration_ns(seg.end_ns.saturating_sub(seg.start_ns)))
        );
    }
    let bottom = TOP + LANE * LANES.len() as f64;
    let mut marker = |ns: u64, what: &str, dash: &str| {
        let at = x(ns);
        let _ = write!(
            svg,
            "<line x1=\"{at:.1}\" x2=\"{at:.1}\" y1=\"{TOP}\" y2=\"{bottom:.1}\" stroke=\"#000\"{dash}><title>{what}</title></line>"
        );
    };
    marker(a.programmed_ns, "programmed wake-up", "");
    if let Some(t) = a.timer_irq_ns {
        marker(t, "timer ran", " stroke-dasharray=\"3 2\"");
    }
    marker(a.woke_ns, "actual wake-up", "");
    svg.push_str("</svg></figure>");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtgauge_result::spike::{Contributor, Segment};

    #[test]
    fn a_spike_draws_one_rectangle_per_segment_in_its_cause_lane() {
        let a = Attribution {
            cpu: 1,
            programmed_ns: 1_000,
            woke_ns: 301_000,
            latency_ns: 300_000,
            timer_irq_ns: Some(280_000),
            irq_latency_ns: Some(279_000),
            thread_latency_ns: Some(21_000),
            contributors: vec![Contributor {
                cause: Cause::Softirq {
                    vector: "NET_RX".into(),
                },
                duration_ns: 270_000,
                count: 1,
                longest_ns: 270_000,
            }],
            dominant: Some(0),
            segments: vec![Segment {
                start_ns: 5_000,
                end_ns: 275_000,
                contributor: 0,
            }],
            events_lost: false,
            recording_stopped: false,
            events_in_window: 9,
            thread_pid: None,
        };
        let svg = spike_svg(&a);
        assert_eq!(svg.matches("<rect").count(), 1);
        assert!(svg.contains("softirq NET_RX"), "{svg}");
        assert!(svg.contains(colour(&a.contributors[0].cause)));
        assert!(svg.contains("thread latency 21µs"), "{svg}");
    }
}
