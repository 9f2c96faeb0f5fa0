//! Attribution of one late wake-up to what the CPU did instead (pure: no I/O).
//!
//! The latency is split the way rtla timerlat does: **timer IRQ latency**, from the programmed
//! wake-up to the moment the kernel ran the timer that wakes the thread (`hrtimer_expire_entry`,
//! or the local timer interrupt when the hrtimer event is missing), and **thread latency**,
//! from there to the thread's own clock read after it was switched in.
//!
//! Every nanosecond of [programmed, woke] is given to exactly one cause: the innermost open
//! hard IRQ / vector / softirq handler, else the task on the CPU, except for **gaps**.
//!
//! A gap is a silence of at least [`DEFAULT_GAP_THRESHOLD_NS`] (no event recorded on the CPU)
//! that cannot be explained inside Linux: either the CPU was idle, or it lies before the timer
//! interrupt was taken, when any task running with interrupts enabled would have been
//! interrupted at the programmed time. What remains is time outside Linux (hypervisor, SMI,
//! firmware), or a long interrupts-off section that these events cannot see; deep idle-state
//! exit is counted too and is told apart by `idle` in the gap. A thread woken by an event another
//! thread fired (a response handler: [`AttributionConfig::woken_by_timer`] false) has no timer
//! to split the latency at and no moment at which its CPU had to take an interrupt, so there
//! silence while a task runs is that task's time and only idle silence is a gap. The threshold is 20 µs: twenty
//! times the 1 µs resolution of the timestamps, above the few microseconds that entering an
//! interrupt takes on bare metal, and below the spikes worth explaining (tens of µs and more).

use std::collections::HashMap;

use rtgauge_result::spike::{Attribution, Cause, Contributor, Segment};

use crate::parse::{EventKind, TraceEvent};

/// Silence (ns) from which unexplained time counts as a gap; see the module documentation.
pub const DEFAULT_GAP_THRESHOLD_NS: u64 = 20_000;
/// Resolution of the text timestamps: events may be stamped up to this much early.
const TIMESTAMP_SLACK_NS: u64 = 1_000;

/// One late wake-up to explain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spike {
    /// CPU the thread was measured on.
    pub cpu: u32,
    /// Programmed wake-up time (CLOCK_MONOTONIC, ns).
    pub programmed_ns: u64,
    /// Time the thread read after waking (CLOCK_MONOTONIC, ns).
    pub woke_ns: u64,
    /// Thread id of the measuring thread.
    pub thread_pid: u32,
}

/// Tuning of [`attribute`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AttributionConfig {
    pub gap_threshold_ns: u64,
    /// The thread was woken by a timer on its own CPU at the programmed time (cyclic); false
    /// when an event another thread fired woke it (response: the programmed time is when the event
    /// was fired), which leaves the IRQ/thread split out and silence inside a task alone.
    pub woken_by_timer: bool,
    /// RT throttling is on (kernel.sched_rt_runtime_us below its period, the kernel's
    /// default): a normal task running while the real-time thread waits is throttling's
    /// doing; with it off, the fair server's.
    pub rt_throttling: bool,
}

impl Default for AttributionConfig {
    fn default() -> Self {
        Self {
            gap_threshold_ns: DEFAULT_GAP_THRESHOLD_NS,
            woken_by_timer: true,
            rt_throttling: true,
        }
    }
}

/// Explains `spike` from the `events` recorded around it (any CPUs, in recording order; those
/// of other CPUs and after the wake-up are ignored). Events before the programmed time
/// (the margin) tell what was running when the window opened.
///
/// To explain many spikes from one trace, [`attribute_all`] or [`attribute_each`] go over the
/// trace once instead of once per spike.
pub fn attribute(
    spike: &Spike,
    events: &[TraceEvent],
    events_lost: bool,
    config: &AttributionConfig,
) -> Attribution {
    let mut found = None;
    attribute_each(
        std::slice::from_ref(spike),
        events,
        events_lost,
        config,
        |_, a| found = Some(a),
    );
    found.unwrap_or_else(|| unexplained(spike, events_lost, config))
}

