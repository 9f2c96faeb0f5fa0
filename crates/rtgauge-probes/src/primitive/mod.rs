//! `primitive`: execution time of single calls, each as a distribution (Arm et al. 2016 §4.4 and
//! tables 13–16: `rt_sem_signal`, `rt_mbx_send`; Moryc: pipe and shared-memory write and
//! read).
//!
//! Operations (`ops`, default all): `sem_post` (no waiter), `sem_wait` (a unit available),
//! `mutex_lock`/`mutex_unlock` (uncontended pthread mutex), `pi_mutex_lock`/`pi_mutex_unlock`
//! (PTHREAD_PRIO_INHERIT), `mq_send`/`mq_receive` (POSIX message queue, the seeds' mailbox),
//! `pipe_write`/`pipe_read`, `fifo_write`/`fifo_read` (named FIFO in a private temporary
//! directory), `shm_write`/`shm_read` (memcpy into / out of POSIX shared memory of each
//! `shm-size`), `eventfd_write`/`eventfd_read`, `futex_wake` (no waiter), `setschedparam`
//! and `sched_setattr` (the thread's priority changed p → p−1 → p …; a SCHED_OTHER thread
//! changes its nice value instead, and the `via` label says which call and values were used).
//!
//! Calls that undo each other are measured as a pair so the state stays balanced: post then
//! wait, lock then unlock, write then read; each call is timed on its own and is its own
//! series. Selecting one call of a pair still makes the other (it must happen), but only the
//! selected ones are reported.
//!
//! Two methods, as Arm et al. (2016) do, each its own series (label `method`):
//! - `per-call`: read the clock, make one call, read the clock. The sample is the difference
//!   minus the calibrated cost of one clock read (`Calibration::read_cost_median_ns`,
//!   saturating at 0); the amount subtracted is in `counters["clock_cost_subtracted_ns"]`.
//!   A pair is timed with three reads (t0, first, t1, second, t2), so each difference holds
//!   exactly one clock read.
//! - `batched`: time `batch` calls in a row (then the `batch` undoing calls). The sample is the
//!   batch total (with the one clock read subtracted as well) and `Series::batch` holds the
//!   number of calls, so the per-call time is value / batch. A message queue, pipe or FIFO
//!   can hold only so many messages: when its limit is below `batch` the batch shrinks to
//!   fit, `Series::batch` says by how much, and a warning tells which limit to raise.
//!
//! Budget: one thread, pinned to the first measured CPU and entered into the mode, measures
//! every selected operation in turn. A duration is split evenly over all (operation pair ×
//! method) phases; a loop count is the number of samples of every series (a batched sample is
//! `batch` calls). The warm-up is split the same way: every phase first runs its own loop for
//! its share of the warm-up and discards it. The two methods take turns in slices of 20 ms, so
//! both see the same machine; in a real-time mode the thread sleeps 2 ms after each slice
//! (outside every timed interval, counted in `counters["rests"]`) so RT throttling never
//! stops it inside a sample and the CPU's kernel threads still run.
//!
//! An operation that cannot run here (no message queues, priority changes not permitted…)
//! appears as series with no samples and a `skipped` label holding the reason, and as a
//! warning; never as zeros.

mod ops;

use ops::{
    Calls, Channel, ChannelKind, EventFd, FutexWake, MessageQueue, Mutexes, SchedSetattr,
    Semaphore, SetSchedParam, SharedMemory,
};
use rtgauge_core::clock::now_ns;
use rtgauge_core::live::LiveCell;
use rtgauge_core::probe::{
    About, Budget, ParamSpec, Params, ProbeConfig, ProbeContext, ProbeError, ProbeOutput,
    TypedProbe,
};
use rtgauge_core::threads::{on_first_cpu, split};
use rtgauge_core::units::{
    format_duration_exact, format_size, format_size_exact, format_size_list,
};
use rtgauge_result::{Series, Summary};
use rtgauge_stats::{Recorder, DEFAULT_INTERVAL_NS};
use std::collections::BTreeMap;

