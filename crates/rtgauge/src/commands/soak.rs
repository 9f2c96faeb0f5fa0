//! `--duration forever`: a soak run, measured until Ctrl-C in consecutive windows. Every
//! window is a full pass of the plan with `--soak-window` as each probe's duration, its runs
//! titled `PROBE@wN`; the result is saved after every probe of every window (the runner's
//! checkpoint, with the earlier windows' runs in front), so a soak that is killed or loses
//! power keeps all but the probe being measured. After the windows, the result holds each
//! probe once more under its own title (`PROBE`): all its windows as one distribution, so the
//! soak's worst case and percentiles are those of the whole soak, not of its last window.

use rtgauge_core::plan::Plan;
use rtgauge_core::runner::{self, RunError, RunInputs, RunObserver};
use rtgauge_result::{ProbeRun, ProbeStatus, RunResult, RunStatus, Series};
use rtgauge_stats::Summary;

/// Each probe's measuring time in one window when `--soak-window` is not given.
pub const DEFAULT_WINDOW_NS: u64 = 5 * 60 * 1_000_000_000;

/// Runs `plan` window after window until a stop is requested (or a window does not
/// complete); the result holds every window's runs in order.
pub fn execute(
    plan: &Plan,
    inputs: &RunInputs,
    observer: &mut dyn RunObserver,
) -> Result<RunResult, RunError> {
    let mut earlier: Vec<ProbeRun> = Vec::new();
    let mut started_unix_ns = None;
    for window in 1.. {
        let mut merging = Merging {
            inner: &mut *observer,
            earlier: &earlier,
            window,
            started_unix_ns,
        };
        let mut result = runner::execute(plan, inputs, &mut merging)?;
        let windows = merge(&mut result, &earlier, window, started_unix_ns);
        started_unix_ns.get_or_insert(result.started_unix_ns);
        if rtgauge_core::signals::stop_requested() {
            // A soak ends only by a stop: also when the stop came just as a window completed
            // (it then exited 0 as if complete, where every other stop exits 128 + signal).
            if result.status == RunStatus::Complete {
                result.status = RunStatus::Interrupted;
            }
            return Ok(result);
        }
        if result.status != RunStatus::Complete {
            return Ok(result);
        }
        earlier = windows;
    }
    unreachable!("windows are counted until a stop is requested")
}

/// Passes the runner's reports on, naming the window and carrying the earlier windows' runs
/// into every checkpoint.
struct Merging<'a> {
    inner: &'a mut dyn RunObserver,
    earlier: &'a [ProbeRun],
    window: u64,
    started_unix_ns: Option<u64>,
}

impl RunObserver for Merging<'_> {
    fn probe_started(&mut self, probe: &str, mode: &str, load: &str) {
        let title = window_title(probe, self.window);
        self.inner.probe_started(&title, mode, load);
    }

    fn checkpoint(&mut self, result: &RunResult) {
        let mut merged = result.clone();
        merge(&mut merged, self.earlier, self.window, self.started_unix_ns);
        // A window that completed is not a soak that did: until Ctrl-C ends it, a saved soak
        // is as incomplete as any run's checkpoint (and `check` refuses it the same way).
        if merged.status == RunStatus::Complete {
            merged.status = RunStatus::Interrupted;
        }
        self.inner.checkpoint(&merged);
    }
}

/// This window's runs labelled with it, after the earlier windows' runs, then each probe's
/// windows joined into one run; the soak started when its first window did. Returns the
/// windows' runs alone, for the next window.
fn merge(
    result: &mut RunResult,
    earlier: &[ProbeRun],
    window: u64,
    started: Option<u64>,
) -> Vec<ProbeRun> {
    for run in &mut result.runs {
        run.variant = Some(match run.variant.take() {
            Some(v) => format!("{v}-w{window}"),
            None => format!("w{window}"),
        });
    }
    let mut windows = earlier.to_vec();
    windows.append(&mut result.runs);
    result.runs = windows.clone();
    result.runs.extend(whole_soak(&windows));
    if let Some(started) = started {
        result.started_unix_ns = started;
    }
    windows
}

/// The variant a window's run was measured as: `w3` → none, `100us-w3` → `100us` (the inverse
/// of the labels `merge` gives).
fn unlabelled_variant(variant: Option<&str>) -> Option<String> {
    variant?
        .rsplit_once("-w")
        .map(|(measured, _window)| measured.to_string())
}

