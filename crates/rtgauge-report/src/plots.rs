//! The plots of a report, computed once from the result documents and drawn twice: in the
//! browser by uPlot (the model is inlined as JSON) and as SVG/PNG by plotters (`--images`).
//!
//! Values stay integer nanoseconds in the results; here they become floating-point numbers in
//! the display unit of each chart (ns, µs or ms), which is formatting.

use crate::dist::Dist;
use crate::format::TimeUnit;
use rtgauge_result::{file_safe, ProbeRun, ProbeStatus, RunResult, Series, SeriesKey};
use serde::Serialize;
use std::collections::BTreeMap;

/// Most bins of a histogram chart.
const HISTOGRAM_BINS: f64 = 400.0;
/// Bins per decade of a histogram drawn on a logarithmic value axis.
const LOG_BINS_PER_DECADE: f64 = 40.0;
/// Value ranges wider than this ratio (max / min) get logarithmic axes.
const LOG_RATIO: f64 = 50.0;
/// Spacing of the percentile curve, in "nines" (−log10(1 − p)).
const NINES_STEP: f64 = 0.05;
/// Reference values a series may carry as metrics (in ns), drawn on its percentile chart as
/// dashed lines in its colour: a task's deadline and its predicted worst response.
const REFERENCE_METRICS: [(&str, &str); 2] = [
    ("deadline_ns", "deadline"),
    ("predicted_wcrt_ns", "predicted worst"),
];
/// Cells of a violin's density outline, evenly spaced on the chart's value axis.
const VIOLIN_CELLS: usize = 48;
/// Fewer samples than this give no violin: their outline would be noise, not a shape.
const VIOLIN_MIN_SAMPLES: u64 = 50;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChartKind {
    Histogram,
    Percentiles,
    Intervals,
    Boxes,
    Sizes,
    Recording,
    /// Block maxima against their return period, with the extreme-value fit and its band.
    ReturnLevels,
}

/// How an axis maps values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Scale {
    Linear,
    Log,
    /// x = −log10(1 − p): 1 is p90, 2 is p99, 3 is p99.9 (labelled as percentiles).
    Nines,
    /// Byte sizes on a log2 axis.
    Bytes,
}

/// One line of a chart: a value (or a gap) per x.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Line {
    pub label: String,
    pub values: Vec<Option<f64>>,
    pub color: usize,
    pub dashed: bool,
}

/// A box of a box plot: the box spans p25–p75, whiskers run from min to `upper`, and a dot
/// marks the maximum.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BoxStat {
    pub label: String,
    pub min: f64,
    pub p25: f64,
    pub median: f64,
    pub p75: f64,
    pub upper: f64,
    /// Which percentile `upper` is (p99, or the highest the sample count supports).
    pub upper_label: String,
    pub max: f64,
    pub color: usize,
    /// The violin around the box: `[value, relative density]` points from min to max, the
    /// density per unit of the drawn value axis (linear or logarithmic) normalised to 1 at the
    /// densest cell. Empty when the series has too few samples for a shape.
    pub violin: Vec<[f64; 2]>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Chart {
    /// Unique within a report; also the file name of `--images` (`cyclic-latency-rt-none-hist`).
    pub id: String,
    pub kind: ChartKind,
    pub probe: String,
    pub title: String,
    /// How to read it, one sentence.
    pub note: String,
    pub x_label: String,
    pub y_label: String,
    pub x_scale: Scale,
    pub y_scale: Scale,
    pub x: Vec<f64>,
    pub lines: Vec<Line>,
    pub boxes: Vec<BoxStat>,
    /// Draw lines as steps (histograms).
    pub step: bool,
}

impl Chart {
    /// A chart of `lines` over `x`, its value axis fitted to `lo..=hi` ([`value_scale`]), drawn
    /// as lines (not steps), with no boxes; the caller names it and labels its axes.
    pub(crate) fn of_lines(
        kind: ChartKind,
        x_scale: Scale,
        x: Vec<f64>,
        lines: Vec<Line>,
        (lo, hi): (f64, f64),
    ) -> Chart {
        Chart {
            id: String::new(),
            kind,
            probe: String::new(),
            title: String::new(),
            note: String::new(),
            x_label: String::new(),
            y_label: String::new(),
            x_scale,
            y_scale: value_scale(lo, hi),
            x,
            lines,
            boxes: Vec::new(),
            step: false,
        }
    }
}

/// Raw samples to plot over time, from a recording (`run --record`). The recorder's reader
/// builds these; [`RecordingPlot::from_samples`] decimates millions of samples to a min/max
/// envelope that a browser draws fluidly.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordingPlot {
    /// The recorded series; it names the chart and its anchor.
    pub key: SeriesKey,
    /// Seconds since the start of measurement.
    pub t_s: Vec<f64>,
    pub min_ns: Vec<u64>,
    pub max_ns: Vec<u64>,
    pub samples: u64,
    pub dropped: u64,
}