/// [`attribute`] for every spike of `spikes` (in that order), in one pass over `events`: each
/// event is read once to follow what the CPU was doing, and once more for each spike whose
/// window [programmed, woke] it falls in. The results are those of [`attribute`] on each
/// spike with the same events.
pub fn attribute_all(
    spikes: &[Spike],
    events: &[TraceEvent],
    events_lost: bool,
    config: &AttributionConfig,
) -> Vec<Attribution> {
    let mut found: Vec<Option<Attribution>> = vec![None; spikes.len()];
    attribute_each(spikes, events, events_lost, config, |index, a| {
        found[index] = Some(a)
    });
    found
        .into_iter()
        .zip(spikes)
        .map(|(a, spike)| a.unwrap_or_else(|| unexplained(spike, events_lost, config)))
        .collect()
}

/// [`attribute_all`] without keeping the results: `visit(index in spikes, attribution)` is
/// called once per spike, in order of CPU and programmed time, so a caller that only sums
/// them keeps nothing per spike. Memory: a compact copy of the events of the spikes' CPUs.
pub fn attribute_each(
    spikes: &[Spike],
    events: &[TraceEvent],
    events_lost: bool,
    config: &AttributionConfig,
    mut visit: impl FnMut(usize, Attribution),
) {
    let mut names = Names::new();
    let local_timer = names.id("local_timer");
    let mut cpus: Vec<u32> = spikes.iter().map(|s| s.cpu).collect();
    cpus.sort_unstable();
    cpus.dedup();
    let mut per_cpu: Vec<Vec<Ev>> = vec![Vec::new(); cpus.len()];
    for event in events {
        if let Ok(slot) = cpus.binary_search(&event.cpu) {
            per_cpu[slot].push(Ev::of(event, &mut names));
        }
    }
    let sorted: Vec<bool> = per_cpu
        .iter()
        .map(|evs| evs.windows(2).all(|w| w[0].ts <= w[1].ts))
        .collect();
    let mut order: Vec<usize> = (0..spikes.len()).collect();
    order.sort_by_key(|&i| (spikes[i].cpu, spikes[i].programmed_ns));
    let context = Context {
        names: &names,
        local_timer,
        config,
        events_lost,
    };
    let no_prios = HashMap::new();
    let mut current_cpu = None;
    let mut cursor = Cursor::default();
    for index in order {
        let spike = &spikes[index];
        let Ok(slot) = cpus.binary_search(&spike.cpu) else {
            continue;
        };
        let evs = &per_cpu[slot];
        if current_cpu != Some(spike.cpu) {
            current_cpu = Some(spike.cpu);
            cursor = Cursor::default();
        }
        let attribution = if sorted[slot] {
            // Everything before the programmed time only sets the state the window opens in.
            let before =
                cursor.next + evs[cursor.next..].partition_point(|e| e.ts < spike.programmed_ns);
            cursor.advance(evs, before);
            context.explain(spike, evs, before, &cursor.state, &cursor.prios, true)
        } else {
            // Out of order: the events up to the wake-up in recording order, from scratch.
            let end = spike.woke_ns.max(spike.programmed_ns);
            let upto: Vec<Ev> = evs.iter().filter(|e| e.ts <= end).copied().collect();
            context.explain(spike, &upto, 0, &State::default(), &no_prios, false)
        };
        visit(index, attribution);
    }
}

/// The attribution of a spike with no event to explain it.
fn unexplained(spike: &Spike, events_lost: bool, config: &AttributionConfig) -> Attribution {
    let mut names = Names::new();
    let local_timer = names.id("local_timer");
    Context {
        names: &names,
        local_timer,
        config,
        events_lost,
    }
    .explain(spike, &[], 0, &State::default(), &HashMap::new(), true)
}

/// [`attribute`] on a window read by [`crate::TraceSession::read_windows`], carrying over
/// whether events were lost or recording was stopped inside it.
pub fn attribute_trace(
    spike: &Spike,
    trace: &crate::CpuTrace,
    config: &AttributionConfig,
) -> Attribution {
    let mut attribution = attribute(spike, &trace.events, trace.events_lost, config);
    attribution.recording_stopped = trace.window_incomplete;
    attribution
}

