//! `taskset`: the user's own periodic tasks, analysed with this machine's overheads and run.
//!
//! The run has three parts, in this order:
//! 1. overheads: on each CPU the set uses, a short wake-up latency measurement (absolute
//!    sleeps, like cyclic) and a context-switch measurement (a futex hand-off between two
//!    threads on that CPU), both at the highest priority of the CPU's tasks;
//! 2. analysis ([`analysis`]): the worst response of each task predicted from the set and
//!    those overheads, once per figure (median, p99.9, maximum seen);
//! 3. the tasks: one thread each, in the run's mode (the file's policy and priority in rt
//!    mode; SCHED_OTHER in normal mode), released at absolute times on CLOCK_MONOTONIC from
//!    a common first release (the critical instant), each job a calibrated busy loop of the
//!    task's work; a task with `after` is released by its predecessor's completion.
//!
//! Per task: series `response` (release → completion) and `start` (release → start),
//! labelled `task=NAME`, with counters `deadline_misses`, `overruns` and `jobs` and the
//! prediction as metrics (`predicted_wcrt_ns`, `deadline_ns`, `fits`, `margin_ns` …).
//!
//! Before the overheads, the platform of each used CPU is read ([`preemption`]): its
//! throttling and fair server, and every thread and interrupt that may run ahead of a task;
//! the threads' demand is measured over the overhead windows, and the analysis counts all of
//! it ([`platform`]).

pub mod analysis;
mod lenient;
mod overheads;
pub mod platform;
pub mod preemption;
pub mod program;
mod rtapp;
pub mod spec;
mod steps;
mod summary;

pub use preemption::{TERM_NS, TERM_PER_NS};
pub use summary::{failures, summary_lines, verdict};

use analysis::{Overheads, Prediction};
use rtgauge_core::clock::{self, now_ns};
use rtgauge_core::probe::{About, ParamSpec, Params, ProbeConfig, ProbeContext, ProbeError};
use rtgauge_core::probe::{ProbeOutput, TypedProbe};
use rtgauge_core::rt::{Mode, Policy};
use rtgauge_core::units::{format_duration_ns, quote};
use rtgauge_os::io::{futex_wait_while, futex_wake};
use rtgauge_os::sync::PriorityMutex;
use rtgauge_result::{Obtained, Series};
use rtgauge_stats::{Recorder, DEFAULT_INTERVAL_NS};
use spec::{Protocol, TaskPolicy, TaskSet};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Barrier;

const PROBE: &str = crate::names::TASKSET;
const DESCRIPTION: &str =
    "your own periodic tasks: predicted from this machine's overheads, then run and measured";
const ABOUT: About = About::new(PROBE, DESCRIPTION, &PARAMS).reads_whole_trace();
const PARAMS: [ParamSpec; 3] = [
    ParamSpec::new("tasks", "none: required (--tasks FILE)", "the task set: a TOML file of [[task]] entries (name, period, work, priority, cpu, deadline, offset, policy, critical, after) or rt-app JSON; in a suite, the TOML text itself may be given"),
    ParamSpec::new("overhead", "max", "which measured overhead figure decides the verdict: median, p99.9 or max (all three are reported)"),
    ParamSpec::new("allow-overload", "no", "yes runs a set whose tasks need more than 100 % of a CPU (refused otherwise), to watch the misses"),
];

/// The overhead figures the analysis is run with, in the order they are reported.
pub const FIGURES: [&str; 3] = ["median", "p99.9", "max"];

/// What the task-set file is not given as.
pub const NO_TASKS: &str = "no task set given; run `rtgauge run taskset --tasks FILE` (docs/taskset.md describes the file)";

pub struct TaskSetProbe;

#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// The `tasks` parameter as given: a path, or the set's own text.
    source: String,
    /// None when no set was given: the plan first checks a probe without its parameters, so
    /// a missing set is refused by the command line, and by `measure` as a last resort.
    set: Option<TaskSet>,
    /// Index into [`FIGURES`].
    figure: usize,
    allow_overload: bool,
}

/// Whether a `tasks` value is the set's text rather than a path.
fn is_inline(value: &str) -> bool {
    value.contains("[[task]]") || spec::looks_like_json(value)
}

