//! What `tune` must be able to undo, kept where a killed run leaves it: the original value of
//! every file it may write, saved (and flushed to disk) before the first change; and the lock
//! that keeps two `tune --apply` from changing the machine at once.
//!
//! Both live in /run/rtgauge: everything tune changes is runtime state that a reboot resets,
//! and /run is emptied by that same reboot, so a state file never outlives what it describes.

use super::settings::{self, Root, Write};
use serde::{Deserialize, Serialize};
use std::io::Write as _;
use std::os::fd::AsRawFd;
use std::path::PathBuf;

/// The directory of the state file and the lock.
pub fn dir() -> PathBuf {
    PathBuf::from("/run/rtgauge")
}

pub fn state_path() -> PathBuf {
    dir().join("tune-state.json")
}

fn lock_path() -> PathBuf {
    dir().join("tune.lock")
}

#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("another `rtgauge tune` is changing this machine (pid {0}); wait for it to finish")]
    Busy(String),
    #[error("cannot write the state file {path}: {source}; nothing was changed")]
    Save {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot read the state file {path}: {reason}")]
    Load { path: PathBuf, reason: String },
    #[error("cannot take the lock {path}: {source}")]
    Lock {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// The original values, in the order tune may write them.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct State {
    /// The `rtgauge tune` process that wrote it.
    pub pid: u32,
    /// Every file tune may write, with the value it had before.
    pub writes: Vec<Write>,
    /// tune mounted debugfs on /sys/kernel/debug and unmounts it when done.
    #[serde(default)]
    pub mounted_debugfs: bool,
}

impl State {
    /// Writes the file atomically and flushes it (and its directory) to disk.
    pub fn save(&self) -> Result<(), StateError> {
        let path = state_path();
        let err = |source| StateError::Save {
            path: path.clone(),
            source,
        };
        std::fs::create_dir_all(dir()).map_err(err)?;
        let tmp = path.with_extension("json.tmp");
        let text = serde_json::to_vec_pretty(self).expect("state serialises");
        let mut f = std::fs::File::create(&tmp).map_err(err)?;
        f.write_all(&text).map_err(err)?;
        f.sync_all().map_err(err)?;
        std::fs::rename(&tmp, &path).map_err(err)?;
        std::fs::File::open(dir())
            .and_then(|d| d.sync_all())
            .map_err(err)
    }

    /// The state file left by a tune that did not finish, if there is one.
    pub fn load() -> Result<Option<State>, StateError> {
        let path = state_path();
        let text = match std::fs::read(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(StateError::Load {
                    path,
                    reason: e.to_string(),
                })
            }
        };
        serde_json::from_slice(&text)
            .map(Some)
            .map_err(|e| StateError::Load {
                path,
                reason: e.to_string(),
            })
    }

    /// Puts every original back, then unmounts debugfs if tune mounted it. The errors, each
    /// one line.
    pub fn restore(&self, root: &Root) -> Vec<String> {
        let mut errors: Vec<String> = settings::restore(root, &self.writes)
            .iter()
            .map(ToString::to_string)
            .collect();
        if self.mounted_debugfs && settings::debugfs_mounted(root) {
            if let Err(e) = unmount_debugfs() {
                errors.push(format!("cannot unmount {}: {e}", settings::DEBUGFS));
            }
        }
        errors
    }

    pub fn remove() -> std::io::Result<()> {
        match std::fs::remove_file(state_path()) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }
}

/// The state file, if there is one (a tune running now, or one that did not finish).
pub fn left_behind() -> Option<PathBuf> {
    let p = state_path();
    p.exists().then_some(p)
}

/// The warning `doctor` and `run` print while a state file is left by a tune that no longer
/// runs (a running tune's own rounds are not warned about it).
pub fn left_behind_warning() -> Option<String> {
    let path = left_behind()?;
    if let Ok(Some(state)) = State::load() {
        let comm = std::fs::read_to_string(format!("/proc/{}/comm", state.pid));
        if comm.is_ok_and(|c| c.trim() == "rtgauge") {
            return None;
        }
    }
    Some(format!(
        "rtgauge tune did not finish restoring this machine's settings ({} is left): run \
         `rtgauge tune --restore` as root to put them back",
        path.display()
    ))
}

/// Held while tune may change settings; released when dropped or when the process dies.
pub struct Lock {
    _file: std::fs::File,
}

impl Lock {
    /// Takes the lock or says which process holds it.
    pub fn take() -> Result<Lock, StateError> {
        let path = lock_path();
        let err = |source| StateError::Lock {
            path: path.clone(),
            source,
        };
        std::fs::create_dir_all(dir()).map_err(err)?;
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(err)?;
        // SAFETY: flock on a descriptor this function owns.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            let holder = std::fs::read_to_string(&path).unwrap_or_default();
            let holder = holder.trim();
            return Err(StateError::Busy(if holder.is_empty() {
                "unknown".into()
            } else {
                holder.into()
            }));
        }
        file.set_len(0).map_err(err)?;
        write!(file, "{}", std::process::id()).map_err(err)?;
        Ok(Lock { _file: file })
    }
}

/// Mounts debugfs on /sys/kernel/debug.
pub fn mount_debugfs() -> std::io::Result<()> {
    let c = |s: &str| std::ffi::CString::new(s).expect("no NUL");
    let (src, at, kind) = (c("debugfs"), c(settings::DEBUGFS), c("debugfs"));
    // SAFETY: valid NUL-terminated strings; no data argument.
    let rc = unsafe {
        libc::mount(
            src.as_ptr(),
            at.as_ptr(),
            kind.as_ptr(),
            0,
            std::ptr::null(),
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

pub fn unmount_debugfs() -> std::io::Result<()> {
    let at = std::ffi::CString::new(settings::DEBUGFS).expect("no NUL");
    // SAFETY: a valid NUL-terminated path.
    if unsafe { libc::umount(at.as_ptr()) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Arms what a second SIGINT/SIGTERM says before the process exits at once: the first asks
/// tune to stop and restore; the second does not wait for it, so the state file is left.
pub fn arm_forced_exit() {
    rtgauge_core::signals::on_forced_exit(on_forced_exit);
}

extern "C" fn on_forced_exit() {
    const MESSAGE: &[u8] = b"\nrtgauge: second interrupt: exiting without restoring; run \
`rtgauge tune --restore` to put back what /run/rtgauge/tune-state.json holds\n";
    // SAFETY: write is async-signal-safe; the buffer is static.
    unsafe { libc::write(2, MESSAGE.as_ptr().cast(), MESSAGE.len()) };
}
