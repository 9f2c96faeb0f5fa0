//! Whether a task set fits, from its tasks and this machine's measured overheads: pure
//! arithmetic, no system call, so every rule here is unit-tested against published examples.
//!
//! - Fixed priorities (fifo, rr), per CPU: response-time analysis (Joseph & Pandya 1986;
//!   Audsley et al. 1993 with release jitter), iterated to its fixed point:
//!   `w = C + cs + B + Σ_hp ⌈(w + J_j)/T_j⌉ (C_j + 2 cs)` and `R = J + w`, where `J` is the
//!   release jitter (the wake-up latency measured on that CPU, or for a task released by
//!   another's completion, that task's worst response plus the wake-up), `cs` one context
//!   switch (each preempting job costs two: in and out), `B` the blocking from shared
//!   resources. Tasks of equal priority are counted as interfering with each other (FIFO
//!   among equals may queue a task behind any of them). Deadline tasks on the CPU preempt
//!   every fixed-priority task (SCHED_DEADLINE runs first) and count as higher priority.
//! - Blocking: under priority inheritance a job is blocked at most once per lower-priority
//!   task on its CPU whose critical section uses a resource of ceiling ≥ its priority, and
//!   at most once per such resource (Sha, Rajkumar & Lehoczky 1990): the smaller of the two
//!   sums. A resource without inheritance (`protocol = "none"`) lets any task of middle
//!   priority preempt the holder: when one exists the inversion is unbounded. A resource
//!   also used on other CPUs adds one critical section of each remote user per job.
//! - Deadline tasks (SCHED_DEADLINE, EDF), per CPU: the processor-demand test (Baruah, Mok &
//!   Rosier 1990): for every absolute deadline t up to the synchronous busy period,
//!   `Σ max(0, ⌊(t − D'_i)/T_i⌋ + 1) C'_i ≤ t`, with `C' = C + 2 cs` and `D' = D − J`.
//! - The platform ([`CpuPlatform`]), for fixed-priority tasks: a server that keeps the
//!   real-time tasks off the CPU for `B` of every window `P` (RT throttling: `B = P − Q` once
//!   their demand in a window, `Σ ⌈P/T_j⌉ (C_j + 2 cs)` over the CPU's real-time tasks and
//!   measured real-time threads, exceeds the budget `Q`; the fair server: its runtime, once
//!   that demand exceeds `P − runtime`) is a higher-priority periodic task of work `B` and
//!   period `P` (Lehoczky's periodic-server interference: the takes sit at the windows' ends,
//!   at least `P − B` apart, so a window of length `w` holds at most `⌈w/P⌉ B` of them);
//!   every measured platform thread or interrupt at the task's priority or above is a
//!   higher-priority task of its measured work per window (threads with their two
//!   switches). Each counted term is kept in [`Prediction::terms`].

use super::platform::{CpuPlatform, Server, ServerKind, Term};
use super::spec::{Protocol, TaskPolicy, TaskSet};
use std::collections::BTreeMap;

/// The overheads of one CPU the analysis adds, in ns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Overheads {
    /// Wake-up latency: how late a task starts after its release when nothing else runs.
    pub wakeup_ns: u64,
    /// One context switch.
    pub switch_ns: u64,
}

/// What the analysis predicts for one task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prediction {
    /// Worst-case response (release → completion); None when unbounded (the CPU is
    /// overloaded at this priority, or a priority inversion has no bound).
    pub wcrt_ns: Option<u64>,
    pub deadline_ns: u64,
    /// Blocking from shared resources included in the response.
    pub blocking_ns: u64,
    /// Why the response is unbounded, in words, when it is.
    pub unbounded_because: Option<String>,
    /// The platform's terms counted in the response (servers, preempting threads, IRQs).
    pub terms: Vec<Term>,
}

impl Prediction {
    pub fn fits(&self) -> bool {
        self.wcrt_ns.is_some_and(|r| r <= self.deadline_ns)
    }

    /// Deadline − predicted worst response (negative: late by that much).
    pub fn margin_ns(&self) -> Option<i64> {
        self.wcrt_ns.map(|r| self.deadline_ns as i64 - r as i64)
    }

    /// The margin as a share of the deadline, in %.
    pub fn margin_pct(&self) -> Option<f64> {
        self.margin_ns()
            .map(|m| m as f64 * 100.0 / self.deadline_ns as f64)
    }
}

/// Responses longer than this many of the set's longest period are treated as unbounded.
const HORIZON_PERIODS: u64 = 1000;
/// Rounds of the chained tasks' jitter before giving up on a bound.
const MAX_ROUNDS: usize = 100;
/// The processor-demand test checks at most this many deadlines.
const MAX_DEMAND_POINTS: usize = 1_000_000;

/// Predicts every task's worst response. Tasks without a CPU are on `first_cpu`;
/// `overheads` gives each CPU's figures (missing: zero). No platform terms.
pub fn analyse(
    set: &TaskSet,
    first_cpu: usize,
    overheads: &BTreeMap<usize, Overheads>,
) -> Vec<Prediction> {
    analyse_on(set, first_cpu, overheads, &BTreeMap::new())
}

