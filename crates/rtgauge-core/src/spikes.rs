//! Late wake-ups handed from the measuring loops to the kernel's trace (`--trace`, `--break`).
//!
//! # What the hot loop does
//! A measuring thread keeps one number, its *floor*, in a local variable, and per sample does
//! one compare it already needs no memory for: `if latency > floor`. Only a sample above the
//! floor (rare by construction) calls [`SpikeProducer::offer`], which stores the programmed
//! and actual wake-up into a preallocated single-producer ring (two relaxed stores and one
//! release store: no allocation, lock, system call or I/O) and returns the new floor.
//!
//! The floor is
//! - with `--trace-above LATENCY`: that latency (every sample above it is a candidate);
//! - without it: the thread's own running maximum, starting from the largest latency of its
//!   warm-up. Every new maximum is a candidate, so the run's maximum always is, and so is the
//!   first spike that stands out; for independent samples a new maximum comes about ln(n)
//!   times in n samples, so the reads stay few. (A p99.9 cannot be known before the run ends,
//!   and the trace buffer only holds about the last second, so the threshold cannot wait for
//!   it.)
//! - lowered to `--break LATENCY` when that is smaller.
//!
//! With a live board that exports interval maxima (`rtgauge monitor`), the running maximum
//! starts again from zero at each interval boundary, on the board's grid, so every interval's
//! maximum is a candidate (about ln(n) candidates in an interval of n samples):
//! [`SpikeProducer::floor_at`], one compare per sample, the reset in a cold function. (Not
//! from the warm-up's maximum: on a busy machine that is often above most intervals' maxima,
//! which would then go unexplained.)
//!
//! # Who reads the trace
//! A reader thread ([`read_spikes`]), pinned off the measured CPUs at SCHED_FIFO so it is not
//! preempted while recording is stopped, drains the rings every 20 ms, reads the windows of
//! the chosen candidates from the run's [`TraceSource`] (the flight recorder's windows, or one
//! tracefs read per CPU) and attributes them (margin 1 ms before the programmed wake-up). At
//! most `--trace-max` spikes are kept per probe run: the first candidate and the largest ones.
//! With a live board that exports, every candidate is attributed and its cause published on
//! the board as it comes ([`LiveBoard::publish_cause`]), for the monitor's interval maxima.
//!
//! # The flight recorder's watch
//! With the flight recorder, a timer-woken thread's producer also holds its CPU's watch slot:
//! [`SpikeProducer::next_wakeup`], once per period right after the wake-up, stores the next
//! programmed time there (one store to memory shared with the kernel), and the floor, less an
//! eighth, is the kernel's threshold, so the kernel keeps the window of a late wake-up.

use crate::live::{LiveBoard, SpikeCause};
use crate::trace_source::{KernelRecorder, SourceError, TraceSource};
use rtgauge_bpf::Watch;
use rtgauge_trace::{attribute_trace, Attribution, AttributionConfig, Cause, Spike};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// Events read before the programmed wake-up: enough to see what was running when the timer
/// should have fired (docs/trace.md).
pub const MARGIN_NS: u64 = 1_000_000;
/// Flag in a candidate's thread word: an event another thread fired woke the thread
/// (response), not a timer on its own CPU (cyclic); see [`AttributionConfig::woken_by_timer`].
const WOKEN_BY_EVENT: u64 = 1 << 63;
/// How long the reader collects candidates before one read for all of them.
const BATCH: Duration = Duration::from_millis(20);
/// Candidates a measuring thread can queue between two drains; more are counted as lost.
const SLOTS: usize = 64;
/// Spikes attributed per probe run unless `--trace-max` says otherwise.
pub const DEFAULT_MAX_SPIKES: u32 = 20;

/// What the user asked of spikes: `--trace`, `--trace-above`, `--trace-max`, `--break`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpikeSettings {
    /// Read the kernel's trace for late samples.
    pub trace: bool,
    /// `trace` is on because the run is long (not `--trace`): only the flight recorder,
    /// which costs little, is used; where it cannot load the run goes on without tracing.
    pub by_default: bool,
    /// Candidates are samples above this; `None`: every new maximum after the warm-up.
    pub above_ns: Option<u64>,
    /// Most spikes attributed per probe run.
    pub max_spikes: u32,
    /// Stop the run at the first sample above this.
    pub break_ns: Option<u64>,
}