impl ProbeConfig for Config {
    fn parse(params: &Params) -> Result<Config, ProbeError> {
        let invalid = |message: String| ProbeError::Invalid {
            probe: PROBE,
            message,
        };
        let source = params.text("tasks", "");
        let figure_name = params.text("overhead", "max");
        let figure = FIGURES
            .iter()
            .position(|f| *f == figure_name)
            .ok_or_else(|| {
                invalid(format!(
                    "overhead '{}' is not one of {}",
                    quote(&figure_name),
                    FIGURES.join(", ")
                ))
            })?;
        let allow_overload = rtgauge_core::probe::flag(PROBE, params, "allow-overload", false)?;
        if source.trim().is_empty() {
            return Ok(Config {
                source,
                set: None,
                figure,
                allow_overload,
            });
        }
        let (text, origin) = if is_inline(&source) {
            (source.clone(), String::new())
        } else {
            let text = std::fs::read_to_string(&source).map_err(|e| {
                invalid(format!(
                    "cannot read the task set {}: {e}; check the path given to --tasks",
                    quote(&source)
                ))
            })?;
            (text, format!("{}: ", quote(&source)))
        };
        let platform = spec::Platform::this_machine();
        let set = spec::parse(&text, &platform).map_err(|e| invalid(format!("{origin}{e}")))?;
        if !allow_overload {
            spec::check_capacity(&set, None).map_err(|e| invalid(format!("{origin}{e}")))?;
        }
        Ok(Config {
            source,
            set: Some(set),
            figure,
            allow_overload,
        })
    }

    fn resolved(&self) -> BTreeMap<String, String> {
        let mut p = BTreeMap::from([
            ("overhead".to_string(), FIGURES[self.figure].to_string()),
            (
                "allow-overload".to_string(),
                if self.allow_overload { "yes" } else { "no" }.to_string(),
            ),
        ]);
        if !self.source.is_empty() {
            p.insert("tasks".to_string(), self.source.clone());
        }
        p
    }
}

impl TypedProbe for TaskSetProbe {
    const ABOUT: About = ABOUT;
    type Config = Config;

    /// Each task's misses, and each CPU's late starts.
    fn spike_threads(&self, cfg: &Config, cpus: usize) -> usize {
        cfg.set.as_ref().map_or(cpus, |set| set.tasks.len() + cpus)
    }

