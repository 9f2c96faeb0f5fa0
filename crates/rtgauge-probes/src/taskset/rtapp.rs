//! rt-app's JSON task descriptions, read as rt-app reads them ([`super::lenient`]): the
//! `global` object, and tasks with `instance`, `loop`, `priority`, `policy`, `cpus`,
//! `dl-runtime`/`dl-period`/`dl-deadline`, `delay` and `phases` of events. A task that is a
//! periodic job (its events `run` then one `timer`, looping until the end) becomes one of
//! rtgauge's periodic tasks, analysed and run as any; every other task runs its events in
//! order ([`super::program`]). Anything rt-app can say that rtgauge does not run is refused
//! by name (task, phase, event), never dropped silently; what is read but applied
//! differently is noted in the run's parameters.

use super::lenient::{self, Json};
use super::program::{Objects, Phase, ProgramTask, Programs, Step, TimerRef};
use super::spec::{self, Platform, TaskPolicy, TaskSet, TaskSetError};

/// A task's own keys (its events aside).
const TASK_KEYS: [&str; 10] = [
    "instance",
    "loop",
    "priority",
    "policy",
    "cpus",
    "dl-runtime",
    "dl-period",
    "dl-deadline",
    "delay",
    "phases",
];
/// rt-app's events, longest first where one name begins another (`runtime`, `run`). A key
/// may carry a number after the name (`run1`, `sleep2`), as rt-app's files often do to keep
/// keys unique.
const EVENTS: [&str; 17] = [
    "runtime", "run", "sleep", "timer", "lock", "unlock", "wait", "signal", "broad", "sync",
    "barrier", "suspend", "resume", "yield", "mem", "iorun", "fork",
];
/// `global` keys about rt-app's own logs and tracing: accepted, and rtgauge's results
/// stand in their place.
const LOG_KEYS: [&str; 7] = [
    "logdir",
    "log_basedir",
    "log_basename",
    "log_size",
    "ftrace",
    "gnuplot",
    "frag",
];
/// rt-app keeps at most this many threads forked by one task.
pub(super) const FORKS_LIMIT: usize = 1024;

fn error(task: Option<&str>, field: Option<&str>, problem: impl Into<String>) -> TaskSetError {
    TaskSetError {
        task: task.map(str::to_string),
        field: field.map(str::to_string),
        problem: problem.into(),
    }
}

/// The event a key names (`run2` is a `run`), if any.
fn event_kind(key: &str) -> Option<&'static str> {
    EVENTS.iter().copied().find(|e| {
        key.strip_prefix(e)
            .is_some_and(|rest| rest.chars().all(|c| c.is_ascii_digit()))
    })
}

/// A name as rtgauge's series labels take it: letters, digits, - and _.
fn label_name(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if cleaned.is_empty() {
        "task".into()
    } else {
        cleaned
    }
}

/// What `global` says that applies to the tasks.
struct Global {
    default_policy: String,
    pi: bool,
    io_device: String,
    mem_buffer: usize,
}

