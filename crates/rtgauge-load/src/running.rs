//! Starting, watching and stopping the worker processes of a load.
//!
//! Hygiene, in order of defence:
//! 1. every worker leads its own process group (its children, compilers and `exec:` commands
//!    stay in it), so `stop` ends everything with one signal per group: SIGTERM, then SIGKILL;
//! 2. every worker gets a parent-death signal: if the measuring process dies, even by SIGKILL,
//!    the worker kills its whole group (see `worker::install_signal_handlers`);
//! 3. dropping a `RunningLoad` without `stop` (an error path, a panic) stops it too;
//! 4. scratch directories are named after the measuring process and removed by
//!    [`crate::cleanup_stale`] at the next start when the process died before removing them.

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::error::{one_line, LoadError, MIB};
use crate::kinds::{idx, Kind};
use crate::scratch::{cleanup_stale, ScratchDir};
use crate::shared::{Region, COUNTERS, FAILED, RUNNING, STARTING};
use crate::spec::{LoadSpec, Part};
use crate::sys;
use crate::worker::{WorkerConfig, PDEATH_SIGNAL, WORKER_ARG};
use crate::{LoadMetric, LoadReport, MARKER_ENV};

/// How long workers may take to report ready (the first compilation of `compile` is the slow
/// one on a small board).
const READY_TIMEOUT: Duration = Duration::from_secs(30);
/// Between SIGTERM and SIGKILL at stop.
const TERM_GRACE: Duration = Duration::from_secs(1);
/// Free space left to everything else on the scratch file system.
const DISK_RESERVE: u64 = 32 * MIB;
/// Files per `io` round (each also copied once).
pub(crate) const IO_FILES: u64 = 8;
/// Largest `io` file.
pub(crate) const IO_MAX_FILE: u64 = MIB;
/// Largest `memory` dd-like file per worker: big enough for sequential streaming.
const MEMORY_DD_MAX: u64 = 512 * MIB;
/// Sources and objects of one `compile` worker, generously.
const COMPILE_DISK: u64 = 4 * MIB;

/// Where and how a load runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadOptions {
    /// CPUs the load runs on; empty = every online CPU.
    pub cpus: Vec<usize>,
    /// Root under which the loads that write files (`memory`, `io`, `compile`) create their
    /// per-run scratch directory.
    pub scratch_dir: PathBuf,
    /// Most bytes the load may have on disk at once, shared by the parts of a mix.
    pub disk_cap_bytes: u64,
    /// The rtgauge binary, re-executed as `EXE __load-worker ...` for every worker.
    pub exe: PathBuf,
    /// The measuring priority: `rt-memory` runs SCHED_FIFO one below it.
    pub rt_priority_below: i32,
}

impl LoadOptions {
    /// Defaults: every CPU, the system temporary directory, 256 MiB on disk, measuring at 95.
    pub fn new(exe: impl Into<PathBuf>) -> LoadOptions {
        LoadOptions {
            cpus: Vec::new(),
            scratch_dir: std::env::temp_dir(),
            disk_cap_bytes: 256 * MIB,
            exe: exe.into(),
            rt_priority_below: 95,
        }
    }
}

/// One worker process (the leader of its process group).
struct WorkerProc {
    child: Child,
    pid: i32,
    /// Whether it has been waited for: after that its pid may belong to someone else, so it
    /// must never be signalled again.
    reaped: bool,
}

/// One part of a (possibly mixed) load: its workers and their shared counters.
struct Component {
    kind: Kind,
    name: String,
    cpus: Vec<usize>,
    policy: String,
    region: Region,
    workers: Vec<WorkerProc>,
    /// Counters when the load was declared running, so that set-up work is not counted.
    baseline: Vec<[u64; COUNTERS]>,
}

/// A load whose workers are running. Stop it with [`RunningLoad::stop`]; dropping it stops it
/// too, without a report.
pub struct RunningLoad {
    name: String,
    components: Vec<Component>,
    scratch: Option<ScratchDir>,
    started: Instant,
    finished: bool,
}

impl std::fmt::Debug for RunningLoad {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunningLoad")
            .field("name", &self.name)
            .field("pids", &self.pids())
            .finish()
    }
}

/// A part of the spec with everything decided before anything is spawned.
struct Plan<'a> {
    part: &'a Part,
    workers: usize,
    /// Bytes each worker may keep on disk.
    disk_per_worker: u64,
    compiler: Option<PathBuf>,
    rt_priority: i32,
}

