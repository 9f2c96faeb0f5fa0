//! The summary printed at the end of a run: per probe × mode × load, the few figures that
//! answer the probe's question, in at most [`MAX_WIDTH`] columns. The full per-series tables
//! are one flag (`run --table full`) or `rtgauge show` away.
//!
//! - cyclic: median, p99, max wake-up latency and overruns per CPU;
//! - response, switch: median and max per source or mechanism, a column pair per placement;
//! - primitive: the slowest calls (per call, by median);
//! - alloc, memop: worst case per allocator or operation, and the size where the cost bends
//!   (per operation for allocations, per byte for memory operations, twice the best so far);
//! - clock: read cost per clock and the TSC verdict;
//! - any other probe: its series with the highest maxima.

use crate::format::{json_text, per_op, Format, Render, Style, TimeUnit};
use crate::table::status_text;
use crate::worst_case;
use rtgauge_result::units::format_size;
use rtgauge_result::{ProbeRun, RunResult, RunStatus, Series};
use serde::Serialize;
use std::fmt::Write as _;

/// No summary line is wider than this (a terminal, a CI log, an e-mail).
pub const MAX_WIDTH: usize = 100;
/// Notes are printed indented by two spaces.
const NOTE_WIDTH: usize = MAX_WIDTH - 2;
/// Rows of one probe run before the rest is left to the full tables.
const MAX_ROWS: usize = 4;
/// Calls listed by the primitive probe's summary.
const SLOWEST_CALLS: usize = 3;
/// A cost at least this many times the best so far marks where a curve bends.
const BEND_FACTOR: f64 = 2.0;

/// The summary of one result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    /// The first line: suite, status, date, modes and loads.
    pub heading: String,
    /// Set when the result is not complete: what that means for its numbers.
    pub status_note: Option<String>,
    pub sections: Vec<Section>,
}

/// One probe (or probe@variant): its question, columns and rows over every mode × load.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Section {
    pub probe: String,
    /// What the figures answer, with their unit: `wake-up latency, µs`.
    pub title: String,
    /// Column headings after the row label.
    pub columns: Vec<String>,
    pub rows: Vec<Row>,
    /// Verdicts and pointers below the rows (TSC, "3 more CPUs").
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// `cpu 0`, `pipe`, `malloc`; prefixed with `mode load` when the result has several.
    pub label: String,
    /// One per column; empty when `status` is set.
    pub cells: Vec<String>,
    /// `skipped: …` or `failed: …` for a run that measured nothing.
    pub status: Option<String>,
}

impl Summary {
    pub fn of(result: &RunResult) -> Summary {
        let combos: Vec<(&str, &str)> = {
            let mut c: Vec<(&str, &str)> = result
                .runs
                .iter()
                .map(|r| (r.mode.as_str(), r.load.as_str()))
                .collect();
            c.dedup();
            c.sort_unstable();
            c.dedup();
            c
        };
        let several = combos.len() > 1;
        let mut sections = Vec::new();
        for title in rtgauge_result::distinct_titles(&result.runs) {
            let runs: Vec<&ProbeRun> = result.runs.iter().filter(|r| r.title() == title).collect();
            let mut s = section(&title, &runs, several, result);
            s.notes
                .extend(runs.iter().filter_map(|r| spike_line(r, several)));
            sections.push(s);
        }
        // A run too short for an estimate is said under the first section it concerns, not
        // again under every probe: the advice (how long to measure) is the same; the report's
        // worst-case charts keep each probe's own count.
        let mut said = false;
        for s in &mut sections {
            let too_short: Vec<String> = result
                .runs
                .iter()
                .filter(|r| r.title() == s.probe)
                .flat_map(|r| too_short_note(r, &note_prefix(r, several)))
                .collect();
            if said {
                s.notes.retain(|n| !too_short.contains(n));
            }
            said |= !too_short.is_empty();
        }
        Summary {
            heading: heading(result),
            status_note: match result.status {
                // An import says where it came from, every time it is shown.
                RunStatus::Complete => imported(result).map(|w| w.message.clone()),
                RunStatus::Interrupted => Some(
                    "INTERRUPTED: the run was stopped; only the probes listed here were measured"
                        .into(),
                ),
                RunStatus::Failed => {
                    Some("FAILED: the run did not finish; the figures are partial".into())
                }
                RunStatus::Broken => Some(
                    "BROKEN: --break stopped the run at its first spike; the figures are partial"
                        .into(),
                ),
            },
            sections,
        }
    }
}