    fn measure(&self, ctx: &ProbeContext, cfg: &mut Config) -> Result<ProbeOutput, ProbeError> {
        let Some(&first_cpu) = ctx.cpus.first() else {
            return Err(ProbeError::Invalid {
                probe: PROBE,
                message: "no CPU to run on; choose one with --cpus".into(),
            });
        };
        let mut out_warnings = Vec::new();
        let Some(set) = &cfg.set else {
            return Err(ProbeError::Invalid {
                probe: PROBE,
                message: NO_TASKS.into(),
            });
        };
        match spec::check_capacity(set, Some(first_cpu)) {
            Ok(()) => {}
            Err(e) if !cfg.allow_overload => {
                return Err(ProbeError::Invalid {
                    probe: PROBE,
                    message: e.to_string(),
                })
            }
            Err(e) => out_warnings.push(format!(
                "run although overloaded ({e}): once real-time tasks have used a CPU for the kernel's RT throttling limit (sched_rt_runtime_us, 95 % of each second by default), it stops them all for the rest of the second, so tasks that fit miss too"
            )),
        }
        for t in set
            .tasks
            .iter()
            .filter(|t| t.policy.fixed_priority() && t.priority == 99)
        {
            out_warnings.push(format!(
                "task {}: priority 99 is the kernel's (migration/N and its watchdogs run there, and a task at 99 queues with them as an equal); use 1 to 98",
                t.name
            ));
        }
        let cpu_of = |i: usize| set.tasks[i].cpu.unwrap_or(first_cpu);
        let used: BTreeSet<usize> = (0..set.tasks.len()).map(cpu_of).collect();
        let realtime = ctx.mode.policy.is_realtime();
        let mut out = ProbeOutput {
            warnings: out_warnings,
            ..ProbeOutput::default()
        };

        // 0. The platform of each used CPU: its rules and preemption map; the threads'
        // demand is measured over the overhead windows.
        let root = rtgauge_sysinfo::SysRoot::live();
        let mut maps: BTreeMap<usize, preemption::CpuMap> = used
            .iter()
            .map(|&c| (c, preemption::read(&root, c)))
            .collect();
        let calibrations: Vec<preemption::Calibration> = maps
            .values()
            .map(|m| preemption::Calibration::start(&root, m))
            .collect();
        // The interrupts' and the tick's time comes from the kernel's trace of the same
        // window: the run's (--trace), else one of the probe's own while it lasts.
        let own_trace = match (ctx.trace, realtime) {
            (None, true) => match rtgauge_trace::TraceSession::start(
                &rtgauge_trace::TraceConfig::new(used.iter().copied().collect()),
            ) {
                Ok(session) => Some(session),
                Err(e) => {
                    for map in maps.values_mut() {
                        map.notes
                            .push(format!("interrupts and the tick: not traced ({e})"));
                    }
                    None
                }
            },
            _ => None,
        };
        let traced_from = now_ns();

        // 1. Overheads, on each used CPU at the highest priority of its tasks.
        let window = overhead_window(ctx);
        let mut measured: BTreeMap<usize, overheads::MeasuredOverheads> = BTreeMap::new();
        let mut obtained: Vec<Obtained> = Vec::new();
        for &cpu in &used {
            let top = (0..set.tasks.len())
                .filter(|&i| cpu_of(i) == cpu && set.tasks[i].policy.fixed_priority())
                .map(|i| set.tasks[i].priority)
                .max()
                .unwrap_or(ctx.mode.priority.max(1));
            let mode = thread_mode(ctx.mode, TaskPolicy::Fifo, top, None);
            let (o, m) = overheads::measure_overheads(ctx, &mode, cpu, window)?;
            obtained.push(o);
            measured.insert(cpu, m);
        }
        for (cpu, m) in &measured {
            out.series.push(
                Series::new("wakeup", m.wakeup.summary())
                    .label("cpu", cpu)
                    .counter("cycles", m.wakeup.count()),
            );
            out.series.push(
                Series::new("switch", m.switch.summary())
                    .label("cpu", cpu)
                    .counter("round_trips", m.switch.count()),
            );
        }

        for (c, map) in calibrations.into_iter().zip(maps.values_mut()) {
            c.finish(&root, map);
        }
        let traced_to = now_ns();
        if let Some(trace) = ctx.trace.or(own_trace.as_ref()) {
            for (&cpu, map) in maps.iter_mut() {
                match trace.read_window(cpu, traced_from, traced_to) {
                    Ok(t) => {
                        preemption::measure_interrupts(map, &t.events, traced_to - traced_from)
                    }
                    Err(e) => map
                        .notes
                        .push(format!("interrupts and the tick: trace not read ({e})")),
                }
            }
        }
        drop(own_trace);
        let platform: BTreeMap<usize, platform::CpuPlatform> =
            maps.iter().map(|(&c, m)| (c, m.platform())).collect();

        // 2. The analysis, once per figure.
        let predictions: Vec<Vec<Prediction>> = (0..FIGURES.len())
            .map(|f| {
                let oh: BTreeMap<usize, Overheads> =
                    measured.iter().map(|(&c, m)| (c, m.figure(f))).collect();
                analysis::analyse_on(set, first_cpu, &oh, &platform)
            })
            .collect();
        let chosen_overheads: BTreeMap<usize, Overheads> = measured
            .iter()
            .map(|(&c, m)| (c, m.figure(cfg.figure)))
            .collect();
        preemption::report(set, first_cpu, &maps, &chosen_overheads, realtime, &mut out);

        // 3. The tasks.
        let calibration: BTreeMap<usize, f64> = measured
            .iter()
            .map(|(&c, m)| (c, m.ns_per_iteration))
            .collect();
        // With --trace, each response beyond its prediction or its deadline is read from the
        // kernel's trace: what made it longer than the analysis allowed for.
        let explain_above: Vec<u64> = predictions[cfg.figure]
            .iter()
            .map(|p| p.wcrt_ns.unwrap_or(u64::MAX).min(p.deadline_ns))
            .collect();
        let (runs, program_runs) = run_tasks(ctx, set, first_cpu, &calibration, &explain_above)?;
        if let Some(message) = steps::blocked_for_good(&program_runs, runs.is_empty()) {
            return Err(ProbeError::Invalid {
                probe: PROBE,
                message,
            });
        }
        let mut task_obtained = Vec::new();
        for (i, (o, run)) in runs.into_iter().enumerate() {
            let task = &set.tasks[i];
            task_obtained.push(o.clone());
            out.measured_ns = out.measured_ns.max(run.measured_ns);
            let chosen = &predictions[cfg.figure][i];
            let m = &measured[&cpu_of(i)];
            let mut s = Series::new("response", run.response.summary())
                .label("task", &task.name)
                .label("cpu", cpu_of(i))
                .counter("deadline_misses", run.misses)
                .counter("overruns", run.overruns)
                .counter("jobs", run.response.count());
            let metrics = &mut s.metrics;
            metrics.insert("period_ns".into(), task.period_ns as f64);
            metrics.insert("work_ns".into(), task.work_ns as f64);
            metrics.insert("work_as_run_ns".into(), run.work_as_run_ns as f64);
            metrics.insert("deadline_ns".into(), task.deadline_ns as f64);
            metrics.insert("priority".into(), task.priority as f64);
            // `fits`: predicted to fit and the run agrees (no miss, no response beyond the
            // prediction); `predicted_fits`: the analysis alone.
            let agrees = run.misses == 0
                && match (run.response.max(), chosen.wcrt_ns) {
                    (Some(max), Some(r)) => max <= r,
                    _ => true,
                };
            metrics.insert(
                "predicted_fits".into(),
                if chosen.fits() { 1.0 } else { 0.0 },
            );
            metrics.insert(
                "fits".into(),
                if chosen.fits() && agrees { 1.0 } else { 0.0 },
            );
            metrics.insert(
                "wakeup_used_ns".into(),
                m.figure(cfg.figure).wakeup_ns as f64,
            );
            metrics.insert(
                "switch_used_ns".into(),
                m.figure(cfg.figure).switch_ns as f64,
            );
            metrics.insert("blocking_ns".into(), chosen.blocking_ns as f64);
            for t in &chosen.terms {
                metrics.insert(format!("{TERM_NS}{}", t.name), t.work_ns as f64);
                metrics.insert(format!("{TERM_PER_NS}{}", t.name), t.per_ns as f64);
            }
            if let (Some(max), Some(r)) = (run.response.max(), chosen.wcrt_ns) {
                metrics.insert(
                    "exceeded_prediction".into(),
                    if max > r { 1.0 } else { 0.0 },
                );
            }
            if task.policy == TaskPolicy::Deadline {
                // EDF's demand test bounds the response by the deadline itself.
                metrics.insert("deadline_policy".into(), 1.0);
            }
            if let Some(r) = chosen.wcrt_ns {
                metrics.insert("predicted_wcrt_ns".into(), r as f64);
            }
            if let (Some(m), Some(p)) = (chosen.margin_ns(), chosen.margin_pct()) {
                metrics.insert("margin_ns".into(), m as f64);
                metrics.insert("margin_pct".into(), p);
            }
            for (f, name) in FIGURES.iter().enumerate() {
                let p = &predictions[f][i];
                let key = name.replace('.', "");
                if let Some(r) = p.wcrt_ns {
                    metrics.insert(format!("predicted_wcrt_{key}_ns"), r as f64);
                }
                metrics.insert(format!("fits_{key}"), if p.fits() { 1.0 } else { 0.0 });
            }
            if let Some(max) = run.response.max() {
                metrics.insert("slack_ns".into(), task.deadline_ns as f64 - max as f64);
            }
            out.series.push(s);
            out.series.push(
                Series::new("start", run.start.summary())
                    .label("task", &task.name)
                    .label("cpu", cpu_of(i)),
            );
            if let Some(why) = &chosen.unbounded_because {
                out.warnings.push(format!(
                    "task {}: no bound on its response: {why}",
                    task.name
                ));
            }
            let changes: Vec<String> = FIGURES
                .iter()
                .enumerate()
                .filter(|&(f, _)| predictions[f][i].fits() != chosen.fits())
                .map(|(f, name)| {
                    format!(
                        "with the {name} overheads it {}",
                        if predictions[f][i].fits() {
                            "fits"
                        } else {
                            "does not fit"
                        }
                    )
                })
                .collect();
            if !changes.is_empty() {
                out.warnings.push(format!(
                    "task {}: the verdict depends on the overhead figure: with the {} overheads it {}; {}",
                    task.name,
                    FIGURES[cfg.figure],
                    if chosen.fits() { "fits" } else { "does not fit" },
                    changes.join("; ")
                ));
            }
        }
        for (k, o, run) in program_runs {
            task_obtained.push(o);
            out.measured_ns = out.measured_ns.max(run.measured_ns);
            out.series
                .extend(steps::series(&set.programs.tasks[k], &run));
        }
        obtained.extend(task_obtained.iter().cloned());
        out.obtained = rtgauge_core::threads::merge_obtained(&obtained);
        // A task the file puts in SCHED_OTHER obtains "other" by design: only a refusal
        // (a shortfall) is worth the warning.
        if realtime
            && task_obtained
                .iter()
                .any(|o| o.policy == "other" && !o.shortfalls.is_empty())
        {
            out.warnings.push(
                "the tasks ran without real-time priority (it was refused): the predictions assume their fixed priorities and do not describe this run; run as root or grant CAP_SYS_NICE (`sudo setcap cap_sys_nice,cap_ipc_lock+ep $(command -v rtgauge)`)".into(),
            );
        } else if !realtime {
            out.warnings.push(format!(
                "the tasks ran as SCHED_OTHER ({} mode): the predictions assume their fixed priorities and do not describe this run; use --mode rt",
                ctx.mode.name
            ));
        }
        out.params.insert(
            "tasks-read".into(),
            set.tasks
                .iter()
                .map(|t| {
                    format!(
                        "{} {} every {} on cpu {}",
                        t.name,
                        format_duration_ns(t.work_ns),
                        format_duration_ns(t.period_ns),
                        t.cpu.unwrap_or(first_cpu)
                    )
                })
                .collect::<Vec<_>>()
                .join("; "),
        );
        if !set.programs.tasks.is_empty() {
            out.params
                .insert("rt-app-tasks".into(), set.programs.describe());
        }
        if !set.programs.notes.is_empty() {
            out.params
                .insert("rt-app-notes".into(), set.programs.notes.join("; "));
        }
        Ok(out)
    }
}