impl Default for SpikeSettings {
    fn default() -> Self {
        SpikeSettings {
            trace: false,
            by_default: false,
            above_ns: None,
            max_spikes: DEFAULT_MAX_SPIKES,
            break_ns: None,
        }
    }
}

struct Ring {
    /// Candidates written so far; slot `i % SLOTS` holds candidate `i`.
    head: AtomicU64,
    programmed: [AtomicU64; SLOTS],
    woke: [AtomicU64; SLOTS],
    /// The measuring thread of each candidate, `cpu << 32 | tid` (+ [`WOKEN_BY_EVENT`]): per
    /// slot, because a probe
    /// that runs its thread several times (response: once per placement) takes a new
    /// producer of the same ring, possibly on another CPU, while candidates of the previous
    /// thread may still wait to be read.
    thread: [AtomicU64; SLOTS],
}

impl Ring {
    fn new() -> Ring {
        Ring {
            head: AtomicU64::new(0),
            programmed: std::array::from_fn(|_| AtomicU64::new(0)),
            woke: std::array::from_fn(|_| AtomicU64::new(0)),
            thread: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }
}

/// The candidates of one probe run: one ring per measuring thread, allocated before the
/// threads start.
pub struct SpikeTap<'r> {
    settings: SpikeSettings,
    rings: Vec<Ring>,
    broken: AtomicBool,
    on_break: fn(),
    /// The flight recorder, when it is the run's source: a timer-woken thread also tells the
    /// kernel its next wake-up, so the kernel keeps the window of a late one.
    kernel: Option<&'r KernelRecorder>,
    /// The live board (`rtgauge monitor`'s exporting one): its interval is the grid on which
    /// running maxima restart, and the reader publishes every candidate's cause on it.
    live: Option<&'r LiveBoard>,
}

/// The calling thread's id.
fn own_tid() -> u32 {
    // SAFETY: gettid has no preconditions.
    u32::try_from(unsafe { libc::gettid() }).unwrap_or(0)
}

