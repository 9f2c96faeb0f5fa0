//! Runs rt-app tasks ([`super::program`]) as rt-app does: each thread goes through its
//! phases' events in order, with the same primitives (pthread mutexes, condition variables
//! on CLOCK_MONOTONIC, absolute timers), and measures each pass through a phase as rt-app
//! logs it: `period` (the pass, start to end), `run` (the time its run events took) and the
//! wake-up latency of its timers. Everything a thread uses is made before its loop; inside
//! it, a thread only does what its events are (a `lock` locks, a `fork` starts a thread, an
//! `iorun` writes), reads the clock and records. Every wait for another thread gives up
//! when the run ends, so a set that blocks for good (rt-app's suspend and resume lose a
//! wake-up sent before the wait, as rt-app's do) still ends on time.

use super::program::{Objects, ProgramTask, Step, TimerRef};
use rtgauge_core::clock::{self, now_ns};
use rtgauge_core::probe::{ProbeContext, ProbeError};
use rtgauge_core::units::format_duration_ns;
use rtgauge_result::{Obtained, Series};
use rtgauge_stats::{Recorder, DEFAULT_INTERVAL_NS};
use std::cell::UnsafeCell;
use std::collections::BTreeMap;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Barrier;

/// How often a thread blocked on another checks whether the run has ended.
const SLICE_NS: u64 = 100_000_000;

/// A process-private pthread mutex, heap-allocated so it never moves once initialised.
struct Mutex {
    inner: Box<UnsafeCell<libc::pthread_mutex_t>>,
}

// SAFETY: a pthread mutex is made to be shared between threads; all access goes through
// the pthread functions.
unsafe impl Send for Mutex {}
unsafe impl Sync for Mutex {}

impl Mutex {
    fn new(inherit: bool) -> io::Result<Mutex> {
        // SAFETY: the attribute and the mutex are initialised before use, the attribute
        // destroyed after; the mutex lives in a Box that is never moved out of.
        unsafe {
            let mut attr: libc::pthread_mutexattr_t = std::mem::zeroed();
            let rc = libc::pthread_mutexattr_init(&mut attr);
            if rc != 0 {
                return Err(io::Error::from_raw_os_error(rc));
            }
            let protocol = if inherit {
                libc::PTHREAD_PRIO_INHERIT
            } else {
                libc::PTHREAD_PRIO_NONE
            };
            let rc = libc::pthread_mutexattr_setprotocol(&mut attr, protocol);
            let inner = Box::new(UnsafeCell::new(std::mem::zeroed()));
            let rc = if rc == 0 {
                libc::pthread_mutex_init(inner.get(), &attr)
            } else {
                rc
            };
            libc::pthread_mutexattr_destroy(&mut attr);
            if rc != 0 {
                return Err(io::Error::from_raw_os_error(rc));
            }
            Ok(Mutex { inner })
        }
    }

    fn ptr(&self) -> *mut libc::pthread_mutex_t {
        self.inner.get()
    }

    /// Locks it; false when the run ended first.
    fn lock(&self, end: &End) -> bool {
        // SAFETY: initialised in new(); the caller unlocks what it locked.
        unsafe {
            if libc::pthread_mutex_trylock(self.ptr()) == 0 {
                return true;
            }
            loop {
                if end.reached(now_ns()) {
                    return false;
                }
                let mut now: libc::timespec = std::mem::zeroed();
                libc::clock_gettime(libc::CLOCK_REALTIME, &mut now);
                let until = timespec(timespec_ns(&now) + SLICE_NS);
                if libc::pthread_mutex_timedlock(self.ptr(), &until) == 0 {
                    return true;
                }
            }
        }
    }

    fn unlock(&self) {
        // SAFETY: only called by the holder.
        unsafe { libc::pthread_mutex_unlock(self.ptr()) };
    }
}

impl Drop for Mutex {
    fn drop(&mut self) {
        // SAFETY: no thread holds or waits for it any more.
        unsafe { libc::pthread_mutex_destroy(self.ptr()) };
    }
}

