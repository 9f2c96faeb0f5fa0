//! The summary printed at the end of a run: the verdict first (what a user can conclude, and
//! whether the run's limits held), then per probe × mode × load the few figures that answer
//! the probe's question, fitted to the terminal (at most [`MAX_WIDTH`] columns). The full
//! per-series tables are one flag (`run --table full`) or `rtgauge show` away.
//!
//! Each probe says how its runs read here through [`SummaryRows`] (implemented beside its
//! measuring, registered at start like the probe itself); this renderer knows no probe name,
//! and shows a probe without rows by its series with the highest maxima.

use crate::format::{json_text, per_op, Format, Render, Style, TimeUnit};
use crate::table::status_text;
use crate::worst_case;
use rtgauge_result::units::format_size;
use rtgauge_result::{ProbeRun, RunResult, RunStatus, Series};
use serde::Serialize;
use std::fmt::Write as _;

mod rows;
use rows::find;
pub use rows::{answers, own_failures, register, SummaryRows};

/// No summary line is wider than this (a terminal, a CI log, an e-mail); a narrower terminal
/// gets its own width ([`crate::format::width`]).
pub const MAX_WIDTH: usize = 100;

/// The width of the summary's lines: the terminal's, at most [`MAX_WIDTH`].
fn width() -> usize {
    crate::format::width().min(MAX_WIDTH)
}

/// Notes are printed indented by two spaces.
fn note_width() -> usize {
    width() - 2
}
/// Rows of one probe run before the rest is left to the full tables.
pub const MAX_ROWS: usize = 3;
/// A cost at least this many times the best so far marks where a curve bends.
const BEND_FACTOR: f64 = 2.0;

/// The summary of one result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    /// The first line: suite, status, date, modes (what was obtained, where it fell short of
    /// what was asked) and loads.
    pub heading: String,
    /// What a user can conclude, in one sentence, from what was measured (the second line).
    pub verdict: String,
    /// Whether the run's limits held (`--max-latency`, a spec), said after the verdict; None
    /// when no limit was given.
    pub limit: Option<String>,
    /// Set when the result is not complete: what that means for its numbers.
    pub status_note: Option<String>,
    /// What failed the run by a probe's own verdict (a task that missed a deadline), said
    /// in the verdict line before the limits.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<String>,
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
            verdict: verdict(result, &sections),
            limit: limit_outcome(result),
            failed: own_failures(result),
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

impl Summary {
    /// Says after the verdict whether the run's limits held: `--max-latency 100 µs: held`.
    pub fn with_limit(mut self, outcome: impl Into<String>) -> Summary {
        self.limit = Some(outcome.into());
        self
    }

    /// The verdict line as printed: the sentence and the limits' outcome.
    pub fn verdict_line(&self) -> String {
        let failed = match self.failed.as_slice() {
            [] => String::new(),
            failed => format!("FAILED: {}; ", failed.join("; ")),
        };
        format!(
            "verdict: {}; {failed}{}",
            self.verdict,
            self.limit.as_deref().unwrap_or("no limit given")
        )
    }
}

/// What the run lets a user conclude in one sentence, from its figures only. A periodic
/// probe (a `period` parameter and `latency` series) answers the control engineer's question:
/// the worst wake-up at that period, as a share of it, and the periods lost; any other run
/// names its largest maximum. Rows measured short of their mode say so.
fn verdict(result: &RunResult, sections: &[Section]) -> String {
    let measured: Vec<&ProbeRun> = result
        .runs
        .iter()
        .filter(|r| status_text(&r.status).is_none() && !r.series.is_empty())
        .collect();
    if measured.is_empty() {
        return match result.runs.iter().find_map(|r| status_text(&r.status)) {
            Some(status) => format!("nothing was measured ({status})"),
            None => "nothing was measured".into(),
        };
    }
    let not_rt = measured
        .iter()
        .find(|r| !r.obtained.shortfalls.is_empty())
        .map(|r| format!(" ({}: not real-time numbers)", r.mode_label()))
        .unwrap_or_default();
    // A probe with its own verdict (a task set: the tasks at risk first) leads; the figures'
    // sentence follows only for the runs of other probes.
    let own = rows::own_verdicts(result);
    if !own.is_empty() {
        let others: Vec<&ProbeRun> = measured
            .iter()
            .copied()
            .filter(|r| find(&r.probe).and_then(|s| s.verdict(r)).is_none())
            .collect();
        let rest = if others.is_empty() {
            String::new()
        } else {
            format!("; {}", figures_verdict(&others, sections))
        };
        return format!("{}{rest}{not_rt}", own.join("; "));
    }
    format!("{}{not_rt}", figures_verdict(&measured, sections))
}

