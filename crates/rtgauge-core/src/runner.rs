//! The one runner every probe goes through: preflight, loads, modes, warm-up, measurement,
//! and the result document, written after every step so an interrupted run keeps its data.

use crate::clock;
use crate::live::LiveBoard;
use crate::plan::Plan;
use crate::probe::{ProbeContext, ProbeError};
use crate::registry;
use crate::rt::{self, ProcessContext, RtError};
use crate::signals;
use crate::spikes::{read_spikes, SpikeReport, SpikeSettings, SpikeTap};
use crate::trace_source::{RecorderChoice, TraceSource};
use rtgauge_load::{LoadOptions, LoadSpec, RunningLoad};
use rtgauge_record::{RecordError, RecordOptions, RecordingHub, RecordingMeta};
use rtgauge_result::{
    Calibration, LoadReport, ProbeRun, ProbeStatus, RunConfig, RunResult, RunStatus, Tool, Tracing,
    Warning, SCHEMA_VERSION,
};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Errors that stop a run before anything is measured.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{0}")]
    Rt(#[from] RtError),
    #[error("load {load} could not start: {detail}")]
    Load { load: String, detail: String },
    #[error("--record: {0}")]
    Record(#[from] RecordError),
}

/// Observers of a run: progress for the display, and a document writer.
pub trait RunObserver {
    /// A probe is about to start (mode, load).
    fn probe_started(&mut self, _probe: &str, _mode: &str, _load: &str) {}
    /// The document so far; called after every probe run and at the end.
    fn checkpoint(&mut self, _result: &RunResult) {}
    /// Whether the run's spikes are explained, and why not, before the first probe (a
    /// monitor says it at start: its document comes only when it stops).
    fn tracing(&mut self, _tracing: &Tracing) {}
}

/// Everything the runner needs besides the plan.
pub struct RunInputs {
    pub command_line: Vec<String>,
    pub live: Arc<LiveBoard>,
    /// Where load workers keep their scratch files.
    pub scratch_dir: PathBuf,
    /// This binary, re-executed for load workers.
    pub exe: PathBuf,
    /// Path prefix of raw-sample recordings (the result path without `.json`); recordings
    /// are `<stem>.<probe>-<mode>-<load>.rtgr`. Needed when the plan records.
    pub record_stem: Option<PathBuf>,
}

/// Runs the plan. RT permissions are checked first (unless best effort), so a refused run
/// fails before anything is written.
pub fn execute(
    plan: &Plan,
    inputs: &RunInputs,
    observer: &mut dyn RunObserver,
) -> Result<RunResult, RunError> {
    if !plan.best_effort {
        for mode in plan.modes.iter().filter(|m| m.policy.is_realtime()) {
            rt::preflight(mode)?;
        }
    }
    // Bad recording settings fail the run before anything is measured.
    let record_options = if plan.record.is_empty() {
        None
    } else {
        Some(recording_options(plan)?)
    };
    signals::install();
    // Before loads and probes start: the session must be recording when the first spike comes.
    let (session, tracing) = start_tracing(plan);
    if let Some(tracing) = &tracing {
        observer.tracing(tracing);
    }
    let mut result = new_document(plan, inputs, tracing);
    let measuring = Measuring {
        plan,
        inputs,
        record_options: record_options.as_ref(),
        session: session.as_ref(),
    };
    let load_options = LoadOptions {
        cpus: plan.load_cpus.clone(),
        scratch_dir: inputs.scratch_dir.clone(),
        disk_cap_bytes: plan.load_disk_cap_bytes,
        exe: inputs.exe.clone(),
        rt_priority_below: plan.priority,
    };
    for spec in &plan.loads {
        let load = &spec.name();
        let running = match start_load(spec, &load_options) {
            Ok(running) => running,
            Err(e) if plan.skip_failed_loads => {
                result.warnings.push(Warning::new(
                    "load",
                    format!("load {load} did not start, its probes were skipped: {e}"),
                ));
                result
                    .loads
                    .push(rtgauge_load::LoadReport::not_started(load.clone(), &e));
                observer.checkpoint(&result);
                continue;
            }
            Err(e) => {
                return Err(RunError::Load {
                    load: load.clone(),
                    detail: format!("{e} (or pass --skip-failed-loads to go on without it)"),
                })
            }
        };
        let measured = measuring.under_load(load, &mut result, observer);
        result.loads.push(stop_load(running, load));
        measured?;
        if signals::stop_requested() {
            break;
        }
    }
    result.status = final_status(&result);
    result.warnings.extend(sample_count_warnings(&result));
    result.finished_unix_ns = clock::unix_ns();
    observer.checkpoint(&result);
    Ok(result)
}

/// The result document before the first probe: the machine, its checks for this run, the
/// clock's calibration and the configuration; `Interrupted` until the run ends.
fn new_document(plan: &Plan, inputs: &RunInputs, tracing: Option<Tracing>) -> RunResult {
    let calibration = clock::calibrate(100_000);
    let fingerprint = rtgauge_sysinfo::collect();
    // The doctor judges the machine for this run: its CPUs and its priority.
    let doctor_settings = rtgauge_sysinfo::DoctorSettings::for_cpus(&plan.cpus)
        .at_priority(u32::try_from(plan.priority).unwrap_or(0));
    let checks = rtgauge_sysinfo::doctor_with(&rtgauge_sysinfo::SysRoot::live(), &doctor_settings);
    let mut result = RunResult {
        schema_version: SCHEMA_VERSION,
        tool: Tool {
            name: "rtgauge".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        },
        command_line: inputs.command_line.clone(),
        started_unix_ns: clock::unix_ns(),
        finished_unix_ns: 0,
        status: RunStatus::Interrupted,
        warnings: environment_warnings(&checks)
            .into_iter()
            .chain(mode_warnings(plan))
            .collect(),
        fingerprint,
        checks,
        config: run_config(plan),
        calibration,
        runs: Vec::new(),
        loads: Vec::new(),
        recordings: Vec::new(),
        tracing,
    };
    // A trace the user asked for and did not get is said; one that was only a default is
    // recorded in the result's tracing section.
    if let Some(tracing) = result.tracing.as_ref().filter(|t| !t.by_default) {
        for line in tracing.reason.iter().chain(&tracing.fallback) {
            result.warnings.push(Warning::new("trace", line.clone()));
        }
    }
    result
}

/// What every probe run of a plan shares.
struct Measuring<'a> {
    plan: &'a Plan,
    inputs: &'a RunInputs,
    record_options: Option<&'a RecordOptions>,
    session: Option<&'a TraceSource>,
}