/// A name (comm, handler, vector, work function) stored once per trace.
type Sym = u32;
/// The empty name (of an IRQ whose entry came before the margin), interned first.
const EMPTY_NAME: Sym = 0;

struct Names {
    ids: HashMap<Box<str>, Sym>,
    names: Vec<Box<str>>,
}

impl Names {
    fn new() -> Names {
        let mut names = Names {
            ids: HashMap::new(),
            names: Vec::new(),
        };
        names.id("");
        names
    }

    fn id(&mut self, name: &str) -> Sym {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let id = self.names.len() as Sym;
        self.names.push(name.into());
        self.ids.insert(name.into(), id);
        id
    }

    fn name(&self, id: Sym) -> &str {
        &self.names[id as usize]
    }
}

/// An event as attribution needs it: small and `Copy`, names interned.
#[derive(Debug, Clone, Copy)]
struct Ev {
    ts: u64,
    pid: u32,
    comm: Sym,
    kind: Kind,
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    Switch {
        prev_pid: u32,
        prev_prio: i32,
        /// The task leaving stays runnable (preempted, or held back by throttling).
        prev_runnable: bool,
        next_comm: Sym,
        next_pid: u32,
        next_prio: i32,
    },
    Wakeup {
        pid: u32,
        prio: i32,
    },
    IrqEntry {
        irq: u32,
        name: Sym,
    },
    IrqExit {
        irq: u32,
    },
    SoftirqEntry(Sym),
    SoftirqExit(Sym),
    VectorEntry(Sym),
    VectorExit(Sym),
    HrtimerEntry {
        now_ns: Option<u64>,
    },
    WorkStart(Sym),
    WorkEnd,
    Nmi {
        handler: Sym,
        delta_ns: u64,
    },
    Other,
}

impl Kind {
    /// The (pid, priority) of each task a scheduler event names, in the order it names them
    /// (a switch: the task leaving, then the one arriving).
    fn priorities(&self) -> [Option<(u32, i32)>; 2] {
        match *self {
            Kind::Switch {
                prev_pid,
                prev_prio,
                next_pid,
                next_prio,
                ..
            } => [Some((prev_pid, prev_prio)), Some((next_pid, next_prio))],
            Kind::Wakeup { pid, prio } => [Some((pid, prio)), None],
            _ => [None, None],
        }
    }
}

impl Ev {
    fn of(event: &TraceEvent, names: &mut Names) -> Ev {
        let kind = match &event.kind {
            EventKind::Switch {
                prev,
                prev_state,
                next,
            } => Kind::Switch {
                prev_pid: prev.pid,
                prev_prio: prev.prio,
                prev_runnable: prev_state.starts_with('R'),
                next_comm: names.id(&next.comm),
                next_pid: next.pid,
                next_prio: next.prio,
            },
            EventKind::Wakeup { task, .. } => Kind::Wakeup {
                pid: task.pid,
                prio: task.prio,
            },
            EventKind::IrqEntry { irq, name } => Kind::IrqEntry {
                irq: *irq,
                name: names.id(name),
            },
            EventKind::IrqExit { irq } => Kind::IrqExit { irq: *irq },
            EventKind::SoftirqEntry { name, .. } => Kind::SoftirqEntry(names.id(name)),
            EventKind::SoftirqExit { name, .. } => Kind::SoftirqExit(names.id(name)),
            EventKind::VectorEntry { name } => Kind::VectorEntry(names.id(name)),
            EventKind::VectorExit { name } => Kind::VectorExit(names.id(name)),
            EventKind::HrtimerEntry { now_ns, .. } => Kind::HrtimerEntry { now_ns: *now_ns },
            EventKind::WorkStart { function } => Kind::WorkStart(names.id(function)),
            EventKind::WorkEnd => Kind::WorkEnd,
            EventKind::Nmi { handler, delta_ns } => Kind::Nmi {
                handler: names.id(handler),
                delta_ns: *delta_ns,
            },
            EventKind::HrtimerExit | EventKind::SoftirqRaise { .. } | EventKind::Other { .. } => {
                Kind::Other
            }
        };
        Ev {
            ts: event.ts_ns,
            pid: event.pid,
            comm: names.id(&event.comm),
            kind,
        }
    }
}

