//! `rtgauge report`: results → one self-contained HTML file (and, with --images, SVG/PNG).

use crate::cli::ReportArgs;
use anyhow::Result;
use rtgauge_report::{result_names, write_html, ReportInput};
use rtgauge_result::output::{self, Existing};
use rtgauge_result::{read_document, Document, RunResult};
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
    let documents = args
        .results
        .iter()
        .map(|p| read_document(p))
        .collect::<Result<Vec<_>, _>>()?;
    let (mut results, tunes) = split(documents, &args.results)?;
    if !tunes.is_empty() {
        if args.images.is_some() {
            anyhow::bail!(
                "--images draws the charts of run results; the trials' charts are in the HTML \
                 page: leave --images out"
            );
        }
        let page = rtgauge_report::tune::render_html(&tunes, &result_names(&args.results));
        rtgauge_result::write_bytes_atomically(&args.output, page.as_bytes()).map_err(|e| {
            anyhow::anyhow!("cannot write the report {}: {e}", args.output.display())
        })?;
        println!("report: {}", args.output.display());
        return Ok(crate::EXIT_OK);
    }
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

/// The run results and the trials documents among the inputs; one report holds one kind, so
/// a mix is refused, naming a file of each.
fn split(
    documents: Vec<Document>,
    paths: &[PathBuf],
) -> Result<(Vec<RunResult>, Vec<rtgauge_result::tune::TuneDocument>)> {
    let (mut results, mut tunes, mut first) = (Vec::new(), Vec::new(), [None, None]);
    for (d, path) in documents.into_iter().zip(paths) {
        match d {
            Document::Run(r) => {
                first[0].get_or_insert(path);
                results.push(*r);
            }
            Document::Tune(t) => {
                first[1].get_or_insert(path);
                tunes.push(*t);
            }
        }
    }
    if let [Some(run), Some(tune)] = first {
        anyhow::bail!(
            "{} is a trials document (rtgauge tune) and {} a run result: report them apart \
             (`rtgauge report {}` and `rtgauge report {}` with another --output)",
            tune.display(),
            run.display(),
            tune.display(),
            run.display()
        );
    }
    Ok((results, tunes))
}
