//! What every renderer shares: number formatting (values stay integer nanoseconds until
//! here), the per-operation time of a sample, CSV quoting, table styles, and the one
//! rendering interface ([`Render`]) that `run`, `show`, `compare` and `check` call.

use comfy_table::presets::{ASCII_FULL_CONDENSED, ASCII_MARKDOWN, UTF8_FULL_CONDENSED};
use comfy_table::{ContentArrangement, Table};
use rtgauge_result::Series;

/// How text tables are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Box-drawing characters: for a UTF-8 terminal.
    Terminal,
    /// ASCII rules only: piped output, logs, terminals that are not UTF-8.
    Plain,
    /// GitHub-flavoured Markdown.
    Markdown,
}

/// Every output format rtgauge writes. Not every rendering supports every format: a run's
/// tables have no JUnit form, a check report no HTML; [`Render::render`] says so.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Aligned text tables in a [`Style`].
    Text(Style),
    /// Comma-separated values, times in ns per operation.
    Csv,
    /// Pretty JSON.
    Json,
    /// A self-contained HTML page.
    Html,
    /// JUnit XML, for CI systems.
    Junit,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Text(Style::Terminal) => "terminal",
            Format::Text(Style::Plain) => "plain text",
            Format::Text(Style::Markdown) => "Markdown",
            Format::Csv => "CSV",
            Format::Json => "JSON",
            Format::Html => "HTML",
            Format::Junit => "JUnit XML",
        }
    }
}

/// A rendering asked for in a format it does not have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what} cannot be written as {format}; choose one of: {supported}")]
pub struct Unsupported {
    pub what: &'static str,
    pub format: &'static str,
    pub supported: String,
}

/// The one rendering interface: anything rtgauge shows (a run's summary or tables, a
/// comparison, a check report, a report page) renders itself in the formats it supports.
pub trait Render {
    /// What this is, for [`Unsupported`] (e.g. "a comparison").
    const WHAT: &'static str;
    /// The formats [`Render::render`] accepts.
    fn formats(&self) -> &'static [Format];
    /// The text in `format`, or why not. Implementations render the formats in
    /// [`Render::formats`] and call [`Render::unsupported`] for the rest.
    fn render(&self, format: Format) -> Result<String, Unsupported>;

    fn unsupported(&self, format: Format) -> Unsupported {
        Unsupported {
            what: Self::WHAT,
            format: format.name(),
            supported: self
                .formats()
                .iter()
                .map(|f| f.name())
                .collect::<Vec<_>>()
                .join(", "),
        }
    }
}

/// Text styles and the data formats every table-shaped rendering supports.
pub const TABLE_FORMATS: &[Format] = &[
    Format::Text(Style::Terminal),
    Format::Text(Style::Plain),
    Format::Text(Style::Markdown),
    Format::Csv,
    Format::Json,
];

/// An empty table drawn in `style`, never wrapped (a wrapped number is misread).
pub fn new_table(style: Style) -> Table {
    let mut t = Table::new();
    t.load_style(match style {
        Style::Terminal => UTF8_FULL_CONDENSED,
        Style::Plain => ASCII_FULL_CONDENSED,
        Style::Markdown => ASCII_MARKDOWN,
    });
    t.set_content_arrangement(ContentArrangement::Disabled);
    t
}

/// Per-operation time of a sample value (value ÷ batch): the only place it is computed.
pub fn per_op(series: &Series, ns: Option<u64>) -> Option<f64> {
    ns.map(|v| v as f64 / series.batch.max(1) as f64)
}

pub use rtgauge_result::output::csv_field;

/// A number as CSV: integers without a fraction, others with six decimals, absent empty.
pub fn csv_num(v: Option<f64>) -> String {
    match v {
        Some(v) if v.fract() == 0.0 && v.abs() < 1e15 => format!("{}", v as i64),
        Some(v) => format!("{v:.6}"),
        None => String::new(),
    }
}

/// Pretty JSON of a rendering's model, ending in a newline.
pub fn json_text(value: &impl serde::Serialize) -> String {
    serde_json::to_string_pretty(value).expect("rendering models always serialise") + "\n"
}

/// The unit a table shows its times in, chosen from the largest value it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeUnit {
    Ns,
    Us,
    Ms,
}

impl TimeUnit {
    /// ns when everything is below 10 µs (call-level probes), ms above 100 ms, µs otherwise.
    pub fn for_max(max_ns: u64) -> TimeUnit {
        if max_ns < 10_000 {
            TimeUnit::Ns
        } else if max_ns >= 100_000_000 {
            TimeUnit::Ms
        } else {
            TimeUnit::Us
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            TimeUnit::Ns => "ns",
            TimeUnit::Us => "µs",
            TimeUnit::Ms => "ms",
        }
    }

    /// Formats with precision that suits the magnitude: three significant figures at least.
    pub fn format(self, ns: f64) -> String {
        let v = match self {
            TimeUnit::Ns => ns,
            TimeUnit::Us => ns / 1e3,
            TimeUnit::Ms => ns / 1e6,
        };
        let decimals = if v.abs() >= 100.0 || self == TimeUnit::Ns {
            0
        } else if v.abs() >= 10.0 {
            1
        } else if v.abs() >= 1.0 {
            2
        } else {
            3
        };
        format!("{v:.decimals$}")
    }

    pub fn format_opt(self, ns: Option<u64>) -> String {
        ns.map(|v| self.format(v as f64))
            .unwrap_or_else(|| "–".into())
    }
}

