//! The terminal (and Markdown) table: one table per probe, shaped like the seeds' tables —
//! a row per mode × load × series, columns Average, Deviation, Max and the high percentiles.

use crate::format::{new_table, TimeUnit};
use comfy_table::CellAlignment;
use rtgauge_result::{ProbeRun, ProbeStatus, RunResult, Series};

pub use crate::format::{per_op, Style};

/// All tables of a result, one per probe, in the order the probes ran.
pub fn render_tables(result: &RunResult, style: Style) -> String {
    let mut out = String::new();
    // An import says where it came from, every time it is shown.
    if let Some(w) = result.warnings.iter().find(|w| w.code == "imported") {
        out.push_str(&w.message);
        out.push_str("\n\n");
    }
    for probe in rtgauge_result::distinct_titles(&result.runs) {
        let runs: Vec<&ProbeRun> = result.runs.iter().filter(|r| r.title() == probe).collect();
        out.push_str(&render_probe_table(&probe, &runs, style));
        out.push('\n');
    }
    out
}

/// One probe's table as cells, so every renderer (terminal, Markdown, HTML) shows the same rows.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeTable {
    pub unit: TimeUnit,
    pub header: Vec<String>,
    pub rows: Vec<TableRow>,
}

/// One row: a series, or a probe run that produced none (`status` says why).
#[derive(Debug, Clone, PartialEq)]
pub struct TableRow {
    pub mode: String,
    pub load: String,
    /// `skipped: …` or `failed: …` for a run without series; `cells` is then empty.
    pub status: Option<String>,
    /// Every column after Mode and Load.
    pub cells: Vec<String>,
}

/// An imported series' histogram limit when quantile `q` lies beyond it: the percentile is
/// only known to be at least the limit.
fn beyond_limit(s: &Series, q: f64) -> Option<u64> {
    let beyond = *s.counters.get("beyond_histogram")?;
    let limit = *s.counters.get("histogram_limit_ns")?;
    let in_histogram = s.stats.count.saturating_sub(beyond);
    let rank = (q * s.stats.count as f64).ceil() as u64;
    (beyond > 0 && rank > in_histogram && rtgauge_stats::percentile_supported(q, s.stats.count))
        .then_some(limit)
}

/// The cells of one probe's table: columns Series, Samples, Min, Average, Deviation, Median,
/// the percentiles at least one row supports, Max and (when counted) Overruns.
pub fn probe_table(runs: &[&ProbeRun]) -> ProbeTable {
    let series: Vec<(&ProbeRun, &Series)> = runs
        .iter()
        .flat_map(|r| r.series.iter().map(move |s| (*r, s)))
        .collect();
    let max = series
        .iter()
        .filter_map(|(_, s)| per_op(s, s.stats.max_ns))
        .fold(0.0f64, f64::max);
    let unit = TimeUnit::for_max(max as u64);

    // Percentile columns that at least one row can report.
    let percentile_columns: Vec<(usize, &str)> = ["p99", "p99.9", "p99.99", "p99.999"]
        .iter()
        .enumerate()
        .filter(|(i, _)| {
            series.iter().any(|(_, s)| {
                let (_, q, v) = s.stats.percentiles.entries()[i + 1];
                v.is_some() || beyond_limit(s, q).is_some()
            })
        })
        .map(|(i, l)| (i + 1, *l))
        .collect();
    let show_overruns = series
        .iter()
        .any(|(_, s)| s.counters.contains_key("overruns"));

    let mut header: Vec<String> = vec![
        "Mode".into(),
        "Load".into(),
        "Series".into(),
        "Samples".into(),
        format!("Min {}", unit.label()),
        format!("Average {}", unit.label()),
        format!("Deviation {}", unit.label()),
        format!("Median {}", unit.label()),
    ];
    header.extend(
        percentile_columns
            .iter()
            .map(|(_, l)| format!("{l} {}", unit.label())),
    );
    header.push(format!("Max {}", unit.label()));
    if show_overruns {
        header.push("Overruns".into());
    }

    let mut rows = Vec::new();
    for run in runs {
        if let Some(status) = status_text(&run.status) {
            rows.push(TableRow {
                mode: run.mode_label(),
                load: run.load.clone(),
                status: Some(status),
                cells: Vec::new(),
            });
            continue;
        }
        for s in &run.series {
            let st = &s.stats;
            let f = |ns: Option<u64>| {
                per_op(s, ns)
                    .map(|v| unit.format(v))
                    .unwrap_or_else(|| "–".into())
            };
            let mut cells = vec![
                series_label(s),
                st.count.to_string(),
                f(st.min_ns),
                f(st.mean_ns),
                f(st.stddev_ns),
                f(st.median_ns),
            ];
            let entries = st.percentiles.entries();
            cells.extend(percentile_columns.iter().map(|(i, _)| {
                let (_, q, v) = entries[*i];
                match (v, beyond_limit(s, q)) {
                    (None, Some(limit)) => format!("≥ {}", f(Some(limit))),
                    _ => f(v),
                }
            }));
            cells.push(f(st.max_ns));
            if show_overruns {
                cells.push(
                    s.counters
                        .get("overruns")
                        .map(|o| o.to_string())
                        .unwrap_or_default(),
                );
            }
            rows.push(TableRow {
                mode: run.mode_label(),
                load: run.load.clone(),
                status: None,
                cells,
            });
        }
    }
    ProbeTable { unit, header, rows }
}

