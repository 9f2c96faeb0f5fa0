//! The exposition: what a scrape or the textfile shows, in the Prometheus text format 0.0.4 or
//! OpenMetrics 1.0 (the protobuf format is in `protobuf.rs`).

use super::families::{Families, CYCLIC};
use rtgauge_core::live::EXPORT_BOUNDS_NS;
use std::fmt::Write as _;

/// What a scrape shows besides the cells: per CPU, from the store and the finished intervals.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct CpuState {
    /// Maximum of the last finished interval (None before the first one ends).
    pub last_interval_max_ns: Option<u64>,
    /// Its cause, where the trace explained it (a task by name, an IRQ, `gap`…).
    pub last_interval_cause: Option<String>,
    /// Highest interval maximum over the whole uptime, earlier processes included.
    pub alltime_interval_max_ns: Option<u64>,
}

/// The `rtgauge_info` labels, and the families they describe.
#[derive(Debug, Clone)]
pub(super) struct Info {
    pub families: Families,
    pub host: String,
    pub kernel: String,
    pub preemption: String,
    pub mode: String,
    pub probe: String,
    pub period_seconds: f64,
    pub interval_seconds: f64,
    pub version: String,
    /// When this process started (Unix seconds): `process_start_time_seconds`, so a consumer
    /// can tell a restart although the counters go on from the history's totals.
    pub started_unix_s: f64,
}

impl Default for Info {
    fn default() -> Info {
        Info {
            families: CYCLIC,
            host: String::new(),
            kernel: String::new(),
            preemption: String::new(),
            mode: String::new(),
            probe: String::new(),
            period_seconds: 0.0,
            interval_seconds: 0.0,
            version: String::new(),
            started_unix_s: 0.0,
        }
    }
}

/// One CPU's figures at the moment of a scrape.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct CpuFigures {
    pub cpu: usize,
    /// Non-cumulative bucket counts of this process, [`EXPORT_BOUNDS_NS`] then `+Inf`.
    pub buckets: Vec<u64>,
    pub sum_ns: u64,
    /// The native histogram's counts (rtgauge_core::live::native_bucket_of) and zero bucket.
    pub native: Vec<u64>,
    pub native_zero: u64,
    /// The counters across restarts: what the history holds (never more, so a restart after
    /// any stop goes on from at least this value).
    pub samples_total: u64,
    pub overruns_total: u64,
    pub state: CpuState,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Format {
    /// text/plain; version=0.0.4
    Text,
    /// application/openmetrics-text; version=1.0.0
    OpenMetrics,
    /// Prometheus's protobuf, asked for by a Prometheus that reads native histograms.
    Protobuf,
}

impl Format {
    pub fn from_accept(accept: &str) -> Format {
        if accept.contains("application/vnd.google.protobuf") {
            Format::Protobuf
        } else if accept.contains("application/openmetrics-text") {
            Format::OpenMetrics
        } else {
            Format::Text
        }
    }

    pub fn content_type(self) -> &'static str {
        match self {
            Format::Text => "text/plain; version=0.0.4; charset=utf-8",
            Format::OpenMetrics => "application/openmetrics-text; version=1.0.0; charset=utf-8",
            Format::Protobuf => super::protobuf::CONTENT_TYPE,
        }
    }

    pub fn body(self, info: &Info, figures: &[CpuFigures]) -> Vec<u8> {
        match self {
            Format::Protobuf => super::protobuf::encode(info, figures),
            text => render(info, figures, text).into_bytes(),
        }
    }
}

pub(super) fn seconds(ns: u64) -> String {
    format!("{}", ns as f64 / 1e9)
}