/// The figures' own sentence: the periodic answer, or the largest maximum.
fn figures_verdict(measured: &[&ProbeRun], sections: &[Section]) -> String {
    if let Some(line) = periodic_verdict(measured) {
        return line;
    }
    // The largest maximum of the run, in its probe's own words.
    let worst = measured
        .iter()
        .flat_map(|r| r.series.iter().map(move |s| (*r, s)))
        .filter_map(|(r, s)| per_op(s, s.stats.max_ns).map(|m| (m, r, s)))
        .max_by(|a, b| a.0.total_cmp(&b.0));
    match worst {
        Some((max, run, series)) => {
            let question = sections
                .iter()
                .find(|s| s.probe == run.title())
                .and_then(|s| s.title.split(": ").nth(1))
                .and_then(|q| q.split(',').next())
                .unwrap_or("time");
            format!(
                "{}: slowest {question} {} ({})",
                run.title(),
                rtgauge_result::units::format_duration_ns(max.round() as u64),
                series.display_name()
            )
        }
        None => "measured, with no time to report".into(),
    }
}

/// The value of `--flag VALUE` or `--flag=VALUE` in a command line.
fn flag_value<'a>(words: &'a [String], flag: &str) -> Option<&'a str> {
    let with_equals = format!("{flag}=");
    words.iter().enumerate().find_map(|(i, w)| {
        if w == flag {
            words.get(i + 1).map(String::as_str)
        } else {
            w.strip_prefix(&with_equals)
        }
    })
}

/// Whether the run's limits held, from its command line and its figures: `--max-latency`
/// against the largest `latency` maximum (what `run` checks); a spec file is named, its
/// outcome is set by the run that checked it ([`Summary::with_limit`]). None: no limit given.
fn limit_outcome(result: &RunResult) -> Option<String> {
    let words = &result.command_line;
    if let Some(limit) = flag_value(words, "--max-latency") {
        let d = rtgauge_result::units::format_duration_ns;
        let worst = result
            .runs
            .iter()
            .flat_map(|r| r.series.iter())
            .filter(|s| s.name == "latency")
            .filter_map(|s| s.stats.max_ns)
            .max();
        return Some(
            match (rtgauge_result::units::parse_duration_ns(limit), worst) {
                (Ok(ns), Some(max)) if max > ns => {
                    format!("--max-latency {} EXCEEDED (worst {})", d(ns), d(max))
                }
                (Ok(ns), Some(_)) => format!("--max-latency {}: held", d(ns)),
                _ => format!("--max-latency {limit}: no latency measured to check"),
            },
        );
    }
    flag_value(words, "--spec")
        .map(|spec| format!("limits of {spec}: `rtgauge check --spec {spec} RESULT` says"))
}

