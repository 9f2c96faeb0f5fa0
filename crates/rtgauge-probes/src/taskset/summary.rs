//! The lines a task-set run ends with: one per task (its verdict first when measurement and
//! prediction disagree), the set's verdict, why long responses were long (`--trace`), and
//! the failures that set the exit status.

use super::{thread_names, PROBE};
use rtgauge_core::units::format_duration_ns;
use rtgauge_result::{ProbeRun, Series};

/// Why a task's responses ran past its prediction or its deadline (`above_ns`, the shorter),
/// from the trace (`--trace`). Each response read is split into the task's own running, the
/// set's tasks above it (whose interference the analysis counts), the set's tasks below it
/// (they can run in its window only while it has not been woken: a late release) and
/// everything else; its overshoot is put down to the first part that covers at least half of
/// it: the largest other cause, its previous jobs (its thread was already running when the
/// window opened: it had fallen behind), the task's own run stretched beyond its `work_ns`
/// while the kernel saw it running (the CPU taken without the kernel knowing: a vCPU stall,
/// an SMI; when the task `fell_behind` at times, earlier jobs may be what ran, and the line
/// says both), a late release, or else the tasks above it. The reasons are grouped with their count and
/// largest share. None when no response was read.
fn long_response_line(
    run: &ProbeRun,
    names: &[String],
    task: usize,
    above_ns: u64,
    work_ns: u64,
    fell_behind: bool,
) -> Option<String> {
    use rtgauge_result::spike::{cause_kind, Cause};
    let of_set = |c: &Cause| matches!(c, Cause::Thread { comm, .. } if names.contains(comm));
    let mut read = 0;
    let mut groups: Vec<(String, u64, u64)> = Vec::new();
    for spike in run.spikes.iter().filter(|s| s.latency_ns > above_ns) {
        // The sample's own thread, and whether it is this task's.
        let is_own =
            |c: &Cause| matches!(c, Cause::Thread { pid, .. } if Some(*pid) == spike.thread_pid);
        let task_of_spike = spike.contributors.iter().find_map(|c| match &c.cause {
            Cause::Thread { comm, .. } if is_own(&c.cause) => Some(comm),
            _ => None,
        });
        if task_of_spike != Some(&names[task]) {
            continue;
        }
        read += 1;
        let overshoot = spike.latency_ns - above_ns;
        let sum = |keep: &dyn Fn(&Cause) -> bool| -> u64 {
            spike
                .contributors
                .iter()
                .filter(|c| keep(&c.cause))
                .map(|c| c.duration_ns)
                .sum()
        };
        let own_ns = sum(&is_own);
        // Kernel priorities: a smaller number runs first.
        let own_prio = spike.contributors.iter().find_map(|c| match &c.cause {
            Cause::Thread { prio, .. } if is_own(&c.cause) => *prio,
            _ => None,
        });
        let below = |c: &Cause| match (c, own_prio) {
            (Cause::Thread { prio: Some(p), .. }, Some(own)) => *p >= own,
            _ => false,
        };
        let lower_ns = sum(&|c| of_set(c) && !is_own(c) && below(c));
        // Its thread already running when the window opens: the previous job was not done
        // at this one's release, and the window holds the rest of its work too.
        let behind = spike
            .segments
            .first()
            .and_then(|first| spike.contributors.get(first.contributor))
            .is_some_and(|c| is_own(&c.cause));
        let higher_ns = sum(&|c| of_set(c) && !is_own(c) && !below(c));
        let platform = spike
            .contributors
            .iter()
            .filter(|c| !of_set(&c.cause) && !matches!(c.cause, Cause::Idle))
            .max_by_key(|c| c.duration_ns);
        let (label, held) = match platform {
            Some(c) if c.duration_ns * 2 >= overshoot => match cause_kind(&c.cause) {
                "gap" => ("gap outside Linux".to_string(), c.duration_ns),
                _ => (rtgauge_result::spike::cause_name(&c.cause), c.duration_ns),
            },
            _ if behind && own_ns.saturating_sub(work_ns) * 2 >= overshoot => (
                "its previous jobs still running at its release (it had fallen behind)".to_string(),
                own_ns - work_ns,
            ),
            // A task that fell behind at times may be running an earlier job here too.
            _ if own_ns.saturating_sub(work_ns) * 2 >= overshoot && fell_behind => (
                "its own thread's run (earlier jobs still due, or the CPU taken unseen)"
                    .to_string(),
                own_ns - work_ns,
            ),
            _ if own_ns.saturating_sub(work_ns) * 2 >= overshoot => (
                "its own run stretched while the kernel saw it running (a vCPU stall or SMI)"
                    .to_string(),
                own_ns - work_ns,
            ),
            _ if lower_ns * 2 >= overshoot => (
                "a late release (tasks below it ran before it woke)".to_string(),
                lower_ns,
            ),
            _ => ("the tasks above it".to_string(), higher_ns),
        };
        match groups.iter_mut().find(|g| g.0 == label) {
            Some(g) => {
                g.1 += 1;
                g.2 = g.2.max(held);
            }
            None => groups.push((label, 1, held)),
        }
    }
    if read == 0 {
        return None;
    }
    groups.sort_by(|a, b| b.1.cmp(&a.1).then(b.2.cmp(&a.2)).then(a.0.cmp(&b.0)));
    let causes: Vec<String> = groups
        .iter()
        .map(|(label, count, held)| match held {
            0 => format!("{label} in {count}"),
            _ => format!("{label} in {count} (up to {})", format_duration_ns(*held)),
        })
        .collect();
    Some(format!(
        "{}: {read} response{} beyond {} read from the trace, longer because of: {}",
        names[task],
        if read == 1 { "" } else { "s" },
        format_duration_ns(above_ns),
        causes.join(", ")
    ))
}