/// One run per probe entry (probe, variant, mode and load), in the order the windows measured
/// them, whose series join that entry's windows one after the other in time.
fn whole_soak(windows: &[ProbeRun]) -> Vec<ProbeRun> {
    let entry = |run: &ProbeRun| {
        (
            run.probe.clone(),
            unlabelled_variant(run.variant.as_deref()),
            run.mode.clone(),
            run.load.clone(),
        )
    };
    let mut entries = Vec::new();
    for run in windows {
        if !entries.contains(&entry(run)) {
            entries.push(entry(run));
        }
    }
    entries
        .into_iter()
        .map(|key| {
            let runs: Vec<&ProbeRun> = windows.iter().filter(|r| entry(r) == key).collect();
            joined_run(key.1, &runs)
        })
        .collect()
}

/// The windows of one probe entry as one run: measuring and warm-up times add up, the context
/// obtained is the worst of the windows', and a window that failed or was skipped marks the
/// whole. Spike attributions stay with the window in which they happened.
fn joined_run(variant: Option<String>, runs: &[&ProbeRun]) -> ProbeRun {
    let first = runs[0];
    // Each window's series start where the previous windows' measuring time ends.
    let mut starts = Vec::with_capacity(runs.len());
    let mut measured_ns = 0;
    for run in runs {
        starts.push(measured_ns);
        measured_ns += run.measured_ns;
    }
    let series = first
        .series
        .iter()
        .map(|template| {
            let parts: Vec<(u64, &Series)> = runs
                .iter()
                .zip(&starts)
                .filter_map(|(run, &start)| {
                    run.series
                        .iter()
                        .find(|s| s.name == template.name && s.labels == template.labels)
                        .map(|s| (start, s))
                })
                .collect();
            joined_series(template, &parts)
        })
        .collect();
    let obtained: Vec<_> = runs.iter().map(|r| r.obtained.clone()).collect();
    ProbeRun {
        probe: first.probe.clone(),
        variant,
        mode: first.mode.clone(),
        load: first.load.clone(),
        status: runs
            .iter()
            .map(|r| &r.status)
            .find(|s| !matches!(s, ProbeStatus::Ok))
            .unwrap_or(&ProbeStatus::Ok)
            .clone(),
        obtained: rtgauge_core::threads::merge_obtained(&obtained),
        params: first.params.clone(),
        warmup_ns: runs.iter().map(|r| r.warmup_ns).sum(),
        measured_ns,
        series,
        spikes: Vec::new(),
        spikes_unexplained: 0,
    }
}

/// One series over all windows: the distributions concatenated, counters added, and the other
/// figures (bandwidth, drift…) averaged weighted by each window's sample count.
fn joined_series(template: &Series, parts: &[(u64, &Series)]) -> Series {
    let summaries: Vec<(u64, &Summary)> = parts.iter().map(|(at, s)| (*at, &s.stats)).collect();
    let mut joined = Series::new(template.name.clone(), Summary::concatenate(&summaries));
    joined.labels = template.labels.clone();
    joined.batch = template.batch;
    let mut weights: std::collections::BTreeMap<&str, (f64, f64)> = Default::default();
    for (_, series) in parts {
        for (name, count) in &series.counters {
            *joined.counters.entry(name.clone()).or_default() += count;
        }
        let weight = series.stats.count.max(1) as f64;
        for (name, value) in &series.metrics {
            let (sum, total) = weights.entry(name).or_default();
            *sum += value * weight;
            *total += weight;
        }
    }
    for (name, (sum, total)) in weights {
        joined.metrics.insert(name.to_string(), sum / total);
    }
    joined
}

/// `cyclic@w3`, `cyclic@100us-w3`.
fn window_title(title: &str, window: u64) -> String {
    if title.contains('@') {
        format!("{title}-w{window}")
    } else {
        format!("{title}@w{window}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_titles_keep_the_variant() {
        assert_eq!(window_title("cyclic", 2), "cyclic@w2");
        assert_eq!(window_title("cyclic@100us", 2), "cyclic@100us-w2");
    }

    #[test]
    fn unlabelling_a_window_gives_back_the_measured_variant() {
        assert_eq!(unlabelled_variant(Some("w3")), None);
        assert_eq!(unlabelled_variant(Some("100us-w3")), Some("100us".into()));
        assert_eq!(unlabelled_variant(Some("a-w2-w12")), Some("a-w2".into()));
    }
}
