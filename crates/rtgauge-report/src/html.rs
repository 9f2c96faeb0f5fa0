//! The self-contained HTML report: one file, no network fetches (uPlot, styles and data are
//! inlined), readable on a phone and printable.
//!
//! Tables and text are rendered here as HTML; charts are drawn in the browser from the plot
//! model ([`crate::plots`]) inlined as JSON in a `<script type="application/json">` element.

use crate::compare::{fmt_stat, format_p, row_unit, Comparison, Outcome};
use crate::plots::{build_charts, Chart, RecordingPlot};
use crate::summary::Summary;
use crate::table::probe_table;
use rtgauge_result::{ProbeRun, ProbeStatus, RunResult};
use std::collections::BTreeMap;
use std::fmt::Write as _;

const UPLOT_JS: &str = include_str!("../assets/uPlot.iife.min.js");
const UPLOT_CSS: &str = include_str!("../assets/uPlot.min.css");
const UPLOT_LICENSE: &str = include_str!("../assets/uPlot.LICENSE");
const REPORT_JS: &str = include_str!("../assets/report.js");
pub(crate) const REPORT_CSS: &str = include_str!("../assets/report.css");

/// Everything a report page shows.
#[derive(Debug, Clone, Copy)]
pub struct ReportInput<'a> {
    pub results: &'a [RunResult],
    /// One short name per result (legends, column headers).
    pub names: &'a [String],
    /// A comparison shown first (`compare --format html`).
    pub comparison: Option<&'a Comparison>,
    /// Raw-sample plots from recordings (`run --record`), drawn as time series.
    pub recordings: &'a [RecordingPlot],
}

/// Escapes text for HTML element content and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// JSON that is safe inside a `<script>` element: every `<` becomes `\u003c`, so neither
/// `</script>` nor `<!--` can end or confuse the element.
pub fn script_json(value: &serde_json::Value) -> String {
    serde_json::to_string(value)
        .expect("plot data always serialises")
        .replace('<', "\\u003c")
}

/// `2026-11-22 05:12:34 UTC` from ns since the Unix epoch.
pub fn utc(unix_ns: u64) -> String {
    rtgauge_result::units::utc(unix_ns, "%Y-%m-%d %H:%M:%S UTC")
}

fn flatten_json(prefix: &str, v: &serde_json::Value, out: &mut Vec<(String, String)>) {
    use serde_json::Value;
    match v {
        Value::Object(map) => {
            for (k, v) in map {
                let p = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten_json(&p, v, out);
            }
        }
        Value::Array(items) if items.iter().all(|i| !i.is_object() && !i.is_array()) => {
            let parts: Vec<String> = items.iter().map(json_scalar).collect();
            out.push((prefix.to_string(), parts.join(", ")));
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                flatten_json(&format!("{prefix}[{i}]"), v, out);
            }
        }
        other => out.push((prefix.to_string(), json_scalar(other))),
    }
}

fn json_scalar(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => "–".into(),
        other => other.to_string(),
    }
}