impl<'r> SpikeTap<'r> {
    /// A tap for `threads` measuring threads; `on_break` stops the other measuring threads
    /// when one crosses `--break` (the runner passes [`crate::signals::request_stop`]).
    /// Without `settings.trace` only `--break` is watched.
    pub fn new(threads: usize, settings: SpikeSettings, on_break: fn()) -> SpikeTap<'r> {
        SpikeTap {
            settings,
            rings: (0..threads).map(|_| Ring::new()).collect(),
            broken: AtomicBool::new(false),
            on_break,
            kernel: None,
            live: None,
        }
    }

    /// The same tap publishing to `board` when it exports interval maxima (a monitor's);
    /// a board that does not export changes nothing.
    pub fn with_live(mut self, board: &'r LiveBoard) -> SpikeTap<'r> {
        self.live = board.export_interval_ns().map(|_| board);
        self
    }

    /// The interval on which running maxima restart, if any.
    fn restart_every_ns(&self) -> Option<u64> {
        self.live.and_then(LiveBoard::export_interval_ns)
    }

    /// The same tap with the flight recorder's watch slots for timer-woken threads.
    pub fn with_kernel(mut self, kernel: Option<&'r KernelRecorder>) -> SpikeTap<'r> {
        self.kernel = kernel;
        self
    }

    /// The producer of measuring thread `index` (on `cpu`), woken by a timer on its CPU at
    /// the programmed time; called on that thread, before its loop, so the trace can tell it
    /// from everything else on the CPU. A thread that ends may hand its index to the next
    /// one (one at a time).
    pub fn producer(&self, index: usize, cpu: usize) -> Option<SpikeProducer<'_>> {
        let tid = own_tid();
        let mut producer = self.producer_of(index, cpu, 0, tid)?;
        if self.settings.trace {
            producer.watch = self.kernel.and_then(|k| k.watch(cpu));
            if let Some(watch) = &producer.watch {
                watch.start(tid, kernel_threshold(producer.trace_floor));
            }
        }
        Some(producer)
    }

    /// [`SpikeTap::producer`] for a thread woken by an event another thread fires, on this
    /// CPU or another (the programmed time is when it was fired): its spikes get no timer IRQ/thread split.
    pub fn producer_woken_by_event(&self, index: usize, cpu: usize) -> Option<SpikeProducer<'_>> {
        self.producer_of(index, cpu, WOKEN_BY_EVENT, own_tid())
    }

    /// [`SpikeTap::producer`] for a thread other than the caller: thread `tid` of another
    /// process whose late samples the caller learns of (the app probe's collector).
    pub fn producer_for(&self, index: usize, cpu: usize, tid: u32) -> Option<SpikeProducer<'_>> {
        self.producer_of(index, cpu, 0, tid)
    }

    /// A producer for which every offered sample is a candidate (none crosses `--break`),
    /// for a thread whose samples are events in themselves, such as a task's deadline
    /// misses (release → completion); woken as [`SpikeTap::producer_woken_by_event`].
    pub fn producer_of_every(&self, index: usize, cpu: usize) -> Option<SpikeProducer<'_>> {
        let mut producer = self.producer_of(index, cpu, WOKEN_BY_EVENT, own_tid())?;
        producer.trace_floor = if self.settings.trace { 0 } else { u64::MAX };
        producer.follow_max = false;
        producer.next_restart_ns = u64::MAX;
        producer.break_ns = u64::MAX;
        Some(producer)
    }

    fn producer_of(
        &self,
        index: usize,
        cpu: usize,
        flags: u64,
        tid: u32,
    ) -> Option<SpikeProducer<'_>> {
        let ring = self.rings.get(index)?;
        let thread = flags | (cpu as u64) << 32 | u64::from(tid);
        let trace_floor = if self.settings.trace {
            self.settings.above_ns.unwrap_or(0)
        } else {
            u64::MAX
        };
        let follow_max = self.settings.trace && self.settings.above_ns.is_none();
        let restart_every = self.restart_every_ns().filter(|_| follow_max);
        Some(SpikeProducer {
            ring,
            thread,
            tap: self,
            trace_floor,
            follow_max,
            break_ns: self.settings.break_ns.unwrap_or(u64::MAX),
            traced: self.settings.trace,
            // The first measured sample sets the first boundary.
            next_restart_ns: if restart_every.is_some() { 0 } else { u64::MAX },
            restart_every_ns: restart_every.unwrap_or(u64::MAX),
            watch: None,
        })
    }

    /// A sample crossed `--break`.
    pub fn broken(&self) -> bool {
        self.broken.load(Ordering::Relaxed)
    }
}

/// The kernel's threshold for a floor: the kernel sees the thread switched in a little
/// before the thread reads its clock, so it is asked for somewhat less (a window it sends
/// and nobody claims is dropped; one it does not send leaves the CPU's live ring, which a
/// busy CPU may have overwritten).
fn kernel_threshold(floor_ns: u64) -> u64 {
    floor_ns - floor_ns / 8
}

/// The measuring thread's end of a [`SpikeTap`].
pub struct SpikeProducer<'a> {
    ring: &'a Ring,
    /// `cpu << 32 | tid` of the measuring thread.
    thread: u64,
    tap: &'a SpikeTap<'a>,
    trace_floor: u64,
    follow_max: bool,
    break_ns: u64,
    traced: bool,
    /// CLOCK_MONOTONIC time at which the running maximum starts again (`u64::MAX`: never),
    /// and the interval between two restarts.
    next_restart_ns: u64,
    restart_every_ns: u64,
    /// The thread's slot in the flight recorder (timer-woken threads with `--trace` on it).
    watch: Option<Watch<'a>>,
}

impl Drop for SpikeProducer<'_> {
    fn drop(&mut self) {
        if let Some(watch) = &self.watch {
            watch.stop();
        }
    }
}