/// Every operation, in the order they are measured and reported.
pub const OPERATIONS: [&str; 19] = [
    "sem_post",
    "sem_wait",
    "mutex_lock",
    "mutex_unlock",
    "pi_mutex_lock",
    "pi_mutex_unlock",
    "mq_send",
    "mq_receive",
    "pipe_write",
    "pipe_read",
    "fifo_write",
    "fifo_read",
    "shm_write",
    "shm_read",
    "eventfd_write",
    "eventfd_read",
    "futex_wake",
    "setschedparam",
    "sched_setattr",
];
pub const DEFAULT_BATCH: u64 = 100;
/// Largest batch: a batch of mutexes is `batch` distinct mutexes, and a batch larger than
/// this only hides the per-call spread the probe exists to show.
pub const MAX_BATCH: u64 = 10_000;
pub const DEFAULT_SHM_SIZE: &str = "4KiB";
/// Largest shared-memory size: three buffers of it are allocated and touched.
pub const MAX_SHM_SIZE: u64 = 256 << 20;
/// Message size of `mq_send`, pipe and FIFO writes: one machine word by default, like an
/// eventfd increment, so the calls compare; at most PIPE_BUF, so pipe writes stay atomic.
pub const DEFAULT_MSG_SIZE: u64 = 8;
pub const MAX_MSG_SIZE: u64 = 4096;
const DESCRIPTION: &str =
    "execution time of single calls (semaphore, mutex, message queue, pipe, FIFO, shared memory, eventfd, futex, priority change), per call and batched";
const ABOUT: About = About::new(crate::names::PRIMITIVE, DESCRIPTION, &PARAMS);
const PARAMS: [ParamSpec; 4] = [
    ParamSpec::new("ops", "all", "calls to time: sem_post, sem_wait, mutex_lock, mutex_unlock, pi_mutex_lock, pi_mutex_unlock, mq_send, mq_receive, pipe_write, pipe_read, fifo_write, fifo_read, shm_write, shm_read, eventfd_write, eventfd_read, futex_wake, setschedparam, sched_setattr; a list or all"),
    ParamSpec::new("batch", "100", "calls timed together for the batched method (at most 10000; message queues use what fits)"),
    ParamSpec::new("shm-size", "4KiB", "bytes copied by shm_write and shm_read; a size or a list of sizes, e.g. 4KiB,64KiB"),
    ParamSpec::new("msg-size", "8B", "bytes per mq_send, pipe and FIFO write, at most 4KiB (PIPE_BUF)"),
];

const PER_CALL: &str = "per-call";
const BATCHED: &str = "batched";

pub struct Primitive;

impl TypedProbe for Primitive {
    const ABOUT: About = ABOUT;
    type Config = Config;