/// A field × result table; rows whose values differ between results are marked.
fn field_table(names: &[String], columns: &[Vec<(String, String)>]) -> String {
    let mut keys: Vec<String> = Vec::new();
    for c in columns {
        for (k, _) in c {
            if !keys.contains(k) {
                keys.push(k.clone());
            }
        }
    }
    let maps: Vec<BTreeMap<&str, &str>> = columns
        .iter()
        .map(|c| c.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect())
        .collect();
    let mut out =
        String::from("<div class=\"scroll\"><table class=\"fields\"><thead><tr><th>Field</th>");
    for n in names {
        let _ = write!(out, "<th>{}</th>", esc(n));
    }
    out.push_str("</tr></thead><tbody>");
    for k in keys {
        let values: Vec<Option<&str>> = maps.iter().map(|m| m.get(k.as_str()).copied()).collect();
        let differs = columns.len() > 1 && values.iter().any(|v| *v != values[0]);
        let _ = write!(
            out,
            "<tr{}><th scope=\"row\">{}</th>",
            if differs { " class=\"differs\"" } else { "" },
            esc(&k)
        );
        for v in values {
            let _ = write!(out, "<td>{}</td>", esc(v.unwrap_or("(absent)")));
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table></div>");
    out
}

fn status_class(status: &str) -> &'static str {
    match status.to_ascii_lowercase().as_str() {
        "ok" | "pass" | "passed" | "good" => "good",
        "warn" | "warning" | "info" => "warn",
        "fail" | "failed" | "bad" | "error" => "bad",
        _ => "neutral",
    }
}

/// A check's status as a coloured badge.
fn badge(status: &str) -> String {
    format!(
        "<span class=\"badge {}\">{}</span>",
        status_class(status),
        esc(status)
    )
}

/// The doctor's verdicts: the failing and warning checks in the open, the full audit (every
/// check with why it matters and its fix) folded behind them.
fn checks_section(results: &[RunResult], names: &[String]) -> String {
    if results.iter().all(|r| r.checks.is_empty()) {
        return String::new();
    }
    let mut out = String::from("<section id=\"doctor\"><h2>Doctor verdicts</h2>");
    for (i, r) in results.iter().enumerate() {
        if r.checks.is_empty() {
            continue;
        }
        if results.len() > 1 {
            let _ = write!(out, "<h3>{}</h3>", esc(&names[i]));
        }
        let flagged: Vec<_> = r
            .checks
            .iter()
            .filter(|c| matches!(status_class(c.status.name()), "bad" | "warn"))
            .collect();
        if flagged.is_empty() {
            out.push_str("<p class=\"note\">No check failed or warned.</p>");
        } else {
            out.push_str("<ul class=\"verdicts\">");
            for c in &flagged {
                let badge = badge(c.status.name());
                let _ = write!(
                    out,
                    "<li>{badge} <b>{}</b>: {}</li>",
                    esc(&c.title),
                    esc(&c.found)
                );
            }
            out.push_str("</ul>");
        }
        let _ = write!(
            out,
            "<details class=\"audit\"><summary>The full machine audit: {} checks, why each matters and how to fix it</summary>",
            r.checks.len()
        );
        out.push_str("<div class=\"scroll\"><table class=\"checks\"><thead><tr><th>Status</th><th>Check</th><th>Found</th><th>Why it matters</th><th>Fix</th></tr></thead><tbody>");
        for c in &r.checks {
            let badge = badge(c.status.name());
            let title = format!("{} <span class=\"id\">{}</span>", esc(&c.title), esc(&c.id));
            let _ = write!(
                out,
                "<tr><td>{badge}</td><td>{title}</td><td>{}</td><td>{}</td><td><code>{}</code></td></tr>",
                esc(&c.found),
                esc(&c.why),
                esc(c.fix.as_deref().unwrap_or_default())
            );
        }
        out.push_str("</tbody></table></div></details>");
    }
    out.push_str("</section>");
    out
}

/// The remaining header cells of a table (`attrs` on each), then the body opens.
fn close_head<'a>(out: &mut String, attrs: &str, cells: impl IntoIterator<Item = &'a str>) {
    for c in cells {
        let _ = write!(out, "<th{attrs}>{}</th>", esc(c));
    }
    out.push_str("</tr></thead><tbody>");
}

