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

/// What one task's series says, read once for its line, the set's verdict and the failures.
struct TaskView<'a> {
    name: &'a str,
    series: &'a Series,
    predicted_ns: Option<u64>,
    max_ns: Option<u64>,
    misses: u64,
    jobs: u64,
    fits: bool,
}

impl<'a> TaskView<'a> {
    fn of(s: &'a Series) -> TaskView<'a> {
        TaskView {
            name: s.labels.get("task").map_or("?", String::as_str),
            series: s,
            predicted_ns: s
                .metrics
                .get("predicted_wcrt_ns")
                .map(|v| v.max(0.0) as u64),
            max_ns: s.stats.max_ns,
            misses: s.counters.get("deadline_misses").copied().unwrap_or(0),
            jobs: s.counters.get("jobs").copied().unwrap_or(0),
            // Documents from before `predicted_fits` have the analysis' verdict in `fits`.
            fits: s.metrics.get("predicted_fits").or(s.metrics.get("fits")) == Some(&1.0),
        }
    }

    fn metric(&self, k: &str) -> Option<f64> {
        self.series.metrics.get(k).copied()
    }

    fn starved(&self) -> bool {
        self.jobs == 0
    }

    /// Measured longer than predicted.
    fn exceeded(&self) -> bool {
        matches!((self.max_ns, self.predicted_ns), (Some(m), Some(p)) if m > p)
    }

    fn at_risk(&self) -> bool {
        self.failed() || self.exceeded()
    }

    /// Never ran, missed a deadline or does not fit: a failure of the run (measured beyond
    /// its prediction but in time is a risk, said on its line).
    fn failed(&self) -> bool {
        self.starved() || self.misses > 0 || !self.fits
    }

    /// The platform terms counted in its prediction: `+ RT throttling 50ms per 1s`.
    fn terms(&self) -> String {
        let terms: Vec<String> = self
            .series
            .metrics
            .iter()
            .filter_map(|(k, v)| {
                let name = k.strip_prefix(super::TERM_NS)?;
                let per = self.metric(&format!("{}{name}", super::TERM_PER_NS))?;
                Some(format!(
                    "+ {name} {} per {}",
                    format_duration_ns(*v as u64),
                    format_duration_ns(per as u64)
                ))
            })
            .collect();
        match terms.is_empty() {
            true => String::new(),
            false => format!(" ({})", terms.join(", ")),
        }
    }

    /// `1 missed of 5000 jobs`.
    fn missed(&self) -> String {
        format!("{} missed of {} jobs", self.misses, self.jobs)
    }

    /// Why it is at risk, in a few words, for the set's verdict.
    fn risk(&self) -> String {
        let d = format_duration_ns;
        if self.starved() {
            return "never ran".into();
        }
        let mut why = Vec::new();
        if !self.fits {
            why.push("does not fit".to_string());
        } else if self.exceeded() || self.misses > 0 {
            why.push("predicted to fit".to_string());
        }
        if let (true, Some(m), Some(p)) = (self.exceeded(), self.max_ns, self.predicted_ns) {
            why.push(format!("measured {} against {} predicted", d(m), d(p)));
        }
        if self.misses > 0 {
            why.push(format!("{} missed", self.misses));
        }
        why.join(", ")
    }
}

/// The set's verdict: how many tasks fail (named, with why, in the FAILED part of the verdict
/// line: [`failures`]), then the tasks at risk that did not fail (measured beyond their
/// prediction, in time), then the tasks that fit. None for another probe's run.
pub fn verdict(run: &ProbeRun) -> Option<String> {
    if run.probe != PROBE {
        return None;
    }
    let tasks: Vec<TaskView> = run
        .series
        .iter()
        .filter(|s| s.name == "response")
        .map(TaskView::of)
        .collect();
    let n = tasks.len();
    let failing = tasks.iter().filter(|t| t.failed()).count();
    let beyond: Vec<String> = tasks
        .iter()
        .filter(|t| t.at_risk() && !t.failed())
        .map(|t| format!("{} ({})", t.name, t.risk()))
        .collect();
    let fine: Vec<&str> = tasks
        .iter()
        .filter(|t| !t.at_risk())
        .map(|t| t.name)
        .collect();
    let events = program_count(run);
    let ran_events = |e: usize, what: &str| {
        format!(
            "{e} rt-app task{} ran {} events ({what})",
            if e == 1 { "" } else { "s" },
            if e == 1 { "its" } else { "their" }
        )
    };
    if n == 0 {
        return Some(format!(
            "task set: {}",
            ran_events(events, "not periodic jobs: measured, not analysed")
        ));
    }
    let also = match events {
        0 => String::new(),
        e => format!("; {}", ran_events(e, "measured, not analysed")),
    };
    if failing == 0 && beyond.is_empty() {
        return Some(match n {
            1 => format!("task set: the task fits and none missed{also}"),
            _ => format!("task set: all {n} tasks fit and none missed{also}"),
        });
    }
    let mut parts = Vec::new();
    if failing > 0 {
        parts.push(format!(
            "{failing} of {n} task{} fail{}",
            if n == 1 { "" } else { "s" },
            if failing == 1 { "s" } else { "" }
        ));
    }
    if !beyond.is_empty() {
        parts.push(format!("at risk: {}", beyond.join(", ")));
    }
    match fine.len() {
        0 => {}
        1 => parts.push(format!("{} fits", fine[0])),
        _ => parts.push(format!("{} fit", fine.join(", "))),
    }
    Some(format!("task set: {}{also}", parts.join("; ")))
}

/// The rt-app tasks that ran their events (a `period` series per task and phase).
fn program_count(run: &ProbeRun) -> usize {
    run.series
        .iter()
        .filter(|s| s.name == "period")
        .filter_map(|s| s.labels.get("task"))
        .collect::<std::collections::BTreeSet<_>>()
        .len()
}

/// One line per rt-app task that ran its events: its passes through its phases as rt-app
/// logs them (period, run, timer wake-up latency), and what held it up.
fn program_lines(run: &ProbeRun) -> Vec<String> {
    let d = |v: Option<u64>| v.map_or("-".to_string(), format_duration_ns);
    // The same task and phase as a period series.
    let series = |name: &str, of: &rtgauge_result::Series| {
        run.series.iter().find(|s| {
            s.name == name
                && s.labels.get("task") == of.labels.get("task")
                && s.labels.get("phase") == of.labels.get("phase")
        })
    };
    run.series
        .iter()
        .filter(|s| s.name == "period" && s.labels.contains_key("task"))
        .map(|p| {
            let task = match p.labels.get("phase") {
                Some(phase) => format!("{} phase {phase}", p.labels["task"]),
                None => p.labels["task"].clone(),
            };
            let count = |k: &str| p.counters.get(k).copied().unwrap_or(0);
            let passes = count("passes");
            if passes == 0 && count("finished") == 1 {
                return format!(
                    "{task}: rt-app events: ran all its loops ({} pass{}) before the measurement began (during the warm-up){}",
                    count("passes_with_warmup"),
                    if count("passes_with_warmup") == 1 { "" } else { "es" },
                    match count("forks") {
                        0 => String::new(),
                        f => format!(", {f} forks"),
                    }
                );
            }
            if count("passes_begun") == 0 {
                return format!(
                    "{task}: rt-app events: not reached in this run (what comes before it took the whole {})",
                    format_duration_ns(run.measured_ns + run.warmup_ns)
                );
            }
            if passes == 0 {
                return format!(
                    "{task}: rt-app events: no pass through a phase completed in {} (blocked or starved)",
                    format_duration_ns(run.measured_ns)
                );
            }
            let mut parts = vec![format!(
                "{passes} pass{}, period median {} (max {})",
                if passes == 1 { "" } else { "es" },
                d(p.stats.median_ns),
                d(p.stats.max_ns)
            )];
            if let Some(r) = series("run", p) {
                parts.push(format!("run median {}", d(r.stats.median_ns)));
            }
            if let Some(w) = series("timer_wakeup", p) {
                parts.push(format!(
                    "timer wake-up median {} (max {})",
                    d(w.stats.median_ns),
                    d(w.stats.max_ns)
                ));
            }
            if let Some(s) = series("slack", p) {
                parts.push(format!("slack median {}", d(s.stats.median_ns)));
            }
            if count("timers_late") > 0 {
                parts.push(format!("{} timers already past", count("timers_late")));
            }
            if count("forks") > 0 {
                parts.push(format!("{} forks", count("forks")));
            }
            format!("{task}: rt-app events: {}", parts.join(", "))
        })
        .collect()
}

/// One line per task for the end of a run, after one per CPU on the platform: a task at
/// risk leads with that (never ran; predicted to fit, but measured beyond it or missed; does
/// not fit), then the prediction with its platform terms, the measured maximum and the
/// misses. Empty for another probe's run.
pub fn summary_lines(run: &ProbeRun) -> Vec<String> {
    if run.probe != PROBE {
        return Vec::new();
    }
    let figure = run.params.get("overhead").map_or("max", String::as_str);
    let mut lines = Vec::new();
    if run.mode == "normal" {
        lines.push("normal mode: the tasks ran as SCHED_OTHER, so the verdicts (which assume their priorities) do not describe these numbers; use --mode rt".to_string());
    } else if run.obtained.policy.split('/').any(|p| p == "other")
        && !run.obtained.shortfalls.is_empty()
    {
        lines.push("NOT REAL-TIME: the tasks ran as SCHED_OTHER (real-time priority was refused), so these verdicts do not describe this run; run as root or grant CAP_SYS_NICE".to_string());
    }
    for (k, v) in &run.params {
        if k.starts_with("platform-cpu") {
            lines.push(format!("platform: {v}"));
        }
    }
    let responses: Vec<&Series> = run.series.iter().filter(|s| s.name == "response").collect();
    let names = thread_names(
        responses
            .iter()
            .map(|s| s.labels.get("task").map_or("?", String::as_str)),
    );
    let mut explained = Vec::new();
    for (task, s) in responses.iter().enumerate() {
        let t = TaskView::of(s);
        lines.push(task_line(&t, run, figure));
        // The same bound the probe used to choose what to read: prediction or deadline.
        let above = [t.metric("predicted_wcrt_ns"), t.metric("deadline_ns")]
            .into_iter()
            .flatten()
            .map(|v| v as u64)
            .min();
        if let Some(above) = above {
            let work = t.metric("work_ns").map_or(0, |w| w as u64);
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
    lines.extend(program_lines(run));
    lines.extend(explained);
    lines
}

/// One task's line: see [`summary_lines`].
fn task_line(t: &TaskView, run: &ProbeRun, figure: &str) -> String {
    let d = format_duration_ns;
    let ns = |k: &str| {
        t.metric(k)
            .map(|v| d(v.max(0.0) as u64))
            .unwrap_or_default()
    };
    let predicted = t.predicted_ns.map_or("no bound".into(), d);
    let measured = t.max_ns.map_or("-".into(), d);
    let terms = t.terms();
    let shape = format!("period {}, work {}", ns("period_ns"), ns("work_ns"));
    let name = t.name;
    if t.starved() {
        return format!(
            "{name}: never ran: no job completed in {} (starved: what runs above it held the CPU); predicted worst {predicted}{terms}; {shape}",
            d(run.measured_ns)
        );
    }
    if t.fits && (t.exceeded() || t.misses > 0) {
        let against = match (t.exceeded(), t.predicted_ns) {
            (true, Some(p)) => format!("measured {measured} against {} predicted, ", d(p)),
            _ => format!("measured max {measured} (predicted {predicted}), "),
        };
        let missing = t
            .series
            .labels
            .get("cpu")
            .and_then(|c| run.params.get(&format!("not-counted-cpu{c}")))
            .map(|m| format!("; not in the prediction: {m}"))
            .unwrap_or_default();
        return format!(
            "{name}: predicted to fit, but {against}{}{missing}; {shape}{terms} (overheads: {figure} seen)",
            t.missed()
        );
    }
    let edf = t.metric("deadline_policy") == Some(1.0);
    let verdict = match (t.fits, t.metric("margin_ns"), t.metric("margin_pct")) {
        (true, _, _) if edf => {
            "fits (the demand test of its CPU's deadline tasks passes: done by its deadline)"
                .to_string()
        }
        (true, Some(m), Some(p)) => format!("fits, margin {} ({p:.0} %)", d(m as u64)),
        (true, _, _) => "fits".to_string(),
        (false, Some(m), _) => format!("does not fit: {} late", d((-m) as u64)),
        (false, None, _) => "does not fit".to_string(),
    };
    if !t.fits {
        return format!(
            "{name}: {verdict}; predicted worst {predicted}{terms}, measured max {measured}, {}; {shape} (overheads: {figure} seen)",
            t.missed()
        );
    }
    format!(
        "{name}: {shape}, predicted worst {predicted}{terms}, measured max {measured}, {}; {verdict} (overheads: {figure} seen)",
        t.missed()
    )
}

/// Why a task-set run should exit with status 2: the tasks that never ran, missed a deadline
/// or do not fit, one line each, in the verdict's order. Empty when all fit and none missed.
pub fn failures(run: &ProbeRun) -> Vec<String> {
    if run.probe != PROBE {
        return Vec::new();
    }
    let mut tasks: Vec<TaskView> = run
        .series
        .iter()
        .filter(|s| s.name == "response")
        .map(TaskView::of)
        .filter(TaskView::failed)
        .collect();
    tasks.sort_by_key(|t| {
        (
            !t.starved(),
            std::cmp::Reverse(t.misses),
            t.fits,
            !t.exceeded(),
        )
    });
    tasks
        .iter()
        .map(|t| {
            let deadlines = |m: u64| format!("{m} deadline{}", if m == 1 { "" } else { "s" });
            match (t.starved(), t.fits, t.misses) {
                (true, _, _) => format!("task {} never ran (starved)", t.name),
                (false, true, m) => format!(
                    "task {} was predicted to fit but missed {}",
                    t.name,
                    deadlines(m)
                ),
                (false, false, 0) => format!(
                    "task {} does not fit (the analysis predicts it can miss its deadline)",
                    t.name
                ),
                (false, false, m) => {
                    format!("task {} does not fit and missed {}", t.name, deadlines(m))
                }
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

    /// The platform's part: a task whose prediction holds RT throttling, one predicted to
    /// fit that then ran longer and missed, one that never ran.
    fn with_platform(mut run: ProbeRun) -> ProbeRun {
        let mut throttled = run.series[0].clone();
        throttled.labels.insert("task".into(), "servo".into());
        throttled.stats.max_ns = Some(50_400_000);
        throttled.counters.insert("deadline_misses".into(), 302);
        throttled.counters.insert("jobs".into(), 5000);
        throttled.metrics = [
            ("period_ns", 2e6),
            ("work_ns", 4e5),
            ("predicted_wcrt_ns", 50_400_000.0),
            ("fits", 0.0),
            ("margin_ns", -48_400_000.0),
            ("term_ns:RT throttling", 5e7),
            ("term_per_ns:RT throttling", 1e9),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), *v))
        .collect();
        let mut control = run.series[0].clone();
        control.labels.insert("task".into(), "control".into());
        control.stats.max_ns = Some(1_672_000);
        control.counters.insert("deadline_misses".into(), 1);
        control
            .metrics
            .insert("predicted_wcrt_ns".into(), 757_459.0);
        let mut starved = run.series[0].clone();
        starved.labels.insert("task".into(), "logger".into());
        starved.stats.max_ns = None;
        starved.counters.insert("jobs".into(), 0);
        run.series.extend([throttled, control, starved]);
        run.params.insert(
            "platform-cpu1".into(),
            "CPU 1: RT throttling 50ms per 1s (kernel.sched_rt_runtime_us); fair server: not readable without root and debugfs; 2 real-time threads, 1 interrupts and the tick may preempt".into(),
        );
        run.params.insert(
            "not-counted-cpu1".into(),
            "fair server (not readable without root and debugfs); tick, irq 4 ttyS0 (not measured)"
                .into(),
        );
        run
    }

    #[test]
    fn measurement_and_prediction_never_contradict_each_other() {
        let run = with_platform(recorded_run("fifo"));
        let lines = summary_lines(&run);
        insta::assert_snapshot!("taskset_summary_with_platform", lines.join("\n"));
        // No line says "fits" of a task that missed or ran longer than predicted.
        for s in run.series.iter() {
            let t = TaskView::of(s);
            let line = lines
                .iter()
                .find(|l| l.starts_with(&format!("{}:", t.name)))
                .unwrap();
            if t.misses > 0 || t.exceeded() {
                assert!(!line.contains("; fits"), "{line}");
            }
        }
        let v = verdict(&run).unwrap();
        insta::assert_snapshot!("taskset_verdict", v);
        assert!(v == "task set: 5 of 6 tasks fail; fast fits", "{v}");
        insta::assert_snapshot!("taskset_failures_with_platform", failures(&run).join("\n"));
        // Measured beyond its prediction but in time: at risk, named in the verdict, not a
        // failure (so not named twice).
        let mut in_time = run.clone();
        for s in in_time
            .series
            .iter_mut()
            .filter(|s| s.labels["task"] == "control")
        {
            s.counters.insert("deadline_misses".into(), 0);
        }
        let v = verdict(&in_time).unwrap();
        assert!(
            v.starts_with(
                "task set: 4 of 6 tasks fail; at risk: control (predicted to fit, measured"
            ),
            "{v}"
        );
        assert!(!failures(&in_time).join(" ").contains("control"));
        let fine = {
            let mut r = recorded_run("fifo");
            r.series.truncate(1);
            r
        };
        assert_eq!(
            verdict(&fine).unwrap(),
            "task set: the task fits and none missed"
        );
    }

    #[test]
    fn summary_lines_and_failures() {
        let run = recorded_run("fifo");
        insta::assert_snapshot!("taskset_summary_lines", summary_lines(&run).join("\n"));
        insta::assert_snapshot!("taskset_failures", failures(&run).join("\n"));
        // Real-time priority refused: a shortfall says so.
        let mut refused = recorded_run("other");
        refused.obtained.shortfalls = vec!["SCHED_FIFO refused".into()];
        let not_rt = summary_lines(&refused);
        assert!(not_rt[0].starts_with("NOT REAL-TIME"), "{not_rt:?}");
        // Tasks the file itself puts in SCHED_OTHER are not said to have been refused.
        let asked = summary_lines(&recorded_run("other"));
        assert!(!asked[0].starts_with("NOT REAL-TIME"), "{asked:?}");
        let mut other = run.clone();
        other.probe = "cyclic".into();
        assert!(summary_lines(&other).is_empty() && failures(&other).is_empty());
    }
}