impl RecordingPlot {
    /// Decimates `(time since start ns, value ns)` samples, in time order, into at most
    /// `points` buckets keeping each bucket's minimum and maximum, so no spike is lost.
    pub fn from_samples(
        key: SeriesKey,
        samples: impl ExactSizeIterator<Item = (u64, u64)>,
        points: usize,
        dropped: u64,
    ) -> RecordingPlot {
        let mut d = Decimator::new(key, samples.len() as u64, points);
        for (t, v) in samples {
            d.push(t, v);
        }
        d.finish(dropped)
    }
}

/// Streams samples into a [`RecordingPlot`] in constant memory per output point, for
/// recordings too large to hold (10^8 samples and more).
#[derive(Debug)]
pub struct Decimator {
    plot: RecordingPlot,
    per_bucket: u64,
    in_bucket: u64,
    lo: u64,
    hi: u64,
    t0: u64,
}

impl Decimator {
    /// `total` is the number of samples that will be pushed; `points` the most output points.
    pub fn new(key: SeriesKey, total: u64, points: usize) -> Decimator {
        Decimator {
            plot: RecordingPlot {
                key,
                t_s: Vec::new(),
                min_ns: Vec::new(),
                max_ns: Vec::new(),
                samples: 0,
                dropped: 0,
            },
            per_bucket: total.div_ceil(points.max(1) as u64).max(1),
            in_bucket: 0,
            lo: u64::MAX,
            hi: 0,
            t0: 0,
        }
    }

    pub fn push(&mut self, at_ns: u64, value_ns: u64) {
        if self.in_bucket == 0 {
            self.t0 = at_ns;
        }
        self.lo = self.lo.min(value_ns);
        self.hi = self.hi.max(value_ns);
        self.in_bucket += 1;
        self.plot.samples += 1;
        if self.in_bucket == self.per_bucket {
            self.flush();
        }
    }

    fn flush(&mut self) {
        if self.in_bucket > 0 {
            self.plot.t_s.push(self.t0 as f64 / 1e9);
            self.plot.min_ns.push(self.lo);
            self.plot.max_ns.push(self.hi);
        }
        self.in_bucket = 0;
        self.lo = u64::MAX;
        self.hi = 0;
    }

    pub fn finish(mut self, dropped: u64) -> RecordingPlot {
        self.flush();
        self.plot.dropped = dropped;
        self.plot
    }
}

/// What one line of an overlay is: which result, run and series.
struct Member<'a> {
    result: usize,
    run: &'a ProbeRun,
    series: &'a Series,
}