/// `a 1 ms periodic task lost no period: woke up at most 83 µs late (8.3 % of the period),
/// p99.9 40 µs`, from the run with the latest wake-up.
fn periodic_verdict(runs: &[&ProbeRun]) -> Option<String> {
    let (run, period) = runs
        .iter()
        .filter_map(|r| {
            let period = r.params.get("period")?;
            let ns = rtgauge_result::units::parse_duration_ns(period).ok()?;
            r.series
                .iter()
                .any(|s| s.name == "latency")
                .then_some((*r, ns))
        })
        .max_by_key(|(r, _)| {
            r.series
                .iter()
                .filter(|s| s.name == "latency")
                .filter_map(|s| s.stats.max_ns)
                .max()
        })?;
    let latency = || run.series.iter().filter(|s| s.name == "latency");
    let max = latency().filter_map(|s| s.stats.max_ns).max()?;
    let overruns: u64 = latency().filter_map(|s| s.counters.get("overruns")).sum();
    // An imported series without the counter lost periods the source cannot count, unless
    // it never woke a period late (or has no maximum to tell).
    let uncounted = latency().any(|s| {
        !s.counters.contains_key("overruns") && s.stats.max_ns.is_none_or(|m| m >= period)
    });
    let p999 = latency().filter_map(|s| s.stats.percentiles.p99_9_ns).max();
    let d = rtgauge_result::units::format_duration_ns;
    let share = |ns: u64| {
        let pct = ns as f64 / period.max(1) as f64 * 100.0;
        if pct >= 100.0 {
            format!("{:.1} periods", pct / 100.0)
        } else {
            format!("{pct:.1} % of the period")
        }
    };
    let lost = match (overruns, uncounted) {
        (0, false) => "lost no period".to_string(),
        (1, false) => "lost 1 period".to_string(),
        (n, false) => format!("lost {n} periods"),
        (0, true) => "may have lost periods (the source does not say how many)".to_string(),
        (n, true) => format!(
            "lost at least {n} period{} (the source does not say how many more)",
            if n == 1 { "" } else { "s" }
        ),
    };
    // An import whose file does not say how long it measured has no duration to name.
    let span = match run.measured_ns {
        0 => String::new(),
        ns => format!(" in {}", d(ns)),
    };
    let mut line = format!(
        "a {} periodic task ({}) {lost}{span}: woke up at most {} late ({})",
        d(period),
        run.title(),
        d(max),
        share(max)
    );
    if let Some(p) = p999 {
        line.push_str(&format!(", p99.9 {} ({})", d(p), share(p)));
    }
    Some(line)
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
        let room = width() - if last { 0 } else { REST };
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
    Some(clip(&line, width()))
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
    parts.push(format!("mode {}", obtained_modes(result).join(",")));
    parts.push(format!("load {}", result.config.loads.join(",")));
    clip(&parts.join(" · "), width())
}

/// The run's modes as obtained: `rt`, or `rt asked, normal obtained` where its rows fell
/// short of the mode (best effort), never the asked mode alone for numbers it did not get.
fn obtained_modes(result: &RunResult) -> Vec<String> {
    result
        .config
        .modes
        .iter()
        .map(|mode| {
            result
                .runs
                .iter()
                .filter(|r| r.mode == *mode)
                .map(ProbeRun::mode_label)
                .find(|label| label != mode)
                .unwrap_or_else(|| mode.clone())
        })
        .collect()
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

/// The figures of one probe's runs, shaped by what the probe answers: its registered
/// [`SummaryRows`], or its series with the highest maxima.
fn section(title: &str, runs: &[&ProbeRun], several: bool, result: &RunResult) -> Section {
    let probe = runs.first().map(|r| r.probe.as_str()).unwrap_or_default();
    let shape = find(probe).unwrap_or(&Highest);
    let all_series = runs.iter().flat_map(|r| r.series.iter());
    let max = all_series
        .filter_map(|s| per_op(s, s.stats.max_ns))
        .fold(0.0f64, f64::max);
    let unit = TimeUnit::for_max(max as u64);
    let mut out = Section {
        probe: title.to_string(),
        title: if shape.timed() {
            format!("{title}: {}, {}", shape.question(), unit.label())
        } else {
            format!("{title}: {}", shape.question())
        },
        columns: shape.columns(runs),
        rows: Vec::new(),
        notes: Vec::new(),
    };
    for run in runs {
        let prefix = if several {
            format!("{} {} ", run.mode_label(), run.load)
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
        let rows = shape.rows(run, runs, unit);
        let total = rows.len();
        for (label, cells) in rows.into_iter().take(MAX_ROWS) {
            out.rows.push(Row {
                label: format!("{prefix}{label}"),
                cells,
                status: None,
            });
        }
        if total > MAX_ROWS {
            let more = total - MAX_ROWS;
            out.notes.push(format!(
                "{note_prefix}{more} more row{} in the full tables",
                if more == 1 { "" } else { "s" }
            ));
        }
        out.notes.extend(
            shape
                .answer(run)
                .into_iter()
                .chain(shape.notes(run, result))
                .map(|n| format!("{note_prefix}{n}")),
        );
        out.notes.extend(worst_case_notes(run, &note_prefix));
    }
    out
}

/// A probe without registered rows: its series with the highest maxima.
struct Highest;

impl SummaryRows for Highest {
    fn probe(&self) -> &'static str {
        ""
    }

    fn question(&self) -> &'static str {
        "highest maxima"
    }

    fn columns(&self, _runs: &[&ProbeRun]) -> Vec<String> {
        vec!["median".into(), "max".into()]
    }

    fn rows(&self, run: &ProbeRun, _runs: &[&ProbeRun], unit: TimeUnit) -> Vec<Cells> {
        generic_rows(run, unit)
    }
}