/// The run summary (what `rtgauge run` prints at the end), one table per probe.
fn summary_section(results: &[RunResult], names: &[String]) -> String {
    let mut out = String::from("<section id=\"summary\"><h2>Summary</h2>");
    for (i, r) in results.iter().enumerate() {
        let summary = Summary::of(r);
        if results.len() > 1 {
            let _ = write!(out, "<h3>{}</h3>", esc(&names[i]));
        }
        let _ = write!(out, "<p>{}</p>", esc(&summary.heading));
        if let Some(note) = &summary.status_note {
            let _ = write!(out, "<p class=\"badge bad\">{}</p>", esc(note));
        }
        out.push_str("<div class=\"summary\">");
        for sec in &summary.sections {
            // A probe that measured nothing is one sentence per run, as in the terminal
            // summary: its name and why, not an empty table under headers.
            if !sec.rows.is_empty() && sec.rows.iter().all(|r| r.status.is_some()) {
                for r in &sec.rows {
                    let own = match r.label.as_str() {
                        "" => format!("{}: ", sec.probe),
                        label => format!("{} ({label}): ", sec.probe),
                    };
                    let status = r.status.as_deref().unwrap_or_default();
                    let status =
                        status.replacen(&format!("skipped: {}: ", sec.probe), "skipped: ", 1);
                    let _ = write!(
                        out,
                        "<p class=\"note\">{}</p>",
                        esc(&format!("{own}{status}"))
                    );
                }
                for n in &sec.notes {
                    let _ = write!(out, "<p class=\"note\">{}</p>", esc(n));
                }
                continue;
            }
            let _ = write!(
                out,
                "<div class=\"scroll\"><table class=\"stats\"><caption>{}</caption><thead><tr><th></th>",
                esc(&sec.title)
            );
            close_head(
                &mut out,
                " class=\"num\"",
                sec.columns.iter().map(String::as_str),
            );
            for row in &sec.rows {
                let _ = write!(out, "<tr><th scope=\"row\">{}</th>", esc(&row.label));
                match &row.status {
                    Some(status) => {
                        let _ = write!(
                            out,
                            "<td colspan=\"{}\">{}</td>",
                            sec.columns.len().max(1),
                            esc(status)
                        );
                    }
                    None => {
                        for c in &row.cells {
                            let _ = write!(out, "<td class=\"num\">{}</td>", esc(c));
                        }
                    }
                }
                out.push_str("</tr>");
            }
            out.push_str("</tbody></table>");
            for n in &sec.notes {
                let _ = write!(out, "<p class=\"note\">{}</p>", esc(n));
            }
            out.push_str("</div>");
        }
        out.push_str("</div>");
    }
    out.push_str("</section>");
    out
}

/// The probe's parameters over its runs, `key=value` each; a key whose value differs between
/// runs (the free phase of each cyclic run) lists every value.
fn parameters_line(runs: &[&ProbeRun]) -> String {
    let mut values: std::collections::BTreeMap<&str, Vec<&str>> = Default::default();
    for run in runs {
        for (k, v) in &run.params {
            let seen = values.entry(k).or_default();
            if !seen.contains(&v.as_str()) {
                seen.push(v);
            }
        }
    }
    values
        .iter()
        .map(|(k, vs)| format!("{k}={}", vs.join(" / ")))
        .collect::<Vec<_>>()
        .join(", ")
}

fn warnings_section(results: &[RunResult], names: &[String]) -> String {
    let any = results.iter().any(|r| {
        !r.warnings.is_empty() || r.runs.iter().any(|run| !run.obtained.shortfalls.is_empty())
    });
    if !any {
        return String::new();
    }
    let mut out = String::from("<section id=\"warnings\"><h2>Warnings</h2><ul class=\"warnings\">");
    for (i, r) in results.iter().enumerate() {
        let who = if results.len() > 1 {
            format!("<b>{}</b>: ", esc(&names[i]))
        } else {
            String::new()
        };
        // The doctor's findings have their own section (Doctor): said there once.
        for w in r
            .warnings
            .iter()
            .filter(|w| !r.checks.iter().any(|c| c.id == w.code))
        {
            let _ = write!(
                out,
                "<li>{who}{} <span class=\"id\">{}</span></li>",
                esc(&w.message),
                esc(&w.code)
            );
        }
        for run in &r.runs {
            for s in &run.obtained.shortfalls {
                let _ = write!(
                    out,
                    "<li>{who}{} {} {}: {}</li>",
                    esc(&run.title()),
                    esc(&run.mode_label()),
                    esc(&run.load),
                    esc(s)
                );
            }
        }
    }
    out.push_str("</ul></section>");
    out
}

