//! `rtgauge export`: a recording to CSV or Parquet, streamed in bounded memory.
//!
//! Both formats have the same columns: `series` (id), `name`, one column per label key of the
//! series table (e.g. `cpu`), `at_ns`, `value_ns`. The output appears only when complete: it is
//! streamed to an exclusive temporary file beside it and renamed (rtgauge_result::output).

use crate::error::RecordError;
use crate::format::{Header, Sample};
use crate::reader::Recording;
#[cfg(feature = "parquet")]
use parquet::{
    basic::{Compression, Encoding, LogicalType, Repetition, Type as Physical},
    data_type::{ByteArray, ByteArrayType, Int32Type, Int64Type},
    file::metadata::KeyValue,
    file::properties::WriterProperties,
    file::writer::SerializedFileWriter,
    schema::types::{ColumnPath, Type},
};
use rtgauge_result::output::{csv_field, AtomicFile, Existing};
use std::io::Write;
use std::path::Path;
#[cfg(feature = "parquet")]
use std::sync::Arc;

/// Rows per Parquet row group: 2^20. Export memory is about 40 bytes per row of one group
/// (~45 MB), whatever the size of the recording.
pub const ROW_GROUP_ROWS: usize = 1 << 20;
/// Rows per CSV batch.
const CSV_BATCH: usize = 1 << 16;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    Csv,
    Parquet,
}

/// What an export wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportSummary {
    pub rows: u64,
    pub bytes: u64,
}

/// Converts the recording at `input` to `format` at `output`.
pub fn export(
    input: &Path,
    format: ExportFormat,
    output: &Path,
) -> Result<ExportSummary, RecordError> {
    export_recording(&Recording::open(input)?, format, output)
}

/// Converts an opened recording (also a salvaged one) to `format` at `output`.
pub fn export_recording(
    recording: &Recording,
    format: ExportFormat,
    output: &Path,
) -> Result<ExportSummary, RecordError> {
    let out_err = |detail: String| RecordError::Export {
        path: output.to_path_buf(),
        detail,
    };
    let mut file = AtomicFile::new(output).map_err(|e| out_err(e.to_string()))?;
    let rows = match format {
        ExportFormat::Csv => write_csv(recording, &mut file, output),
        #[cfg(feature = "parquet")]
        ExportFormat::Parquet => write_parquet(recording, &mut file, output),
        #[cfg(not(feature = "parquet"))]
        ExportFormat::Parquet => Err(RecordError::NotBuiltIn { format: "Parquet" }),
    }?;
    file.commit(Existing::Replace)
        .map_err(|e| out_err(e.to_string()))?;
    let bytes = std::fs::metadata(output)
        .map_err(|e| out_err(e.to_string()))?
        .len();
    Ok(ExportSummary { rows, bytes })
}

/// Column names: `series`, `name`, the label keys (prefixed `label_` if one would clash with a
/// fixed column), `at_ns`, `value_ns`; and per label column the value of each series.
struct Columns {
    labels: Vec<(String, Vec<String>)>,
}

const FIXED: [&str; 4] = ["series", "name", "at_ns", "value_ns"];

impl Columns {
    fn of(header: &Header) -> Columns {
        let mut keys: Vec<&String> = header.series.iter().flat_map(|s| s.labels.keys()).collect();
        keys.sort();
        keys.dedup();
        let labels = keys
            .into_iter()
            .map(|k| {
                let column = if FIXED.contains(&k.as_str()) {
                    format!("label_{k}")
                } else {
                    k.clone()
                };
                let values = header
                    .series
                    .iter()
                    .map(|s| s.labels.get(k).cloned().unwrap_or_default())
                    .collect();
                (column, values)
            })
            .collect();
        Columns { labels }
    }
}

/// Checks what was exported against the trailer, so a file damaged between open and export
/// cannot silently yield a short table.
fn check_counts(recording: &Recording, per_series: &[u64]) -> Result<(), RecordError> {
    let Some(trailer) = &recording.trailer else {
        // Salvaged: no counts to check against.
        return Ok(());
    };
    for (s, &n) in trailer.series.iter().zip(per_series) {
        if s.written != n {
            return Err(RecordError::Corrupt {
                path: recording.path().to_path_buf(),
                detail: format!(
                    "series {} has {n} records, the trailer says {}",
                    s.id, s.written
                ),
            });
        }
    }
    Ok(())
}

