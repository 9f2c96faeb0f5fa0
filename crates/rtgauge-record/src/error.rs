//! Errors of recording, reading and exporting; each message is one line that names the file.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("cannot read recording {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write recording {path}: {source} (choose a writable place with --output)")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot create recording {path}: {detail}")]
    Create { path: PathBuf, detail: String },
    #[error("{path} is not an rtgauge recording: {detail}")]
    NotARecording { path: PathBuf, detail: String },
    #[error(
        "{path} has recording format version {found}, newer than this rtgauge reads ({supported}); upgrade rtgauge"
    )]
    FutureVersion {
        path: PathBuf,
        found: u32,
        supported: u32,
    },
    #[error("{path} is truncated ({detail}); the run that wrote it was probably killed before it finished")]
    Truncated { path: PathBuf, detail: String },
    #[error("{path} is corrupt: {detail}")]
    Corrupt { path: PathBuf, detail: String },
    #[error("cannot write {path}: {detail}")]
    Export { path: PathBuf, detail: String },
    #[error(
        "this rtgauge was built without {format} export (the small target build); use --format csv, or the full build"
    )]
    NotBuiltIn { format: &'static str },
    #[error("recording {path} is already open: a probe run opens its recording once")]
    AlreadyOpen { path: PathBuf },
    #[error("recording {path}: a recording needs 1 to 65536 series, got {count}")]
    SeriesCount { path: PathBuf, count: usize },
    #[error("cannot start the recording writer thread: {0}")]
    Spawn(std::io::Error),
    #[error("{name}={value}: {expected}")]
    Env {
        name: &'static str,
        value: String,
        expected: &'static str,
    },
}