fn read_global(doc: &Json, notes: &mut Vec<String>) -> Result<Global, TaskSetError> {
    let mut g = Global {
        default_policy: "SCHED_OTHER".into(),
        pi: false,
        io_device: "/dev/null".into(),
        mem_buffer: 4 << 20,
    };
    let Some(global) = doc.get("global") else {
        return Ok(g);
    };
    let Some(entries) = global.as_object() else {
        return Err(error(None, Some("global"), "is not a JSON object"));
    };
    let mut logs = Vec::new();
    for (key, v) in entries {
        let bad = |what: &str| {
            error(
                None,
                Some(&format!("global.{key}")),
                format!("{v} is not {what}"),
            )
        };
        match key.as_str() {
            "duration" => notes.push(format!(
                "global duration {v} s not used: the run lasts --duration"
            )),
            "calibration" => notes.push(format!(
                "calibration {v} not used: rtgauge times its busy loop on each CPU it runs on, and `run` is that loop for the given CPU time"
            )),
            "default_policy" => {
                g.default_policy = v.as_str().ok_or_else(|| bad("a policy name"))?.to_string()
            }
            "pi_enabled" => {
                g.pi = match v {
                    Json::Bool(b) => *b,
                    _ => return Err(bad("true or false")),
                }
            }
            "lock_pages" => notes.push(format!(
                "lock_pages {v} not used: memory is locked as the run's mode says (--mode rt locks it)"
            )),
            "cumulative_slack" => notes.push(
                "cumulative_slack not used: rtgauge reports each timer's wake-up latency, not slack"
                    .into(),
            ),
            "io_device" => {
                g.io_device = v.as_str().ok_or_else(|| bad("a path"))?.to_string()
            }
            "mem_buffer_size" => {
                g.mem_buffer = v
                    .as_i64()
                    .filter(|&n| n > 0)
                    .ok_or_else(|| bad("a positive number of bytes"))?
                    as usize
            }
            k if LOG_KEYS.contains(&k) => logs.push(k.to_string()),
            other => {
                return Err(error(
                    None,
                    Some(&format!("global.{other}")),
                    "not an rt-app global setting rtgauge knows; remove it",
                ))
            }
        }
    }
    if !logs.is_empty() {
        notes.push(format!(
            "{} not used: rtgauge writes its own result (-o) instead of rt-app's logs",
            logs.join(", ")
        ));
    }
    Ok(g)
}

fn policy_of(name: &str, task: &str) -> Result<TaskPolicy, TaskSetError> {
    Ok(match name {
        "SCHED_FIFO" => TaskPolicy::Fifo,
        "SCHED_RR" => TaskPolicy::Rr,
        "SCHED_DEADLINE" => TaskPolicy::Deadline,
        "SCHED_OTHER" => TaskPolicy::Other,
        other => {
            return Err(error(
                Some(task),
                Some("policy"),
                format!("'{other}' is not SCHED_FIFO, SCHED_RR, SCHED_DEADLINE or SCHED_OTHER"),
            ))
        }
    })
}

/// A whole number of microseconds, at least `min`, as nanoseconds.
fn micros(v: &Json, min: i64, task: &str, field: &str) -> Result<u64, TaskSetError> {
    match v.as_i64() {
        Some(us) if us >= min => Ok(us as u64 * 1_000),
        _ => Err(error(
            Some(task),
            Some(field),
            format!("{v} is not a whole number of microseconds of at least {min}"),
        )),
    }
}

/// Index of `name` in `list`, added when new.
fn intern(list: &mut Vec<String>, name: &str) -> usize {
    match list.iter().position(|n| n == name) {
        Some(i) => i,
        None => {
            list.push(name.to_string());
            list.len() - 1
        }
    }
}

/// Reading one task's events: the shared objects, and the task's own timers.
struct Reader<'a> {
    objects: &'a mut Objects,
    task_names: &'a [&'a str],
    own_timers: Vec<String>,
    barriers_used: Vec<usize>,
    uses_buffer: bool,
}

