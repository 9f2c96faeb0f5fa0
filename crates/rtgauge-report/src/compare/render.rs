//! A comparison as terminal tables or Markdown (environment first, one table per probe, numbered
//! notes, the rule), CSV and JSON.

use super::{percent, CompareRow, Comparison, Outcome, Rule, StatDiff, Style};
use crate::format::{csv_field, csv_num, TimeUnit};
use std::fmt::Write as _;

/// `8.00 → 11.3 (+41 %)` in `unit`.
pub fn fmt_stat(s: &StatDiff, unit: TimeUnit) -> String {
    let f = |v: Option<f64>| v.map(|v| unit.format(v)).unwrap_or_else(|| "–".into());
    let mut text = format!("{} → {}", f(s.baseline_ns), f(s.candidate_ns));
    if let Some(r) = s.relative {
        let _ = write!(text, " ({})", percent(r));
    }
    text
}

/// The display unit of a row, from the largest value it holds.
pub fn row_unit(row: &CompareRow) -> TimeUnit {
    let max = row
        .stats
        .iter()
        .flat_map(|s| [s.baseline_ns, s.candidate_ns])
        .flatten()
        .fold(0.0f64, f64::max);
    TimeUnit::for_max(max as u64)
}

/// Terminal table or Markdown: environment differences, then one table per probe (each row's
/// verdict in a word and the number of its note), the notes, what could not be compared and
/// the rule. Terminal tables fit [`crate::format::width`] columns: the explanations are
/// the numbered notes below each table.
pub fn render_text(c: &Comparison, style: Style) -> String {
    let md = style == Style::Markdown;
    let mut out = String::new();
    if md {
        out.push_str("## Comparison\n\n");
    }
    for r in &c.results {
        let _ = writeln!(out, "{}{}", if md { "- " } else { "" }, r.describe());
    }
    out.push('\n');
    heading(&mut out, md, "Environment and configuration differences");
    out.push_str(&environment_table(c, style));
    let mut probes: Vec<&str> = Vec::new();
    for r in &c.rows {
        if !probes.contains(&r.probe.as_str()) {
            probes.push(&r.probe);
        }
    }
    for probe in probes {
        let rows: Vec<&CompareRow> = c.rows.iter().filter(|r| r.probe == probe).collect();
        out.push_str(&probe_section(probe, &rows, style));
    }
    if !c.causes.is_empty() {
        heading(
            &mut out,
            md,
            "Why spikes were late (dominant causes of explained spikes)",
        );
        out.push_str(&causes_table(c, style));
    }
    if !c.unmatched.is_empty() {
        heading(&mut out, md, "Not compared");
        for u in &c.unmatched {
            let _ = writeln!(out, "- {u}");
        }
        out.push('\n');
    }
    let rule = rule_text(&c.rule);
    if md {
        let _ = writeln!(out, "_{rule}_");
    } else {
        for line in crate::summary::wrap(&rule, crate::format::width()) {
            let _ = writeln!(out, "{line}");
        }
    }
    out
}

fn heading(out: &mut String, md: bool, text: &str) {
    if md {
        let _ = writeln!(out, "### {text}\n");
    } else {
        let _ = writeln!(out, "{text}");
    }
}

fn environment_table(c: &Comparison, style: Style) -> String {
    if c.environment.is_empty() {
        return "none\n\n".into();
    }
    let mut t = crate::format::fitted_table(style);
    let mut header = vec!["Field".to_string()];
    header.extend(c.results.iter().map(|r| r.name.clone()));
    t.set_header(header);
    for d in &c.environment {
        let mut row = vec![d.field.clone()];
        row.extend(
            d.values
                .iter()
                .map(|v| v.clone().unwrap_or_else(|| "(absent)".into())),
        );
        t.add_row(row);
    }
    format!("{t}\n\n")
}

/// `66.0 → 96.2 +46 %` in the row's unit.
fn stat_cell(s: Option<&StatDiff>, unit: TimeUnit) -> String {
    let Some(s) = s else {
        return "–".into();
    };
    let f = |v: Option<f64>| v.map(|v| unit.format(v)).unwrap_or_else(|| "–".into());
    let mut text = format!("{} → {}", f(s.baseline_ns), f(s.candidate_ns));
    if let Some(r) = s.relative {
        // Without the space, so a narrow cell never breaks the number from its sign.
        let _ = write!(text, " {}", percent(r).replace(' ', ""));
    }
    text
}

/// The verdict of a row in a word or two.
fn outcome_word(o: Outcome) -> &'static str {
    match o {
        Outcome::Same => "same",
        Outcome::Slower => "SLOWER",
        Outcome::Faster => "faster",
        Outcome::Differs => "DIFFERS",
        Outcome::WithinNoise => "noise?",
        Outcome::Untested => "untested",
        Outcome::Configured => "config",
    }
}

