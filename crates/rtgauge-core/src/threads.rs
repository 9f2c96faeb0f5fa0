//! Where measuring threads run and how a probe's budget is shared: one thread per measured
//! CPU, one thread on the first measured CPU, a pair of threads on one CPU or across two, the
//! split of a budget over a probe's cells, and the warm-up. Every probe starts its threads
//! here (through [`crate::rt::enter_thread`], so a stop request can interrupt them).

use crate::clock::now_ns;
use crate::probe::{empty_list, os_error, Budget, Params, ProbeContext, ProbeError};
use crate::rt::{self, Mode, Policy};
use crate::units::format_duration_ns;
use rtgauge_result::Obtained;
use std::sync::{Condvar, Mutex};

/// The placements of a thread pair.
pub const PLACEMENTS: [&str; 2] = ["same-cpu", "cross-cpu"];

/// Runs `body` on one thread per CPU of `cpus`, each entered into the mode first, and
/// returns their outputs in CPU order. The first error wins.
pub fn per_cpu_threads<T: Send>(
    ctx: &ProbeContext,
    body: impl Fn(usize, Obtained) -> Result<T, ProbeError> + Sync,
) -> Result<Vec<(Obtained, T)>, ProbeError> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = ctx
            .cpus
            .iter()
            .map(|&cpu| {
                let body = &body;
                std::thread::Builder::new()
                    .name(format!("rtgauge-cpu{cpu}"))
                    .spawn_scoped(scope, move || {
                        let obtained = ctx.enter_thread(Some(cpu))?;
                        let out = body(cpu, obtained.clone())?;
                        Ok((obtained, out))
                    })
                    .expect("spawning a measuring thread")
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    })
}

/// Merges the obtained contexts of several threads into one (worst of them).
pub fn merge_obtained(all: &[Obtained]) -> Obtained {
    let mut merged = all.first().cloned().unwrap_or_default();
    for o in all.iter().skip(1) {
        merged.pinned &= o.pinned;
        if o.policy != merged.policy {
            merged.policy = format!("{}/{}", merged.policy, o.policy);
        }
        for s in &o.shortfalls {
            if !merged.shortfalls.contains(s) {
                merged.shortfalls.push(s.clone());
            }
        }
    }
    merged
}

/// Runs `body` on one measuring thread, pinned to the first measured CPU and entered into the
/// mode. These probes time one thread's own operations, so more threads would only share the
/// caches and memory bus they measure.
pub fn on_first_cpu<T: Send>(
    probe: &'static str,
    ctx: &ProbeContext,
    body: impl Fn(usize, Obtained) -> Result<T, ProbeError> + Sync,
) -> Result<(Obtained, T), ProbeError> {
    let Some(first) = ctx.cpus.first() else {
        return Err(ProbeError::Invalid {
            probe,
            message: "no CPU to measure on; choose one with --cpus".into(),
        });
    };
    let one = std::slice::from_ref(first);
    let narrowed = ProbeContext { cpus: one, ..*ctx };
    per_cpu_threads(&narrowed, body)?
        .pop()
        .ok_or_else(|| ProbeError::Invalid {
            probe,
            message: "the measuring thread returned nothing".into(),
        })
}

/// The share of a probe's budget that one cell (one size of one allocator, one clock…) gets.
#[derive(Debug, Clone, Copy)]
pub struct Cell {
    pub budget: Budget,
    pub warmup_ns: u64,
}

impl Cell {
    /// `ctx` narrowed to this cell: its budget and warm-up, all else the probe's.
    pub fn context<'a>(&self, ctx: &ProbeContext<'a>) -> ProbeContext<'a> {
        ProbeContext {
            budget: self.budget,
            warmup_ns: self.warmup_ns,
            ..*ctx
        }
    }
}

/// Splits the duration and warm-up evenly over `cells`; `loops` stays per cell.
pub fn split(ctx: &ProbeContext, cells: usize) -> Cell {
    let n = cells.max(1) as u64;
    Cell {
        budget: Budget {
            duration_ns: ctx.budget.duration_ns.map(|d| (d / n).max(1)),
            loops: ctx.budget.loops,
        },
        warmup_ns: ctx.warmup_ns / n,
    }
}

