//! `rtgauge check`: a result against a spec of limits or a baseline run. Exit 0 pass, 2 a
//! limit exceeded, a regression declared or an incomplete result (without
//! --allow-incomplete), 3 a statistic the runs could not decide (`--inconclusive`), 1 error
//! (unreadable result, bad spec).

use super::history::resolve;
use crate::cli::CheckArgs;
use anyhow::{Context, Result};
use rtgauge_report::check::{check_against_repeated, check_result_allowing, is_regress_stat};
use rtgauge_report::{Format, Render, Spec};
use rtgauge_result::output::{self, Existing};
use rtgauge_result::write_bytes_atomically;

pub fn check(args: CheckArgs) -> Result<u8> {
    if let Some(junit) = &args.junit {
        let mut inputs: Vec<&std::path::Path> = args.results.iter().map(|p| p.as_path()).collect();
        inputs.extend(args.spec.as_deref());
        output::ensure_distinct(&inputs, &[("the JUnit report", junit)])?;
        output::check(junit, Existing::Replace)?;
    }
    if let Some(bad) = args.regress_stats.iter().find(|s| !is_regress_stat(s)) {
        anyhow::bail!(
            "--regress-stats: '{bad}' is not a statistic; use median, mean, min, max or p90, p99, p99.9, p99.99, p99.999"
        );
    }
    if args.results.len() > 1 && args.baseline.is_empty() {
        anyhow::bail!(
            "several results are judged together only against a baseline: add --baseline RUN, or check each result against --spec in turn"
        );
    }
    let spec = args.spec.as_deref().map(Spec::load).transpose()?;
    let mut results = Vec::new();
    for path in &args.results {
        let (mut result, _) = resolve(&path.to_string_lossy(), &args.store, args.imported)?;
        // A result written before rtgauge made worst-case estimates gets them (pwcet_1h).
        rtgauge_report::worst_case::estimate_missing(&mut result);
        results.push(result);
    }
    let from_spec = spec
        .as_ref()
        .map(|spec| check_result_allowing(&results[0], spec, args.allow_incomplete));
    let from_baseline = if args.baseline.is_empty() {
        None
    } else {
        let mut baselines = Vec::new();
        let mut sources = Vec::new();
        for name in &args.baseline {
            let (baseline, source) = resolve(name, &args.store, args.imported)?;
            baselines.push(baseline);
            sources.push(source);
        }
        let source = match sources.as_slice() {
            [one] => one.clone(),
            [first, .., last] => format!("{first} … {last}"),
            [] => unreachable!("at least one baseline"),
        };
        Some(check_against_repeated(
            &baselines,
            &results,
            &source,
            args.regress,
            &args.regress_stats,
            args.allow_incomplete,
        ))
    };
    let report = match (from_spec, from_baseline) {
        (Some(mut a), Some(b)) => {
            a.spec = format!("{} and {}", a.spec, b.spec);
            a.passed &= b.passed;
            a.cases.extend(b.cases);
            a
        }
        (Some(a), None) | (None, Some(a)) => a,
        (None, None) => anyhow::bail!("check needs --spec FILE or --baseline RUN"),
    };
    let mut report = report;
    if args.inconclusive == crate::cli::InconclusiveOutcome::Fail {
        report.fail_inconclusive();
    }
    print!("{}", report.render(args.format.render())?);
    if let Some(path) = &args.junit {
        write_bytes_atomically(path, report.render(Format::Junit)?.trim_end().as_bytes())
            .with_context(|| format!("cannot write the JUnit report {}", path.display()))?;
    }
    use crate::cli::InconclusiveOutcome;
    Ok(
        match (report.passed, report.inconclusive(), args.inconclusive) {
            (false, _, _) => crate::EXIT_THRESHOLD,
            (true, 0, _) | (true, _, InconclusiveOutcome::Pass) => crate::EXIT_OK,
            (true, _, InconclusiveOutcome::Fail) => crate::EXIT_THRESHOLD,
            (true, _, InconclusiveOutcome::Status) => crate::EXIT_INCONCLUSIVE,
        },
    )
}
