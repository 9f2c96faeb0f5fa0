//! `cyclictest --json=FILE`: one entry per thread with cycles, min, avg and max in µs, and
//! the histogram (µs → count) when `-h US` was given.

use crate::{document, malformed, rfc2822_ns, series_of, us_thread_report, ImportError, Shell};
use rtgauge_result::RunResult;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

pub fn parse(path: &Path, text: &str) -> Result<RunResult, ImportError> {
    let doc: Value = serde_json::from_str(text)
        .map_err(|e| malformed(path, e.line(), format!("not JSON: {e}")))?;
    let line_of = |key: &str| {
        text.find(&format!("\"{key}"))
            .map(|at| text[..at].matches('\n').count() + 1)
            .unwrap_or(1)
    };
    let threads = doc
        .get("thread")
        .and_then(Value::as_object)
        .ok_or_else(|| {
            malformed(
                path,
                1,
                "no \"thread\" object: not cyclictest --json output",
            )
        })?;
    let command = doc
        .get("cmdline:")
        .or_else(|| doc.get("cmdline"))
        .and_then(Value::as_str)
        .unwrap_or("cyclictest")
        .to_string();
    let args: Vec<String> = command.split_whitespace().map(str::to_string).collect();
    let mut params = BTreeMap::new();
    // The period: -i/--interval in µs (default 1000).
    let interval_us = option_value(&args, &["-i", "--interval"]).unwrap_or_else(|| "1000".into());
    params.insert("period".to_string(), format!("{interval_us}us"));
    let priority: i32 = option_value(&args, &["-p", "--priority", "--prio"])
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    let mut warnings = Vec::new();
    let mut series = Vec::new();
    for (index, thread) in threads {
        let line = line_of(index);
        let field = |name: &str| thread.get(name).and_then(Value::as_f64);
        let cycles = field("cycles")
            .ok_or_else(|| malformed(path, line, format!("thread {index}: no \"cycles\"")))?;
        let cpu = thread
            .get("cpu")
            .and_then(Value::as_u64)
            .map(|c| c.to_string())
            .unwrap_or_else(|| index.clone());
        let reported = us_thread_report(path, line, index, thread, cycles)?;
        let what = format!("cyclictest thread {index} (cpu {cpu})");
        series.push(series_of(
            "latency",
            &[("cpu", cpu)],
            &reported,
            &mut warnings,
            &what,
        ));
    }
    let sysinfo = doc.get("sysinfo");
    let text_of = |v: Option<&Value>, key: &str| {
        v.and_then(|s| s.get(key))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let time_of = |key: &str| doc.get(key).and_then(Value::as_str).and_then(rfc2822_ns);
    let started = time_of("start_time").unwrap_or(0);
    Ok(document(
        Shell {
            tool: "cyclictest",
            version: doc
                .get("rt_test_version:")
                .or_else(|| doc.get("rt_test_version"))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            command_line: args,
            hostname: text_of(sysinfo, "nodename"),
            kernel_release: text_of(sysinfo, "release"),
            started_unix_ns: started,
            finished_unix_ns: time_of("end_time").unwrap_or(started),
            priority,
            params,
        },
        "cyclic",
        series,
        warnings,
    ))
}

/// The value of `-x V`, `-xV`, `--long=V` or `--long V`.
fn option_value(args: &[String], names: &[&str]) -> Option<String> {
    for (i, a) in args.iter().enumerate() {
        for n in names {
            if a == n {
                return args.get(i + 1).cloned();
            }
            if let Some(v) = a.strip_prefix(&format!("{n}=")) {
                return Some(v.to_string());
            }
            if n.len() == 2 && a.len() > 2 && a.starts_with(n) && !a.starts_with("--") {
                return Some(a[2..].to_string());
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_read_in_every_spelling() {
        let args: Vec<String> = "cyclictest -p95 -i 200 --histogram=100"
            .split(' ')
            .map(String::from)
            .collect();
        assert_eq!(option_value(&args, &["-p"]).as_deref(), Some("95"));
        assert_eq!(option_value(&args, &["-i"]).as_deref(), Some("200"));
        assert_eq!(
            option_value(&args, &["-h", "--histogram"]).as_deref(),
            Some("100")
        );
    }
}