fn timespec(ns: u64) -> libc::timespec {
    libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    }
}

fn timespec_ns(t: &libc::timespec) -> u64 {
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// A condition variable timed on CLOCK_MONOTONIC, with a mutex of its own (what suspend,
/// resume and barriers wait with).
struct Cond {
    inner: Box<UnsafeCell<libc::pthread_cond_t>>,
    own: Mutex,
}

// SAFETY: as for Mutex.
unsafe impl Send for Cond {}
unsafe impl Sync for Cond {}

impl Cond {
    fn new(inherit: bool) -> io::Result<Cond> {
        // SAFETY: as in Mutex::new.
        unsafe {
            let mut attr: libc::pthread_condattr_t = std::mem::zeroed();
            let rc = libc::pthread_condattr_init(&mut attr);
            if rc != 0 {
                return Err(io::Error::from_raw_os_error(rc));
            }
            let rc = libc::pthread_condattr_setclock(&mut attr, libc::CLOCK_MONOTONIC);
            let inner = Box::new(UnsafeCell::new(std::mem::zeroed()));
            let rc = if rc == 0 {
                libc::pthread_cond_init(inner.get(), &attr)
            } else {
                rc
            };
            libc::pthread_condattr_destroy(&mut attr);
            if rc != 0 {
                return Err(io::Error::from_raw_os_error(rc));
            }
            Ok(Cond {
                inner,
                own: Mutex::new(inherit)?,
            })
        }
    }

    /// Waits with `mutex` (held by the caller) until signalled: true, or false when the run
    /// ended first (the mutex is held again either way).
    fn wait(&self, mutex: *mut libc::pthread_mutex_t, end: &End) -> bool {
        loop {
            let now = now_ns();
            if end.reached(now) {
                return false;
            }
            let until = timespec(now.saturating_add(SLICE_NS).min(end.at));
            // SAFETY: both initialised; the caller holds `mutex`.
            let rc = unsafe { libc::pthread_cond_timedwait(self.inner.get(), mutex, &until) };
            if rc != libc::ETIMEDOUT {
                return true;
            }
        }
    }

    fn signal(&self) {
        // SAFETY: initialised in new().
        unsafe { libc::pthread_cond_signal(self.inner.get()) };
    }

    fn broadcast(&self) {
        // SAFETY: initialised in new().
        unsafe { libc::pthread_cond_broadcast(self.inner.get()) };
    }
}

impl Drop for Cond {
    fn drop(&mut self) {
        // SAFETY: no thread waits on it any more.
        unsafe { libc::pthread_cond_destroy(self.inner.get()) };
    }
}

/// When the run ends: its stop request, or the end of its duration.
struct End<'a> {
    at: u64,
    ctx: &'a ProbeContext<'a>,
}

impl End<'_> {
    #[inline]
    fn reached(&self, now: u64) -> bool {
        now >= self.at || self.ctx.stopped()
    }
}

/// The objects the tasks share, made before any runs.
pub(super) struct Shared {
    mutexes: Vec<Mutex>,
    conds: Vec<Cond>,
    /// Each barrier's condition and how many of its users are still to arrive.
    barriers: Vec<(Cond, AtomicUsize, usize)>,
    /// Each shared timer's next expiry (0: not started).
    timers: Vec<AtomicU64>,
    io: Option<std::fs::File>,
}

impl Shared {
    pub fn new(objects: &Objects, uses_io: bool) -> io::Result<Shared> {
        let pi = objects.priority_inheritance;
        Ok(Shared {
            mutexes: (0..objects.mutexes.len())
                .map(|_| Mutex::new(pi))
                .collect::<io::Result<_>>()?,
            conds: (0..objects.conds.len())
                .map(|_| Cond::new(pi))
                .collect::<io::Result<_>>()?,
            barriers: objects
                .barriers
                .iter()
                .map(|(_, users)| {
                    Ok((
                        Cond::new(pi)?,
                        AtomicUsize::new(users.saturating_sub(1)),
                        *users,
                    ))
                })
                .collect::<io::Result<_>>()?,
            timers: objects.timers.iter().map(|_| AtomicU64::new(0)).collect(),
            io: match uses_io {
                true => Some(
                    std::fs::OpenOptions::new()
                        .write(true)
                        .open(&objects.io_device)?,
                ),
                false => None,
            },
        })
    }
}

