//! The monitors in the run history: one line per monitor below `rtgauge history`, and their
//! intervals with `rtgauge history --monitor`.

use anyhow::Result;
use rtgauge_result::units::{format_duration_ns, utc};
use rtgauge_store::{MonitorRow, MonitorRun, Store};
use std::collections::BTreeMap;

/// Intervals `history --monitor` lists when `-n` does not say.
const DEFAULT_ROWS: usize = 50;

/// One line per monitor the history holds: what, where, since when, its worst interval.
pub fn summary_lines(store: &Store, host: Option<&str>) -> Result<Vec<String>> {
    store
        .monitor_runs(host)?
        .iter()
        .map(|m| line(store, m))
        .collect()
}

/// Whether a monitor of the history is a clocksync monitor's reference (its probe is
/// `clocksync REFERENCE SOURCE`, its rows two slots: sync.rs).
fn is_clocksync(probe: &str) -> bool {
    probe
        .strip_prefix(rtgauge_probes::names::CLOCKSYNC)
        .is_some_and(|rest| rest.starts_with(' '))
}

/// A clocksync reference's row of failed polls and state changes: counted in its summary,
/// not listed.
fn is_failures_slot(probe: &str, cpu: usize) -> bool {
    is_clocksync(probe) && cpu == super::sync::SLOT_FAILURES
}

fn line(store: &Store, m: &MonitorRun) -> Result<String> {
    if !is_clocksync(&m.probe) {
        return Ok(summary(m));
    }
    let totals = store.monitor_totals(&m.host, &m.probe)?;
    let slot = |s: usize| totals.iter().find(|t| t.cpu == s);
    let polls = slot(super::sync::SLOT_POLLS);
    let failures = slot(super::sync::SLOT_FAILURES);
    Ok(format!(
        "monitor {} on {}: {} intervals from {} to {}, highest |offset| {}, {} polls ({} failed), {} lock losses, {} state changes",
        m.probe,
        m.host,
        polls.map_or(0, |t| t.intervals),
        utc(m.first_unix_ns, "%Y-%m-%d %H:%M"),
        utc(m.last_unix_ns, "%Y-%m-%d %H:%M UTC"),
        format_duration_ns(polls.map_or(0, |t| t.max_ns)),
        polls.map_or(0, |t| t.samples),
        failures.map_or(0, |t| t.samples),
        polls.map_or(0, |t| t.overruns),
        failures.map_or(0, |t| t.overruns),
    ))
}

fn summary(m: &MonitorRun) -> String {
    format!(
        "monitor {} on {}, CPU {}: {} interval rows from {} to {}, highest interval maximum {}, {} samples, {} {}",
        m.probe,
        m.host,
        rtgauge_sysinfo::format_cpu_list(&m.cpus),
        m.rows,
        utc(m.first_unix_ns, "%Y-%m-%d %H:%M"),
        utc(m.last_unix_ns, "%Y-%m-%d %H:%M UTC"),
        format_duration_ns(m.max_ns),
        m.samples,
        m.overruns,
        if m.probe == rtgauge_probes::names::NOISE {
            "stalls"
        } else {
            "overruns"
        }
    )
}

