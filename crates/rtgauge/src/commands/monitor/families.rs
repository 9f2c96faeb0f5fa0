//! What a monitor's metric families are called, per probe.

use crate::cli::MonitorProbe;

/// What a monitor's metric families are called and say, per probe: one meaning per name,
/// so a fleet mixing cyclic and noise monitors never adds one to the other.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Families {
    pub probe: &'static str,
    pub histogram: (&'static str, &'static str),
    pub interval_max: (&'static str, &'static str),
    pub alltime_max: (&'static str, &'static str),
    pub samples: (&'static str, &'static str),
    pub overruns: (&'static str, &'static str),
}

pub(super) const CYCLIC: Families = Families {
    probe: rtgauge_probes::names::CYCLIC,
    histogram: (
        "rtgauge_latency_seconds",
        "Wake-up latency of the periodic measuring thread, since this monitor started.",
    ),
    interval_max: (
        "rtgauge_interval_max_seconds",
        "Highest wake-up latency of the last finished interval (rtgauge_info's interval_seconds).",
    ),
    alltime_max: (
        "rtgauge_interval_max_alltime_seconds",
        "Highest interval maximum over the whole uptime, across restarts (kept in the run history).",
    ),
    samples: ("rtgauge_samples_total", "Wake-ups measured, across restarts."),
    overruns: (
        "rtgauge_overruns_total",
        "Periods missed (a wake-up later than a whole period), across restarts.",
    ),
};

pub(super) const NOISE: Families = Families {
    probe: rtgauge_probes::names::NOISE,
    histogram: (
        "rtgauge_noise_window_max_seconds",
        "Longest stall of each polling window (the CPU taken from the polling thread), since this monitor started.",
    ),
    interval_max: (
        "rtgauge_noise_interval_max_seconds",
        "Longest stall of the last finished interval (rtgauge_info's interval_seconds).",
    ),
    alltime_max: (
        "rtgauge_noise_interval_max_alltime_seconds",
        "Longest interval stall over the whole uptime, across restarts (kept in the run history).",
    ),
    samples: (
        "rtgauge_noise_windows_total",
        "Polling windows measured, across restarts.",
    ),
    overruns: (
        "rtgauge_noise_stalls_total",
        "Stalls above the noise threshold, across restarts.",
    ),
};

pub(super) const TIMERLAT: Families = Families {
    probe: rtgauge_probes::names::TIMERLAT,
    histogram: (
        "rtgauge_timerlat_latency_seconds",
        "Wake-up latency of the kernel's timerlat thread (its IRQ context is in the final document), since this monitor started.",
    ),
    interval_max: (
        "rtgauge_timerlat_interval_max_seconds",
        "Highest timerlat thread latency of the last finished interval (rtgauge_info's interval_seconds).",
    ),
    alltime_max: (
        "rtgauge_timerlat_interval_max_alltime_seconds",
        "Highest timerlat interval maximum over the whole uptime, across restarts (kept in the run history).",
    ),
    samples: (
        "rtgauge_timerlat_samples_total",
        "Timerlat thread wake-ups measured, across restarts.",
    ),
    overruns: (
        "rtgauge_timerlat_overruns_total",
        "Timerlat thread wake-ups a whole period or more late, across restarts.",
    ),
};

impl Families {
    pub(super) fn of(probe: MonitorProbe) -> Families {
        match probe {
            MonitorProbe::Cyclic => CYCLIC,
            MonitorProbe::Noise => NOISE,
            MonitorProbe::Timerlat => TIMERLAT,
            MonitorProbe::Clocksync => {
                unreachable!("the clocksync monitor has its own families (sync_exposition.rs)")
            }
        }
    }
}
