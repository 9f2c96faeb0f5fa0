//! `rtla timerlat hist` text output: a header naming one column per CPU and context
//! (`IRQ-000`, `Thr-000`, `Usr-000`), one line per bucket (`Index` = the latency in the
//! time unit the header states), then `over:`, `count:`, `min:`, `avg:` and `max:` lines.
//! A trailing `ALL:` summary across CPUs is ignored (the per-CPU rows hold the same samples).

use crate::{document, malformed, series_of, ImportError, Reported, Shell};
use rtgauge_result::RunResult;
use std::collections::BTreeMap;
use std::path::Path;

pub fn parse(path: &Path, text: &str) -> Result<RunResult, ImportError> {
    // Microseconds unless the header says nanoseconds (rtla's -n).
    let mut scale = 1000u64;
    let mut columns: Vec<(String, String)> = Vec::new();
    let mut reported: Vec<Reported> = Vec::new();
    let mut over: Vec<u64> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line_no = i + 1;
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        if let Some(comment) = line.strip_prefix('#') {
            if comment.contains("nanoseconds") {
                scale = 1;
            }
            continue;
        }
        let mut fields = line.split_whitespace();
        let head = fields.next().unwrap_or("");
        if head == "Index" {
            for name in fields {
                let (context, cpu) = name.split_once('-').ok_or_else(|| {
                    malformed(
                        path,
                        line_no,
                        format!("column `{name}` is not CONTEXT-CPU (e.g. Thr-000)"),
                    )
                })?;
                let series = match context {
                    "IRQ" => "irq",
                    "Thr" => "thread",
                    "Usr" => "user",
                    other => {
                        return Err(malformed(
                            path,
                            line_no,
                            format!("unknown context `{other}` (IRQ, Thr or Usr)"),
                        ))
                    }
                };
                let cpu = cpu.parse::<u32>().map_err(|_| {
                    malformed(
                        path,
                        line_no,
                        format!("`{cpu}` in `{name}` is not a CPU number"),
                    )
                })?;
                columns.push((series.to_string(), cpu.to_string()));
            }
            reported = vec![Reported::default(); columns.len()];
            over = vec![0; columns.len()];
            continue;
        }
        if head == "ALL:" {
            break;
        }
        if columns.is_empty() {
            return Err(malformed(
                path,
                line_no,
                "data before the `Index` header line: not rtla timerlat hist output",
            ));
        }
        let values: Vec<&str> = fields.collect();
        if values.len() != columns.len() {
            return Err(malformed(
                path,
                line_no,
                format!("{} values for {} columns", values.len(), columns.len()),
            ));
        }
        let parse = |v: &str| -> Result<Option<u64>, ImportError> {
            if v == "-" {
                return Ok(None);
            }
            v.parse::<f64>()
                .ok()
                .filter(|x| x.is_finite() && *x >= 0.0)
                .map(|x| Some((x * scale as f64).round() as u64))
                .ok_or_else(|| malformed(path, line_no, format!("`{v}` is not a number")))
        };
        for (c, v) in values.iter().enumerate() {
            let r = &mut reported[c];
            match head {
                "over:" => over[c] = parse(v)?.unwrap_or(0) / scale,
                "count:" => r.count = parse(v)?.unwrap_or(0) / scale,
                "min:" => r.min_ns = parse(v)?,
                "avg:" => r.mean_ns = parse(v)?,
                "max:" => r.max_ns = parse(v)?,
                index => {
                    let bucket = index.parse::<u64>().map_err(|_| {
                        malformed(path, line_no, format!("`{index}` is neither a bucket index nor over:/count:/min:/avg:/max:"))
                    })?;
                    let count = parse(v)?.unwrap_or(0) / scale;
                    if count > 0 {
                        r.buckets.push((bucket * scale, count));
                    }
                }
            }
        }
    }
    if columns.is_empty() {
        return Err(malformed(
            path,
            1,
            "no `Index` header line: not rtla timerlat hist output",
        ));
    }
    let mut warnings = Vec::new();
    let mut series = Vec::new();
    for (((name, cpu), mut r), over) in columns.into_iter().zip(reported).zip(over) {
        // A histogram without count: line counts what it holds plus the overflow.
        if r.count == 0 {
            r.count = r.buckets.iter().map(|b| b.1).sum::<u64>() + over;
        }
        let what = format!("timerlat {name} cpu {cpu}");
        series.push(series_of(
            name.as_str(),
            &[("cpu", cpu)],
            &r,
            &mut warnings,
            &what,
        ));
    }
    Ok(document(
        Shell {
            tool: "rtla timerlat",
            version: String::new(),
            command_line: vec!["rtla".into(), "timerlat".into(), "hist".into()],
            hostname: String::new(),
            kernel_release: String::new(),
            started_unix_ns: 0,
            finished_unix_ns: 0,
            priority: 95,
            params: BTreeMap::new(),
        },
        "timerlat",
        series,
        warnings,
    ))
}