/// A cause with its names interned; the priority of a task is looked up when the result is
/// made (it is the one the last scheduler event up to the wake-up named).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Key {
    Irq {
        irq: u32,
        name: Sym,
    },
    Vector(Sym),
    Softirq(Sym),
    Nmi(Sym),
    Task {
        comm: Sym,
        pid: u32,
        work: Option<Sym>,
    },
    Idle,
    /// The measured thread waited while its real-time class was held back.
    Throttled {
        fair: bool,
    },
    Gap {
        idle: bool,
    },
    Unknown,
}

/// How long a real-time thread must have waited behind a normal task before that counts as
/// throttling: a normal task's non-preemptible kernel section (PREEMPT_NONE, a kworker's
/// work item) holds a woken real-time thread for up to some hundreds of µs, RT throttling
/// and the fair server for tens of ms.
const HELD_BEHIND_NORMAL_NS: u64 = 1_000_000;

/// Whether the measured thread is waiting to run while its CPU idles or runs a normal task:
/// what RT throttling and the fair server look like in a trace.
struct Waiting {
    thread: u32,
    /// Ready to run but not on the CPU, since this time.
    ready_since: Option<u64>,
    /// Its kernel priority (below 100: real-time).
    prio: Option<i32>,
    /// The task last switched in, and its priority.
    running: Option<(u32, i32)>,
}

impl Waiting {
    fn new(thread: u32, prios: &HashMap<u32, i32>) -> Waiting {
        Waiting {
            thread,
            ready_since: None,
            prio: prios.get(&thread).copied(),
            running: None,
        }
    }

    fn apply(&mut self, event: &Ev) {
        let ready = |since: Option<u64>| since.or(Some(event.ts));
        match event.kind {
            Kind::Wakeup { pid, prio } if pid == self.thread => {
                self.ready_since = ready(self.ready_since);
                self.prio = Some(prio);
            }
            Kind::Switch {
                prev_pid,
                prev_prio,
                prev_runnable,
                next_pid,
                next_prio,
                ..
            } => {
                if prev_pid == self.thread {
                    self.ready_since = if prev_runnable { Some(event.ts) } else { None };
                    self.prio = Some(prev_prio);
                }
                if next_pid == self.thread {
                    self.ready_since = None;
                    self.prio = Some(next_prio);
                }
                self.running = Some((next_pid, next_prio));
            }
            // Recorded while it ran: it is on the CPU.
            _ if event.pid == self.thread => self.ready_since = None,
            _ => {}
        }
    }

    /// The part of [from, to) in `context` during which the real-time thread was held back:
    /// from when it had waited the gap threshold with the CPU idle (RT throttling: the fair
    /// server never idles a CPU), or [`HELD_BEHIND_NORMAL_NS`] behind a normal task.
    fn held_back(
        &self,
        context: Key,
        from: u64,
        to: u64,
        prios: &HashMap<u32, i32>,
        config: &AttributionConfig,
    ) -> Option<(u64, Key)> {
        let since = self.ready_since?;
        if self.prio.is_none_or(|p| p >= 100) {
            return None;
        }
        let (after, key) = match context {
            Key::Idle if config.rt_throttling => {
                (config.gap_threshold_ns, Key::Throttled { fair: false })
            }
            Key::Task { pid, .. } if pid != self.thread => {
                let prio = match self.running {
                    Some((running, prio)) if running == pid => Some(prio),
                    _ => prios.get(&pid).copied(),
                };
                if prio.is_none_or(|p| p < 100) {
                    return None;
                }
                (
                    HELD_BEHIND_NORMAL_NS,
                    Key::Throttled {
                        fair: !config.rt_throttling,
                    },
                )
            }
            _ => return None,
        };
        let from_held = from.max(since.saturating_add(after));
        (from_held < to).then_some((from_held, key))
    }

