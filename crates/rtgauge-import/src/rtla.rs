//! rtla's text output.
//!
//! - `rtla timerlat hist` / `rtla osnoise hist`: `# RTLA … histogram`, the time unit and
//!   duration as comments, a header naming one column per CPU and context (`IRQ-000`,
//!   `Thr-000`, `Usr-000`; osnoise `CPU-000`), one line per bucket (`Index` = the bucket's
//!   lower edge in the stated unit, `-b` wide), then `over:`, `count:`, `min:`, `avg:` and
//!   `max:`. A CPU without samples has no column; a run without any has none at all. A
//!   trailing `ALL:` block (the same samples over all CPUs) is skipped; the auto-analysis
//!   after the figures is kept as a note.
//! - `rtla timerlat top`: per CPU the count and the cur/min/avg/max of each context;
//!   `rtla osnoise top`: per CPU the periods, noise, longest noise and interference counts.
//!   Only min/avg/max exist there: no percentiles.

use crate::{
    dhms_ns, document, malformed, series_of, shown, strip_escapes, ImportError, Reported, Shell,
};
use rtgauge_probes::names::TIMERLAT;
use rtgauge_result::{RunResult, Series};
use std::collections::BTreeMap;
use std::path::Path;

/// rtla's timer latency tool, as its command line and output name it. Its results become runs
/// of rtgauge's probe on the same tracer ([`TIMERLAT`]); rtla osnoise's keep rtla's name.
const RTLA_TIMERLAT: &str = "timerlat";
/// The series of an osnoise CPU column: the noise rtla measured on that CPU.
const OSNOISE_SERIES: &str = "noise";

/// The probe an rtla tool's results are runs of.
fn probe_of(tool: &str) -> &str {
    if tool == RTLA_TIMERLAT {
        TIMERLAT
    } else {
        tool
    }
}

pub fn parse(path: &Path, text: &str) -> Result<RunResult, ImportError> {
    let clean: Vec<String> = text.lines().map(strip_escapes).collect();
    if clean.iter().any(|l| l.contains("Timer Latency (")) {
        return timerlat_top(path, &clean);
    }
    if clean
        .iter()
        .any(|l| l.trim_start().starts_with("CPU Period"))
    {
        return osnoise_top(path, &clean);
    }
    hist(path, &clean)
}

