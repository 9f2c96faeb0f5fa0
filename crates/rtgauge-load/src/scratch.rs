//! Scratch directories of the loads that write files (`memory`, `io`, `compile`).
//!
//! Each is named `rtgauge-load.<pid>.<start time>.<n>` under the scratch root, after the
//! measuring process: a run killed with SIGKILL cannot remove its own, so the next start
//! removes every directory whose process is gone. The start time tells a live owner from an
//! unrelated process that reused its pid.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use crate::error::LoadError;
use crate::sys::process_start_time;

const PREFIX: &str = "rtgauge-load.";

/// A directory that is removed (with everything in it) when dropped.
#[derive(Debug)]
pub(crate) struct ScratchDir {
    path: PathBuf,
}

impl ScratchDir {
    pub fn create(root: &Path) -> Result<ScratchDir, LoadError> {
        static SEQ: AtomicU32 = AtomicU32::new(0);
        let pid = std::process::id();
        let start = process_start_time(pid).unwrap_or(0);
        let seq = SEQ.fetch_add(1, Ordering::Relaxed);
        std::fs::create_dir_all(root).map_err(|source| LoadError::Scratch {
            action: "create the scratch root",
            path: root.to_path_buf(),
            source,
        })?;
        let path = root.join(format!("{PREFIX}{pid}.{start}.{seq}"));
        {
            use std::os::unix::fs::DirBuilderExt;
            std::fs::DirBuilder::new()
                .mode(0o700)
                .create(&path)
                .map_err(|source| LoadError::Scratch {
                    action: "create the scratch directory",
                    path: path.clone(),
                    source,
                })?;
        }
        Ok(ScratchDir { path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        // Best effort: whatever a failure leaves, cleanup_stale removes at the next start.
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Parses `rtgauge-load.<pid>.<start>.<n>` into its owner.
fn owner(name: &str) -> Option<(u32, u64)> {
    let mut fields = name.strip_prefix(PREFIX)?.split('.');
    let pid = fields.next()?.parse().ok()?;
    let start = fields.next()?.parse().ok()?;
    fields.next()?.parse::<u32>().ok()?;
    Some((pid, start))
}

/// Removes the scratch directories under `scratch_root` left by runs whose process is gone
/// (killed with SIGKILL, crashed). Directories of live runs and anything not named by this
/// crate are left alone. Errors are ignored: this is housekeeping, and a directory that cannot
/// be removed now is retried at the next start.
pub fn cleanup_stale(scratch_root: &Path) {
    let Ok(entries) = std::fs::read_dir(scratch_root) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some((pid, start)) = name.to_str().and_then(owner) else {
            continue;
        };
        if process_start_time(pid) == Some(start) {
            continue; // its run is still going
        }
        // Never follow a symlink someone put there: only real directories are ours.
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owner_names() {
        assert_eq!(owner("rtgauge-load.12.345.0"), Some((12, 345)));
        assert_eq!(owner("rtgauge-load.12.345"), None);
        assert_eq!(owner("other.12.345.0"), None);
    }

    #[test]
    fn live_dirs_survive_dead_ones_go() {
        let root = tempfile::tempdir().unwrap();
        let mine = ScratchDir::create(root.path()).unwrap();
        let dead = root.path().join("rtgauge-load.999999999.1.0");
        std::fs::create_dir_all(dead.join("sub")).unwrap();
        let foreign = root.path().join("keep-me");
        std::fs::create_dir(&foreign).unwrap();
        cleanup_stale(root.path());
        assert!(mine.path().is_dir());
        assert!(!dead.exists());
        assert!(foreign.exists());
        let path = mine.path().to_path_buf();
        drop(mine);
        assert!(!path.exists());
    }
}