/// Appends the decimal digits of `v`.
#[inline]
fn push_u64(buf: &mut Vec<u8>, mut v: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    buf.extend_from_slice(&digits[i..]);
}

fn write_csv(
    recording: &Recording,
    out: &mut AtomicFile,
    output: &Path,
) -> Result<u64, RecordError> {
    let io_err = |e: std::io::Error| RecordError::Export {
        path: output.to_path_buf(),
        detail: e.to_string(),
    };
    let header = &recording.header;
    let columns = Columns::of(header);
    let mut first = vec!["series".to_string(), "name".to_string()];
    first.extend(columns.labels.iter().map(|(c, _)| csv_field(c)));
    first.extend(["at_ns".to_string(), "value_ns".to_string()]);
    writeln!(out, "{}", first.join(",")).map_err(io_err)?;

    // Everything before at_ns is fixed per series: format it once.
    let prefixes: Vec<Vec<u8>> = header
        .series
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let mut p = format!("{},{}", s.id, csv_field(&s.name));
            for (_, values) in &columns.labels {
                p.push(',');
                p.push_str(&csv_field(&values[i]));
            }
            p.push(',');
            p.into_bytes()
        })
        .collect();

    let mut samples = recording.samples()?;
    let mut batch: Vec<Sample> = Vec::with_capacity(CSV_BATCH);
    let mut line = Vec::with_capacity(CSV_BATCH * 48);
    let mut per_series = vec![0u64; header.series.len()];
    let mut rows = 0u64;
    loop {
        samples.next_batch(&mut batch, CSV_BATCH)?;
        if batch.is_empty() {
            break;
        }
        line.clear();
        for s in &batch {
            line.extend_from_slice(&prefixes[usize::from(s.series)]);
            push_u64(&mut line, s.at_ns);
            line.push(b',');
            push_u64(&mut line, s.value_ns);
            line.push(b'\n');
            per_series[usize::from(s.series)] += 1;
        }
        out.write_all(&line).map_err(io_err)?;
        rows += batch.len() as u64;
    }
    check_counts(recording, &per_series)?;
    Ok(rows)
}

#[cfg(feature = "parquet")]
#[derive(Clone, Copy)]
enum Column {
    Series,
    Name,
    Label(usize),
    At,
    Value,
}

#[cfg(feature = "parquet")]
fn parquet_schema(columns: &Columns) -> Result<(Type, Vec<Column>), parquet::errors::ParquetError> {
    let string = |name: &str| {
        Type::primitive_type_builder(name, Physical::BYTE_ARRAY)
            .with_repetition(Repetition::REQUIRED)
            .with_logical_type(Some(LogicalType::String))
            .build()
    };
    // at_ns and value_ns are signed INT64 (values < 2^63 ns, i.e. 292 years): pandas and polars
    // then compute differences (periods from consecutive timestamps) without unsigned wrap.
    let int64 = |name: &str| {
        Type::primitive_type_builder(name, Physical::INT64)
            .with_repetition(Repetition::REQUIRED)
            .build()
    };
    let mut fields = vec![Arc::new(
        Type::primitive_type_builder("series", Physical::INT32)
            .with_repetition(Repetition::REQUIRED)
            .with_logical_type(Some(LogicalType::integer(16, false)))
            .build()?,
    )];
    let mut kinds = vec![Column::Series];
    fields.push(Arc::new(string("name")?));
    kinds.push(Column::Name);
    for (i, (name, _)) in columns.labels.iter().enumerate() {
        fields.push(Arc::new(string(name)?));
        kinds.push(Column::Label(i));
    }
    fields.push(Arc::new(int64("at_ns")?));
    kinds.push(Column::At);
    fields.push(Arc::new(int64("value_ns")?));
    kinds.push(Column::Value);
    let schema = Type::group_type_builder("rtgauge_samples")
        .with_fields(fields)
        .build()?;
    Ok((schema, kinds))
}

