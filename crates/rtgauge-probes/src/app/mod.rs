//! `app`: the application's own instrumentation points (crates/rtgauge-app), collected while
//! it runs. `rtgauge run app -- ./my-loop args` starts the application; `rtgauge attach PID`
//! (`--set app.pid=PID`) joins a running one.
//!
//! The application is started from a thread entered into the run's mode on the first measured
//! CPU, so it inherits that policy, priority and CPU (like cyclic's measuring thread). The
//! collector then leaves the mode and drains the application's rings every few milliseconds
//! from the CPUs not measured, until the duration ends, the run is stopped or the application
//! exits. Each point becomes series: see [`series`].

mod record;
mod series;

use rtgauge_app::{AppError, Reader, Selection};
use rtgauge_core::clock::now_ns;
use rtgauge_core::probe::TypedProbe;
use rtgauge_core::probe::{
    About, ParamSpec, Params, ProbeConfig, ProbeContext, ProbeError, ProbeOutput,
};
use rtgauge_core::units::{format_duration_ns, quote};
use rtgauge_result::Obtained;
use series::{Accumulator, TraceCpu};
use std::collections::BTreeMap;
use std::os::fd::AsFd;
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::Duration;

const DESCRIPTION: &str =
    "an application's own instrumentation points (rtgauge-app): interval durations, start latency, period and jitter, event values, counter rates";
const PARAMS: [ParamSpec; 3] = [
    ParamSpec::new("command", "the words after -- (rtgauge run app -- ./my-loop args)", "the application to start and collect, as shell words: './servo --busy-us 100'"),
    ParamSpec::new("pid", "none (rtgauge attach PID)", "process id of a running instrumented application to collect instead of starting one"),
    ParamSpec::new("points", "every point (or RTGAUGE_POINTS)", "globs of the points to enable in the started application, a leading - disables: servo.*,-servo.debug"),
];
/// How often the collector drains the rings: at 1 kHz and three records a cycle a ring holds
/// over a second, so 5 ms leaves ample slack for a collector that is itself preempted.
const DRAIN_EVERY: Duration = Duration::from_millis(5);
/// How long a started application has to exit after SIGTERM before it is killed.
const EXIT_GRACE: Duration = Duration::from_secs(2);

pub struct App;

/// Why the app probe cannot run without an application.
pub const NO_APPLICATION: &str = "no application: start one with `rtgauge run app -- ./my-loop args` or join one with `rtgauge attach PID`";

impl TypedProbe for App {
    const ABOUT: About = About::new(crate::names::APP, DESCRIPTION, &PARAMS);
    type Config = Config;

    fn measure(&self, ctx: &ProbeContext, cfg: &mut Config) -> Result<ProbeOutput, ProbeError> {
        let (obtained, out) = rtgauge_core::threads::on_first_cpu("app", ctx, |_, _| {
            // Started here, the application inherits the mode and the first measured CPU.
            let target = Target::start(cfg)?;
            rtgauge_core::rt::leave_thread();
            let helpers = rtgauge_core::cpus::housekeeping_cpus(ctx.cpus);
            if !rtgauge_core::rt::pin_thread_to_set(&helpers) {
                rtgauge_core::rt::pin_thread_to_set(&rtgauge_sysinfo::online_cpus());
            }
            collect(ctx, target)
        })?;
        // Attached, the result says how the application's loop runs (collect found it).
        let obtained = if cfg.attached() {
            out.obtained.clone()
        } else {
            obtained
        };
        Ok(ProbeOutput { obtained, ..out })
    }
}