/// The real-time demand of CPU `cpu` in one window of `period_ns`: the set's fixed-priority
/// tasks there, `⌈P/T⌉ (C + 2 cs)` each, and the measured real-time platform threads.
pub fn realtime_demand(
    set: &TaskSet,
    first_cpu: usize,
    cpu: usize,
    o: Overheads,
    platform: Option<&CpuPlatform>,
    period_ns: u64,
) -> u64 {
    let tasks = set
        .tasks
        .iter()
        .filter(|t| t.cpu.unwrap_or(first_cpu) == cpu && t.policy.fixed_priority())
        .map(|t| {
            period_ns
                .div_ceil(t.period_ns)
                .saturating_mul(t.work_ns + 2 * o.switch_ns)
        })
        .fold(0u64, u64::saturating_add);
    let threads = platform
        .into_iter()
        .flat_map(|p| &p.preemptors)
        .filter(|p| p.realtime)
        .filter_map(|p| p.demand)
        .map(|(work, per)| period_ns.div_ceil(per.max(1)).saturating_mul(work))
        .fold(0u64, u64::saturating_add);
    tasks.saturating_add(threads)
}

/// The servers of `cpu` that act on this set: those whose allowance its real-time demand
/// per window exceeds. A fair server whose take fits in RT throttling's own (same window)
/// is left out: the throttled time already runs the normal tasks.
pub fn acting_servers<'a>(
    set: &TaskSet,
    first_cpu: usize,
    cpu: usize,
    o: Overheads,
    platform: Option<&'a CpuPlatform>,
) -> Vec<&'a Server> {
    let Some(p) = platform else {
        return Vec::new();
    };
    let acting: Vec<&Server> = p
        .servers
        .iter()
        .filter(|s| s.period_ns > 0 && s.blackout_ns() > 0)
        .filter(|s| {
            realtime_demand(set, first_cpu, cpu, o, platform, s.period_ns) > s.allowance_ns()
        })
        .collect();
    let covers = |fair: &Server| {
        acting.iter().any(|t| {
            t.kind == ServerKind::RtThrottling
                && t.period_ns == fair.period_ns
                && t.blackout_ns() >= fair.blackout_ns()
        })
    };
    acting
        .iter()
        .copied()
        .filter(|s| s.kind != ServerKind::FairServer || !covers(s))
        .collect()
}

/// The platform terms of a fixed-priority task at `priority` on a CPU with `platform`:
/// the acting servers, then the measured preemptors at its priority or above.
fn platform_terms(
    acting: &[&Server],
    platform: Option<&CpuPlatform>,
    priority: i32,
    o: Overheads,
) -> Vec<Term> {
    let mut terms: Vec<Term> = acting
        .iter()
        .map(|s| Term {
            name: s.name().to_string(),
            work_ns: s.blackout_ns(),
            per_ns: s.period_ns,
        })
        .collect();
    for p in platform.into_iter().flat_map(|p| &p.preemptors) {
        if let (true, Some((work, per))) = (p.preempts(priority), p.demand) {
            if work > 0 && per > 0 {
                terms.push(Term {
                    name: p.name.clone(),
                    work_ns: work + if p.thread { 2 * o.switch_ns } else { 0 },
                    per_ns: per,
                });
            }
        }
    }
    terms
}

