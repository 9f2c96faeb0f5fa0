//! `rtgauge check`: a result against a spec of limits. Exit 0 pass, 2 a limit exceeded or
//! an incomplete result (without --allow-incomplete), 1 error (unreadable result, bad spec).

use crate::cli::{CheckArgs, CheckFormat};
use anyhow::{Context, Result};
use rtgauge_report::check::check_result_allowing;
use rtgauge_report::{Format, Render, Spec, Style};
use rtgauge_result::output::{self, Existing};
use rtgauge_result::{read_result, write_bytes_atomically};

pub fn check(args: CheckArgs) -> Result<u8> {
    if let Some(junit) = &args.junit {
        output::ensure_distinct(
            &[args.result.as_path(), args.spec.as_path()],
            &[("the JUnit report", junit)],
        )?;
        output::check(junit, Existing::Replace)?;
    }
    let spec = Spec::load(&args.spec)?;
    let result = read_result(&args.result)?;
    let report = check_result_allowing(&result, &spec, args.allow_incomplete);
    let format = match args.format {
        CheckFormat::Table => Format::Text(crate::display::text_style()),
        CheckFormat::Markdown => Format::Text(Style::Markdown),
        CheckFormat::Csv => Format::Csv,
        CheckFormat::Json => Format::Json,
    };
    print!("{}", report.render(format)?);
    if let Some(path) = &args.junit {
        write_bytes_atomically(path, report.render(Format::Junit)?.trim_end().as_bytes())
            .with_context(|| format!("cannot write the JUnit report {}", path.display()))?;
    }
    Ok(if report.passed {
        crate::EXIT_OK
    } else {
        crate::EXIT_THRESHOLD
    })
}
