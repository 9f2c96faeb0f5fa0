//! `rtgauge report`: results → one self-contained HTML file (and, with --images, SVG/PNG).

use crate::cli::ReportArgs;
use anyhow::Result;
use rtgauge_report::{result_names, write_html, ReportInput};
use rtgauge_result::output::{self, Existing};
use rtgauge_result::read_result;
use std::path::{Path, PathBuf};

pub fn report(args: ReportArgs) -> Result<u8> {
    let inputs: Vec<&Path> = args.results.iter().map(PathBuf::as_path).collect();
    output::ensure_distinct(&inputs, &[("the report", &args.output)])?;
    output::check(&args.output, Existing::Replace)?;
    if let Some(dir) = &args.images {
        if !cfg!(feature = "images") {
            anyhow::bail!(
                "--images: this build draws no images (the small build leaves the plotting library and its font out); the HTML report holds every chart, or run `rtgauge report --images` with the full build"
            );
        }
        output::check_directory(dir)?;
    }
    let mut results = args
        .results
        .iter()
        .map(|p| read_result(p))
        .collect::<Result<Vec<_>, _>>()?;
    // Results written before rtgauge made worst-case estimates get them from their maxima.
    results
        .iter_mut()
        .for_each(rtgauge_report::worst_case::estimate_missing);
    let names = result_names(&args.results);
    let recordings: Vec<_> = results
        .iter()
        .zip(&args.results)
        .flat_map(|(r, path)| super::recordings::plots(r, path))
        .collect();
    write_html(
        &ReportInput {
            results: &results,
            names: &names,
            comparison: None,
            recordings: &recordings,
        },
        &args.output,
    )?;
    #[cfg(feature = "images")]
    if let Some(dir) = &args.images {
        let charts = rtgauge_report::build_charts(&results, &names, &recordings);
        let files = rtgauge_report::write_images(&charts, dir)?;
        println!(
            "images: {} files ({} plots as {}) in {}",
            files.len(),
            charts.len(),
            rtgauge_report::IMAGE_FORMATS,
            dir.display()
        );
    }
    println!("report: {}", args.output.display());
    Ok(crate::EXIT_OK)
}