/// What one thread of an rt-app task measured in one of its phases, per pass through it.
pub(super) struct PhaseRun {
    /// Start to end of each pass.
    pub period: Recorder,
    /// The time the pass's run and runtime events took.
    pub run: Recorder,
    /// The wake-up latency of the pass's timers (summed when it has several), for passes
    /// whose timer slept.
    pub wakeup: Recorder,
    /// From the end of the pass's events to its last timer's expiry (rt-app's slack), for
    /// passes whose timer slept.
    pub slack: Recorder,
    pub passes: u64,
    /// Timers reached after their expiry (rt-app's negative slack).
    pub timers_late: u64,
    /// Passes in the warm-up too.
    pub all_passes: u64,
    /// Passes begun, finished or not.
    pub begun: u64,
}

impl PhaseRun {
    fn new() -> PhaseRun {
        PhaseRun {
            period: Recorder::new(DEFAULT_INTERVAL_NS),
            run: Recorder::new(DEFAULT_INTERVAL_NS),
            wakeup: Recorder::new(DEFAULT_INTERVAL_NS),
            slack: Recorder::new(DEFAULT_INTERVAL_NS),
            passes: 0,
            timers_late: 0,
            all_passes: 0,
            begun: 0,
        }
    }
}

/// What one thread of an rt-app task measured.
pub(super) struct ProgramRun {
    /// Per phase, in the task's order.
    pub phases: Vec<PhaseRun>,
    pub forks: u64,
    pub measured_ns: u64,
    /// Whether the task ran all its loops (rather than being stopped by the run's end).
    pub finished: bool,
    /// Whether the run ended while the thread waited for another (lock, wait, barrier,
    /// suspend): with no pass measured by any thread, the set blocked for good.
    pub waiting_at_end: bool,
}

/// Why a set of rt-app tasks measured nothing, when the reason is that every thread waited
/// for another until the run ended (`only_programs`: no periodic task of the set measured
/// either). rt-app's `suspend` and condition-variable `wait` lose a `resume` or `signal`
/// sent before them, as here, so a set can block for good.
pub(super) fn blocked_for_good<O>(
    runs: &[(usize, O, ProgramRun)],
    only_programs: bool,
) -> Option<String> {
    let measured = runs
        .iter()
        .any(|(_, _, r)| r.phases.iter().any(|p| p.passes > 0));
    let all_waiting = runs.iter().all(|(_, _, r)| r.waiting_at_end);
    (only_programs && !runs.is_empty() && !measured && all_waiting).then(|| {
        format!(
            "no pass was measured: all {} threads were waiting for one another (lock, wait, barrier or suspend) until the run ended. A resume or signal sent before its suspend or wait is lost, in rt-app as here; check the order of the tasks' events, or run it again",
            runs.len()
        )
    })
}

/// Everything the threads of rt-app tasks share.
pub(super) struct Engine<'a> {
    pub ctx: &'a ProbeContext<'a>,
    pub tasks: &'a [ProgramTask],
    pub shared: &'a Shared,
    pub calibration: &'a BTreeMap<usize, f64>,
}