/// How thread `tid` of process `pid` runs, read from outside: its policy, priority and
/// affinity, whether the process locked memory and holds /dev/cpu_dma_latency open.
fn application_obtained(pid: u32, tid: u32) -> Obtained {
    let (policy, priority) = rtgauge_os::sched::scheduling_of(tid).unwrap_or(("other", 0));
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let locked_kb = status
        .lines()
        .find_map(|l| l.strip_prefix("VmLck:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok());
    let holds_dma_latency = std::fs::read_dir(format!("/proc/{pid}/fd")).is_ok_and(|fds| {
        fds.flatten().any(|fd| {
            std::fs::read_link(fd.path())
                .is_ok_and(|target| target == std::path::Path::new("/dev/cpu_dma_latency"))
        })
    });
    let timer_slack_ns = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/timerslack_ns"))
        .ok()
        .and_then(|v| v.trim().parse().ok());
    Obtained {
        policy: policy.into(),
        priority,
        memory_locked: locked_kb.is_some_and(|kb| kb > 0),
        cpu_dma_latency_held: holds_dma_latency,
        pinned: rtgauge_os::sched::affinity_of(tid).is_ok_and(|cpus| cpus.len() == 1),
        timer_slack_ns,
        shortfalls: Vec::new(),
    }
}

/// Whether process `pid` can be collected now (`rtgauge attach` asks before it measures or
/// writes anything): Err is one line saying why not.
pub fn check_attachable(pid: u32) -> Result<(), String> {
    Reader::attach(pid).map(drop).map_err(|e| e.to_string())
}

/// What to collect: an application to start, or a running process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    Command(Vec<String>),
    Pid(u32),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    source: Option<Source>,
    /// The `points` globs as given (validated).
    points: Option<String>,
}

impl Config {
    /// Joining a running process (`rtgauge attach`), not starting one.
    fn attached(&self) -> bool {
        matches!(self.source, Some(Source::Pid(_)))
    }
}

fn invalid(message: impl Into<String>) -> ProbeError {
    ProbeError::Invalid {
        probe: "app",
        message: message.into(),
    }
}

impl ProbeConfig for Config {
    fn parse(params: &Params) -> Result<Config, ProbeError> {
        let command = match params.raw().get("command") {
            None => None,
            Some(text) => match shlex::split(text) {
                Some(words) if !words.is_empty() => Some(words),
                Some(_) => return Err(invalid(
                    "command is empty; give the application after --: rtgauge run app -- ./my-loop",
                )),
                None => {
                    return Err(invalid(format!(
                        "command '{}' has an unclosed quote; quote its words as a shell would",
                        quote(text)
                    )))
                }
            },
        };
        let pid = match params.raw().get("pid") {
            None => None,
            Some(text) => Some(text.parse::<u32>().ok().filter(|&p| p > 0).ok_or_else(|| {
                invalid(format!(
                    "pid '{}' is not a process id; give a positive whole number",
                    quote(text)
                ))
            })?),
        };
        // No source is accepted here: the plan validates each probe before applying `--set`
        // and the words after `--`; measuring without one is refused (`Target::start`).
        let source = match (command, pid) {
            (Some(words), None) => Some(Source::Command(words)),
            (None, Some(pid)) => Some(Source::Pid(pid)),
            (Some(_), Some(_)) => return Err(invalid(
                "give either an application to start (after --) or a pid to attach to, not both",
            )),
            (None, None) => None,
        };
        let points = params.raw().get("points").cloned();
        // A bad pattern is refused here, before anything starts, rather than by the
        // application after it started; the environment's own globs are checked too.
        match &points {
            Some(globs) => Selection::parse_from(globs, "points").map(drop),
            None => Selection::from_env().map(drop),
        }
        .map_err(|e| invalid(e.to_string()))?;
        Ok(Config { source, points })
    }

    fn resolved(&self) -> BTreeMap<String, String> {
        let mut p = BTreeMap::new();
        match &self.source {
            None => {}
            Some(Source::Command(words)) => {
                let joined = shlex::try_join(words.iter().map(String::as_str))
                    .unwrap_or_else(|_| words.join(" "));
                p.insert("command".into(), joined);
            }
            Some(Source::Pid(pid)) => {
                p.insert("pid".into(), pid.to_string());
            }
        }
        if let Some(points) = &self.points {
            p.insert("points".into(), points.clone());
        }
        p
    }
}

/// The process being collected.
enum Target {
    Started { child: Child, program: String },
    Attached { pid: u32 },
}

impl Target {
    fn start(cfg: &Config) -> Result<Target, ProbeError> {
        let words = match &cfg.source {
            Some(Source::Pid(pid)) => return Ok(Target::Attached { pid: *pid }),
            Some(Source::Command(words)) => words,
            None => return Err(invalid(NO_APPLICATION)),
        };
        let mut command = Command::new(&words[0]);
        command.args(&words[1..]).stdin(Stdio::null());
        // The application's output goes to rtgauge's stderr: stdout carries rtgauge's own
        // (JSON, tables) and must stay parseable.
        if let Ok(err) = std::io::stderr().as_fd().try_clone_to_owned() {
            command.stdout(err);
        }
        if let Some(points) = &cfg.points {
            command.env(rtgauge_app::layout::POINTS_ENV, points);
        }
        let child = command.spawn().map_err(|e| {
            invalid(format!(
                "cannot start '{}': {e}; give the path of an executable after --",
                quote(&words[0])
            ))
        })?;
        Ok(Target::Started {
            child,
            program: words[0].clone(),
        })
    }

    fn pid(&self) -> u32 {
        match self {
            Target::Started { child, .. } => child.id(),
            Target::Attached { pid } => *pid,
        }
    }

    /// How the application ended, once it has (None while it runs).
    fn ended(&mut self, reader: Option<&Reader>) -> Option<String> {
        match self {
            Target::Started { child, .. } => child.try_wait().ok().flatten().map(describe_exit),
            Target::Attached { .. } => match reader {
                Some(r) if !r.producer_alive() => Some("ended".into()),
                _ => None,
            },
        }
    }

    /// Stops a started application that still runs: SIGTERM, then SIGKILL after a grace.
    fn stop(&mut self) {
        let Target::Started { child, .. } = self else {
            return;
        };
        if child.try_wait().ok().flatten().is_some() {
            return;
        }
        // SAFETY: signalling our own child, which has not been reaped (try_wait said so).
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
        let deadline = std::time::Instant::now() + EXIT_GRACE;
        while std::time::Instant::now() < deadline {
            if child.try_wait().ok().flatten().is_some() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// A started application never outlives its collection, whatever ends it (an error, a panic).
impl Drop for Target {
    fn drop(&mut self) {
        self.stop();
    }
}

fn describe_exit(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited with status {code}"),
        (None, Some(libc::SIGKILL)) => "was killed by SIGKILL".into(),
        (None, Some(sig)) => format!("was killed by signal {sig}"),
        (None, None) => "ended".into(),
    }
}

/// Waits for the application's file, then drains it until the run ends.
fn collect(ctx: &ProbeContext, mut target: Target) -> Result<ProbeOutput, ProbeError> {
    let pid = target.pid();
    let path = Reader::path_of(pid);
    let waited_from = now_ns();
    let give_up_ns = ctx.budget.duration_ns.unwrap_or(10_000_000_000) + ctx.warmup_ns;
    let mut reader = loop {
        match Reader::open(&path) {
            Ok(r) => break r,
            Err(AppError::NotFound { .. }) if matches!(target, Target::Started { .. }) => {
                if let Some(how) = target.ended(None) {
                    return Err(invalid(format!(
                        "the application {how} before registering any point; link it with rtgauge-app and register its points when it starts"
                    )));
                }
                if ctx.stopped() || now_ns() - waited_from > give_up_ns {
                    return Err(invalid(format!(
                        "the application registered no point within {}; link it with rtgauge-app and register its points when it starts",
                        format_duration_ns(give_up_ns)
                    )));
                }
                std::thread::sleep(Duration::from_millis(2));
            }
            Err(e) => return Err(invalid(e.to_string())),
        }
    };
    let lost_before = reader.lost();
    let start_ns = now_ns() + ctx.warmup_ns;
    let mut acc = Accumulator::new(start_ns);
    acc.show_on(ctx.live);
    // A started application runs on the first measured CPU; an attached one is traced where
    // its periodic thread is pinned, if that is a measured (traced) CPU.
    if let Some(tap) = ctx.spikes {
        match (&target, ctx.cpus.first()) {
            (Target::Started { .. }, Some(&cpu)) => acc.trace_into(tap, TraceCpu::Known(cpu)),
            (Target::Attached { .. }, _) => {
                acc.trace_into(tap, TraceCpu::PinnedWithin(ctx.cpus.to_vec()))
            }
            _ => {}
        }
    }
    let mut ended: Option<(String, u64)> = None;
    let mut recording_checked = false;
    loop {
        // The recording's series are the points registered when measurement starts.
        if !recording_checked && now_ns() >= start_ns {
            recording_checked = true;
            if let Some(recording) = record::Recording::open(ctx, &reader.points(), start_ns)? {
                acc.record_into(recording);
            }
        }
        acc.drain(&mut reader);
        let now = now_ns();
        if now >= start_ns && ctx.budget.done(start_ns, now, acc.most_samples()) {
            break;
        }
        if ctx.stopped() || acc.broken() {
            break;
        }
        if let Some(how) = target.ended(Some(&reader)) {
            ended = Some((how, now.saturating_sub(start_ns)));
            break;
        }
        std::thread::sleep(DRAIN_EVERY);
    }
    let end_ns = now_ns();
    acc.drain(&mut reader);
    target.stop();
    acc.drain(&mut reader);
    let lost = reader.lost();
    if matches!(target, Target::Started { .. }) || !reader.producer_alive() {
        // The application cannot remove its file after a SIGKILL; the collector does.
        reader.remove_file();
    }

    let mut warnings = Vec::new();
    let who = match &target {
        Target::Started { program, .. } => format!("application {program} (pid {pid})"),
        Target::Attached { pid } => format!("process {pid}"),
    };
    if let Some((how, after_ns)) = &ended {
        warnings.push(format!(
            "the {who} {how} after {} of measurement, before the run's end: its points hold what was collected until then",
            format_duration_ns(*after_ns)
        ));
    }
    if lost > 0 {
        warnings.push(format!(
            "the {who} dropped {lost} records (rings full: {lost_before} before collection began, {} during it); drain faster or record fewer points",
            lost - lost_before
        ));
    }
    if acc.unrecorded() > 0 {
        warnings.push(format!(
            "--record app: {} records of points registered after measurement started are not in the recording (their series are complete)",
            acc.unrecorded()
        ));
    }
    if acc.malformed() > 0 {
        warnings.push(format!(
            "{} records of the {who} named no registered point and were skipped",
            acc.malformed()
        ));
    }
    if !acc.untraced_threads().is_empty() {
        warnings.push(format!(
            "--trace: no late cycle of the {who} was explained: its threads {:?} are not pinned to one measured CPU; pin the loop's thread to one CPU (taskset -p -c CPU TID) and measure that CPU (--cpus CPU)",
            acc.untraced_threads()
        ));
    }
    let loop_thread = acc.loop_thread();
    let series = acc.finish(&reader.points(), end_ns);
    if series.is_empty() {
        warnings.push(format!(
            "the {who} registered no enabled point; check RTGAUGE_POINTS or the points parameter"
        ));
    }
    let obtained = match (&target, loop_thread) {
        (Target::Attached { pid }, Some(tid)) => application_obtained(*pid, tid),
        _ => Obtained::default(),
    };
    let mut out =
        ProbeOutput::measured(obtained, series, warnings, end_ns.saturating_sub(start_ns));
    out.params.insert("records-lost".into(), lost.to_string());
    out.params
        .insert("timestamps".into(), reader.clock_name().to_string());
    if let Some((how, _)) = ended {
        out.params.insert("ended-early".into(), how);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(pairs: &[(&str, &str)]) -> Result<Config, ProbeError> {
        Config::parse(&Params::of("app", pairs))
    }

    #[test]
    fn a_command_with_spaces_survives_the_result() {
        let cfg = parse(&[("command", "./servo --name 'a b' \"c'd\"")]).unwrap();
        assert_eq!(
            cfg.source,
            Some(Source::Command(vec![
                "./servo".into(),
                "--name".into(),
                "a b".into(),
                "c'd".into()
            ]))
        );
        let resolved = cfg.resolved();
        let again = Config::parse(&Params::new("app", resolved.clone())).unwrap();
        assert_eq!(again, cfg);
        assert_eq!(again.resolved(), resolved);
    }

    #[test]
    fn bad_sources_are_refused_with_the_fix() {
        let why = |pairs: &[(&str, &str)]| parse(pairs).unwrap_err().to_string();
        assert!(why(&[("command", "./a"), ("pid", "1")]).contains("not both"));
        assert!(why(&[("command", "'open")]).contains("unclosed quote"));
        assert!(why(&[("command", " ")]).contains("rtgauge run app --"));
        assert!(why(&[("pid", "0")]).contains("positive whole number"));
        assert!(why(&[("pid", "1"), ("points", "a,[")]).contains("points: pattern '['"));
        assert_eq!(
            parse(&[]).unwrap().source,
            None,
            "refused when measuring, not here"
        );
    }
}
