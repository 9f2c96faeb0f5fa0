//! Where tracefs is, or why it is not there: "not mounted" (the kernel has it, nothing mounted
//! it, as on a fresh virtual machine) is told apart from "not built" (no tracefs in the kernel),
//! because the first is fixed by one mount command (which rtgauge runs itself as root) and the
//! second only by another kernel.
//!
//! The decision ([`tracefs_state_in`]) reads files under a root directory, so tests hand it a
//! fixture; [`ensure_tracefs`] acts on the live system.

use std::fs;
use std::path::{Path, PathBuf};

use rtgauge_result::{Check, Status};

use crate::error::TraceError;

/// Where tracefs is usually mounted, in order of preference.
pub const TRACEFS_PATHS: [&str; 2] = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];

/// The command that mounts tracefs where rtgauge would.
pub const MOUNT_COMMAND: &str = "mount -t tracefs nodev /sys/kernel/tracing";

/// What this machine has of tracefs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TracefsState {
    /// Mounted there (the path as the kernel names it).
    Mounted(PathBuf),
    /// The kernel has tracefs (`/proc/filesystems` lists it, or sysfs has its mount point
    /// `/sys/kernel/tracing`, which the kernel creates only when tracefs is built in), but
    /// nothing mounted it.
    NotMounted,
    /// The kernel has no tracefs (built without CONFIG_FTRACE / tracing).
    NotBuilt,
}

/// Decides [`TracefsState`] from the files under `root` (`/` for the live system, or a
/// fixture directory holding `proc/self/mounts`, `proc/filesystems`, `sys/kernel/tracing`).
pub fn tracefs_state_in(root: &Path) -> TracefsState {
    let under = |path: &str| root.join(path.trim_start_matches('/'));
    let mounts = fs::read_to_string(under("/proc/self/mounts")).unwrap_or_default();
    if let Some(path) = tracefs_in_mount_table(&mounts) {
        return TracefsState::Mounted(path);
    }
    let listed = fs::read_to_string(under("/proc/filesystems"))
        .map(|t| filesystems_list_tracefs(&t))
        .unwrap_or(false);
    if listed || under(TRACEFS_PATHS[0]).is_dir() {
        TracefsState::NotMounted
    } else {
        TracefsState::NotBuilt
    }
}

/// [`tracefs_state_in`] on the live system.
pub fn tracefs_state() -> TracefsState {
    tracefs_state_in(Path::new("/"))
}

/// Whether a /proc/filesystems text lists tracefs (`nodev\ttracefs`).
fn filesystems_list_tracefs(filesystems: &str) -> bool {
    filesystems
        .lines()
        .any(|l| l.split_whitespace().last() == Some("tracefs"))
}

/// The first tracefs mount point listed in a mount table (/proc/self/mounts text).
pub fn tracefs_in_mount_table(mounts: &str) -> Option<PathBuf> {
    let mut found: Vec<PathBuf> = mounts
        .lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let _source = fields.next()?;
            let target = fields.next()?;
            let fstype = fields.next()?;
            (fstype == "tracefs").then(|| PathBuf::from(target.replace("\\040", " ")))
        })
        .collect();
    // Prefer the standard places (in their order), then whatever comes first.
    found.sort_by_key(|p| {
        TRACEFS_PATHS
            .iter()
            .position(|s| Path::new(s) == p)
            .unwrap_or(TRACEFS_PATHS.len())
    });
    found.into_iter().next()
}

pub(crate) fn mounted_tracefs() -> Option<PathBuf> {
    match tracefs_state() {
        TracefsState::Mounted(path) => Some(path),
        _ => None,
    }
}

/// The tracefs mount: the one in the mount table, else (the kernel has tracefs, nothing
/// mounted it) mounted at /sys/kernel/tracing, which needs root (CAP_SYS_ADMIN). It stays
/// mounted afterwards (as systemd leaves it at boot): unmounting could pull it from under
/// another tracing user.
/// Errors say which case it was: no tracefs in the kernel, or not mounted with the command
/// that mounts it.
pub fn ensure_tracefs() -> Result<PathBuf, TraceError> {
    match tracefs_state() {
        TracefsState::Mounted(path) => Ok(path),
        TracefsState::NotBuilt => Err(TraceError::NoTracefs),
        TracefsState::NotMounted => mount_tracefs(),
    }
}