/// Why the run's largest wake-ups were late, in one line (`--trace`): "12 spikes > 100 µs:
/// 9 gap outside Linux up to 5.3 ms, 2 softirq NET_RX up to 310 µs, 1 kworker/0:1 120 µs".
pub fn spike_line(run: &ProbeRun, with_mode: bool) -> Option<String> {
    let smallest = run.spikes.iter().map(|s| s.latency_ns).min()?;
    let prefix = if with_mode {
        format!("{} {}: ", run.mode_label(), run.load)
    } else {
        String::new()
    };
    let n = run.spikes.len();
    let mut line = format!(
        "{prefix}{n} spike{} ≥ {}:",
        if n == 1 { "" } else { "s" },
        rtgauge_result::units::format_duration_ns(smallest)
    );
    // As many causes as fit the line, the rest counted; the full list is in the result.
    const REST: usize = ", 99 more causes".len();
    let groups = rtgauge_result::spike::dominant_causes(&run.spikes);
    for (i, g) in groups.iter().enumerate() {
        let held = rtgauge_result::units::format_duration_ns(g.longest_ns);
        let cause = if g.count == 1 {
            format!("1 {} {held}", g.label)
        } else {
            format!("{} {} up to {held}", g.count, g.label)
        };
        let separator = if i == 0 { " " } else { ", " };
        let last = i + 1 == groups.len();
        let room = MAX_WIDTH - if last { 0 } else { REST };
        if line.chars().count() + separator.len() + cause.chars().count() > room {
            let more = groups.len() - i;
            line.push_str(&format!(
                "{separator}{more} more cause{}",
                if more == 1 { "" } else { "s" }
            ));
            break;
        }
        line.push_str(separator);
        line.push_str(&cause);
    }
    Some(clip(&line, MAX_WIDTH))
}

/// The note an import leaves in its result (source tool, version and file).
fn imported(result: &RunResult) -> Option<&rtgauge_result::Warning> {
    result.warnings.iter().find(|w| w.code == "imported")
}

fn heading(result: &RunResult) -> String {
    let mut parts = vec![match (&result.config.suite, imported(result)) {
        (_, Some(_)) => format!("imported {} {}", result.tool.name, result.tool.version)
            .trim_end()
            .to_string(),
        (Some(s), None) => format!("{s} suite"),
        (None, None) => "rtgauge run".to_string(),
    }];
    if imported(result).is_none() {
        parts.push(result.status.to_string());
    }
    parts.push(if result.started_unix_ns == 0 {
        "date not recorded".to_string()
    } else {
        rtgauge_result::units::utc(result.started_unix_ns, "%Y-%m-%d %H:%M UTC")
    });
    if !result.fingerprint.hostname.is_empty() {
        parts.push(result.fingerprint.hostname.clone());
    }
    parts.push(format!("mode {}", result.config.modes.join(",")));
    parts.push(format!("load {}", result.config.loads.join(",")));
    clip(&parts.join(" · "), MAX_WIDTH)
}

/// Breaks `text` between words into lines of at most `width` characters, continuation lines
/// indented; a word longer than a line is cut.
pub(crate) fn wrap(text: &str, width: usize) -> Vec<String> {
    const INDENT: &str = "  ";
    let mut lines = Vec::new();
    let mut current = String::new();
    for word in text.split(' ') {
        let needed = current.chars().count() + 1 + word.chars().count();
        if !current.is_empty() && current.trim() != "" && needed > width {
            lines.push(clip(&current, width));
            current = INDENT.to_string();
        } else if !current.is_empty() {
            current.push(' ');
        }
        current.push_str(word);
    }
    lines.push(clip(&current, width));
    lines
}