/// [`analyse`] with each CPU's platform: its servers and measured preemptors as
/// higher-priority interference of the fixed-priority tasks.
pub fn analyse_on(
    set: &TaskSet,
    first_cpu: usize,
    overheads: &BTreeMap<usize, Overheads>,
    platform: &BTreeMap<usize, CpuPlatform>,
) -> Vec<Prediction> {
    let cpu_of = |i: usize| set.tasks[i].cpu.unwrap_or(first_cpu);
    let oh = |i: usize| overheads.get(&cpu_of(i)).copied().unwrap_or_default();
    let horizon = set
        .tasks
        .iter()
        .map(|t| t.period_ns)
        .max()
        .unwrap_or(1)
        .saturating_mul(HORIZON_PERIODS);
    let mut predictions: Vec<Option<Prediction>> = vec![None; set.tasks.len()];
    // Deadline tasks first: they preempt the fixed-priority ones.
    for cpu in set
        .tasks
        .iter()
        .enumerate()
        .map(|(i, _)| cpu_of(i))
        .collect::<std::collections::BTreeSet<_>>()
    {
        let members: Vec<usize> = (0..set.tasks.len())
            .filter(|&i| cpu_of(i) == cpu && set.tasks[i].policy == TaskPolicy::Deadline)
            .collect();
        if members.is_empty() {
            continue;
        }
        let o = overheads.get(&cpu).copied().unwrap_or_default();
        let fits = demand_test(set, &members, o);
        for &i in &members {
            predictions[i] = Some(Prediction {
                wcrt_ns: fits.then_some(set.tasks[i].deadline_ns),
                deadline_ns: set.tasks[i].deadline_ns,
                blocking_ns: 0,
                unbounded_because: (!fits).then(|| {
                    format!("the deadline tasks of CPU {cpu} ask more than it has in some interval (processor-demand test)")
                }),
                terms: Vec::new(),
            });
        }
    }
    // Fixed priorities, in an order where a chain's predecessor comes first (its response
    // is the successor's release jitter). Chains are acyclic (checked when read).
    let mut order: Vec<usize> = (0..set.tasks.len()).collect();
    order.sort_by_key(|&i| chain_depth(set, i));
    // A chained task's jitter is its predecessor's response, which depends on the jitter of
    // the tasks above it: iterate to the fixed point (holistic analysis, Tindell & Clark 1994).
    let mut jitter: Vec<u64> = (0..set.tasks.len()).map(|i| oh(i).wakeup_ns).collect();
    let mut converged = false;
    for _ in 0..MAX_ROUNDS {
        let before = jitter.clone();
        for &i in &order {
            let task = &set.tasks[i];
            let o = oh(i);
            jitter[i] = match task.after {
                None => Some(o.wakeup_ns),
                Some(p) => predictions[p]
                    .as_ref()
                    .and_then(|p| p.wcrt_ns)
                    .map(|r| r.saturating_add(o.wakeup_ns)),
            }
            .unwrap_or(u64::MAX);
            if task.policy == TaskPolicy::Deadline {
                continue;
            }
            let (blocking, inversion) = blocking(set, i, first_cpu);
            let mut unbounded_because = inversion;
            let interferers: Vec<usize> = (0..set.tasks.len())
                .filter(|&j| j != i && cpu_of(j) == cpu_of(i))
                .filter(|&j| {
                    let other = &set.tasks[j];
                    match (task.policy, other.policy) {
                        (_, TaskPolicy::Deadline) => true,
                        (TaskPolicy::Other, TaskPolicy::Fifo | TaskPolicy::Rr) => true,
                        (TaskPolicy::Other, TaskPolicy::Other) => true,
                        (_, TaskPolicy::Other) => false,
                        _ => other.priority >= task.priority,
                    }
                })
                .collect();
            let on = platform.get(&cpu_of(i));
            let terms = if task.policy.fixed_priority() {
                let acting = acting_servers(set, first_cpu, cpu_of(i), o, on);
                platform_terms(&acting, on, task.priority, o)
            } else {
                Vec::new()
            };
            let mut wcrt = None;
            if jitter[i] == u64::MAX {
                unbounded_because.get_or_insert_with(|| {
                    format!(
                        "{}, which releases it, has no bound",
                        set.tasks[task.after.unwrap_or(i)].name
                    )
                });
            }
            if unbounded_because.is_none() {
                let own_level: f64 = (task.work_ns + o.switch_ns) as f64 / task.period_ns as f64
                    + interferers
                        .iter()
                        .map(|&j| {
                            (set.tasks[j].work_ns + 2 * o.switch_ns) as f64
                                / set.tasks[j].period_ns as f64
                        })
                        .sum::<f64>();
                let level = own_level
                    + terms
                        .iter()
                        .map(|t| t.work_ns as f64 / t.per_ns as f64)
                        .sum::<f64>();
                let busy_window = (level <= 1.0)
                    .then(|| {
                        busy_window(
                            task.period_ns,
                            task.work_ns + o.switch_ns,
                            blocking,
                            jitter[i],
                            horizon,
                            |w| {
                                interferers
                                    .iter()
                                    .map(|&j| {
                                        (w.saturating_add(jitter_of(&jitter, j)))
                                            .div_ceil(set.tasks[j].period_ns)
                                            .saturating_mul(set.tasks[j].work_ns + 2 * o.switch_ns)
                                    })
                                    .chain(terms.iter().map(|t| t.interference(w)))
                                    .fold(0u64, u64::saturating_add)
                            },
                        )
                    })
                    .flatten();
                match busy_window {
                    Some(r) => wcrt = Some(r),
                    None if own_level <= 1.0 && !terms.is_empty() => {
                        unbounded_because = Some(format!(
                            "the tasks of CPU {} at its priority or above need more than {} leave{} them",
                            cpu_of(i),
                            terms.iter().map(Term::describe_plain).collect::<Vec<_>>().join(" and "),
                            if terms.len() == 1 { "s" } else { "" }
                        ))
                    }
                    None => {
                        unbounded_because = Some(format!(
                        "the tasks of CPU {} at its priority or above need more than the CPU has",
                        cpu_of(i)
                    ))
                    }
                }
            }
            predictions[i] = Some(Prediction {
                wcrt_ns: wcrt,
                deadline_ns: task.deadline_ns,
                blocking_ns: blocking,
                unbounded_because,
                terms,
            });
        }
        if jitter == before {
            converged = true;
            break;
        }
    }
    if !converged {
        for (i, p) in predictions.iter_mut().enumerate() {
            if let (Some(p), Some(_)) = (p.as_mut(), set.tasks[i].after) {
                p.wcrt_ns = None;
                p.unbounded_because = Some("the responses along its chain do not settle".into());
            }
        }
    }
    predictions
        .into_iter()
        .map(|p| p.expect("every task analysed"))
        .collect()
}