/// `rtgauge history --monitor`: the monitors, then their newest intervals, oldest first.
pub fn history(
    store: &Store,
    host: Option<&str>,
    since_unix_ns: Option<u64>,
    limit: Option<usize>,
) -> Result<u8> {
    let monitors = store.monitor_runs(host)?;
    if monitors.is_empty() {
        println!(
            "no monitor intervals{} in the history {}: `rtgauge monitor` keeps them there",
            host.map(|h| format!(" of {h}")).unwrap_or_default(),
            store.path().display()
        );
        return Ok(crate::EXIT_OK);
    }
    for m in &monitors {
        println!("{}", line(store, m)?);
    }
    let limit = limit.unwrap_or(DEFAULT_ROWS);
    let mut rows = store.monitor_rows(host, since_unix_ns, limit)?;
    rows.retain(|r| !is_failures_slot(&r.probe, r.interval.cpu));
    let clocksync = rows.iter().any(|r| is_clocksync(&r.probe));
    for line in sparklines(&rows) {
        println!("{line}");
    }
    // The maximum's cause, where a traced monitor explained it.
    let causes = rows.iter().any(|r| r.interval.cause.is_some());
    let mut table = rtgauge_report::format::new_table(crate::display::text_style());
    let mut header = vec![
        "Started (UTC)",
        "Width",
        "Host",
        "Probe",
        "CPU",
        "Maximum",
        if clocksync {
            "Samples (clocksync: polls)"
        } else {
            "Samples"
        },
        if clocksync {
            "Overruns (noise: stalls, clocksync: lock losses)"
        } else {
            "Overruns (noise: stalls)"
        },
    ];
    if causes {
        header.push("Cause of the maximum");
    }
    table.set_header(header);
    for r in &rows {
        let i = &r.interval;
        let mut cells = vec![
            utc(i.start_unix_ns, "%Y-%m-%d %H:%M:%S"),
            format_duration_ns(i.width_ns),
            r.host.clone(),
            r.probe.clone(),
            if is_clocksync(&r.probe) {
                "–".to_string()
            } else {
                i.cpu.to_string()
            },
            format_duration_ns(i.max_ns),
            i.samples.to_string(),
            i.overruns.to_string(),
        ];
        if causes {
            cells.push(i.cause.clone().unwrap_or_else(|| "–".into()));
        }
        table.add_row(cells);
    }
    println!("{table}");
    // A clocksync reference keeps two rows per interval; one is listed.
    let mut total = 0;
    for m in &monitors {
        total += match is_clocksync(&m.probe) {
            true => store
                .monitor_totals(&m.host, &m.probe)?
                .iter()
                .filter(|t| !is_failures_slot(&m.probe, t.cpu))
                .map(|t| t.intervals)
                .sum(),
            false => m.rows,
        };
    }
    if (rows.len() as u64) < total && since_unix_ns.is_none() {
        println!(
            "the newest {} of {total} interval rows; -n N lists more, --since DATE from a date",
            rows.len()
        );
    }
    Ok(crate::EXIT_OK)
}

/// The interval maxima of the listed rows as one line per monitor and CPU, oldest first: the
/// trend of a monitor at a glance (`rtgauge trend` follows runs, not intervals).
fn sparklines(rows: &[MonitorRow]) -> Vec<String> {
    let mut per: BTreeMap<(&str, &str, usize), Vec<Option<u64>>> = BTreeMap::new();
    for r in rows
        .iter()
        .filter(|r| !is_failures_slot(&r.probe, r.interval.cpu))
    {
        per.entry((&r.host, &r.probe, r.interval.cpu))
            .or_default()
            .push(Some(r.interval.max_ns));
    }
    per.into_iter()
        .map(|((host, probe, cpu), maxima)| {
            let highest = maxima.iter().flatten().max().copied().unwrap_or(0);
            let what = if is_clocksync(probe) {
                "maxima of |offset|".to_string()
            } else {
                format!("CPU {cpu}: maxima")
            };
            format!(
                "  {probe} on {host}, {what} {} (the {} intervals below, oldest first; highest {})",
                rtgauge_report::trend::sparkline(&maxima),
                maxima.len(),
                format_duration_ns(highest)
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtgauge_store::MonitorInterval;

    #[test]
    fn each_cpu_gets_a_line_of_its_maxima_oldest_first() {
        let row = |cpu, max_ns| MonitorRow {
            host: "h".into(),
            probe: "cyclic".into(),
            interval: MonitorInterval {
                cpu,
                start_unix_ns: 0,
                width_ns: 1,
                max_ns,
                samples: 1,
                overruns: 0,
                cause: None,
            },
        };
        let lines = sparklines(&[row(1, 10), row(2, 5), row(1, 80), row(1, 10)]);
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(
            lines[0].contains("CPU 1: maxima ▁█▁ (the 3 intervals"),
            "{lines:?}"
        );
        assert!(lines[0].contains("highest 80ns"), "{lines:?}");
        assert!(lines[1].contains("CPU 2"), "{lines:?}");
    }

    #[test]
    fn a_clocksync_reference_lists_its_offset_maxima_once_per_interval() {
        let row = |probe: &str, cpu, max_ns| MonitorRow {
            host: "h".into(),
            probe: probe.into(),
            interval: MonitorInterval {
                cpu,
                start_unix_ns: 0,
                width_ns: 1,
                max_ns,
                samples: 1,
                overruns: 0,
                cause: None,
            },
        };
        let probe = "clocksync chrony /run/chrony/chronyd.sock";
        assert!(is_clocksync(probe) && !is_clocksync("clocksyncx y") && !is_clocksync("cyclic"));
        let lines = sparklines(&[
            row(probe, 0, 5_000_000),
            row(probe, 1, 0),
            row(probe, 0, 10),
        ]);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(
            lines[0].contains("on h, maxima of |offset| █▁ (the 2 intervals"),
            "{lines:?}"
        );
    }
}
