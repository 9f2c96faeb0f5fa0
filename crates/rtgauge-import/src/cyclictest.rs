//! rt-tests output: the `--json=FILE` document every rt-tests program writes (cyclictest,
//! cyclicdeadline and oslat: one entry per measuring thread with min, avg, max and a
//! histogram; ptsematest, pmqtest, sigwaittest and svsematest: a sender and a receiver per
//! pair), and the command-line options of the rt-tests programs. cyclictest's text outputs
//! are read in `cyclictest_text` and `cyclictest_status`.

use crate::{
    count_lost_periods, document, json_histogram, malformed, rfc2822_ns, series_of, to_ns,
    ImportError, Reported, Shell,
};
use rtgauge_probes::names::{CYCLIC, RESPONSE};
use rtgauge_result::{RunResult, Warning};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// The options of an rt-tests command line as the program parsed them: long name → value
/// (empty for a flag). Short options, clustered (`-Sp98`) or not, become their long names.
#[derive(Debug, Default)]
pub(crate) struct Options(BTreeMap<String, String>);

/// Short option → (long name, takes a value: 0 no, 1 yes, 2 optional).
fn short_option(tool: &str, c: char) -> Option<(&'static str, u8)> {
    let common = match c {
        'a' => ("affinity", 2),
        'b' => ("breaktrace", 1),
        'd' => ("distance", 1),
        'D' => ("duration", 1),
        'i' => ("interval", 1),
        'l' => ("loops", 1),
        'p' => ("priority", 1),
        'q' => ("quiet", 0),
        'S' => ("smp", 0),
        't' => ("threads", 2),
        _ => ("", 0),
    };
    let specific = match (tool, c) {
        ("oslat", 'b') => ("bucket-size", 1),
        ("oslat", 'c') => ("cpu-list", 1),
        ("oslat", 'C') => ("cpu-main-thread", 1),
        ("oslat", 'f') => ("rtprio", 1),
        ("oslat", 'm') => ("workload-mem", 1),
        ("oslat", 'w') => ("workload", 1),
        ("oslat", 'T') => ("trace-threshold", 1),
        ("oslat", 'B' | 'z' | 's') => ("flag", 0),
        ("cyclicdeadline", 's') => ("step", 1),
        ("cyclicdeadline", 't') => ("threads", 1),
        ("cyclictest", 'A') => ("aligned", 1),
        ("cyclictest", 'c') => ("clock", 1),
        ("cyclictest", 'h') => ("histogram", 1),
        ("cyclictest", 'H') => ("histofall", 1),
        ("cyclictest", 'm') => ("mlockall", 0),
        ("cyclictest", 'N') => ("nsecs", 0),
        ("cyclictest", 'o') => ("oscope", 1),
        ("cyclictest", 'M' | 'r' | 'R' | 's' | 'u' | 'v' | 'x') => ("flag", 0),
        _ => ("", 0),
    };
    let (name, arg) = if specific.0.is_empty() {
        common
    } else {
        specific
    };
    (!name.is_empty()).then_some((name, arg))
}

/// Long options that take their value from the next argument when not written `--x=V`.
const LONG_WITH_VALUE: &[&str] = &[
    "aligned",
    "breaktrace",
    "bucket-size",
    "clock",
    "cpu-list",
    "cpu-main-thread",
    "distance",
    "duration",
    "histfile",
    "histofall",
    "histogram",
    "interval",
    "json",
    "latency",
    "loops",
    "mainaffinity",
    "policy",
    "prio",
    "priority",
    "rtprio",
    "spike",
    "spike-nodes",
    "step",
    "trace-threshold",
    "workload",
    "workload-mem",
];

