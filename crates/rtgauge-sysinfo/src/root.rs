//! Where /proc and /sys are read from.
//!
//! Every read in this crate goes through [`SysRoot`], so the same code audits the live
//! machine (`/`) or a fixture directory holding copies of the relevant files. That is what
//! makes the doctor's verdicts testable: a test can hand it a machine with PREEMPT_RT,
//! one with jiffies as clocksource, or one with nothing readable at all.
//!
//! A fact that cannot be read is an [`Unknown`] carrying the reason, never a default value:
//! a missing file must not turn into a reassuring "ok".

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// Why a fact could not be established (file missing, permission denied, unexpected content).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unknown {
    /// Human-readable reason, naming the kernel path (not the fixture path) so that
    /// messages read the same on the live system and in tests.
    pub reason: String,
}

impl Unknown {
    /// An unknown with the given reason.
    pub fn new(reason: impl Into<String>) -> Self {
        Self {
            reason: reason.into(),
        }
    }

    /// The file was read but its content did not have the expected form.
    pub fn unexpected(path: &str, content: &str) -> Self {
        let shown: String = content.trim().chars().take(60).collect();
        Self::new(format!("{path}: unexpected content {shown:?}"))
    }

    fn from_io(path: &str, e: &io::Error) -> Self {
        // EPERM (1) is the kernel refusing whoever asks (lockdown, a debugfs restricted at
        // boot); EACCES is the file's permissions, which root passes.
        const EPERM: i32 = 1;
        let what = match e.kind() {
            _ if e.raw_os_error() == Some(EPERM) => {
                "the kernel refuses to read it, even to root (Operation not permitted)".to_string()
            }
            io::ErrorKind::NotFound => "not present".to_string(),
            io::ErrorKind::PermissionDenied => "permission denied (try as root)".to_string(),
            io::ErrorKind::InvalidData => "not UTF-8 text".to_string(),
            _ => e.to_string(),
        };
        Self::new(format!("{path}: {what}"))
    }
}

impl fmt::Display for Unknown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

impl std::error::Error for Unknown {}

/// A fact about the system, or why it is unknown.
pub type Fact<T> = Result<T, Unknown>;

/// A filesystem prefix under which `/proc`, `/sys`, `/boot` and friends are found.
///
/// Paths are always given as the kernel names them (`/proc/self/status`); the root decides
/// where they really are. On a fixture, `/proc/self` is a plain directory holding the
/// recorded process's files, so "self" means the process that was recorded, not the test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SysRoot {
    base: PathBuf,
}

impl Default for SysRoot {
    fn default() -> Self {
        Self::live()
    }
}

impl SysRoot {
    /// The running system.
    pub fn live() -> Self {
        Self {
            base: PathBuf::from("/"),
        }
    }

    /// A directory holding copies of /proc and /sys files (a fixture or a captured machine).
    pub fn at(base: impl Into<PathBuf>) -> Self {
        Self { base: base.into() }
    }

    /// The prefix all paths are resolved under.
    pub fn base(&self) -> &Path {
        &self.base
    }

    /// True when this root is the running system (so /proc/self is the calling process).
    pub fn is_live(&self) -> bool {
        self.base == Path::new("/")
    }

    /// Where the kernel path `path` really lives under this root.
    pub fn path(&self, path: &str) -> PathBuf {
        self.base.join(path.trim_start_matches('/'))
    }

    /// The whole text of a file.
    pub fn read(&self, path: &str) -> Fact<String> {
        std::fs::read_to_string(self.path(path)).map_err(|e| Unknown::from_io(path, &e))
    }

    /// The text of a file with surrounding whitespace removed (most sysfs files are one line).
    pub fn read_trimmed(&self, path: &str) -> Fact<String> {
        self.read(path).map(|s| s.trim().to_string())
    }

    /// A one-line file parsed as a number (or anything else that implements `FromStr`).
    pub fn read_parsed<T: std::str::FromStr>(&self, path: &str) -> Fact<T> {
        let text = self.read_trimmed(path)?;
        text.parse().map_err(|_| Unknown::unexpected(path, &text))
    }

    /// The raw bytes of a file (for compressed files such as /proc/config.gz).
    pub fn read_bytes(&self, path: &str) -> Fact<Vec<u8>> {
        std::fs::read(self.path(path)).map_err(|e| Unknown::from_io(path, &e))
    }

    /// Whether a path exists: `Ok(false)` only when the filesystem says it is absent.
    pub fn exists(&self, path: &str) -> Fact<bool> {
        match std::fs::symlink_metadata(self.path(path)) {
            Ok(_) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(Unknown::from_io(path, &e)),
        }
    }

    /// The names in a directory, sorted (so results do not depend on readdir order).
    pub fn list(&self, path: &str) -> Fact<Vec<String>> {
        let entries = std::fs::read_dir(self.path(path)).map_err(|e| Unknown::from_io(path, &e))?;
        let mut names: Vec<String> = entries
            .filter_map(|e| e.ok())
            .filter_map(|e| e.file_name().into_string().ok())
            .collect();
        names.sort();
        Ok(names)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_resolve_under_the_prefix() {
        let root = SysRoot::at("/tmp/fx");
        assert_eq!(
            root.path("/proc/self/status"),
            Path::new("/tmp/fx/proc/self/status")
        );
        assert_eq!(
            SysRoot::live().path("/proc/cmdline"),
            Path::new("/proc/cmdline")
        );
        assert!(SysRoot::live().is_live());
        assert!(!root.is_live());
    }

    #[test]
    fn missing_files_are_unknown_with_the_kernel_path() {
        let root = SysRoot::at("/nonexistent-rtgauge-root");
        let err = root.read("/proc/cmdline").unwrap_err();
        assert_eq!(err.reason, "/proc/cmdline: not present");
        assert_eq!(root.exists("/.dockerenv"), Ok(false));
        assert!(root.list("/proc").is_err());
    }
}