    /// Adds [from, to) to `timeline`, the held-back part as throttling.
    #[allow(clippy::too_many_arguments)]
    fn add(
        &self,
        timeline: &mut Timeline,
        (from, to): (u64, u64),
        silent_since: u64,
        context: Key,
        timer_deadline: u64,
        prios: &HashMap<u32, i32>,
        config: &AttributionConfig,
    ) {
        match self.held_back(context, from, to, prios, config) {
            Some((held, key)) => {
                timeline.add_stretch(from, held, silent_since, context, timer_deadline, config);
                // The whole wait was the throttle's, its first stretch too (it is only
                // known to be throttling once it lasted).
                if let Some(since) = self.ready_since {
                    timeline.relabel_since(since, key, self.thread);
                }
                timeline.push(held, to, key);
            }
            None => timeline.add_stretch(from, to, silent_since, context, timer_deadline, config),
        }
    }
}

/// What the CPU was in: the open handlers (innermost last) and the work item of each kworker.
#[derive(Debug, Clone, Default)]
struct State {
    stack: Vec<Key>,
    works: HashMap<u32, Sym>,
}

impl State {
    fn apply(&mut self, event: &Ev) {
        match event.kind {
            // A task switch happens in task context: nothing can still be open.
            Kind::Switch { .. } => self.stack.clear(),
            Kind::IrqEntry { irq, name } => self.stack.push(Key::Irq { irq, name }),
            Kind::SoftirqEntry(name) => self.stack.push(Key::Softirq(name)),
            Kind::VectorEntry(name) => self.stack.push(Key::Vector(name)),
            Kind::WorkStart(function) => {
                self.works.insert(event.pid, function);
            }
            Kind::WorkEnd => {
                self.works.remove(&event.pid);
            }
            Kind::IrqExit { .. } | Kind::SoftirqExit(_) | Kind::VectorExit(_) => {
                let closed = exit_key(&event.kind);
                // Pop up to and including the matching entry; an unmatched exit (its entry was
                // overwritten) leaves the stack alone.
                if let Some(position) = self
                    .stack
                    .iter()
                    .rposition(|open| same_handler(open, closed.as_ref()))
                {
                    self.stack.truncate(position);
                }
            }
            _ => {}
        }
    }
}

/// The state after the events before `next`, and the priorities they named.
#[derive(Default)]
struct Cursor {
    next: usize,
    state: State,
    prios: HashMap<u32, i32>,
}

impl Cursor {
    fn advance(&mut self, evs: &[Ev], to: usize) {
        for event in &evs[self.next..to] {
            self.state.apply(event);
            for (pid, prio) in event.kind.priorities().into_iter().flatten() {
                self.prios.insert(pid, prio);
            }
        }
        self.next = self.next.max(to);
    }
}

struct Context<'a> {
    names: &'a Names,
    local_timer: Sym,
    config: &'a AttributionConfig,
    events_lost: bool,
}

