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
    Ok(store.monitor_runs(host)?.iter().map(summary).collect())
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
        println!("{}", summary(m));
    }
    let limit = limit.unwrap_or(DEFAULT_ROWS);
    let rows = store.monitor_rows(host, since_unix_ns, limit)?;
    for line in sparklines(&rows) {
        println!("{line}");
    }
    let mut table = rtgauge_report::format::new_table(crate::display::text_style());
    table.set_header(vec![
        "Started (UTC)",
        "Width",
        "Host",
        "Probe",
        "CPU",
        "Maximum",
        "Samples",
        "Overruns (noise: stalls)",
    ]);
    for r in &rows {
        let i = &r.interval;
        table.add_row(vec![
            utc(i.start_unix_ns, "%Y-%m-%d %H:%M:%S"),
            format_duration_ns(i.width_ns),
            r.host.clone(),
            r.probe.clone(),
            i.cpu.to_string(),
            format_duration_ns(i.max_ns),
            i.samples.to_string(),
            i.overruns.to_string(),
        ]);
    }
    println!("{table}");
    let total: u64 = monitors.iter().map(|m| m.rows).sum();
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
    for r in rows {
        per.entry((&r.host, &r.probe, r.interval.cpu))
            .or_default()
            .push(Some(r.interval.max_ns));
    }
    per.into_iter()
        .map(|((host, probe, cpu), maxima)| {
            let highest = maxima.iter().flatten().max().copied().unwrap_or(0);
            format!(
                "  {probe} on {host}, CPU {cpu}: maxima {} (the {} intervals below, oldest first; highest {})",
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
}
