//! Results as board farms take them: LAVA test cases (`lava-test-case NAME --result pass
//! --measurement 12.345 --units us`), one LAVA test set per probe run, and the same names as
//! SQUAD tests and metrics.
//!
//! Every headline statistic of every series becomes one test case: min, median, mean, each
//! percentile the sample count supports, max (in µs, to the nanosecond) and every counter
//! (overruns…). Names join the probe run, the series' label values, the series and the
//! statistic (`cyclic-rt-cpu0-latency-max`), reduced to the characters LAVA accepts in a test
//! case name (`[A-Za-z0-9._-]`), so they are identical in LAVA, SQUAD and the shell.
//!
//! A case passes unless a verdict says otherwise: with a spec or baseline check
//! ([`crate::check::CheckReport`]), a statistic the check judged takes its verdict (an
//! inconclusive one is `unknown`), and what the check judged beyond the headline (a
//! predicted maximum, a limit that matched nothing, an incomplete result) gets a case of its
//! own. Without one every measurement passes, as labs expect of pure measurements — except
//! what a series states about itself, which is the run's own verdict and must read the same
//! in a lab: a series that counts `deadline_misses` fails its `…-deadline_misses` case when
//! one was missed, and a series that says whether it `fits` (a metric of 1 or 0: the task
//! set's analysis) gets a `…-fits` case that fails when it does not.

use crate::check::{CheckReport, Verdict};
use rtgauge_result::{ProbeRun, ProbeStatus, RunResult, Series};
use std::fmt::Write as _;

/// A LAVA test result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    Pass,
    Fail,
    Skip,
    Unknown,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Fail => "fail",
            Outcome::Skip => "skip",
            Outcome::Unknown => "unknown",
        }
    }

    /// The worse of two outcomes (a failure wins over anything).
    fn and(self, other: Outcome) -> Outcome {
        use Outcome::*;
        match (self, other) {
            (Fail, _) | (_, Fail) => Fail,
            (Unknown, _) | (_, Unknown) => Unknown,
            (Skip, _) | (_, Skip) => Skip,
            _ => Pass,
        }
    }
}

/// A measured value with its unit, as LAVA takes it (`--measurement 12.345 --units us`).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Measurement {
    /// The number as written (microseconds to three decimals, or a whole count).
    pub value: String,
    pub units: &'static str,
}

impl Measurement {
    /// A time in nanoseconds, written in microseconds to the nanosecond.
    fn micros(ns: f64) -> Measurement {
        Measurement {
            value: format!("{:.3}", ns / 1000.0),
            units: "us",
        }
    }

    fn count(n: u64) -> Measurement {
        Measurement {
            value: n.to_string(),
            units: "count",
        }
    }

    /// The value as a number (for SQUAD's metrics).
    pub fn number(&self) -> f64 {
        self.value.parse().unwrap_or(f64::NAN)
    }
}

/// One test case.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TestCase {
    pub name: String,
    pub result: Outcome,
    pub measurement: Option<Measurement>,
    /// Whether a spec or baseline (or the run's own status) decided `result`; a headline
    /// statistic nobody judged passes and is not a test, only a measurement.
    pub judged: bool,
}

/// One LAVA test set: the cases of one probe run, or of the check as a whole.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TestSet {
    pub name: String,
    pub cases: Vec<TestCase>,
}

/// A result (and optionally its check) as LAVA test sets.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LabResults {
    pub sets: Vec<TestSet>,
    /// Cases failed by what the series state about themselves (a missed deadline, a task set
    /// that does not fit): the run exited 2 for them, and so does its report to a lab.
    pub own_failures: usize,
}