    fn measure(&self, ctx: &ProbeContext, cfg: &mut Config) -> Result<ProbeOutput, ProbeError> {
        let units = units(cfg);
        let (obtained, results) =
            on_first_cpu("primitive", ctx, |_, _| measure_all(ctx, cfg, &units))?;
        build_output(ctx, cfg, obtained, results)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    ops: Vec<String>,
    batch: u64,
    shm_sizes: Vec<u64>,
    msg_size: u64,
}

fn invalid(message: String) -> ProbeError {
    ProbeError::Invalid {
        probe: "primitive",
        message,
    }
}

fn config(params: &Params) -> Result<Config, ProbeError> {
    let ops = params.choices("ops", "all", &OPERATIONS)?;
    if ops.is_empty() {
        return Err(invalid(format!(
            "parameter ops is empty; accepted: {}, or all",
            OPERATIONS.join(", ")
        )));
    }
    let batch = params.count("batch", DEFAULT_BATCH)?;
    if batch > MAX_BATCH {
        return Err(invalid(format!(
            "parameter batch: {batch} is more than the maximum {MAX_BATCH}; use e.g. batch=100"
        )));
    }
    let shm_sizes = params.sizes("shm-size", DEFAULT_SHM_SIZE)?;
    if shm_sizes.is_empty() {
        return Err(invalid(
            "parameter shm-size is empty; give a size such as 4KiB or a list such as 4KiB,64KiB"
                .into(),
        ));
    }
    if let Some(&big) = shm_sizes.iter().find(|&&s| s > MAX_SHM_SIZE) {
        return Err(invalid(format!(
            "parameter shm-size: {} is more than the maximum {}",
            format_size(big),
            format_size(MAX_SHM_SIZE)
        )));
    }
    let msg_size = params.size("msg-size", DEFAULT_MSG_SIZE)?;
    if msg_size > MAX_MSG_SIZE {
        return Err(invalid(format!(
            "parameter msg-size: {} is more than the maximum {} (PIPE_BUF, above which pipe writes are not atomic)",
            format_size(msg_size),
            format_size(MAX_MSG_SIZE)
        )));
    }
    Ok(Config {
        ops,
        batch,
        shm_sizes,
        msg_size,
    })
}

/// One group of calls measured together (a pair, or a single call), as it will be built on
/// the measuring thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unit {
    Semaphore,
    Mutex,
    PiMutex,
    MessageQueue,
    Pipe,
    Fifo,
    SharedMemory(u64),
    EventFd,
    FutexWake,
    SetSchedParam,
    SchedSetattr,
}

impl Unit {
    fn names(self) -> &'static [&'static str] {
        match self {
            Unit::Semaphore => &["sem_post", "sem_wait"],
            Unit::Mutex => &["mutex_lock", "mutex_unlock"],
            Unit::PiMutex => &["pi_mutex_lock", "pi_mutex_unlock"],
            Unit::MessageQueue => &["mq_send", "mq_receive"],
            Unit::Pipe => &["pipe_write", "pipe_read"],
            Unit::Fifo => &["fifo_write", "fifo_read"],
            Unit::SharedMemory(_) => &["shm_write", "shm_read"],
            Unit::EventFd => &["eventfd_write", "eventfd_read"],
            Unit::FutexWake => &["futex_wake"],
            Unit::SetSchedParam => &["setschedparam"],
            Unit::SchedSetattr => &["sched_setattr"],
        }
    }

    /// Labels a skipped unit still carries, so its series line up with measured ones.
    fn labels(self) -> Vec<(&'static str, String)> {
        match self {
            Unit::SharedMemory(size) => vec![("size", format_size_exact(size))],
            _ => Vec::new(),
        }
    }
}

/// The units needed for the selected operations, in catalogue order.
fn units(cfg: &Config) -> Vec<Unit> {
    let mut all = vec![
        Unit::Semaphore,
        Unit::Mutex,
        Unit::PiMutex,
        Unit::MessageQueue,
        Unit::Pipe,
        Unit::Fifo,
    ];
    all.extend(cfg.shm_sizes.iter().map(|&s| Unit::SharedMemory(s)));
    all.extend([
        Unit::EventFd,
        Unit::FutexWake,
        Unit::SetSchedParam,
        Unit::SchedSetattr,
    ]);
    all.into_iter()
        .filter(|u| u.names().iter().any(|n| cfg.ops.iter().any(|o| o == n)))
        .collect()
}

impl ProbeConfig for Config {
    fn parse(params: &Params) -> Result<Config, ProbeError> {
        config(params)
    }

    fn resolved(&self) -> BTreeMap<String, String> {
        BTreeMap::from([
            ("ops".into(), self.ops.join(",")),
            ("batch".into(), self.batch.to_string()),
            ("shm-size".into(), format_size_list(&self.shm_sizes)),
            ("msg-size".into(), format_size_exact(self.msg_size)),
        ])
    }
}

/// What one unit produced: its measured series, or why it could not run.
struct UnitResult {
    unit: Unit,
    outcome: Result<Measured, String>,
}