impl Measuring<'_> {
    /// Every mode × probe under the running load `load`, each run added to `result` and
    /// checkpointed; stops early when a stop is requested.
    fn under_load(
        &self,
        load: &str,
        result: &mut RunResult,
        observer: &mut dyn RunObserver,
    ) -> Result<(), RunError> {
        let plan = self.plan;
        for mode in &plan.modes {
            let process = ProcessContext::enter(mode, plan.best_effort)?;
            for request in plan.probes_in(mode) {
                if signals::stop_requested() {
                    break;
                }
                observer.probe_started(&request.title(), &mode.name, load);
                let hub = self
                    .record_options
                    .and_then(|o| recording_hub(plan, self.inputs, o, request, &mode.name, load));
                let (run, warnings) = run_probe(
                    plan,
                    request,
                    mode,
                    load,
                    &process,
                    &result.calibration,
                    &self.inputs.live,
                    hub.as_ref(),
                    self.session,
                );
                finish_recording(hub, &run, result);
                for w in warnings {
                    let code = if w.starts_with("--break") {
                        "break"
                    } else {
                        "probe"
                    };
                    result
                        .warnings
                        .push(Warning::new(code, format!("{}: {w}", run.key())));
                }
                result.runs.push(run);
                result.finished_unix_ns = clock::unix_ns();
                observer.checkpoint(result);
            }
            drop(process);
            if signals::stop_requested() {
                break;
            }
        }
        Ok(())
    }
}

