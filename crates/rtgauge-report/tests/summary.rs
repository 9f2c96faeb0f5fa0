//! Properties of the run summary on generated results: whatever the labels, the number of
//! CPUs or the values, no line is wider than 100 columns and a probe run keeps to a screenful.

mod common;

use proptest::prelude::*;
use rtgauge_report::summary::MAX_WIDTH;
use rtgauge_report::{Format, Render, Style};
use rtgauge_result::{ProbeRun, ProbeStatus, Series};
use rtgauge_stats::Recorder;

fn series(name: &str, values: &[u64]) -> Series {
    let mut r = Recorder::default();
    for (i, &v) in values.iter().enumerate() {
        r.record(v, i as u64 * 1_000);
    }
    Series::new(name, r.summary())
}

fn run_of(probe: &str, variant: &str, series: Vec<Series>, status: ProbeStatus) -> ProbeRun {
    let mut run = common::build(false).runs[0].clone();
    run.probe = probe.into();
    run.variant = (!variant.is_empty()).then(|| variant.to_string());
    run.series = series;
    run.status = status;
    run
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn summary_lines_never_exceed_100_columns(
        cpus in 1usize..40,
        label in "\\PC{0,150}",
        variant in "[a-z0-9]{0,60}",
        values in prop::collection::vec(1u64..10_000_000_000, 1..50),
        reason in "\\PC{0,300}",
    ) {
        let mut result = common::build(false);
        let cyclic: Vec<Series> = (0..cpus)
            .map(|cpu| series("latency", &values).label("cpu", cpu).counter("overruns", cpu as u64))
            .collect();
        let other: Vec<Series> = (0..5)
            .map(|i| series(&format!("{label}{i}"), &values).label("what", &label))
            .collect();
        let placed: Vec<Series> = ["same-cpu", "cross-cpu"]
            .iter()
            .map(|p| series("response", &values).label("source", &label).label("placement", p))
            .collect();
        result.runs = vec![
            run_of("cyclic", &variant, cyclic, ProbeStatus::Ok),
            run_of(&label, "", other, ProbeStatus::Ok),
            run_of("response", "", placed, ProbeStatus::Ok),
            run_of("ioport", &variant, Vec::new(), ProbeStatus::Skipped { reason }),
        ];
        result.config.suite = Some(label.clone());
        let summary = common::summary_of(&result);
        for style in [Style::Terminal, Style::Plain] {
            let text = summary.render(Format::Text(style)).unwrap();
            for line in text.lines() {
                prop_assert!(line.chars().count() <= MAX_WIDTH, "{} columns: {line}", line.chars().count());
            }
        }
        let cyclic = summary.sections.iter().find(|s| s.probe.starts_with("cyclic")).unwrap();
        prop_assert!(cyclic.rows.len() <= 8, "{} rows", cyclic.rows.len());
    }
}