impl<'a> Engine<'a> {
    /// Puts the calling thread in task `i`'s policy, priority, nice value and CPU; returns
    /// what it obtained and the busy loop's cost per iteration where it runs.
    pub fn enter(&self, i: usize) -> Result<(Obtained, f64), ProbeError> {
        let t = &self.tasks[i];
        let mut mode = super::thread_mode(self.ctx.mode, t.policy, t.priority, t.reservation);
        if t.cpu.is_none() {
            mode.pin = false;
        }
        let mut obtained = match rtgauge_core::rt::enter_thread(&mode, t.cpu, self.ctx.best_effort)
        {
            Ok(o) => o,
            Err(e) => match t.reservation {
                // The reservation is the file's: say so in its terms.
                Some((runtime, deadline, period)) => {
                    return Err(ProbeError::Invalid {
                        probe: super::PROBE,
                        message: format!(
                            "task {}: the kernel refused its SCHED_DEADLINE reservation (dl-runtime {}, dl-deadline {}, dl-period {}): the deadline tasks need more than the real-time bandwidth leaves (kernel.sched_rt_runtime_us of each sched_rt_period_us, on every CPU); lower dl-runtime or lengthen dl-period ({e})",
                            t.name,
                            format_duration_ns(runtime),
                            format_duration_ns(deadline),
                            format_duration_ns(period)
                        ),
                    })
                }
                None => return Err(e.into()),
            },
        };
        if t.nice != 0 && self.ctx.mode.policy.is_realtime() {
            // SAFETY: plain system calls on the calling thread.
            let rc = unsafe {
                let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
                libc::setpriority(libc::PRIO_PROCESS, tid, t.nice)
            };
            if rc != 0 {
                obtained.shortfalls.push(format!(
                    "task {}: nice {} refused ({})",
                    t.name,
                    t.nice,
                    io::Error::last_os_error()
                ));
            }
        }
        let ns_per_iteration = t
            .cpu
            .and_then(|c| self.calibration.get(&c).copied())
            .unwrap_or_else(super::calibrate_spin);
        Ok((obtained, ns_per_iteration))
    }