/// How the run ended: stopped at a spike (`--break`), interrupted, failed or complete.
fn final_status(result: &RunResult) -> RunStatus {
    if result.warnings.iter().any(|w| w.code == "break") {
        RunStatus::Broken
    } else if signals::stop_requested() {
        RunStatus::Interrupted
    } else if result
        .runs
        .iter()
        .any(|r| matches!(r.status, ProbeStatus::Failed { .. }))
    {
        RunStatus::Failed
    } else {
        RunStatus::Complete
    }
}

// One call site; the arguments are the coordinates of one probe run and what it writes to.
#[allow(clippy::too_many_arguments)]
fn run_probe(
    plan: &Plan,
    request: &crate::plan::ProbeRequest,
    mode: &rt::Mode,
    load: &str,
    process: &ProcessContext,
    calibration: &Calibration,
    live: &LiveBoard,
    record: Option<&RecordingHub>,
    session: Option<&TraceSource>,
) -> (ProbeRun, Vec<String>) {
    let probe = registry::find(request.name).expect("plans only hold known probes");
    let mut run = ProbeRun {
        probe: request.name.to_string(),
        variant: request.variant.clone(),
        mode: mode.name.clone(),
        load: load.to_string(),
        status: ProbeStatus::Ok,
        obtained: rt::combine(process, Default::default()),
        params: request.params.raw().clone(),
        warmup_ns: request.warmup_ns,
        measured_ns: 0,
        series: Vec::new(),
        spikes: Vec::new(),
        spikes_unexplained: 0,
    };
    if let Err(reason) = probe.availability() {
        run.status = ProbeStatus::Skipped { reason };
        return (run, Vec::new());
    }
    live.begin(format!(
        "{} · {} · load {}",
        request.title(),
        mode.name,
        load
    ));
    let ctx = ProbeContext {
        mode,
        cpus: &plan.cpus,
        params: &request.params,
        budget: request.budget,
        warmup_ns: request.warmup_ns,
        best_effort: plan.best_effort,
        calibration,
        stop: signals::stop_flag(),
        live,
        record,
        spikes: None,
        trace: session.and_then(TraceSource::tracefs),
    };
    let (outcome, report, broken) = run_watched(
        plan,
        &ctx,
        session,
        probe.spike_threads(&request.config, plan.cpus.len()),
        |ctx| probe.run(ctx, &request.config),
    );
    let mut warnings = Vec::new();
    if broken {
        warnings.push(format!(
            "--break: stopped at the first sample above {}",
            crate::units::format_duration_ns(plan.spikes.break_ns.unwrap_or(0))
        ));
    }
    if let Some(report) = report {
        run.spikes = report.spikes;
        run.spikes_unexplained = report.unexplained;
        warnings.extend(
            report
                .error
                .map(|e| format!("reading the trace failed, later spikes are unexplained: {e}")),
        );
    }
    match outcome {
        Ok(out) => {
            run.obtained = rt::combine(process, out.obtained);
            run.params.extend(out.params);
            run.measured_ns = out.measured_ns;
            run.series = out.series;
            // After measuring, from the bounded interval maxima: constant work for any run length.
            for series in &mut run.series {
                series.worst_case = rtgauge_stats::evt::estimate_summary(&series.stats);
            }
            if let Some(status) = no_sample_status(&run, signals::stop_requested()) {
                run.status = status;
            }
            warnings.extend(out.warnings);
            (run, warnings)
        }
        Err(ProbeError::Unavailable(reason)) => {
            run.status = ProbeStatus::Skipped { reason };
            (run, Vec::new())
        }
        Err(e) => {
            run.status = ProbeStatus::Failed {
                error: e.to_string(),
            };
            (run, Vec::new())
        }
    }
}