impl Reader<'_> {
    fn step(&mut self, task: &str, at: &str, kind: &str, v: &Json) -> Result<Step, TaskSetError> {
        let bad = |what: &str| error(Some(task), Some(at), format!("{v} is not {what}"));
        let name = |v: &Json| -> Result<String, TaskSetError> {
            v.as_str()
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .ok_or_else(|| bad("a name"))
        };
        let pair = |v: &Json| -> Result<(String, String), TaskSetError> {
            match (
                v.get("ref").and_then(Json::as_str),
                v.get("mutex").and_then(Json::as_str),
            ) {
                (Some(r), Some(m)) => Ok((r.to_string(), m.to_string())),
                _ => Err(bad("an object with \"ref\" and \"mutex\"")),
            }
        };
        Ok(match kind {
            "run" => Step::Run(micros(v, 0, task, at)?),
            "runtime" => Step::Runtime(micros(v, 0, task, at)?),
            "sleep" => Step::Sleep(micros(v, 0, task, at)?),
            "timer" => {
                let period_ns = micros(
                    v.get("period")
                        .ok_or_else(|| bad("an object with a \"period\""))?,
                    1,
                    task,
                    &format!("{at}.period"),
                )?;
                let r = v.get("ref").and_then(Json::as_str).unwrap_or("unique");
                let absolute = match v.get("mode").and_then(Json::as_str) {
                    None | Some("relative") => false,
                    Some("absolute") => true,
                    Some(_) => return Err(bad("a timer whose mode is relative or absolute")),
                };
                let timer = if r.starts_with("unique") {
                    TimerRef::Own(intern(&mut self.own_timers, r))
                } else {
                    TimerRef::Shared(intern(&mut self.objects.timers, r))
                };
                Step::Timer {
                    timer,
                    period_ns,
                    absolute,
                }
            }
            "lock" => Step::Lock(intern(&mut self.objects.mutexes, &name(v)?)),
            "unlock" => Step::Unlock(intern(&mut self.objects.mutexes, &name(v)?)),
            "wait" | "sync" => {
                let (c, m) = pair(v)?;
                let cond = intern(&mut self.objects.conds, &c);
                let mutex = intern(&mut self.objects.mutexes, &m);
                match kind {
                    "wait" => Step::Wait { cond, mutex },
                    _ => Step::Sync { cond, mutex },
                }
            }
            "signal" => Step::Signal(intern(&mut self.objects.conds, &name(v)?)),
            "broad" => Step::Broad(intern(&mut self.objects.conds, &name(v)?)),
            "barrier" => {
                let n = name(v)?;
                let i = match self.objects.barriers.iter().position(|(b, _)| *b == n) {
                    Some(i) => i,
                    None => {
                        self.objects.barriers.push((n, 0));
                        self.objects.barriers.len() - 1
                    }
                };
                if !self.barriers_used.contains(&i) {
                    self.barriers_used.push(i);
                }
                Step::Barrier(i)
            }
            // An empty name is the task's own (workgen fills it in so).
            "suspend" => {
                let n = v.as_str().filter(|s| !s.is_empty()).unwrap_or(task);
                Step::Suspend(intern(&mut self.objects.conds, n))
            }
            "resume" => Step::Resume(intern(&mut self.objects.conds, &name(v)?)),
            "yield" => Step::Yield,
            "mem" | "iorun" => {
                let bytes = v
                    .as_i64()
                    .filter(|&n| n >= 0)
                    .ok_or_else(|| bad("a number of bytes"))? as u64;
                self.uses_buffer = true;
                match kind {
                    "mem" => Step::Mem(bytes),
                    _ => Step::IoRun(bytes),
                }
            }
            "fork" => {
                let n = name(v)?;
                let target = self
                    .task_names
                    .iter()
                    .position(|t| *t == n)
                    .ok_or_else(|| {
                        error(
                            Some(task),
                            Some(at),
                            format!("forks '{n}', which is not a task of this file"),
                        )
                    })?;
                Step::Fork(target)
            }
            _ => unreachable!("every event of EVENTS is read"),
        })
    }

    /// A phase's events, in the order written (repeated keys included).
    fn phase(
        &mut self,
        task: &str,
        phase: Option<&str>,
        entries: &[(String, Json)],
        skip: &[&str],
    ) -> Result<Vec<Step>, TaskSetError> {
        let mut steps = Vec::new();
        for (key, v) in entries {
            if skip.contains(&key.as_str()) {
                continue;
            }
            let at = match phase {
                Some(p) => format!("phase {p}: {key}"),
                None => key.clone(),
            };
            let Some(kind) = event_kind(key) else {
                let legacy = ["exec", "period", "deadline", "lock_order", "resources"];
                let why = if legacy.contains(&key.as_str()) {
                    "a key of rt-app's 2014 grammar (its merge examples), not run by rtgauge: write the task with run and timer events (docs/taskset.md)".to_string()
                } else {
                    format!(
                        "not an rt-app event rtgauge runs (it runs {}) nor a task key",
                        EVENTS.join(", ")
                    )
                };
                return Err(error(Some(task), Some(&at), why));
            };
            steps.push(self.step(task, &at, kind, v)?);
        }
        Ok(steps)
    }
}