/// A part of a name reduced to LAVA's characters: letters, digits, `.` and `_` are kept,
/// every run of anything else becomes one `_`.
pub fn name_part(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || c == '.' || c == '_' {
            out.push(c);
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    let trimmed = out.trim_matches('_');
    if trimmed.is_empty() {
        "_".into()
    } else {
        trimmed.into()
    }
}

/// The test set of a probe run: `cyclic-rt`, `cyclic_1ms-rt-hackbench` (the load is named
/// when there is one).
pub fn set_name(run: &ProbeRun) -> String {
    let mut parts = vec![name_part(&run.title()), name_part(&run.mode)];
    if run.load != "none" {
        parts.push(name_part(&run.load));
    }
    parts.join("-")
}

/// The stem of a series' case names: the run's set name, the label values (a numeric value
/// keeps its key: `cpu0`, `size4096`; a word stands alone: `pipe`), the series name.
pub fn series_stem(run: &ProbeRun, series: &Series) -> String {
    let mut parts = vec![set_name(run)];
    for (key, value) in &series.labels {
        let numeric = value.chars().all(|c| c.is_ascii_digit() || c == '.');
        parts.push(if numeric {
            name_part(&format!("{key}{value}"))
        } else {
            name_part(value)
        });
    }
    parts.push(name_part(&series.name));
    parts.join("-")
}

/// The headline statistics of a series: (statistic, measurement).
fn headline(series: &Series) -> Vec<(String, Measurement)> {
    let st = &series.stats;
    let mut out = Vec::new();
    let mut time = |name: &str, ns: Option<u64>| {
        if let Some(v) = series.per_op_ns(ns) {
            out.push((name.to_string(), Measurement::micros(v)));
        }
    };
    time("min", st.min_ns);
    time("median", st.median_ns);
    time("mean", st.mean_ns);
    for (label, q, value) in st.percentiles.entries() {
        if rtgauge_stats::percentile_supported(q, st.count) {
            time(label, value);
        }
    }
    time("max", st.max_ns);
    for (name, n) in &series.counters {
        out.push((name_part(name), Measurement::count(*n)));
    }
    out
}

/// A check's statistic label as a case suffix: the spec's `pwcet_1h` for the predicted
/// maximum, otherwise the label reduced to LAVA's characters.
fn stat_suffix(label: &str) -> String {
    match label {
        "predicted 1-h max" => "pwcet_1h".into(),
        other => name_part(other),
    }
}

/// What a judged statistic measured, when it is a time or a count (the spec's `p95`, the
/// predicted maximum, overruns); a noise share or a rate stays a verdict only.
fn bound_measurement(label: &str, value: Option<f64>) -> Option<Measurement> {
    let value = value?;
    let time = matches!(
        label,
        "min" | "max" | "mean" | "median" | "predicted 1-h max"
    ) || crate::check::parse_percentile_key(label).is_some();
    if time {
        Some(Measurement::micros(value))
    } else if crate::counts::LOST_PERIODS.contains(&label) && value >= 0.0 {
        Some(Measurement::count(value as u64))
    } else {
        None
    }
}

/// The verdict a series carries about itself: a missed deadline fails the series'
/// `…-deadline_misses` case (the run exited 2 for it).
/// Returns the cases it failed (0 or 1).
fn own_verdicts(series: &Series, stem: &str, cases: &mut [TestCase]) -> usize {
    let Some(&missed) = series.counters.get("deadline_misses") else {
        return 0;
    };
    let name = format!("{stem}-deadline_misses");
    if let Some(c) = cases.iter_mut().find(|c| c.name == name) {
        c.result = if missed == 0 {
            Outcome::Pass
        } else {
            Outcome::Fail
        };
        c.judged = true;
    }
    usize::from(missed > 0)
}

/// Whether a series' own verdict failed (a missed deadline, a task set that does not fit):
/// the exit status of a lab's report is 2 then, as the run's was.
pub fn any_failed(lab: &LabResults) -> bool {
    lab.own_failures > 0
}

fn outcome(v: Verdict) -> Outcome {
    match v {
        Verdict::Pass | Verdict::NotApplicable => Outcome::Pass,
        Verdict::Fail => Outcome::Fail,
        Verdict::Inconclusive => Outcome::Unknown,
    }
}

impl LabResults {
    /// The test sets of `result`, judged by `check` when one is given.
    pub fn of(result: &RunResult, check: Option<&CheckReport>) -> LabResults {
        let mut used = vec![false; check.map_or(0, |c| c.cases.len())];
        let mut own_failures = 0;
        let mut sets = Vec::new();
        for run in &result.runs {
            let mut set = TestSet {
                name: set_name(run),
                cases: Vec::new(),
            };
            match &run.status {
                ProbeStatus::Ok => {}
                ProbeStatus::Skipped { .. } | ProbeStatus::Failed { .. } => {
                    // The run itself is the one case: skipped or failed, nothing measured.
                    set.cases.push(TestCase {
                        name: set.name.clone(),
                        result: if matches!(run.status, ProbeStatus::Skipped { .. }) {
                            Outcome::Skip
                        } else {
                            Outcome::Fail
                        },
                        measurement: None,
                        judged: true,
                    });
                }
            }
            for series in &run.series {
                let stem = series_stem(run, series);
                let first = set.cases.len();
                for (stat, m) in headline(series) {
                    set.cases.push(TestCase {
                        name: format!("{stem}-{stat}"),
                        result: Outcome::Pass,
                        measurement: Some(m),
                        judged: false,
                    });
                }
                own_failures += own_verdicts(series, &stem, &mut set.cases[first..]);
                if let Some(fits) = series.metrics.get("fits") {
                    let fits = *fits == 1.0;
                    own_failures += usize::from(!fits);
                    set.cases.push(TestCase {
                        name: format!("{stem}-fits"),
                        result: if fits { Outcome::Pass } else { Outcome::Fail },
                        measurement: None,
                        judged: true,
                    });
                }
                let Some(check) = check else { continue };
                let display = series.display_name();
                for (i, case) in check.cases.iter().enumerate() {
                    let same = case.probe == run.title()
                        && case.mode == run.mode
                        && case.load == run.load
                        && case.series == display;
                    if !same {
                        continue;
                    }
                    used[i] = true;
                    for bound in &case.bounds {
                        let name = format!("{stem}-{}", stat_suffix(&bound.stat));
                        let verdict = outcome(bound.verdict);
                        match set.cases[first..].iter_mut().find(|c| c.name == name) {
                            Some(c) => {
                                c.result = if c.judged {
                                    c.result.and(verdict)
                                } else {
                                    verdict
                                };
                                c.judged = true;
                            }
                            None => set.cases.push(TestCase {
                                name,
                                result: verdict,
                                measurement: bound_measurement(&bound.stat, bound.value),
                                judged: true,
                            }),
                        }
                    }
                }
            }
            sets.push(set);
        }
        if let Some(check) = check {
            let mut rest = TestSet {
                name: "check".into(),
                cases: Vec::new(),
            };
            for (case, _) in check.cases.iter().zip(&used).filter(|(_, used)| !**used) {
                // A limit that matched nothing, a probe that never ran, a cause bound: the
                // limit's name (or its place in the spec) names the case.
                let name = match &case.name {
                    Some(n) => name_part(n),
                    None => format!("limit{}", case.limit),
                };
                let mut parts = vec![name];
                for what in [&case.probe, &case.series] {
                    if what.chars().any(|c| c.is_ascii_alphanumeric()) {
                        parts.push(name_part(what));
                    }
                }
                let mut name = parts.join("-");
                while rest.cases.iter().any(|c| c.name == name) {
                    name.push_str("_again");
                }
                let inconclusive = case
                    .bounds
                    .iter()
                    .any(|b| b.verdict == Verdict::Inconclusive);
                rest.cases.push(TestCase {
                    name,
                    result: match (case.passed, inconclusive) {
                        (false, _) => Outcome::Fail,
                        (true, true) => Outcome::Unknown,
                        (true, false) => Outcome::Pass,
                    },
                    measurement: None,
                    judged: true,
                });
            }
            if !check.incomplete.is_empty() {
                rest.cases.push(TestCase {
                    name: "complete".into(),
                    result: if check.incomplete_allowed {
                        Outcome::Pass
                    } else {
                        Outcome::Fail
                    },
                    measurement: None,
                    judged: true,
                });
            }
            if !rest.cases.is_empty() {
                sets.push(rest);
            }
        }
        LabResults { sets, own_failures }
    }

    /// Every case, in order.
    pub fn cases(&self) -> impl Iterator<Item = &TestCase> {
        self.sets.iter().flat_map(|s| s.cases.iter())
    }

    /// The commands a LAVA test shell runs, one argument vector each: `lava-test-set start`,
    /// the set's `lava-test-case` lines, `lava-test-set stop`.
    pub fn commands(&self) -> Vec<Vec<String>> {
        let mut out = Vec::new();
        for set in &self.sets {
            out.push(vec![
                "lava-test-set".into(),
                "start".into(),
                set.name.clone(),
            ]);
            for case in &set.cases {
                let mut argv = vec![
                    "lava-test-case".to_string(),
                    case.name.clone(),
                    "--result".into(),
                    case.result.as_str().into(),
                ];
                if let Some(m) = &case.measurement {
                    argv.extend([
                        "--measurement".into(),
                        m.value.clone(),
                        "--units".into(),
                        m.units.into(),
                    ]);
                }
                out.push(argv);
            }
            out.push(vec![
                "lava-test-set".into(),
                "stop".into(),
                set.name.clone(),
            ]);
        }
        out
    }

    /// The commands as shell lines (names hold only `[A-Za-z0-9._-]`: no quoting needed).
    pub fn render_shell(&self) -> String {
        let mut out = String::new();
        for argv in self.commands() {
            let _ = writeln!(out, "{}", argv.join(" "));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_keep_only_lava_characters() {
        assert_eq!(name_part("cyclic@1ms"), "cyclic_1ms");
        assert_eq!(name_part("exec:make -j4"), "exec_make_j4");
        assert_eq!(name_part("p99.9"), "p99.9");
        assert_eq!(name_part("µs/ "), "s");
        assert_eq!(name_part("µ/ "), "_");
        let allowed = |s: &str| {
            s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        };
        for text in ["a b", "x;rm -rf /", "ünï", "--result", "$(id)"] {
            let part = name_part(text);
            assert!(allowed(&part) && !part.is_empty(), "{text:?} -> {part:?}");
            assert!(!part.starts_with('-'), "{part} would read as an option");
        }
    }

    #[test]
    fn outcomes_combine_to_the_worse() {
        assert_eq!(Outcome::Pass.and(Outcome::Fail), Outcome::Fail);
        assert_eq!(Outcome::Unknown.and(Outcome::Pass), Outcome::Unknown);
        assert_eq!(Outcome::Pass.and(Outcome::Pass), Outcome::Pass);
    }

    #[test]
    fn microseconds_keep_the_nanosecond() {
        assert_eq!(Measurement::micros(12_345.0).value, "12.345");
        assert_eq!(Measurement::micros(2_000.0).value, "2.000");
        assert_eq!(Measurement::micros(7_000.0).number(), 7.0);
    }
}