fn mount_tracefs() -> Result<PathBuf, TraceError> {
    let target = PathBuf::from(TRACEFS_PATHS[0]);
    let c_target = std::ffi::CString::new(TRACEFS_PATHS[0]).expect("no NUL in a constant");
    // SAFETY: valid NUL-terminated strings; no data argument.
    let result = unsafe {
        libc::mount(
            c"nodev".as_ptr(),
            c_target.as_ptr(),
            c"tracefs".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            std::ptr::null(),
        )
    };
    if result != 0 {
        let error = std::io::Error::last_os_error();
        return Err(match error.raw_os_error() {
            Some(libc::EPERM) | Some(libc::EACCES) => TraceError::NotMounted,
            _ => TraceError::Mount {
                path: target,
                source: error,
            },
        });
    }
    Ok(target)
}

/// Kernel lockdown in `confidentiality` mode forbids tracefs.
pub(crate) fn check_lockdown() -> Result<(), TraceError> {
    let Ok(text) = fs::read_to_string("/sys/kernel/security/lockdown") else {
        return Ok(());
    };
    if lockdown_forbids_tracing(&text) {
        return Err(TraceError::Lockdown);
    }
    Ok(())
}

/// "none integrity [confidentiality]" → true.
pub fn lockdown_forbids_tracing(lockdown: &str) -> bool {
    lockdown.contains("[confidentiality]")
}

const CHECK_ID: &str = "tracing";
const CHECK_TITLE: &str = "Tracing (tracefs)";
const CHECK_WHY: &str = "`--trace` explains late wake-ups from the kernel's trace, and the \
    timerlat probe runs the kernel's timer-latency tracer; both need tracefs (and root).";

/// The doctor's verdict on tracing, read from the files under `root` (see
/// [`tracefs_state_in`]); only reads. Not mounted is fine for a run as root (rtgauge mounts
/// it); the command is said for everyone else. No tracefs in the kernel is a warning: no run
/// on this kernel can be explained.
pub fn tracing_check_in(root: &Path) -> Check {
    let lockdown = fs::read_to_string(root.join("sys/kernel/security/lockdown"))
        .is_ok_and(|t| lockdown_forbids_tracing(&t));
    let verdict =
        |status, found: String| Check::new(CHECK_ID, CHECK_TITLE, status, found, CHECK_WHY);
    if lockdown {
        return verdict(Status::Warn, TraceError::Lockdown.to_string())
            .fix("boot with lockdown=integrity or without lockdown");
    }
    match tracefs_state_in(root) {
        TracefsState::Mounted(path) => {
            let tracers = fs::read_to_string(root.join(path.strip_prefix("/").unwrap_or(&path)).join("available_tracers"));
            let timerlat = match tracers {
                Ok(t) if t.split_whitespace().any(|t| t == crate::TIMERLAT) => {
                    "; the kernel has the timerlat tracer"
                }
                Ok(_) => "; the kernel has no timerlat tracer (the timerlat probe is skipped)",
                Err(_) => "",
            };
            verdict(
                Status::Ok,
                format!("tracefs mounted at {}{timerlat}", path.display()),
            )
        }
        TracefsState::NotMounted => verdict(
            Status::Ok,
            format!(
                "the kernel has tracefs but it is not mounted; rtgauge mounts it at {} when run as \
                 root (`--trace`, the timerlat probe); to mount it yourself: {MOUNT_COMMAND}",
                TRACEFS_PATHS[0]
            ),
        ),
        TracefsState::NotBuilt => verdict(
            Status::Warn,
            "the kernel has no tracefs (not in /proc/filesystems, no /sys/kernel/tracing): \
             late wake-ups cannot be explained and the timerlat probe cannot run"
                .to_string(),
        )
        .fix("use a kernel built with CONFIG_FTRACE (and tracing events; CONFIG_TIMERLAT_TRACER for timerlat)"),
    }
}

