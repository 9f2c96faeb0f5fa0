//! How each probe's runs read in the summary: the [`SummaryRows`] a probe implements beside
//! its measuring, the registry the program fills at start, and what the registered rows give
//! beyond the figures (each run's answer and its own failures).

use super::Cells;
use crate::format::TimeUnit;
use rtgauge_result::{ProbeRun, RunResult};

/// How one probe's runs read in the summary: the question its figures answer, its columns,
/// its rows and the notes below them. Each probe implements it beside its measuring (crate
/// rtgauge-probes) and the program registers it at start with [`register`], as it registers
/// the probe; a probe without one shows its series with the highest maxima. The renderer
/// knows no probe.
pub trait SummaryRows: Sync {
    /// The probe these rows are for (`ProbeRun::probe`).
    fn probe(&self) -> &'static str;
    /// What the figures answer: `wake-up latency` (the title adds the unit when [`timed`]).
    ///
    /// [`timed`]: SummaryRows::timed
    fn question(&self) -> &'static str;
    /// Whether the cells are times in the section's unit (the title then names it).
    fn timed(&self) -> bool {
        true
    }
    /// Column headings after the row label, for these runs of the probe.
    fn columns(&self, runs: &[&ProbeRun]) -> Vec<String>;
    /// One run's rows, the most telling first: the summary keeps
    /// [`MAX_ROWS`](super::MAX_ROWS) and counts the rest. `runs` are all the runs of the
    /// section (columns shared among them).
    fn rows(&self, run: &ProbeRun, runs: &[&ProbeRun], unit: TimeUnit) -> Vec<Cells>;
    /// Lines below the rows for one run (a verdict, what the rows were chosen from).
    fn notes(&self, _run: &ProbeRun, _result: &RunResult) -> Vec<String> {
        Vec::new()
    }
    /// The run's answer when the probe gives one beyond its figures (a task set's verdict per
    /// task: predicted worst, measured, missed, fits). It is part of every output that shows
    /// the run: the first notes of the summary and the report, and [`answers`] after the full
    /// tables. Empty by default.
    fn answer(&self, _run: &ProbeRun) -> Vec<String> {
        Vec::new()
    }
    /// What failed the run by the probe's own verdict (a task that missed a deadline or does
    /// not fit: the run exits 2), one line each; the summary's verdict line says it. Empty by
    /// default.
    fn failed(&self, _run: &ProbeRun) -> Vec<String> {
        Vec::new()
    }
    /// The run's verdict in one sentence when the probe has its own (a task set names its
    /// tasks at risk first): it leads the verdict line of every output, before the figures'
    /// own sentence. None by default: the figures speak.
    fn verdict(&self, _run: &ProbeRun) -> Option<String> {
        None
    }
}

/// Every probe run's own verdict ([`SummaryRows::verdict`]), in the order of the runs.
pub fn own_verdicts(result: &RunResult) -> Vec<String> {
    result
        .runs
        .iter()
        .filter_map(|r| find(&r.probe).and_then(|shape| shape.verdict(r)))
        .collect()
}

/// Every probe run's own failures ([`SummaryRows::failed`]), in the order of the runs.
pub fn own_failures(result: &RunResult) -> Vec<String> {
    result
        .runs
        .iter()
        .filter_map(|r| find(&r.probe).map(|shape| shape.failed(r)))
        .flatten()
        .collect()
}

/// Every probe run's answer ([`SummaryRows::answer`]) for the end of the full tables: a line
/// `probe: question` per probe that gives one, then its lines indented (prefixed by the run
/// when the probe ran several times). Empty when no probe gives an answer.
pub fn answers(result: &RunResult) -> Vec<String> {
    let mut out = Vec::new();
    for title in rtgauge_result::distinct_titles(&result.runs) {
        let runs: Vec<&ProbeRun> = result.runs.iter().filter(|r| r.title() == title).collect();
        let Some(shape) = runs.first().and_then(|r| find(&r.probe)) else {
            continue;
        };
        let several = runs.len() > 1;
        let lines: Vec<String> = runs
            .iter()
            .flat_map(|r| {
                shape.answer(r).into_iter().map(move |l| {
                    if several {
                        format!("  {}: {l}", r.key())
                    } else {
                        format!("  {l}")
                    }
                })
            })
            .collect();
        if !lines.is_empty() {
            out.push(format!("{title}: {}", shape.question()));
            out.extend(lines);
        }
    }
    out
}

/// Every registered [`SummaryRows`], in registration order.
static REGISTERED: std::sync::RwLock<Vec<&'static dyn SummaryRows>> =
    std::sync::RwLock::new(Vec::new());

/// Adds a probe's summary rows: the summary (and the report) shape that probe's runs with
/// them. A probe already registered keeps its first rows, so registering twice is harmless.
pub fn register(rows: &'static dyn SummaryRows) {
    let mut all = REGISTERED.write().unwrap_or_else(|e| e.into_inner());
    if !all.iter().any(|r| r.probe() == rows.probe()) {
        all.push(rows);
    }
}

/// The summary rows registered for `probe`.
pub(super) fn find(probe: &str) -> Option<&'static dyn SummaryRows> {
    REGISTERED
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .copied()
        .find(|r| r.probe() == probe)
}