/// How long the wake-up latency is measured on each CPU before the tasks run: a tenth of
/// the run, from 200 ms to 2 s.
fn overhead_window(ctx: &ProbeContext) -> u64 {
    ctx.budget
        .duration_ns
        .map_or(1_000_000_000, |d| d / 10)
        .clamp(200_000_000, 2_000_000_000)
}

/// The mode of one task's thread: the task's own policy and priority when the run is
/// real-time, SCHED_OTHER otherwise.
fn thread_mode(
    run: &Mode,
    policy: TaskPolicy,
    priority: i32,
    reservation: Option<(u64, u64, u64)>,
) -> Mode {
    let mut mode = run.clone();
    if !run.policy.is_realtime() {
        return mode;
    }
    match policy {
        TaskPolicy::Fifo => {
            mode.policy = Policy::Fifo;
            mode.priority = priority;
        }
        TaskPolicy::Rr => {
            mode.policy = Policy::Rr;
            mode.priority = priority;
        }
        TaskPolicy::Other => {
            mode.policy = Policy::Other;
            mode.priority = 0;
        }
        TaskPolicy::Deadline => {
            let (runtime_ns, deadline_ns, period_ns) = reservation.unwrap_or((0, 0, 0));
            mode.policy = Policy::Deadline {
                runtime_ns,
                deadline_ns,
                period_ns,
            };
            mode.priority = 0;
            // The kernel refuses deadline tasks pinned narrower than their root domain.
            mode.pin = false;
        }
    }
    mode
}

