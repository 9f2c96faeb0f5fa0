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
    if let Some(bad) = args.regress.stats.iter().find(|s| !is_regress_stat(s)) {
        anyhow::bail!(
            "--regress-stats: '{bad}' is not a statistic; use median, mean, min, max, p90, p99, p99.9, p99.99, p99.999, overruns or deadline_misses"
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
    let report = judge(
        &results,
        spec.as_ref(),
        &Baselines {
            names: &args.baseline,
            store: &args.store,
            imported: args.imported,
            regress: args.regress.percent,
            stats: &args.regress.stats,
        },
        args.allow_incomplete,
    )?
    .ok_or_else(|| anyhow::anyhow!("check needs --spec FILE or --baseline RUN"))?;
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

/// The baseline side of a verdict: which runs, and how much worse is a regression.
pub struct Baselines<'a> {
    pub names: &'a [String],
    pub store: &'a crate::cli::StoreArgs,
    pub imported: bool,
    pub regress: f64,
    pub stats: &'a [String],
}

/// The verdict on `results` (repeated runs of one configuration; a spec judges the first):
/// limits from `spec`, a regression against `baselines`, both, or none (`Ok(None)`).
pub fn judge(
    results: &[rtgauge_result::RunResult],
    spec: Option<&Spec>,
    baselines: &Baselines,
    allow_incomplete: bool,
) -> Result<Option<rtgauge_report::CheckReport>> {
    if let Some(bad) = baselines.stats.iter().find(|s| !is_regress_stat(s)) {
        anyhow::bail!(
            "--regress-stats: '{bad}' is not a statistic; use median, mean, min, max, p90, p99, p99.9, p99.99, p99.999, overruns or deadline_misses"
        );
    }
    let from_spec = spec.map(|spec| check_result_allowing(&results[0], spec, allow_incomplete));
    let from_baseline = if baselines.names.is_empty() {
        None
    } else {
        let mut runs = Vec::new();
        let mut sources = Vec::new();
        for name in baselines.names {
            let (baseline, source) = resolve(name, baselines.store, baselines.imported)?;
            runs.push(baseline);
            sources.push(source);
        }
        let source = match sources.as_slice() {
            [one] => one.clone(),
            [first, .., last] => format!("{first} … {last}"),
            [] => unreachable!("at least one baseline"),
        };
        Some(check_against_repeated(
            &runs,
            results,
            &source,
            baselines.regress,
            baselines.stats,
            allow_incomplete,
        ))
    };
    Ok(match (from_spec, from_baseline) {
        (Some(mut a), Some(b)) => {
            a.spec = format!("{} and {}", a.spec, b.spec);
            a.passed &= b.passed;
            a.cases.extend(b.cases);
            Some(a)
        }
        (Some(a), None) | (None, Some(a)) => Some(a),
        (None, None) => None,
    })
}