/// Cuts `text` to `width` characters, marking the cut.
fn clip(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        text.to_string()
    } else {
        let mut s: String = text.chars().take(width - 1).collect();
        s.push('…');
        s
    }
}

/// The figures of one probe's runs, shaped by what the probe answers.
fn section(title: &str, runs: &[&ProbeRun], several: bool, result: &RunResult) -> Section {
    let probe = runs.first().map(|r| r.probe.as_str()).unwrap_or_default();
    let all_series = runs.iter().flat_map(|r| r.series.iter());
    let max = all_series
        .filter_map(|s| per_op(s, s.stats.max_ns))
        .fold(0.0f64, f64::max);
    let unit = TimeUnit::for_max(max as u64);
    let mut out = Section {
        probe: title.to_string(),
        title: String::new(),
        columns: Vec::new(),
        rows: Vec::new(),
        notes: Vec::new(),
    };
    let (question, columns) = match probe {
        "cyclic" => ("wake-up latency", vec!["median", "p99", "max", "overruns"]),
        "response" | "switch" => {
            let placements = placements(runs);
            out.columns = placements
                .iter()
                .flat_map(|p| [format!("{p} median"), "max".to_string()])
                .collect();
            (
                if probe == "response" {
                    "event response"
                } else {
                    "context switch"
                },
                Vec::new(),
            )
        }
        "primitive" => ("slowest calls, per call", vec!["median", "p99", "max"]),
        "alloc" => ("allocation, worst case", vec!["max", "at size", "bends at"]),
        "memop" => (
            "memory operations",
            vec!["best GB/s", "worst max÷median", "at size", "bends at"],
        ),
        "clock" => ("clock read cost", vec!["median", "max", "backward"]),
        "noise" => (
            "CPU stalls, longest",
            vec!["max", "events/s", "noise/s", "available"],
        ),
        _ => ("highest maxima", vec!["median", "max"]),
    };
    if out.columns.is_empty() {
        out.columns = columns.into_iter().map(String::from).collect();
    }
    out.title = if probe == "memop" {
        format!("{title}: {question}")
    } else {
        format!("{title}: {question}, {}", unit.label())
    };
    for run in runs {
        let prefix = if several {
            format!("{} {} ", run.mode, run.load)
        } else {
            String::new()
        };
        let note_prefix = note_prefix(run, several);
        if let Some(status) = status_text(&run.status) {
            out.rows.push(Row {
                label: prefix.trim_end().to_string(),
                cells: Vec::new(),
                status: Some(status),
            });
            continue;
        }
        let rows = match probe {
            "cyclic" => cyclic_rows(run, unit),
            "response" | "switch" => placement_rows(run, unit, &placements(runs)),
            "primitive" => primitive_rows(run, unit),
            "alloc" => alloc_rows(run, unit),
            "memop" => memop_rows(run),
            "clock" => clock_rows(run, unit),
            "noise" => noise_rows(run, unit),
            _ => generic_rows(run, unit),
        };
        let total = rows.len();
        for (label, cells) in rows.into_iter().take(MAX_ROWS) {
            out.rows.push(Row {
                label: format!("{prefix}{label}"),
                cells,
                status: None,
            });
        }
        if total > MAX_ROWS {
            out.notes.push(format!(
                "{note_prefix}{} more rows in the full tables",
                total - MAX_ROWS
            ));
        }
        if probe == "primitive" {
            let calls = per_call(run).count();
            if calls > SLOWEST_CALLS {
                out.notes.push(format!(
                    "{note_prefix}the {SLOWEST_CALLS} slowest of {calls} calls by median"
                ));
            }
        }
        if probe == "clock" {
            out.notes
                .push(format!("{note_prefix}{}", tsc_verdict(run, result)));
        }
        out.notes.extend(worst_case_notes(run, &note_prefix));
    }
    out
}