pub(super) fn label_value(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// `rtgauge_info`: what is measured, on which system (an info family in OpenMetrics, a gauge
/// of 1 in 0.0.4).
pub(super) fn info_family(out: &mut String, info: &Info, om: bool) {
    let (name, kind, help) = if om {
        ("rtgauge", "info", "What is measured, and on which system.")
    } else {
        (
            "rtgauge_info",
            "gauge",
            "What is measured, and on which system (always 1).",
        )
    };
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
    let _ = writeln!(
        out,
        "rtgauge_info{{host=\"{}\",kernel=\"{}\",preemption=\"{}\",mode=\"{}\",probe=\"{}\",period_seconds=\"{}\",interval_seconds=\"{}\",version=\"{}\"}} 1",
        label_value(&info.host),
        label_value(&info.kernel),
        label_value(&info.preemption),
        label_value(&info.mode),
        label_value(&info.probe),
        info.period_seconds,
        info.interval_seconds,
        label_value(&info.version),
    );
}

/// `process_start_time_seconds`: a change is a restart.
pub(super) fn start_time_family(out: &mut String, info: &Info) {
    let _ = writeln!(
        out,
        "# HELP process_start_time_seconds When this monitor process started (Unix time): a change is a restart."
    );
    let _ = writeln!(out, "# TYPE process_start_time_seconds gauge");
    let _ = writeln!(out, "process_start_time_seconds {}", info.started_unix_s);
}

/// The exposition of `figures` in `format`: the same families in both, OpenMetrics with its
/// own counter and info conventions and the closing `# EOF`.
pub(super) fn render(info: &Info, figures: &[CpuFigures], format: Format) -> String {
    let om = format == Format::OpenMetrics;
    let mut out = String::new();
    let family = |out: &mut String, name: &str, kind: &str, help: &str| {
        let _ = writeln!(out, "# HELP {name} {help}");
        let _ = writeln!(out, "# TYPE {name} {kind}");
    };
    info_family(&mut out, info, om);
    let names = &info.families;
    let (histogram, help) = names.histogram;
    family(&mut out, histogram, "histogram", help);
    for f in figures {
        let mut cumulative = 0;
        for (i, count) in f.buckets.iter().enumerate() {
            cumulative += count;
            let le = EXPORT_BOUNDS_NS
                .get(i)
                .map_or("+Inf".to_string(), |&b| seconds(b));
            let _ = writeln!(
                out,
                "{histogram}_bucket{{cpu=\"{}\",le=\"{le}\"}} {cumulative}",
                f.cpu
            );
        }
        let _ = writeln!(
            out,
            "{histogram}_sum{{cpu=\"{}\"}} {}",
            f.cpu,
            seconds(f.sum_ns)
        );
        let _ = writeln!(out, "{histogram}_count{{cpu=\"{}\"}} {cumulative}", f.cpu);
    }
    // The interval maximum carries its cause, when known, as a `cause` label.
    type Value<'f> = dyn Fn(&CpuState) -> Option<(u64, Option<&str>)> + 'f;
    let gauge = |out: &mut String, name: &str, help: &str, value: &Value| {
        let _ = writeln!(out, "# HELP {name} {help}");
        let _ = writeln!(out, "# TYPE {name} gauge");
        for f in figures {
            if let Some((v, cause)) = value(&f.state) {
                let cause = cause
                    .map(|c| format!(",cause=\"{}\"", label_value(c)))
                    .unwrap_or_default();
                let _ = writeln!(out, "{name}{{cpu=\"{}\"{cause}}} {}", f.cpu, seconds(v));
            }
        }
    };
    let ((last, last_help), (alltime, alltime_help)) = (names.interval_max, names.alltime_max);
    gauge(&mut out, last, last_help, &|s| {
        s.last_interval_max_ns
            .map(|v| (v, s.last_interval_cause.as_deref()))
    });
    gauge(&mut out, alltime, alltime_help, &|s| {
        s.alltime_interval_max_ns.map(|v| (v, None))
    });
    let counter = |out: &mut String, name: &str, help: &str, value: &dyn Fn(&CpuFigures) -> u64| {
        let family_name = if om {
            name.trim_end_matches("_total")
        } else {
            name
        };
        let _ = writeln!(out, "# HELP {family_name} {help}");
        let _ = writeln!(out, "# TYPE {family_name} counter");
        for f in figures {
            let _ = writeln!(out, "{name}{{cpu=\"{}\"}} {}", f.cpu, value(f));
        }
    };
    let ((samples, samples_help), (overruns, overruns_help)) = (names.samples, names.overruns);
    counter(&mut out, samples, samples_help, &|f| f.samples_total);
    counter(&mut out, overruns, overruns_help, &|f| f.overruns_total);
    start_time_family(&mut out, info);
    if om {
        out.push_str("# EOF\n");
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::commands::monitor::families::NOISE;

    /// Samples of 900 ns, 1 µs (twice), 18 µs (twice) and 20 s, in both histograms.
    pub(crate) fn figures() -> Vec<CpuFigures> {
        let mut buckets = vec![0; EXPORT_BOUNDS_NS.len() + 1];
        let mut native = vec![0; 240];
        let mut native_zero = 0;
        for value in [900, 1_000, 1_000, 18_000, 18_000, 20_000_000_000] {
            buckets[rtgauge_core::live::bucket_of(value)] += 1;
            match rtgauge_core::live::native_bucket_of(value) {
                Some(i) => native[i] += 1,
                None => native_zero += 1,
            }
        }
        vec![CpuFigures {
            cpu: 1,
            buckets,
            native,
            native_zero,
            sum_ns: 1_500_000,
            samples_total: 16,
            overruns_total: 3,
            state: CpuState {
                last_interval_max_ns: Some(20_000),
                last_interval_cause: Some("rtg-culprit".into()),
                alltime_interval_max_ns: Some(45_000),
            },
        }]
    }

    #[test]
    fn both_formats_hold_the_same_figures_and_openmetrics_ends_with_eof() {
        let info = Info {
            host: "h\"x".into(),
            ..Info::default()
        };
        let text = render(&info, &figures(), Format::Text);
        let om = render(&info, &figures(), Format::OpenMetrics);
        for body in [&text, &om] {
            assert!(body.contains("rtgauge_latency_seconds_bucket{cpu=\"1\",le=\"0.000001\"} 3\n"));
            assert!(body.contains("rtgauge_latency_seconds_bucket{cpu=\"1\",le=\"+Inf\"} 6\n"));
            assert!(body.contains("rtgauge_latency_seconds_count{cpu=\"1\"} 6\n"));
            assert!(body.contains("rtgauge_samples_total{cpu=\"1\"} 16\n"));
            assert!(body.contains("rtgauge_overruns_total{cpu=\"1\"} 3\n"));
            assert!(body.contains("rtgauge_interval_max_alltime_seconds{cpu=\"1\"} 0.000045\n"));
            assert!(body.contains(
                "rtgauge_interval_max_seconds{cpu=\"1\",cause=\"rtg-culprit\"} 0.00002\n"
            ));
            assert!(body.contains("host=\"h\\\"x\""));
        }
        assert!(om.ends_with("# EOF\n") && !text.contains("# EOF"));
        assert!(om.contains("# TYPE rtgauge_samples counter"));
        assert!(text.contains("# TYPE rtgauge_samples_total counter"));
        assert_eq!(
            Format::from_accept("application/openmetrics-text;version=1.0.0,text/plain;q=0.5"),
            Format::OpenMetrics
        );
        assert_eq!(Format::from_accept("*/*"), Format::Text);
    }

    #[test]
    fn a_noise_monitor_exports_families_of_its_own() {
        let info = Info {
            families: NOISE,
            probe: "noise".into(),
            ..Info::default()
        };
        for format in [Format::Text, Format::OpenMetrics] {
            let body = render(&info, &figures(), format);
            assert!(
                body.contains("rtgauge_noise_window_max_seconds_bucket{cpu=\"1\",le=\"+Inf\"} 6\n")
            );
            assert!(body.contains("rtgauge_noise_windows_total{cpu=\"1\"} 16\n"));
            assert!(body.contains("rtgauge_noise_stalls_total{cpu=\"1\"} 3\n"));
            assert!(
                body.contains("rtgauge_noise_interval_max_alltime_seconds{cpu=\"1\"} 0.000045\n")
            );
            assert!(body.contains("probe=\"noise\""));
            // No family of the cyclic monitor: one meaning per metric name.
            assert!(!body.contains("rtgauge_latency_seconds"), "{body}");
            assert!(!body.contains("rtgauge_samples"), "{body}");
        }
    }

    #[test]
    fn expositions_are_stable() {
        let info = Info {
            families: CYCLIC,
            host: "rt-host-1".into(),
            kernel: "6.12.0-rt".into(),
            preemption: "PREEMPT_RT".into(),
            mode: "rt".into(),
            probe: "cyclic".into(),
            period_seconds: 0.001,
            interval_seconds: 300.0,
            version: "0.1.0".into(),
            started_unix_s: 1_795_000_000.0,
        };
        insta::assert_snapshot!("text_0_0_4", render(&info, &figures(), Format::Text));
        insta::assert_snapshot!(
            "openmetrics",
            render(&info, &figures(), Format::OpenMetrics)
        );
    }
}
