//! Renderers: everything rtgauge shows is produced from a result document here.
//!
//! - [`format`]: the one rendering interface ([`Render`], [`Format`]) and what every
//!   renderer shares (per-operation times, CSV quoting, table styles).
//! - [`summary`]: the screenful printed at the end of a run.
//! - [`table`]: a result's full tables in the seeds' shape ([`Tables`]).
//! - [`html`]: the self-contained HTML report; [`write_report`] writes it.
//! - [`plots`]: the plot model behind the report's charts and [`images`] (SVG/PNG).
//! - [`compare`]: results side by side with a statistical test ([`ks`]) and a verdict.
//! - [`check`]: limits from a spec file, for CI gates ([`check::check_result`]).
//! - [`lava`]: a result (and its check) as LAVA test cases and SQUAD tests and metrics.
//! - [`side_by_side`]: repeated runs' summaries, one column per run.

pub mod check;
pub mod compare;
pub mod counts;
pub mod dist;
pub mod format;
pub mod html;
#[cfg(feature = "images")]
pub mod images;
pub mod ks;
pub mod lava;
pub mod plots;
pub mod side_by_side;
pub mod summary;
pub mod table;
pub mod timeline;
pub mod trend;
pub mod tune;
pub mod tune_compare;
pub mod units;
pub mod verdict;
pub mod worst_case;

pub use check::{check_result, CheckReport, Spec, SpecError};
pub use compare::{compare, Comparison};
pub use format::{Format, Render, Style, Unsupported};
pub use html::{render_html, ReportInput};
#[cfg(feature = "images")]
pub use images::{write_images, ImageError, IMAGE_FORMATS};
pub use plots::{build_charts, Decimator, RecordingPlot};
pub use summary::Summary;
pub use table::Tables;

use rtgauge_result::RunResult;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("cannot write the report {path}: {source} (choose a writable place with --output)")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[cfg(feature = "images")]
    #[error(transparent)]
    Images(#[from] ImageError),
}

/// Writes the HTML report of `results` (one short name each) to `path`, atomically.
pub fn write_report(
    results: &[RunResult],
    names: &[String],
    path: &Path,
) -> Result<(), ReportError> {
    write_html(
        &ReportInput {
            results,
            names,
            comparison: None,
            recordings: &[],
        },
        path,
    )
}

impl Render for ReportInput<'_> {
    const WHAT: &'static str = "a report page";

    fn formats(&self) -> &'static [Format] {
        &[Format::Html]
    }

    fn render(&self, format: Format) -> Result<String, Unsupported> {
        match format {
            Format::Html => Ok(render_html(self)),
            other => Err(self.unsupported(other)),
        }
    }
}

/// Writes any report page (a plain report, a comparison, with recordings) atomically.
pub fn write_html(input: &ReportInput, path: &Path) -> Result<(), ReportError> {
    let page = render_html(input);
    rtgauge_result::write_bytes_atomically(path, page.as_bytes()).map_err(|source| {
        ReportError::Write {
            path: path.to_path_buf(),
            source,
        }
    })
}

/// Short, unique names for results from their file names (`host-20261122T051234Z`); a
/// repeated name gets `#2`, `#3`.
pub fn result_names(paths: &[PathBuf]) -> Vec<String> {
    let mut names: Vec<String> = paths
        .iter()
        .map(|p| {
            p.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| p.display().to_string())
        })
        .collect();
    for i in 0..names.len() {
        let repeats = names[..i].iter().filter(|n| **n == names[i]).count();
        if repeats > 0 {
            names[i] = format!("{} #{}", names[i], repeats + 1);
        }
    }
    names
}