type Cells = (String, Vec<String>);

/// `mode load: ` before a note when the result has several of them.
fn note_prefix(run: &ProbeRun, several: bool) -> String {
    if several {
        format!("{} {}: ", run.mode, run.load)
    } else {
        String::new()
    }
}

/// Too few maxima for an estimate: one note for the whole probe run (a short run), not one
/// per series.
fn too_short_note(run: &ProbeRun, note_prefix: &str) -> Vec<String> {
    match worst_case::headline(run).find(|(_, wc)| worst_case::too_few(wc)) {
        Some((_, wc)) => wrap(
            &format!("{note_prefix}{}", worst_case::verdict_text(wc)),
            NOTE_WIDTH,
        ),
        None => Vec::new(),
    }
}

/// The extreme-value estimate of each headline series (at most [`MAX_ROWS`]), then how long
/// a run must be to see a rare latency directly.
fn worst_case_notes(run: &ProbeRun, note_prefix: &str) -> Vec<String> {
    let mut notes = too_short_note(run, note_prefix);
    let shown = worst_case::headline(run).filter(|(_, wc)| !worst_case::too_few(wc));
    for (s, wc) in shown.take(MAX_ROWS) {
        let label = match s.labels.get("cpu") {
            Some(cpu) => format!("{} cpu {cpu}", s.name),
            None => s.display_name(),
        };
        // A refusal's reason says how to fix it: wrapped, never cut.
        notes.extend(wrap(
            &format!(
                "{note_prefix}{label}: {}",
                worst_case::line(s, wc, run.measured_ns)
            ),
            NOTE_WIDTH,
        ));
    }
    if let Some(advice) =
        worst_case::headline(run).find_map(|(_, wc)| worst_case::advice(wc.estimate()?))
    {
        notes.extend(wrap(&format!("{note_prefix}{advice}"), NOTE_WIDTH));
    }
    notes
}

fn fmt(unit: TimeUnit, s: &Series, ns: Option<u64>) -> String {
    per_op(s, ns)
        .map(|v| unit.format(v))
        .unwrap_or_else(|| "–".into())
}

/// Quantile `q` of `s`, or `≥ LIMIT` where an imported histogram's range ends below it.
fn fmt_q(unit: TimeUnit, s: &Series, ns: Option<u64>, q: f64) -> String {
    let beyond = s.counters.get("beyond_histogram").copied().unwrap_or(0);
    match (ns, s.counters.get("histogram_limit_ns")) {
        (None, Some(&limit))
            if beyond > 0 && rtgauge_stats::percentile_supported(q, s.stats.count) =>
        {
            format!("≥ {}", fmt(unit, s, Some(limit)))
        }
        _ => fmt(unit, s, ns),
    }
}

fn cyclic_rows(run: &ProbeRun, unit: TimeUnit) -> Vec<Cells> {
    let mut rows: Vec<(&Series, Cells)> = run
        .series
        .iter()
        .filter(|s| s.name == "latency")
        .map(|s| {
            let label = match s.labels.get("cpu") {
                Some(cpu) => format!("cpu {cpu}"),
                None => s.display_name(),
            };
            let cells = vec![
                fmt_q(unit, s, s.stats.median_ns, 0.5),
                fmt_q(unit, s, s.stats.percentiles.p99_ns, 0.99),
                fmt(unit, s, s.stats.max_ns),
                s.counters
                    .get("overruns")
                    .map(|o| o.to_string())
                    .unwrap_or_else(|| "–".into()),
            ];
            (s, (label, cells))
        })
        .collect();
    // On a large machine the worst CPUs come first; the rest are in the full tables.
    if rows.len() > MAX_ROWS {
        rows.sort_by_key(|(s, _)| std::cmp::Reverse(s.stats.max_ns));
    }
    rows.into_iter().map(|(_, c)| c).collect()
}