fn labels_text(labels: &BTreeMap<String, String>) -> String {
    labels
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn is_sized(s: &Series) -> bool {
    s.labels
        .get("size")
        .is_some_and(|v| size_bytes(v).is_some())
}

fn size_bytes(v: &str) -> Option<f64> {
    v.parse::<f64>()
        .ok()
        .or_else(|| crate::units::parse_size(v).map(|b| b as f64))
}

/// Assigns unique ids (`-2`, `-3` suffixes) in order.
fn unique_ids(charts: &mut [Chart]) {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for c in charts {
        let n = seen.entry(c.id.clone()).or_insert(0);
        *n += 1;
        if *n > 1 {
            c.id = format!("{}-{}", c.id, n);
        }
    }
}

/// Every chart for `results` (several results are overlaid), grouped by probe in the order
/// the probes first appear, plus one chart per recording.
pub fn build_charts(
    results: &[RunResult],
    names: &[String],
    recordings: &[RecordingPlot],
) -> Vec<Chart> {
    let multi = results.len() > 1;
    let result_name = |i: usize| {
        names
            .get(i)
            .cloned()
            .unwrap_or_else(|| format!("#{}", i + 1))
    };
    let probes = rtgauge_result::distinct_titles(results.iter().flat_map(|r| &r.runs));
    let mut charts = Vec::new();
    for probe in &probes {
        let probe = probe.as_str();
        let members: Vec<Member> = results
            .iter()
            .enumerate()
            .flat_map(|(ri, r)| {
                r.runs
                    .iter()
                    .filter(|run| run.title() == probe && run.status == ProbeStatus::Ok)
                    .flat_map(move |run| {
                        run.series
                            .iter()
                            .filter(|s| s.stats.count > 0)
                            .map(move |series| Member {
                                result: ri,
                                run,
                                series,
                            })
                    })
            })
            .collect();
        // Groups of (series name, mode, load) in first-seen order.
        let mut groups: Vec<(String, String, String)> = Vec::new();
        for m in &members {
            let g = (
                m.series.name.clone(),
                m.run.mode.clone(),
                m.run.load.clone(),
            );
            if !groups.contains(&g) {
                groups.push(g);
            }
        }
        let line_label = |m: &Member, with_name: bool| {
            let mut parts = Vec::new();
            if multi {
                parts.push(result_name(m.result));
            }
            if with_name {
                parts.push(m.series.name.clone());
            }
            let labels = labels_text(&m.series.labels);
            if !labels.is_empty() {
                parts.push(labels);
            }
            if parts.is_empty() {
                m.series.name.clone()
            } else {
                parts.join(" ")
            }
        };
        let mut sized_groups = Vec::new();
        for (name, mode, load) in &groups {
            let group: Vec<&Member> = members
                .iter()
                .filter(|m| m.series.name == *name && m.run.mode == *mode && m.run.load == *load)
                .collect();
            if group.iter().all(|m| is_sized(m.series)) {
                sized_groups.push((name.clone(), mode.clone(), load.clone()));
                continue;
            }
            let lines: Vec<(String, Dist)> = group
                .iter()
                .filter_map(|m| Some((line_label(m, false), Dist::of(m.series)?)))
                .collect();
            let of = SeriesCharts {
                base: file_safe(&[probe, name, mode, load]),
                probe,
                what: format!("{probe} {name} · mode {mode} · load {load}"),
                name,
            };
            // The references are those of the members that have a distribution (the lines).
            let references: Vec<(usize, String, f64)> = group
                .iter()
                .filter(|m| Dist::of(m.series).is_some())
                .enumerate()
                .flat_map(|(color, m)| {
                    let label = line_label(m, false);
                    REFERENCE_METRICS.iter().filter_map(move |(key, what)| {
                        let v = *m.series.metrics.get(*key)?;
                        (v.is_finite() && v > 0.0).then(|| (color, format!("{label} {what}"), v))
                    })
                })
                .collect();
            charts.push(histogram_chart(&of, &lines));
            charts.push(percentile_chart(&of, &lines, &references));
            if let Some(c) = intervals_chart(&of, &group, &line_label) {
                charts.push(c);
            }
            for (i, m) in group.iter().enumerate() {
                let label = line_label(m, false);
                let id = format!("{}-return-levels-{i}", of.base);
                if let Some(c) = crate::worst_case::chart(&id, probe, &of.what, &label, m.series) {
                    charts.push(c);
                }
            }
        }
        // Box plots: one chart per series name, a box per result × mode × load × labels.
        let mut names_seen: Vec<&str> = Vec::new();
        for m in &members {
            if !names_seen.contains(&m.series.name.as_str()) && !is_sized(m.series) {
                names_seen.push(&m.series.name);
            }
        }
        for name in names_seen {
            let group: Vec<&Member> = members.iter().filter(|m| m.series.name == name).collect();
            if let Some(c) = box_chart(probe, name, &group, multi, &result_name) {
                charts.push(c);
            }
        }
        // Time against size: one chart per operation (alloc, free, memcpy…) in each mode and
        // load, a curve per allocator (or other label) and result.
        for (name, mode, load) in &sized_groups {
            let group: Vec<&Member> = members
                .iter()
                .filter(|m| {
                    is_sized(m.series)
                        && m.series.name == *name
                        && m.run.mode == *mode
                        && m.run.load == *load
                })
                .collect();
            if let Some(c) = size_chart(probe, name, mode, load, &group, multi, &result_name) {
                charts.push(c);
            }
        }
    }
    for r in recordings {
        charts.push(recording_chart(r));
    }
    unique_ids(&mut charts);
    charts
}

pub(crate) fn unit_for(max_ns: f64) -> TimeUnit {
    TimeUnit::for_max(max_ns.max(0.0) as u64)
}

pub(crate) fn scale_of(unit: TimeUnit) -> f64 {
    match unit {
        TimeUnit::Ns => 1.0,
        TimeUnit::Us => 1e3,
        TimeUnit::Ms => 1e6,
    }
}

/// 1, 2 or 5 × 10^k, at least `x`.
fn nice_width(x: f64) -> f64 {
    if x <= 1.0 {
        return 1.0;
    }
    let exp = x.log10().floor();
    let base = 10f64.powf(exp);
    for m in [1.0, 2.0, 5.0, 10.0] {
        if m * base >= x {
            return m * base;
        }
    }
    10.0 * base
}

/// What names the charts of one series name in one mode and load.
struct SeriesCharts<'a> {
    /// The start of their ids (`cyclic-latency-rt-none`).
    base: String,
    probe: &'a str,
    /// Their subject in titles (`cyclic latency · mode rt · load none`).
    what: String,
    /// The series' name, on the value axis.
    name: &'a str,
}

/// The smallest minimum and the largest maximum of `lines`.
fn value_range(lines: &[(String, Dist)]) -> (f64, f64) {
    let lo = lines
        .iter()
        .map(|l| l.1.min())
        .fold(f64::INFINITY, f64::min);
    let hi = lines.iter().map(|l| l.1.max()).fold(0.0f64, f64::max);
    (lo, hi)
}