/// One probe's table. On a terminal of known width ([`crate::format::width_given`]) it is
/// fitted by leaving out the least telling columns first (then wrapping cells), said below
/// the table; piped output and Markdown keep every column.
pub fn render_probe_table(probe: &str, runs: &[&ProbeRun], style: Style) -> String {
    let data = probe_table(runs);
    let title = match style {
        Style::Terminal | Style::Plain => format!("{probe}\n"),
        Style::Markdown => format!("### {probe}\n\n"),
    };
    let mut keep = vec![true; data.header.len()];
    let mut table = build_table(&data, &keep, style);
    let mut left_out: Vec<String> = Vec::new();
    if style != Style::Markdown && crate::format::width_given() {
        let width = crate::format::width();
        let widest =
            |t: &comfy_table::Table| t.lines().map(|l| l.chars().count()).max().unwrap_or(0);
        for name in DROPPED_FIRST {
            if widest(&table) <= width {
                break;
            }
            // Rows under several loads need their Load column.
            if name == "Load" && data.rows.iter().any(|r| r.load != data.rows[0].load) {
                continue;
            }
            let prefix = format!("{name} ");
            let Some(i) = data
                .header
                .iter()
                .position(|h| h == name || h.starts_with(&prefix))
            else {
                continue;
            };
            keep[i] = false;
            left_out.push(name.to_string());
            table = build_table(&data, &keep, style);
        }
        if widest(&table) > width {
            table.set_content_arrangement(comfy_table::ContentArrangement::Dynamic);
            table.set_width(width as u16);
        }
    }
    let mut out = format!("{title}{table}\n");
    if !left_out.is_empty() {
        let note = format!(
            "(left out to fit {} columns: {}; `--format md` or `csv` has every column)",
            crate::format::width(),
            left_out.join(", ")
        );
        for line in crate::summary::wrap(&note, crate::format::width()) {
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

/// The columns a narrow terminal loses first, least telling first: the maximum, the median
/// and the high percentiles stay longest.
const DROPPED_FIRST: [&str; 8] = [
    "Min",
    "Deviation",
    "Average",
    "p99.999",
    "p99.99",
    "Samples",
    "Load",
    "p99",
];

fn build_table(data: &ProbeTable, keep: &[bool], style: Style) -> comfy_table::Table {
    let columns = data.header.len();
    let kept = |cells: Vec<String>| -> Vec<String> {
        cells
            .into_iter()
            .zip(keep)
            .filter(|(_, k)| **k)
            .map(|(c, _)| c)
            .collect()
    };
    let mut table = new_table(style);
    table.set_header(kept(data.header.clone()));
    for r in &data.rows {
        let mut row = vec![r.mode.clone(), r.load.clone()];
        match &r.status {
            Some(status) => {
                row.push(status.clone());
                row.resize(columns, String::new());
            }
            None => row.extend(r.cells.iter().cloned()),
        }
        table.add_row(kept(row));
    }
    // Numbers align right: every kept column after Mode, Load and Series.
    let first_number = keep.iter().take(3).filter(|k| **k).count();
    for i in first_number..keep.iter().filter(|k| **k).count() {
        if let Some(c) = table.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    table
}

/// The Series cell: name, labels and the batch size when samples timed several calls.
pub fn series_label(s: &Series) -> String {
    let mut label = s.display_name();
    if s.batch > 1 {
        label.push_str(&format!(" (per call, batches of {})", s.batch));
    }
    label
}

/// `skipped: reason` / `failed: error` for a run that produced no series.
pub fn status_text(status: &ProbeStatus) -> Option<String> {
    match status {
        ProbeStatus::Ok => None,
        ProbeStatus::Skipped { reason } => Some(format!("skipped: {reason}")),
        ProbeStatus::Failed { error } => Some(format!("failed: {error}")),
    }
}

/// A result's full per-series tables, as one renderable (what `rtgauge show` prints).
pub struct Tables<'a>(pub &'a RunResult);

/// One series of the full tables with numbers, for CSV and JSON: times in ns per operation.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SeriesRow {
    pub probe: String,
    pub mode: String,
    pub load: String,
    pub status: String,
    pub series: String,
    pub labels: std::collections::BTreeMap<String, String>,
    pub batch: u64,
    pub samples: u64,
    pub min_ns: Option<f64>,
    pub mean_ns: Option<f64>,
    pub stddev_ns: Option<f64>,
    pub median_ns: Option<f64>,
    pub p99_ns: Option<f64>,
    pub p99_9_ns: Option<f64>,
    pub p99_99_ns: Option<f64>,
    pub p99_999_ns: Option<f64>,
    pub max_ns: Option<f64>,
    pub overruns: Option<u64>,
}

const CSV_HEADER: &str = "probe,mode,load,status,series,labels,batch,samples,min_ns,mean_ns,stddev_ns,median_ns,p99_ns,p99_9_ns,p99_99_ns,p99_999_ns,max_ns,overruns";

impl Tables<'_> {
    /// Every series (and every run without one) as numbers.
    pub fn rows(&self) -> Vec<SeriesRow> {
        let mut rows = Vec::new();
        for run in &self.0.runs {
            let status = status_text(&run.status).unwrap_or_else(|| "ok".into());
            let base = |s: Option<&Series>| SeriesRow {
                probe: run.title(),
                mode: run.mode_label(),
                load: run.load.clone(),
                status: status.clone(),
                series: s.map(|s| s.name.clone()).unwrap_or_default(),
                labels: s.map(|s| s.labels.clone()).unwrap_or_default(),
                batch: s.map_or(1, |s| s.batch),
                samples: s.map_or(0, |s| s.stats.count),
                min_ns: None,
                mean_ns: None,
                stddev_ns: None,
                median_ns: None,
                p99_ns: None,
                p99_9_ns: None,
                p99_99_ns: None,
                p99_999_ns: None,
                max_ns: None,
                overruns: s.and_then(|s| s.counters.get("overruns").copied()),
            };
            if run.series.is_empty() {
                rows.push(base(None));
            }
            for s in &run.series {
                let st = &s.stats;
                let p = &st.percentiles;
                let f = |ns| per_op(s, ns);
                rows.push(SeriesRow {
                    min_ns: f(st.min_ns),
                    mean_ns: f(st.mean_ns),
                    stddev_ns: f(st.stddev_ns),
                    median_ns: f(st.median_ns),
                    p99_ns: f(p.p99_ns),
                    p99_9_ns: f(p.p99_9_ns),
                    p99_99_ns: f(p.p99_99_ns),
                    p99_999_ns: f(p.p99_999_ns),
                    max_ns: f(st.max_ns),
                    ..base(Some(s))
                });
            }
        }
        rows
    }

    fn csv(&self) -> String {
        use crate::format::{csv_field, csv_num};
        let mut out = format!("{CSV_HEADER}\n");
        for r in self.rows() {
            let labels: Vec<String> = r.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let mut fields: Vec<String> = [
                &r.probe,
                &r.mode,
                &r.load,
                &r.status,
                &r.series,
                &labels.join(" "),
            ]
            .iter()
            .map(|f| csv_field(f))
            .collect();
            fields.push(r.batch.to_string());
            fields.push(r.samples.to_string());
            fields.extend(
                [
                    r.min_ns,
                    r.mean_ns,
                    r.stddev_ns,
                    r.median_ns,
                    r.p99_ns,
                    r.p99_9_ns,
                    r.p99_99_ns,
                    r.p99_999_ns,
                    r.max_ns,
                ]
                .map(csv_num),
            );
            fields.push(r.overruns.map(|o| o.to_string()).unwrap_or_default());
            out.push_str(&fields.join(","));
            out.push('\n');
        }
        out
    }
}

impl crate::format::Render for Tables<'_> {
    const WHAT: &'static str = "a result's tables";

    fn formats(&self) -> &'static [crate::format::Format] {
        crate::format::TABLE_FORMATS
    }

    fn render(&self, format: crate::format::Format) -> Result<String, crate::format::Unsupported> {
        use crate::format::Format;
        match format {
            Format::Text(style) => Ok(render_tables(self.0, style)),
            Format::Csv => Ok(self.csv()),
            Format::Json => Ok(crate::format::json_text(&self.rows())),
            other => Err(self.unsupported(other)),
        }
    }
}