/// The rows of a probe that measures a hand-over per source or mechanism and placement: a row
/// per source or mechanism, the median and max of each placement ([`placement_columns`],
/// [`placement_rows`]).
pub struct PlacementRows {
    /// The probe these rows are for.
    pub probe: &'static str,
    /// What the figures answer (`context switch`).
    pub question: &'static str,
}

impl SummaryRows for PlacementRows {
    fn probe(&self) -> &'static str {
        self.probe
    }

    fn question(&self) -> &'static str {
        self.question
    }

    fn columns(&self, runs: &[&ProbeRun]) -> Vec<String> {
        placement_columns(runs)
    }

    fn rows(&self, run: &ProbeRun, runs: &[&ProbeRun], unit: TimeUnit) -> Vec<Cells> {
        placement_rows(run, unit, &placements(runs))
    }
}

/// Column pairs (median, max) per placement (same-cpu, cross-cpu) in the order first seen:
/// the shape of probes that measure a hand-over per source or mechanism and placement.
pub fn placement_columns(runs: &[&ProbeRun]) -> Vec<String> {
    placements(runs)
        .iter()
        .flat_map(|p| [format!("{p} median"), "max".to_string()])
        .collect()
}

/// A row: its label and one cell per column.
pub type Cells = (String, Vec<String>);

/// `mode load: ` before a note when the result has several of them.
fn note_prefix(run: &ProbeRun, several: bool) -> String {
    if several {
        format!("{} {}: ", run.mode_label(), run.load)
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
            note_width(),
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
            note_width(),
        ));
    }
    if let Some(advice) =
        worst_case::headline(run).find_map(|(_, wc)| worst_case::advice(wc.estimate()?))
    {
        notes.extend(wrap(&format!("{note_prefix}{advice}"), note_width()));
    }
    notes
}

/// A time of `s` in `unit` per operation, or `–`.
pub fn fmt(unit: TimeUnit, s: &Series, ns: Option<u64>) -> String {
    per_op(s, ns)
        .map(|v| unit.format(v))
        .unwrap_or_else(|| "–".into())
}