/// Starts the run's trace source when the plan asks for it (`--trace`, or `--break`, which
/// keeps the breaking spike's window): the flight recorder, or the tracefs session where it
/// cannot load or a probe reads the whole run's trace ([`TraceSource::start`]). Where
/// tracing is impossible the run goes on without it and the result says why.
fn start_tracing(plan: &Plan) -> (Option<TraceSource>, Option<Tracing>) {
    let settings = &plan.spikes;
    if !settings.trace && settings.break_ns.is_none() {
        return (None, None);
    }
    let mut tracing = Tracing {
        active: false,
        reason: None,
        above_ns: settings.above_ns,
        max_spikes: settings.max_spikes,
        break_ns: settings.break_ns,
        events_missing: Vec::new(),
        recorder: None,
        fallback: None,
        by_default: settings.by_default,
    };
    if !settings.trace {
        return (None, Some(tracing));
    }
    let choice = match RecorderChoice::from_env() {
        // On by default only where it costs little: the flight recorder or nothing.
        Ok(_) if settings.by_default => RecorderChoice::Bpf,
        Ok(choice) => choice,
        Err(e) => {
            tracing.reason = Some(e);
            return (None, Some(tracing));
        }
    };
    let whole_run = plan.probes.iter().any(|r| r.probe().reads_whole_trace());
    if whole_run && settings.by_default {
        tracing.reason = Some(
            "attribution is not on by default for noise and task sets (they need every event through tracefs); add --trace".into(),
        );
        return (None, Some(tracing));
    }
    match TraceSource::start(&plan.cpus, whole_run, choice) {
        Ok(started) => {
            tracing.active = true;
            tracing.events_missing = started.source.events_missing();
            tracing.recorder = Some(started.source.name().to_owned());
            tracing.fallback = started.fallback;
            (Some(started.source), Some(tracing))
        }
        Err(e) => {
            tracing.reason = Some(e.to_string());
            (None, Some(tracing))
        }
    }
}