/// A probe's wall time shared among cells measured one after the other, warm-ups and the
/// setting up of each cell included (probes whose
/// [`crate::probe::About::warmup_within_duration`] is set): each cell gets an equal share of
/// what is left of `--duration` when it starts, of which its warm-up (its share of `--warmup`)
/// takes at most half. `loops` stays per cell. The probe then takes its duration, however many
/// sources and placements it measures and however long their threads take to start.
pub struct WallTime {
    deadline_ns: Option<u64>,
    cells_left: u64,
    warmup_each_ns: u64,
    loops: Option<u64>,
    /// The least a cell measures, whatever is left: a cell with no sample says nothing.
    min_cell_ns: u64,
    /// Cells that got [`WallTime::min_cell_ns`] because too little was left: the probe then
    /// takes longer than its duration, and says so ([`WallTime::overrun_note`]).
    pub floored: usize,
    cells: u64,
    duration_ns: Option<u64>,
    /// The share each cell gets when setting up costs nothing (what the result records).
    pub planned: Cell,
}

impl WallTime {
    /// `min_cell_ns`: the least one cell measures (a few of its events).
    pub fn new(ctx: &ProbeContext, cells: usize, min_cell_ns: u64) -> WallTime {
        let n = cells.max(1) as u64;
        let warmup_each_ns = ctx.warmup_ns / n;
        let planned = match ctx.budget.duration_ns {
            Some(d) => {
                let share = (d / n).max(2);
                let warmup_ns = warmup_each_ns.min(share / 2);
                Cell {
                    budget: Budget {
                        duration_ns: Some(share - warmup_ns),
                        loops: ctx.budget.loops,
                    },
                    warmup_ns,
                }
            }
            None => Cell {
                budget: ctx.budget,
                warmup_ns: warmup_each_ns,
            },
        };
        WallTime {
            deadline_ns: ctx.budget.duration_ns.map(|d| now_ns().saturating_add(d)),
            cells_left: n,
            warmup_each_ns,
            loops: ctx.budget.loops,
            min_cell_ns,
            floored: 0,
            cells: n,
            duration_ns: ctx.budget.duration_ns,
            planned,
        }
    }

    /// When cells had to measure longer than their share: what happened and the fix, for the
    /// probe's warnings (`what`: `source × placement pairs`).
    pub fn overrun_note(&self, what: &str) -> Option<String> {
        let d = self.duration_ns?;
        (self.floored > 0).then(|| {
            format!(
                "--duration {} is too short for {} {what}: {} of them measured {} each, so the probe took longer than asked; give at least --duration {}",
                format_duration_ns(d),
                self.cells,
                self.floored,
                format_duration_ns(self.min_cell_ns),
                format_duration_ns(self.cells * self.min_cell_ns * 2)
            )
        })
    }

    /// The budget of the next cell, from what is left now.
    pub fn next_cell(&mut self) -> Cell {
        let n = self.cells_left.max(1);
        self.cells_left = n - 1;
        let Some(deadline) = self.deadline_ns else {
            return self.planned;
        };
        let mut share = (deadline.saturating_sub(now_ns()) / n).max(2);
        let mut warmup_ns = self.warmup_each_ns.min(share / 2);
        if share - warmup_ns < self.min_cell_ns {
            self.floored += 1;
            share = self.min_cell_ns + warmup_ns;
            warmup_ns = warmup_ns.min(self.min_cell_ns);
        }
        Cell {
            budget: Budget {
                duration_ns: Some(share - warmup_ns),
                loops: self.loops,
            },
            warmup_ns,
        }
    }
}

pub fn describe_split(cell: &Cell) -> String {
    let mut parts = Vec::new();
    if let Some(d) = cell.budget.duration_ns {
        parts.push(format_duration_ns(d));
    }
    if let Some(l) = cell.budget.loops {
        parts.push(format!("{l} samples"));
    }
    format!(
        "{} (warm-up {})",
        parts.join(" or "),
        format_duration_ns(cell.warmup_ns)
    )
}

/// Runs `step` repeatedly, discarding what it measures, until `warmup_ns` has passed (at
/// least `min_steps` times), so caches, TLB, page tables and allocator state settle first.
pub fn warm_up(ctx: &ProbeContext, warmup_ns: u64, min_steps: u64, mut step: impl FnMut()) {
    let end = now_ns() + warmup_ns;
    let mut steps = 0u64;
    while !ctx.stopped() && (steps < min_steps || now_ns() < end) {
        step();
        steps += 1;
    }
}

/// Where the two threads of a pair run.
#[derive(Debug, Clone)]
pub struct Place {
    /// same-cpu, cross-cpu or unpinned.
    pub name: &'static str,
    pub lead_cpu: Option<usize>,
    pub follow_cpu: Option<usize>,
}

