//! `--duration forever`: a soak run, measured until Ctrl-C in consecutive windows. Every
//! window is a full pass of the plan with `--soak-window` as each probe's duration, its runs
//! titled `PROBE@wN`; the result is saved after every probe of every window (the runner's
//! checkpoint, with the earlier windows' runs in front), so a soak that is killed or loses
//! power keeps all but the probe being measured.

use rtgauge_core::plan::Plan;
use rtgauge_core::runner::{self, RunError, RunInputs, RunObserver};
use rtgauge_result::{ProbeRun, RunResult, RunStatus};

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
        merge(&mut result, &earlier, window, started_unix_ns);
        started_unix_ns.get_or_insert(result.started_unix_ns);
        if result.status != RunStatus::Complete || rtgauge_core::signals::stop_requested() {
            return Ok(result);
        }
        earlier = std::mem::take(&mut result.runs);
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

/// This window's runs labelled with it, after the earlier windows' runs; the soak started
/// when its first window did.
fn merge(result: &mut RunResult, earlier: &[ProbeRun], window: u64, started: Option<u64>) {
    for run in &mut result.runs {
        run.variant = Some(match run.variant.take() {
            Some(v) => format!("{v}-w{window}"),
            None => format!("w{window}"),
        });
    }
    let this_window = std::mem::take(&mut result.runs);
    result.runs = earlier.to_vec();
    result.runs.extend(this_window);
    if let Some(started) = started {
        result.started_unix_ns = started;
    }
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
}