/// Runs `body` (one probe run) with a spike tap in its context when the plan traces or
/// breaks (one ring for each of `threads` measuring threads), and a reader thread off the
/// measured CPUs attributing the tap's candidates.
/// Returns the body's outcome, the reader's report (when a session ran) and whether
/// `--break` stopped it. Reusable by any probe runner with a programmed event time.
pub fn run_watched<T>(
    plan: &Plan,
    ctx: &ProbeContext,
    session: Option<&TraceSource>,
    threads: usize,
    body: impl FnOnce(&ProbeContext) -> T,
) -> (T, Option<SpikeReport>, bool) {
    let settings = SpikeSettings {
        trace: session.is_some(),
        ..plan.spikes
    };
    if !settings.trace && settings.break_ns.is_none() {
        return (body(ctx), None, false);
    }
    let tap = SpikeTap::new(threads, settings, signals::request_stop)
        .with_kernel(session.and_then(TraceSource::kernel))
        .with_live(ctx.live);
    let watched = ProbeContext {
        spikes: Some(&tap),
        ..*ctx
    };
    let done = AtomicBool::new(false);
    let (outcome, report) = std::thread::scope(|scope| {
        let reader = session.map(|session| {
            let (tap, done) = (&tap, &done);
            let helpers = crate::cpus::housekeeping_cpus(&plan.cpus);
            let priority = (plan.priority - 1).clamp(1, 50);
            std::thread::Builder::new()
                .name("rtgauge-trace".into())
                .spawn_scoped(scope, move || {
                    // Off the measured CPUs, at SCHED_FIFO so it is not preempted while
                    // recording is stopped. With every CPU measured it stays SCHED_OTHER so
                    // it only runs while the measuring threads sleep.
                    if rt::pin_thread_to_set(&helpers) {
                        crate::spikes::set_thread_fifo(priority);
                    }
                    read_spikes(session, tap, done)
                })
                .expect("spawning the trace reader")
        });
        let outcome = body(&watched);
        done.store(true, Ordering::Release);
        let report = reader.map(|r| r.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
        (outcome, report)
    });
    (outcome, report, tap.broken())
}

/// A probe run that took no sample at all is never `ok`: interrupted before its first
/// measurement it is skipped, otherwise it failed (its numbers would be an empty table).
fn no_sample_status(run: &ProbeRun, stopped: bool) -> Option<ProbeStatus> {
    if run.series.iter().any(|s| s.stats.count > 0) {
        return None;
    }
    Some(if stopped {
        ProbeStatus::Skipped {
            reason: "stopped before its first sample (SIGINT/SIGTERM)".into(),
        }
    } else {
        ProbeStatus::Failed {
            error: "no sample was taken in the measuring time; give it a longer --duration (or more --loops) than one period".into(),
        }
    })
}

/// Starts the background load of one load condition (`none` starts nothing). The load is
/// running when this returns, so warm-up already sees it.
fn start_load(
    spec: &LoadSpec,
    options: &LoadOptions,
) -> Result<Option<RunningLoad>, rtgauge_load::LoadError> {
    if spec.is_none() {
        return Ok(None);
    }
    RunningLoad::start(spec, options).map(Some)
}

/// Stops the load after measurement and returns what it achieved.
fn stop_load(running: Option<RunningLoad>, name: &str) -> LoadReport {
    match running {
        Some(r) => r.stop(),
        None => LoadReport {
            name: name.to_string(),
            started: false,
            ..LoadReport::default()
        },
    }
}

fn run_config(plan: &Plan) -> RunConfig {
    let first = plan.probes.first();
    let mut params = std::collections::BTreeMap::new();
    for p in &plan.probes {
        for (k, v) in p.params.raw() {
            params.insert(format!("{}.{k}", p.title()), v.clone());
        }
    }
    RunConfig {
        suite: plan.suite.clone(),
        probes: plan.probes.iter().map(|p| p.title()).collect(),
        modes: plan.modes.iter().map(|m| m.name.clone()).collect(),
        loads: plan.loads.iter().map(|l| l.name()).collect(),
        cpus: plan.cpus.clone(),
        duration_ns: first.and_then(|p| p.budget.duration_ns),
        loops: first.and_then(|p| p.budget.loops),
        warmup_ns: first.map(|p| p.warmup_ns).unwrap_or(0),
        priority: plan.priority,
        best_effort: plan.best_effort,
        params,
    }
}

/// The doctor's verdicts that weaken every number of the run, as warnings coded by check id.
fn environment_warnings(checks: &[rtgauge_sysinfo::Check]) -> Vec<Warning> {
    checks
        .iter()
        .flat_map(|c| {
            rtgauge_sysinfo::run_warnings(std::slice::from_ref(c))
                .into_iter()
                .map(|text| Warning::new(&c.id, text))
        })
        .collect()
}

/// Warnings about the modes asked for.
fn mode_warnings(plan: &Plan) -> Vec<Warning> {
    let mut w = Vec::new();
    if plan.modes.iter().any(|m| !m.policy.is_realtime()) {
        w.push(Warning::new(
            "normal_mode",
            "normal mode: SCHED_OTHER, memory not locked, no PM QoS: its numbers show what an ordinary process gets, not the machine's real-time capability",
        ));
    }
    if !rt::Privileges::current().is_root() {
        w.push(Warning::new(
            "not_root",
            "not running as root: real-time settings depend on CAP_SYS_NICE, CAP_IPC_LOCK and rlimits; the result records what was obtained",
        ));
    }
    w
}

/// Tells how long a run must be for the percentiles it could not report.
fn sample_count_warnings(result: &RunResult) -> Vec<Warning> {
    let mut w = Vec::new();
    for run in &result.runs {
        let Some(smallest) = run.series.iter().map(|s| s.stats.count).min() else {
            continue;
        };
        if smallest > 0 && smallest < 100_000 {
            w.push(Warning::new(
                "samples",
                format!(
                    "{} {} {}: {smallest} samples per series support percentiles up to {}; p99.999 needs 100000 (use --duration or --loops)",
                    run.title(),
                    run.mode,
                    run.load,
                    highest_label(smallest)
                ),
            ));
        }
    }
    w
}

fn highest_label(count: u64) -> &'static str {
    let support = |q: f64| rtgauge_stats::percentile_supported(q, count);
    if support(0.99999) {
        "p99.999"
    } else if support(0.9999) {
        "p99.99"
    } else if support(0.999) {
        "p99.9"
    } else if support(0.99) {
        "p99"
    } else if support(0.9) {
        "p90"
    } else {
        "the median"
    }
}