fn probe_table_html(runs: &[&ProbeRun]) -> String {
    let t = probe_table(runs);
    let columns = t.header.len();
    let mut out = String::from("<div class=\"scroll\"><table class=\"stats\"><thead><tr>");
    for (i, h) in t.header.iter().enumerate() {
        let _ = write!(
            out,
            "<th{}>{}</th>",
            if i >= 3 { " class=\"num\"" } else { "" },
            esc(h)
        );
    }
    out.push_str("</tr></thead><tbody>");
    for r in &t.rows {
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td>",
            esc(&r.mode),
            esc(&r.load)
        );
        match &r.status {
            Some(status) => {
                let class = if status.starts_with("failed") {
                    "bad"
                } else {
                    "warn"
                };
                let _ = write!(
                    out,
                    "<td colspan=\"{}\" class=\"status\"><span class=\"badge {class}\">{}</span></td>",
                    columns - 2,
                    esc(status)
                );
            }
            None => {
                for (i, c) in r.cells.iter().enumerate() {
                    let _ = write!(
                        out,
                        "<td{}>{}</td>",
                        if i >= 1 { " class=\"num\"" } else { "" },
                        esc(c)
                    );
                }
            }
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table></div>");
    out
}

fn comparison_section(c: &Comparison) -> String {
    let mut out = String::from("<section id=\"comparison\"><h2>Comparison</h2><ul>");
    for r in &c.results {
        let _ = write!(out, "<li>{}</li>", esc(&r.describe()));
    }
    out.push_str("</ul><h3>Environment and configuration differences</h3>");
    if c.environment.is_empty() {
        out.push_str("<p>none</p>");
    } else {
        out.push_str("<div class=\"scroll\"><table class=\"fields\"><thead><tr><th>Field</th>");
        close_head(&mut out, "", c.results.iter().map(|r| r.name.as_str()));
        for d in &c.environment {
            let _ = write!(
                out,
                "<tr class=\"differs\"><th scope=\"row\">{}</th>",
                esc(&d.field)
            );
            for v in &d.values {
                let _ = write!(out, "<td>{}</td>", esc(v.as_deref().unwrap_or("(absent)")));
            }
            out.push_str("</tr>");
        }
        out.push_str("</tbody></table></div>");
    }
    out.push_str("<h3>Series</h3><div class=\"scroll\"><table class=\"stats compare\"><thead><tr><th>Probe</th><th>Mode</th><th>Load</th><th>Series</th><th>Compared</th><th class=\"num\">Min</th><th class=\"num\">Median</th><th class=\"num\">Tail</th><th class=\"num\">Max</th><th class=\"num\">KS D</th><th class=\"num\">p (blocks)</th><th>Verdict</th></tr></thead><tbody>");
    for r in &c.rows {
        let unit = row_unit(r);
        let cell = |s: Option<&crate::compare::StatDiff>| {
            let Some(s) = s else { return "–".to_string() };
            let mut text = format!("{} {}", fmt_stat(s, unit), unit.label());
            if s.stat.starts_with('p') {
                text = format!("{}: {text}", s.stat);
            }
            esc(&text)
        };
        let class = match r.outcome {
            Outcome::Same => "good",
            Outcome::Slower => "bad",
            Outcome::Faster | Outcome::Differs => "warn",
            Outcome::Untested | Outcome::WithinNoise | Outcome::Configured => "neutral",
        };
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{} vs {}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td><span class=\"badge {class}\">{}</span></td></tr>",
            esc(&r.probe),
            esc(&r.mode),
            esc(&r.load),
            esc(&r.display_series()),
            esc(&r.candidate),
            esc(&r.baseline),
            cell(r.stat("min")),
            cell(r.stat("median")),
            cell(r.stats.iter().find(|s| s.stat.starts_with('p'))),
            cell(r.stat("max")),
            r.ks.map(|k| format!("{:.3}", k.d)).unwrap_or_else(|| "–".into()),
            r.ks.map(|k| format_p(k.p_value_blocks)).unwrap_or_else(|| "–".into()),
            esc(&r.verdict)
        );
    }
    out.push_str("</tbody></table></div>");
    if !c.unmatched.is_empty() {
        out.push_str("<h3>Not compared</h3><ul>");
        for u in &c.unmatched {
            let _ = write!(out, "<li>{}</li>", esc(u));
        }
        out.push_str("</ul>");
    }
    let _ = write!(
        out,
        "<p class=\"note\">A row differs when the two-sample Kolmogorov–Smirnov test on the histograms gives p &lt; {} and the effect is large enough: KS D ≥ {} or a median shift of at least {} %. Histograms and percentile curves below are overlaid.</p></section>",
        c.rule.alpha,
        c.rule.min_ks_d,
        c.rule.min_median_shift * 100.0
    );
    out
}

