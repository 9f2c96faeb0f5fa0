//! Writing result documents atomically and reading them back with clear errors.

use crate::{RunResult, SCHEMA_VERSION};
use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum ResultError {
    #[error("cannot read result file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write result file {path}: {source} (choose a writable place with --output)")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
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

/// Writes `result` to `path` so that readers see either the old file or the complete new one:
/// a temporary file in the same directory, flushed to disk, then renamed over the target.
pub fn write_atomically(path: &Path, result: &RunResult) -> Result<(), ResultError> {
    let json = serde_json::to_vec_pretty(result).expect("result documents always serialise");
    write_bytes_atomically(path, &json).map_err(|source| ResultError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// The atomic write used for every file rtgauge produces.
pub fn write_bytes_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    fs::create_dir_all(&dir)?;
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "result.json".into());
    let tmp = dir.join(format!(".{file_name}.{}.tmp", std::process::id()));
    let outcome = (|| {
        let mut f = File::create(&tmp)?;
        f.write_all(bytes)?;
        f.write_all(b"\n")?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if outcome.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    outcome
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
