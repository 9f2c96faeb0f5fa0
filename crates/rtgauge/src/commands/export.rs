//! `rtgauge export`: a raw-sample recording (`run --record`) to CSV or Parquet, streamed so
//! recordings of 10^8 samples convert in bounded memory.

use crate::cli::{ExportArgs, ExportFormat};
use anyhow::Result;
use rtgauge_record::ExportFormat as Format;
use rtgauge_result::output::{self, Existing};

pub fn export(args: ExportArgs) -> Result<u8> {
    output::ensure_distinct(&[&args.recording], &[("the export", &args.output)])?;
    output::check(&args.output, Existing::Replace)?;
    let format = match args.format {
        ExportFormat::Csv => Format::Csv,
        ExportFormat::Parquet => Format::Parquet,
    };
    let summary = if args.salvage {
        let recording = rtgauge_record::Recording::salvage(&args.recording)?;
        if !recording.finished() {
            eprintln!(
                "{}: unfinished recording (no trailer): exporting its {} complete records; how many samples were dropped is unknown",
                args.recording.display(),
                recording.sample_count()
            );
        }
        rtgauge_record::export_recording(&recording, format, &args.output)?
    } else {
        rtgauge_record::export(&args.recording, format, &args.output)?
    };
    println!(
        "{}: {} rows, {} bytes",
        args.output.display(),
        summary.rows,
        summary.bytes
    );
    Ok(crate::EXIT_OK)
}
