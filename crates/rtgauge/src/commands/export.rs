//! `rtgauge export`: a raw-sample recording (`run --record`) to CSV or Parquet, streamed so
//! recordings of 10^8 samples convert in bounded memory.

use crate::cli::{ExportArgs, ExportFormat};
use anyhow::Result;
use rtgauge_record::ExportFormat as Format;
use rtgauge_result::output::{self, Existing};
use std::path::Path;

pub fn export(args: ExportArgs) -> Result<u8> {
    if let Some(result) = &args.trace {
        return export_trace(result, &args.output);
    }
    let Some(recording) = args.recording.as_deref() else {
        anyhow::bail!("give a recording to export, or --trace RESULT for the spikes of a result");
    };
    output::ensure_distinct(&[recording], &[("the export", &args.output)])?;
    output::check(&args.output, Existing::Replace)?;
    let format = match args.format {
        ExportFormat::Csv => Format::Csv,
        ExportFormat::Parquet => Format::Parquet,
    };
    let summary = if args.salvage {
        let salvaged = rtgauge_record::Recording::salvage(recording)?;
        if !salvaged.finished() {
            eprintln!(
                "{}: unfinished recording (no trailer): exporting its {} complete records; how many samples were dropped is unknown",
                recording.display(),
                salvaged.sample_count()
            );
        }
        rtgauge_record::export_recording(&salvaged, format, &args.output)?
    } else {
        rtgauge_record::export(recording, format, &args.output)?
    };
    println!(
        "{}: {} rows, {} bytes",
        args.output.display(),
        summary.rows,
        summary.bytes
    );
    Ok(crate::EXIT_OK)
}

/// `export --trace RESULT`: every explained spike of the result, one trace-viewer process per
/// CPU, as Chrome trace-event JSON.
fn export_trace(result: &Path, out: &Path) -> Result<u8> {
    output::ensure_distinct(&[result], &[("the export", out)])?;
    output::check(out, Existing::Replace)?;
    let doc = rtgauge_result::read_result(result)?;
    let spikes: Vec<_> = doc
        .runs
        .iter()
        .flat_map(|r| r.spikes.iter().cloned())
        .collect();
    if spikes.is_empty() {
        anyhow::bail!(
            "{}: the result holds no explained spike; measure with `rtgauge run --trace` (as root, with tracefs)",
            result.display()
        );
    }
    let json = serde_json::to_vec_pretty(&rtgauge_trace::chrome_trace(&spikes))?;
    output::write(out, &json)?;
    println!(
        "{}: {} spikes (open in ui.perfetto.dev or chrome://tracing)",
        out.display(),
        spikes.len()
    );
    Ok(crate::EXIT_OK)
}
