//! Writing result documents (through [`crate::output`]), and the errors of reading and writing
//! them (reading and validation are in `read.rs`).

use crate::output;
use crate::RunResult;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum ResultError {
    #[error("cannot read result file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Write(#[from] output::OutputError),
    #[error("{path} is not an rtgauge result: {detail}")]
    Malformed { path: PathBuf, detail: String },
    #[error("{path} is truncated ({detail}); the run that wrote it was probably killed")]
    Truncated { path: PathBuf, detail: String },
    #[error(
        "{path} is not a valid rtgauge result: {field} {problem} (the file was damaged or edited; use the file rtgauge wrote, or measure again)"
    )]
    Invalid {
        path: PathBuf,
        /// Where in the document, e.g. `runs[2].series[0].stats.min_ns`.
        field: String,
        problem: String,
    },
    #[error(
        "{path} is a trials document (rtgauge tune --output), not a run result: `rtgauge report {path}` draws it and `rtgauge compare` compares two of them; the rounds' run results are in the directory beside it (.rounds)"
    )]
    IsTune { path: PathBuf },
    #[error(
        "{path} is a run result, not a trials document (rtgauge tune --output): compare it with another run result, or two trials documents with each other"
    )]
    NotTune { path: PathBuf },
    #[error(
        "{path} has schema version {found}, newer than this rtgauge understands ({supported}); upgrade rtgauge"
    )]
    FutureVersion {
        path: PathBuf,
        found: u64,
        supported: u32,
    },
}

/// Writes `result` to `path` so that readers see either the old file or the complete new one
/// (see [`crate::output`]).
pub fn write_atomically(path: &Path, result: &RunResult) -> Result<(), ResultError> {
    Ok(output::write(path, &document_bytes(result))?)
}

/// The document as written: pretty JSON and a final newline.
pub fn document_bytes(result: &RunResult) -> Vec<u8> {
    let mut json = serde_json::to_vec_pretty(result).expect("result documents always serialise");
    json.push(b'\n');
    json
}

/// The atomic write of [`crate::output`] for callers that speak `std::io` errors; adds the
/// final newline text files end with.
pub fn write_bytes_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut text = Vec::with_capacity(bytes.len() + 1);
    text.extend_from_slice(bytes);
    text.push(b'\n');
    output::write(path, &text).map_err(|e| match e {
        output::OutputError::Io { source, .. } => source,
        other => std::io::Error::other(other.to_string()),
    })
}
