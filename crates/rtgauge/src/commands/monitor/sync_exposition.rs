//! What a clocksync monitor's scrape shows: per reference (labels `reference`, `source`), the
//! last poll's figures as gauges, the interval maxima of |offset|, the lock and the port state,
//! and the counters across restarts (from the history). Text format 0.0.4 or OpenMetrics 1.0;
//! there is no histogram, so a scraper asking for protobuf gets OpenMetrics (or the text format).

use super::exposition::{info_family, label_value, seconds, start_time_family, Format, Info};
use rtgauge_probes::clocksync::{Status, PORT_STATES};
use std::fmt::Write as _;

/// One reference's figures at the moment of a scrape.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct RefFigures {
    pub reference: &'static str,
    pub source: String,
    /// The last poll, None before the first one.
    pub last: Option<Status>,
    /// Highest |offset| of the last finished interval (None before the first, or when no poll
    /// of it answered).
    pub interval_max_ns: Option<u64>,
    /// Highest interval |offset| over the whole uptime, earlier processes included.
    pub alltime_max_ns: Option<u64>,
    /// Counters across restarts (the history's sums, never more).
    pub polls_total: u64,
    pub failed_polls_total: u64,
    pub lock_losses_total: u64,
    pub state_changes_total: u64,
}

/// The format a scraper's `Accept` header gets: protobuf only carries the latency monitors'
/// native histograms, so a protobuf scraper is answered in the next format it accepts.
pub(super) fn format_for(accept: &str) -> Format {
    match Format::from_accept(accept) {
        Format::Protobuf if accept.contains("application/openmetrics-text") => Format::OpenMetrics,
        Format::Protobuf => Format::Text,
        other => other,
    }
}

type Value = fn(&RefFigures) -> Option<String>;
type Count = fn(&RefFigures) -> u64;

/// Signed nanoseconds as seconds.
fn signed(ns: i64) -> String {
    format!("{}", ns as f64 / 1e9)
}

/// The gauges: (name, help, value).
fn gauges() -> [(&'static str, &'static str, Value); 9] {
    [
        (
            "rtgauge_clocksync_up",
            "1 when the last poll of the reference answered, 0 when it failed (daemon gone, hanging or answering garbage).",
            |f| f.last.as_ref().map(|l| u8::from(l.answered).to_string()),
        ),
        (
            "rtgauge_clocksync_offset_seconds",
            "This clock minus the reference at the last poll (signed; chrony: minus its System time).",
            |f| f.last.as_ref()?.offset_ns.map(signed),
        ),
        (
            "rtgauge_clocksync_offset_interval_max_seconds",
            "Highest |offset| of the last finished interval (rtgauge_info's interval_seconds).",
            |f| f.interval_max_ns.map(seconds),
        ),
        (
            "rtgauge_clocksync_offset_interval_max_alltime_seconds",
            "Highest interval |offset| over the whole uptime, across restarts (kept in the run history).",
            |f| f.alltime_max_ns.map(seconds),
        ),
        (
            "rtgauge_clocksync_path_delay_seconds",
            "One-way delay to the reference at the last poll (ptp4l: meanPathDelay; chrony: root delay / 2).",
            |f| f.last.as_ref()?.path_delay_ns.map(signed),
        ),
        (
            "rtgauge_clocksync_frequency_ppb",
            "How fast the local oscillator runs against the reference, uncorrected, in parts per billion (chrony's frequency, positive fast).",
            |f| f.last.as_ref()?.frequency_ppb.map(|v| v.to_string()),
        ),
        (
            "rtgauge_clocksync_error_bound_seconds",
            "chrony's bound on this clock's error: |system time| + root dispersion + root delay / 2.",
            |f| f.last.as_ref()?.error_bound_ns.map(|v| (v / 1e9).to_string()),
        ),
        (
            "rtgauge_clocksync_locked",
            "1 when the daemon holds the clock to its reference (chrony: synchronised with a selected source; ptp4l: port SLAVE with a grandmaster, its servo locked; a PHC read), else 0.",
            |f| f.last.as_ref().map(|l| u8::from(l.locked).to_string()),
        ),
        (
            "rtgauge_clocksync_clock_class",
            "ptp4l: the grandmaster's IEEE 1588 clockClass (6: locked to a primary reference, 7: holdover, 248: default, 255: slave-only).",
            |f| f.last.as_ref()?.clock_class.map(|v| v.to_string()),
        ),
    ]
}

/// The counters across restarts: (name, help, value).
fn counters() -> [(&'static str, &'static str, Count); 4] {
    [
        (
            "rtgauge_clocksync_polls_total",
            "Polls of the reference, across restarts.",
            |f| f.polls_total,
        ),
        (
            "rtgauge_clocksync_failed_polls_total",
            "Polls that got no reading (no answer, a timeout, garbage), across restarts.",
            |f| f.failed_polls_total,
        ),
        (
            "rtgauge_clocksync_lock_losses_total",
            "Polls that found the reference unlocked after a locked one, across restarts.",
            |f| f.lock_losses_total,
        ),
        (
            "rtgauge_clocksync_state_changes_total",
            "Changes of the daemon's state (leap status and selected source; port and servo state), across restarts.",
            |f| f.state_changes_total,
        ),
    ]
}

fn labels(f: &RefFigures) -> String {
    format!(
        "reference=\"{}\",source=\"{}\"",
        label_value(f.reference),
        label_value(&f.source)
    )
}

