//! How a task set's runs read in the summary, the report and after `show`'s full tables: one
//! row per task (its response's median and maximum, the jobs that missed their deadline), and
//! as the run's answer the task set's own summary lines ([`crate::taskset::summary_lines`]:
//! predicted worst, measured, missed, fits), the same lines `run` ends with.
//!
//! It sits beside the task set's folder rather than in it so that what the lines say stays
//! the probe's alone: this file only lays them out.

use crate::names::TASKSET;
use crate::taskset::{failures, summary_lines, verdict};
use rtgauge_report::format::TimeUnit;
use rtgauge_report::summary::{fmt, Cells, SummaryRows};
use rtgauge_result::ProbeRun;

/// The task set's summary rows.
pub struct TaskSetRows;

pub static SUMMARY_ROWS: TaskSetRows = TaskSetRows;

impl SummaryRows for TaskSetRows {
    fn probe(&self) -> &'static str {
        TASKSET
    }

    fn question(&self) -> &'static str {
        "response time per task (release to completion)"
    }

    fn columns(&self, _runs: &[&ProbeRun]) -> Vec<String> {
        vec!["median".into(), "max".into(), "missed".into()]
    }

    fn rows(&self, run: &ProbeRun, _runs: &[&ProbeRun], unit: TimeUnit) -> Vec<Cells> {
        run.series
            .iter()
            .filter(|s| s.name == "response")
            .map(|s| {
                let task = s.labels.get("task").map_or("?", String::as_str);
                let missed = s.counters.get("deadline_misses").copied().unwrap_or(0);
                let jobs = s.counters.get("jobs").copied().unwrap_or(s.stats.count);
                (
                    format!("task {task}"),
                    vec![
                        fmt(unit, s, s.stats.median_ns),
                        fmt(unit, s, s.stats.max_ns),
                        format!("{missed} of {jobs}"),
                    ],
                )
            })
            .chain(
                // rt-app tasks that run their events: their passes, as rt-app logs them.
                run.series
                    .iter()
                    .filter(|s| s.name == "period" && s.labels.contains_key("task"))
                    .map(|s| {
                        let task = s.labels.get("task").map_or("?", String::as_str);
                        let phase = s
                            .labels
                            .get("phase")
                            .map(|p| format!(" phase {p}"))
                            .unwrap_or_default();
                        let count = |k: &str| s.counters.get(k).copied().unwrap_or(0);
                        (
                            format!("task {task}{phase} (rt-app events: period of a pass)"),
                            vec![
                                fmt(unit, s, s.stats.median_ns),
                                fmt(unit, s, s.stats.max_ns),
                                format!(
                                    "{} late timers of {} passes",
                                    count("timers_late"),
                                    count("passes")
                                ),
                            ],
                        )
                    }),
            )
            .collect()
    }

    fn answer(&self, run: &ProbeRun) -> Vec<String> {
        summary_lines(run)
    }

    fn failed(&self, run: &ProbeRun) -> Vec<String> {
        failures(run)
    }

    fn verdict(&self, run: &ProbeRun) -> Option<String> {
        verdict(run)
    }
}