fn histogram_chart(of: &SeriesCharts, lines: &[(String, Dist)]) -> Chart {
    let (lo, hi) = value_range(lines);
    let unit = unit_for(hi);
    let log_x = value_scale(lo, hi) == Scale::Log;
    // Bin edges in ns: a nice linear width, or equal widths on a log axis for wide ranges
    // (so both the body and a tail several decades away are resolved).
    let edges: Vec<f64> = if log_x {
        let (a, b) = (lo.max(1.0).log10(), hi.max(1.0).log10());
        let start = (a * LOG_BINS_PER_DECADE).floor() / LOG_BINS_PER_DECADE;
        let n = ((b - start) * LOG_BINS_PER_DECADE).floor() as usize + 1;
        (0..n)
            .map(|i| 10f64.powf(start + i as f64 / LOG_BINS_PER_DECADE))
            .collect()
    } else {
        let width = nice_width((hi - lo) / HISTOGRAM_BINS);
        let start = (lo / width).floor() * width;
        let n = ((hi - start) / width).floor() as usize + 1;
        (0..n).map(|i| start + i as f64 * width).collect()
    };
    let mut chart_lines = Vec::new();
    for (i, (label, dist)) in lines.iter().enumerate() {
        let mut counts = vec![0u64; edges.len()];
        for (v, c) in dist.buckets() {
            let idx = edges.partition_point(|&e| e <= v).saturating_sub(1);
            counts[idx] += c;
        }
        chart_lines.push(Line {
            label: label.clone(),
            // A log count axis cannot show zero: empty bins are gaps.
            values: counts
                .iter()
                .map(|&c| (c > 0).then_some(c as f64))
                .collect(),
            color: i,
            dashed: false,
        });
    }
    Chart {
        id: format!("{}-hist", of.base),
        kind: ChartKind::Histogram,
        probe: of.probe.to_string(),
        title: format!("Histogram: {}", of.what),
        note: "How often each value occurred; the count axis is logarithmic so that single outliers stay visible. Gaps are empty bins.".into(),
        x_label: format!("{} ({})", of.name, unit.label()),
        y_label: "samples".into(),
        x_scale: if log_x { Scale::Log } else { Scale::Linear },
        y_scale: Scale::Log,
        x: edges.iter().map(|e| e / scale_of(unit)).collect(),
        lines: chart_lines,
        boxes: Vec::new(),
        step: true,
    }
}

/// The percentile curves of `lines`, with `references` (colour, label, ns) as dashed
/// horizontal lines.
fn percentile_chart(
    of: &SeriesCharts,
    lines: &[(String, Dist)],
    references: &[(usize, String, f64)],
) -> Chart {
    let (lo, hi) = value_range(lines);
    // References stay in view: a deadline far above every response is part of the answer.
    let hi = references.iter().map(|r| r.2).fold(hi, f64::max);
    let unit = unit_for(hi);
    // x = nines; each line ends at log10(n): the maximum, where 1 − p = 1/n.
    let mut xs: Vec<f64> = Vec::new();
    let top = lines
        .iter()
        .map(|l| (l.1.count() as f64).log10())
        .fold(0.0f64, f64::max);
    let steps = (top / NINES_STEP).floor() as usize;
    xs.extend((0..=steps).map(|i| i as f64 * NINES_STEP));
    for l in lines {
        xs.push((l.1.count() as f64).log10());
    }
    xs.sort_by(f64::total_cmp);
    xs.dedup_by(|a, b| (*a - *b).abs() < 1e-9);
    let mut chart_lines: Vec<Line> = lines
        .iter()
        .enumerate()
        .map(|(i, (label, dist))| {
            let n = dist.count() as f64;
            let end = n.log10();
            Line {
                label: label.clone(),
                values: xs
                    .iter()
                    .map(|&x| {
                        if x > end + 1e-9 {
                            return None;
                        }
                        let exceed = 10f64.powf(-x);
                        let v = if exceed * n <= 1.0 + 1e-9 {
                            dist.max()
                        } else {
                            dist.quantile(1.0 - exceed)
                        };
                        Some(v / scale_of(unit))
                    })
                    .collect(),
                color: i,
                dashed: false,
            }
        })
        .collect();
    chart_lines.extend(references.iter().map(|(color, label, ns)| Line {
        label: label.clone(),
        values: vec![Some(ns / scale_of(unit)); xs.len()],
        color: *color,
        dashed: true,
    }));
    let mut note = "Value not exceeded by a fraction p of the samples; to the right 1 − p shrinks tenfold per step (p90, p99, p99.9 …) and each curve ends at its maximum, where 1 − p = 1/samples.".to_string();
    if !references.is_empty() {
        note.push_str(" Dashed: each curve's deadline and predicted worst case, in its colour; a curve that ends above its deadline missed it.");
    }
    Chart {
        id: format!("{}-pct", of.base),
        probe: of.probe.to_string(),
        title: format!("Percentiles: {}", of.what),
        note,
        x_label: "1 − p (log scale)".into(),
        y_label: format!("{} ({})", of.name, unit.label()),
        ..Chart::of_lines(
            ChartKind::Percentiles,
            Scale::Nines,
            xs,
            chart_lines,
            (lo, hi),
        )
    }
}