pub(super) fn render(info: &Info, figures: &[RefFigures], format: Format) -> String {
    let om = format == Format::OpenMetrics;
    let mut out = String::new();
    info_family(&mut out, info, om);
    for (name, help, value) in gauges() {
        let _ = writeln!(out, "# HELP {name} {help}");
        let _ = writeln!(out, "# TYPE {name} gauge");
        for f in figures {
            if let Some(v) = value(f) {
                let _ = writeln!(out, "{name}{{{}}} {v}", labels(f));
            }
        }
    }
    let name = "rtgauge_clocksync_port_state";
    let _ = writeln!(
        out,
        "# HELP {name} ptp4l: 1 for the port's IEEE 1588 state (label state), 0 for the others."
    );
    let _ = writeln!(out, "# TYPE {name} gauge");
    for f in figures {
        let Some(port) = f.last.as_ref().and_then(|l| l.port_state.as_deref()) else {
            continue;
        };
        for state in PORT_STATES {
            let on = u8::from(state == port);
            let _ = writeln!(out, "{name}{{{},state=\"{state}\"}} {on}", labels(f));
        }
    }
    for (name, help, value) in counters() {
        let family = if om {
            name.trim_end_matches("_total")
        } else {
            name
        };
        let _ = writeln!(out, "# HELP {family} {help}");
        let _ = writeln!(out, "# TYPE {family} counter");
        for f in figures {
            let _ = writeln!(out, "{name}{{{}}} {}", labels(f), value(f));
        }
    }
    start_time_family(&mut out, info);
    if om {
        out.push_str("# EOF\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figures() -> Vec<RefFigures> {
        vec![
            RefFigures {
                reference: "chrony",
                source: "/run/chrony/chronyd.sock".into(),
                last: Some(Status {
                    reference: "chrony",
                    answered: true,
                    offset_ns: Some(-4_998_628),
                    path_delay_ns: Some(2_836),
                    frequency_ppb: Some(64.0),
                    locked: true,
                    error_bound_ns: Some(5_002_376.0),
                    polls: 3,
                    ..Status::default()
                }),
                interval_max_ns: Some(4_999_100),
                alltime_max_ns: Some(5_000_200),
                polls_total: 120,
                failed_polls_total: 2,
                lock_losses_total: 1,
                state_changes_total: 3,
            },
            RefFigures {
                reference: "ptp4l",
                source: "/var/run/ptp4l".into(),
                last: Some(Status {
                    reference: "ptp4l",
                    answered: true,
                    offset_ns: Some(244),
                    path_delay_ns: Some(2_290),
                    port_state: Some("UNCALIBRATED".into()),
                    clock_class: Some(248.0),
                    ..Status::default()
                }),
                ..RefFigures::default()
            },
        ]
    }

    fn info() -> Info {
        Info {
            host: "rt-host-1".into(),
            kernel: "6.12.0-rt".into(),
            preemption: "PREEMPT_RT".into(),
            mode: "normal".into(),
            probe: "clocksync".into(),
            period_seconds: 1.0,
            interval_seconds: 300.0,
            version: "0.1.0".into(),
            started_unix_s: 1_795_000_000.0,
            ..Info::default()
        }
    }

    #[test]
    fn offsets_are_signed_seconds_and_states_are_labelled() {
        let text = render(&info(), &figures(), Format::Text);
        let chrony = "reference=\"chrony\",source=\"/run/chrony/chronyd.sock\"";
        for line in [
            format!("rtgauge_clocksync_offset_seconds{{{chrony}}} -0.004998628\n"),
            format!("rtgauge_clocksync_offset_interval_max_seconds{{{chrony}}} 0.0049991\n"),
            format!("rtgauge_clocksync_frequency_ppb{{{chrony}}} 64\n"),
            format!("rtgauge_clocksync_locked{{{chrony}}} 1\n"),
            format!("rtgauge_clocksync_up{{{chrony}}} 1\n"),
            format!("rtgauge_clocksync_lock_losses_total{{{chrony}}} 1\n"),
            "rtgauge_clocksync_port_state{reference=\"ptp4l\",source=\"/var/run/ptp4l\",state=\"UNCALIBRATED\"} 1\n".into(),
            "rtgauge_clocksync_port_state{reference=\"ptp4l\",source=\"/var/run/ptp4l\",state=\"SLAVE\"} 0\n".into(),
            "rtgauge_clocksync_clock_class{reference=\"ptp4l\",source=\"/var/run/ptp4l\"} 248\n".into(),
        ] {
            assert!(text.contains(&line), "{line} not in\n{text}");
        }
        // chrony has no port, ptp4l no frequency: no series rather than a made-up value.
        assert!(!text.contains(&format!("rtgauge_clocksync_port_state{{{chrony}")));
        assert!(!text.contains("rtgauge_clocksync_frequency_ppb{reference=\"ptp4l\""));
        let om = render(&info(), &figures(), Format::OpenMetrics);
        assert!(
            om.contains("# TYPE rtgauge_clocksync_polls counter\n"),
            "{om}"
        );
        assert!(om.ends_with("# EOF\n"));
        assert_eq!(
            format_for("application/vnd.google.protobuf;q=0.7,application/openmetrics-text;version=1.0.0;q=0.5"),
            Format::OpenMetrics
        );
        assert_eq!(format_for("application/vnd.google.protobuf"), Format::Text);
    }

    #[test]
    fn the_clocksync_exposition_is_stable() {
        insta::assert_snapshot!(
            "clocksync_text_0_0_4",
            render(&info(), &figures(), Format::Text)
        );
    }
}