    /// Runs task `i` from `start` (its delay after) until its loops are done or the run
    /// ends at `end_at`; passes from `measure_start` on are recorded.
    #[allow(clippy::too_many_arguments)]
    pub fn run<'s, 'e>(
        &'e self,
        scope: &'s std::thread::Scope<'s, 'e>,
        i: usize,
        ns_per_iteration: f64,
        start: u64,
        measure_start: u64,
        end_at: u64,
    ) -> ProgramRun
    where
        'a: 'e,
    {
        let t = &self.tasks[i];
        let end = End {
            at: end_at,
            ctx: self.ctx,
        };
        let mut run = ProgramRun {
            phases: t.phases.iter().map(|_| PhaseRun::new()).collect(),
            forks: 0,
            measured_ns: 0,
            finished: false,
            waiting_at_end: false,
        };
        let mut own_timers = vec![0u64; t.own_timers];
        let mut held = vec![false; self.shared.mutexes.len()];
        let mut buffer = vec![1u8; t.buffer_bytes];
        let chunk = super::iterations_for(super::WORK_CHUNK_NS, ns_per_iteration).max(1);
        let first = start + t.delay_ns;
        rtgauge_core::rt::prefault_stack();
        clock::sleep_until(first.min(end.at));
        let mut state = Pass {
            first,
            chunk,
            run_ns: 0,
            wakeup_ns: 0,
            slack_ns: 0,
            woke: false,
            late: false,
        };
        let mut task_loops = 0u64;
        let mut passes = 0u64;
        'run: while t.loops.is_none_or(|l| task_loops < l) {
            for (phase, measured) in t.phases.iter().zip(run.phases.iter_mut()) {
                for _ in 0..phase.loops {
                    let began = now_ns();
                    if end.reached(began) || self.ctx.budget.loops.is_some_and(|l| passes >= l) {
                        break 'run;
                    }
                    (state.run_ns, state.wakeup_ns, state.woke, state.late) = (0, 0, false, false);
                    measured.begun += 1;
                    for step in &phase.steps {
                        let going = self.step(
                            scope,
                            step,
                            &mut state,
                            &mut own_timers,
                            &mut held,
                            &mut buffer,
                            &mut run.forks,
                            &end,
                        );
                        if !going {
                            run.waiting_at_end = step.blocks();
                            break 'run;
                        }
                    }
                    let ended = now_ns();
                    measured.all_passes += 1;
                    if began >= measure_start {
                        let at = began - measure_start;
                        measured.period.record(ended - began, at);
                        measured.run.record(state.run_ns, at);
                        if state.woke {
                            measured.wakeup.record(state.wakeup_ns, at);
                            measured.slack.record(state.slack_ns, at);
                        }
                        measured.passes += 1;
                        measured.timers_late += u64::from(state.late);
                        passes += 1;
                        run.measured_ns = ended - measure_start;
                    }
                }
            }
            task_loops += 1;
            run.finished = t.loops.is_some_and(|l| task_loops >= l);
        }
        for (m, h) in self.shared.mutexes.iter().zip(&held) {
            if *h {
                m.unlock();
            }
        }
        run
    }

    /// One event; false when the run ended during it.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn step<'s, 'e>(
        &'e self,
        scope: &'s std::thread::Scope<'s, 'e>,
        step: &Step,
        pass: &mut Pass,
        own_timers: &mut [u64],
        held: &mut [bool],
        buffer: &mut [u8],
        forks: &mut u64,
        end: &End,
    ) -> bool
    where
        'a: 'e,
    {
        let sh = self.shared;
        match *step {
            // Busy in calibrated chunks until the thread has had `ns` of CPU time (run) or
            // `ns` have passed (runtime), or the run ends (RT throttling can stretch a long
            // run far past it).
            Step::Run(ns) | Step::Runtime(ns) => {
                let cpu_time = matches!(step, Step::Run(_));
                let a = now_ns();
                let cpu_a = rtgauge_os::clock::thread_cpu_ns();
                loop {
                    let now = now_ns();
                    let had = match cpu_time {
                        true => rtgauge_os::clock::thread_cpu_ns() - cpu_a,
                        false => now - a,
                    };
                    if had >= ns {
                        pass.run_ns += now - a;
                        break;
                    }
                    if end.reached(now) {
                        return false;
                    }
                    super::spin(pass.chunk);
                }
            }
            Step::Sleep(ns) => {
                let until = now_ns().saturating_add(ns);
                clock::sleep_until(until.min(end.at));
                return !end.reached(until.min(end.at));
            }
            Step::Timer {
                timer,
                period_ns,
                absolute,
            } => {
                let next = match timer {
                    TimerRef::Own(k) => {
                        if own_timers[k] == 0 {
                            own_timers[k] = pass.first;
                        }
                        own_timers[k] += period_ns;
                        own_timers[k]
                    }
                    TimerRef::Shared(k) => {
                        let _ = sh.timers[k].compare_exchange(
                            0,
                            pass.first,
                            Ordering::AcqRel,
                            Ordering::Acquire,
                        );
                        sh.timers[k].fetch_add(period_ns, Ordering::AcqRel) + period_ns
                    }
                };
                let now = now_ns();
                if now < next {
                    if next > end.at {
                        clock::sleep_until(end.at);
                        return false;
                    }
                    pass.slack_ns = next - now;
                    clock::sleep_until(next);
                    pass.wakeup_ns += now_ns().saturating_sub(next);
                    pass.woke = true;
                } else {
                    pass.late = true;
                    if !absolute {
                        match timer {
                            TimerRef::Own(k) => own_timers[k] = now,
                            TimerRef::Shared(k) => sh.timers[k].store(now, Ordering::Release),
                        }
                    }
                }
            }
            Step::Lock(m) => {
                if !held[m] {
                    if !sh.mutexes[m].lock(end) {
                        return false;
                    }
                    held[m] = true;
                }
            }
            Step::Unlock(m) => {
                if held[m] {
                    sh.mutexes[m].unlock();
                    held[m] = false;
                }
            }
            Step::Wait { cond, mutex } | Step::Sync { cond, mutex } => {
                // rt-app waits with the mutex a `lock` event took; without one, it is
                // taken for the wait alone.
                let took = !held[mutex];
                if took && !sh.mutexes[mutex].lock(end) {
                    return false;
                }
                if matches!(step, Step::Sync { .. }) {
                    sh.conds[cond].signal();
                }
                let woken = sh.conds[cond].wait(sh.mutexes[mutex].ptr(), end);
                if took {
                    sh.mutexes[mutex].unlock();
                }
                return woken;
            }
            Step::Signal(c) => sh.conds[c].signal(),
            Step::Broad(c) => sh.conds[c].broadcast(),
            Step::Barrier(b) => {
                let (cond, waiting, _) = &sh.barriers[b];
                if !cond.own.lock(end) {
                    return false;
                }
                let mut woken = true;
                if waiting.load(Ordering::Acquire) == 0 {
                    cond.broadcast();
                } else {
                    waiting.fetch_sub(1, Ordering::AcqRel);
                    woken = cond.wait(cond.own.ptr(), end);
                    waiting.fetch_add(1, Ordering::AcqRel);
                }
                cond.own.unlock();
                return woken;
            }
            Step::Suspend(c) => {
                let cond = &sh.conds[c];
                if !cond.own.lock(end) {
                    return false;
                }
                let woken = cond.wait(cond.own.ptr(), end);
                cond.own.unlock();
                return woken;
            }
            Step::Resume(c) => {
                let cond = &sh.conds[c];
                if !cond.own.lock(end) {
                    return false;
                }
                cond.broadcast();
                cond.own.unlock();
            }
            Step::Yield => {
                // SAFETY: a plain system call.
                unsafe { libc::sched_yield() };
            }
            Step::Mem(bytes) => {
                let mut left = bytes as usize;
                while left > 0 && !buffer.is_empty() {
                    let n = left.min(buffer.len());
                    buffer[..n].fill(std::hint::black_box(0));
                    left -= n;
                }
            }
            Step::IoRun(bytes) => {
                let mut left = bytes as usize;
                if let Some(mut io) = sh.io.as_ref() {
                    while left > 0 && !buffer.is_empty() {
                        match io.write(&buffer[..left.min(buffer.len())]) {
                            Ok(n) if n > 0 => left -= n,
                            _ => break,
                        }
                    }
                }
            }
            Step::Fork(target) => {
                if (*forks as usize) < super::rtapp::FORKS_LIMIT {
                    *forks += 1;
                    self.fork(scope, target, end.at);
                }
            }
        }
        true
    }

    /// Starts a thread running task `target` now (rt-app's fork), measured by no one.
    fn fork<'s, 'e>(&'e self, scope: &'s std::thread::Scope<'s, 'e>, target: usize, end_at: u64)
    where
        'a: 'e,
    {
        let spawned = std::thread::Builder::new()
            .name(super::thread_names([self.tasks[target].name.as_str()])[0].clone())
            .spawn_scoped(scope, move || {
                if let Ok((_, ns_per_iteration)) = self.enter(target) {
                    let now = now_ns();
                    self.run(scope, target, ns_per_iteration, now, u64::MAX, end_at);
                }
            });
        // A thread the system cannot start is a fork that did not happen (rt-app stops).
        drop(spawned);
    }
}