struct Measured {
    names: [&'static str; 2],
    paired: bool,
    labels: Vec<(&'static str, String)>,
    per_call: Done,
    batched: Done,
    batch: u64,
    /// Rests taken between slices (real-time modes only).
    rests: u64,
}

/// Samples of one method: one recorder per call of the unit.
struct Timing {
    recorders: [Recorder; 2],
    failed: [u64; 2],
    /// Samples taken so far (a batched sample is one batch).
    samples: u64,
    /// Time spent in this method's measuring slices.
    measured_ns: u64,
}

impl Timing {
    /// Counts one measuring slice (after it, outside the timed loop).
    fn add_slice(&mut self, failed: [u64; 2], samples: u64, measured_ns: u64) {
        self.failed[0] += failed[0];
        self.failed[1] += failed[1];
        self.samples += samples;
        self.measured_ns += measured_ns;
    }
}

/// A method's statistics once measured; the recorders (a few hundred KiB each) are dropped
/// as soon as each unit is done.
struct Done {
    summaries: [Summary; 2],
    failed: [u64; 2],
    measured_ns: u64,
}

impl Timing {
    fn new() -> Timing {
        Timing {
            recorders: [
                Recorder::new(DEFAULT_INTERVAL_NS),
                Recorder::new(DEFAULT_INTERVAL_NS),
            ],
            failed: [0, 0],
            samples: 0,
            measured_ns: 0,
        }
    }

    /// Whether this method has used its share of the budget.
    fn done(&self, phase: &Phase) -> bool {
        phase
            .budget
            .duration_ns
            .is_some_and(|d| self.measured_ns >= d)
            || phase.budget.loops.is_some_and(|l| self.samples >= l)
    }

    /// The next slice: until `SLICE_NS` from now or the end of the share, whichever first,
    /// and no more samples than the loop budget has left.
    fn next_slice(&self, phase: &Phase, now: u64) -> (u64, u64) {
        let left = phase
            .budget
            .duration_ns
            .map_or(SLICE_NS, |d| d.saturating_sub(self.measured_ns));
        let max_samples = phase
            .budget
            .loops
            .map_or(u64::MAX, |l| l.saturating_sub(self.samples));
        (now + left.min(SLICE_NS), max_samples)
    }

    fn finish(self) -> Done {
        Done {
            summaries: [self.recorders[0].summary(), self.recorders[1].summary()],
            failed: self.failed,
            measured_ns: self.measured_ns,
        }
    }
}

/// The two methods take turns in slices of this length, so a change of the machine's state
/// during the run (a load starting, a noisy neighbour VM, frequency) affects both alike and
/// their comparison stays fair; a slice holds thousands of samples, so the switch costs
/// nothing measurable.
const SLICE_NS: u64 = 20_000_000;
/// Sleep of a real-time thread after every slice: 2 ms per 20 ms keeps it near 90 % of the CPU,
/// under the default RT throttling budget (95 %), and lets the CPU's kernel threads run.
const REST_NS: u64 = 2_000_000;

/// The share of the budget and warm-up of one method of one unit.
#[derive(Debug, Clone, Copy)]
struct Phase {
    budget: Budget,
    warmup_ns: u64,
    clock_cost_ns: u64,
}

fn measure_all(
    ctx: &ProbeContext,
    cfg: &Config,
    units: &[Unit],
) -> Result<Vec<UnitResult>, ProbeError> {
    // Each unit's two methods (per call, batched) share the budget evenly.
    let cell = split(ctx, units.len() * 2);
    let phase = Phase {
        budget: cell.budget,
        warmup_ns: cell.warmup_ns,
        clock_cost_ns: ctx.calibration.read_cost_median_ns,
    };
    let batch = cfg.batch as usize;
    let msg = cfg.msg_size as usize;
    let mut results = Vec::with_capacity(units.len());
    for &unit in units {
        if ctx.stopped() {
            break;
        }
        let outcome = match unit {
            Unit::Semaphore => measure_unit(ctx, phase, batch, Semaphore::new()),
            Unit::Mutex => measure_unit(ctx, phase, batch, Mutexes::new(batch, false)),
            Unit::PiMutex => measure_unit(ctx, phase, batch, Mutexes::new(batch, true)),
            Unit::MessageQueue => measure_unit(ctx, phase, batch, MessageQueue::new(batch, msg)),
            Unit::Pipe => measure_unit(
                ctx,
                phase,
                batch,
                Channel::new(ChannelKind::Pipe, batch, msg),
            ),
            Unit::Fifo => measure_unit(
                ctx,
                phase,
                batch,
                Channel::new(ChannelKind::Fifo, batch, msg),
            ),
            Unit::SharedMemory(size) => {
                measure_unit(ctx, phase, batch, SharedMemory::new(size as usize))
            }
            Unit::EventFd => measure_unit(ctx, phase, batch, EventFd::new()),
            Unit::FutexWake => measure_unit(ctx, phase, batch, Ok(FutexWake::new())),
            Unit::SetSchedParam => measure_unit(ctx, phase, batch, SetSchedParam::new()),
            Unit::SchedSetattr => measure_unit(ctx, phase, batch, SchedSetattr::new()),
        };
        results.push(UnitResult {
            unit,
            outcome: match outcome {
                Ok(m) => Ok(m),
                Err(ProbeError::Unavailable(reason)) => Err(reason),
                Err(e) => return Err(e),
            },
        });
    }
    Ok(results)
}

/// Measures one unit with both methods: each warms up for its share (discarded), then they
/// take turns in slices until both have used their budget. Generic so each operation's calls
/// are inlined into its own loops (no dynamic dispatch between the clock reads).
fn measure_unit<C: Calls>(
    ctx: &ProbeContext,
    phase: Phase,
    batch: usize,
    calls: Result<C, ProbeError>,
) -> Result<Measured, ProbeError> {
    let mut calls = calls?;
    let names = calls.names();
    let paired = calls.paired();
    let batch = batch.min(calls.capacity()).max(1);
    let mut per_call = Timing::new();
    let mut batched = Timing::new();
    let cells = [
        ctx.live.register(format!("{} {PER_CALL}", names[0])),
        ctx.live.register(format!("{} {BATCHED}", names[0])),
    ];
    let mut slice = Slice {
        until_ns: 0,
        max_samples: u64::MAX,
        origin_ns: 0,
        record: false,
        clock_cost_ns: phase.clock_cost_ns,
        stop: ctx.stop,
        live: &cells[0],
    };

    // A real-time thread rests between slices (outside every timed interval): a FIFO busy
    // loop would otherwise exhaust the RT throttling budget, whose 50 ms stop would land inside
    // a sample, and would starve the kernel's per-CPU threads.
    let rest = ctx.mode.policy.is_realtime();
    let mut rests = 0u64;
    let mut pause = || {
        if rest {
            rtgauge_core::clock::sleep_for(REST_NS);
            rests += 1;
        }
    };

    // Warm-up: caches, branch predictors and the kernel paths settle; nothing is kept.
    for (method, cell) in cells.iter().enumerate() {
        let end = now_ns() + phase.warmup_ns;
        slice.live = cell;
        while phase.warmup_ns > 0 && !ctx.stopped() {
            let now = now_ns();
            if now >= end {
                break;
            }
            slice.until_ns = end.min(now + SLICE_NS);
            if method == 0 {
                per_call_loop(&mut calls, paired, &slice, &mut per_call);
            } else {
                batched_loop(&mut calls, paired, batch, &slice, &mut batched);
            }
            pause();
        }
    }

    slice.record = true;
    slice.origin_ns = now_ns();
    while !ctx.stopped() {
        let pc_done = per_call.done(&phase);
        let b_done = batched.done(&phase);
        if pc_done && b_done {
            break;
        }
        if !pc_done {
            (slice.until_ns, slice.max_samples) = per_call.next_slice(&phase, now_ns());
            slice.live = &cells[0];
            per_call_loop(&mut calls, paired, &slice, &mut per_call);
            pause();
        }
        if !b_done {
            (slice.until_ns, slice.max_samples) = batched.next_slice(&phase, now_ns());
            slice.live = &cells[1];
            batched_loop(&mut calls, paired, batch, &slice, &mut batched);
            pause();
        }
    }
    let labels = calls.labels();
    Ok(Measured {
        names,
        paired,
        labels,
        per_call: per_call.finish(),
        batched: batched.finish(),
        batch: batch as u64,
        rests,
    })
}

/// What one run of a timing loop may do.
struct Slice<'a> {
    /// Stop at the first sample ending at or after this CLOCK_MONOTONIC time…
    until_ns: u64,
    /// …or after this many samples.
    max_samples: u64,
    /// `at_ns` of the samples counts from here (the start of the unit's measurement).
    origin_ns: u64,
    /// False during warm-up: the loop runs identically but keeps nothing.
    record: bool,
    clock_cost_ns: u64,
    stop: &'a std::sync::atomic::AtomicBool,
    live: &'a LiveCell,
}

impl Slice<'_> {
    #[inline(always)]
    fn over(&self, now_ns: u64, samples: u64) -> bool {
        now_ns >= self.until_ns
            || samples >= self.max_samples
            || self.stop.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// When recording, keeps one sample taken after the clock reads `t0`, `t1`, `t2`: the
    /// first side from t0 to t1, the second (when paired) from t1 to t2, each minus one clock
    /// read; the live display gets the first side's time per call (`calls` per side).
    #[inline(always)]
    fn keep(
        &self,
        recorders: &mut [Recorder; 2],
        paired: bool,
        [t0, t1, t2]: [u64; 3],
        calls: u64,
    ) {
        if self.record {
            let [first_side, second_side] = recorders;
            let first = (t1 - t0).saturating_sub(self.clock_cost_ns);
            first_side.record(first, t0 - self.origin_ns);
            if paired {
                let second = (t2 - t1).saturating_sub(self.clock_cost_ns);
                second_side.record(second, t1 - self.origin_ns);
            }
            self.live.publish(first / calls, 0);
        }
    }
}

/// Per call: t0, first, t1, second, t2; each difference minus one clock read.
#[inline(never)]
fn per_call_loop<C: Calls>(calls: &mut C, paired: bool, slice: &Slice, timing: &mut Timing) {
    let (mut failed_first, mut failed_second) = (0u64, 0u64);
    let mut samples = 0u64;
    let begin = now_ns();
    let end = loop {
        let t0 = now_ns();
        let ok_first = calls.first(0);
        let t1 = now_ns();
        let (ok_second, t2) = if paired {
            let ok = calls.second(0);
            (ok, now_ns())
        } else {
            (true, t1)
        };
        slice.keep(&mut timing.recorders, paired, [t0, t1, t2], 1);
        failed_first += (!ok_first) as u64;
        failed_second += (!ok_second) as u64;
        samples += 1;
        if slice.over(t2, samples) {
            break t2;
        }
    };
    if slice.record {
        timing.add_slice([failed_first, failed_second], samples, end - begin);
    }
}

/// Batched: t0, `batch` × first, t1, `batch` × second, t2; each total minus one clock read.
#[inline(never)]
fn batched_loop<C: Calls>(
    calls: &mut C,
    paired: bool,
    batch: usize,
    slice: &Slice,
    timing: &mut Timing,
) {
    let (mut failed_first, mut failed_second) = (0u64, 0u64);
    let mut samples = 0u64;
    let begin = now_ns();
    let end = loop {
        let t0 = now_ns();
        // while loops, not ranges: an unoptimised build would add an iterator call per
        // operation to the batch but not to the per-call samples.
        let mut i = 0;
        while i < batch {
            failed_first += (!calls.first(i)) as u64;
            i += 1;
        }
        let t1 = now_ns();
        let t2 = if paired {
            let mut i = 0;
            while i < batch {
                failed_second += (!calls.second(i)) as u64;
                i += 1;
            }
            now_ns()
        } else {
            t1
        };
        slice.keep(&mut timing.recorders, paired, [t0, t1, t2], batch as u64);
        samples += 1;
        if slice.over(t2, samples) {
            break t2;
        }
    };
    if slice.record {
        timing.add_slice([failed_first, failed_second], samples, end - begin);
    }
}

fn build_output(
    ctx: &ProbeContext,
    cfg: &Config,
    obtained: rtgauge_result::Obtained,
    results: Vec<UnitResult>,
) -> Result<ProbeOutput, ProbeError> {
    let mut out = ProbeOutput {
        obtained,
        ..ProbeOutput::default()
    };
    let selected = |name: &str| cfg.ops.iter().any(|o| o == name);
    let cost = ctx.calibration.read_cost_median_ns;
    let mut skipped = Vec::new();
    for r in &results {
        match &r.outcome {
            Err(reason) => {
                let names: Vec<&str> = r
                    .unit
                    .names()
                    .iter()
                    .copied()
                    .filter(|n| selected(n))
                    .collect();
                for name in &names {
                    for method in [PER_CALL, BATCHED] {
                        let mut s = Series::new(*name, Summary::default())
                            .label("method", method)
                            .label("skipped", reason);
                        for (k, v) in r.unit.labels() {
                            s = s.label(k, v);
                        }
                        out.series.push(s);
                    }
                }
                out.warnings
                    .push(format!("{} skipped: {reason}", names.join(", ")));
                skipped.push(reason.clone());
            }
            Ok(m) => {
                out.measured_ns += m.per_call.measured_ns + m.batched.measured_ns;
                let calls = if m.paired { 2 } else { 1 };
                for (i, name) in m.names.iter().take(calls).enumerate() {
                    if !selected(name) {
                        continue;
                    }
                    for (method, timing, batch) in
                        [(PER_CALL, &m.per_call, 1), (BATCHED, &m.batched, m.batch)]
                    {
                        let stats = timing.summaries[i].clone();
                        let calls = stats.count * batch;
                        let mut s = Series::new(*name, stats)
                            .label("method", method)
                            .counter("clock_cost_subtracted_ns", cost)
                            .counter("calls", calls)
                            .counter("failed_calls", timing.failed[i])
                            .counter("rests", m.rests);
                        s.batch = batch;
                        for (k, v) in &m.labels {
                            s = s.label(k, v);
                        }
                        if timing.failed[i] > 0 {
                            out.warnings.push(format!(
                                "{name} {method}: {} of {} calls failed; their times are in the distribution",
                                timing.failed[i], calls
                            ));
                        }
                        out.series.push(s);
                    }
                }
                if m.batch < cfg.batch {
                    out.warnings.push(format!(
                        "{}: batches of {} instead of {}: {}",
                        m.names[0],
                        m.batch,
                        cfg.batch,
                        capacity_hint(r.unit)
                    ));
                }
            }
        }
    }
    if !results.is_empty() && skipped.len() == results.len() {
        skipped.dedup();
        return Err(ProbeError::Unavailable(skipped.join("; ")));
    }
    out.params
        .insert("clock_cost_subtracted".into(), format_duration_exact(cost));
    Ok(out)
}

/// Which limit kept a batch small, and how to raise it.
fn capacity_hint(unit: Unit) -> &'static str {
    match unit {
        Unit::MessageQueue => "the message queue holds no more messages (raise /proc/sys/fs/mqueue/msg_max, or give the process CAP_SYS_RESOURCE)",
        Unit::Pipe | Unit::Fifo => "the pipe holds no more messages (raise /proc/sys/fs/pipe-max-size, or use a smaller msg-size)",
        _ => "the operation holds no more calls in a row",
    }
}