impl Context<'_> {
    /// Explains `spike` from `evs` (the events of its CPU): `state` and `prios` are what the
    /// events before index `first` left, and the events from `first` on are walked up to the
    /// wake-up. `sorted`: the events are in time order (else `evs` ends at the wake-up).
    fn explain(
        &self,
        spike: &Spike,
        evs: &[Ev],
        first: usize,
        state: &State,
        prios: &HashMap<u32, i32>,
        sorted: bool,
    ) -> Attribution {
        let config = self.config;
        let start = spike.programmed_ns;
        let end = spike.woke_ns.max(start);
        let earliest = start.saturating_sub(TIMESTAMP_SLACK_NS);
        let last = first + evs[first..].partition_point(|e| e.ts <= end);
        let from = if sorted {
            evs[..last].partition_point(|e| e.ts < earliest)
        } else {
            0
        };
        let near = &evs[from..last];
        let events_in_window = near.iter().filter(|e| e.ts >= earliest).count();
        let events_in_window = u32::try_from(events_in_window).unwrap_or(u32::MAX);
        let timer_irq_ns = if config.woken_by_timer {
            self.find_timer_irq(spike, near)
        } else {
            None
        };
        // Before the timer interrupt was taken, silence is unexplained; without any timer
        // event the whole window is. Woken by another thread's event, nothing had to
        // interrupt a silent task.
        let timer_deadline = if config.woken_by_timer {
            timer_irq_ns.unwrap_or(end)
        } else {
            start
        };

        let mut state = state.clone();
        let mut timeline = Timeline::default();
        let mut previous_ts = start;
        let mut waiting = Waiting::new(spike.thread_pid, prios);
        for event in &evs[first..last] {
            // Every event names the task that was on the CPU when it was recorded (in
            // interrupt context, the interrupted one), which is more robust than following
            // sched_switch alone: some kernels drop the switch out of idle. An exit with
            // nothing open is a handler that was running since before the margin.
            let context = state
                .stack
                .last()
                .copied()
                .or_else(|| exit_key(&event.kind))
                .unwrap_or_else(|| self.task_key(event.comm, event.pid, &state.works));
            // An NMI is recorded when its handler ends, with how long it ran.
            let nmi_start = match event.kind {
                Kind::Nmi { delta_ns, .. } => event.ts.saturating_sub(delta_ns).max(previous_ts),
                _ => event.ts,
            };
            waiting.add(
                &mut timeline,
                (previous_ts.max(start), nmi_start.min(end)),
                previous_ts,
                context,
                timer_deadline,
                prios,
                config,
            );
            if let Kind::Nmi { handler, .. } = event.kind {
                timeline.push(nmi_start.max(start), event.ts.min(end), Key::Nmi(handler));
            }
            previous_ts = previous_ts.max(event.ts);
            state.apply(event);
            waiting.apply(event);
        }
        // After the last event: the task it switched to, or the one it was recorded in.
        let after_last = last
            .checked_sub(1)
            .map_or(Key::Unknown, |i| match evs[i].kind {
                Kind::Switch {
                    next_comm,
                    next_pid,
                    ..
                } => self.task_key(next_comm, next_pid, &state.works),
                _ => self.task_key(evs[i].comm, evs[i].pid, &state.works),
            });
        let context = state.stack.last().copied().unwrap_or(after_last);
        waiting.add(
            &mut timeline,
            (previous_ts.max(start), end),
            previous_ts,
            context,
            timer_deadline,
            prios,
            config,
        );

        // A task's priority: the last one a scheduler event named up to the wake-up.
        let window = &evs[first..last];
        let prio_of = |pid: u32| {
            window
                .iter()
                .rev()
                .find_map(|e| {
                    // The arriving task first: its priority is the one after the event.
                    let mut named = e.kind.priorities().into_iter().rev().flatten();
                    named.find(|&(p, _)| p == pid).map(|(_, prio)| prio)
                })
                .or_else(|| prios.get(&pid).copied())
        };
        let (contributors, segments) = timeline.finish(|key| self.cause(key, &prio_of));
        let dominant = contributors
            .iter()
            .enumerate()
            .filter(|(_, c)| !is_thread(&c.cause, spike.thread_pid) && c.cause != Cause::Unknown)
            .max_by_key(|(_, c)| c.duration_ns)
            .map(|(i, _)| i);
        Attribution {
            cpu: spike.cpu,
            programmed_ns: spike.programmed_ns,
            woke_ns: spike.woke_ns,
            latency_ns: spike.woke_ns.saturating_sub(spike.programmed_ns),
            timer_irq_ns,
            irq_latency_ns: timer_irq_ns.map(|t| t.saturating_sub(start)),
            thread_latency_ns: timer_irq_ns.map(|t| end.saturating_sub(t.max(start))),
            contributors,
            dominant,
            segments,
            events_lost: self.events_lost,
            recording_stopped: false,
            events_in_window,
            thread_pid: (spike.thread_pid != 0).then_some(spike.thread_pid),
        }
    }

    /// The task `pid` as a cause (idle for pid 0; a threaded IRQ has no work item).
    fn task_key(&self, comm: Sym, pid: u32, works: &HashMap<u32, Sym>) -> Key {
        if pid == 0 {
            return Key::Idle;
        }
        let work = if self.names.name(comm).starts_with("irq/") {
            None
        } else {
            works.get(&pid).copied()
        };
        Key::Task { comm, pid, work }
    }

    fn cause(&self, key: Key, prio_of: &dyn Fn(u32) -> Option<i32>) -> Cause {
        let name = |id: Sym| self.names.name(id).to_string();
        match key {
            Key::Irq { irq, name: n } => Cause::Irq { irq, name: name(n) },
            Key::Vector(n) => Cause::Vector { name: name(n) },
            Key::Softirq(n) => Cause::Softirq { vector: name(n) },
            Key::Nmi(n) => Cause::Nmi { handler: name(n) },
            Key::Task { comm, pid, work } => {
                let mut cause = task_cause(self.names.name(comm), pid, prio_of(pid));
                if let Cause::Thread { work: w, .. } = &mut cause {
                    *w = work.map(name);
                }
                cause
            }
            Key::Idle => Cause::Idle,
            Key::Throttled { fair } => Cause::Throttled {
                server: if fair { "fair server" } else { "RT throttling" }.into(),
            },
            Key::Gap { idle } => Cause::Gap { idle },
            Key::Unknown => Cause::Unknown,
        }
    }

    /// The timer that woke the thread: the last hrtimer expiry before the thread's wake-up
    /// event (falling back to the local timer interrupt), inside the window.
    fn find_timer_irq(&self, spike: &Spike, events: &[Ev]) -> Option<u64> {
        let earliest = spike.programmed_ns.saturating_sub(TIMESTAMP_SLACK_NS);
        let in_window = |e: &&Ev| e.ts >= earliest;
        let is_local_timer =
            |kind: &Kind| matches!(kind, Kind::VectorEntry(n) if *n == self.local_timer);
        let wake_index = events.iter().position(|e| {
            e.ts >= earliest
                && matches!(e.kind, Kind::Wakeup { pid, .. } if pid == spike.thread_pid)
        });
        let before_wake = &events[..wake_index.unwrap_or(events.len())];
        let hrtimer = before_wake
            .iter()
            .rev()
            .filter(in_window)
            .find_map(|e| match e.kind {
                // The expiry's own nanosecond clock reading, when it is consistent with the
                // microsecond timestamp (same clock: mono), is the more precise time.
                Kind::HrtimerEntry { now_ns } => Some(
                    now_ns
                        .filter(|n| n.abs_diff(e.ts) < TIMESTAMP_SLACK_NS)
                        .unwrap_or(e.ts),
                ),
                _ => None,
            });
        let local_timer = before_wake
            .iter()
            .rev()
            .filter(in_window)
            .find(|e| is_local_timer(&e.kind))
            .map(|e| e.ts);
        let timer = hrtimer.or(local_timer);
        // Without a wake-up event, the first timer interrupt after the programmed time.
        let timer = if wake_index.is_none() {
            events
                .iter()
                .filter(in_window)
                .find(|e| matches!(e.kind, Kind::HrtimerEntry { .. }) || is_local_timer(&e.kind))
                .map(|e| e.ts)
        } else {
            timer
        };
        timer.map(|t| t.clamp(spike.programmed_ns, spike.woke_ns.max(spike.programmed_ns)))
    }
}