impl SpikeProducer<'_> {
    /// The latency above which [`SpikeProducer::offer`] must be called.
    #[inline(always)]
    pub fn floor(&self) -> u64 {
        self.trace_floor.min(self.break_ns)
    }

    /// [`SpikeProducer::floor`] for a sample taken at `now_ns` (CLOCK_MONOTONIC): with
    /// restarts (a monitor's intervals), the running maximum starts again from zero at the
    /// first sample of each interval. One compare unless an interval began.
    #[inline(always)]
    pub fn floor_at(&mut self, now_ns: u64) -> u64 {
        if now_ns >= self.next_restart_ns {
            self.restart(now_ns);
        }
        self.floor()
    }

    #[cold]
    #[inline(never)]
    fn restart(&mut self, now_ns: u64) {
        let every = self.restart_every_ns;
        self.next_restart_ns = (now_ns / every).saturating_add(1).saturating_mul(every);
        if self.trace_floor != 0 {
            self.trace_floor = 0;
            self.floor_moved();
        }
    }

    /// The wake-up the thread asks for next (CLOCK_MONOTONIC ns), told to the flight
    /// recorder right after each wake-up (one store to memory shared with the kernel, no
    /// system call); nothing without it.
    #[inline(always)]
    pub fn next_wakeup(&self, programmed_ns: u64) {
        if let Some(watch) = &self.watch {
            watch.programmed(programmed_ns);
        }
    }

    /// A warm-up sample: without `--trace-above`, candidates start above the warm-up's
    /// largest latency (start-up effects are not spikes of the run).
    #[inline(always)]
    pub fn warm_up(&mut self, latency_ns: u64) {
        if self.follow_max && latency_ns > self.trace_floor {
            self.trace_floor = latency_ns;
            self.floor_moved();
        }
    }

    #[cold]
    fn floor_moved(&self) {
        if let Some(watch) = &self.watch {
            watch.threshold(kernel_threshold(self.trace_floor));
        }
    }

    /// A measured sample above [`SpikeProducer::floor`]. Returns true when it crossed
    /// `--break`: the run is being stopped and the loop should end.
    #[cold]
    #[inline(never)]
    pub fn offer(&mut self, programmed_ns: u64, woke_ns: u64) -> bool {
        let latency = woke_ns.saturating_sub(programmed_ns);
        let breaks = latency > self.break_ns;
        // The spike that breaks the run is always explained (cyclictest -b keeps its trace).
        if latency > self.trace_floor || (breaks && self.traced) {
            let i = self.ring.head.load(Ordering::Relaxed);
            let slot = (i % SLOTS as u64) as usize;
            self.ring.programmed[slot].store(programmed_ns, Ordering::Relaxed);
            self.ring.woke[slot].store(woke_ns, Ordering::Relaxed);
            self.ring.thread[slot].store(self.thread, Ordering::Relaxed);
            self.ring.head.store(i + 1, Ordering::Release);
            if self.follow_max {
                self.trace_floor = latency;
                self.floor_moved();
            }
        }
        if breaks {
            self.tap.broken.store(true, Ordering::Relaxed);
            (self.tap.on_break)();
            return true;
        }
        false
    }
}

/// What the reader made of one probe run's candidates.
#[derive(Debug, Default)]
pub struct SpikeReport {
    /// Largest latency first.
    pub spikes: Vec<Attribution>,
    /// Candidates not attributed: beyond `--trace-max`, or overwritten in a full ring.
    pub unexplained: u64,
    /// Reading the trace failed (one line, the first failure); later candidates were not read,
    /// except with a live board (a monitor), which goes on trying.
    pub error: Option<String>,
}

#[derive(Debug, Clone, Copy)]
struct Candidate {
    cpu: usize,
    tid: u32,
    woken_by_timer: bool,
    programmed: u64,
    woke: u64,
}

impl Candidate {
    fn latency(&self) -> u64 {
        self.woke.saturating_sub(self.programmed)
    }
}

/// Explains late wake-ups of thread `thread_pid` on `cpu`, each given as (programmed, woke)
/// in CLOCK_MONOTONIC ns, from one read of the source's events of that CPU. For any probe
/// with a programmed event time; call it off the measured CPUs.
pub fn explain(
    source: &TraceSource,
    cpu: usize,
    thread_pid: u32,
    wakeups: &[(u64, u64)],
    config: &AttributionConfig,
) -> Result<Vec<Attribution>, SourceError> {
    let traces = source.windows(cpu, thread_pid, wakeups, MARGIN_NS)?;
    Ok(wakeups
        .iter()
        .zip(&traces)
        .map(|(&(programmed_ns, woke_ns), trace)| {
            let spike = Spike {
                cpu: u32::try_from(cpu).unwrap_or(u32::MAX),
                programmed_ns,
                woke_ns,
                thread_pid,
            };
            attribute_trace(&spike, trace, config)
        })
        .collect())
}