/// How this probe's runs read in the summary at the end of a run (and atop `show` and the
/// report): the renderer asks the probe, it knows no probe names.
mod summary_rows {
    use rtgauge_report::format::{per_op, TimeUnit};
    use rtgauge_report::summary::{fmt, Cells, SummaryRows};

    use rtgauge_result::{ProbeRun, RunResult, Series};

    impl SummaryRows for super::Primitive {
        fn probe(&self) -> &'static str {
            super::ABOUT.name
        }

        fn question(&self) -> &'static str {
            "slowest calls, per call"
        }

        fn columns(&self, _runs: &[&ProbeRun]) -> Vec<String> {
            vec!["median".into(), "p99".into(), "max".into()]
        }

        fn rows(&self, run: &ProbeRun, _runs: &[&ProbeRun], unit: TimeUnit) -> Vec<Cells> {
            primitive_rows(run, unit)
        }

        fn notes(&self, run: &ProbeRun, _result: &RunResult) -> Vec<String> {
            let calls = per_call(run).count();
            if calls > SLOWEST_CALLS {
                vec![format!(
                    "the {SLOWEST_CALLS} slowest of {calls} calls by median"
                )]
            } else {
                Vec::new()
            }
        }
    }

    /// Calls listed by the summary.
    const SLOWEST_CALLS: usize = 3;

    /// Series timed one call at a time (the batched ones amortise what a single call costs).
    fn per_call(run: &ProbeRun) -> impl Iterator<Item = &Series> {
        run.series
            .iter()
            .filter(|s| s.labels.get("method").is_none_or(|m| m == "per-call"))
    }

    fn primitive_rows(run: &ProbeRun, unit: TimeUnit) -> Vec<Cells> {
        let mut calls: Vec<&Series> = per_call(run).collect();
        calls.sort_by(|a, b| {
            let m = |s: &Series| per_op(s, s.stats.median_ns).unwrap_or(0.0);
            m(b).total_cmp(&m(a))
        });
        calls
            .into_iter()
            .take(SLOWEST_CALLS)
            .map(|s| {
                let label = match s.labels.get("size") {
                    Some(size) => format!("{} {size}", s.name),
                    None => s.name.clone(),
                };
                (
                    label,
                    vec![
                        fmt(unit, s, s.stats.median_ns),
                        fmt(unit, s, s.stats.percentiles.p99_ns),
                        fmt(unit, s, s.stats.max_ns),
                    ],
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_select_every_operation() {
        let cfg = config(&Params::of("primitive", &[])).unwrap();
        assert_eq!(cfg.ops.len(), OPERATIONS.len());
        assert_eq!(cfg.batch, DEFAULT_BATCH);
        assert_eq!(cfg.shm_sizes, vec![4096]);
        // Every operation belongs to exactly one unit.
        let units = units(&cfg);
        let mut named: Vec<&str> = units.iter().flat_map(|u| u.names().to_vec()).collect();
        named.sort_unstable();
        let mut all = OPERATIONS.to_vec();
        all.sort_unstable();
        assert_eq!(named, all);
    }

    #[test]
    fn bad_parameters_name_themselves() {
        for (key, value) in [
            ("ops", "bogus"),
            ("batch", "0"),
            ("batch", "1000000"),
            ("shm-size", "0"),
            ("shm-size", "1GiB"),
            ("msg-size", "0"),
            ("msg-size", "1MiB"),
        ] {
            let e = config(&Params::of("primitive", &[(key, value)]))
                .unwrap_err()
                .to_string();
            assert!(e.contains(key), "{key}={value}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
        let e = config(&Params::of("primitive", &[("ops", "bogus")]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("sem_post") && e.contains("sched_setattr"), "{e}");
    }

    #[test]
    fn selecting_one_call_measures_its_pair_once() {
        let cfg = config(&Params::of(
            "primitive",
            &[("ops", "pipe_read,shm_write"), ("shm-size", "4KiB,64KiB")],
        ))
        .unwrap();
        assert_eq!(
            units(&cfg),
            vec![
                Unit::Pipe,
                Unit::SharedMemory(4096),
                Unit::SharedMemory(65536)
            ]
        );
    }
}