impl Options {
    pub(crate) fn parse(tool: &str, args: &[String]) -> Options {
        let mut out = BTreeMap::new();
        let optional_value = |next: Option<&String>| {
            next.filter(|v| v.starts_with(|c: char| c.is_ascii_digit()))
                .cloned()
        };
        let mut i = 1;
        while i < args.len() {
            let a = &args[i];
            i += 1;
            if let Some(long) = a.strip_prefix("--") {
                let (name, value) = match long.split_once('=') {
                    Some((n, v)) => (n.to_string(), v.to_string()),
                    None if LONG_WITH_VALUE.contains(&long) => {
                        i += 1;
                        (
                            long.to_string(),
                            args.get(i - 1).cloned().unwrap_or_default(),
                        )
                    }
                    None if long == "affinity" || long == "threads" => {
                        let v = optional_value(args.get(i));
                        if v.is_some() {
                            i += 1;
                        }
                        (long.to_string(), v.unwrap_or_default())
                    }
                    None => (long.to_string(), String::new()),
                };
                let name = if name == "prio" {
                    "priority".into()
                } else {
                    name
                };
                out.insert(name, value);
                continue;
            }
            let Some(cluster) = a.strip_prefix('-') else {
                continue;
            };
            let chars: Vec<char> = cluster.chars().collect();
            for (k, &c) in chars.iter().enumerate() {
                let Some((name, arg)) = short_option(tool, c) else {
                    continue;
                };
                let rest: String = chars[k + 1..].iter().collect();
                match arg {
                    0 => {
                        out.insert(name.to_string(), String::new());
                    }
                    _ if !rest.is_empty() => {
                        out.insert(name.to_string(), rest);
                        break;
                    }
                    1 => {
                        out.insert(name.to_string(), args.get(i).cloned().unwrap_or_default());
                        i += 1;
                        break;
                    }
                    _ => {
                        let v = optional_value(args.get(i));
                        if v.is_some() {
                            i += 1;
                        }
                        out.insert(name.to_string(), v.unwrap_or_default());
                        break;
                    }
                }
            }
        }
        Options(out)
    }

    pub(crate) fn has(&self, name: &str) -> bool {
        self.0.contains_key(name)
    }

    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        self.0
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }

    fn number(&self, name: &str) -> Option<u64> {
        self.get(name)?.parse().ok()
    }
}

/// The first line of `text` holding `"key`, for errors.
fn line_of(text: &str, key: &str) -> usize {
    text.find(&format!("\"{key}\""))
        .map(|at| text[..at].matches('\n').count() + 1)
        .unwrap_or(1)
}