/// What a pass through a phase gathers as its events run.
struct Pass {
    /// The thread's first release: where its timers start.
    first: u64,
    chunk: u64,
    run_ns: u64,
    wakeup_ns: u64,
    /// Before its last timer slept.
    slack_ns: u64,
    woke: bool,
    late: bool,
}

/// What the threads of a run share to start together: both barriers, whether a thread
/// failed to start, and the first release.
type Together<'e> = (&'e Barrier, &'e Barrier, &'e AtomicBool, &'e AtomicU64);

/// Starts the thread of rt-app task `k`, in step with the run's other task threads.
pub(super) fn spawn<'s, 'e, 'a: 'e>(
    scope: &'s std::thread::Scope<'s, 'e>,
    engine: &'e Engine<'a>,
    k: usize,
    name: String,
    (ready, go, failed, start_at): Together<'e>,
) -> std::thread::ScopedJoinHandle<'s, Result<(Obtained, Option<ProgramRun>), ProbeError>> {
    let ctx = engine.ctx;
    std::thread::Builder::new()
        .name(name)
        .spawn_scoped(scope, move || {
            let prepared = engine.enter(k);
            if prepared.is_err() {
                failed.store(true, Ordering::Release);
            }
            if ready.wait().is_leader() {
                start_at.store(now_ns() + 20_000_000, Ordering::Release);
            }
            go.wait();
            let (obtained, ns_per_iteration) = prepared?;
            if failed.load(Ordering::Acquire) {
                return Ok((obtained, None));
            }
            let start = start_at.load(Ordering::Acquire);
            let measure_start = start + ctx.warmup_ns;
            let end_at = ctx
                .budget
                .duration_ns
                .map_or(u64::MAX, |d| measure_start + d);
            let run = engine.run(scope, k, ns_per_iteration, start, measure_start, end_at);
            Ok((obtained, Some(run)))
        })
        .expect("spawning an rt-app task's thread")
}