/// One line per task for the end of a run: period, work, predicted worst, measured
/// maximum, misses and the verdict. Empty for another probe's run.
pub fn summary_lines(run: &ProbeRun) -> Vec<String> {
    if run.probe != PROBE {
        return Vec::new();
    }
    let figure = run.params.get("overhead").map_or("max", String::as_str);
    let mut lines = Vec::new();
    if run.mode == "normal" {
        lines.push("normal mode: the tasks ran as SCHED_OTHER, so the verdicts (which assume their priorities) do not describe these numbers; use --mode rt".to_string());
    } else if run.obtained.policy.split('/').any(|p| p == "other") {
        lines.push("NOT REAL-TIME: the tasks ran as SCHED_OTHER (real-time priority was refused), so these verdicts do not describe this run; run as root or grant CAP_SYS_NICE".to_string());
    }
    let responses: Vec<&Series> = run.series.iter().filter(|s| s.name == "response").collect();
    let names = thread_names(
        responses
            .iter()
            .map(|s| s.labels.get("task").map_or("?", String::as_str)),
    );
    let mut explained = Vec::new();
    for (task, s) in responses.iter().enumerate() {
        let name = s.labels.get("task").map_or("?", String::as_str);
        let metric = |k: &str| s.metrics.get(k).copied();
        let ns = |k: &str| metric(k).map(|v| format_duration_ns(v.max(0.0) as u64));
        let predicted = ns("predicted_wcrt_ns").unwrap_or_else(|| "no bound".into());
        let measured = s.stats.max_ns.map_or("-".into(), format_duration_ns);
        let misses = s.counters.get("deadline_misses").copied().unwrap_or(0);
        let edf = metric("deadline_policy") == Some(1.0);
        let verdict = match (
            metric("fits") == Some(1.0),
            metric("margin_ns"),
            metric("margin_pct"),
        ) {
            (true, _, _) if edf => {
                "fits (the demand test of its CPU's deadline tasks passes: done by its deadline)"
                    .to_string()
            }
            (true, Some(m), Some(p)) => {
                format!("fits, margin {} ({p:.0} %)", format_duration_ns(m as u64))
            }
            (true, _, _) => "fits".to_string(),
            (false, Some(m), _) => {
                format!("does not fit: {} late", format_duration_ns((-m) as u64))
            }
            (false, None, _) => "does not fit".to_string(),
        };
        lines.push(format!(
            "{name}: period {}, work {}, predicted worst {predicted}, measured max {measured}, {misses} missed of {} jobs; {verdict} (overheads: {figure} seen)",
            ns("period_ns").unwrap_or_default(),
            ns("work_ns").unwrap_or_default(),
            s.counters.get("jobs").copied().unwrap_or(0),
        ));
        // The same bound the probe used to choose what to read: prediction or deadline.
        let above = [metric("predicted_wcrt_ns"), metric("deadline_ns")]
            .into_iter()
            .flatten()
            .map(|v| v as u64)
            .min();
        if let Some(above) = above {
            let work = metric("work_ns").map_or(0, |w| w as u64);
            let fell_behind = s.counters.get("overruns").is_some_and(|&o| o > 0);
            explained.extend(long_response_line(
                run,
                &names,
                task,
                above,
                work,
                fell_behind,
            ));
        }
    }
    lines.extend(explained);
    lines
}

