//! `rtgauge show`: a stored result's full tables (or summary) printed again.

use crate::cli::{OutputFormat, ShowArgs, TableKind};
use anyhow::Result;
use rtgauge_report::{Format, Render, Summary, Tables};

pub fn show(args: ShowArgs) -> Result<u8> {
    let format = args.format.render();
    let judged = args.judge.spec.is_some() || !args.judge.baseline.is_empty();
    if judged && args.format != OutputFormat::Lava {
        anyhow::bail!(
            "--spec and --baseline judge the test cases of --format lava; for a check report use `rtgauge check`"
        );
    }
    // Read every file first: a bad one is reported before anything is printed.
    let mut results = args
        .results
        .iter()
        .map(|p| {
            super::history::resolve(&p.to_string_lossy(), &args.store, args.imported).map(|r| r.0)
        })
        .collect::<Result<Vec<_>>>()?;
    // A result written before rtgauge made worst-case estimates gets them from its maxima.
    results
        .iter_mut()
        .for_each(rtgauge_report::worst_case::estimate_missing);
    let several = results.len() > 1;
    if args.format == OutputFormat::RtTests {
        anyhow::ensure!(
            !several,
            "--format rt-tests prints one result at a time; run `rtgauge show` once per file"
        );
        print!("{}", rtgauge_import::rt_tests::export(&results[0]));
        return Ok(crate::EXIT_OK);
    }
    if args.format == OutputFormat::Lava {
        anyhow::ensure!(
            !several,
            "--format lava reports one result at a time; run `rtgauge show` once per file"
        );
        let check = super::lava::verdict(&results, &args.judge, &args.store, args.imported)?;
        let lab = rtgauge_report::lava::LabResults::of(&results[0], check.as_ref());
        super::lava::emit(&lab)?;
        return Ok(super::lava::exit_status(check.as_ref(), &lab));
    }
    if several && format == Format::Json {
        anyhow::bail!(
            "--format json prints one result at a time; run `rtgauge show` once per file"
        );
    }
    for (path, result) in args.results.iter().zip(&results) {
        match format {
            Format::Text(_) if several => println!("{}\n", path.display()),
            // pandas.read_csv(f, comment="#") skips it, as in `compare --format csv`.
            Format::Csv if several => println!("# {}", path.display()),
            _ => {}
        }
        let mut text = match args.table {
            TableKind::Full => Tables(result).render(format),
            TableKind::Summary => Summary::of(result).render(format),
        }
        .map_err(|e| anyhow::anyhow!("--table summary: {e}; --table full has every format"))?;
        // The full tables open with what the run lets one conclude, as the summary does
        // (after the line an import opens with: where it came from comes first).
        if let (TableKind::Full, Format::Text(_)) = (args.table, format) {
            let verdict = Summary::of(result).verdict_line();
            let verdict = rtgauge_report::format::fit_lines(verdict, rtgauge_report::Style::Plain);
            let imported = result.warnings.iter().any(|w| w.code == "imported");
            let at = match text.find("\n\n") {
                Some(i) if imported => i + 2,
                _ => 0,
            };
            text.insert_str(at, &format!("{verdict}\n\n"));
        }
        print!("{text}");
        // The full tables end with each probe's answer (a task set's verdict per task), as
        // the summary holds it.
        if let (TableKind::Full, Format::Text(_)) = (args.table, format) {
            let answers = rtgauge_report::summary::answers(result);
            if !answers.is_empty() {
                println!("\n{}", answers.join("\n"));
            }
        }
        // The full tables end with every finding and warning the run's summary held short.
        if let (TableKind::Full, Format::Text(_)) = (args.table, format) {
            let warnings = super::warnings::full_text(result);
            if !warnings.is_empty() {
                print!("\n{warnings}");
            }
        }
    }
    Ok(crate::EXIT_OK)
}
