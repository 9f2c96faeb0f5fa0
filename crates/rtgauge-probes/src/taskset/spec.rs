//! The task-set file: the user's periodic tasks (TOML, or rt-app's JSON task descriptions),
//! read and checked before anything runs. Every problem is one line naming the task and the
//! field, with the fix.

use rtgauge_core::probe::{MAX_PERIOD_NS, MIN_PERIOD_NS};
use rtgauge_core::units::{format_duration_exact, format_duration_ns, parse_duration_ns};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt;

/// The scheduling policy a task asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskPolicy {
    Fifo,
    Rr,
    /// SCHED_DEADLINE: runtime = work, deadline and period as given.
    Deadline,
    /// SCHED_OTHER: run, measured, but outside the fixed-priority analysis.
    Other,
}

impl TaskPolicy {
    pub const NAMES: [&'static str; 4] = ["fifo", "rr", "deadline", "other"];

    fn parse(s: &str) -> Option<TaskPolicy> {
        Some(match s {
            "fifo" => TaskPolicy::Fifo,
            "rr" => TaskPolicy::Rr,
            "deadline" => TaskPolicy::Deadline,
            "other" => TaskPolicy::Other,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            TaskPolicy::Fifo => "fifo",
            TaskPolicy::Rr => "rr",
            TaskPolicy::Deadline => "deadline",
            TaskPolicy::Other => "other",
        }
    }

    /// Fixed-priority policies, the ones response-time analysis covers.
    pub fn fixed_priority(self) -> bool {
        matches!(self, TaskPolicy::Fifo | TaskPolicy::Rr)
    }
}

/// How a shared resource's lock treats the priority of the task waiting for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// Priority inheritance (a PTHREAD_PRIO_INHERIT mutex).
    Inherit,
    /// A plain mutex: a middle-priority task can preempt the holder (unbounded inversion).
    None,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resource {
    pub name: String,
    pub protocol: Protocol,
}

/// A critical section: the last `length_ns` of the task's work, holding `resource`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Critical {
    /// Index into [`TaskSet::resources`].
    pub resource: usize,
    pub length_ns: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Task {
    pub name: String,
    pub period_ns: u64,
    pub work_ns: u64,
    /// 1..=99 for fifo and rr; 0 for deadline and other.
    pub priority: i32,
    pub policy: TaskPolicy,
    /// None: the run's first measured CPU.
    pub cpu: Option<usize>,
    pub deadline_ns: u64,
    pub offset_ns: u64,
    pub critical: Option<Critical>,
    /// Index into [`TaskSet::tasks`] of the task whose completion releases this one.
    pub after: Option<usize>,
    /// SCHED_DEADLINE's runtime as the file gives it (rt-app's `dl-runtime`); None: the
    /// work and a quarter more.
    pub dl_runtime_ns: Option<u64>,
}

impl Task {
    pub fn utilisation(&self) -> f64 {
        self.work_ns as f64 / self.period_ns as f64
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskSet {
    pub tasks: Vec<Task>,
    pub resources: Vec<Resource>,
    /// rt-app tasks that are more than a periodic job: run, not analysed.
    pub programs: super::program::Programs,
}

/// A task set that cannot be run, in one line: where, which task and field, what is wrong
/// and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskSetError {
    pub task: Option<String>,
    pub field: Option<String>,
    pub problem: String,
}

impl fmt::Display for TaskSetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(task) = &self.task {
            write!(f, "task {task}: ")?;
        }
        if let Some(field) = &self.field {
            write!(f, "{field}: ")?;
        }
        f.write_str(&self.problem)
    }
}

impl std::error::Error for TaskSetError {}

fn task_error(task: &str, field: &str, problem: impl Into<String>) -> TaskSetError {
    TaskSetError {
        task: Some(task.to_string()),
        field: Some(field.to_string()),
        problem: problem.into(),
    }
}

fn set_error(problem: impl Into<String>) -> TaskSetError {
    TaskSetError {
        task: None,
        field: None,
        problem: problem.into(),
    }
}

const TASK_FIELDS: [&str; 10] = [
    "name", "period", "work", "priority", "policy", "cpu", "deadline", "offset", "critical",
    "after",
];
const RESOURCE_FIELDS: [&str; 2] = ["name", "protocol"];
/// Names other tools and papers give a task's fields, and the field each means here.
const ALIASES: [(&str, &str); 12] = [
    ("prio", "priority"),
    ("rtprio", "priority"),
    ("sched_priority", "priority"),
    ("wcet", "work"),
    ("runtime", "work"),
    ("exec", "work"),
    ("c", "work"),
    ("t", "period"),
    ("d", "deadline"),
    ("phase", "offset"),
    ("cpus", "cpu"),
    ("core", "cpu"),
];
const CRITICAL_FIELDS: [&str; 2] = ["resource", "length"];

/// Reads rtgauge's TOML form (used for rt-app documents after conversion).
pub(super) fn parse_toml_text(text: &str) -> Result<FileText, TaskSetError> {
    parse_toml(text)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FileText {
    #[serde(rename = "task", default)]
    tasks: Vec<TaskText>,
    #[serde(rename = "resource", default)]
    resources: Vec<ResourceText>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskText {
    name: String,
    period: String,
    work: String,
    priority: Option<i64>,
    policy: Option<String>,
    cpu: Option<i64>,
    deadline: Option<String>,
    offset: Option<String>,
    critical: Option<CriticalText>,
    after: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CriticalText {
    resource: String,
    length: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ResourceText {
    name: String,
    protocol: Option<String>,
}

/// What the checks need to know of the machine.
#[derive(Debug, Clone)]
pub struct Platform {
    /// The shortest period a task may have.
    pub min_period_ns: u64,
    /// CPUs a task may be placed on.
    pub online_cpus: Vec<usize>,
}

impl Platform {
    /// Two CPUs and periods down to 10 µs, whatever the machine: what the tests check task
    /// sets against.
    #[cfg(test)]
    pub(crate) fn for_tests() -> Platform {
        Platform {
            min_period_ns: 10_000,
            online_cpus: vec![0, 1],
        }
    }

    pub fn this_machine() -> Platform {
        let resolution = rtgauge_os::clock::resolution_ns(libc::CLOCK_MONOTONIC).unwrap_or(1);
        Platform {
            min_period_ns: MIN_PERIOD_NS.max(resolution),
            online_cpus: rtgauge_os::cpus::online_cpus(),
        }
    }
}

/// Whether the text is rt-app's JSON rather than rtgauge's TOML (an rt-app file may open
/// with a comment, as json-c allows).
pub fn looks_like_json(text: &str) -> bool {
    let mut end = text.len().min(64 * 1024);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    super::lenient::blank_comments_and_trailing_commas(&text[..end])
        .trim_start()
        .starts_with('{')
}

/// Reads a task set from TOML (or rt-app JSON) text and checks it.
pub fn parse(text: &str, platform: &Platform) -> Result<TaskSet, TaskSetError> {
    if looks_like_json(text) {
        return super::rtapp::parse(text, platform);
    }
    check(parse_toml(text)?, platform)
}

/// `line 3: ` for the place a TOML error points at, when it points at one.
fn at_line(text: &str, e: &toml::de::Error) -> String {
    e.span()
        .map(|span| {
            let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
            format!("line {line}: ")
        })
        .unwrap_or_default()
}

fn parse_toml(text: &str) -> Result<FileText, TaskSetError> {
    let table: toml::Table = toml::from_str(text).map_err(|e| {
        set_error(format!(
            "not a valid TOML task set: {}{}",
            at_line(text, &e),
            one_line(e.message())
        ))
    })?;
    // A suite file (its probes and their settings) given where a task set belongs.
    if table.contains_key("probe")
        || (table.contains_key("description") && !table.contains_key("task"))
    {
        return Err(set_error(
            "this is a suite file (it has [[probe]] entries or a description), not a task set; run it with `rtgauge run --suite FILE`, or give --tasks a file of [[task]] entries (see docs/taskset.md)",
        ));
    }
    // Unknown keys are found here first, so the message can name the task they are in.
    for key in table.keys() {
        if key != "task" && key != "resource" {
            return Err(set_error(format!(
                "unknown section or key '{key}'; a task set has [[task]] and [[resource]] entries"
            )));
        }
    }
    let entries = |key: &str| -> Vec<toml::Table> {
        match table.get(key) {
            Some(toml::Value::Array(items)) => {
                items.iter().filter_map(|i| i.as_table().cloned()).collect()
            }
            _ => Vec::new(),
        }
    };
    for (i, task) in entries("task").iter().enumerate() {
        let name = entry_name(task, "task", i);
        unknown_field(task, &TASK_FIELDS, &name, "")?;
        if let Some(toml::Value::Table(critical)) = task.get("critical") {
            unknown_field(critical, &CRITICAL_FIELDS, &name, "critical.")?;
        }
    }
    for (i, resource) in entries("resource").iter().enumerate() {
        let name = entry_name(resource, "resource", i);
        if let Some(key) = resource
            .keys()
            .find(|k| !RESOURCE_FIELDS.contains(&k.as_str()))
        {
            return Err(set_error(format!(
                "resource {name}: unknown field '{key}'; a resource has name and protocol"
            )));
        }
    }
    toml::from_str::<FileText>(text).map_err(|e| {
        set_error(format!(
            "not a valid task set: {}{}; see docs/taskset.md for the format",
            at_line(text, &e),
            one_line(e.message())
        ))
    })
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn entry_name(entry: &toml::Table, kind: &str, index: usize) -> String {
    entry
        .get("name")
        .and_then(|n| n.as_str())
        .map(str::to_string)
        .unwrap_or_else(|| format!("#{} (the {kind} without a name)", index + 1))
}

fn unknown_field(
    entry: &toml::Table,
    known: &[&str],
    task: &str,
    prefix: &str,
) -> Result<(), TaskSetError> {
    match entry.keys().find(|k| !known.contains(&k.as_str())) {
        None => Ok(()),
        Some(key) => {
            // Names other tools use first (`prio` is nearer to `period` by letters).
            let hint = match ALIASES.iter().find(|(alias, _)| alias == key) {
                Some((_, field)) if known.contains(field) => format!(" (did you mean `{field}`?)"),
                _ => rtgauge_core::units::did_you_mean(key, known.iter().copied()),
            };
            Err(task_error(
                task,
                &format!("{prefix}{key}"),
                format!("unknown field{hint}; a task has {}", known.join(", ")),
            ))
        }
    }
}

fn duration(task: &str, field: &str, text: &str) -> Result<u64, TaskSetError> {
    parse_duration_ns(text)
        .map_err(|e| task_error(task, field, format!("{e}; write e.g. 250us or 1ms")))
}

pub(super) fn check(file: FileText, platform: &Platform) -> Result<TaskSet, TaskSetError> {
    if file.tasks.is_empty() {
        return Err(set_error(
            "no [[task]] entry; add one with name, period and work (see docs/taskset.md)",
        ));
    }
    let mut resources: Vec<Resource> = Vec::new();
    for r in &file.resources {
        if resources.iter().any(|o| o.name == r.name) {
            return Err(set_error(format!(
                "resource {}: the name is used twice; give each resource its own name",
                r.name
            )));
        }
        let protocol = match r.protocol.as_deref() {
            None | Some("pi") => Protocol::Inherit,
            Some("none") => Protocol::None,
            Some(other) => {
                return Err(set_error(format!(
                    "resource {}: protocol: '{other}' is not pi or none",
                    r.name
                )))
            }
        };
        resources.push(Resource {
            name: r.name.clone(),
            protocol,
        });
    }
    let names: Vec<&str> = file.tasks.iter().map(|t| t.name.as_str()).collect();
    let mut tasks = Vec::with_capacity(file.tasks.len());
    for (i, t) in file.tasks.iter().enumerate() {
        let name = t.name.as_str();
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(task_error(
                &format!("'{}'", rtgauge_core::units::quote(name)),
                "name",
                "use letters, digits, - and _ only (the name labels the task's series)",
            ));
        }
        if names[..i].contains(&name) {
            return Err(task_error(
                name,
                "name",
                "used by two tasks; give each task its own name",
            ));
        }
        let period_ns = duration(name, "period", &t.period)?;
        if period_ns < platform.min_period_ns {
            return Err(task_error(
                name,
                "period",
                format!(
                    "{} is below this machine's minimum period of {}; use a period of at least {}",
                    format_duration_exact(period_ns),
                    format_duration_exact(platform.min_period_ns),
                    format_duration_exact(platform.min_period_ns)
                ),
            ));
        }
        if period_ns > MAX_PERIOD_NS {
            return Err(task_error(
                name,
                "period",
                format!(
                    "{} is longer than {}; use a shorter period",
                    format_duration_exact(period_ns),
                    format_duration_exact(MAX_PERIOD_NS)
                ),
            ));
        }
        let work_ns = duration(name, "work", &t.work)?;
        let deadline_ns = match &t.deadline {
            Some(d) => duration(name, "deadline", d)?,
            None => period_ns,
        };
        if deadline_ns > period_ns {
            return Err(task_error(
                name,
                "deadline",
                format!(
                    "{} is longer than the period {}; the analysis needs each job done before the next release: shorten the deadline",
                    format_duration_exact(deadline_ns),
                    format_duration_exact(period_ns)
                ),
            ));
        }
        if work_ns > deadline_ns {
            return Err(task_error(
                name,
                "work",
                format!(
                    "{} is longer than the deadline {}: no job could ever finish in time; shorten the work",
                    format_duration_exact(work_ns),
                    format_duration_exact(deadline_ns)
                ),
            ));
        }
        let offset_ns = match t.offset.as_deref() {
            None | Some("0") => 0,
            Some(o) => duration(name, "offset", o)?,
        };
        if offset_ns >= period_ns {
            return Err(task_error(
                name,
                "offset",
                "must be shorter than the period; take it modulo the period",
            ));
        }
        let policy = match t.policy.as_deref() {
            None => TaskPolicy::Fifo,
            Some(p) => TaskPolicy::parse(p).ok_or_else(|| {
                task_error(
                    name,
                    "policy",
                    format!(
                        "'{}' is not one of {}",
                        rtgauge_core::units::quote(p),
                        TaskPolicy::NAMES.join(", ")
                    ),
                )
            })?,
        };
        let priority =
            match (policy.fixed_priority(), t.priority) {
                (true, None) => return Err(task_error(
                    name,
                    "priority",
                    "missing; a fifo or rr task needs a priority from 1 to 98 (99 is the kernel's)",
                )),
                (true, Some(p)) if !(1..=99).contains(&p) => {
                    return Err(task_error(
                        name,
                        "priority",
                        format!("{p} is outside 1..99; use 1 to 98 (99 is the kernel's)"),
                    ))
                }
                (true, Some(p)) => p as i32,
                (false, Some(_)) => {
                    return Err(task_error(
                        name,
                        "priority",
                        format!(
                        "a {} task has no real-time priority; remove it or use policy = \"fifo\"",
                        policy.name()
                    ),
                    ))
                }
                (false, None) => 0,
            };
        let cpu = match t.cpu {
            None => None,
            Some(c) if c >= 0 && platform.online_cpus.contains(&(c as usize)) => Some(c as usize),
            Some(c) => {
                return Err(task_error(
                    name,
                    "cpu",
                    format!(
                        "CPU {c} is not online; online: {}",
                        rtgauge_os::cpus::format_cpu_list(&platform.online_cpus)
                    ),
                ))
            }
        };
        let critical = match &t.critical {
            None => None,
            Some(c) => {
                let resource = resources
                    .iter()
                    .position(|r| r.name == c.resource)
                    .ok_or_else(|| {
                        task_error(
                            name,
                            "critical.resource",
                            format!(
                                "no [[resource]] is named '{}'; add one with name = \"{}\" and protocol = \"pi\"",
                                rtgauge_core::units::quote(&c.resource),
                                rtgauge_core::units::quote(&c.resource)
                            ),
                        )
                    })?;
                let length_ns = duration(name, "critical.length", &c.length)?;
                if length_ns > work_ns {
                    return Err(task_error(
                        name,
                        "critical.length",
                        format!(
                            "{} is longer than the work {}; the critical section is part of the work",
                            format_duration_exact(length_ns),
                            format_duration_exact(work_ns)
                        ),
                    ));
                }
                Some(Critical {
                    resource,
                    length_ns,
                })
            }
        };
        let after = match &t.after {
            None => None,
            Some(a) => Some(names.iter().position(|n| n == a).ok_or_else(|| {
                task_error(
                    name,
                    "after",
                    format!(
                        "no task is named '{}'{}",
                        rtgauge_core::units::quote(a),
                        rtgauge_core::units::did_you_mean(a, names.iter().copied())
                    ),
                )
            })?),
        };
        tasks.push(Task {
            name: name.to_string(),
            period_ns,
            work_ns,
            priority,
            policy,
            cpu,
            deadline_ns,
            offset_ns,
            critical,
            after,
            dl_runtime_ns: None,
        });
    }
    check_chains(&tasks)?;
    Ok(TaskSet {
        tasks,
        resources,
        programs: Default::default(),
    })
}

/// A task released by another's completion must not (through others) release itself, and
/// runs at its predecessor's rate.
fn check_chains(tasks: &[Task]) -> Result<(), TaskSetError> {
    for (i, t) in tasks.iter().enumerate() {
        let mut seen = vec![i];
        let mut at = t.after;
        while let Some(next) = at {
            if seen.contains(&next) {
                let cycle: Vec<&str> = seen
                    .iter()
                    .chain(std::iter::once(&next))
                    .map(|&k| tasks[k].name.as_str())
                    .collect();
                return Err(task_error(
                    &t.name,
                    "after",
                    format!(
                        "the chain {} comes back to itself; one task of a chain must be released by its period (no after)",
                        cycle.join(" -> ")
                    ),
                ));
            }
            seen.push(next);
            at = tasks[next].after;
        }
        if let Some(p) = t.after {
            if tasks[p].period_ns != t.period_ns {
                return Err(task_error(
                    &t.name,
                    "period",
                    format!(
                        "{} differs from the period {} of {}, which releases it (after); give both the same period",
                        format_duration_exact(t.period_ns),
                        format_duration_exact(tasks[p].period_ns),
                        tasks[p].name
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Refuses CPUs asked for more than they have: the sum of work / period of the tasks on one
/// CPU above 1 cannot fit in any schedule. `first_cpu` is where tasks without `cpu` go (None
/// before the run's CPUs are known: they are then counted together).
pub fn check_capacity(set: &TaskSet, first_cpu: Option<usize>) -> Result<(), TaskSetError> {
    let mut per_cpu: BTreeMap<Option<usize>, (f64, Vec<usize>)> = BTreeMap::new();
    for (i, t) in set.tasks.iter().enumerate() {
        let cpu = t.cpu.or(first_cpu);
        let e = per_cpu.entry(cpu).or_default();
        e.0 += t.utilisation();
        e.1.push(i);
        if e.0 > 1.0 + 1e-12 {
            let which = match cpu {
                Some(c) => format!("CPU {c}"),
                None => "the run's first CPU".to_string(),
            };
            return Err(task_error(
                &t.name,
                "work",
                format!(
                    "{} every {} brings {which} to {:.0} % busy (work / period summed over its tasks {}): more than a CPU has; shorten work, lengthen periods or spread tasks with cpu = N (allow-overload=yes runs it anyway to count the misses)",
                    format_duration_ns(t.work_ns),
                    format_duration_ns(t.period_ns),
                    e.0 * 100.0,
                    e.1.iter().map(|&k| set.tasks[k].name.as_str()).collect::<Vec<_>>().join(", ")
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
[[resource]]
name = "bus"
protocol = "pi"

[[task]]
name = "servo"
period = "1ms"
work = "300us"
priority = 90
cpu = 1
critical = { resource = "bus", length = "50us" }

[[task]]
name = "log"
period = "1ms"
work = "100us"
priority = 10
deadline = "800us"
offset = "100us"
after = "servo"
"#;

    fn error(text: &str) -> String {
        parse(text, &Platform::for_tests()).unwrap_err().to_string()
    }

    #[test]
    fn a_full_set_is_read_with_defaults_filled_in() {
        let set = parse(GOOD, &Platform::for_tests()).unwrap();
        assert_eq!(set.tasks.len(), 2);
        let servo = &set.tasks[0];
        assert_eq!(
            (servo.period_ns, servo.work_ns, servo.priority, servo.cpu),
            (1_000_000, 300_000, 90, Some(1))
        );
        assert_eq!(servo.deadline_ns, 1_000_000);
        assert_eq!(
            servo.critical,
            Some(Critical {
                resource: 0,
                length_ns: 50_000
            })
        );
        let log = &set.tasks[1];
        assert_eq!(
            (log.deadline_ns, log.offset_ns, log.after),
            (800_000, 100_000, Some(0))
        );
        assert_eq!(set.resources[0].protocol, Protocol::Inherit);
    }

    #[test]
    fn unknown_fields_name_the_task_and_the_field() {
        let e = error("[[task]]\nname = \"servo\"\nperiod = \"1ms\"\nwork = \"1us\"\nprio = 3\n");
        assert!(e.starts_with("task servo: prio: unknown field"), "{e}");
        assert!(e.contains("(did you mean `priority`?)"), "{e}");
        let e = error("[[task]]\nname = \"servo\"\nperiod = \"1ms\"\nwcet = \"1us\"\n");
        assert!(e.contains("(did you mean `work`?)"), "{e}");
        let e = error("[[task]]\nname = \"a\"\nperiod = \"1ms\"\nwork = \"1us\"\npriority = 3\ncritical = { resource = \"x\", len = \"1us\" }\n");
        assert!(e.starts_with("task a: critical.len: unknown field"), "{e}");
        assert!(error("[global]\n").contains("unknown section"));
    }

    #[test]
    fn a_toml_syntax_error_says_its_line() {
        let e = error("[[task]]\nname = \"a\"\nperiod = 1ms\n");
        assert!(e.starts_with("not a valid TOML task set: line 3: "), "{e}");
        let e = error("[[task]]\nname = \"a\"\nperiod = \"1ms\"\nwork = 5\npriority = 3\n");
        assert!(e.contains("line 4: "), "{e}");
    }

    #[test]
    fn a_suite_file_is_told_apart_from_a_task_set() {
        let e = error("name = \"mine\"\ndescription = \"x\"\n\n[[probe]]\nname = \"cyclic\"\n");
        assert!(e.starts_with("this is a suite file"), "{e}");
        assert!(e.contains("rtgauge run --suite FILE"), "{e}");
    }

    #[test]
    fn bad_values_name_the_task_and_the_field() {
        let base = |extra: &str| format!("[[task]]\nname = \"t\"\npriority = 5\n{extra}");
        let e = error(&base("period = \"5us\"\nwork = \"1us\"\n"));
        assert!(
            e.starts_with("task t: period: 5us is below this machine's minimum period of 10us"),
            "{e}"
        );
        let e = error(&base("period = \"1ms\"\nwork = \"2ms\"\n"));
        assert!(e.starts_with("task t: work:"), "{e}");
        let e = error(&base("period = \"1ms\"\nwork = \"1us\"\ncpu = 7\n"));
        assert!(e.starts_with("task t: cpu: CPU 7 is not online"), "{e}");
        let e = error(&base("period = \"1ms\"\nwork = \"1us\"\ncritical = { resource = \"bus\", length = \"1us\" }\n"));
        assert!(
            e.starts_with("task t: critical.resource: no [[resource]] is named 'bus'"),
            "{e}"
        );
        let e = error("[[task]]\nname = \"t\"\nperiod = \"1ms\"\nwork = \"1us\"\n");
        assert!(e.starts_with("task t: priority: missing"), "{e}");
        let e = error(&base(
            "period = \"1ms\"\nwork = \"1us\"\npolicy = \"edf\"\n",
        ));
        assert!(e.starts_with("task t: policy:"), "{e}");
    }

    #[test]
    fn a_cycle_of_after_is_refused_naming_the_chain() {
        // Three tasks alike but for their names, each after another: a after c after b after a.
        let text: String = [("a", "c"), ("b", "a"), ("c", "b")]
            .map(|(name, after)| {
                format!("[[task]]\nname = \"{name}\"\nperiod = \"1ms\"\nwork = \"10us\"\npriority = 5\nafter = \"{after}\"\n")
            })
            .concat();
        let e = error(&text);
        assert!(
            e.starts_with("task a: after: the chain a -> c -> b -> a"),
            "{e}"
        );
    }

    #[test]
    fn utilisation_above_one_cpu_names_the_task_that_crosses_it() {
        let text = r#"
[[task]]
name = "a"
period = "1ms"
work = "600us"
priority = 5
[[task]]
name = "b"
period = "2ms"
work = "900us"
priority = 4
"#;
        let set = parse(text, &Platform::for_tests()).unwrap();
        let e = check_capacity(&set, Some(0)).unwrap_err().to_string();
        assert!(
            e.starts_with("task b: work: 900µs every 2ms brings CPU 0 to 105 % busy"),
            "{e}"
        );
        // Spread over two CPUs it fits.
        let mut spread = set.clone();
        spread.tasks[1].cpu = Some(1);
        assert!(check_capacity(&spread, Some(0)).is_ok());
    }
}