/// The worst response of a task of period `t`, work `c` (its own switch included) and
/// blocking `b`, released with jitter `j`, under the interference `hp(w)` of the tasks above
/// it in a window of length `w`: the busy-window analysis (Lehoczky 1990, with jitter as in
/// Tindell et al. 1994), which covers responses longer than the period too. Job q of the
/// busy window ends at the fixed point `w_q = (q + 1) c + b + hp(w_q)`, so its response is
/// `w_q − q t + j`; the window closes at the first job done before the next release.
/// None when a window outgrows `horizon` (no bound).
fn busy_window(
    t: u64,
    c: u64,
    b: u64,
    j: u64,
    horizon: u64,
    hp: impl Fn(u64) -> u64,
) -> Option<u64> {
    let mut worst = 0u64;
    let mut q = 0u64;
    loop {
        let base = (q + 1).saturating_mul(c).saturating_add(b);
        let mut w = base;
        loop {
            let next = base.saturating_add(hp(w));
            if next == w {
                break;
            }
            if next > horizon {
                return None;
            }
            w = next;
        }
        worst = worst.max((w + j).saturating_sub(q * t));
        if w + j <= (q + 1) * t {
            return Some(worst);
        }
        q += 1;
    }
}

/// A task's release jitter as interference: an unknown one (its predecessor unbounded)
/// counts as one period, so the sum stays finite; the task itself is already unbounded.
fn jitter_of(jitter: &[u64], j: usize) -> u64 {
    jitter[j].min(u64::MAX / 4)
}

fn chain_depth(set: &TaskSet, i: usize) -> usize {
    let mut depth = 0;
    let mut at = set.tasks[i].after;
    while let Some(p) = at {
        depth += 1;
        at = set.tasks[p].after;
        if depth > set.tasks.len() {
            break;
        }
    }
    depth
}

/// The blocking term of task `i`, and why it is unbounded when it is.
fn blocking(set: &TaskSet, i: usize, first_cpu: usize) -> (u64, Option<String>) {
    let cpu_of = |k: usize| set.tasks[k].cpu.unwrap_or(first_cpu);
    let task = &set.tasks[i];
    if !task.policy.fixed_priority() {
        return (0, None);
    }
    // The ceiling of a resource: the highest priority of the tasks on CPU `cpu` using it.
    let ceiling = |r: usize| {
        set.tasks
            .iter()
            .enumerate()
            .filter(|(k, t)| cpu_of(*k) == cpu_of(i) && t.critical.is_some_and(|c| c.resource == r))
            .map(|(_, t)| t.priority)
            .max()
            .unwrap_or(0)
    };
    let mut per_task_sum = 0u64;
    let mut per_resource: BTreeMap<usize, u64> = BTreeMap::new();
    for (l, lower) in set.tasks.iter().enumerate() {
        let Some(c) = lower.critical else { continue };
        if l == i || cpu_of(l) != cpu_of(i) || !lower.policy.fixed_priority() {
            continue;
        }
        if lower.priority >= task.priority || ceiling(c.resource) < task.priority {
            continue;
        }
        if set.resources[c.resource].protocol == Protocol::None {
            let middle = set.tasks.iter().enumerate().find(|(m, t)| {
                cpu_of(*m) == cpu_of(i)
                    && t.policy.fixed_priority()
                    && t.priority > lower.priority
                    && t.priority < task.priority
            });
            if let Some((_, m)) = middle {
                return (
                    0,
                    Some(format!(
                        "{} holds {} without priority inheritance and {} can preempt it for as long as it runs (unbounded priority inversion); use protocol = \"pi\"",
                        lower.name, set.resources[c.resource].name, m.name
                    )),
                );
            }
        }
        per_task_sum += c.length_ns;
        let e = per_resource.entry(c.resource).or_default();
        *e = (*e).max(c.length_ns);
    }
    let local = per_task_sum.min(per_resource.values().sum());
    // Users of the same resource on other CPUs: one critical section each per job.
    let remote: u64 = match task.critical {
        None => 0,
        Some(mine) => set
            .tasks
            .iter()
            .enumerate()
            .filter(|(k, t)| {
                cpu_of(*k) != cpu_of(i) && t.critical.is_some_and(|c| c.resource == mine.resource)
            })
            .map(|(_, t)| t.critical.map_or(0, |c| c.length_ns))
            .sum(),
    };
    (local + remote, None)
}

/// The processor-demand test of the deadline tasks `members` of one CPU.
fn demand_test(set: &TaskSet, members: &[usize], o: Overheads) -> bool {
    struct Job {
        c: u64,
        d: u64,
        t: u64,
    }
    let mut jobs = Vec::with_capacity(members.len());
    for &i in members {
        let task = &set.tasks[i];
        if o.wakeup_ns >= task.deadline_ns {
            return false;
        }
        jobs.push(Job {
            c: task.work_ns + 2 * o.switch_ns,
            d: task.deadline_ns - o.wakeup_ns,
            t: task.period_ns,
        });
    }
    let utilisation: f64 = jobs.iter().map(|j| j.c as f64 / j.t as f64).sum();
    if utilisation > 1.0 {
        return false;
    }
    // The synchronous busy period bounds the deadlines to check.
    let mut busy: u64 = jobs.iter().map(|j| j.c).sum();
    let horizon = jobs.iter().map(|j| j.t).max().unwrap_or(1) * HORIZON_PERIODS;
    loop {
        let next: u64 = jobs.iter().map(|j| busy.div_ceil(j.t) * j.c).sum();
        if next == busy {
            break;
        }
        if next > horizon {
            return false;
        }
        busy = next;
    }
    let mut points = Vec::new();
    for j in &jobs {
        let mut t = j.d;
        while t <= busy && points.len() < MAX_DEMAND_POINTS {
            points.push(t);
            t += j.t;
        }
    }
    points.iter().all(|&t| {
        let demand: u64 = jobs
            .iter()
            .filter(|j| t >= j.d)
            .map(|j| ((t - j.d) / j.t + 1) * j.c)
            .sum();
        demand <= t
    })
}