impl RunningLoad {
    /// Starts the load's workers and returns once every one of them reports that it is
    /// generating load. `none` starts nothing. On any error, whatever was started is stopped.
    pub fn start(spec: &LoadSpec, opts: &LoadOptions) -> Result<RunningLoad, LoadError> {
        let name = spec.name();
        if spec.is_mix_name() {
            return Err(LoadError::InvalidSpec {
                spec: name,
                reason: "`all` is a list of loads to run one after another; pass the list \
                         through rtgauge_load::expand and start each"
                    .to_string(),
            });
        }
        let mut running = RunningLoad {
            name: name.clone(),
            components: Vec::new(),
            scratch: None,
            started: Instant::now(),
            finished: false,
        };
        if spec.is_none() {
            return Ok(running);
        }
        let cpus = load_cpus(&opts.cpus)?;
        if !opts.exe.is_file() {
            return Err(LoadError::InvalidOptions {
                reason: format!("the worker binary {} does not exist", opts.exe.display()),
                fix: "set LoadOptions::exe to the rtgauge binary (std::env::current_exe())"
                    .to_string(),
            });
        }
        cleanup_stale(&opts.scratch_dir);

        let plans = plan(spec, opts, cpus.len())?;
        if plans.iter().any(|p| p.part.kind.needs_scratch()) {
            let need: u64 = plans
                .iter()
                .map(|p| p.disk_per_worker * p.workers as u64)
                .sum();
            // Create the root first so that statvfs looks at the right file system.
            let scratch = ScratchDir::create(&opts.scratch_dir)?;
            let free = sys::free_bytes(scratch.path()).map_err(|source| LoadError::Scratch {
                action: "query free space in",
                path: scratch.path().to_path_buf(),
                source,
            })?;
            if need.saturating_add(DISK_RESERVE) > free {
                return Err(LoadError::NoSpace {
                    load: name,
                    dir: opts.scratch_dir.clone(),
                    need,
                    reserve: DISK_RESERVE,
                    free,
                });
            }
            running.scratch = Some(scratch);
        }

        for plan in &plans {
            let component = running.spawn_component(plan, &cpus, opts)?;
            running.components.push(component);
        }
        running.wait_ready()?;
        for c in &mut running.components {
            c.baseline = (0..c.workers.len())
                .map(|i| c.region.slot(i).map_or([0; COUNTERS], |s| s.snapshot()))
                .collect();
        }
        running.started = Instant::now();
        Ok(running)
    }

    /// The load's canonical name (as in its report).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Pids of the worker processes, each the id of its process group.
    pub fn pids(&self) -> Vec<u32> {
        self.components
            .iter()
            .flat_map(|c| c.workers.iter().map(|w| w.pid as u32))
            .collect()
    }

    /// Why the load is no longer fully running (a worker failed or died), if it is not.
    pub fn failure(&self) -> Option<String> {
        let failures: Vec<String> = self.components.iter().flat_map(|c| c.failures()).collect();
        (!failures.is_empty()).then(|| failures.join("; "))
    }