/// `-b N` / `--bucket-size N` / `--bucket-size=N` in an rtla command line.
fn bucket_option(command: &[String]) -> Option<u64> {
    command.iter().enumerate().find_map(|(i, a)| {
        if a == "-b" || a == "--bucket-size" {
            command.get(i + 1)?.parse().ok()
        } else if let Some(v) = a.strip_prefix("--bucket-size=") {
            v.parse().ok()
        } else {
            a.strip_prefix("-b").filter(|v| !v.is_empty())?.parse().ok()
        }
    })
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

fn hist(path: &Path, lines: &[String]) -> Result<RunResult, ImportError> {
    // Microseconds unless the header says nanoseconds (rtla's -n).
    let mut scale = 1000u64;
    let mut kind = None;
    let mut duration_ns = None;
    let mut command: Vec<String> = Vec::new();
    let mut columns: Option<Vec<(String, String)>> = None;
    let mut rows: Vec<(u64, Vec<u64>)> = Vec::new();
    let mut figures: BTreeMap<&'static str, Vec<Option<u64>>> = BTreeMap::new();
    let mut after = false;
    let mut all_block = false;
    let mut notes: Vec<String> = Vec::new();
    for (i, raw) in lines.iter().enumerate() {
        let line_no = i + 1;
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        if let Some(comment) = line.strip_prefix('#') {
            if after {
                notes.push(line.to_string());
                continue;
            }
            let comment = comment.trim();
            if comment.contains("nanoseconds") {
                scale = 1;
            }
            if comment.contains(RTLA_TIMERLAT) {
                kind = Some(RTLA_TIMERLAT);
            } else if comment.contains("osnoise") {
                kind = Some("osnoise");
            }
            if let Some(d) = comment.strip_prefix("Duration:") {
                duration_ns = dhms_ns(d);
            }
            continue;
        }
        let mut fields = line.split_whitespace();
        let head = fields.next().unwrap_or("");
        if head == "Index" {
            let mut cols = Vec::new();
            for name in fields {
                let (context, cpu) = name.split_once('-').ok_or_else(|| {
                    malformed(
                        path,
                        line_no,
                        format!("column `{}` is not CONTEXT-CPU (e.g. Thr-000)", shown(name)),
                    )
                })?;
                let series = match context {
                    "IRQ" => "irq",
                    "Thr" => "thread",
                    "Usr" => "user",
                    "CPU" => OSNOISE_SERIES,
                    other => {
                        return Err(malformed(
                            path,
                            line_no,
                            format!(
                            "unknown context `{}` (IRQ, Thr or Usr for timerlat, CPU for osnoise)",
                            shown(other)
                        ),
                        ))
                    }
                };
                if series == OSNOISE_SERIES {
                    kind = Some("osnoise");
                } else {
                    kind = kind.or(Some(RTLA_TIMERLAT));
                }
                let cpu = cpu.parse::<u32>().map_err(|_| {
                    malformed(
                        path,
                        line_no,
                        format!("`{}` in `{}` is not a CPU number", shown(cpu), shown(name)),
                    )
                })?;
                cols.push((series.to_string(), cpu.to_string()));
            }
            for key in ["over:", "count:", "min:", "avg:", "max:"] {
                figures.insert(key_name(key), vec![None; cols.len()]);
            }
            columns = Some(cols);
            continue;
        }
        if head == "ALL:" {
            all_block = true;
            after = true;
            continue;
        }
        if after {
            // The ALL: block's figures, then the auto-analysis.
            if all_block && ["over:", "count:", "min:", "avg:", "max:"].contains(&head) {
                continue;
            }
            notes.push(line.to_string());
            continue;
        }
        let Some(cols) = columns.as_ref() else {
            if line.contains(" hist") && (line.contains(RTLA_TIMERLAT) || line.contains("osnoise"))
            {
                // The command, as a shell prompt or a log shows it.
                let at = line
                    .find("rtla")
                    .or_else(|| line.find(RTLA_TIMERLAT))
                    .or_else(|| line.find("osnoise"))
                    .unwrap_or(0);
                command = line[at..].split_whitespace().map(str::to_string).collect();
                continue;
            }
            return Err(malformed(
                path,
                line_no,
                format!("`{}` before the `Index` header line: expected rtla timerlat or osnoise hist output (`# RTLA … histogram`, then `Index IRQ-000 Thr-000 …`)", shown(line)),
            ));
        };
        let values: Vec<&str> = fields.collect();
        if values.len() != cols.len() {
            return Err(malformed(
                path,
                line_no,
                format!("{} values for {} columns", values.len(), cols.len()),
            ));
        }
        let parse = |v: &str| -> Result<Option<u64>, ImportError> {
            if v == "-" {
                return Ok(None);
            }
            v.parse::<f64>()
                .ok()
                .filter(|x| x.is_finite() && *x >= 0.0)
                .map(|x| Some((x * 1000.0).round() as u64))
                .ok_or_else(|| malformed(path, line_no, format!("`{}` is not a number", shown(v))))
        };
        match head {
            "over:" | "count:" | "min:" | "avg:" | "max:" => {
                let key = key_name(head);
                let mut parsed = Vec::with_capacity(values.len());
                for v in &values {
                    // Held in thousandths until the unit is applied below.
                    parsed.push(parse(v)?);
                }
                figures.insert(key, parsed);
                if head == "max:" {
                    after = true;
                }
            }
            index => {
                let bucket = index.parse::<u64>().map_err(|_| {
                    malformed(
                        path,
                        line_no,
                        format!(
                            "`{index}` is neither a bucket index nor over:/count:/min:/avg:/max:"
                        ),
                    )
                })?;
                let mut counts = Vec::with_capacity(values.len());
                for v in &values {
                    counts.push(parse(v)?.unwrap_or(0) / 1000);
                }
                rows.push((bucket, counts));
            }
        }
    }
    let Some(columns) = columns else {
        return Err(malformed(
            path,
            1,
            "no `Index` header line: expected rtla timerlat or osnoise hist output",
        ));
    };
    // The bucket width: the command's -b, else the largest step every index is a multiple of.
    let width = bucket_option(&command)
        .unwrap_or_else(|| rows.iter().fold(0, |g, r| gcd(g, r.0)))
        .max(1);
    let limit = rows
        .last()
        .map(|r| r.0.saturating_add(width).saturating_mul(scale));
    let figure = |key: &str, c: usize| -> Option<u64> {
        // Parsed in thousandths of the unit: counts back to whole, times to ns.
        let v = figures.get(key)?.get(c).copied().flatten()?;
        Some(if key == "count" || key == "over" {
            v / 1000
        } else {
            v.saturating_mul(scale) / 1000
        })
    };
    let mut warnings = Vec::new();
    let mut series = Vec::new();
    for (c, (name, cpu)) in columns.iter().enumerate() {
        let buckets: Vec<(u64, u64)> = rows
            .iter()
            .map(|r| (r.0.saturating_mul(scale), r.1[c]))
            .collect();
        let over = figure("over", c);
        let r = Reported {
            count: figure("count", c).unwrap_or(0),
            buckets,
            bucket_ns: width.saturating_mul(scale),
            unit_ns: scale,
            overflow: over,
            limit_ns: limit.filter(|_| over.unwrap_or(0) > 0),
            min_ns: figure("min", c),
            mean_ns: figure("avg", c),
            max_ns: figure("max", c),
        };
        let kind_name = kind.unwrap_or(RTLA_TIMERLAT);
        let what = format!("{kind_name} {name} cpu {cpu}");
        series.push(series_of(
            name.as_str(),
            &[("cpu", cpu.clone())],
            &r,
            &mut warnings,
            &what,
        ));
    }
    let kind = kind.unwrap_or(RTLA_TIMERLAT);
    if series.is_empty() {
        warnings.push(rtgauge_result::Warning::new(
            "imported_no_samples",
            format!("the rtla {kind} histogram has no CPU column: no samples were recorded"),
        ));
    }
    let mut shell = Shell {
        tool: format!("rtla {kind}"),
        command_line: if command.is_empty() {
            vec!["rtla".into(), kind.into(), "hist".into()]
        } else {
            command
        },
        duration_ns,
        ..Default::default()
    };
    // -P d:runtime:period (deadline), f:PRIO, r:PRIO, o:NICE: the threads' scheduling.
    if let Some(p) = shell
        .command_line
        .iter()
        .position(|a| a == "-P" || a == "--priority")
    {
        let value = shell.command_line.get(p + 1).cloned().unwrap_or_default();
        let mut f = value.split(':');
        let (kind, prio) = (
            f.next().unwrap_or(""),
            f.next().and_then(|v| v.parse().ok()),
        );
        let (policy, priority) = match kind.to_ascii_lowercase().as_str() {
            "d" => (Some("deadline"), Some(0)),
            "f" => (Some("fifo"), prio),
            "r" => (Some("rr"), prio),
            "o" => (Some("other"), Some(0)),
            _ => (None, None),
        };
        shell.policy = policy.map(String::from);
        shell.priority = priority;
    }
    if width > 1 {
        shell
            .params
            .insert("bucket".into(), format!("{}ns", width * scale));
    }
    if !notes.is_empty() {
        shell
            .notes
            .push(format!("rtla's analysis: {}", notes.join("\n")));
    }
    Ok(document(path, shell, probe_of(kind), series, warnings))
}

fn key_name(head: &str) -> &'static str {
    match head {
        "over:" => "over",
        "count:" => "count",
        "min:" => "min",
        "avg:" => "avg",
        _ => "max",
    }
}