/// One probe's rows: mode and load in the heading when every row shares them, the verdict in
/// a word with the number of its note, then the notes and the worst-case estimates.
fn probe_section(probe: &str, rows: &[&CompareRow], style: Style) -> String {
    let md = style == Style::Markdown;
    let mut out = String::new();
    let shared = |f: fn(&CompareRow) -> &str| {
        let first = f(rows[0]);
        rows.iter().all(|r| f(r) == first).then_some(first)
    };
    let (mode, load) = (shared(|r| &r.mode), shared(|r| &r.load));
    let mut title = probe.to_string();
    for part in [mode, load].into_iter().flatten() {
        let _ = write!(title, " · {part}");
    }
    heading(&mut out, md, &title);
    let tail = shared(|r| {
        r.stats
            .iter()
            .find(|s| s.stat.starts_with('p'))
            .map_or("", |s| s.stat.as_str())
    })
    .filter(|t| !t.is_empty());
    let mut header: Vec<String> = Vec::new();
    if mode.is_none() {
        header.push("Mode".into());
    }
    if load.is_none() {
        header.push("Load".into());
    }
    header.extend([
        "Series".to_string(),
        "Unit".into(),
        "Median".into(),
        tail.unwrap_or("Tail").to_string(),
        "Max".into(),
        "Verdict".into(),
    ]);
    let mut t = crate::format::fitted_table(style);
    t.set_header(header);
    let mut notes = Vec::new();
    for r in rows {
        let unit = row_unit(r);
        let tail_stat = r.stats.iter().find(|s| s.stat.starts_with('p'));
        let mut cells: Vec<String> = Vec::new();
        if mode.is_none() {
            cells.push(r.mode.clone());
        }
        if load.is_none() {
            cells.push(r.load.clone());
        }
        let mut tail_cell = stat_cell(tail_stat, unit);
        if tail.is_none() {
            if let Some(s) = tail_stat {
                tail_cell = format!("{}: {tail_cell}", s.stat);
            }
        }
        let mut note = r.verdict.clone();
        if !r.power.is_empty() && !note.contains(&r.power) {
            let _ = write!(note, "; {}", r.power);
        }
        if r.candidate != "B" || r.baseline != "A" {
            note = format!("{} against {}: {note}", r.candidate, r.baseline);
        }
        notes.push(note);
        cells.extend([
            r.display_series(),
            unit.label().to_string(),
            stat_cell(r.stat("median"), unit),
            tail_cell,
            stat_cell(r.stat("max"), unit),
            format!("{} ({})", outcome_word(r.outcome), notes.len()),
        ]);
        t.add_row(cells);
    }
    let _ = writeln!(out, "{t}\n");
    out.push_str(&crate::format::numbered_notes(&notes, md));
    out.push_str(&worst_case_lines(rows, md));
    out
}