/// Where each placement ran, for the result: `same-cpu (cpu 0), cross-cpu (cpus 1 and 0)`.
pub fn describe_places(places: &[Place]) -> String {
    places
        .iter()
        .map(|p| p.describe())
        .collect::<Vec<_>>()
        .join(", ")
}

impl Place {
    pub fn describe(&self) -> String {
        match (self.lead_cpu, self.follow_cpu) {
            (Some(a), Some(b)) if a == b => format!("{} (cpu {a})", self.name),
            (Some(a), Some(b)) => format!("{} (cpus {a} and {b})", self.name),
            _ => self.name.to_string(),
        }
    }
}

/// The `placement` parameter of a thread-pair probe: which of [`PLACEMENTS`] to measure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placements {
    pub names: Vec<String>,
    /// Whether the user named placements (otherwise an impossible one is skipped quietly).
    pub explicit: bool,
}

impl Placements {
    pub fn parse(params: &Params) -> Result<Placements, ProbeError> {
        let names = params.choices("placement", "all", &PLACEMENTS)?;
        if names.is_empty() {
            return Err(empty_list(params.probe(), "placement", &PLACEMENTS));
        }
        Ok(Placements {
            names,
            explicit: params.raw().contains_key("placement"),
        })
    }

    /// As the parameter is written back: `same-cpu,cross-cpu`.
    pub fn resolved(&self) -> String {
        self.names.join(",")
    }

    /// The placements that can be honoured here, in CPUs: same-cpu → both threads on the
    /// first measured CPU; cross-cpu → the follow (handler) thread on the first measured CPU,
    /// the lead on the second. One that cannot is left out with a warning saying why; none
    /// left makes the probe unavailable here.
    pub fn resolve(
        &self,
        ctx: &ProbeContext,
        warnings: &mut Vec<String>,
    ) -> Result<Vec<Place>, ProbeError> {
        let places = place_threads(ctx, &self.names, self.explicit, warnings);
        if places.is_empty() {
            return Err(ProbeError::Unavailable(warnings.join("; ")));
        }
        Ok(places)
    }
}

fn place_threads(
    ctx: &ProbeContext,
    requested: &[String],
    explicit: bool,
    warnings: &mut Vec<String>,
) -> Vec<Place> {
    if !ctx.mode.pin {
        if explicit {
            warnings.push(format!(
                "mode {} does not pin threads (the kernel refuses pinned SCHED_DEADLINE tasks): measured unpinned, placement ignored",
                ctx.mode.name
            ));
        }
        return vec![Place {
            name: "unpinned",
            lead_cpu: None,
            follow_cpu: None,
        }];
    }
    let mut places = Vec::new();
    for p in requested {
        match (p.as_str(), ctx.cpus) {
            ("same-cpu", [first, ..]) => places.push(Place {
                name: "same-cpu",
                lead_cpu: Some(*first),
                follow_cpu: Some(*first),
            }),
            ("cross-cpu", [first, second, ..]) => places.push(Place {
                name: "cross-cpu",
                lead_cpu: Some(*second),
                follow_cpu: Some(*first),
            }),
            ("cross-cpu", _) => warnings.push(format!(
                "placement cross-cpu skipped: it needs two measured CPUs and --cpus gave {}",
                crate::cpus::format_cpu_list(ctx.cpus)
            )),
            _ => {}
        }
    }
    places
}

/// One thread of a pair: its name, CPU and execution mode.
pub struct ThreadSpec {
    pub name: &'static str,
    pub cpu: Option<usize>,
    pub mode: Mode,
}

/// The same mode one priority step lower (for a thread that must not preempt its partner).
pub fn one_below(mode: &Mode) -> Mode {
    let mut m = mode.clone();
    if matches!(m.policy, Policy::Fifo | Policy::Rr) && m.priority > 1 {
        m.priority -= 1;
    }
    m
}

/// The start gate of a thread pair: both threads prepare (enter their mode, allocate), then
/// meet here; if either failed, neither starts measuring and the failure is reported.
pub struct Start {
    probe: &'static str,
    state: Mutex<GateState>,
    cv: Condvar,
}

#[derive(Default)]
struct GateState {
    arrived: u8,
    cancelled: bool,
    failed: [bool; 2],
}