pub fn parse_json(path: &Path, text: &str) -> Result<RunResult, ImportError> {
    let doc: Value = serde_json::from_str(text)
        .map_err(|e| malformed(path, e.line(), format!("not JSON: {e}")))?;
    let threads = doc
        .get("thread")
        .and_then(Value::as_object)
        .ok_or_else(|| {
            malformed(
                path,
                1,
                "no \"thread\" object: not the --json output of an rt-tests program",
            )
        })?;
    let command = doc
        .get("cmdline:")
        .or_else(|| doc.get("cmdline"))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let args: Vec<String> = command.split_whitespace().map(str::to_string).collect();
    let tool = args
        .first()
        .map(|a| a.rsplit('/').next().unwrap_or(a).to_string())
        .unwrap_or_default();
    let opts = Options::parse(&tool, &args);
    let pairs = threads.values().any(|t| t.get("receiver").is_some());
    let oslat = tool == "oslat" || threads.values().any(|t| t.get("freq").is_some());
    let tool = match tool.as_str() {
        "" if pairs => "rt-tests (sender/receiver)".to_string(),
        "" if oslat => "oslat".to_string(),
        "" => "cyclictest".to_string(),
        t => t.to_string(),
    };
    // cyclictest -N writes nanoseconds; every other figure is in µs.
    let scale = if tool == "cyclictest" && opts.has("nsecs") {
        1
    } else {
        1000
    };
    let mut warnings = Vec::new();
    let mut series = Vec::new();
    let mut priorities = Vec::new();
    let mut cpus = Vec::new();
    let histogram_limit = opts
        .number("histogram")
        .or_else(|| opts.number("histofall"));
    for (index, thread) in threads {
        let line = line_of(text, index);
        let (stats, count, cpu) = if pairs {
            let sender = thread.get("sender");
            let receiver = thread.get("receiver").ok_or_else(|| {
                malformed(path, line, format!("pair {index}: no \"receiver\" object"))
            })?;
            let count = sender
                .and_then(|s| s.get("samples"))
                .and_then(Value::as_f64)
                .ok_or_else(|| {
                    malformed(
                        path,
                        line,
                        format!("pair {index}: no \"sender\".\"samples\""),
                    )
                })?;
            if let Some(p) = receiver.get("priority").and_then(Value::as_i64) {
                priorities.push(p as i32);
            }
            (receiver, count, receiver.get("cpu").and_then(Value::as_i64))
        } else {
            let count = match thread.get("cycles").and_then(Value::as_f64) {
                Some(c) => c,
                // oslat counts no cycles: its histogram holds every sample.
                None if oslat => 0.0,
                None => {
                    return Err(malformed(
                        path,
                        line,
                        format!("thread {index}: no \"cycles\" (nor a \"receiver\", as ptsematest, pmqtest, sigwaittest and svsematest write)"),
                    ))
                }
            };
            (thread, count, thread.get("cpu").and_then(Value::as_i64))
        };
        let field = |name: &str| {
            stats
                .get(name)
                .and_then(Value::as_f64)
                .and_then(|v| to_ns(v, scale))
        };
        let mut r = Reported {
            buckets: json_histogram(
                path,
                line,
                &format!("thread {index}"),
                stats.get("histogram"),
                scale,
            )?,
            unit_ns: scale,
            bucket_ns: scale,
            count: count as u64,
            min_ns: field("min"),
            max_ns: field("max"),
            mean_ns: field("avg"),
            ..Default::default()
        };
        if oslat {
            // oslat's last bucket counts everything from its value up (its overflow).
            if let Some(last) = r.buckets.iter().map(|b| b.0).max() {
                let over = r.buckets.iter().find(|b| b.0 == last).map_or(0, |b| b.1);
                r.buckets.retain(|b| b.0 != last);
                r.overflow = Some(over);
                r.limit_ns = Some(last);
            }
        } else if let Some(limit) = histogram_limit.filter(|_| !r.buckets.is_empty()) {
            r.limit_ns = Some(limit * scale);
        }
        let mut labels = Vec::new();
        // What rtgauge's own export adds: the exact figures and the series' name.
        let mut name = "latency".to_string();
        if let Some(own) = thread.get("rtgauge") {
            let exact = |k: &str| own.get(k).and_then(Value::as_u64);
            r.min_ns = exact("min_ns").or(r.min_ns);
            r.max_ns = exact("max_ns").or(r.max_ns);
            r.mean_ns = exact("mean_ns").or(r.mean_ns);
            if let Some(n) = own.get("series").and_then(Value::as_str) {
                name = n.to_string();
            }
            if let Some(l) = own.get("labels").and_then(Value::as_object) {
                for (k, v) in l {
                    labels.push((k.clone(), v.as_str().unwrap_or_default().to_string()));
                }
            }
        }
        if labels.is_empty() {
            if let Some(c) = cpu.filter(|c| *c >= 0) {
                cpus.push(c);
            }
            labels.push((
                "cpu".to_string(),
                cpu.filter(|c| *c >= 0)
                    .map(|c| c.to_string())
                    .unwrap_or_else(|| index.clone()),
            ));
            labels.push(("thread".to_string(), index.clone()));
        }
        let what = format!("{tool} thread {index}");
        let label_refs: Vec<(&str, String)> = labels
            .iter()
            .map(|(k, v)| (k.as_str(), v.clone()))
            .collect();
        let mut s = series_of(&name, &label_refs, &r, &mut warnings, &what);
        if let Some(period_ns) = thread_period_ns(&tool, &opts, index) {
            count_lost_periods(&mut s, &r, period_ns, &mut warnings, &what);
        }
        series.push(s);
    }
    // The thread number tells series apart only where two threads share a CPU.
    cpus.sort_unstable();
    let shared = cpus.windows(2).any(|w| w[0] == w[1]);
    if !shared {
        for s in &mut series {
            if s.labels.contains_key("cpu") {
                s.labels.remove("thread");
            }
        }
    }
    // rtgauge's own export names the probe it came from.
    let exported_probe = threads
        .values()
        .find_map(|t| t.get("rtgauge")?.get("probe")?.as_str());
    let probe = match exported_probe {
        Some(p) => p,
        None if pairs => RESPONSE,
        None => CYCLIC,
    };
    let mut shell = shell_of(&doc, &tool, &args);
    // rtgauge's export writes "rtgauge 0.1.0" there.
    if let Some(v) = shell.version.strip_prefix(&format!("{tool} ")) {
        shell.version = v.to_string();
    }
    settings(&mut shell, &tool, &opts, &priorities, pairs);
    if oslat {
        shell.duration_ns = threads
            .values()
            .filter_map(|t| t.get("duration")?.as_f64())
            .fold(None, |a: Option<f64>, d| Some(a.map_or(d, |a| a.max(d))))
            .map(|s| (s * 1e9).round() as u64)
            .or(shell.duration_ns);
    }
    if doc.get("return_code").and_then(Value::as_i64).unwrap_or(0) != 0 {
        warnings.push(Warning::new(
            "imported_return_code",
            format!(
                "{tool} ended with return code {}",
                doc["return_code"].as_i64().unwrap_or(0)
            ),
        ));
    }
    Ok(document(path, shell, probe, series, warnings))
}

/// The interval of cyclictest's or cyclicdeadline's thread `index`, ns: `-i` (1000 µs by
/// default), each further thread `-d` later (500 µs by default; `-d0` gives all the same).
fn thread_period_ns(tool: &str, opts: &Options, index: &str) -> Option<u64> {
    if tool != "cyclictest" && tool != "cyclicdeadline" {
        return None;
    }
    let thread: u64 = index.parse().ok()?;
    let interval = opts.number("interval").unwrap_or(1000);
    let distance = if tool == "cyclictest" {
        opts.number("distance").unwrap_or(500)
    } else {
        0
    };
    interval
        .checked_add(thread.checked_mul(distance)?)?
        .checked_mul(1000)
}