fn intervals_chart(
    of: &SeriesCharts,
    group: &[&Member],
    line_label: &dyn Fn(&Member, bool) -> String,
) -> Option<Chart> {
    let usable: Vec<&&Member> = group
        .iter()
        .filter(|m| {
            m.series.stats.intervals.interval_ns > 0 && !m.series.stats.intervals.max_ns.is_empty()
        })
        .collect();
    if usable.is_empty() {
        return None;
    }
    // Interval starts in ns, across every line (widths can differ between results).
    let mut xs: Vec<u64> = usable
        .iter()
        .flat_map(|m| {
            let iv = &m.series.stats.intervals;
            (0..iv.max_ns.len() as u64).map(move |i| i * iv.interval_ns)
        })
        .collect();
    xs.sort_unstable();
    xs.dedup();
    let hi = usable
        .iter()
        .filter_map(|m| per_op_ns(m.series, m.series.stats.max_ns))
        .fold(0.0f64, f64::max);
    // The smallest interval maximum decides whether the axis needs a log scale.
    let lo = usable
        .iter()
        .flat_map(|m| {
            m.series
                .stats
                .intervals
                .max_ns
                .iter()
                .flatten()
                .filter_map(|&v| per_op_ns(m.series, Some(v)))
        })
        .fold(f64::INFINITY, f64::min);
    let unit = unit_for(hi);
    let lines = usable
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let iv = &m.series.stats.intervals;
            let by_start: BTreeMap<u64, Option<u64>> = iv
                .max_ns
                .iter()
                .enumerate()
                .map(|(k, v)| (k as u64 * iv.interval_ns, *v))
                .collect();
            Line {
                label: line_label(m, false),
                values: xs
                    .iter()
                    .map(|x| {
                        by_start
                            .get(x)
                            .copied()
                            .flatten()
                            .and_then(|v| per_op_ns(m.series, Some(v)))
                            .map(|v| v / scale_of(unit))
                    })
                    .collect(),
                color: i,
                dashed: false,
            }
        })
        .collect();
    let widths: Vec<u64> = usable
        .iter()
        .map(|m| m.series.stats.intervals.interval_ns)
        .collect();
    let width_text = if widths.iter().all(|w| *w == widths[0]) {
        crate::units::format_duration_ns(widths[0])
    } else {
        "varying".into()
    };
    Some(Chart {
        id: format!("{}-intervals", of.base),
        probe: of.probe.to_string(),
        title: format!("Maximum per interval: {}", of.what),
        note: format!("The largest value in each {width_text} interval of the run: spikes, their period and drift over time show here."),
        x_label: "time since the start of measurement (s)".into(),
        y_label: format!("max {} ({})", of.name, unit.label()),
        // Each maximum holds for its whole interval.
        step: true,
        ..Chart::of_lines(
            ChartKind::Intervals,
            Scale::Linear,
            xs.iter().map(|&x| x as f64 / 1e9).collect(),
            lines,
            (lo, hi),
        )
    })
}

use crate::format::per_op as per_op_ns;

/// The smallest minimum and largest maximum of the group, per operation, in ns.
fn per_op_range(group: &[&Member]) -> (f64, f64) {
    let lo = group
        .iter()
        .filter_map(|m| per_op_ns(m.series, m.series.stats.min_ns))
        .fold(f64::INFINITY, f64::min);
    let hi = group
        .iter()
        .filter_map(|m| per_op_ns(m.series, m.series.stats.max_ns))
        .fold(0.0f64, f64::max);
    (lo, hi)
}