/// Placement values (same-cpu, cross-cpu) in the order first seen.
fn placements(runs: &[&ProbeRun]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in runs.iter().flat_map(|r| r.series.iter()) {
        let p = s.labels.get("placement").cloned().unwrap_or_default();
        if !out.contains(&p) {
            out.push(p);
        }
    }
    out
}

/// The row label of a series: its labels other than `skip`, prefixed with its name unless
/// the name is the probe's own (`switch via=sem` → `sem`).
fn row_label(run: &ProbeRun, s: &Series, skip: &[&str]) -> String {
    let mut parts: Vec<&str> = Vec::new();
    if s.name != run.probe {
        parts.push(&s.name);
    }
    parts.extend(
        s.labels
            .iter()
            .filter(|(k, _)| !skip.contains(&k.as_str()))
            .map(|(_, v)| v.as_str()),
    );
    parts.join(" ")
}

fn placement_rows(run: &ProbeRun, unit: TimeUnit, placements: &[String]) -> Vec<Cells> {
    let mut rows: Vec<Cells> = Vec::new();
    for s in &run.series {
        let label = row_label(run, s, &["placement"]);
        let placement = s.labels.get("placement").map_or("", String::as_str);
        let at = placements.iter().position(|p| p == placement).unwrap_or(0);
        let i = match rows.iter().position(|(l, _)| *l == label) {
            Some(i) => i,
            None => {
                rows.push((label, vec!["–".to_string(); placements.len() * 2]));
                rows.len() - 1
            }
        };
        rows[i].1[at * 2] = fmt(unit, s, s.stats.median_ns);
        rows[i].1[at * 2 + 1] = fmt(unit, s, s.stats.max_ns);
    }
    rows
}

/// Series timed one call at a time (the batched ones amortise what a single call costs).
fn per_call(run: &ProbeRun) -> impl Iterator<Item = &Series> {
    run.series
        .iter()
        .filter(|s| s.labels.get("method").is_none_or(|m| m == "per-call"))
}

fn primitive_rows(run: &ProbeRun, unit: TimeUnit) -> Vec<Cells> {
    let mut calls: Vec<&Series> = per_call(run).collect();
    calls.sort_by(|a, b| {
        let m = |s: &Series| per_op(s, s.stats.median_ns).unwrap_or(0.0);
        m(b).total_cmp(&m(a))
    });
    calls
        .into_iter()
        .take(SLOWEST_CALLS)
        .map(|s| {
            let label = match s.labels.get("size") {
                Some(size) => format!("{} {size}", s.name),
                None => s.name.clone(),
            };
            (
                label,
                vec![
                    fmt(unit, s, s.stats.median_ns),
                    fmt(unit, s, s.stats.percentiles.p99_ns),
                    fmt(unit, s, s.stats.max_ns),
                ],
            )
        })
        .collect()
}

/// The index of the first point whose cost is at least [`BEND_FACTOR`] times the lowest
/// cost before it: where a curve over sizes bends upward.
pub fn bend(costs: &[f64]) -> Option<usize> {
    let mut best = f64::INFINITY;
    for (i, &c) in costs.iter().enumerate() {
        if i > 0 && best > 0.0 && c >= best * BEND_FACTOR {
            return Some(i);
        }
        best = best.min(c);
    }
    None
}

fn size_of(s: &Series) -> u64 {
    s.metrics
        .get("size_bytes")
        .map(|v| *v as u64)
        .or_else(|| {
            s.labels
                .get("size")
                .and_then(|l| rtgauge_result::units::parse_size(l).ok())
        })
        .unwrap_or(0)
}