#[cfg(test)]
mod tests {
    use super::super::spec::{Critical, Resource, Task};
    use super::*;

    const US: u64 = 1_000;

    fn task(name: &str, period: u64, work: u64, priority: i32) -> Task {
        Task {
            name: name.into(),
            period_ns: period,
            work_ns: work,
            priority,
            policy: TaskPolicy::Fifo,
            cpu: Some(0),
            deadline_ns: period,
            offset_ns: 0,
            critical: None,
            after: None,
            dl_runtime_ns: None,
        }
    }

    fn set(tasks: Vec<Task>) -> TaskSet {
        TaskSet {
            tasks,
            resources: Vec::new(),
            programs: Default::default(),
        }
    }

    fn no_overheads() -> BTreeMap<usize, Overheads> {
        BTreeMap::new()
    }

    fn wcrts(set: &TaskSet, oh: &BTreeMap<usize, Overheads>) -> Vec<Option<u64>> {
        analyse(set, 0, oh).into_iter().map(|p| p.wcrt_ns).collect()
    }

    /// Burns & Wellings, "Real-Time Systems and Programming Languages" (3rd ed. §13.5,
    /// Table 13.7; 4th ed. §11.5): tasks a (T=7, C=3, P=3), b (T=12, C=3, P=2),
    /// c (T=20, C=5, P=1) have worst-case responses 3, 6 and 20.
    #[test]
    fn burns_and_wellings_response_time_example() {
        let s = set(vec![
            task("a", 7 * US, 3 * US, 3),
            task("b", 12 * US, 3 * US, 2),
            task("c", 20 * US, 5 * US, 1),
        ]);
        assert_eq!(
            wcrts(&s, &no_overheads()),
            [Some(3 * US), Some(6 * US), Some(20 * US)]
        );
        assert!(analyse(&s, 0, &no_overheads()).iter().all(Prediction::fits));
    }

    /// Buttazzo, "Hard Real-Time Computing Systems" (ch. 4, response-time analysis under
    /// rate monotonic): τ1 (C=1, T=4), τ2 (C=2, T=6), τ3 (C=3, T=10): R = 1, 3, 10; the set
    /// is schedulable although its utilisation (0.883) is above the Liu & Layland bound
    /// for three tasks (0.780).
    #[test]
    fn buttazzo_rate_monotonic_example() {
        let s = set(vec![
            task("t1", 4 * US, US, 3),
            task("t2", 6 * US, 2 * US, 2),
            task("t3", 10 * US, 3 * US, 1),
        ]);
        assert_eq!(
            wcrts(&s, &no_overheads()),
            [Some(US), Some(3 * US), Some(10 * US)]
        );
        // One more unit of work for t3 and it misses (R = 4 + 3 + 4 ... > 10).
        let mut late = s.clone();
        late.tasks[2].work_ns = 4 * US;
        let p = analyse(&late, 0, &no_overheads());
        assert!(!p[2].fits(), "{:?}", p[2]);
        assert!(p[0].fits() && p[1].fits());
    }

    /// Release jitter and switch costs, worked by hand: a (T=10, C=2), b (T=20, C=5) with
    /// J = 1 and cs = 0.5: R_a = 1 + 2 + 0.5 = 3.5; w_b = 5 + 0.5 + ⌈(w+1)/10⌉(2 + 1):
    /// 5.5 → 8.5 → 8.5, R_b = 9.5.
    #[test]
    fn jitter_and_switches_are_added_as_in_the_formula() {
        let s = set(vec![
            task("a", 10 * US, 2 * US, 2),
            task("b", 20 * US, 5 * US, 1),
        ]);
        let oh = BTreeMap::from([(
            0,
            Overheads {
                wakeup_ns: US,
                switch_ns: US / 2,
            },
        )]);
        assert_eq!(wcrts(&s, &oh), [Some(3_500), Some(9_500)]);
    }

    /// Priority inheritance: l (lowest) holds `bus` for 2, h (highest) uses it, m in the
    /// middle does not: h is blocked once for 2; m too (push-through blocking, the ceiling
    /// of bus is h's priority). Without inheritance h's inversion is unbounded because m
    /// can preempt l.
    #[test]
    fn blocking_under_inheritance_and_unbounded_inversion_without() {
        let mut h = task("h", 10 * US, US, 3);
        let m = task("m", 20 * US, 3 * US, 2);
        let mut l = task("l", 40 * US, 5 * US, 1);
        h.critical = Some(Critical {
            resource: 0,
            length_ns: US / 2,
        });
        l.critical = Some(Critical {
            resource: 0,
            length_ns: 2 * US,
        });
        let mut s = set(vec![h, m, l]);
        s.resources.push(Resource {
            name: "bus".into(),
            protocol: Protocol::Inherit,
        });
        let p = analyse(&s, 0, &no_overheads());
        assert_eq!(p[0].blocking_ns, 2 * US);
        assert_eq!(p[0].wcrt_ns, Some(3 * US));
        assert_eq!(p[1].blocking_ns, 2 * US);
        assert_eq!(p[2].blocking_ns, 0);
        s.resources[0].protocol = Protocol::None;
        let p = analyse(&s, 0, &no_overheads());
        assert_eq!(p[0].wcrt_ns, None);
        let why = p[0].unbounded_because.as_deref().unwrap();
        assert!(why.contains("m can preempt it"), "{why}");
    }