fn box_chart(
    probe: &str,
    name: &str,
    group: &[&Member],
    multi: bool,
    result_name: &dyn Fn(usize) -> String,
) -> Option<Chart> {
    let mut boxes = Vec::new();
    let mut members = Vec::new();
    let (lo, hi) = per_op_range(group);
    let unit = unit_for(hi);
    let k = scale_of(unit);
    for m in group {
        let st = &m.series.stats;
        let p = |ns: Option<u64>| per_op_ns(m.series, ns).map(|v| v / k);
        let (Some(min), Some(p25), Some(median), Some(p75), Some(max)) = (
            p(st.min_ns),
            p(st.p25_ns),
            p(st.median_ns),
            p(st.p75_ns),
            p(st.max_ns),
        ) else {
            continue;
        };
        let entries = st.percentiles.entries();
        let (upper_label, upper) = entries[..2]
            .iter()
            .rev()
            .find_map(|e| Some((e.0, p(e.2)?)))
            .unwrap_or(("max", max));
        let mut label = Vec::new();
        if multi {
            label.push(result_name(m.result));
        }
        label.push(m.run.mode.clone());
        label.push(m.run.load.clone());
        let l = labels_text(&m.series.labels);
        if !l.is_empty() {
            label.push(l);
        }
        boxes.push(BoxStat {
            label: label.join(" · "),
            min,
            p25,
            median,
            p75,
            upper,
            upper_label: upper_label.to_string(),
            max,
            color: if multi { m.result } else { boxes.len() },
            violin: Vec::new(),
        });
        members.push(m);
    }
    if boxes.is_empty() {
        return None;
    }
    let log = value_scale(lo, hi) == Scale::Log;
    for (b, m) in boxes.iter_mut().zip(&members) {
        b.violin = violin(
            &m.series.stats,
            |ns| per_op_ns(m.series, Some(ns)).unwrap_or_default() / k,
            b.min,
            b.max,
            log,
        );
    }
    Some(Chart {
        id: format!("{}-box", file_safe(&[probe, name])),
        kind: ChartKind::Boxes,
        probe: probe.to_string(),
        title: format!("By mode and load: {probe} {name}"),
        note: "Box from p25 to p75 with the median as a line; whiskers from the minimum to p99 (or the highest percentile the samples support); the dot is the maximum. The shaded outline is the distribution's density along the axis, scaled to the same width for every box.".into(),
        x_label: "mode · load".into(),
        y_label: format!("{name} ({})", unit.label()),
        x_scale: Scale::Linear,
        y_scale: if log { Scale::Log } else { Scale::Linear },
        x: Vec::new(),
        lines: Vec::new(),
        boxes,
        step: false,
    })
}

/// The density outline of one box: the series' HDR histogram counted into VIOLIN_CELLS equal
/// cells of the drawn axis between `min` and `max` (display units; `display` converts a
/// bucket's ns), lightly smoothed, normalised to 1. On a log axis the cells are equal in
/// log10, so the outline is the density the reader sees, not one squashed into the first
/// cell by a long tail.
fn violin(
    stats: &rtgauge_stats::Summary,
    display: impl Fn(u64) -> f64,
    min: f64,
    max: f64,
    log: bool,
) -> Vec<[f64; 2]> {
    if stats.count < VIOLIN_MIN_SAMPLES || max <= min {
        return Vec::new();
    }
    // On a log axis a minimum of 0 (a per-call time below the clock step) has no position:
    // start at the smallest positive value and count the zeros into the first cell.
    let floor = if log {
        stats
            .histogram
            .buckets
            .iter()
            .map(|&(v, _)| display(v))
            .find(|&v| v > 0.0)
            .unwrap_or(max)
            .max(min)
    } else {
        min
    };
    let axis = |v: f64| if log { v.max(floor).log10() } else { v };
    let (a, b) = (axis(floor), axis(max));
    if b <= a {
        return Vec::new();
    }
    let mut cells = [0.0f64; VIOLIN_CELLS];
    for &(v, n) in &stats.histogram.buckets {
        let f = (axis(display(v)) - a) / (b - a);
        let i = ((f * VIOLIN_CELLS as f64) as usize).min(VIOLIN_CELLS - 1);
        cells[i] += n as f64;
    }
    // A [1 2 1] kernel: HDR buckets are coarser than some cells, which would leave gaps.
    let smooth: Vec<f64> = (0..VIOLIN_CELLS)
        .map(|i| {
            let left = if i > 0 { cells[i - 1] } else { 0.0 };
            let right = cells.get(i + 1).copied().unwrap_or(0.0);
            (left + 2.0 * cells[i] + right) / 4.0
        })
        .collect();
    let peak = smooth.iter().copied().fold(0.0, f64::max);
    if peak <= 0.0 {
        return Vec::new();
    }
    let value = |f: f64| {
        let t = a + f * (b - a);
        if log {
            10f64.powf(t)
        } else {
            t
        }
    };
    let round = |x: f64| (x * 1000.0).round() / 1000.0;
    let mut points = vec![[min, 0.0]];
    points.extend(smooth.iter().enumerate().map(|(i, d)| {
        let centre = value((i as f64 + 0.5) / VIOLIN_CELLS as f64);
        [significant(centre), round(d / peak)]
    }));
    points.push([max, 0.0]);
    points
}

/// Four significant digits: enough to place a point on a chart, short in the inlined JSON.
fn significant(v: f64) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return v;
    }
    let scale = 10f64.powi(3 - v.abs().log10().floor() as i32);
    (v * scale).round() / scale
}