/// Series of `name` (any name when empty) that carry a size, grouped by `group_label` (by
/// series name when empty), each group sorted by size.
fn size_groups<'a>(
    run: &'a ProbeRun,
    name: &str,
    group_label: &str,
) -> Vec<(String, Vec<&'a Series>)> {
    let mut groups: Vec<(String, Vec<&Series>)> = Vec::new();
    let sized = run
        .series
        .iter()
        .filter(|s| (name.is_empty() || s.name == name) && s.labels.contains_key("size"));
    for s in sized {
        let g = if group_label.is_empty() {
            s.name.clone()
        } else {
            s.labels.get(group_label).cloned().unwrap_or_default()
        };
        match groups.iter_mut().find(|(k, _)| *k == g) {
            Some((_, v)) => v.push(s),
            None => groups.push((g, vec![s])),
        }
    }
    for (_, series) in &mut groups {
        series.sort_by_key(|s| size_of(s));
    }
    groups
}

/// Where the per-unit median cost of a size-sorted group bends upward, as a size.
fn bend_size(series: &[&Series], per_byte: bool) -> String {
    let costs: Vec<f64> = series
        .iter()
        .map(|s| {
            let c = per_op(s, s.stats.median_ns).unwrap_or(0.0);
            if per_byte {
                c / size_of(s).max(1) as f64
            } else {
                c
            }
        })
        .collect();
    bend(&costs)
        .map(|i| format_size(size_of(series[i])))
        .unwrap_or_else(|| "–".into())
}

/// Per allocator: the worst allocation time, its size, and where the median cost bends.
fn alloc_rows(run: &ProbeRun, unit: TimeUnit) -> Vec<Cells> {
    size_groups(run, "alloc", "allocator")
        .into_iter()
        .map(|(allocator, series)| {
            let worst = series
                .iter()
                .max_by(|a, b| {
                    let m = |s: &Series| per_op(s, s.stats.max_ns).unwrap_or(0.0);
                    m(a).total_cmp(&m(b))
                })
                .copied();
            let (max, at) = match worst {
                Some(s) => (fmt(unit, s, s.stats.max_ns), format_size(size_of(s))),
                None => ("–".into(), "–".into()),
            };
            (allocator, vec![max, at, bend_size(&series, false)])
        })
        .collect()
}

/// Median bandwidth of a sized series in bytes/s: the probe's own figure when it kept one.
fn bandwidth(s: &Series) -> Option<f64> {
    s.metrics.get("bandwidth_bytes_per_s").copied().or_else(|| {
        per_op(s, s.stats.median_ns)
            .filter(|t| *t > 0.0)
            .map(|t| size_of(s) as f64 / t * 1e9)
    })
}

/// Per operation: the best median bandwidth; the worst case as the largest slowdown of one
/// operation against its size's median (max ÷ median) and that size; and where the cost
/// per byte bends (a cache level left behind).
fn memop_rows(run: &ProbeRun) -> Vec<Cells> {
    size_groups(run, "", "")
        .into_iter()
        .map(|(op, series)| {
            let best = series
                .iter()
                .filter_map(|s| bandwidth(s))
                .fold(0.0f64, f64::max);
            let worst = series
                .iter()
                .filter_map(|s| match (s.stats.max_ns, s.stats.median_ns) {
                    (Some(max), Some(median)) if median > 0 => {
                        Some((max as f64 / median as f64, *s))
                    }
                    _ => None,
                })
                .max_by(|a, b| a.0.total_cmp(&b.0));
            let (worst, at) = match worst {
                Some((ratio, s)) if ratio >= 100.0 => {
                    (format!("{ratio:.0}"), format_size(size_of(s)))
                }
                Some((ratio, s)) => (format!("{ratio:.1}"), format_size(size_of(s))),
                None => ("–".into(), "–".into()),
            };
            (
                op,
                vec![
                    format!("{:.1}", best / 1e9),
                    worst,
                    at,
                    bend_size(&series, true),
                ],
            )
        })
        .collect()
}