/// The hook for raw-sample recordings: a result document that lists `recordings` (written by
/// `run --record`) gets a section naming them; their time series come as [`RecordingPlot`]s.
/// A result without the field renders nothing.
fn recordings_section(input: &ReportInput, charts: &[Chart]) -> String {
    let mut listed = Vec::new();
    for (i, r) in input.results.iter().enumerate() {
        let Ok(value) = serde_json::to_value(r) else {
            continue;
        };
        match value.get("recordings") {
            None | Some(serde_json::Value::Null) => {}
            Some(serde_json::Value::Array(a)) if a.is_empty() => {}
            Some(v) => listed.push((i, v.clone())),
        }
    }
    let plots: Vec<&Chart> = charts
        .iter()
        .filter(|c| c.kind == crate::plots::ChartKind::Recording)
        .collect();
    if listed.is_empty() && plots.is_empty() {
        return String::new();
    }
    let mut out = String::from("<section id=\"recordings\"><h2>Raw samples</h2>");
    for (i, v) in listed {
        let _ = write!(
            out,
            "<p>{}Raw-sample recordings beside the result (convert them with <code>rtgauge export</code>):</p>",
            if input.results.len() > 1 {
                format!("{}: ", esc(&input.names[i]))
            } else {
                String::new()
            }
        );
        // Whatever fields the recording entries carry, as a table (a list of objects) or
        // as JSON.
        match v.as_array() {
            Some(items) if items.iter().all(|x| x.is_object()) => {
                let mut keys: Vec<String> = Vec::new();
                for item in items {
                    for k in item.as_object().into_iter().flat_map(|o| o.keys()) {
                        if !keys.contains(k) {
                            keys.push(k.clone());
                        }
                    }
                }
                out.push_str("<div class=\"scroll\"><table class=\"fields\"><thead><tr>");
                for k in &keys {
                    let _ = write!(out, "<th>{}</th>", esc(k));
                }
                out.push_str("</tr></thead><tbody>");
                for item in items {
                    out.push_str("<tr>");
                    for k in &keys {
                        let _ = write!(
                            out,
                            "<td>{}</td>",
                            esc(&item.get(k).map(json_scalar).unwrap_or_default())
                        );
                    }
                    out.push_str("</tr>");
                }
                out.push_str("</tbody></table></div>");
            }
            _ => {
                let _ = write!(
                    out,
                    "<pre>{}</pre>",
                    esc(&serde_json::to_string_pretty(&v).unwrap_or_default())
                );
            }
        }
    }
    out.push_str("<div class=\"charts\">");
    for c in plots {
        out.push_str(&chart_figure(c));
    }
    out.push_str("</div></section>");
    out
}

fn chart_figure(c: &Chart) -> String {
    format!(
        "<figure class=\"chart\" data-chart=\"{}\" data-kind=\"{}\"><figcaption>{}</figcaption><div class=\"plot\"></div><p class=\"note\">{}</p></figure>",
        esc(&c.id),
        esc(&serde_json::to_value(c.kind).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default()),
        esc(&c.title),
        esc(&c.note)
    )
}

/// Renders the report page.
pub fn render_html(input: &ReportInput) -> String {
    let results = input.results;
    let names: Vec<String> = (0..results.len())
        .map(|i| {
            input
                .names
                .get(i)
                .cloned()
                .unwrap_or_else(|| format!("result {}", i + 1))
        })
        .collect();
    let charts = build_charts(results, &names, input.recordings);
    let title = if input.comparison.is_some() {
        "rtgauge comparison"
    } else {
        "rtgauge report"
    };
    let probes = rtgauge_result::distinct_titles(results.iter().flat_map(|r| &r.runs));

    let mut body = header(input, title, &names, &probes);
    if let Some(c) = input.comparison {
        body.push_str(&comparison_section(c));
    }
    // Summary and verdicts first; the charts per probe; the system last.
    body.push_str(&summary_section(results, &names));
    body.push_str(&checks_section(results, &names));
    body.push_str(&warnings_section(results, &names));
    for probe in &probes {
        body.push_str(&probe_section(probe, results, &names, &charts));
    }
    body.push_str(&recordings_section(input, &charts));
    body.push_str(&system_section(results, &names));
    body.push_str("</main>");
    let _ = write!(
        body,
        "<footer><p>Written by rtgauge {}. Times are per operation; tables show the percentiles the sample count supports (p99.99 needs 10,000 samples). How to read each plot: report.md in /usr/share/doc/rtgauge from the Debian package, or doc/ in the release tarball.</p><details><summary>Licences of embedded software</summary><p>uPlot (charts):</p><pre>{}</pre></details></footer>",
        esc(env!("CARGO_PKG_VERSION")),
        esc(UPLOT_LICENSE)
    );
    page(title, &body, &charts)
}