/// An rt-app task as read, before it is placed as periodic or as a program.
struct Read {
    name: String,
    instances: u64,
    policy: TaskPolicy,
    priority: i32,
    nice: i32,
    reservation: Option<(u64, u64, u64)>,
    cpu: Option<usize>,
    delay_ns: u64,
    loops: Option<u64>,
    phases: Vec<Phase>,
    own_timers: usize,
    barriers_used: Vec<usize>,
    uses_buffer: bool,
}

fn read_task(
    name: &str,
    t: &Json,
    global: &Global,
    platform: &Platform,
    reader: &mut Reader,
    notes: &mut Vec<String>,
) -> Result<Read, TaskSetError> {
    let Some(entries) = t.as_object() else {
        return Err(error(Some(name), None, "is not a JSON object"));
    };
    let int = |key: &str| -> Result<Option<i64>, TaskSetError> {
        match t.get(key) {
            None => Ok(None),
            Some(v) => v
                .as_i64()
                .map(Some)
                .ok_or_else(|| error(Some(name), Some(key), format!("{v} is not a whole number"))),
        }
    };
    let instances = match int("instance")? {
        None => 1,
        Some(n) if n >= 0 => n as u64,
        Some(n) => {
            return Err(error(
                Some(name),
                Some("instance"),
                format!("{n} copies: give 0 or more"),
            ))
        }
    };
    let policy_name = match t.get("policy") {
        None => global.default_policy.clone(),
        Some(p) => p
            .as_str()
            .ok_or_else(|| {
                error(
                    Some(name),
                    Some("policy"),
                    format!("{p} is not a policy name"),
                )
            })?
            .to_string(),
    };
    let policy = policy_of(&policy_name, name)?;
    let given = int("priority")?;
    let (priority, nice) = match (policy, given) {
        (TaskPolicy::Fifo | TaskPolicy::Rr, None) => (10, 0),
        (TaskPolicy::Fifo | TaskPolicy::Rr, Some(p)) if (1..=99).contains(&p) => (p as i32, 0),
        (TaskPolicy::Other, None) => (0, 0),
        (TaskPolicy::Other, Some(n)) if (-20..=19).contains(&n) => (0, n as i32),
        (TaskPolicy::Deadline, p) => {
            if p.is_some() {
                notes.push(format!("{name}: priority not used by SCHED_DEADLINE"));
            }
            (0, 0)
        }
        (_, Some(p)) => {
            let range = if policy == TaskPolicy::Other {
                "-20 to 19 (the nice value of a SCHED_OTHER task)"
            } else {
                "1 to 99"
            };
            return Err(error(
                Some(name),
                Some("priority"),
                format!("{p} is outside {range}"),
            ));
        }
    };
    let us = |key: &str| -> Result<Option<u64>, TaskSetError> {
        t.get(key).map(|v| micros(v, 0, name, key)).transpose()
    };
    let (runtime, period, deadline) = (us("dl-runtime")?, us("dl-period")?, us("dl-deadline")?);
    let reservation = match (policy, runtime) {
        (TaskPolicy::Deadline, None | Some(0)) => {
            return Err(error(
                Some(name),
                Some("dl-runtime"),
                "missing: a SCHED_DEADLINE task needs its runtime (µs)",
            ))
        }
        (TaskPolicy::Deadline, Some(r)) => {
            let p = period.unwrap_or(r);
            let d = deadline.unwrap_or(p);
            if !(r <= d && d <= p) {
                return Err(error(
                    Some(name),
                    Some("dl-deadline"),
                    "SCHED_DEADLINE needs dl-runtime ≤ dl-deadline ≤ dl-period",
                ));
            }
            Some((r, d, p))
        }
        (_, _) => {
            if runtime.is_some() || period.is_some() || deadline.is_some() {
                notes.push(format!(
                    "{name}: dl-runtime/dl-period/dl-deadline not used by {policy_name} (a SCHED_OTHER task's slice is not set)"
                ));
            }
            None
        }
    };
    let cpu = match t.get("cpus") {
        None => None,
        Some(v) => match v.as_array() {
            Some([c]) => match c.as_i64() {
                Some(c) if c >= 0 && platform.online_cpus.contains(&(c as usize)) => {
                    Some(c as usize)
                }
                _ => {
                    return Err(error(
                        Some(name),
                        Some("cpus"),
                        format!(
                            "CPU {c} is not online; online: {}",
                            rtgauge_os::cpus::format_cpu_list(&platform.online_cpus)
                        ),
                    ))
                }
            },
            _ => {
                return Err(error(
                    Some(name),
                    Some("cpus"),
                    format!("{v}: rtgauge places a task on one CPU or leaves it to the kernel; give one CPU, e.g. [1], or none"),
                ))
            }
        },
    };
    let delay_ns = us("delay")?.unwrap_or(0);
    let loops = int("loop")?.and_then(|l| u64::try_from(l).ok());
    reader.own_timers.clear();
    reader.barriers_used.clear();
    reader.uses_buffer = false;
    let phases = match t.get("phases") {
        None => vec![Phase {
            name: String::new(),
            loops: 1,
            steps: reader.phase(name, None, entries, &TASK_KEYS)?,
        }],
        Some(Json::Object(phases)) => {
            let mut read = Vec::new();
            for (phase, p) in phases {
                let at = |key: &str| format!("phase {phase}: {key}");
                let Some(p_entries) = p.as_object() else {
                    return Err(error(Some(name), Some(&at("")), "is not a JSON object"));
                };
                if let Some((key, _)) = p_entries
                    .iter()
                    .find(|(k, _)| TASK_KEYS.contains(&k.as_str()) && k != "loop")
                {
                    return Err(error(
                        Some(name),
                        Some(&at(key)),
                        "not run per phase by rtgauge; give it for the whole task",
                    ));
                }
                let loops = match p.get("loop") {
                    None => 1,
                    Some(v) => match v.as_i64() {
                        Some(l) if l >= 1 => l as u64,
                        _ => {
                            return Err(error(
                                Some(name),
                                Some(&at("loop")),
                                format!("{v}: a phase runs 1 or more times"),
                            ))
                        }
                    },
                };
                let steps = reader.phase(name, Some(phase), p_entries, &["loop"])?;
                // A phase named twice (rt-app's spreading-tasks has two `heavy1`) is
                // labelled apart: `heavy1#2`.
                let seen = read
                    .iter()
                    .filter(|p: &&Phase| p.name.split('#').next() == Some(phase))
                    .count();
                read.push(Phase {
                    name: match seen {
                        0 => phase.clone(),
                        n => format!("{phase}#{}", n + 1),
                    },
                    loops,
                    steps,
                });
            }
            if let Some((key, _)) = entries
                .iter()
                .find(|(k, _)| !TASK_KEYS.contains(&k.as_str()))
            {
                return Err(error(
                    Some(name),
                    Some(key),
                    "an event beside phases: put it in a phase",
                ));
            }
            read
        }
        Some(v) => {
            return Err(error(
                Some(name),
                Some("phases"),
                format!("{v} is not an object of phases"),
            ))
        }
    };
    Ok(Read {
        name: name.to_string(),
        instances,
        policy,
        priority,
        nice,
        reservation,
        cpu,
        delay_ns,
        loops,
        phases,
        own_timers: reader.own_timers.len(),
        barriers_used: reader.barriers_used.clone(),
        uses_buffer: reader.uses_buffer,
    })
}

