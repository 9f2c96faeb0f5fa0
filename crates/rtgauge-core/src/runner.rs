//! The one runner every probe goes through: preflight, loads, modes, warm-up, measurement,
//! and the result document, written after every step so an interrupted run keeps its data.

use crate::clock;
use crate::live::LiveBoard;
use crate::plan::Plan;
use crate::probe::{ProbeContext, ProbeError};
use crate::probes;
use crate::rt::{self, ProcessContext, RtError};
use crate::signals;
use rtgauge_result::{
    Calibration, LoadReport, ProbeRun, ProbeStatus, RunConfig, RunResult, RunStatus, Tool, Warning,
    SCHEMA_VERSION,
};
use std::sync::Arc;

/// Errors that stop a run before anything is measured.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{0}")]
    Rt(#[from] RtError),
    #[error("load {load}: {detail}")]
    Load { load: String, detail: String },
}

/// Observers of a run: progress for the display, and a document writer.
pub trait RunObserver {
    /// A probe is about to start (mode, load).
    fn probe_started(&mut self, _probe: &str, _mode: &str, _load: &str) {}
    /// The document so far; called after every probe run and at the end.
    fn checkpoint(&mut self, _result: &RunResult) {}
}

/// Everything the runner needs besides the plan.
pub struct RunInputs {
    pub command_line: Vec<String>,
    pub live: Arc<LiveBoard>,
    /// Where load workers keep their scratch files.
    pub scratch_dir: std::path::PathBuf,
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
    signals::install();
    let calibration = clock::calibrate(100_000);
    let fingerprint = rtgauge_sysinfo::collect();
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
        warnings: environment_warnings(&fingerprint, &calibration)
            .into_iter()
            .chain(mode_warnings(plan))
            .collect(),
        fingerprint,
        checks: Vec::new(),
        config: run_config(plan),
        calibration,
        runs: Vec::new(),
        loads: Vec::new(),
    };

    'loads: for load in &plan.loads {
        let running = start_load(load)?;
        for mode in &plan.modes {
            let process = match ProcessContext::enter(mode, plan.best_effort) {
                Ok(p) => p,
                Err(e) => {
                    result.loads.push(stop_load(running, load));
                    return Err(e.into());
                }
            };
            for request in &plan.probes {
                if signals::stop_requested() {
                    break;
                }
                observer.probe_started(request.name, &mode.name, load);
                let run = run_probe(
                    plan,
                    request,
                    mode,
                    load,
                    &process,
                    &result.calibration,
                    &inputs.live,
                );
                let (run, warnings) = run;
                for w in warnings {
                    result.warnings.push(Warning::new(
                        "probe",
                        format!("{} {} {}: {w}", run.probe, run.mode, run.load),
                    ));
                }
                result.runs.push(run);
                result.finished_unix_ns = clock::unix_ns();
                observer.checkpoint(&result);
            }
            drop(process);
            if signals::stop_requested() {
                result.loads.push(stop_load(running, load));
                break 'loads;
            }
        }
        result.loads.push(stop_load(running, load));
    }

    result.status = if signals::stop_requested() {
        RunStatus::Interrupted
    } else if result
        .runs
        .iter()
        .any(|r| matches!(r.status, ProbeStatus::Failed { .. }))
    {
        RunStatus::Failed
    } else {
        RunStatus::Complete
    };
    result.warnings.extend(sample_count_warnings(&result));
    result.finished_unix_ns = clock::unix_ns();
    observer.checkpoint(&result);
    Ok(result)
}