/// How recordings are written: environment knobs, and the writer kept off the measured CPUs.
fn recording_options(plan: &Plan) -> Result<RecordOptions, RecordError> {
    let mut o = RecordOptions::from_env()?;
    o.writer_cpus = crate::cpus::housekeeping_cpus(&plan.cpus);
    o.pin_writer = Some(rt::pin_thread_to_set);
    Ok(o)
}

/// The raw-sample recording of one probe run, when the plan records this probe.
fn recording_hub(
    plan: &Plan,
    inputs: &RunInputs,
    options: &RecordOptions,
    request: &crate::plan::ProbeRequest,
    mode: &str,
    load: &str,
) -> Option<RecordingHub> {
    if !plan
        .record
        .iter()
        .any(|p| request.is_selected_by(p) || p == "all")
    {
        return None;
    }
    let stem = inputs.record_stem.as_ref()?;
    // Load names can be arbitrary commands: keep the file name portable.
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    let name = format!(
        "{}.{}-{}-{}.rtgr",
        stem.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "rtgauge".into()),
        clean(&request.title()),
        clean(mode),
        clean(load)
    );
    let meta = RecordingMeta {
        tool: format!("rtgauge {}", env!("CARGO_PKG_VERSION")),
        probe: request.title(),
        mode: mode.to_string(),
        load: load.to_string(),
        params: request.params.raw().clone(),
    };
    Some(RecordingHub::new(
        stem.with_file_name(name),
        meta,
        options.clone(),
    ))
}

/// Closes the recording of a probe run and enters it in the result; gaps and failures become
/// warnings, never silence.
fn finish_recording(hub: Option<RecordingHub>, run: &ProbeRun, result: &mut RunResult) {
    let Some(hub) = hub else { return };
    let what = run.key().to_string();
    let mut warn = |code: &str, message: String| {
        if !result.warnings.iter().any(|w| w.message == message) {
            result.warnings.push(Warning::new(code, message));
        }
    };
    match hub.finish() {
        Ok(Some(s)) => {
            if s.samples_dropped > 0 {
                warn(
                    "record_dropped",
                    format!(
                        "{what}: {} of {} raw samples were dropped (a ring was full): the recording has gaps; raise {} or record fewer CPUs",
                        s.samples_dropped,
                        s.samples_written + s.samples_dropped,
                        rtgauge_record::hub::RING_ENV
                    ),
                );
            }
            if !s.writer_pinned {
                warn(
                    "record_writer",
                    "the raw-sample writer shares the measured CPUs (every CPU is measured): it runs SCHED_OTHER, so in rt mode it only runs while the measuring threads sleep; leave a CPU unmeasured (--cpus) to keep it apart".into(),
                );
            }
            result.recordings.push(rtgauge_result::RecordingInfo {
                path: s
                    .path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                probe: run.title(),
                mode: run.mode.clone(),
                load: run.load.clone(),
                format_version: s.format_version,
                samples_written: s.samples_written,
                samples_dropped: s.samples_dropped,
                bytes: s.bytes,
            });
        }
        Ok(None) => {
            if matches!(run.status, ProbeStatus::Ok) {
                warn(
                    "record_unsupported",
                    format!(
                        "--record {}: this probe does not record raw samples yet (cyclic does); its summary is complete",
                        run.title()
                    ),
                );
            }
        }
        Err(e) => warn(
            "record_failed",
            format!("{what}: the raw-sample recording failed: {e}"),
        ),
    }
}