    /// Over 100 % of a CPU at some priority level: no bound, said in words.
    #[test]
    fn an_overloaded_cpu_gives_no_bound_for_the_lowest_task() {
        let s = set(vec![
            task("a", 10 * US, 6 * US, 2),
            task("b", 10 * US, 5 * US, 1),
        ]);
        let p = analyse(&s, 0, &no_overheads());
        assert_eq!(p[0].wcrt_ns, Some(6 * US));
        assert_eq!(p[1].wcrt_ns, None);
        assert!(p[1]
            .unbounded_because
            .as_deref()
            .unwrap()
            .contains("more than the CPU has"));
    }

    /// EDF with implicit deadlines fits exactly when U ≤ 1 (Liu & Layland 1973);
    /// constrained deadlines by the demand test: (C=2, D=3, T=4) and (C=2, D=3, T=6) ask 4
    /// units by t = 3.
    #[test]
    fn demand_test_for_deadline_tasks() {
        let dl = |name: &str, t: u64, c: u64, d: u64| Task {
            policy: TaskPolicy::Deadline,
            priority: 0,
            deadline_ns: d,
            ..task(name, t, c, 0)
        };
        let full = set(vec![
            dl("a", 4 * US, 2 * US, 4 * US),
            dl("b", 6 * US, 3 * US, 6 * US),
        ]);
        assert!(analyse(&full, 0, &no_overheads())
            .iter()
            .all(Prediction::fits));
        let tight = set(vec![
            dl("a", 4 * US, 2 * US, 3 * US),
            dl("b", 6 * US, 2 * US, 3 * US),
        ]);
        assert!(analyse(&tight, 0, &no_overheads())
            .iter()
            .all(|p| !p.fits()));
        // A deadline task preempts fixed-priority ones on its CPU.
        let mixed = set(vec![
            dl("d", 10 * US, 4 * US, 10 * US),
            task("f", 10 * US, 3 * US, 90),
        ]);
        assert_eq!(analyse(&mixed, 0, &no_overheads())[1].wcrt_ns, Some(7 * US));
    }

    /// A task released by another's completion inherits its worst response as jitter.
    #[test]
    fn a_chained_task_is_released_by_its_predecessor() {
        let mut b = task("b", 10 * US, 2 * US, 1);
        b.after = Some(0);
        let s = set(vec![task("a", 10 * US, 3 * US, 2), b]);
        let oh = BTreeMap::from([(
            0,
            Overheads {
                wakeup_ns: US,
                switch_ns: 0,
            },
        )]);
        let p = analyse(&s, 0, &oh);
        // a: 1 + 3 = 4; b released at most 4 + 1 after the period start, then 2 + a's 3.
        assert_eq!(p[0].wcrt_ns, Some(4 * US));
        assert_eq!(p[1].wcrt_ns, Some(5 * US + 5 * US));
    }

    /// A chained task's jitter reaches the tasks below it: sensor (T=5, C=0.5), filter
    /// after sensor (C=1, so J = R_sensor = 0.5), logger (T=20, C=3.2) lowest. Worked by hand:
    /// w = 3.2 + ⌈w/5⌉ 0.5 + ⌈(w + 0.5)/5⌉ 1: 4.7 → 5.7 → 6.2 → 6.2 (without filter's
    /// jitter it would stop at 4.7).
    #[test]
    fn a_chained_tasks_jitter_delays_the_tasks_below_it() {
        let mut filter = task("filter", 5 * US, US, 75);
        filter.after = Some(0);
        let s = set(vec![
            task("sensor", 5 * US, US / 2, 80),
            filter,
            task("logger", 20 * US, 3_200, 40),
        ]);
        let p = analyse(&s, 0, &no_overheads());
        assert_eq!(p[0].wcrt_ns, Some(500));
        assert_eq!(p[1].wcrt_ns, Some(2_000));
        assert_eq!(p[2].wcrt_ns, Some(6_200));
    }

    fn throttling(runtime: u64, period: u64) -> CpuPlatform {
        CpuPlatform {
            servers: vec![Server {
                kind: ServerKind::RtThrottling,
                runtime_ns: runtime,
                period_ns: period,
                source: "kernel.sched_rt_runtime_us".into(),
            }],
            preemptors: Vec::new(),
        }
    }