/// The periodic job a task is, if it is one: its work (the sum of its `run` events) and the
/// period of the one `timer` that ends them, looping until the run ends.
fn periodic_form(r: &Read, shared_users: &[usize], forked: bool) -> Option<(u64, u64)> {
    if forked || r.instances == 0 || r.loops.is_some() || r.nice != 0 || r.phases.len() != 1 {
        return None;
    }
    let phase = &r.phases[0];
    let steps: Vec<&Step> = phase
        .steps
        .iter()
        .filter(|s| **s != Step::Sleep(0))
        .collect();
    let (last, runs) = steps.split_last()?;
    let Step::Timer {
        timer, period_ns, ..
    } = last
    else {
        return None;
    };
    if let TimerRef::Shared(i) = timer {
        if r.instances > 1 || shared_users[*i] > 1 {
            return None;
        }
    }
    let mut work = 0;
    for s in runs {
        match s {
            Step::Run(ns) => work += ns,
            _ => return None,
        }
    }
    let dl_period_differs = r.reservation.is_some_and(|(_, _, p)| p != *period_ns);
    (work > 0 && r.delay_ns < *period_ns && !dl_period_differs).then_some((work, *period_ns))
}

/// The task set an rt-app document describes.
pub(super) fn parse(text: &str, platform: &Platform) -> Result<TaskSet, TaskSetError> {
    let doc = lenient::parse(text)
        .map_err(|e| error(None, None, format!("not valid rt-app JSON: {e}")))?;
    let Some(top) = doc.as_object() else {
        return Err(error(None, None, "rt-app JSON is an object with \"tasks\""));
    };
    let mut notes = Vec::new();
    for (key, _) in top {
        match key.as_str() {
            "tasks" | "global" => {}
            "resources" => notes.push(
                "resources not needed: rtgauge creates each mutex, condition and timer from the events that name it, as rt-app does".into(),
            ),
            other => {
                return Err(error(
                    None,
                    Some(other),
                    "not an rt-app section; an rt-app file has tasks and global",
                ))
            }
        }
    }
    let Some(tasks) = doc.get("tasks").and_then(Json::as_object) else {
        return Err(error(
            None,
            None,
            "rt-app JSON without a \"tasks\" object; see rt-app's tutorial for the format",
        ));
    };
    let global = read_global(&doc, &mut notes)?;
    let names: Vec<&str> = tasks.iter().map(|(n, _)| n.as_str()).collect();
    if let Some((_, n)) = names
        .iter()
        .enumerate()
        .find(|(i, n)| names[..*i].contains(n))
    {
        return Err(error(
            Some(n),
            None,
            "named twice; give each task its own name",
        ));
    }
    let mut objects = Objects {
        priority_inheritance: global.pi,
        io_device: global.io_device.clone(),
        ..Objects::default()
    };
    let mut read = Vec::new();
    {
        let mut reader = Reader {
            objects: &mut objects,
            task_names: &names,
            own_timers: Vec::new(),
            barriers_used: Vec::new(),
            uses_buffer: false,
        };
        for (name, t) in tasks {
            read.push(read_task(
                name,
                t,
                &global,
                platform,
                &mut reader,
                &mut notes,
            )?);
        }
    }
    // Who uses what: a shared timer's users, each barrier's threads, the forked tasks.
    let mut timer_users = vec![0usize; objects.timers.len()];
    let mut forked = vec![false; read.len()];
    for r in &read {
        let mut mine = Vec::new();
        for s in r.phases.iter().flat_map(|p| &p.steps) {
            match s {
                Step::Timer {
                    timer: TimerRef::Shared(i),
                    ..
                } if !mine.contains(i) => {
                    mine.push(*i);
                    timer_users[*i] += r.instances as usize;
                }
                Step::Fork(target) => forked[*target] = true,
                _ => {}
            }
        }
        // A task started only by fork counts as one user.
        for &b in &r.barriers_used {
            objects.barriers[b].1 += r.instances.max(1) as usize;
        }
    }
    let mut toml = String::new();
    let mut dl_runtimes = Vec::new();
    let mut programs = Programs::default();
    // Where each rt-app task's first thread is among the programs (what `fork` starts).
    let mut first_program = vec![usize::MAX; read.len()];
    for (k, r) in read.iter().enumerate() {
        let base = label_name(&r.name);
        if base != r.name {
            notes.push(format!("task {} is labelled {base}", r.name));
        }
        let thread_name = |i: u64| match r.instances {
            0 | 1 => base.clone(),
            _ => format!("{base}-{i}"),
        };
        if let Some((work, period)) = periodic_form(r, &timer_users, forked[k]) {
            for i in 0..r.instances {
                let name = thread_name(i);
                toml.push_str(&format!(
                    "[[task]]\nname = \"{name}\"\nwork = \"{work}ns\"\nperiod = \"{period}ns\"\npolicy = \"{}\"\n",
                    r.policy.name()
                ));
                if r.policy.fixed_priority() {
                    toml.push_str(&format!("priority = {}\n", r.priority));
                }
                if let Some((runtime, deadline, _)) = r.reservation {
                    toml.push_str(&format!("deadline = \"{deadline}ns\"\n"));
                    dl_runtimes.push((name.clone(), runtime));
                }
                if r.delay_ns > 0 {
                    toml.push_str(&format!("offset = \"{}ns\"\n", r.delay_ns));
                }
                if let Some(c) = r.cpu {
                    toml.push_str(&format!("cpu = {c}\n"));
                }
            }
            continue;
        }
        first_program[k] = programs.tasks.len();
        for i in 0..r.instances.max(1) {
            programs.tasks.push(ProgramTask {
                name: thread_name(i),
                policy: r.policy,
                priority: r.priority,
                nice: r.nice,
                reservation: r.reservation,
                cpu: r.cpu,
                delay_ns: r.delay_ns,
                loops: r.loops,
                phases: r.phases.clone(),
                starts: r.instances > 0,
                own_timers: r.own_timers,
                buffer_bytes: if r.uses_buffer { global.mem_buffer } else { 0 },
            });
        }
    }
    // Forks name rt-app tasks; they start that task's first thread's program.
    for t in &mut programs.tasks {
        for s in t.phases.iter_mut().flat_map(|p| p.steps.iter_mut()) {
            if let Step::Fork(target) = s {
                *target = first_program[*target];
            }
        }
    }
    if programs.tasks.iter().any(|t| {
        t.phases
            .iter()
            .flat_map(|p| &p.steps)
            .any(|s| matches!(s, Step::Fork(_)))
    }) {
        notes.push(format!(
            "a forked thread runs its task's events and is counted (forks), not measured; at most {FORKS_LIMIT} per task"
        ));
    }
    programs.objects = objects;
    programs.notes = notes;
    let mut set = if toml.is_empty() {
        TaskSet {
            tasks: Vec::new(),
            resources: Vec::new(),
            programs: Default::default(),
        }
    } else {
        spec::check(spec::parse_toml_text(&toml)?, platform)?
    };
    for (name, runtime) in dl_runtimes {
        if let Some(t) = set.tasks.iter_mut().find(|t| t.name == name) {
            t.dl_runtime_ns = Some(runtime);
        }
    }
    if set.tasks.is_empty() && programs.tasks.iter().all(|t| !t.starts) {
        return Err(error(
            None,
            None,
            "no task to run: every task has instance 0",
        ));
    }
    set.programs = programs;
    Ok(set)
}

#[cfg(test)]
#[path = "rtapp_tests.rs"]
mod tests;