fn is_thread(cause: &Cause, pid: u32) -> bool {
    matches!(cause, Cause::Thread { pid: p, .. } if *p == pid)
}

fn task_cause(comm: &str, pid: u32, prio: Option<i32>) -> Cause {
    if pid == 0 {
        return Cause::Idle;
    }
    if let Some(rest) = comm.strip_prefix("irq/") {
        let irq = rest.split(['-', '_']).next().and_then(|n| n.parse().ok());
        return Cause::ThreadedIrq {
            comm: comm.to_string(),
            pid,
            prio,
            irq,
        };
    }
    Cause::Thread {
        comm: comm.to_string(),
        pid,
        prio,
        work: None,
    }
}

/// The handler an exit event closes, for an exit whose entry came before the margin.
fn exit_key(kind: &Kind) -> Option<Key> {
    match *kind {
        Kind::IrqExit { irq } => Some(Key::Irq {
            irq,
            name: EMPTY_NAME,
        }),
        Kind::SoftirqExit(name) => Some(Key::Softirq(name)),
        Kind::VectorExit(name) => Some(Key::Vector(name)),
        _ => None,
    }
}

fn same_handler(open: &Key, closed: Option<&Key>) -> bool {
    match (open, closed) {
        (Key::Irq { irq: a, .. }, Some(Key::Irq { irq: b, .. })) => a == b,
        (Key::Softirq(a), Some(Key::Softirq(b))) => a == b,
        (Key::Vector(a), Some(Key::Vector(b))) => a == b,
        _ => false,
    }
}