/// A number of rtla's tables, refusing anything else at `line`.
fn number(path: &Path, line: usize, v: &str) -> Result<f64, ImportError> {
    v.parse::<f64>()
        .ok()
        .filter(|x| x.is_finite() && *x >= 0.0)
        .ok_or_else(|| malformed(path, line, format!("`{}` is not a number", shown(v))))
}

fn timerlat_top(path: &Path, lines: &[String]) -> Result<RunResult, ImportError> {
    let mut scale = 1000u64;
    let mut groups: Vec<&'static str> = Vec::new();
    let mut duration_ns = None;
    let mut rows: BTreeMap<u32, (u64, Vec<[f64; 3]>)> = BTreeMap::new();
    let mut last_row = 0;
    for (i, raw) in lines.iter().enumerate() {
        let line = raw.trim();
        if line.contains("Timer Latency (") {
            let parts: Vec<&str> = line.split('|').collect();
            duration_ns = dhms_ns(parts[0].trim());
            scale = if line.contains("(ns)") { 1 } else { 1000 };
            groups = parts[1..]
                .iter()
                .map(|p| {
                    if p.contains("IRQ") {
                        "irq"
                    } else if p.contains("Thread") {
                        "thread"
                    } else {
                        "user"
                    }
                })
                .collect();
            // A new table (top refreshes): its rows have this header's groups, and the last
            // table is the final one, so the rows of earlier tables go.
            rows.clear();
            continue;
        }
        let parts: Vec<&str> = line.split('|').collect();
        let mut head = parts[0].split_whitespace();
        let (Some(cpu), Some(count)) = (head.next(), head.next()) else {
            continue;
        };
        let (Ok(cpu), Some(count)) = (cpu.parse::<u32>(), count.strip_prefix('#')) else {
            continue;
        };
        if groups.is_empty() || parts.len() != groups.len() + 1 {
            return Err(malformed(
                path,
                i + 1,
                format!(
                    "a CPU row with {} groups where the header names {}",
                    parts.len() - 1,
                    groups.len()
                ),
            ));
        }
        let count = number(path, i + 1, count)? as u64;
        let mut values = Vec::new();
        for part in &parts[1..] {
            let f: Vec<&str> = part.split_whitespace().collect();
            if f.len() != 4 {
                return Err(malformed(
                    path,
                    i + 1,
                    format!("`{}` is not cur min avg max", shown(part.trim())),
                ));
            }
            values.push([
                number(path, i + 1, f[1])?,
                number(path, i + 1, f[2])?,
                number(path, i + 1, f[3])?,
            ]);
        }
        // top refreshes: the last table is the final one.
        rows.insert(cpu, (count, values));
        last_row = i;
    }
    if rows.is_empty() {
        return Err(malformed(
            path,
            1,
            "no CPU rows (`  1 #12322 | 0 0 1 15 | …`): not rtla timerlat top output",
        ));
    }
    let notes: Vec<&str> = lines[last_row + 1..]
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .collect();
    let mut warnings = Vec::new();
    let mut series = Vec::new();
    for (g, group) in groups.iter().enumerate() {
        for (cpu, (count, values)) in &rows {
            let [min, avg, max] = values[g];
            let ns = |v: f64| Some((v * scale as f64).round() as u64);
            let r = Reported {
                count: *count,
                min_ns: ns(min),
                mean_ns: ns(avg),
                max_ns: ns(max),
                ..Default::default()
            };
            series.push(series_of(
                group,
                &[("cpu", cpu.to_string())],
                &r,
                &mut warnings,
                &format!("timerlat {group} cpu {cpu}"),
            ));
        }
    }
    let mut shell = Shell {
        tool: "rtla timerlat".into(),
        command_line: vec!["rtla".into(), RTLA_TIMERLAT.into(), "top".into()],
        duration_ns,
        ..Default::default()
    };
    if !notes.is_empty() {
        shell
            .notes
            .push(format!("rtla's analysis: {}", notes.join("\n")));
    }
    // Percentile-less rows are expected of top: one note for the run, not one per row.
    warnings.retain(|w| w.code != "imported_without_histogram");
    warnings.push(rtgauge_result::Warning::new(
        "imported_without_histogram",
        "rtla timerlat top gives count, min, average and max only: median and percentiles are absent (rtla timerlat hist has them)",
    ));
    Ok(document(path, shell, TIMERLAT, series, warnings))
}

