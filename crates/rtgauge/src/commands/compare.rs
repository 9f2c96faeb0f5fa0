//! `rtgauge compare`: results side by side, baseline first.

use super::history::resolve;
use crate::cli::{CompareArgs, OutputFormat};
use anyhow::{Context, Result};
use rtgauge_report::compare::{self, letter};
use rtgauge_report::{result_names, write_html, Render, ReportInput};
use rtgauge_result::output::{self, Existing};
use rtgauge_result::write_bytes_atomically;
use std::path::{Path, PathBuf};

pub fn compare(args: CompareArgs) -> Result<u8> {
    if let Some(code) = compare_tunes(&args)? {
        return Ok(code);
    }
    if let Some(path) = &args.output {
        let inputs: Vec<&Path> = args
            .results
            .iter()
            .chain(&args.vs)
            .map(PathBuf::as_path)
            .collect();
        output::ensure_distinct(&inputs, &[("the comparison", path)])?;
        output::check(path, Existing::Replace)?;
    }
    // Results written before rtgauge made worst-case estimates get them from their maxima.
    let resolve = |p: &PathBuf| {
        resolve(&p.to_string_lossy(), &args.store, args.imported).map(|(mut result, source)| {
            rtgauge_report::worst_case::estimate_missing(&mut result);
            (result, source)
        })
    };
    let mut named = args
        .results
        .iter()
        .map(resolve)
        .collect::<Result<Vec<_>>>()?;
    if let Some(baseline) = &args.baseline {
        named.insert(0, resolve(&PathBuf::from(baseline))?);
    }
    if named.len() < 2 && args.vs.is_empty() {
        anyhow::bail!(
            "compare needs two results: give two, or one and --baseline previous|ID|NAME|FILE"
        );
    }
    let (results, sources): (Vec<_>, Vec<_>) = named.into_iter().unzip();
    let comparison = if args.vs.is_empty() {
        compare::compare(&results, &sources)
    } else {
        let (cand, cand_sources): (Vec<_>, Vec<_>) = args
            .vs
            .iter()
            .map(resolve)
            .collect::<Result<Vec<_>>>()?
            .into_iter()
            .unzip();
        compare::compare_repeated(&results, &cand, [sources.join(" "), cand_sources.join(" ")])
    };
    // Nothing paired although both sides measured: the output alone would look like "no
    // difference". Said, and not a success.
    let unpaired = if args.vs.is_empty() {
        compare::nothing_paired(&comparison, &results)
    } else {
        None
    };
    let done = |code: u8| match &unpaired {
        Some(why) => Err(anyhow::anyhow!("{why}")),
        None => Ok(code),
    };
    if args.format == OutputFormat::Html {
        let Some(output) = &args.output else {
            anyhow::bail!("--format html writes a file: add --output FILE (e.g. -o compare.html)");
        };
        // Overlay legends say which letter each line belongs to.
        let names: Vec<String> =
            result_names(&sources.iter().map(PathBuf::from).collect::<Vec<_>>())
                .into_iter()
                .enumerate()
                .map(|(i, n)| format!("{} {n}", letter(i)))
                .collect();
        write_html(
            &ReportInput {
                results: &results,
                names: &names,
                comparison: Some(&comparison),
                recordings: &[],
            },
            output,
        )?;
        println!("comparison: {}", output.display());
        return done(crate::EXIT_OK);
    }
    let text = comparison.render(args.format.render())?;
    match &args.output {
        Some(path) => {
            write_bytes_atomically(path, text.trim_end().as_bytes())
                .with_context(|| format!("cannot write {}", path.display()))?;
            println!("comparison: {}", path.display());
        }
        None => print!("{text}"),
    }
    done(crate::EXIT_OK)
}

/// `compare a-trials.json b-trials.json`: two tunes setting by setting. None when no trials
/// document is named (a comparison of run results); a trials document beside a run result,
/// with --baseline or --vs, or more than two, is refused in one line.
fn compare_tunes(args: &CompareArgs) -> Result<Option<u8>> {
    let is_tune = |p: &Path| p.is_file() && rtgauge_result::tune::file_is_tune(p);
    let named: Vec<&PathBuf> = args.results.iter().chain(&args.vs).collect();
    let baseline = args.baseline.as_ref().map(PathBuf::from);
    let Some(tune) = named
        .iter()
        .map(|p| p.as_path())
        .chain(baseline.as_deref())
        .find(|p| is_tune(p))
    else {
        return Ok(None);
    };
    if let Some(run) = named.iter().find(|p| !is_tune(p)) {
        anyhow::bail!(
            "{} is a trials document (rtgauge tune) and {} is not: compare two trials documents \
             (rtgauge compare a-trials.json b-trials.json), or two run results (a tune's rounds \
             are run results, in the .rounds directory beside its trials document)",
            tune.display(),
            run.display()
        );
    }
    if baseline.is_some() || !args.vs.is_empty() || args.results.len() != 2 {
        anyhow::bail!(
            "two trials documents are compared with each other alone: rtgauge compare \
             a-trials.json b-trials.json (without --baseline or --vs)"
        );
    }
    if let Some(path) = &args.output {
        let inputs: Vec<&Path> = args.results.iter().map(PathBuf::as_path).collect();
        output::ensure_distinct(&inputs, &[("the comparison", path)])?;
        output::check(path, Existing::Replace)?;
    }
    let a = rtgauge_result::tune::read_tune(&args.results[0])?;
    let b = rtgauge_result::tune::read_tune(&args.results[1])?;
    let names = result_names(&args.results);
    let comparison = rtgauge_report::tune_compare::compare_tunes(&a, &b, [&names[0], &names[1]]);
    let text = comparison.render(args.format.render())?;
    match &args.output {
        Some(path) => {
            write_bytes_atomically(path, text.trim_end().as_bytes())
                .with_context(|| format!("cannot write {}", path.display()))?;
            println!("comparison: {}", path.display());
        }
        None => print!("{text}"),
    }
    Ok(Some(crate::EXIT_OK))
}