    /// Burns & Wellings' set (a: T=7, C=3; b: T=12, C=3; c: T=20, C=5) under RT throttling
    /// of 9 per 10: its demand in a window of 10 is ⌈10/7⌉3 + ⌈10/12⌉3 + ⌈10/20⌉5 = 14 > 9, so
    /// the throttle acts, a higher-priority task of 1 every 10. Worked by hand:
    /// R_a = 3 + ⌈w/10⌉1 = 4; w_b = 3 + ⌈w/7⌉3 + ⌈w/10⌉1: 3 → 7 → 7, R_b = 7; c's level is
    /// 3/7 + 3/12 + 5/20 + 1/10 = 1.03 > 1: no bound, with throttling named.
    #[test]
    fn rt_throttling_is_a_higher_priority_periodic_server() {
        let s = set(vec![
            task("a", 7 * US, 3 * US, 3),
            task("b", 12 * US, 3 * US, 2),
            task("c", 20 * US, 5 * US, 1),
        ]);
        let platform = BTreeMap::from([(0, throttling(9 * US, 10 * US))]);
        assert_eq!(
            realtime_demand(&s, 0, 0, Overheads::default(), platform.get(&0), 10 * US),
            14 * US
        );
        let p = analyse_on(&s, 0, &no_overheads(), &platform);
        assert_eq!(p[0].wcrt_ns, Some(4 * US));
        assert_eq!(p[1].wcrt_ns, Some(7 * US));
        assert_eq!(p[2].wcrt_ns, None);
        let why = p[2].unbounded_because.as_deref().unwrap();
        assert!(why.contains("RT throttling 1µs per 10µs"), "{why}");
        assert_eq!(
            p[0].terms,
            [Term {
                name: "RT throttling".into(),
                work_ns: US,
                per_ns: 10 * US
            }]
        );
        // A budget the set never reaches adds nothing: ⌈100/7⌉3 + ⌈100/12⌉3 + ⌈100/20⌉5 =
        // 45 + 27 + 25 = 97 ≤ 99 per 100.
        let roomy = BTreeMap::from([(0, throttling(99 * US, 100 * US))]);
        assert_eq!(
            realtime_demand(&s, 0, 0, Overheads::default(), roomy.get(&0), 100 * US),
            97 * US
        );
        let q = analyse_on(&s, 0, &no_overheads(), &roomy);
        assert_eq!(q, analyse(&s, 0, &no_overheads()));
    }

    /// The three tasks of one CPU at 97.5 % (2 ms / 400 µs, 4 ms / 900 µs, 10 ms / 5.5 ms) ask
    /// 975 ms of every second; throttling at 950 ms per 1 s stops them for 50 ms: the top
    /// task's worst response is 400 µs + 50 ms = 50.4 ms (a run of it measured 50.4 ms),
    /// far past its 2 ms deadline, and the lowest has no bound. Without throttling the top
    /// task's response is its work alone.
    #[test]
    fn a_set_above_the_throttling_budget_does_not_fit() {
        const MS: u64 = 1_000_000;
        let s = set(vec![
            task("a", 2 * MS, 400 * US, 90),
            task("b", 4 * MS, 900 * US, 80),
            task("c", 10 * MS, 5_500 * US, 70),
        ]);
        let platform = BTreeMap::from([(0, throttling(950 * MS, 1_000 * MS))]);
        let p = analyse_on(&s, 0, &no_overheads(), &platform);
        assert_eq!(p[0].wcrt_ns, Some(50_400 * US));
        assert!(p.iter().all(|p| !p.fits()), "{p:?}");
        assert_eq!(p[2].wcrt_ns, None);
        let off = analyse(&s, 0, &no_overheads());
        assert_eq!(off[0].wcrt_ns, Some(400 * US));
        assert!(off[0].fits() && off[1].fits());
    }

    /// The fair server takes its runtime once the real-time demand leaves less than that to
    /// normal tasks; inside RT throttling's own take (same window) it adds nothing more.
    #[test]
    fn the_fair_server_acts_like_throttling_and_is_not_counted_twice() {
        let s = set(vec![task("a", 12 * US, 9_500, 2)]);
        let fair = Server {
            kind: ServerKind::FairServer,
            runtime_ns: 2 * US,
            period_ns: 20 * US,
            source: "debugfs".into(),
        };
        // Demand ⌈20/12⌉9.5 = 19 per 20 > 20 − 2: the server acts, R = 9.5 + ⌈w/20⌉2 = 11.5.
        let only_fair = BTreeMap::from([(
            0,
            CpuPlatform {
                servers: vec![fair.clone()],
                preemptors: Vec::new(),
            },
        )]);
        let p = analyse_on(&s, 0, &no_overheads(), &only_fair);
        assert_eq!(p[0].wcrt_ns, Some(11_500));
        assert_eq!(p[0].terms[0].name, "fair server");
        let mut both = throttling(17 * US, 20 * US);
        both.servers.push(fair);
        let p = analyse_on(&s, 0, &no_overheads(), &BTreeMap::from([(0, both)]));
        // Throttling (3 per 20) acts too and its take holds the fair server's. Job 0 ends at
        // 12.5, after the next release: the busy window goes on, job 1 ends at
        // w = 19 + ⌈w/20⌉3 = 25, a response of 25 − 12 = 13; job 2 at 34.5 ≤ 36 closes it.
        assert_eq!(p[0].terms.len(), 1, "{:?}", p[0].terms);
        assert_eq!(p[0].wcrt_ns, Some(13 * US));
    }

