//! `rtgauge trend`: one series over the stored runs.

use super::history::open_existing;
use crate::cli::{OutputFormat, TrendArgs};
use anyhow::{Context, Result};
use rtgauge_report::trend::Trend;
use rtgauge_report::Render;
use rtgauge_result::write_bytes_atomically;
use std::collections::BTreeMap;

pub fn trend(args: TrendArgs) -> Result<u8> {
    let (probe, series) = (&args.series[0], &args.series[1]);
    let mut labels = BTreeMap::new();
    for word in &args.series[2..] {
        let (k, v) = word.split_once('=').with_context(|| {
            format!("'{word}' is not a label; write key=value, e.g. `rtgauge trend cyclic latency cpu=1`")
        })?;
        labels.insert(k.to_string(), v.to_string());
    }
    if args.format == OutputFormat::Html && args.output.is_none() {
        anyhow::bail!("--format html writes a file: add --output FILE (e.g. -o trend.html)");
    }
    let store = open_existing(&args.store)?;
    let host = args
        .host
        .clone()
        .unwrap_or_else(|| rtgauge_sysinfo::collect().hostname);
    let query = rtgauge_store::SeriesQuery {
        host: Some(&host),
        probe,
        mode: args.mode.as_deref(),
        load: Some(&args.load),
        series,
    };
    let points = store.trend(&query, &rtgauge_store::labels_text(&labels))?;
    let title = format!("{} · {host}", args.series.join(" "));
    if points.is_empty() {
        let known = store.trend_labels(&query)?;
        if !known.is_empty() {
            let example = format!("rtgauge trend {probe} {series} {}", known[0]);
            let shown = if known.len() > 8 {
                format!("{}, … ({} in all)", known[..8].join(", "), known.len())
            } else {
                known.join(", ")
            };
            anyhow::bail!(
                "the stored runs of {host} have `{probe} {series}` with load {} only with the labels {shown}: name one, e.g. `{example}`",
                args.load
            );
        }
        anyhow::bail!(
            "no stored run of {host} has `{}` with load {} (see `rtgauge history --host {host}`; labels must match, e.g. cpu=1)",
            args.series.join(" "),
            args.load
        );
    }
    let trend = Trend { title, points };
    let text = trend.render(args.format.render())?;
    match &args.output {
        Some(path) => {
            write_bytes_atomically(path, text.trim_end().as_bytes())
                .with_context(|| format!("cannot write {}", path.display()))?;
            println!("trend: {}", path.display());
        }
        None => print!("{text}"),
    }
    Ok(crate::EXIT_OK)
}