/// What one task's thread measured.
struct TaskRun {
    response: Recorder,
    start: Recorder,
    misses: u64,
    overruns: u64,
    /// The shortest time one job's busy loop took alone (the calibrated work, as run).
    work_as_run_ns: u64,
    measured_ns: u64,
}

/// The work of a job: a loop whose iterations cost CPU time, not a sleep.
#[inline(never)]
fn spin(iterations: u64) -> u64 {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for _ in 0..iterations {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        x = std::hint::black_box(x);
    }
    x
}

/// Nanoseconds per iteration of [`spin`] on this CPU, undisturbed: the fastest of many
/// timed rounds of about 100 µs (a preempted round is only ever slower).
fn calibrate_spin() -> f64 {
    // A first guess sizes the rounds.
    let a = now_ns();
    spin(100_000);
    let guess = (now_ns() - a).max(1) as f64 / 100_000.0;
    let round = ((100_000.0 / guess) as u64).max(1_000);
    spin(round * 20);
    (0..100)
        .map(|_| {
            let a = now_ns();
            std::hint::black_box(spin(round));
            (now_ns() - a).max(1) as f64 / round as f64
        })
        .fold(f64::INFINITY, f64::min)
}

/// Iterations of [`spin`] that take `ns` at `ns_per_iteration`.
fn iterations_for(ns: u64, ns_per_iteration: f64) -> u64 {
    (ns as f64 / ns_per_iteration).round() as u64
}

/// How often a job's work checks the CPU time it has had.
const WORK_CHUNK_NS: u64 = 5_000;

/// Busies the CPU until the calling thread has had `ns` of CPU time since `cpu_start` (its
/// thread CPU clock): calibrated chunks of [`spin`], each followed by one read of that clock,
/// so the work is the same CPU time however often the job is preempted or the clock rate
/// changes. Returns the thread's CPU clock at the end.
#[inline]
fn work_for(ns: u64, cpu_start: u64, chunk: u64) -> u64 {
    loop {
        let used = rtgauge_os::clock::thread_cpu_ns();
        if used.saturating_sub(cpu_start) >= ns {
            return used;
        }
        spin(chunk);
    }
}