    /// A measured platform thread above the task is one more higher-priority task (with its
    /// two switches); one below it is not counted; an unmeasured one is left out.
    #[test]
    fn measured_preemptors_above_a_task_are_interference() {
        use super::super::platform::Preemptor;
        let s = set(vec![task("a", 5 * US, 2 * US, 90)]);
        let helper = |priority: i32, demand| Preemptor {
            name: "helper".into(),
            priority,
            thread: true,
            realtime: true,
            demand,
        };
        let on = |p: Preemptor| {
            BTreeMap::from([(
                0,
                CpuPlatform {
                    servers: Vec::new(),
                    preemptors: vec![p],
                },
            )])
        };
        let oh = BTreeMap::from([(
            0,
            Overheads {
                wakeup_ns: 0,
                switch_ns: 100,
            },
        )]);
        // R = 2 + 0.1 + ⌈w/5⌉(0.3 + 0.2) = 2.6.
        let p = analyse_on(&s, 0, &oh, &on(helper(95, Some((300, 5 * US)))));
        assert_eq!(p[0].wcrt_ns, Some(2_600));
        assert_eq!(p[0].terms[0].describe(), "+ helper 500ns per 5µs");
        let below = analyse_on(&s, 0, &oh, &on(helper(50, Some((300, 5 * US)))));
        assert_eq!(below[0].wcrt_ns, Some(2_100));
        let unmeasured = analyse_on(&s, 0, &oh, &on(helper(95, None)));
        assert_eq!(unmeasured[0].wcrt_ns, Some(2_100));
        assert!(unmeasured[0].terms.is_empty());
    }

    use proptest::prelude::*;

    fn any_set() -> impl Strategy<Value = TaskSet> {
        prop::collection::vec((1u64..50, 1u64..20, 1i32..5, 0usize..2), 1..6).prop_map(|ts| {
            set(ts
                .into_iter()
                .enumerate()
                .map(|(i, (t, c, p, cpu))| {
                    let period = t * 10 * US;
                    let mut k = task(&format!("t{i}"), period, (c * US).min(period), p);
                    k.cpu = Some(cpu);
                    k
                })
                .collect())
        })
    }

    proptest! {
        /// More work for any task never shrinks any prediction (None counts as infinite).
        #[test]
        fn raising_any_work_never_shrinks_a_prediction(
            s in any_set(),
            which in 0usize..6,
            extra in 1u64..5_000,
            wake in 0u64..2_000,
            switch in 0u64..500,
        ) {
            let which = which % s.tasks.len();
            let oh = BTreeMap::from([
                (0, Overheads { wakeup_ns: wake, switch_ns: switch }),
                (1, Overheads { wakeup_ns: wake / 2, switch_ns: switch }),
            ]);
            let before = analyse(&s, 0, &oh);
            let mut raised = s.clone();
            raised.tasks[which].work_ns += extra;
            let after = analyse(&raised, 0, &oh);
            for (b, a) in before.iter().zip(&after) {
                let inf = |p: &Prediction| p.wcrt_ns.unwrap_or(u64::MAX);
                prop_assert!(inf(a) >= inf(b), "{:?} -> {:?}", b, a);
            }
        }

        /// A smaller RT throttling budget (or a larger fair server) never shrinks a
        /// prediction.
        #[test]
        fn a_smaller_budget_never_shrinks_a_prediction(
            s in any_set(),
            period in 20u64..400,
            budget in 0u64..1_000,
            less in 1u64..1_000,
            fair in prop::bool::ANY,
        ) {
            let period = period * 10 * US;
            let budget = budget * period / 1_000;
            let smaller = budget.saturating_sub(less * period / 1_000);
            let server = |runtime| {
                let mut p = throttling(runtime, period);
                if fair {
                    // The same window reserved for normal tasks: runtime = what is not budget.
                    p.servers[0].kind = ServerKind::FairServer;
                    p.servers[0].runtime_ns = period - runtime;
                }
                BTreeMap::from([(0, p.clone()), (1, p)])
            };
            let before = analyse_on(&s, 0, &no_overheads(), &server(budget));
            let after = analyse_on(&s, 0, &no_overheads(), &server(smaller));
            for (b, a) in before.iter().zip(&after) {
                prop_assert!(a.wcrt_ns.unwrap_or(u64::MAX) >= b.wcrt_ns.unwrap_or(u64::MAX), "{:?} -> {:?}", b, a);
            }
        }

        /// Bigger overheads never shrink a prediction either.
        #[test]
        fn larger_overheads_never_shrink_a_prediction(s in any_set(), wake in 0u64..2_000, more in 1u64..2_000) {
            let small = BTreeMap::from([(0, Overheads { wakeup_ns: wake, switch_ns: 100 }), (1, Overheads { wakeup_ns: wake, switch_ns: 100 })]);
            let large = BTreeMap::from([(0, Overheads { wakeup_ns: wake + more, switch_ns: 100 + more }), (1, Overheads { wakeup_ns: wake + more, switch_ns: 100 + more })]);
            for (b, a) in analyse(&s, 0, &small).iter().zip(&analyse(&s, 0, &large)) {
                prop_assert!(a.wcrt_ns.unwrap_or(u64::MAX) >= b.wcrt_ns.unwrap_or(u64::MAX));
            }
        }
    }
}