/// Quantile `q` of `s`, or `≥ LIMIT` where an imported histogram's range ends below it.
pub fn fmt_q(unit: TimeUnit, s: &Series, ns: Option<u64>, q: f64) -> String {
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

/// Placement values (same-cpu, cross-cpu) in the order first seen.
pub fn placements(runs: &[&ProbeRun]) -> Vec<String> {
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
pub fn row_label(run: &ProbeRun, s: &Series, skip: &[&str]) -> String {
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

pub fn placement_rows(run: &ProbeRun, unit: TimeUnit, placements: &[String]) -> Vec<Cells> {
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

pub fn size_of(s: &Series) -> u64 {
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
pub fn size_groups<'a>(
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
pub fn bend_size(series: &[&Series], per_byte: bool) -> String {
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
    let width = width();
    let _ = writeln!(out, "{}", summary.heading);
    // An incomplete run says so before anything is concluded from it.
    if let Some(note) = &summary.status_note {
        for line in wrap(note, width) {
            let _ = writeln!(out, "{line}");
        }
    }
    for line in wrap(&summary.verdict_line(), width) {
        let _ = writeln!(out, "{line}");
    }
    // Probes that measured nothing here come last, together: one sentence each.
    let mut not_measured = String::new();
    for s in &summary.sections {
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
        let label_width = width.saturating_sub(numbers).min(
            s.rows
                .iter()
                .map(|r| r.label.chars().count() + 2)
                .max()
                .unwrap_or(0)
                .max(s.title.chars().count()),
        );
        // A probe that measured nothing in one mode and load is one sentence: its name and
        // why, wrapped (a reason says how to fix it: never cut), no empty header.
        let skipped = matches!(
            s.rows.as_slice(),
            [Row { label, status: Some(_), .. }] if label.is_empty()
        );
        if !skipped {
            out.push('\n');
        }
        if let [Row {
            label,
            status: Some(status),
            ..
        }] = s.rows.as_slice()
        {
            if label.is_empty() {
                let own = format!("{}: ", s.probe);
                let status = status.replacen(&format!("skipped: {own}"), "skipped: ", 1);
                for line in wrap(&format!("{own}{status}"), width) {
                    let _ = writeln!(not_measured, "{line}");
                }
                for n in &s.notes {
                    for line in wrap(&format!("  {n}"), width) {
                        let _ = writeln!(not_measured, "{line}");
                    }
                }
                continue;
            }
        }
        let mut line = format!("{:<label_width$}", clip(&s.title, label_width));
        for (c, w) in s.columns.iter().zip(&widths) {
            let _ = write!(line, "  {c:>w$}");
        }
        let _ = writeln!(out, "{}", clip(line.trim_end(), width));
        for r in &s.rows {
            let label = clip(&format!("  {}", r.label), label_width);
            let mut line = format!("{label:<label_width$}");
            match &r.status {
                // A reason says how to fix it: wrapped, never cut.
                Some(status) => {
                    let (first, indent) = if r.label.is_empty() {
                        (String::from("  "), 4)
                    } else {
                        (format!("{line}  "), label_width + 4)
                    };
                    let room = width.saturating_sub(indent).max(20);
                    for (i, l) in wrap(status, room).iter().enumerate() {
                        let text = if i == 0 {
                            format!("{first}{l}")
                        } else {
                            // wrap() indents its continuation lines by two already.
                            format!("{}{l}", " ".repeat(indent - 2))
                        };
                        let _ = writeln!(out, "{}", clip(text.trim_end(), width));
                    }
                    continue;
                }
                None => {
                    for (c, w) in r.cells.iter().zip(&widths) {
                        let _ = write!(line, "  {c:>w$}");
                    }
                }
            }
            let _ = writeln!(out, "{}", clip(line.trim_end(), width));
        }
        // Notes wrap (a verdict or a fix is never cut), indented by two.
        for n in &s.notes {
            // A note's own continuation lines keep their indent.
            let lead = n.len() - n.trim_start().len();
            let text = n.split_whitespace().collect::<Vec<_>>().join(" ");
            for line in wrap(&text, width.saturating_sub(2 + lead).max(20)) {
                let _ = writeln!(out, "  {}{line}", " ".repeat(lead));
            }
        }
    }
    if !not_measured.is_empty() {
        out.push('\n');
        out.push_str(&not_measured);
    }
    out
}

fn render_markdown(summary: &Summary) -> String {
    let cell = |s: &str| s.replace('|', "\\|");
    let mut out = format!("## {}\n\n", cell(&summary.heading));
    if let Some(note) = &summary.status_note {
        let _ = writeln!(out, "**{note}**\n");
    }
    let _ = writeln!(out, "**{}**\n", cell(&summary.verdict_line()));
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