/// Runs every task on its own thread from a common first release and returns, per task,
/// what its thread obtained and measured. With `--trace`, task i's responses longer than
/// `explain_above[i]` are handed to the trace.
fn run_tasks(
    ctx: &ProbeContext,
    set: &TaskSet,
    first_cpu: usize,
    calibration: &BTreeMap<usize, f64>,
    explain_above: &[u64],
) -> Result<Runs, ProbeError> {
    let n = set.tasks.len();
    let programs = &set.programs;
    let uses_io = programs
        .tasks
        .iter()
        .flat_map(|t| t.phases.iter().flat_map(|p| &p.steps))
        .any(|s| matches!(s, program::Step::IoRun(_)));
    let shared = steps::Shared::new(&programs.objects, uses_io).map_err(|e| {
        rtgauge_core::probe::os_error(
            PROBE,
            "creating the rt-app tasks' mutexes, conditions and I/O device",
            e,
        )
    })?;
    let engine = steps::Engine {
        ctx,
        tasks: &programs.tasks,
        shared: &shared,
        calibration,
    };
    let starting: Vec<usize> = (0..programs.tasks.len())
        .filter(|&k| programs.tasks[k].starts)
        .collect();
    let mutexes: Vec<PriorityMutex> = set
        .resources
        .iter()
        .map(|r| PriorityMutex::new(r.protocol == Protocol::Inherit))
        .collect::<Result<_, _>>()
        .map_err(|e| {
            rtgauge_core::probe::os_error(PROBE, "creating a shared resource's mutex", e)
        })?;
    // Completions, for tasks released by another's (after): a count and the release time of
    // the chain's first task for the job just completed.
    let completed: Vec<AtomicU32> = (0..n).map(|_| AtomicU32::new(0)).collect();
    let released_at: Vec<AtomicU64> = (0..n).map(|_| AtomicU64::new(0)).collect();
    let finished: Vec<AtomicBool> = (0..n).map(|_| AtomicBool::new(false)).collect();
    // --trace / --break: every task reports its responses beyond its prediction or deadline
    // on ring i, and the highest fixed-priority task of each measured CPU its late starts
    // (what delayed it is the platform's, not another task's) on ring n + that CPU's index.
    let spike_ring = |i: usize| -> Option<usize> {
        let task = &set.tasks[i];
        let cpu = task.cpu.unwrap_or(first_cpu);
        let top = (0..n)
            .filter(|&k| set.tasks[k].cpu.unwrap_or(first_cpu) == cpu)
            .filter(|&k| set.tasks[k].policy.fixed_priority() && set.tasks[k].after.is_none())
            .max_by_key(|&k| (set.tasks[k].priority, std::cmp::Reverse(k)))?;
        (top == i)
            .then(|| ctx.cpus.iter().position(|&c| c == cpu))
            .flatten()
            .map(|k| n + k)
    };
    let names = thread_names(
        set.tasks
            .iter()
            .map(|t| t.name.as_str())
            .chain(programs.tasks.iter().map(|t| t.name.as_str())),
    );
    let ready = Barrier::new(n + starting.len());
    let go = Barrier::new(n + starting.len());
    let failed = AtomicBool::new(false);
    let start_at = AtomicU64::new(0);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..n)
            .map(|i| {
                let (mutexes, completed, released_at, finished) =
                    (&mutexes, &completed, &released_at, &finished);
                let (ready, go, failed, start_at) = (&ready, &go, &failed, &start_at);
                std::thread::Builder::new()
                    .name(names[i].clone())
                    .spawn_scoped(scope, move || {
                        let task = &set.tasks[i];
                        let cpu = task.cpu.unwrap_or(first_cpu);
                        let reservation = (
                            task.dl_runtime_ns.unwrap_or(
                                (task.work_ns + task.work_ns / 4 + 50_000).min(task.deadline_ns),
                            ),
                            task.deadline_ns,
                            task.period_ns,
                        );
                        let mode =
                            thread_mode(ctx.mode, task.policy, task.priority, Some(reservation));
                        let prepared = (|| {
                            let ns_per_iteration = calibration
                                .get(&cpu)
                                .copied()
                                .unwrap_or_else(calibrate_spin);
                            let obtained =
                                rtgauge_core::rt::enter_thread(&mode, Some(cpu), ctx.best_effort)?;
                            Ok::<_, ProbeError>((obtained, ns_per_iteration))
                        })();
                        if prepared.is_err() {
                            failed.store(true, Ordering::Release);
                        }
                        if ready.wait().is_leader() {
                            start_at.store(now_ns() + 20_000_000, Ordering::Release);
                        }
                        go.wait();
                        let (obtained, ns_per_iteration) = prepared?;
                        if failed.load(Ordering::Acquire) {
                            finished[i].store(true, Ordering::Release);
                            return Ok((obtained, None));
                        }
                        let run = run_task(
                            ctx,
                            set,
                            i,
                            Explained {
                                late_starts_ring: spike_ring(i),
                                responses_above_ns: explain_above[i],
                            },
                            ns_per_iteration,
                            start_at.load(Ordering::Acquire),
                            mutexes,
                            completed,
                            released_at,
                            finished,
                        );
                        Ok((obtained, Some(run)))
                    })
                    .expect("spawning a task thread")
            })
            .collect();
        let program_handles: Vec<_> = starting
            .iter()
            .map(|&k| {
                let together = (&ready, &go, &failed, &start_at);
                steps::spawn(scope, &engine, k, names[n + k].clone(), together)
            })
            .collect();
        let joined: Vec<Result<(Obtained, Option<TaskRun>), ProbeError>> = handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect();
        let program_joined: Vec<_> = program_handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect();
        let not_started = || ProbeError::Invalid {
            probe: PROBE,
            message: "a task thread could not start, so none ran".into(),
        };
        // The thread that could not start says why; the others only stood down.
        if let Some(i) = joined.iter().position(Result::is_err) {
            return Err(joined
                .into_iter()
                .nth(i)
                .and_then(Result::err)
                .expect("an error"));
        }
        if let Some(i) = program_joined.iter().position(Result::is_err) {
            return Err(program_joined
                .into_iter()
                .nth(i)
                .and_then(Result::err)
                .expect("an error"));
        }
        let mut program_runs = Vec::with_capacity(starting.len());
        for (&k, j) in starting.iter().zip(program_joined) {
            match j? {
                (o, Some(run)) => program_runs.push((k, o, run)),
                (_, None) => return Err(not_started()),
            }
        }
        let mut runs = Vec::with_capacity(n);
        for j in joined {
            let (o, run) = j?;
            match run {
                Some(run) => runs.push((o, run)),
                None => return Err(not_started()),
            }
        }
        Ok((runs, program_runs))
    })
}