/// The reader thread's body: drains `tap` every 20 ms until `done` is set (then once more),
/// reads and attributes the chosen candidates (all of them with a live board, which gets
/// each one's cause). Call on a thread off the measured CPUs.
pub fn read_spikes(source: &TraceSource, tap: &SpikeTap, done: &AtomicBool) -> SpikeReport {
    let mut report = SpikeReport::default();
    let mut tails = vec![0u64; tap.rings.len()];
    // The first attribution of the run is kept whatever comes later.
    let mut first: Option<Attribution> = None;
    let max = tap.settings.max_spikes as usize;
    loop {
        let finished = done.load(Ordering::Acquire);
        source.poll();
        let mut batch = drain(tap, &mut tails, &mut report.unexplained);
        // A monitor runs for months: a failed read does not end its causes.
        if max == 0 || (report.error.is_some() && tap.live.is_none()) {
            report.unexplained += batch.len() as u64;
        } else {
            // The largest of the batch that can still make it into the kept set.
            batch.sort_by_key(|c| std::cmp::Reverse(c.latency()));
            let room = max - usize::from(first.is_some());
            let smallest_kept = if report.spikes.len() >= room {
                report
                    .spikes
                    .iter()
                    .map(|a| a.latency_ns)
                    .min()
                    .unwrap_or(0)
            } else {
                0
            };
            let mut chosen: Vec<Candidate> = match tap.live {
                // The monitor names the cause of every interval's maximum.
                Some(_) => batch.clone(),
                None => batch
                    .iter()
                    .copied()
                    .filter(|c| c.latency() > smallest_kept)
                    .take(room.max(1))
                    .collect(),
            };
            if first.is_none() {
                // The earliest of the batch is the first of the run.
                if let Some(earliest) = batch.iter().min_by_key(|c| c.woke) {
                    if !chosen
                        .iter()
                        .any(|c| c.woke == earliest.woke && c.cpu == earliest.cpu)
                    {
                        chosen.push(*earliest);
                    }
                }
            }
            report.unexplained += (batch.len() - chosen.len()) as u64;
            match attribute_batch(source, &chosen) {
                Ok(mut attributed) => {
                    if let Some(board) = tap.live {
                        for a in &attributed {
                            board.publish_cause(spike_cause(a));
                        }
                    }
                    attributed.sort_by_key(|a| a.woke_ns);
                    let mut rest = attributed.into_iter();
                    if first.is_none() {
                        first = rest.next();
                    }
                    report.spikes.extend(rest);
                    report
                        .spikes
                        .sort_by_key(|a| std::cmp::Reverse(a.latency_ns));
                    let dropped = report.spikes.len().saturating_sub(room);
                    report.spikes.truncate(room);
                    report.unexplained += dropped as u64;
                }
                Err(e) => {
                    report.unexplained += chosen.len() as u64;
                    // The first failure is the one said.
                    report.error.get_or_insert_with(|| e.to_string());
                }
            }
        }
        if finished {
            break;
        }
        std::thread::sleep(BATCH);
    }
    report.spikes.extend(first);
    report
        .spikes
        .sort_by_key(|a| std::cmp::Reverse(a.latency_ns));
    report
}

/// What the live board keeps of an attributed spike: its dominant cause named without
/// thread ids (`rtg-culprit`, `irq 36 virtio1-req.0`, `RT throttling`, `gap`), so the
/// names an exporter shows stay few.
fn spike_cause(a: &Attribution) -> SpikeCause {
    SpikeCause {
        cpu: a.cpu as usize,
        woke_ns: a.woke_ns,
        latency_ns: a.latency_ns,
        cause: a
            .dominant_contributor()
            .map_or_else(|| "unexplained".to_string(), |c| cause_label(&c.cause)),
    }
}

/// A cause's name without thread ids: tasks by name, as the summary groups them.
pub fn cause_label(cause: &Cause) -> String {
    match cause {
        Cause::Thread { comm, .. } | Cause::ThreadedIrq { comm, .. } => comm.clone(),
        other => rtgauge_trace::cause_name(other),
    }
}