/// The extreme-value estimates of both sides, one line per row that has one; rows where
/// neither side could make one are summed up in one line.
fn worst_case_lines(rows: &[&CompareRow], md: bool) -> String {
    let mut out = String::new();
    let mut without = 0;
    for r in rows {
        let Some([a, b]) = &r.worst_case else {
            continue;
        };
        if a.starts_with("no estimate") && b.starts_with("no estimate") {
            without += 1;
            continue;
        }
        let line = format!(
            "worst case, {}: {} {a}; {} {b}",
            r.display_series(),
            r.baseline,
            r.candidate
        );
        if md {
            let _ = writeln!(out, "- {line}");
        } else {
            for l in crate::summary::wrap(&line, crate::format::width()) {
                let _ = writeln!(out, "{l}");
            }
        }
    }
    if without > 0 {
        let _ = writeln!(
            out,
            "{}worst case beyond the runs: no estimate for {without} row{} (runs of at least 30 s make one)",
            if md { "- " } else { "" },
            if without == 1 { "" } else { "s" }
        );
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out
}

fn causes_table(c: &Comparison, style: Style) -> String {
    let mut t = crate::format::fitted_table(style);
    let mut header = vec!["Probe run".to_string(), "Cause".to_string()];
    header.extend(c.results.iter().map(|r| r.name.clone()));
    t.set_header(header);
    for m in &c.causes {
        let mut row = vec![m.run.clone(), m.cause.clone()];
        row.extend(m.counts.iter().zip(&m.longest_ns).map(|(&n, &ns)| match n {
            0 => "-".to_string(),
            n => format!(
                "{n} (up to {})",
                rtgauge_result::units::format_duration_ns(ns)
            ),
        }));
        t.add_row(row);
    }
    format!("{t}\n\n")
}

/// The verdict rule in one paragraph.
fn rule_text(rule: &Rule) -> String {
    if rule.runs_as_unit {
        format!(
            "Rule: each run is one value per statistic; a row differs when Welch's t-test on the runs' logarithms gives p < {} and the median moved by {} % or more (or a tail percentile by {} % or more); the run-to-run variation is measured from these runs (docs/compare.md). \"config\" marks a row that measures what was configured differently (a period): not faster or slower.",
            rule.alpha,
            rule.min_median_shift * 100.0,
            rule.min_tail_shift * 100.0
        )
    } else {
        format!(
            "Rule: each statistic of B is tested against A's own variation over its {} blocks: the median and the tail percentile by the share of each block's samples above A's value moved by {} %, the maximum by the blocks' maxima; a one-sided rank test (widened for neighbouring blocks that resemble each other) declares it slower or faster, the row's level of {} shared among its tests. \"could detect\" is the smallest change each test declares nine times in ten; \"noise?\" means a statistic moved past {} % but these runs cannot tell it from their variation; \"config\" marks a row that measures what was configured differently (a period), not a speed. Results written without block histograms keep the earlier rule (docs/compare.md). `check --baseline` judges p99, max and lost periods by default (--regress-stats): p99 is a tail short runs support, where the p99.99 shown here often is not.",
            rtgauge_result::units::format_duration_ns(rtgauge_stats::blocks::BLOCK_NS),
            crate::verdict::COMPARE_MARGIN * 100.0,
            rtgauge_stats::shift::ALPHA,
            crate::verdict::COMPARE_MARGIN * 100.0,
        )
    }
}

/// CSV: `#` comment lines with the results and environment differences (read with
/// `pandas.read_csv(f, comment="#")`), then one line per row, times in ns per operation.
pub fn render_csv(c: &Comparison) -> String {
    let mut out = String::new();
    for r in &c.results {
        let _ = writeln!(out, "# {}", r.describe().replace('\n', " "));
    }
    for d in &c.environment {
        let values: Vec<String> = d
            .values
            .iter()
            .zip(&c.results)
            .map(|(v, r)| format!("{}={}", r.name, v.as_deref().unwrap_or("(absent)")))
            .collect();
        let _ = writeln!(
            out,
            "# differs: {}: {}",
            d.field,
            values.join(" ").replace('\n', " ")
        );
    }
    out.push_str("probe,mode,load,series,labels,baseline,candidate,n_baseline,n_candidate");
    for s in ["min", "median", "tail", "max"] {
        if s == "tail" {
            out.push_str(",tail_stat");
        }
        let _ = write!(
            out,
            ",{s}_baseline_ns,{s}_candidate_ns,{s}_diff_ns,{s}_relative"
        );
    }
    out.push_str(",ks_d,ks_p,ks_p_blocks,outcome,verdict,power\n");
    for r in &c.rows {
        let labels: Vec<String> = r.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let fields = [
            r.probe.clone(),
            r.mode.clone(),
            r.load.clone(),
            r.series.clone(),
            labels.join(" "),
            r.baseline.clone(),
            r.candidate.clone(),
            r.n_baseline.to_string(),
            r.n_candidate.to_string(),
        ];
        let mut line: Vec<String> = fields.iter().map(|f| csv_field(f)).collect();
        let tail = r.stats.iter().find(|s| s.stat.starts_with('p'));
        for name in ["min", "median", "tail", "max"] {
            let s = if name == "tail" {
                line.push(tail.map(|s| s.stat.clone()).unwrap_or_default());
                tail
            } else {
                r.stat(name)
            };
            line.push(csv_num(s.and_then(|s| s.baseline_ns)));
            line.push(csv_num(s.and_then(|s| s.candidate_ns)));
            line.push(csv_num(s.and_then(|s| s.diff_ns)));
            line.push(
                s.and_then(|s| s.relative)
                    .map(|v| format!("{v:.6}"))
                    .unwrap_or_default(),
            );
        }
        line.push(r.ks.map(|k| format!("{:.6}", k.d)).unwrap_or_default());
        line.push(
            r.ks.map(|k| format!("{:.6e}", k.p_value))
                .unwrap_or_default(),
        );
        line.push(
            r.ks.map(|k| format!("{:.6e}", k.p_value_blocks))
                .unwrap_or_default(),
        );
        line.push(
            match r.outcome {
                Outcome::Same => "same",
                Outcome::Slower => "slower",
                Outcome::Faster => "faster",
                Outcome::Differs => "differs",
                Outcome::WithinNoise => "within_noise",
                Outcome::Untested => "untested",
                Outcome::Configured => "configuration_differs",
            }
            .into(),
        );
        line.push(csv_field(&r.verdict));
        line.push(csv_field(&r.power));
        out.push_str(&line.join(","));
        out.push('\n');
    }
    out
}

/// JSON (pretty) of the whole comparison.
pub fn render_json(c: &Comparison) -> String {
    crate::format::json_text(c)
}

impl crate::format::Render for Comparison {
    const WHAT: &'static str = "a comparison";

    fn formats(&self) -> &'static [crate::format::Format] {
        crate::format::TABLE_FORMATS
    }

    fn render(&self, format: crate::format::Format) -> Result<String, crate::format::Unsupported> {
        use crate::format::Format;
        match format {
            Format::Text(style) => Ok(crate::format::fit_lines(render_text(self, style), style)),
            Format::Csv => Ok(render_csv(self)),
            Format::Json => Ok(render_json(self)),
            other => Err(self.unsupported(other)),
        }
    }
}