/// Why a task-set run should exit with status 2: the tasks that missed a deadline or do
/// not fit, one line each. Empty when all fit and none missed.
pub fn failures(run: &ProbeRun) -> Vec<String> {
    if run.probe != PROBE {
        return Vec::new();
    }
    run.series
        .iter()
        .filter(|s| s.name == "response")
        .filter_map(|s| {
            let name = s.labels.get("task").map_or("?", String::as_str);
            let misses = s.counters.get("deadline_misses").copied().unwrap_or(0);
            let fits = s.metrics.get("fits") == Some(&1.0);
            match (fits, misses) {
                (true, 0) => None,
                (true, m) => Some(format!("task {name} missed {m} deadlines")),
                (false, 0) => Some(format!(
                    "task {name} does not fit (the analysis predicts it can miss its deadline)"
                )),
                (false, m) => Some(format!("task {name} does not fit and missed {m} deadlines")),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtgauge_result::Obtained;
    use std::collections::BTreeMap;

    /// A task-set run as the result records it, for the summary lines.
    fn recorded_run(policy: &str) -> ProbeRun {
        let series = |task: &str, max: u64, misses: u64, metrics: &[(&str, f64)]| {
            let mut s = Series::new(
                "response",
                rtgauge_result::Summary {
                    max_ns: Some(max),
                    ..Default::default()
                },
            )
            .label("task", task)
            .label("cpu", 1)
            .counter("deadline_misses", misses)
            .counter("jobs", 300);
            s.metrics = metrics.iter().map(|(k, v)| (k.to_string(), *v)).collect();
            s
        };
        ProbeRun {
            probe: PROBE.into(),
            variant: None,
            mode: "rt".into(),
            load: "none".into(),
            status: rtgauge_result::ProbeStatus::Ok,
            obtained: Obtained {
                policy: policy.into(),
                ..Obtained::default()
            },
            params: BTreeMap::from([("overhead".to_string(), "max".to_string())]),
            warmup_ns: 0,
            measured_ns: 3_000_000_000,
            series: vec![
                series(
                    "fast",
                    2_234_033,
                    0,
                    &[
                        ("period_ns", 10e6),
                        ("work_ns", 2e6),
                        ("predicted_wcrt_ns", 5_226_497.0),
                        ("fits", 1.0),
                        ("margin_ns", 4_773_503.0),
                        ("margin_pct", 47.73503),
                    ],
                ),
                series(
                    "middle",
                    9_800_000,
                    2,
                    &[
                        ("period_ns", 20e6),
                        ("work_ns", 4e6),
                        ("predicted_wcrt_ns", 21_500_000.0),
                        ("fits", 0.0),
                        ("margin_ns", -1_500_000.0),
                        ("margin_pct", -7.5),
                    ],
                ),
                series(
                    "slow",
                    728_193_000,
                    59,
                    &[("period_ns", 40e6), ("work_ns", 28e6), ("fits", 0.0)],
                ),
            ],
            spikes: Vec::new(),
            spikes_unexplained: 0,
        }
    }

    #[test]
    fn summary_lines_and_failures() {
        let run = recorded_run("fifo");
        insta::assert_snapshot!("taskset_summary_lines", summary_lines(&run).join("\n"));
        insta::assert_snapshot!("taskset_failures", failures(&run).join("\n"));
        let not_rt = summary_lines(&recorded_run("other"));
        assert!(not_rt[0].starts_with("NOT REAL-TIME"), "{not_rt:?}");
        let mut other = run.clone();
        other.probe = "cyclic".into();
        assert!(summary_lines(&other).is_empty() && failures(&other).is_empty());
    }
}