/// New candidates of every ring since `tails`; candidates overwritten before they were read
/// are counted in `lost`.
fn drain(tap: &SpikeTap, tails: &mut [u64], lost: &mut u64) -> Vec<Candidate> {
    let mut out = Vec::new();
    for (ring, tail) in tap.rings.iter().zip(tails.iter_mut()) {
        let head = ring.head.load(Ordering::Acquire);
        let oldest = head.saturating_sub(SLOTS as u64);
        if *tail < oldest {
            *lost += oldest - *tail;
            *tail = oldest;
        }
        for i in *tail..head {
            let slot = (i % SLOTS as u64) as usize;
            let thread = ring.thread[slot].load(Ordering::Relaxed);
            let c = Candidate {
                cpu: ((thread & !WOKEN_BY_EVENT) >> 32) as usize,
                tid: thread as u32,
                woken_by_timer: thread & WOKEN_BY_EVENT == 0,
                programmed: ring.programmed[slot].load(Ordering::Relaxed),
                woke: ring.woke[slot].load(Ordering::Relaxed),
            };
            // Written over while it was read: the producer lapped the reader.
            if ring.head.load(Ordering::Acquire) - i > SLOTS as u64 {
                *lost += 1;
            } else {
                out.push(c);
            }
        }
        *tail = head;
    }
    out
}

fn attribute_batch(
    source: &TraceSource,
    chosen: &[Candidate],
) -> Result<Vec<Attribution>, SourceError> {
    let mut out = Vec::with_capacity(chosen.len());
    let mut threads: Vec<(usize, u32, bool)> = chosen
        .iter()
        .map(|c| (c.cpu, c.tid, c.woken_by_timer))
        .collect();
    threads.sort_unstable();
    threads.dedup();
    for (cpu, tid, woken_by_timer) in threads {
        let wakeups: Vec<(u64, u64)> = chosen
            .iter()
            .filter(|c| (c.cpu, c.tid, c.woken_by_timer) == (cpu, tid, woken_by_timer))
            .map(|c| (c.programmed, c.woke))
            .collect();
        let config = AttributionConfig {
            woken_by_timer,
            rt_throttling: rtgauge_trace::rt_throttling_on(),
            ..AttributionConfig::default()
        };
        out.extend(explain(source, cpu, tid, &wakeups, &config)?);
    }
    Ok(out)
}

