//! Writing result documents (through [`crate::output`]) and reading them back with clear errors.

use crate::output;
use crate::{RunResult, SCHEMA_VERSION};
use std::fs;
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

/// Reads a result document, refusing malformed, truncated and future-version files with an
/// error that names the file and the problem.
pub fn read_result(path: &Path) -> Result<RunResult, ResultError> {
    let text = fs::read_to_string(path).map_err(|source| ResultError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        if e.is_eof() {
            ResultError::Truncated {
                path: path.to_path_buf(),
                detail: format!("JSON ends early at line {}", e.line()),
            }
        } else {
            ResultError::Malformed {
                path: path.to_path_buf(),
                detail: e.to_string(),
            }
        }
    })?;
    let version = value
        .get("schema_version")
        .and_then(|v| v.as_u64())
        .ok_or_else(|| ResultError::Malformed {
            path: path.to_path_buf(),
            detail: "no schema_version field".into(),
        })?;
    if version > SCHEMA_VERSION as u64 {
        return Err(ResultError::FutureVersion {
            path: path.to_path_buf(),
            found: version,
            supported: SCHEMA_VERSION,
        });
    }
    serde_json::from_value(value).map_err(|e| ResultError::Malformed {
        path: path.to_path_buf(),
        detail: e.to_string(),
    })
}
