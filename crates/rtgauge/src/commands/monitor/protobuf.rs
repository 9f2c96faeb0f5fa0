//! Prometheus's protobuf exposition (`io.prometheus.client.MetricFamily`, length-delimited),
//! the one format in which Prometheus reads native histograms. The messages are the part of
//! Prometheus's `metrics.proto` the monitor writes, with its field numbers; a histogram carries
//! both its classic buckets and its native ones, so a scraper without native histograms still
//! gets the classic histogram.

use super::exposition::{CpuFigures, Info};
use super::families::Families;
use rtgauge_core::live::EXPORT_BOUNDS_NS;
use rtgauge_core::live::{NATIVE_FIRST_INDEX, NATIVE_SCHEMA, NATIVE_ZERO_THRESHOLD_S};

pub const CONTENT_TYPE: &str =
    "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited";

#[derive(Clone, PartialEq, prost::Message)]
pub struct MetricFamily {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub help: String,
    #[prost(enumeration = "MetricType", tag = "3")]
    pub r#type: i32,
    #[prost(message, repeated, tag = "4")]
    pub metric: Vec<Metric>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, prost::Enumeration)]
#[repr(i32)]
pub enum MetricType {
    Counter = 0,
    Gauge = 1,
    Histogram = 4,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Metric {
    #[prost(message, repeated, tag = "1")]
    pub label: Vec<LabelPair>,
    #[prost(message, optional, tag = "2")]
    pub gauge: Option<Value>,
    #[prost(message, optional, tag = "3")]
    pub counter: Option<Value>,
    #[prost(message, optional, tag = "7")]
    pub histogram: Option<Histogram>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct LabelPair {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub value: String,
}

/// `Gauge` and `Counter` are both a message whose field 1 is the value.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Value {
    #[prost(double, tag = "1")]
    pub value: f64,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Histogram {
    #[prost(uint64, tag = "1")]
    pub sample_count: u64,
    #[prost(double, tag = "2")]
    pub sample_sum: f64,
    #[prost(message, repeated, tag = "3")]
    pub bucket: Vec<Bucket>,
    #[prost(sint32, tag = "5")]
    pub schema: i32,
    #[prost(double, tag = "6")]
    pub zero_threshold: f64,
    #[prost(uint64, tag = "7")]
    pub zero_count: u64,
    #[prost(message, repeated, tag = "12")]
    pub positive_span: Vec<BucketSpan>,
    /// Counts of the buckets in the spans, each given as the difference to the one before.
    #[prost(sint64, repeated, tag = "13")]
    pub positive_delta: Vec<i64>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Bucket {
    #[prost(uint64, tag = "1")]
    pub cumulative_count: u64,
    #[prost(double, tag = "2")]
    pub upper_bound: f64,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct BucketSpan {
    /// Gap in bucket indices from the previous span's end (the first: the first index).
    #[prost(sint32, tag = "1")]
    pub offset: i32,
    #[prost(uint32, tag = "2")]
    pub length: u32,
}

/// Spans over the runs of non-empty buckets of `counts` (positions from
/// [`NATIVE_FIRST_INDEX`]), and their counts delta-encoded.
fn spans(counts: &[u64]) -> (Vec<BucketSpan>, Vec<i64>) {
    let mut spans: Vec<BucketSpan> = Vec::new();
    let mut deltas = Vec::new();
    let (mut next_index, mut previous) = (0i32, 0i64);
    let mut in_span = false;
    for (position, &count) in counts.iter().enumerate() {
        let index = NATIVE_FIRST_INDEX + position as i32;
        if count == 0 {
            in_span = false;
            continue;
        }
        match spans.last_mut() {
            Some(span) if in_span => span.length += 1,
            _ => spans.push(BucketSpan {
                offset: if spans.is_empty() {
                    index
                } else {
                    index - next_index
                },
                length: 1,
            }),
        }
        in_span = true;
        next_index = index + 1;
        let count = count as i64;
        deltas.push(count - previous);
        previous = count;
    }
    (spans, deltas)
}

/// The last interval's maximum per CPU, with its cause as a `cause` label when known.
fn interval_maxima(figures: &[CpuFigures]) -> Vec<Metric> {
    figures
        .iter()
        .filter_map(|f| {
            let max = f.state.last_interval_max_ns?;
            let mut label = cpu_label(f.cpu);
            if let Some(cause) = &f.state.last_interval_cause {
                label.push(LabelPair {
                    name: "cause".into(),
                    value: cause.clone(),
                });
            }
            Some(Metric {
                label,
                gauge: Some(Value {
                    value: max as f64 / 1e9,
                }),
                ..Metric::default()
            })
        })
        .collect()
}

fn cpu_label(cpu: usize) -> Vec<LabelPair> {
    vec![LabelPair {
        name: "cpu".into(),
        value: cpu.to_string(),
    }]
}

/// The same families as the text exposition, each histogram with its native buckets too.
pub fn encode(info: &Info, figures: &[CpuFigures]) -> Vec<u8> {
    let names: &Families = &info.families;
    let family = |name: &str, help: &str, kind: MetricType, metric: Vec<Metric>| MetricFamily {
        name: name.into(),
        help: help.into(),
        r#type: kind as i32,
        metric,
    };
    let per_cpu = |value: &dyn Fn(&CpuFigures) -> Option<f64>, counter: bool| -> Vec<Metric> {
        figures
            .iter()
            .filter_map(|f| {
                value(f).map(|v| Metric {
                    label: cpu_label(f.cpu),
                    gauge: (!counter).then_some(Value { value: v }),
                    counter: counter.then_some(Value { value: v }),
                    histogram: None,
                })
            })
            .collect()
    };
    let seconds = |ns: u64| ns as f64 / 1e9;
    let info_labels = [
        ("host", info.host.clone()),
        ("kernel", info.kernel.clone()),
        ("preemption", info.preemption.clone()),
        ("mode", info.mode.clone()),
        ("probe", info.probe.clone()),
        ("period_seconds", info.period_seconds.to_string()),
        ("interval_seconds", info.interval_seconds.to_string()),
        ("version", info.version.clone()),
    ];
    let histograms = figures
        .iter()
        .map(|f| {
            let mut cumulative = 0;
            let bucket = f
                .buckets
                .iter()
                .zip(EXPORT_BOUNDS_NS.iter())
                .map(|(count, &bound)| {
                    cumulative += count;
                    Bucket {
                        cumulative_count: cumulative,
                        upper_bound: seconds(bound),
                    }
                })
                .collect();
            let (positive_span, positive_delta) = spans(&f.native);
            Metric {
                label: cpu_label(f.cpu),
                histogram: Some(Histogram {
                    sample_count: f.buckets.iter().sum(),
                    sample_sum: seconds(f.sum_ns),
                    bucket,
                    schema: NATIVE_SCHEMA,
                    zero_threshold: NATIVE_ZERO_THRESHOLD_S,
                    zero_count: f.native_zero,
                    positive_span,
                    positive_delta,
                }),
                ..Metric::default()
            }
        })
        .collect();
    let families = [
        family(
            "rtgauge_info",
            "What is measured, and on which system (always 1).",
            MetricType::Gauge,
            vec![Metric {
                label: info_labels
                    .into_iter()
                    .map(|(name, value)| LabelPair {
                        name: name.into(),
                        value,
                    })
                    .collect(),
                gauge: Some(Value { value: 1.0 }),
                ..Metric::default()
            }],
        ),
        family(
            names.histogram.0,
            names.histogram.1,
            MetricType::Histogram,
            histograms,
        ),
        family(
            names.interval_max.0,
            names.interval_max.1,
            MetricType::Gauge,
            interval_maxima(figures),
        ),
        family(
            names.alltime_max.0,
            names.alltime_max.1,
            MetricType::Gauge,
            per_cpu(&|f| f.state.alltime_interval_max_ns.map(seconds), false),
        ),
        family(
            names.samples.0,
            names.samples.1,
            MetricType::Counter,
            per_cpu(&|f| Some(f.samples_total as f64), true),
        ),
        family(
            names.overruns.0,
            names.overruns.1,
            MetricType::Counter,
            per_cpu(&|f| Some(f.overruns_total as f64), true),
        ),
        family(
            "process_start_time_seconds",
            "When this monitor process started (Unix time): a change is a restart.",
            MetricType::Gauge,
            vec![Metric {
                gauge: Some(Value {
                    value: info.started_unix_s,
                }),
                ..Metric::default()
            }],
        ),
    ];
    let mut out = Vec::new();
    for f in families {
        prost::Message::encode_length_delimited(&f, &mut out).expect("a Vec grows as needed");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    #[test]
    fn spans_cover_the_runs_of_non_empty_buckets_with_delta_counts() {
        let mut counts = vec![0u64; 20];
        counts[2] = 5;
        counts[3] = 7;
        counts[7] = 1;
        let (spans, deltas) = spans(&counts);
        assert_eq!(
            spans,
            [
                BucketSpan {
                    offset: NATIVE_FIRST_INDEX + 2,
                    length: 2
                },
                BucketSpan {
                    offset: 3,
                    length: 1
                }
            ]
        );
        assert_eq!(deltas, [5, 2, -6]);
        assert_eq!(super::spans(&[0, 0]), (vec![], vec![]));
    }

    #[test]
    fn the_encoding_decodes_to_the_same_figures_in_both_histograms() {
        let figures = super::super::exposition::tests::figures();
        let bytes = encode(&Info::default(), &figures);
        let mut rest = bytes.as_slice();
        let mut families = Vec::new();
        while !rest.is_empty() {
            families.push(MetricFamily::decode_length_delimited(&mut rest).unwrap());
        }
        let names: Vec<&str> = families.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "rtgauge_info",
                "rtgauge_latency_seconds",
                "rtgauge_interval_max_seconds",
                "rtgauge_interval_max_alltime_seconds",
                "rtgauge_samples_total",
                "rtgauge_overruns_total",
                "process_start_time_seconds"
            ]
        );
        let h = families[1].metric[0].histogram.clone().unwrap();
        let f = &figures[0];
        assert_eq!(h.sample_count, f.buckets.iter().sum::<u64>());
        assert_eq!(h.bucket.last().unwrap().cumulative_count, 5);
        assert_eq!(h.bucket.len(), EXPORT_BOUNDS_NS.len());
        // The native buckets hold every sample: the zero bucket plus the spans' counts.
        let mut count = h.zero_count as i64;
        let mut running = 0;
        for delta in &h.positive_delta {
            running += delta;
            count += running;
        }
        assert_eq!(count as u64, h.sample_count);
        assert_eq!(h.schema, 3);
        assert_eq!(families[4].metric[0].counter.clone().unwrap().value, 16.0);
        assert_eq!(families[2].metric[0].gauge.clone().unwrap().value, 20e-6);
        let labels: Vec<(&str, &str)> = families[2].metric[0]
            .label
            .iter()
            .map(|l| (l.name.as_str(), l.value.as_str()))
            .collect();
        assert_eq!(labels, [("cpu", "1"), ("cause", "rtg-culprit")]);
    }
}