fn run_probe(
    plan: &Plan,
    request: &crate::plan::ProbeRequest,
    mode: &rt::Mode,
    load: &str,
    process: &ProcessContext,
    calibration: &Calibration,
    live: &LiveBoard,
) -> (ProbeRun, Vec<String>) {
    let probe = probes::find(request.name).expect("plans only hold known probes");
    let params = request.params();
    let mut run = ProbeRun {
        probe: request.name.to_string(),
        mode: mode.name.clone(),
        load: load.to_string(),
        status: ProbeStatus::Ok,
        obtained: rt::combine(process, Default::default()),
        params: request.params.clone(),
        warmup_ns: request.warmup_ns,
        measured_ns: 0,
        series: Vec::new(),
    };
    if let Err(reason) = probe.availability() {
        run.status = ProbeStatus::Skipped { reason };
        return (run, Vec::new());
    }
    live.begin(format!("{} · {} · load {}", request.name, mode.name, load));
    let ctx = ProbeContext {
        mode,
        cpus: &plan.cpus,
        params: &params,
        budget: request.budget,
        warmup_ns: request.warmup_ns,
        best_effort: plan.best_effort,
        calibration,
        stop: signals::stop_flag(),
        live,
    };
    match probe.run(&ctx) {
        Ok(out) => {
            run.obtained = rt::combine(process, out.obtained);
            run.params.extend(out.params);
            run.measured_ns = out.measured_ns;
            run.series = out.series;
            (run, out.warnings)
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

/// A load running in the background for the probes of one load condition.
struct ActiveLoad;

fn start_load(name: &str) -> Result<Option<ActiveLoad>, RunError> {
    if name == "none" {
        return Ok(None);
    }
    Err(RunError::Load {
        load: name.into(),
        detail: "loads are not available in this build; use --load none".into(),
    })
}

fn stop_load(_running: Option<ActiveLoad>, name: &str) -> LoadReport {
    LoadReport {
        name: name.to_string(),
        started: false,
        ..LoadReport::default()
    }
}

fn run_config(plan: &Plan) -> RunConfig {
    let first = plan.probes.first();
    let mut params = std::collections::BTreeMap::new();
    for p in &plan.probes {
        for (k, v) in &p.params {
            params.insert(format!("{}.{k}", p.name), v.clone());
        }
    }
    RunConfig {
        suite: plan.suite.clone(),
        probes: plan.probes.iter().map(|p| p.name.to_string()).collect(),
        modes: plan.modes.iter().map(|m| m.name.clone()).collect(),
        loads: plan.loads.clone(),
        cpus: plan.cpus.clone(),
        duration_ns: first.and_then(|p| p.budget.duration_ns),
        loops: first.and_then(|p| p.budget.loops),
        warmup_ns: first.map(|p| p.warmup_ns).unwrap_or(0),
        priority: plan.priority,
        best_effort: plan.best_effort,
        params,
    }
}

/// Warnings about the machine that weaken every number of the run.
fn environment_warnings(
    fp: &rtgauge_sysinfo::Fingerprint,
    calibration: &Calibration,
) -> Vec<Warning> {
    let mut w = Vec::new();
    let preferred = clock::preferred_clocksource();
    if !preferred.is_empty()
        && !calibration.clocksource.is_empty()
        && calibration.clocksource != preferred
    {
        w.push(Warning::new(
            "clocksource",
            format!(
                "clocksource is {}, not {preferred}: every clock read is slower and coarser; check `dmesg | grep -i clocksource` for why the kernel switched",
                calibration.clocksource
            ),
        ));
    }
    if !fp.virtualization.is_empty() {
        w.push(Warning::new(
            "virtualization",
            format!("running under virtualisation ({}): the hypervisor adds latency no guest setting can remove", fp.virtualization),
        ));
    }
    if !fp.preempt_rt {
        w.push(Warning::new(
            "preemption",
            format!("kernel is not PREEMPT_RT (preemption model: {}): expect long non-preemptible sections under load", fp.preemption_model),
        ));
    }
    if fp.rt_runtime_us.is_some_and(|r| r >= 0) {
        w.push(Warning::new(
            "rt_throttling",
            "RT throttling is on: real-time tasks are stopped for the rest of each period once they used kernel.sched_rt_runtime_us; `sysctl -w kernel.sched_rt_runtime_us=-1` turns it off",
        ));
    }
    w
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
                    run.probe,
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