/// Puts the calling thread at SCHED_FIFO `priority` (the trace reader); false when refused.
pub fn set_thread_fifo(priority: i32) -> bool {
    rtgauge_os::sched::set_fifo(priority).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(above: Option<u64>, brk: Option<u64>) -> SpikeSettings {
        SpikeSettings {
            trace: true,
            by_default: false,
            above_ns: above,
            max_spikes: 5,
            break_ns: brk,
        }
    }

    #[test]
    fn without_a_threshold_every_new_maximum_after_the_warm_up_is_a_candidate() {
        let tap = SpikeTap::new(1, settings(None, None), || {});
        let mut p = tap.producer(0, 3).unwrap();
        p.warm_up(50);
        assert_eq!(p.floor(), 50);
        for (programmed, lat) in [(1_000, 40), (2_000, 60), (3_000, 55), (4_000, 90)] {
            if lat > p.floor() {
                assert!(!p.offer(programmed, programmed + lat));
            }
        }
        let mut lost = 0;
        let got = drain(&tap, &mut [0], &mut lost);
        let lats: Vec<u64> = got.iter().map(Candidate::latency).collect();
        assert_eq!(lats, [60, 90]);
        assert_eq!(got[0].cpu, 3);
        assert_eq!(lost, 0);
    }

    #[test]
    fn on_a_monitors_board_the_running_maximum_starts_again_at_each_interval() {
        let board = LiveBoard::exporting(1_000);
        let tap = SpikeTap::new(1, settings(None, None), || {}).with_live(&board);
        let mut p = tap.producer(0, 1).unwrap();
        p.warm_up(50);
        // (woke, latency): interval 0 peaks at 90; interval 1 starts again from zero; interval
        // 3 (after one without samples) too.
        for (woke, lat) in [
            (100, 60),
            (200, 90),
            (300, 70),
            (1_000, 40),
            (1_100, 70),
            (1_200, 30),
            (1_900, 80),
            (3_500, 60),
        ] {
            if lat > p.floor_at(woke) {
                assert!(!p.offer(woke - lat, woke));
            }
        }
        let mut lost = 0;
        let got: Vec<(u64, u64)> = drain(&tap, &mut [0], &mut lost)
            .iter()
            .map(|c| (c.woke, c.latency()))
            .collect();
        assert_eq!(
            got,
            [
                (100, 60),
                (200, 90),
                (1_000, 40),
                (1_100, 70),
                (1_900, 80),
                (3_500, 60)
            ]
        );
        assert_eq!(p.floor_at(3_600), 60);
        assert_eq!(p.floor_at(4_000), 0);
        // A board that does not export, or a fixed threshold, never restarts.
        let plain = LiveBoard::default();
        let tap = SpikeTap::new(1, settings(None, None), || {}).with_live(&plain);
        let mut p = tap.producer(0, 1).unwrap();
        p.offer(0, 90);
        assert_eq!(p.floor_at(u64::MAX - 1), 90);
        let tap = SpikeTap::new(1, settings(Some(30), None), || {}).with_live(&board);
        let mut p = tap.producer(0, 1).unwrap();
        assert_eq!(p.floor_at(5_000), 30);
    }

    #[test]
    fn a_fixed_threshold_keeps_its_floor_and_a_full_ring_counts_what_it_lost() {
        let tap = SpikeTap::new(1, settings(Some(100), None), || {});
        let mut p = tap.producer(0, 0).unwrap();
        for i in 0..(SLOTS as u64 + 10) {
            assert_eq!(p.floor(), 100);
            p.offer(i * 1_000, i * 1_000 + 150);
        }
        let mut lost = 0;
        let got = drain(&tap, &mut [0], &mut lost);
        assert_eq!(got.len(), SLOTS);
        assert_eq!(lost, 10);
        // The newest survive.
        assert_eq!(got.last().unwrap().programmed, (SLOTS as u64 + 9) * 1_000);
    }

    #[test]
    fn a_thread_that_takes_over_a_ring_leaves_the_waiting_candidates_on_their_cpu() {
        let tap = SpikeTap::new(1, settings(Some(10), None), || {});
        {
            let mut first = tap.producer(0, 2).unwrap();
            first.offer(1_000, 1_100);
        }
        let mut next = tap.producer_woken_by_event(0, 5).unwrap();
        next.offer(2_000, 2_100);
        let mut lost = 0;
        let threads: Vec<(usize, bool)> = drain(&tap, &mut [0], &mut lost)
            .iter()
            .map(|c| (c.cpu, c.woken_by_timer))
            .collect();
        assert_eq!(threads, [(2, true), (5, false)]);
    }

    #[test]
    fn every_sample_offered_to_a_producer_of_every_is_a_candidate_and_none_breaks() {
        let tap = SpikeTap::new(2, settings(Some(1_000), Some(500)), || {});
        let mut misses = tap.producer_of_every(1, 4).unwrap();
        assert_eq!(misses.floor(), 0);
        for (programmed, response) in [(1_000, 30), (2_000, 20), (3_000, 900)] {
            assert!(!misses.offer(programmed, programmed + response));
        }
        assert!(!tap.broken());
        let mut lost = 0;
        let got = drain(&tap, &mut [0, 0], &mut lost);
        let seen: Vec<(u64, usize, bool)> = got
            .iter()
            .map(|c| (c.latency(), c.cpu, c.woken_by_timer))
            .collect();
        assert_eq!(seen, [(30, 4, false), (20, 4, false), (900, 4, false)]);
        // Without tracing nothing is queued.
        let untraced = SpikeTap::new(1, SpikeSettings::default(), || {});
        let mut p = untraced.producer_of_every(0, 0).unwrap();
        assert_eq!(p.floor(), u64::MAX);
        assert!(!p.offer(0, 10));
        assert!(drain(&untraced, &mut [0], &mut lost).is_empty());
    }

    #[test]
    fn break_is_watched_without_tracing_and_stops_at_the_first_sample_above_it() {
        let tap = SpikeTap::new(
            1,
            SpikeSettings {
                break_ns: Some(500),
                ..SpikeSettings::default()
            },
            || {},
        );
        let mut p = tap.producer(0, 0).unwrap();
        assert_eq!(p.floor(), 500);
        assert!(!tap.broken());
        // Not tracing: nothing is queued, but the break is seen.
        assert!(p.offer(0, 501));
        assert!(tap.broken());
        let mut lost = 0;
        assert!(drain(&tap, &mut [0], &mut lost).is_empty());
    }
}