/// What the threads measured: per periodic task, and per started rt-app task (its index
/// in the set's programs).
type Runs = (
    Vec<(Obtained, TaskRun)>,
    Vec<(usize, Obtained, steps::ProgramRun)>,
);

/// What a task's thread hands to the trace (`--trace`): its late starts on ring
/// `late_starts_ring` (the highest task of each CPU only), and its responses longer than
/// `responses_above_ns` (its prediction or deadline, whichever is shorter) on its own ring.
struct Explained {
    late_starts_ring: Option<usize>,
    responses_above_ns: u64,
}

/// One task's thread, from the first release to the end of the budget. Everything is
/// allocated before the loop; the loop sleeps (or waits for its predecessor), reads the
/// clock, runs the job's work and records.
#[allow(clippy::too_many_arguments)]
fn run_task(
    ctx: &ProbeContext,
    set: &TaskSet,
    i: usize,
    explained: Explained,
    ns_per_iteration: f64,
    start: u64,
    mutexes: &[PriorityMutex],
    completed: &[AtomicU32],
    released_at: &[AtomicU64],
    finished: &[AtomicBool],
) -> TaskRun {
    let task = &set.tasks[i];
    let mut response = Recorder::new(DEFAULT_INTERVAL_NS);
    let mut start_latency = Recorder::new(DEFAULT_INTERVAL_NS);
    let critical = task.critical.map(|c| (&mutexes[c.resource], c.length_ns));
    let before_ns = task.work_ns - critical.map_or(0, |c| c.1);
    let inside_ns = critical.map_or(0, |c| c.1);
    let chunk = iterations_for(WORK_CHUNK_NS, ns_per_iteration).max(1);
    let measure_start = start + ctx.warmup_ns;
    let measure_end = ctx.budget.duration_ns.map(|d| measure_start + d);
    let (mut misses, mut overruns, mut last_end) = (0u64, 0u64, measure_start);
    let mut work_as_run_ns = u64::MAX;
    let mut release = start + task.offset_ns;
    let mut seen = 0u32;
    // Whether a task waits for this one's completions (after): only then are they published.
    let released_by_me = set.tasks.iter().any(|t| t.after == Some(i));
    let cpu = task.cpu.unwrap_or(ctx.cpus[0]);
    let mut spikes = explained
        .late_starts_ring
        .and_then(|k| ctx.spikes.and_then(|tap| tap.producer(k, cpu)));
    let mut long_responses = ctx.spikes.and_then(|tap| tap.producer_of_every(i, cpu));
    let mut spike_floor = spikes.as_ref().map_or(u64::MAX, |s| s.floor());
    rtgauge_core::rt::prefault_stack();
    loop {
        // Release: an absolute time, or the predecessor's completion.
        let woke = match task.after {
            None => {
                clock::sleep_until(release);
                now_ns()
            }
            Some(p) => {
                loop {
                    let now = completed[p].load(Ordering::Acquire);
                    if now != seen || finished[p].load(Ordering::Acquire) || ctx.stopped() {
                        break;
                    }
                    let _ = futex_wait_while(&completed[p], seen);
                }
                if finished[p].load(Ordering::Acquire)
                    && completed[p].load(Ordering::Acquire) == seen
                {
                    break;
                }
                seen = seen.wrapping_add(1);
                release = released_at[p].load(Ordering::Acquire);
                now_ns()
            }
        };
        if ctx.stopped()
            || measure_end.is_some_and(|end| woke >= end)
            || ctx.budget.loops.is_some_and(|l| response.count() >= l)
        {
            break;
        }
        let late = woke.saturating_sub(release);
        if let Some(s) = spikes.as_mut() {
            if release < measure_start {
                s.warm_up(late);
                spike_floor = s.floor();
            } else if late > spike_floor {
                if s.offer(release, woke) {
                    break;
                }
                spike_floor = s.floor();
            }
        }
        let began = now_ns();
        let cpu_began = rtgauge_os::clock::thread_cpu_ns();
        let cpu_before = work_for(before_ns, cpu_began, chunk);
        if let Some((mutex, _)) = critical {
            mutex.lock();
            work_for(inside_ns, cpu_before, chunk);
            mutex.unlock();
        }
        let end = now_ns();
        if critical.is_none() {
            work_as_run_ns = work_as_run_ns.min(end - began);
        }
        if released_by_me {
            released_at[i].store(release, Ordering::Release);
            completed[i].fetch_add(1, Ordering::AcqRel);
            let _ = futex_wake(&completed[i]);
        }
        if release >= measure_start {
            let r = end.saturating_sub(release);
            response.record(r, release - measure_start);
            start_latency.record(woke.saturating_sub(release), release - measure_start);
            if r > task.deadline_ns {
                misses += 1;
            }
            // Explained by the trace reader (release → completion, this thread's own time
            // excluded from the dominant cause).
            if r > explained.responses_above_ns {
                if let Some(l) = long_responses.as_mut() {
                    l.offer(release, end);
                }
            }
            if end > release + task.period_ns {
                overruns += 1;
            }
            last_end = end;
        }
        release += task.period_ns;
    }
    finished[i].store(true, Ordering::Release);
    completed[i].fetch_add(1, Ordering::AcqRel);
    let _ = futex_wake(&completed[i]);
    TaskRun {
        response,
        start: start_latency,
        misses,
        overruns,
        work_as_run_ns: if work_as_run_ns == u64::MAX {
            0
        } else {
            work_as_run_ns
        },
        measured_ns: last_end.saturating_sub(measure_start),
    }
}