fn size_chart(
    probe: &str,
    name: &str,
    mode: &str,
    load: &str,
    group: &[&Member],
    multi: bool,
    result_name: &dyn Fn(usize) -> String,
) -> Option<Chart> {
    // One curve per result × other labels; x = size in bytes.
    let mut curves: Vec<(String, BTreeMap<String, String>, usize)> = Vec::new();
    for m in group {
        let mut others = m.series.labels.clone();
        others.remove("size");
        let key = (m.series.name.clone(), others, m.result);
        if !curves.contains(&key) {
            curves.push(key);
        }
    }
    let mut sizes: Vec<f64> = group
        .iter()
        .filter_map(|m| size_bytes(m.series.labels.get("size")?))
        .collect();
    sizes.sort_by(f64::total_cmp);
    sizes.dedup();
    if sizes.is_empty() {
        return None;
    }
    let (lo, hi) = per_op_range(group);
    let unit = unit_for(hi);
    let k = scale_of(unit);
    let mut lines = Vec::new();
    for (ci, (series_name, others, result)) in curves.iter().enumerate() {
        let members: Vec<&&Member> = group
            .iter()
            .filter(|m| {
                let mut o = m.series.labels.clone();
                o.remove("size");
                m.series.name == *series_name && o == *others && m.result == *result
            })
            .collect();
        let at = |size: f64, pick: &dyn Fn(&Series) -> Option<u64>| {
            members
                .iter()
                .find(|m| {
                    m.series
                        .labels
                        .get("size")
                        .and_then(|v| size_bytes(v))
                        .is_some_and(|s| s == size)
                })
                .and_then(|m| per_op_ns(m.series, pick(m.series)))
                .map(|v| v / k)
        };
        let mut base = Vec::new();
        if multi {
            base.push(result_name(*result));
        }
        let l = labels_text(others);
        if !l.is_empty() {
            base.push(l);
        }
        let base = base.join(" ");
        let base = if base.is_empty() {
            name.to_string()
        } else {
            base
        };
        lines.push(Line {
            label: format!("{base} median"),
            values: sizes
                .iter()
                .map(|&s| at(s, &|x| x.stats.median_ns))
                .collect(),
            color: ci,
            dashed: false,
        });
        lines.push(Line {
            label: format!("{base} max"),
            values: sizes.iter().map(|&s| at(s, &|x| x.stats.max_ns)).collect(),
            color: ci,
            dashed: true,
        });
    }
    Some(Chart {
        id: format!("{}-sizes", file_safe(&[probe, name, mode, load])),
        probe: probe.to_string(),
        title: format!("Time against size: {probe} {name} · mode {mode} · load {load}"),
        note: "Median (solid) and maximum (dashed) time of one operation for each size: the worst case is what a real-time budget must cover.".into(),
        x_label: "size (bytes, log scale)".into(),
        y_label: format!("time per operation ({})", unit.label()),
        ..Chart::of_lines(ChartKind::Sizes, Scale::Bytes, sizes, lines, (lo, hi))
    })
}

/// A logarithmic axis when the values span more than [`LOG_RATIO`], so a tail decades away
/// from the body stays readable; linear otherwise.
pub(crate) fn value_scale(lo: f64, hi: f64) -> Scale {
    if hi > LOG_RATIO * lo.max(1.0) {
        Scale::Log
    } else {
        Scale::Linear
    }
}