#[cfg(feature = "parquet")]
fn write_parquet(
    recording: &Recording,
    out: &mut AtomicFile,
    output: &Path,
) -> Result<u64, RecordError> {
    let pq_err = |e: parquet::errors::ParquetError| RecordError::Export {
        path: output.to_path_buf(),
        detail: e.to_string(),
    };
    let header = &recording.header;
    let columns = Columns::of(header);
    let (schema, kinds) = parquet_schema(&columns).map_err(pq_err)?;
    let meta = |key: &str, value: String| KeyValue::new(key.to_string(), value);
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        // Timestamps grow steadily: delta encoding beats a dictionary that would overflow.
        .set_column_dictionary_enabled(ColumnPath::from("at_ns"), false)
        .set_column_encoding(ColumnPath::from("at_ns"), Encoding::DELTA_BINARY_PACKED)
        .set_key_value_metadata(Some(vec![
            meta(
                "rtgauge.recording.header",
                serde_json::to_string(header).expect("a header always serialises"),
            ),
            match &recording.trailer {
                Some(trailer) => meta(
                    "rtgauge.recording.trailer",
                    serde_json::to_string(trailer).expect("a trailer always serialises"),
                ),
                None => meta(
                    "rtgauge.recording.salvaged",
                    format!(
                        "the writer never finished this recording; {} complete records were salvaged and the number of dropped samples is unknown",
                        recording.sample_count()
                    ),
                ),
            },
        ]))
        .build();
    let mut writer =
        SerializedFileWriter::new(out, Arc::new(schema), Arc::new(props)).map_err(pq_err)?;

    let names: Vec<ByteArray> = header
        .series
        .iter()
        .map(|s| ByteArray::from(s.name.as_bytes().to_vec()))
        .collect();
    let label_values: Vec<Vec<ByteArray>> = columns
        .labels
        .iter()
        .map(|(_, v)| {
            v.iter()
                .map(|x| ByteArray::from(x.as_bytes().to_vec()))
                .collect()
        })
        .collect();

    let mut samples = recording.samples()?;
    let mut batch: Vec<Sample> = Vec::with_capacity(ROW_GROUP_ROWS);
    let mut ints32: Vec<i32> = Vec::with_capacity(ROW_GROUP_ROWS);
    let mut ints64: Vec<i64> = Vec::with_capacity(ROW_GROUP_ROWS);
    let mut strings: Vec<ByteArray> = Vec::with_capacity(CSV_BATCH);
    let mut per_series = vec![0u64; header.series.len()];
    let mut rows = 0u64;
    loop {
        samples.next_batch(&mut batch, ROW_GROUP_ROWS)?;
        if batch.is_empty() {
            break;
        }
        for s in &batch {
            per_series[usize::from(s.series)] += 1;
        }
        let mut group = writer.next_row_group().map_err(pq_err)?;
        let mut kind = kinds.iter();
        while let Some(mut col) = group.next_column().map_err(pq_err)? {
            let Some(&k) = kind.next() else { break };
            match k {
                Column::Series => {
                    ints32.clear();
                    ints32.extend(batch.iter().map(|s| i32::from(s.series)));
                    col.typed::<Int32Type>()
                        .write_batch(&ints32, None, None)
                        .map_err(pq_err)?;
                }
                Column::At | Column::Value => {
                    ints64.clear();
                    for s in &batch {
                        let v = if matches!(k, Column::At) {
                            s.at_ns
                        } else {
                            s.value_ns
                        };
                        ints64.push(i64::try_from(v).map_err(|_| RecordError::Corrupt {
                            path: recording.path().to_path_buf(),
                            detail: format!("a record holds {v} ns, beyond 2^63 ns"),
                        })?);
                    }
                    col.typed::<Int64Type>()
                        .write_batch(&ints64, None, None)
                        .map_err(pq_err)?;
                }
                Column::Name | Column::Label(_) => {
                    let table = match k {
                        Column::Label(i) => &label_values[i],
                        _ => &names,
                    };
                    // Strings go in slices so only a slice's worth of handles exists at once.
                    for chunk in batch.chunks(CSV_BATCH) {
                        strings.clear();
                        strings.extend(chunk.iter().map(|s| table[usize::from(s.series)].clone()));
                        col.typed::<ByteArrayType>()
                            .write_batch(&strings, None, None)
                            .map_err(pq_err)?;
                    }
                }
            }
            col.close().map_err(pq_err)?;
        }
        group.close().map_err(pq_err)?;
        rows += batch.len() as u64;
    }
    check_counts(recording, &per_series)?;
    writer.into_inner().map_err(pq_err)?;
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_format_like_display() {
        for v in [0u64, 7, 10, 99, 12345, u64::MAX] {
            let mut b = Vec::new();
            push_u64(&mut b, v);
            assert_eq!(String::from_utf8(b).unwrap(), v.to_string());
        }
    }
}