/// The header every rt-tests JSON document has.
fn shell_of(doc: &Value, tool: &str, args: &[String]) -> Shell {
    let sysinfo = doc.get("sysinfo");
    let text_of = |key: &str| {
        sysinfo
            .and_then(|s| s.get(key))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let time_of = |key: &str| doc.get(key).and_then(Value::as_str).and_then(rfc2822_ns);
    Shell {
        tool: tool.to_string(),
        version: doc
            .get("rt_test_version:")
            .or_else(|| doc.get("rt_test_version"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        command_line: args.to_vec(),
        hostname: text_of("nodename"),
        kernel_release: text_of("release"),
        kernel_version: text_of("version"),
        machine: text_of("machine"),
        preempt_rt: sysinfo
            .and_then(|s| s.get("realtime"))
            .and_then(Value::as_i64)
            .map(|v| v == 1),
        started_unix_ns: time_of("start_time"),
        finished_unix_ns: time_of("end_time"),
        ..Default::default()
    }
}

/// Scheduling, memory and placement as the command line states them.
pub(crate) fn settings(
    shell: &mut Shell,
    tool: &str,
    opts: &Options,
    priorities: &[i32],
    pairs: bool,
) {
    if shell.command_line.is_empty() {
        return;
    }
    let pinned = opts.has("affinity") || opts.has("smp");
    match tool {
        "cyclictest" => {
            let priority = opts
                .get("priority")
                .and_then(|p| p.parse::<i32>().ok())
                .unwrap_or(0);
            shell.priority = Some(priority);
            shell.policy = Some(match opts.get("policy") {
                Some("normal") => "other".to_string(),
                Some(p) => p.to_string(),
                None if priority > 0 => "fifo".to_string(),
                None => "other".to_string(),
            });
            shell.memory_locked = Some(opts.has("mlockall"));
            shell.pinned = Some(pinned);
            let interval = opts.get("interval").unwrap_or("1000");
            shell
                .params
                .insert("period".into(), format!("{interval}us"));
            if let Some(d) = opts.get("distance") {
                shell.params.insert("distance".into(), format!("{d}us"));
            }
        }
        "cyclicdeadline" => {
            shell.policy = Some("deadline".into());
            shell.priority = Some(0);
            shell.pinned = Some(pinned);
            let interval = opts.get("interval").unwrap_or("1000");
            shell
                .params
                .insert("period".into(), format!("{interval}us"));
        }
        "oslat" => {
            let prio = opts.get("rtprio").and_then(|p| p.parse::<i32>().ok());
            shell.priority = Some(prio.unwrap_or(0));
            shell.policy = Some(if prio.is_some() { "fifo" } else { "other" }.into());
            // oslat binds each measuring thread to one CPU of its list.
            shell.pinned = Some(true);
        }
        _ if pairs => {
            if let Some(&p) = priorities.first() {
                shell.priority = Some(p);
                shell.policy = Some(if p > 0 { "fifo" } else { "other" }.into());
            }
            shell.pinned = Some(pinned);
            if let Some(i) = opts.get("interval") {
                shell.params.insert("period".into(), format!("{i}us"));
            }
            if let Some(d) = opts.get("distance") {
                shell.params.insert("distance".into(), format!("{d}us"));
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split(' ').map(String::from).collect()
    }

    #[test]
    fn options_are_read_in_every_spelling() {
        let o = Options::parse(
            "cyclictest",
            &args("cyclictest -Sp98 -mi 200 --histogram=100 -d 0 --policy rr"),
        );
        assert_eq!(o.get("priority"), Some("98"));
        assert!(o.has("smp"));
        assert!(o.has("mlockall"));
        assert_eq!(o.get("interval"), Some("200"));
        assert_eq!(o.get("histogram"), Some("100"));
        assert_eq!(o.get("distance"), Some("0"));
        assert_eq!(o.get("policy"), Some("rr"));
        let o = Options::parse("cyclictest", &args("cyclictest -a -t -p 80 -i 1000"));
        assert!(o.has("affinity") && o.get("affinity").is_none());
        assert_eq!(o.get("priority"), Some("80"));
        let o = Options::parse("cyclictest", &args("cyclictest -a 2 -t 1"));
        assert_eq!(o.get("affinity"), Some("2"));
        assert_eq!(o.get("threads"), Some("1"));
    }
}