fn recording_chart(r: &RecordingPlot) -> Chart {
    let hi = r.max_ns.iter().copied().max().unwrap_or(0) as f64;
    let unit = unit_for(hi);
    let k = scale_of(unit);
    Chart {
        id: format!("{}-recording", r.key.file_stem()),
        kind: ChartKind::Recording,
        probe: r.key.run.title(),
        title: format!(
            "Raw samples: {} · {} · load {}: {}",
            r.key.run.title(),
            r.key.run.mode,
            r.key.run.load,
            r.key.series_name()
        ),
        note: format!(
            "{} samples{}; each point is the minimum and maximum of consecutive samples, so no spike is lost. Drag to zoom.",
            r.samples,
            if r.dropped > 0 {
                format!(" ({} dropped while recording)", r.dropped)
            } else {
                String::new()
            }
        ),
        x_label: "time since the start of measurement (s)".into(),
        y_label: format!("value ({})", unit.label()),
        x_scale: Scale::Linear,
        y_scale: Scale::Linear,
        x: r.t_s.clone(),
        lines: vec![
            Line {
                label: "max".into(),
                values: r.max_ns.iter().map(|&v| Some(v as f64 / k)).collect(),
                color: 0,
                dashed: false,
            },
            Line {
                label: "min".into(),
                values: r.min_ns.iter().map(|&v| Some(v as f64 / k)).collect(),
                color: 1,
                dashed: false,
            },
        ],
        boxes: Vec::new(),
        step: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_widths() {
        assert_eq!(nice_width(0.3), 1.0);
        assert_eq!(nice_width(3.0), 5.0);
        assert_eq!(nice_width(11.0), 20.0);
        assert_eq!(nice_width(100.0), 100.0);
    }

    fn summary_of(values: impl IntoIterator<Item = u64>) -> rtgauge_stats::Summary {
        let mut r = rtgauge_stats::Recorder::new(rtgauge_stats::DEFAULT_INTERVAL_NS);
        for (i, v) in values.into_iter().enumerate() {
            r.record(v, i as u64 * 1_000);
        }
        r.summary()
    }

    /// Local maxima of a violin's density, ignoring wiggles below `floor`.
    fn peaks(points: &[[f64; 2]], floor: f64) -> Vec<f64> {
        points
            .windows(3)
            .filter(|w| w[1][1] >= floor && w[1][1] >= w[0][1] && w[1][1] > w[2][1])
            .map(|w| w[1][0])
            .collect()
    }

    #[test]
    fn violin_of_two_clusters_has_two_peaks_and_an_empty_valley() {
        // 10 µs ± 0.5 and 100 µs ± 5, a decade apart: on a log axis, two bumps.
        let values = (0..20_000u64).map(|i| {
            let spread = (i * 7919) % 1000;
            if i % 2 == 0 {
                9_500 + spread
            } else {
                95_000 + 10 * spread
            }
        });
        let st = summary_of(values);
        let (min, max) = (st.min_ns.unwrap() as f64, st.max_ns.unwrap() as f64);
        let v = violin(&st, |ns| ns as f64, min, max, true);
        assert_eq!(v.len(), VIOLIN_CELLS + 2);
        assert_eq!(v[0], [min, 0.0]);
        assert_eq!(v[v.len() - 1], [max, 0.0]);
        let top = v.iter().map(|p| p[1]).fold(0.0, f64::max);
        assert_eq!(top, 1.0);
        let p = peaks(&v, 0.3);
        assert_eq!(p.len(), 2, "{v:?}");
        assert!(p[0] > 8_000.0 && p[0] < 12_000.0, "{p:?}");
        assert!(p[1] > 80_000.0 && p[1] < 120_000.0, "{p:?}");
        // Between the clusters (30 µs, the geometric middle) nothing was measured.
        let valley = v
            .iter()
            .find(|q| q[0] > 25_000.0 && q[0] < 40_000.0)
            .unwrap();
        assert_eq!(valley[1], 0.0, "{v:?}");
        // Values are in increasing order, so the outline does not fold over itself.
        assert!(v.windows(2).all(|w| w[0][0] <= w[1][0]), "{v:?}");
    }

    #[test]
    fn violin_needs_enough_samples_and_a_range() {
        let few = summary_of((0..10).map(|i| 1_000 + i));
        assert!(violin(&few, |ns| ns as f64, 1_000.0, 1_009.0, false).is_empty());
        let flat = summary_of(std::iter::repeat_n(5_000, 1_000));
        assert!(violin(&flat, |ns| ns as f64, 5_000.0, 5_000.0, false).is_empty());
    }

    #[test]
    fn violin_on_a_linear_axis_follows_the_values() {
        // Uniform from 1 to 2 µs with a tenth of the samples at 3 µs: the top cell holds the
        // densest part.
        let values = (0..10_000u64).map(|i| {
            if i % 10 == 0 {
                3_000
            } else {
                1_000 + i % 1_000
            }
        });
        let st = summary_of(values);
        let v = violin(&st, |ns| ns as f64 / 1e3, 1.0, 3.0, false);
        let densest = v.iter().max_by(|a, b| a[1].total_cmp(&b[1])).unwrap();
        assert!(densest[0] > 2.9, "{v:?}");
        // The uniform part is about a ninth as dense per cell as the spike's cell (1 k vs
        // 9 k samples over 24 cells), and the gap between 2 and 3 µs is empty.
        let gap = v.iter().find(|q| q[0] > 2.3 && q[0] < 2.7).unwrap();
        assert_eq!(gap[1], 0.0, "{v:?}");
    }

    #[test]
    fn decimation_keeps_spikes() {
        let samples: Vec<(u64, u64)> = (0..1_000_000u64)
            .map(|i| (i * 1000, if i == 777_777 { 99_999 } else { 10 }))
            .collect();
        let p = RecordingPlot::from_samples(
            rtgauge_result::SeriesKey {
                run: rtgauge_result::RunKey::new("cyclic", None, "rt", "none"),
                name: "latency".into(),
                labels: [("cpu".to_string(), "0".to_string())].into(),
            },
            samples.iter().copied(),
            1000,
            0,
        );
        assert!(p.t_s.len() <= 1000);
        assert_eq!(p.max_ns.iter().copied().max(), Some(99_999));
        assert_eq!(p.samples, 1_000_000);
    }
}
