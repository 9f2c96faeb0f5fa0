//! Writing result documents atomically, and the errors of reading and writing them (reading
//! and validation are in `read.rs`).

use crate::RunResult;
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
        "{path} is not a valid rtgauge result: {field} {problem} (the file was damaged or edited; use the file rtgauge wrote, or measure again)"
    )]
    Invalid {
        path: PathBuf,
        /// Where in the document, e.g. `runs[2].series[0].stats.min_ns`.
        field: String,
        problem: String,
    },
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