impl Start {
    fn new(probe: &'static str) -> Start {
        Start {
            probe,
            state: Mutex::new(GateState::default()),
            cv: Condvar::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, GateState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Called once by each side (0 lead, 1 follow) when prepared; returns when both are,
    /// with an error when the partner could not start.
    pub fn go(&self, side: usize, prepared: Result<(), ProbeError>) -> Result<(), ProbeError> {
        let partner_failed = self.arrive(side, prepared.is_err());
        prepared?;
        if partner_failed {
            return Err(ProbeError::Invalid {
                probe: self.probe,
                message: "the partner thread could not start".into(),
            });
        }
        Ok(())
    }

    /// A side that could not prepare: releases the partner and hands back the error.
    fn refuse(&self, side: usize, error: ProbeError) -> ProbeError {
        self.arrive(side, true);
        error
    }

    /// Waits for both sides; returns whether the partner failed (or was never started).
    fn arrive(&self, side: usize, failed: bool) -> bool {
        let mut g = self.lock();
        g.failed[side] |= failed;
        g.arrived += 1;
        self.cv.notify_all();
        while g.arrived < 2 && !g.cancelled {
            g = self.cv.wait(g).unwrap_or_else(|p| p.into_inner());
        }
        g.failed[1 - side] || g.cancelled
    }

    /// Marks a side as the origin of a failure (so its error, not the partner's, is shown).
    pub fn fail(&self, side: usize) {
        self.lock().failed[side] = true;
    }

    fn cancel(&self) {
        self.lock().cancelled = true;
        self.cv.notify_all();
    }

    fn failed(&self, side: usize) -> bool {
        self.lock().failed[side]
    }
}

/// One thread of a pair (`side` 0 is the lead, 1 the follow): enters its mode, then runs
/// its body; a refusal cancels the pair's start.
fn enter_and_run<R>(
    spec: &ThreadSpec,
    side: usize,
    start: &Start,
    best_effort: bool,
    body: impl FnOnce(&Start) -> Result<R, ProbeError>,
) -> Result<(Obtained, R), ProbeError> {
    let obtained = rt::enter_thread(&spec.mode, spec.cpu, best_effort)
        .map_err(|e| start.refuse(side, e.into()))?;
    body(start).map(|r| (obtained, r))
}

/// Runs a pair of threads, each entered into its own mode and CPU, then `lead` and
/// `follow` on them. Each body must call `start.go(side, …)` once it is prepared.
/// Returns what each thread obtained (follow first: it carries the higher priority where the
/// two differ) and both results; on failure, the error of the side that failed first.
pub fn run_pair<RA: Send, RB: Send>(
    ctx: &ProbeContext,
    probe: &'static str,
    lead: &ThreadSpec,
    follow: &ThreadSpec,
    lead_body: impl FnOnce(&Start) -> Result<RA, ProbeError> + Send,
    follow_body: impl FnOnce(&Start) -> Result<RB, ProbeError> + Send,
) -> Result<(Vec<Obtained>, RA, RB), ProbeError> {
    let start = Start::new(probe);
    let best_effort = ctx.best_effort;
    let (a, b) = std::thread::scope(|scope| {
        let start = &start;
        let spawn_follow = std::thread::Builder::new()
            .name(follow.name.into())
            .spawn_scoped(scope, move || {
                enter_and_run(follow, 1, start, best_effort, follow_body)
            });
        let follow_handle = match spawn_follow {
            Ok(h) => h,
            Err(e) => return (Err(os_error(probe, "spawning a thread", e)), None),
        };
        let lead_result = std::thread::Builder::new()
            .name(lead.name.into())
            .spawn_scoped(scope, move || {
                enter_and_run(lead, 0, start, best_effort, lead_body)
            })
            .map_err(|e| {
                start.fail(0);
                start.cancel();
                os_error(probe, "spawning a thread", e)
            })
            .and_then(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
        let follow_result = follow_handle
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p));
        (lead_result, Some(follow_result))
    });
    let b = match b {
        Some(b) => b,
        None => return Err(a.err().unwrap_or_else(|| unreachable_spawn(probe))),
    };
    match (a, b) {
        (Ok((oa, ra)), Ok((ob, rb))) => Ok((vec![ob, oa], ra, rb)),
        (Err(ea), Err(eb)) => Err(if !start.failed(0) && start.failed(1) {
            eb
        } else {
            ea
        }),
        (Err(e), Ok(_)) | (Ok(_), Err(e)) => Err(e),
    }
}

fn unreachable_spawn(probe: &'static str) -> ProbeError {
    ProbeError::Invalid {
        probe,
        message: "a measuring thread could not be spawned".into(),
    }
}