fn osnoise_top(path: &Path, lines: &[String]) -> Result<RunResult, ImportError> {
    let mut scale = 1000u64;
    let mut duration_ns = None;
    let mut rows: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
    for (i, raw) in lines.iter().enumerate() {
        let line = raw.trim();
        if let Some(d) = line.strip_prefix("duration:") {
            let (d, unit) = d.split_once('|').unwrap_or((d, ""));
            duration_ns = dhms_ns(d.trim());
            if unit.contains("ns") {
                scale = 1;
            }
            continue;
        }
        let mut f = line.split_whitespace();
        let (Some(cpu), Some(periods)) = (f.next(), f.next()) else {
            continue;
        };
        let (Ok(cpu), Some(periods)) = (cpu.parse::<u32>(), periods.strip_prefix('#')) else {
            continue;
        };
        let mut values = vec![number(path, i + 1, periods)?];
        for v in f {
            values.push(number(path, i + 1, v)?);
        }
        if values.len() != 11 {
            return Err(malformed(
                path,
                i + 1,
                format!("{} figures where osnoise top has 11 (periods, runtime, noise, % available, max noise, max single, HW, NMI, IRQ, softirq, thread)", values.len()),
            ));
        }
        rows.insert(cpu, values);
    }
    if rows.is_empty() {
        return Err(malformed(
            path,
            1,
            "no CPU rows (`  0 #59  53100000  304896 …`): not rtla osnoise top output",
        ));
    }
    let mut series = Vec::new();
    for (cpu, v) in &rows {
        let periods = v[0] as u64;
        let ns = |x: f64| (x * scale as f64).round() as u64;
        let stats = rtgauge_stats::Summary {
            count: periods,
            mean_ns: (periods > 0).then(|| ns(v[2] / periods as f64)),
            max_ns: Some(ns(v[4])),
            ..Default::default()
        };
        let mut s = Series::new("noise_per_period", stats).label("cpu", cpu.to_string());
        s.counters.insert("runtime_ns".into(), ns(v[1]));
        s.counters.insert("max_single_noise_ns".into(), ns(v[5]));
        for (k, name) in ["hw", "nmi", "irq", "softirq", "thread"].iter().enumerate() {
            s.counters.insert((*name).into(), v[6 + k] as u64);
        }
        s.metrics.insert("cpu_available_percent".into(), v[3]);
        series.push(s);
    }
    let warnings = vec![rtgauge_result::Warning::new(
        "imported_without_histogram",
        "rtla osnoise top gives per CPU the noise per period (mean and max), the longest single noise and interference counts: no distribution",
    )];
    let shell = Shell {
        tool: "rtla osnoise".into(),
        command_line: vec!["rtla".into(), "osnoise".into(), "top".into()],
        duration_ns,
        ..Default::default()
    };
    Ok(document(path, shell, "osnoise", series, warnings))
}