fn clock_rows(run: &ProbeRun, unit: TimeUnit) -> Vec<Cells> {
    run.series
        .iter()
        .map(|s| {
            (
                s.labels
                    .get("clock")
                    .cloned()
                    .unwrap_or_else(|| s.display_name()),
                vec![
                    fmt(unit, s, s.stats.median_ns),
                    fmt(unit, s, s.stats.max_ns),
                    s.counters
                        .get("backward_steps")
                        .map(|n| n.to_string())
                        .unwrap_or_else(|| "–".into()),
                ],
            )
        })
        .collect()
}

/// Per CPU: the longest stall, how often the CPU was taken, how much of each second, and
/// the share left to the measuring thread.
fn noise_rows(run: &ProbeRun, unit: TimeUnit) -> Vec<Cells> {
    run.series
        .iter()
        .filter(|s| s.name == "gap")
        .map(|s| {
            let metric = |key: &str| s.metrics.get(key).copied();
            let label = match s.labels.get("cpu") {
                Some(cpu) => format!("cpu {cpu}"),
                None => s.display_name(),
            };
            let or_dash = |v: Option<String>| v.unwrap_or_else(|| "–".into());
            (
                label,
                vec![
                    fmt(unit, s, s.stats.max_ns),
                    or_dash(metric("events_per_s").map(|v| format!("{v:.0}"))),
                    or_dash(
                        metric("noise_ns_per_s")
                            .map(|v| rtgauge_result::units::format_duration_ns(v.round() as u64)),
                    ),
                    or_dash(metric("availability_pct").map(|v| format!("{v:.3}%"))),
                ],
            )
        })
        .collect()
}

/// Whether the TSC rate held: its spread over the measuring windows against what one
/// window can resolve.
fn tsc_verdict(run: &ProbeRun, result: &RunResult) -> String {
    let source = format!("clocksource {}", result.calibration.clocksource);
    let tsc = run
        .series
        .iter()
        .find(|s| s.labels.get("clock").map(String::as_str) == Some("tsc"));
    let Some(tsc) = tsc else {
        return format!("TSC not measured · {source}");
    };
    let m = |k: &str| tsc.metrics.get(k).copied();
    let backward = tsc.counters.get("backward_steps").copied().unwrap_or(0);
    let rate = m("tsc_hz")
        .map(|hz| format!("{:.3} GHz", hz / 1e9))
        .unwrap_or_else(|| "rate unknown".into());
    let verdict = match (m("tsc_stability_ppb"), m("tsc_window_error_ppb")) {
        _ if backward > 0 => format!("went backwards {backward} times: do not trust it"),
        (Some(spread), Some(error)) if spread <= error.max(1.0) => {
            format!("stable (rate spread {spread:.0} ppb, within the {error:.0} ppb resolved)")
        }
        (Some(spread), Some(error)) => {
            format!("UNSTABLE (rate spread {spread:.0} ppb, beyond the {error:.0} ppb resolved)")
        }
        _ => "stability not measured (one window; measure longer)".into(),
    };
    format!("TSC {rate}: {verdict} · {source}")
}

fn generic_rows(run: &ProbeRun, unit: TimeUnit) -> Vec<Cells> {
    let mut series: Vec<&Series> = run.series.iter().collect();
    series.sort_by_key(|s| std::cmp::Reverse(s.stats.max_ns));
    series
        .into_iter()
        .map(|s| {
            (
                s.display_name(),
                vec![
                    fmt(unit, s, s.stats.median_ns),
                    fmt(unit, s, s.stats.max_ns),
                ],
            )
        })
        .collect()
}