/// An rt-app task's series, per pass through a phase as rt-app logs them: `period`,
/// `run`, `timer_wakeup` (its timers' wake-up latency) and `slack`, labelled `task=NAME`
/// (and `phase=NAME` when the task has several phases).
pub(super) fn series(t: &ProgramTask, run: &ProgramRun) -> Vec<Series> {
    let cpu = t.cpu.map_or("any".to_string(), |c| c.to_string());
    let mut series = Vec::new();
    for (p, (phase, m)) in t.phases.iter().zip(&run.phases).enumerate() {
        let labelled = |s: Series| {
            let s = s.label("task", &t.name).label("cpu", &cpu);
            match t.phases.len() {
                1 => s,
                _ => s.label("phase", &phase.name),
            }
        };
        series.push(labelled(
            Series::new("period", m.period.summary())
                .counter("passes", m.passes)
                .counter("timers_late", m.timers_late)
                .counter("passes_with_warmup", m.all_passes)
                .counter("passes_begun", m.begun)
                .counter("forks", if p == 0 { run.forks } else { 0 })
                .counter("finished", u64::from(run.finished)),
        ));
        series.push(labelled(Series::new("run", m.run.summary())));
        if m.wakeup.count() > 0 {
            series.push(labelled(Series::new("timer_wakeup", m.wakeup.summary())));
            series.push(labelled(Series::new("slack", m.slack.summary())));
        }
    }
    series
}

#[cfg(test)]
mod tests {
    use super::*;

    fn program_run(passes: u64, waiting_at_end: bool) -> (usize, (), ProgramRun) {
        let mut phase = PhaseRun::new();
        phase.passes = passes;
        let run = ProgramRun {
            phases: vec![phase],
            forks: 0,
            measured_ns: 0,
            finished: false,
            waiting_at_end,
        };
        (0, (), run)
    }

    /// Two threads that each resume the other then suspend, both suspended before any pass
    /// ended: said as such, not as a run too short for one period.
    #[test]
    fn a_set_whose_threads_all_wait_for_one_another_is_said_to_block_for_good() {
        let stuck = [program_run(0, true), program_run(0, true)];
        let message = blocked_for_good(&stuck, true).unwrap();
        assert!(message.contains("all 2 threads were waiting"), "{message}");
        // Not when a pass was measured, a thread was not waiting, or a periodic task ran.
        assert!(blocked_for_good(&[program_run(1, true), program_run(0, true)], true).is_none());
        assert!(blocked_for_good(&[program_run(0, false), program_run(0, true)], true).is_none());
        assert!(blocked_for_good(&stuck, false).is_none());
        assert!(blocked_for_good::<()>(&[], true).is_none());
    }
}