    /// Stops every process of the load (SIGTERM, then SIGKILL after a second), reaps them,
    /// removes the scratch directory and reports what the load achieved while it ran.
    pub fn stop(mut self) -> LoadReport {
        let duration = self.started.elapsed();
        let mut report = LoadReport {
            name: self.name.clone(),
            started: true,
            duration_ns: u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX),
            ..LoadReport::default()
        };
        let secs = duration.as_secs_f64().max(1e-9);
        let mix = self.components.len() > 1;
        let mut bytes: Option<u64> = None;
        let mut errors = Vec::new();
        let mut policies: Vec<String> = Vec::new();
        for c in &self.components {
            // Read before killing: the counters are final for the measured interval now.
            let mut totals = [0u64; COUNTERS];
            for i in 0..c.workers.len() {
                if let Some(slot) = c.region.slot(i) {
                    let now = slot.snapshot();
                    let base = c.baseline.get(i).copied().unwrap_or([0; COUNTERS]);
                    for k in 0..COUNTERS {
                        totals[k] += now[k].saturating_sub(base[k]);
                    }
                    if slot.state() == RUNNING {
                        if let Some(msg) = slot.message() {
                            let msg = format!("{}: {msg}", c.name);
                            if !report.warnings.contains(&msg) {
                                report.warnings.push(msg);
                            }
                        }
                    }
                }
            }
            errors.extend(c.failures());
            for (k, def) in c.kind.metrics().iter().enumerate() {
                report.metrics.push(LoadMetric {
                    name: if mix {
                        format!("{}: {}", c.kind.name(), def.name)
                    } else {
                        def.name.to_string()
                    },
                    unit: def.unit.to_string(),
                    total: totals[k],
                    per_second: totals[k] as f64 / secs,
                });
                if def.bytes {
                    *bytes.get_or_insert(0) += totals[k];
                }
            }
            if !mix && c.kind.reports_ops() {
                report.operations_per_second = Some(totals[idx::OPS] as f64 / secs);
                report.unit = Some(c.kind.metrics()[idx::OPS].unit.to_string());
            }
            if c.kind == Kind::Exec {
                *report.restarts.get_or_insert(0) += totals[idx::OPS];
            }
            for cpu in &c.cpus {
                if !report.cpus.contains(cpu) {
                    report.cpus.push(*cpu);
                }
            }
            report.processes += c.workers.len() as u32;
            if !policies.contains(&c.policy) {
                policies.push(c.policy.clone());
            }
        }
        report.cpus.sort_unstable();
        report.bytes_per_second = bytes.map(|b| b as f64 / secs);
        report.policy = policies.join(", ");
        if !errors.is_empty() {
            report.error = Some(errors.join("; "));
        }
        self.shutdown();
        report
    }

    fn spawn_component(
        &self,
        plan: &Plan<'_>,
        cpus: &[usize],
        opts: &LoadOptions,
    ) -> Result<Component, LoadError> {
        let kind = plan.part.kind;
        let load = self.name.clone();
        let region = Region::create(plan.workers).map_err(|source| LoadError::System {
            load: load.clone(),
            action: "create the shared counters (memfd)",
            source,
        })?;
        let fd = region.raw_fd().ok_or_else(|| LoadError::System {
            load: load.clone(),
            action: "share the counters",
            source: std::io::Error::from(std::io::ErrorKind::Other),
        })?;
        let policy = if kind == Kind::RtMemory {
            format!("SCHED_FIFO {}", plan.rt_priority)
        } else {
            "SCHED_OTHER".to_string()
        };
        // Pinned workers take CPUs in order: with fewer workers than CPUs, only those run it.
        let used = if kind.pinned() {
            &cpus[..plan.workers.min(cpus.len())]
        } else {
            cpus
        };
        let mut component = Component {
            kind,
            name: plan.part.kind.name().to_string(),
            cpus: used.to_vec(),
            policy,
            region,
            workers: Vec::new(),
            baseline: Vec::new(),
        };
        let parent = std::process::id();
        for slot in 0..plan.workers {
            let scratch = match (&self.scratch, kind.needs_scratch()) {
                (Some(dir), true) => {
                    let path = dir.path().join(format!("{}-{slot}", kind.name()));
                    std::fs::create_dir(&path).map_err(|source| LoadError::Scratch {
                        action: "create the worker directory",
                        path: path.clone(),
                        source,
                    })?;
                    Some(path)
                }
                _ => None,
            };
            let config = WorkerConfig {
                kind,
                slot,
                workers: plan.workers,
                cpus: if kind.pinned() {
                    vec![cpus[slot % cpus.len()]]
                } else {
                    cpus.to_vec()
                },
                parent,
                scratch,
                disk_budget: plan.disk_per_worker,
                rt_priority: plan.rt_priority,
                command: plan.part.command.clone(),
                compiler: plan.compiler.clone(),
                counters_fd: fd,
            };
            let json = serde_json::to_string(&config).map_err(|e| LoadError::System {
                load: load.clone(),
                action: "encode the worker configuration",
                source: std::io::Error::other(e.to_string()),
            })?;
            let mut cmd = Command::new(&opts.exe);
            cmd.arg(WORKER_ARG)
                .arg(kind.name())
                .arg(json)
                .env(MARKER_ENV, parent.to_string())
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .process_group(0);
            let parent_pid = parent as libc::pid_t;
            // SAFETY: the closure runs between fork and exec and only makes async-signal-safe
            // system calls (prctl, getppid, sched_setscheduler, fcntl, dup2, _exit).
            unsafe {
                cmd.pre_exec(move || child_setup(parent_pid, fd));
            }
            let child = cmd.spawn().map_err(|source| LoadError::Spawn {
                load: load.clone(),
                exe: opts.exe.clone(),
                source,
            })?;
            component.workers.push(WorkerProc {
                pid: child.id() as i32,
                child,
                reaped: false,
            });
        }
        Ok(component)
    }

    fn wait_ready(&mut self) -> Result<(), LoadError> {
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            let mut all_running = true;
            for c in &self.components {
                for (i, w) in c.workers.iter().enumerate() {
                    let Some(slot) = c.region.slot(i) else {
                        continue;
                    };
                    match slot.state() {
                        RUNNING => {}
                        FAILED => {
                            return Err(LoadError::WorkerFailed {
                                load: self.name.clone(),
                                reason: one_line(
                                    &slot.message().unwrap_or_else(|| "no reason given".into()),
                                ),
                            })
                        }
                        state => {
                            debug_assert_eq!(state, STARTING);
                            if let Some(status) = exit_status_nowait(w.pid) {
                                return Err(LoadError::WorkerFailed {
                                    load: self.name.clone(),
                                    reason: format!(
                                        "a `{}` worker {status} before it was running; check that LoadOptions::exe calls rtgauge_load::worker_main for `{WORKER_ARG}`",
                                        c.name
                                    ),
                                });
                            }
                            all_running = false;
                        }
                    }
                }
            }
            if all_running {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(LoadError::Timeout {
                    load: self.name.clone(),
                    seconds: READY_TIMEOUT.as_secs(),
                });
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// SIGTERM to every group, up to a second of grace, SIGKILL to every group (while each
    /// leader is still an unreaped zombie, so that its pid cannot have been reused), reap.
    fn shutdown(&mut self) {
        if self.finished {
            return;
        }
        self.finished = true;
        let live: Vec<i32> = self
            .components
            .iter()
            .flat_map(|c| c.workers.iter().filter(|w| !w.reaped).map(|w| w.pid))
            .collect();
        for &pid in &live {
            sys::kill_group(pid, libc::SIGTERM);
        }
        let deadline = Instant::now() + TERM_GRACE;
        while Instant::now() < deadline && live.iter().any(|&p| exit_status_nowait(p).is_none()) {
            std::thread::sleep(Duration::from_millis(2));
        }
        for c in &mut self.components {
            for w in c.workers.iter_mut().filter(|w| !w.reaped) {
                sys::kill_group(w.pid, libc::SIGKILL);
                // The group may not exist if the worker died before setpgid: kill it by pid.
                let _ = w.child.kill();
                let _ = w.child.wait();
                w.reaped = true;
            }
        }
        // SIGKILL is delivered asynchronously: a group member (a hackbench-style child, a
        // compiler) may still be running for a moment after its leader was reaped. Return
        // only when they are gone, so the next measurement starts on a quiet machine.
        let deadline = Instant::now() + TERM_GRACE;
        while !live.is_empty() && sys::groups_alive(&live) && Instant::now() < deadline {
            for &pid in &live {
                sys::kill_group(pid, libc::SIGKILL);
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        self.scratch = None; // removes the directory
    }
}

impl Drop for RunningLoad {
    fn drop(&mut self) {
        self.shutdown();
    }
}

impl Component {
    fn failures(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (i, w) in self.workers.iter().enumerate() {
            let failed = self
                .region
                .slot(i)
                .filter(|s| s.state() == FAILED)
                .map(|s| s.message().unwrap_or_else(|| "no reason given".into()));
            if let Some(msg) = failed {
                out.push(format!(
                    "`{}` worker {i} failed: {}",
                    self.name,
                    one_line(&msg)
                ));
            } else if !w.reaped {
                if let Some(status) = exit_status_nowait(w.pid) {
                    out.push(format!(
                        "`{}` worker {i} {status} during the run",
                        self.name
                    ));
                }
            }
        }
        out
    }
}

/// In the child between fork and exec: tie the worker to its parent and hand it the counters.
fn child_setup(parent: libc::pid_t, counters_fd: i32) -> std::io::Result<()> {
    // SAFETY: async-signal-safe system calls on values we own; see the caller.
    unsafe {
        if libc::prctl(libc::PR_SET_PDEATHSIG, PDEATH_SIGNAL as libc::c_ulong) == -1 {
            return Err(std::io::Error::last_os_error());
        }
        // The parent died between fork and prctl: the signal will never come, so leave now.
        if libc::getppid() != parent {
            libc::_exit(1);
        }
        // Loads run SCHED_OTHER whatever the calling thread runs at (it may be a measuring
        // thread at SCHED_FIFO): rt-memory raises its own thread later.
        rtgauge_os::sched::set_other();
        // Inherit the counters across exec (this clears the flag in the child's table only).
        if libc::fcntl(counters_fd, libc::F_SETFD, 0) == -1 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// How a child exited, if it has, without reaping it (its pid stays reserved).
fn exit_status_nowait(pid: i32) -> Option<String> {
    // SAFETY: waitid writes only into `info`, plain data.
    let info = unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        let ret = libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        );
        if ret != 0 {
            return None;
        }
        info
    };
    // SAFETY: after a successful waitid, si_pid and si_status are the valid union members.
    let (child, status) = unsafe { (info.si_pid(), info.si_status()) };
    if child == 0 {
        return None;
    }
    Some(match info.si_code {
        libc::CLD_EXITED => format!("exited with status {status}"),
        _ => format!("was killed by signal {status}"),
    })
}

/// The CPUs a load runs on: the user's, checked against the online CPUs, or all online CPUs.
fn load_cpus(asked: &[usize]) -> Result<Vec<usize>, LoadError> {
    let online = sys::online_cpus();
    if asked.is_empty() {
        return Ok(online);
    }
    let mut cpus = asked.to_vec();
    cpus.sort_unstable();
    cpus.dedup();
    if let Some(bad) = cpus.iter().find(|c| !online.contains(c)) {
        return Err(LoadError::InvalidOptions {
            reason: format!("CPU {bad} is not online (online: {online:?})"),
            fix: "choose load CPUs among the online ones".to_string(),
        });
    }
    Ok(cpus)
}

/// Decides workers, disk budgets, compiler and priority for each part, and checks that each
/// part can run here, before anything is spawned.
fn plan<'a>(
    spec: &'a LoadSpec,
    opts: &LoadOptions,
    ncpus: usize,
) -> Result<Vec<Plan<'a>>, LoadError> {
    let disk_parts = spec
        .parts()
        .iter()
        .filter(|p| p.kind.needs_scratch())
        .count()
        .max(1) as u64;
    let disk_per_part = opts.disk_cap_bytes / disk_parts;
    let mut plans = Vec::new();
    for part in spec.parts() {
        let kind = part.kind;
        let workers = match (kind, part.workers) {
            (Kind::Exec, _) => 1,
            (_, Some(n)) => n.get() as usize,
            (_, None) => ncpus.max(1),
        };
        let share = disk_per_part / workers as u64;
        let mut p = Plan {
            part,
            workers,
            disk_per_worker: 0,
            compiler: None,
            rt_priority: 0,
        };
        let too_small = |need: u64| {
            LoadError::InvalidOptions {
            reason: format!(
                "a disk cap of {} MiB leaves {} KiB to each of the {workers} `{}` workers, which need {} KiB",
                opts.disk_cap_bytes / MIB,
                share / 1024,
                kind.name(),
                need / 1024
            ),
            fix: "raise the disk cap or lower the load's intensity".to_string(),
        }
        };
        match kind {
            Kind::Memory => {
                // Whole MiB blocks; a share under one block only skips the dd-like write.
                p.disk_per_worker = (share.min(MEMORY_DD_MAX) / MIB) * MIB;
            }
            Kind::Io => {
                let least = 2 * IO_FILES * 4096;
                if share < least {
                    return Err(too_small(least));
                }
                // A round never holds more than every file twice at the largest file size.
                p.disk_per_worker = share.min(2 * IO_FILES * IO_MAX_FILE);
            }
            Kind::Compile => {
                if share < COMPILE_DISK {
                    return Err(too_small(COMPILE_DISK));
                }
                p.disk_per_worker = COMPILE_DISK;
                p.compiler = Some(sys::find_compiler()?);
            }
            Kind::Exec => sys::shell_available()?,
            Kind::RtMemory => {
                let priority = opts.rt_priority_below - 1;
                if priority < 1 {
                    return Err(LoadError::InvalidOptions {
                        reason: format!(
                            "rt-memory runs one below the measuring priority {}, which leaves no SCHED_FIFO priority",
                            opts.rt_priority_below
                        ),
                        fix: "measure at priority 2 or higher".to_string(),
                    });
                }
                sys::rt_permitted(priority).map_err(|reason| LoadError::RtNotPermitted {
                    load: kind.name().to_string(),
                    priority,
                    reason,
                })?;
                p.rt_priority = priority;
            }
            _ => {}
        }
        plans.push(p);
    }
    Ok(plans)
}