/// Plain aligned columns: readable piped, in a log, on any terminal; no box drawing.
fn render_text(summary: &Summary) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", summary.heading);
    if let Some(note) = &summary.status_note {
        let _ = writeln!(out, "{note}");
    }
    for s in &summary.sections {
        out.push('\n');
        let widths: Vec<usize> = (0..s.columns.len())
            .map(|i| {
                s.rows
                    .iter()
                    .filter_map(|r| r.cells.get(i))
                    .map(|c| c.chars().count())
                    .chain([s.columns[i].chars().count()])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let numbers: usize = widths.iter().map(|w| w + 2).sum();
        let label_width = MAX_WIDTH.saturating_sub(numbers).min(
            s.rows
                .iter()
                .map(|r| r.label.chars().count() + 2)
                .max()
                .unwrap_or(0)
                .max(s.title.chars().count()),
        );
        let mut line = format!("{:<label_width$}", clip(&s.title, label_width));
        for (c, w) in s.columns.iter().zip(&widths) {
            let _ = write!(line, "  {c:>w$}");
        }
        let _ = writeln!(out, "{}", line.trim_end());
        for r in &s.rows {
            let label = clip(&format!("  {}", r.label), label_width);
            let mut line = format!("{label:<label_width$}");
            match &r.status {
                // No mode or load to name: the status is the whole line.
                Some(status) if r.label.is_empty() => {
                    line = clip(&format!("  {status}"), MAX_WIDTH);
                }
                Some(status) => {
                    let room = MAX_WIDTH.saturating_sub(label_width + 2);
                    let _ = write!(line, "  {}", clip(status, room));
                }
                None => {
                    for (c, w) in r.cells.iter().zip(&widths) {
                        let _ = write!(line, "  {c:>w$}");
                    }
                }
            }
            let _ = writeln!(out, "{}", line.trim_end());
        }
        for n in &s.notes {
            let _ = writeln!(out, "{}", clip(&format!("  {n}"), MAX_WIDTH));
        }
    }
    out
}

fn render_markdown(summary: &Summary) -> String {
    let cell = |s: &str| s.replace('|', "\\|");
    let mut out = format!("## {}\n\n", cell(&summary.heading));
    if let Some(note) = &summary.status_note {
        let _ = writeln!(out, "**{note}**\n");
    }
    for s in &summary.sections {
        let _ = writeln!(out, "### {}\n", cell(&s.title));
        let _ = writeln!(out, "| | {} |", s.columns.join(" | "));
        let _ = writeln!(out, "|---|{}", "---:|".repeat(s.columns.len()));
        for r in &s.rows {
            let cells = match &r.status {
                Some(status) => {
                    let mut c = vec![String::new(); s.columns.len()];
                    c[0] = cell(status);
                    c
                }
                None => r.cells.clone(),
            };
            let _ = writeln!(out, "| {} | {} |", cell(&r.label), cells.join(" | "));
        }
        for n in &s.notes {
            let _ = writeln!(out, "\n{}", cell(n));
        }
        out.push('\n');
    }
    out
}

impl Render for Summary {
    const WHAT: &'static str = "a summary";

    fn formats(&self) -> &'static [Format] {
        &[
            Format::Text(Style::Terminal),
            Format::Text(Style::Plain),
            Format::Text(Style::Markdown),
            Format::Json,
        ]
    }

    fn render(&self, format: Format) -> Result<String, crate::format::Unsupported> {
        match format {
            Format::Text(Style::Terminal | Style::Plain) => Ok(render_text(self)),
            Format::Text(Style::Markdown) => Ok(render_markdown(self)),
            Format::Json => Ok(json_text(self)),
            other => Err(self.unsupported(other)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_curve_bends_where_the_cost_doubles_the_best_so_far() {
        assert_eq!(bend(&[10.0, 11.0, 12.0, 19.0, 21.0]), Some(4));
        // Falling costs (fixed overhead spread over more bytes) are not a bend.
        assert_eq!(bend(&[8.0, 4.0, 2.0, 1.0, 1.5, 2.0]), Some(5));
        assert_eq!(bend(&[5.0, 5.0, 9.0]), None);
        assert_eq!(bend(&[]), None);
    }

    #[test]
    fn long_text_is_clipped_with_a_mark() {
        assert_eq!(clip("abcdef", 4), "abc…");
        assert_eq!(clip("abc", 4), "abc");
    }
}
