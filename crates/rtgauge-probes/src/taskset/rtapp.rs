//! rt-app's JSON task descriptions, so rt-app users bring the sets they have: the periodic
//! form (`run` then a `timer` with a `period`, times in microseconds, one CPU in `cpus`).
//! Anything rt-app can say that rtgauge does not run the same way is refused by name, never
//! dropped silently.

use super::lenient::{self, Json};
use super::spec::TaskSetError;

/// rt-app keys of a task that are read.
const KNOWN: [&str; 9] = [
    "run",
    "timer",
    "priority",
    "policy",
    "cpus",
    "loop",
    "instance",
    "dl-deadline",
    "delay",
];

fn error(task: Option<&str>, field: Option<&str>, problem: String) -> TaskSetError {
    TaskSetError {
        task: task.map(str::to_string),
        field: field.map(str::to_string),
        problem,
    }
}

fn micros(task: &str, field: &str, v: &Json) -> Result<String, TaskSetError> {
    match v.as_i64() {
        Some(us) if us > 0 => Ok(format!("{us}us")),
        _ => Err(error(
            Some(task),
            Some(field),
            format!("{v} is not a positive whole number of microseconds"),
        )),
    }
}

/// The rt-app document as rtgauge's own task-set TOML, which is then read and checked as any.
pub(super) fn to_file_text(text: &str) -> Result<super::spec::FileTextFromJson, TaskSetError> {
    let doc = lenient::parse(text)
        .map_err(|e| error(None, None, format!("not valid rt-app JSON: {e}")))?;
    let Some(tasks) = doc.get("tasks").and_then(Json::as_object) else {
        return Err(error(
            None,
            None,
            "rt-app JSON without a \"tasks\" object; see rt-app's tutorial for the format".into(),
        ));
    };
    let mut toml = String::new();
    for (name, t) in tasks {
        let Some(entries) = t.as_object() else {
            return Err(error(Some(name), None, "is not a JSON object".into()));
        };
        if let Some((key, _)) = entries.iter().find(|(k, _)| !KNOWN.contains(&k.as_str())) {
            return Err(error(
                Some(name),
                Some(key),
                format!("rt-app key not run by rtgauge (it reads {}); remove it or write the set in TOML (docs/taskset.md)", KNOWN.join(", ")),
            ));
        }
        if let Some(n) = t.get("instance").filter(|v| v.as_i64() != Some(1)) {
            return Err(error(
                Some(name),
                Some("instance"),
                format!("{n} copies: write each copy as its own task with its own name"),
            ));
        }
        let run = t.get("run").ok_or_else(|| {
            error(
                Some(name),
                Some("run"),
                "missing; rtgauge runs periodic tasks: give run and timer".into(),
            )
        })?;
        let period = t
            .get("timer")
            .and_then(|tm| tm.get("period"))
            .ok_or_else(|| {
                error(
                    Some(name),
                    Some("timer.period"),
                    "missing; rtgauge runs periodic tasks: give run and timer".into(),
                )
            })?;
        let escaped = name.replace('\\', "\\\\").replace('"', "\\\"");
        toml.push_str(&format!(
            "[[task]]\nname = \"{escaped}\"\nwork = \"{}\"\nperiod = \"{}\"\n",
            micros(name, "run", run)?,
            micros(name, "timer.period", period)?
        ));
        let policy = match t.get("policy").and_then(Json::as_str) {
            None | Some("SCHED_OTHER")
                if t.get("priority").is_none() && t.get("policy").is_none() =>
            {
                "other"
            }
            None => "fifo",
            Some("SCHED_FIFO") => "fifo",
            Some("SCHED_RR") => "rr",
            Some("SCHED_DEADLINE") => "deadline",
            Some("SCHED_OTHER") => "other",
            Some(other) => {
                return Err(error(
                    Some(name),
                    Some("policy"),
                    format!("'{other}' is not SCHED_FIFO, SCHED_RR, SCHED_DEADLINE or SCHED_OTHER"),
                ))
            }
        };
        toml.push_str(&format!("policy = \"{policy}\"\n"));
        if matches!(policy, "fifo" | "rr") {
            if let Some(p) = t.get("priority") {
                toml.push_str(&format!("priority = {p}\n"));
            }
        }
        if let Some(d) = t.get("dl-deadline") {
            toml.push_str(&format!(
                "deadline = \"{}\"\n",
                micros(name, "dl-deadline", d)?
            ));
        }
        if let Some(d) = t.get("delay").filter(|d| d.as_i64() != Some(0)) {
            toml.push_str(&format!("offset = \"{}\"\n", micros(name, "delay", d)?));
        }
        match t.get("cpus").and_then(Json::as_array) {
            None => {}
            Some([cpu]) if cpu.as_i64().is_some_and(|c| c >= 0) => {
                toml.push_str(&format!("cpu = {cpu}\n"))
            }
            Some(_) => {
                return Err(error(
                    Some(name),
                    Some("cpus"),
                    "rtgauge places each task on one CPU; give one CPU, e.g. [1]".into(),
                ))
            }
        }
    }
    super::spec::parse_toml_text(&toml)
}

#[cfg(test)]
mod tests {
    use super::super::spec::{parse, Platform, TaskPolicy};

    #[test]
    fn an_rt_app_periodic_set_reads_as_the_same_tasks() {
        let json = r#"{
            "global": { "duration": 5 },
            "tasks": {
                "servo": { "loop": -1, "run": 300, "timer": { "ref": "servo", "period": 1000 },
                           "policy": "SCHED_FIFO", "priority": 90, "cpus": [1] },
                "planner": { "run": 2000, "timer": { "ref": "p", "period": 10000 },
                             "policy": "SCHED_FIFO", "priority": 20 }
            }
        }"#;
        let set = parse(json, &Platform::for_tests()).unwrap();
        let servo = set.tasks.iter().find(|t| t.name == "servo").unwrap();
        assert_eq!(
            (servo.work_ns, servo.period_ns, servo.priority, servo.cpu),
            (300_000, 1_000_000, 90, Some(1))
        );
        assert_eq!(servo.policy, TaskPolicy::Fifo);
        let planner = set.tasks.iter().find(|t| t.name == "planner").unwrap();
        assert_eq!(
            (planner.work_ns, planner.period_ns, planner.cpu),
            (2_000_000, 10_000_000, None)
        );
    }

    #[test]
    fn rt_app_keys_rtgauge_does_not_run_are_refused_by_name() {
        let json = r#"{ "tasks": { "t": { "run": 10, "timer": { "period": 100 }, "priority": 5, "lock": "m" } } }"#;
        let e = parse(json, &Platform::for_tests()).unwrap_err().to_string();
        assert!(
            e.starts_with("task t: lock: rt-app key not run by rtgauge"),
            "{e}"
        );
        let json = r#"{ "tasks": { "t": { "run": 10, "priority": 5 } } }"#;
        let e = parse(json, &Platform::for_tests()).unwrap_err().to_string();
        assert!(e.starts_with("task t: timer.period: missing"), "{e}");
    }
}