/// The names of the tasks' threads, which the kernel's trace shows (15 bytes at most): each
/// task's own name when it fits and no other task's is the same once cut, else
/// `rtgauge-taskI`, so a trace reads "servo" where the task is servo.
pub fn thread_names<'a>(tasks: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let cut = |name: &str| -> String {
        let mut end = name.len().min(15);
        while !name.is_char_boundary(end) {
            end -= 1;
        }
        name[..end].to_string()
    };
    let cuts: Vec<String> = tasks.into_iter().map(cut).collect();
    cuts.iter()
        .enumerate()
        .map(|(i, own)| {
            let unique = cuts.iter().filter(|c| *c == own).count() == 1;
            if unique && !own.is_empty() && !own.contains(['\0', '\n']) {
                own.clone()
            } else {
                format!("rtgauge-task{i}")
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_take_their_tasks_names_cut_to_the_kernels_15_bytes_unless_two_would_clash() {
        let names = thread_names([
            "servo",
            "a-name-much-longer-than-fifteen",
            "ünïcödé-ünïcödé",
        ]);
        assert_eq!(names[0], "servo");
        assert_eq!(names[1], "a-name-much-lon");
        // Cut on a character boundary: never half a character.
        assert!(names[2].len() <= 15 && "ünïcödé-ünïcödé".starts_with(&names[2]));
        let clash = thread_names(["sensor-fusion-1-left", "sensor-fusion-1-right", "x"]);
        assert_eq!(clash, ["rtgauge-task0", "rtgauge-task1", "x"]);
    }

    #[test]
    fn the_busy_loop_is_calibrated_and_the_work_is_cpu_time() {
        let ns_per = calibrate_spin();
        assert!(ns_per > 0.0 && ns_per < 1_000.0, "{ns_per}");
        let chunk = iterations_for(WORK_CHUNK_NS, ns_per).max(1);
        // 2 ms of work is 2 ms of this thread's CPU time (up to one chunk more), and takes at
        // least 2 ms of wall time (more when preempted: this VM's neighbours are printed).
        for attempt in 1..=3 {
            let wall = now_ns();
            let cpu = rtgauge_os::clock::thread_cpu_ns();
            let end_cpu = work_for(2_000_000, cpu, chunk);
            let took = now_ns() - wall;
            println!(
                "attempt {attempt}: 2ms of work: {} ns of CPU, {took} ns of wall time",
                end_cpu - cpu
            );
            assert!(end_cpu - cpu >= 2_000_000);
            assert!(
                end_cpu - cpu < 2_000_000 + 20 * WORK_CHUNK_NS,
                "{}",
                end_cpu - cpu
            );
            assert!(took >= 2_000_000, "{took}");
        }
    }

    #[test]
    fn a_missing_task_set_says_how_to_give_one() {
        // The plan checks a probe before its parameters are applied: no set is no error yet.
        assert_eq!(Config::parse(&Params::of(PROBE, &[])).unwrap().set, None);
        assert!(NO_TASKS.contains("--tasks FILE"));
        let e = Config::parse(&Params::of(PROBE, &[("tasks", "/nonexistent/tasks.toml")]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("cannot read the task set"), "{e}");
    }

    #[test]
    fn inline_sets_resolve_to_themselves() {
        let text = "[[task]]\nname = \"a\"\nperiod = \"1ms\"\nwork = \"100us\"\npriority = 10\n";
        let cfg = Config::parse(&Params::of(PROBE, &[("tasks", text)])).unwrap();
        let again = Config::parse(&Params::new(PROBE, cfg.resolved())).unwrap();
        assert_eq!(cfg, again);
        assert_eq!(cfg.resolved()["overhead"], "max");
    }
}