/// [`tracing_check_in`] on the live system.
pub fn tracing_check() -> Check {
    tracing_check_in(Path::new("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fixture root holding the given files (and directories, for paths ending in `/`).
    fn root(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("temp dir");
        for (path, content) in files {
            let p = dir.path().join(path);
            if path.ends_with('/') {
                fs::create_dir_all(&p).expect("mkdir");
            } else {
                fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
                fs::write(&p, content).expect("write");
            }
        }
        dir
    }

    const MOUNTS: &str = "sysfs /sys sysfs rw 0 0\nproc /proc proc rw 0 0\n";
    const FILESYSTEMS: &str = "nodev\tsysfs\nnodev\tproc\nnodev\ttracefs\n\text4\n";

    #[test]
    fn tracefs_is_found_in_the_mount_table() {
        let table = "sysfs /sys sysfs rw 0 0\n\
                     tracefs /sys/kernel/debug/tracing tracefs rw 0 0\n\
                     tracefs /sys/kernel/tracing tracefs rw 0 0\n";
        assert_eq!(
            tracefs_in_mount_table(table),
            Some(PathBuf::from("/sys/kernel/tracing"))
        );
        assert_eq!(tracefs_in_mount_table("sysfs /sys sysfs rw 0 0\n"), None);
        assert_eq!(
            tracefs_in_mount_table("none /mnt/my\\040trace tracefs rw 0 0\n"),
            Some(PathBuf::from("/mnt/my trace"))
        );
    }

    #[test]
    fn a_mounted_tracefs_is_found_wherever_it_is() {
        let r = root(&[(
            "proc/self/mounts",
            "sysfs /sys sysfs rw 0 0\nnodev /mnt/t tracefs rw 0 0\n",
        )]);
        assert_eq!(
            tracefs_state_in(r.path()),
            TracefsState::Mounted(PathBuf::from("/mnt/t"))
        );
    }

    #[test]
    fn not_mounted_is_told_apart_from_not_built() {
        // A fresh VM: the kernel lists tracefs and made its mount point, nothing mounted it.
        let fresh = root(&[
            ("proc/self/mounts", MOUNTS),
            ("proc/filesystems", FILESYSTEMS),
            ("sys/kernel/tracing/", ""),
        ]);
        assert_eq!(tracefs_state_in(fresh.path()), TracefsState::NotMounted);
        // Either sign alone is enough: the empty mount point, or the file system's name.
        let only_dir = root(&[("proc/self/mounts", MOUNTS), ("sys/kernel/tracing/", "")]);
        assert_eq!(tracefs_state_in(only_dir.path()), TracefsState::NotMounted);
        let only_listed = root(&[
            ("proc/self/mounts", MOUNTS),
            ("proc/filesystems", FILESYSTEMS),
        ]);
        assert_eq!(
            tracefs_state_in(only_listed.path()),
            TracefsState::NotMounted
        );
        // Neither: the kernel was built without it.
        let without = root(&[
            ("proc/self/mounts", MOUNTS),
            ("proc/filesystems", "nodev\tsysfs\nnodev\tproc\n\text4\n"),
            ("sys/kernel/", ""),
        ]);
        assert_eq!(tracefs_state_in(without.path()), TracefsState::NotBuilt);
        // "tracefs" inside another name does not count.
        assert!(!filesystems_list_tracefs("nodev\tnottracefs\n"));
    }

    #[test]
    fn the_doctor_says_which_case_it_is_and_the_mount_command() {
        let fresh = root(&[
            ("proc/self/mounts", MOUNTS),
            ("proc/filesystems", FILESYSTEMS),
            ("sys/kernel/tracing/", ""),
        ]);
        let c = tracing_check_in(fresh.path());
        assert_eq!((c.id.as_str(), c.status), ("tracing", Status::Ok), "{c:#?}");
        assert!(c.found.contains("not mounted"), "{}", c.found);
        assert!(c.found.contains(MOUNT_COMMAND), "{}", c.found);
        assert!(!c.found.contains("CONFIG_FTRACE"), "{}", c.found);

        let without = root(&[
            ("proc/self/mounts", MOUNTS),
            ("proc/filesystems", "nodev\tproc\n"),
        ]);
        let c = tracing_check_in(without.path());
        assert_eq!(c.status, Status::Warn, "{c:#?}");
        assert!(c.found.contains("no tracefs"), "{}", c.found);
        assert!(c.fix.as_deref().unwrap_or("").contains("CONFIG_FTRACE"));

        let mounted = root(&[
            (
                "proc/self/mounts",
                "nodev /sys/kernel/tracing tracefs rw 0 0\n",
            ),
            ("sys/kernel/tracing/available_tracers", "blk function nop\n"),
        ]);
        let c = tracing_check_in(mounted.path());
        assert_eq!(c.status, Status::Ok, "{c:#?}");
        assert!(
            c.found.contains("mounted at /sys/kernel/tracing"),
            "{}",
            c.found
        );
        assert!(c.found.contains("no timerlat tracer"), "{}", c.found);

        let locked = root(&[
            (
                "proc/self/mounts",
                "nodev /sys/kernel/tracing tracefs rw 0 0\n",
            ),
            (
                "sys/kernel/security/lockdown",
                "none integrity [confidentiality]\n",
            ),
        ]);
        assert_eq!(tracing_check_in(locked.path()).status, Status::Warn);
    }

    #[test]
    fn only_confidentiality_lockdown_forbids_tracing() {
        assert!(lockdown_forbids_tracing(
            "none integrity [confidentiality]\n"
        ));
        assert!(!lockdown_forbids_tracing(
            "[none] integrity confidentiality\n"
        ));
        assert!(!lockdown_forbids_tracing(
            "none [integrity] confidentiality\n"
        ));
    }
}