/// The page's header: the results measured, and a table of contents (a phone reader jumps
/// instead of scrolling); opens `<main>`.
fn header(input: &ReportInput, title: &str, names: &[String], probes: &[String]) -> String {
    let results = input.results;
    let mut body = String::new();
    let _ = write!(body, "<header><h1>{title}</h1>");
    // What a reader can conclude comes before everything else.
    for (i, r) in results.iter().enumerate() {
        let who = if results.len() > 1 {
            format!("{}: ", esc(&names[i]))
        } else {
            String::new()
        };
        let _ = write!(
            body,
            "<p class=\"verdict\"><strong>{who}{}</strong></p>",
            esc(&Summary::of(r).verdict_line())
        );
    }
    body.push_str("<div class=\"scroll\"><table class=\"results\"><thead><tr><th>Result</th><th>Host</th><th>Kernel</th><th>Preemption</th><th>Started</th><th>Status</th><th>Tool</th></tr></thead><tbody>");
    for (i, r) in results.iter().enumerate() {
        let _ = write!(
            body,
            "<tr><th scope=\"row\">{}</th><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{} {}</td></tr>",
            esc(&names[i]),
            esc(&r.fingerprint.hostname),
            esc(&r.fingerprint.kernel_release),
            esc(&r.fingerprint.preemption_model),
            // An import shows where it came from, and no 1970 date for a file without one.
            if r.started_unix_ns == 0 {
                "not recorded".to_string()
            } else {
                esc(&utc(r.started_unix_ns))
            },
            if r.warnings.iter().any(|w| w.code == "imported") {
                "imported"
            } else {
                r.status.as_str()
            },
            esc(&r.tool.name),
            esc(&r.tool.version)
        );
    }
    body.push_str("</tbody></table></div>");
    body.push_str("<nav>");
    if input.comparison.is_some() {
        body.push_str("<a href=\"#comparison\">Comparison</a> · ");
    }
    body.push_str("<a href=\"#summary\">Summary</a>");
    if results.iter().any(|r| !r.checks.is_empty()) {
        body.push_str(" · <a href=\"#doctor\">Doctor</a>");
    }
    for p in probes {
        let _ = write!(body, " · <a href=\"#probe-{}\">{}</a>", esc(p), esc(p));
    }
    body.push_str(" · <a href=\"#system\">System</a></nav></header><main>");
    body
}

/// One probe's section: its charts, then per result its full table, spikes, what was
/// obtained and the parameters.
fn probe_section(probe: &str, results: &[RunResult], names: &[String], charts: &[Chart]) -> String {
    let mut body = String::new();
    let _ = write!(
        body,
        "<section id=\"probe-{}\" class=\"probe\"><h2>{}</h2>",
        esc(probe),
        esc(probe)
    );
    // The charts answer at a glance; the full table and the settings follow them.
    let probe_charts: Vec<&Chart> = charts
        .iter()
        .filter(|c| c.probe == *probe && c.kind != crate::plots::ChartKind::Recording)
        .collect();
    if !probe_charts.is_empty() {
        body.push_str("<div class=\"charts\">");
        for c in probe_charts {
            body.push_str(&chart_figure(c));
        }
        body.push_str("</div>");
    }
    for (i, r) in results.iter().enumerate() {
        let runs: Vec<&ProbeRun> = r.runs.iter().filter(|run| run.title() == *probe).collect();
        if runs.is_empty() {
            continue;
        }
        if results.len() > 1 {
            let _ = write!(body, "<h3>{}</h3>", esc(&names[i]));
        }
        body.push_str(&probe_table_html(&runs));
        body.push_str(&crate::timeline::spikes_html(&runs));
        let obtained: Vec<String> = runs
            .iter()
            .filter(|run| run.status == ProbeStatus::Ok)
            .map(|run| obtained_text(run))
            .collect();
        if !obtained.is_empty() {
            let _ = write!(
                body,
                "<p class=\"note\">Obtained: {}</p>",
                esc(&obtained.join("; "))
            );
        }
        let params = parameters_line(&runs);
        if !params.is_empty() {
            let _ = write!(body, "<p class=\"note\">Parameters: {}</p>", esc(&params));
        }
    }
    body.push_str("</section>");
    body
}