/// Numbered notes below a table (`1. text`), each wrapped to [`width`] columns with its
/// continuation lines indented; Markdown gets a numbered list. Empty notes are skipped (their
/// numbers stay, so a table's Note column still points at the right one).
pub fn numbered_notes(notes: &[String], markdown: bool) -> String {
    let mut out = String::new();
    for (i, note) in notes.iter().enumerate() {
        if note.is_empty() {
            continue;
        }
        let text = format!("{}. {note}", i + 1);
        if markdown {
            out.push_str(&text);
            out.push('\n');
        } else {
            for line in crate::summary::wrap(&text, width()) {
                out.push_str(&line);
                out.push('\n');
            }
        }
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out
}

/// A table fitted to [`width`] columns: cells wrap rather than widen the terminal
/// (Markdown tables are left whole).
pub fn fitted_table(style: Style) -> FittedTable {
    let mut t = new_table(style);
    if style != Style::Markdown {
        t.set_content_arrangement(ContentArrangement::Dynamic);
        t.set_width(width() as u16);
    }
    FittedTable(t)
}

/// The longest cell a fitted table wraps: longer text (a name edited into a result file, say)
/// is cut, because wrapping one long word costs time that grows with the square of its
/// length.
pub const CELL_LIMIT: usize = 240;

/// A [`fitted_table`]: every cell goes through [`fitted_cell`].
pub struct FittedTable(Table);

impl FittedTable {
    pub fn set_header<S: AsRef<str>>(&mut self, cells: impl IntoIterator<Item = S>) {
        self.0
            .set_header(cells.into_iter().map(|c| fitted_cell(c.as_ref())));
    }

    pub fn add_row<S: AsRef<str>>(&mut self, cells: impl IntoIterator<Item = S>) {
        self.0
            .add_row(cells.into_iter().map(|c| fitted_cell(c.as_ref())));
    }
}

impl std::fmt::Display for FittedTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// `text` whole up to [`CELL_LIMIT`] characters, else its beginning and how much was left out.
pub fn fitted_cell(text: &str) -> String {
    match text.char_indices().nth(CELL_LIMIT) {
        None => text.to_string(),
        Some((cut, _)) => format!(
            "{}… ({} more characters)",
            &text[..cut],
            text[cut..].chars().count()
        ),
    }
}

/// Width of text output unless the terminal is narrower: a 100-column terminal.
pub const NOTE_WIDTH: usize = 100;
/// The narrowest width text output is fitted to: below it, lines are cut at this width.
pub const MIN_WIDTH: usize = 40;

/// The width text output fits (summary, tables, notes, compare, check): [`NOTE_WIDTH`] unless
/// the program set a narrower terminal's width with [`set_width`].
static WIDTH: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(NOTE_WIDTH);

/// Whether [`set_width`] was called: a terminal (or COLUMNS) whose width the full tables
/// must fit; piped output keeps them whole.
static WIDTH_GIVEN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Fits every later text output to a terminal of `columns` (the binary passes COLUMNS or the
/// terminal's width): held between [`MIN_WIDTH`] and [`NOTE_WIDTH`].
pub fn set_width(columns: usize) {
    WIDTH.store(
        columns.clamp(MIN_WIDTH, NOTE_WIDTH),
        std::sync::atomic::Ordering::Relaxed,
    );
    WIDTH_GIVEN.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Wraps between words every line of `text` wider than [`width`] (continuation lines
/// indented), so prose below tables never widens the terminal; Markdown is left as is.
/// Table lines are already fitted ([`fitted_table`]) and pass unchanged.
pub fn fit_lines(text: String, style: Style) -> String {
    let width = width();
    if style == Style::Markdown || text.lines().all(|l| l.chars().count() <= width) {
        return text;
    }
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let (body, end) = match line.strip_suffix('\n') {
            Some(body) => (body, "\n"),
            None => (line, ""),
        };
        if body.chars().count() <= width {
            out.push_str(line);
            continue;
        }
        let wrapped = crate::summary::wrap(body, width);
        out.push_str(&wrapped.join("\n"));
        out.push_str(end);
    }
    out
}

/// Whether a terminal's width was given ([`set_width`]): wide tables are then fitted to it.
pub fn width_given() -> bool {
    WIDTH_GIVEN.load(std::sync::atomic::Ordering::Relaxed)
}

/// The width text output fits: see [`set_width`].
pub fn width() -> usize {
    WIDTH.load(std::sync::atomic::Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_and_precision() {
        assert_eq!(TimeUnit::for_max(9_999), TimeUnit::Ns);
        assert_eq!(TimeUnit::for_max(50_000), TimeUnit::Us);
        assert_eq!(TimeUnit::Us.format(1_234.0), "1.23");
        assert_eq!(TimeUnit::Us.format(56_789.0), "56.8");
        assert_eq!(TimeUnit::Us.format(456_789.0), "457");
        assert_eq!(TimeUnit::Ns.format(42.4), "42");
        assert_eq!(TimeUnit::Us.format_opt(None), "–");
    }

    #[test]
    fn a_long_cell_is_cut_and_says_how_much_is_left_out() {
        assert_eq!(fitted_cell("cyclic"), "cyclic");
        let long = "é".repeat(CELL_LIMIT + 7);
        let cell = fitted_cell(&long);
        assert!(cell.starts_with(&"é".repeat(CELL_LIMIT)));
        assert!(cell.ends_with("… (7 more characters)"), "{cell}");
        assert_eq!(fitted_cell(&"x".repeat(CELL_LIMIT)), "x".repeat(CELL_LIMIT));
    }
}
