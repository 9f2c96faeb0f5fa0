//! `rtgauge check`: a result against a spec of limits. Exit 0 pass, 2 a limit exceeded,
//! 1 error (unreadable result, bad spec).

use crate::cli::{CheckArgs, CheckFormat};
use anyhow::{Context, Result};
use rtgauge_report::check::{self, Style};
use rtgauge_report::{check_result, Spec};
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
    let report = check_result(&result, &spec);
    let text = match args.format {
        CheckFormat::Table => check::render_text(&report, Style::Terminal),
        CheckFormat::Markdown => check::render_text(&report, Style::Markdown),
        CheckFormat::Csv => check::render_csv(&report),
        CheckFormat::Json => check::render_json(&report),
    };
    print!("{text}");
    if let Some(path) = &args.junit {
        write_bytes_atomically(path, check::render_junit(&report).trim_end().as_bytes())
            .with_context(|| format!("cannot write the JUnit report {}", path.display()))?;
    }
    Ok(if report.passed {
        crate::EXIT_OK
    } else {
        crate::EXIT_THRESHOLD
    })
}