/// `mode load: policy priority N, memory locked, pinned, cpu_dma_latency held`.
fn obtained_text(run: &ProbeRun) -> String {
    let o = &run.obtained;
    format!(
        "{} {}: {}{}{}{}{}",
        run.mode,
        run.load,
        o.policy,
        if o.priority > 0 {
            format!(" priority {}", o.priority)
        } else {
            String::new()
        },
        if o.memory_locked {
            ", memory locked"
        } else {
            ""
        },
        if o.pinned { ", pinned" } else { "" },
        if o.cpu_dma_latency_held {
            ", cpu_dma_latency held"
        } else {
            ""
        }
    )
}

/// The system fingerprint and the configuration of each result, side by side.
fn system_section(results: &[RunResult], names: &[String]) -> String {
    let mut body = String::from("<section id=\"system\"><h2>System</h2>");
    let fingerprints: Vec<Vec<(String, String)>> = results
        .iter()
        .map(|r| {
            let mut out = Vec::new();
            if let Ok(v) = serde_json::to_value(&r.fingerprint) {
                flatten_json("", &v, &mut out);
            }
            out
        })
        .collect();
    body.push_str(&field_table(names, &fingerprints));
    body.push_str("<h3>Configuration</h3>");
    let configs: Vec<Vec<(String, String)>> = results
        .iter()
        .map(|r| {
            let mut out = vec![("command line".to_string(), r.command_line.join(" "))];
            if let Ok(v) = serde_json::to_value(&r.config) {
                flatten_json("", &v, &mut out);
            }
            if let Ok(v) = serde_json::to_value(&r.calibration) {
                flatten_json("calibration", &v, &mut out);
            }
            out.push((
                "measured".into(),
                format!("{} → {}", utc(r.started_unix_ns), utc(r.finished_unix_ns)),
            ));
            out
        })
        .collect();
    body.push_str(&field_table(names, &configs));
    body.push_str("</section>");
    body
}

/// The self-contained page around `body`: styles, the charts' data and the scripts inlined.
fn page(title: &str, body: &str, charts: &[Chart]) -> String {
    let data = serde_json::json!({ "charts": charts });
    let mut page = String::with_capacity(UPLOT_JS.len() + body.len() + 100_000);
    page.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    page.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">");
    // An empty icon: browsers would otherwise request /favicon.ico.
    page.push_str("<link rel=\"icon\" href=\"data:,\">");
    let _ = write!(page, "<title>{}</title>", esc(title));
    let _ = write!(
        page,
        "<style>{UPLOT_CSS}\n{REPORT_CSS}</style></head><body>"
    );
    page.push_str(body);
    let _ = write!(
        page,
        "<script type=\"application/json\" id=\"rtgauge-data\">{}</script>",
        script_json(&data)
    );
    // The vendored library never contains `</script`; checked by a test.
    let _ = write!(
        page,
        "<script>{UPLOT_JS}</script><script>{REPORT_JS}</script>"
    );
    page.push_str("</body></html>\n");
    page
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inlined_scripts_cannot_close_their_element() {
        assert!(!UPLOT_JS.to_ascii_lowercase().contains("</script"));
        assert!(!REPORT_JS.to_ascii_lowercase().contains("</script"));
        let v = serde_json::json!({"title": "</script><script>alert(1)</script><!--"});
        let s = script_json(&v);
        assert!(!s.contains('<'));
        let back: serde_json::Value = serde_json::from_str(&s).unwrap();
        assert_eq!(back, v);
    }

    #[test]
    fn dates_are_utc() {
        assert_eq!(utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc(1_795_000_000_000_000_000), "2026-11-18 11:06:40 UTC");
    }

    #[test]
    fn escapes_markup() {
        assert_eq!(
            esc("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }
}