#[derive(Default)]
struct Timeline {
    stretches: Vec<(u64, u64, Key)>,
}

impl Timeline {
    /// Adds [from, to) spent in `context`; `silent_since` is the previous event's time, so a
    /// silence of at least the threshold before the timer (or while idle) becomes a gap.
    fn add_stretch(
        &mut self,
        from: u64,
        to: u64,
        silent_since: u64,
        context: Key,
        timer_deadline: u64,
        config: &AttributionConfig,
    ) {
        if to <= from {
            return;
        }
        let silence = to.saturating_sub(silent_since);
        let in_task = matches!(context, Key::Task { .. } | Key::Idle | Key::Unknown);
        if silence >= config.gap_threshold_ns && in_task {
            let idle = context == Key::Idle;
            let gap_end = if idle { to } else { to.min(timer_deadline) };
            // The unexplained part itself must reach the threshold: a task that ran silently
            // up to the programmed time, then an interrupt a few µs late, is not a gap.
            let gap_end = if gap_end.saturating_sub(from) >= config.gap_threshold_ns {
                gap_end
            } else {
                from
            };
            if gap_end > from && context != Key::Unknown {
                self.push(from, gap_end, Key::Gap { idle });
                self.push(gap_end, to, context);
                return;
            }
        }
        self.push(from, to, context);
    }

    /// Gives the stretches from `since` on that were idle, a gap or a task other than
    /// `thread` to `key` (a wait found to be throttling).
    fn relabel_since(&mut self, since: u64, key: Key, thread: u32) {
        for (from, _, cause) in self.stretches.iter_mut().rev() {
            if *from < since {
                break;
            }
            let relabel = match *cause {
                Key::Idle | Key::Gap { .. } => true,
                Key::Task { pid, .. } => pid != thread,
                _ => false,
            };
            if relabel {
                *cause = key;
            }
        }
    }

    fn push(&mut self, from: u64, to: u64, cause: Key) {
        if to <= from {
            return;
        }
        match self.stretches.last_mut() {
            Some((_, last_end, last)) if *last_end == from && *last == cause => *last_end = to,
            _ => self.stretches.push((from, to, cause)),
        }
    }

    /// The contributors, longest first (each cause made once), and the segments.
    fn finish(self, cause: impl Fn(Key) -> Cause) -> (Vec<Contributor>, Vec<Segment>) {
        // (key, duration, count, longest) in order of first appearance; a window has few.
        let mut sums: Vec<(Key, u64, u32, u64)> = Vec::new();
        let mut index_of = Vec::with_capacity(self.stretches.len());
        for &(from, to, key) in &self.stretches {
            let index = match sums.iter().position(|s| s.0 == key) {
                Some(i) => i,
                None => {
                    sums.push((key, 0, 0, 0));
                    sums.len() - 1
                }
            };
            let s = &mut sums[index];
            s.1 += to - from;
            s.2 += 1;
            s.3 = s.3.max(to - from);
            index_of.push(index);
        }
        // Longest first (ties in order of appearance); remap the segment indices.
        let mut order: Vec<usize> = (0..sums.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(sums[i].1));
        let mut new_index = vec![0; sums.len()];
        for (new, &old) in order.iter().enumerate() {
            new_index[old] = new;
        }
        let segments = self
            .stretches
            .iter()
            .zip(&index_of)
            .map(|(&(from, to, _), &index)| Segment {
                start_ns: from,
                end_ns: to,
                contributor: new_index[index],
            })
            .collect();
        let contributors = order
            .iter()
            .map(|&i| {
                let (key, duration_ns, count, longest_ns) = sums[i];
                Contributor {
                    cause: cause(key),
                    duration_ns,
                    count,
                    longest_ns,
                }
            })
            .collect();
        (contributors, segments)
    }
}
